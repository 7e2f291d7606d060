from __future__ import annotations

import os

import numpy as np
import pytest

# Subprocesses started by the tests (python -c ..., python -m reljac.apps.cli) run in the
# repository's root: without this, Python would put the working directory first on sys.path and
# import the source tree, which has no compiled core, instead of the installed reljac the tests
# are about.
os.environ["PYTHONSAFEPATH"] = "1"


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)

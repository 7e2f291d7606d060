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


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium (test_viz.Browser, 800 x 600) for the browser tests of every module:
    each test opens its own page in it (starting Chromium takes about a second)."""
    from test_viz import CHROMIUM, Browser

    if CHROMIUM is None:
        pytest.skip("needs Chromium (`chromium` on PATH)")
    browser = Browser()
    yield browser
    browser.close()


REQUIRE_COMPILED = os.environ.get("RELJAC_REQUIRE_COMPILED") == "1"


def pytest_sessionstart(session):
    """With RELJAC_REQUIRE_COMPILED=1 (CI), a missing compiled core fails the run at once."""
    if REQUIRE_COMPILED:
        from reljac.ik import compiled_available

        if not compiled_available():
            raise pytest.UsageError("RELJAC_REQUIRE_COMPILED=1 but reljac.ik._core is not built or does not import")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With RELJAC_REQUIRE_COMPILED=1, a test skipped for want of the compiled core (its reason
    says "not built") fails."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_COMPILED and report.skipped and "not built" in str(report.longrepr):
        report.outcome = "failed"

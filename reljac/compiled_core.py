"""The compiled core (``reljac.ik._core``) as the Pinocchio layer uses it, loaded at first use.

The relative kinematics (:mod:`reljac.relative`) and the configuration checks
(:meth:`ConfigurationSpace.validate_q`) run in C++ on the robot's own ``pin.Model`` when the core
is built; otherwise, or with ``RELJAC_BACKEND=python``, they run their Python path, which is
the core's oracle (same answers, same errors).
"""

from __future__ import annotations

import importlib
import os
from typing import Any


def _load() -> Any:
    """The compiled core, or None where it is not built (or built for another Pinocchio) or
    RELJAC_BACKEND=python asks for the Python paths."""
    if os.environ.get("RELJAC_BACKEND", "").strip().lower() == "python":
        return None
    return importlib.import_module("reljac.ik.backend").core()


class Core:
    """``Core.module`` once ``Core.loaded`` (hot paths read these two attributes; else call
    :meth:`get`)."""

    module: Any = None
    loaded = False

    @classmethod
    def get(cls) -> Any:
        if not cls.loaded:
            cls.module, cls.loaded = _load(), True
        return cls.module

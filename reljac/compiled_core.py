"""The compiled core (``reljac.ik._core``, C++ on Pinocchio's and coal's own C++), loaded at first
use where it was built against the Pinocchio and coal that run.

A room of its own below every Python room that calls the core: the configuration checks
(:meth:`ConfigurationSpace.validate_q`) and the relative kinematics (:mod:`reljac.relative`) in
C++ on the robot's own ``pin.Model``, the capability maps' kernels (:mod:`reljac.maps.compiled`),
the controller's step and the solvers (:mod:`reljac.ik.solvers.backend`). Where the core is not
built, or with ``RELJAC_BACKEND=python`` (:class:`Core`), they run their Python path, which is
the core's oracle (same answers, same errors).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from .exceptions import caused_by

_loaded: list[tuple[Any, str]] = []  # [(the extension or None, why a built one is not used)] once loaded


def _load() -> tuple[Any, str]:
    if not _loaded:
        import pinocchio  # before the core: it loads the Pinocchio, coal and Boost libraries the core links

        try:  # typed Any: pybind11 modules carry no annotations
            core: Any = importlib.import_module("reljac.ik._core")
        except ImportError as error:  # not built: no C++ compiler when reljac was installed
            # a Ctrl-C during its initialisation: pybind11 makes it an ImportError
            if caused_by(error, KeyboardInterrupt):
                raise KeyboardInterrupt from error
            core = None
        why = ""
        if core is not None:
            import coal

            built = core.built_with()
            running = (pinocchio.__version__, coal.__version__)
            if tuple(built) != running:  # the core works on pin.Model objects: the same Pinocchio only
                why = (f"the compiled core was built against Pinocchio {built[0]} and coal {built[1]}, but "
                       f"Pinocchio {running[0]} and coal {running[1]} are installed: reinstall reljac")
                core = None
        _loaded.append((core, why))
    return _loaded[0]


def extension() -> Any:
    """The compiled extension module ``reljac.ik._core``, or None where it is not built or was
    built against another Pinocchio or coal (:func:`mismatch` says which); whatever
    ``RELJAC_BACKEND`` says (the callers choose their backend)."""
    return _load()[0]


def mismatch() -> str:
    """Why a built core is not used (built against other Pinocchio and coal versions), or ""."""
    return _load()[1]


class Core:
    """``Core.module`` once ``Core.loaded``: the core the Pinocchio layer calls, None where it is
    not built or ``RELJAC_BACKEND=python`` asks for the Python paths (hot paths read these two
    attributes; else call :meth:`get`)."""

    module: Any = None
    loaded = False

    @classmethod
    def get(cls) -> Any:
        if not cls.loaded:
            python = os.environ.get("RELJAC_BACKEND", "").strip().lower() == "python"
            cls.module, cls.loaded = None if python else extension(), True
        return cls.module

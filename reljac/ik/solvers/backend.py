"""Which solver resolves the hierarchy: the compiled core (``reljac.ik._core``) or the Python one.

Both take the same arguments, ``(levels, lo, hi, C, d, policy)``, and return ``(v, reports)``:
see :func:`reljac.ik.solvers.hierarchy.solve_hierarchy`, the readable specification the compiled solver
is tested against. ``RELJAC_BACKEND=python`` (or ``Controller(..., backend="python")``) selects
the Python solver; by default the compiled one runs when it was built. When it was not (no
compiler at install time), reljac says so once and runs on the Python solver.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ...compiled_core import extension, mismatch
from ...exceptions import ConfigurationError, TaskError
from ...validation import short_repr
from .damping import DampingPolicy
from .hierarchy import OVERFLOW, Level, LevelReport, solve_hierarchy
from .inequality import WarmStart, has_bounds, solve_lexicographic

BACKENDS = ("compiled", "python")

_core: Any = extension()  # the compiled core (C++ in src/core/), None when not built or built for another Pinocchio
MISMATCH = mismatch()

_warned = False


def core():
    """The compiled extension module, or None when it is not built."""
    return _core


def compiled_available() -> bool:
    """True when the compiled solver was built and imports."""
    return _core is not None


def default_backend() -> str:
    """The backend used when none is asked for: RELJAC_BACKEND, else "compiled" when built."""
    asked = os.environ.get("RELJAC_BACKEND", "").strip().lower()
    if asked:
        if asked not in BACKENDS:
            raise ConfigurationError(f"RELJAC_BACKEND must be one of {', '.join(BACKENDS)}, got '{asked}'")
        return resolve(asked)
    return "compiled" if _core is not None else _fallback()


def _fallback() -> str:
    global _warned
    if not _warned:
        _warned = True
        why = MISMATCH or ("the compiled IK core (reljac.ik._core) is not built (was a C++ compiler missing when "
                           "reljac was installed?)")
        print(f"reljac: {why}; running on the Python solver", file=sys.stderr)
    return "python"


def resolve(name: str | None) -> str:
    """The backend to use for `name` ("compiled", "python" or None: the default)."""
    if name is None:
        return default_backend()
    if not isinstance(name, str) or name not in BACKENDS:
        raise ConfigurationError(f"backend must be one of {', '.join(BACKENDS)}, got {short_repr(name)}")
    if name == "compiled" and _core is None:
        raise ConfigurationError("the compiled IK core (reljac.ik._core) is not built; use backend='python'")
    return name


def _python(levels: list[Level], lo: np.ndarray, hi: np.ndarray, C: np.ndarray | None, d: np.ndarray | None,
            policy: DampingPolicy, warm: WarmStart | None = None) -> tuple[np.ndarray, list[LevelReport]]:
    if has_bounds(levels):  # inequality rows: the lexicographic active-set solver
        return solve_lexicographic(levels, lo, hi, policy=policy, C=C, d=d, warm=warm)
    return solve_hierarchy(levels, lo, hi, policy=policy, C=C, d=d)


def _compiled(levels: list[Level], lo: np.ndarray, hi: np.ndarray, C: np.ndarray | None, d: np.ndarray | None,
              policy: DampingPolicy) -> tuple[np.ndarray, list[LevelReport]]:
    nv = lo.shape[0]
    if C is None:
        C, d = np.zeros((0, nv)), np.zeros(0)
    bounded = has_bounds(levels)  # inequality rows: the compiled twin of solve_lexicographic
    bounds = {"lowers": [lv.lower for lv in levels], "uppers": [lv.upper for lv in levels]} if bounded else {}
    try:
        v, raw = _core.solve_hierarchy(
            [level.A for level in levels], [level.b for level in levels],
            [level.identity_scale if level.identity_scale is not None else 0.0 for level in levels],
            [level.mask for level in levels], [level.extra_damping for level in levels],
            lo, hi, C, d, policy.threshold, policy.max_damping, search=any(level.search for level in levels), **bounds)
    except ValueError as error:  # the bounds, checked with level_rows' words
        if bounded and str(error).startswith("level "):
            raise TaskError(str(error)) from None
        raise
    if bounded and not np.isfinite(v).all():
        raise TaskError(OVERFLOW)
    return v, [core_report(r) for r in raw]


_CORE_FIELDS: tuple[str, ...] = ()  # the fields of a LevelReport the core's fills in (read once)


def core_report(raw: Any) -> LevelReport:
    """A :class:`LevelReport` from the core's (``_core.LevelReport``, its fields by name; the
    others, the names the controller gives, keep their defaults)."""
    global _CORE_FIELDS
    if not _CORE_FIELDS:
        _CORE_FIELDS = tuple(f.name for f in dataclasses.fields(LevelReport) if hasattr(type(raw), f.name))
    return LevelReport(**{name: getattr(raw, name) for name in _CORE_FIELDS})


def solver(name: str, warm: bool = False) -> Callable[..., tuple[np.ndarray, list[LevelReport]]]:
    """The solve function of backend `name`; `warm`: the Python one keeps each bounded level's
    sets from one call to the next (a controller's warm start, :class:`WarmStart`; the compiled
    controller keeps them in its compiled step)."""
    if resolve(name) == "compiled":
        return _compiled
    if not warm:
        return _python
    state = WarmStart()

    def warm_started(levels: list[Level], lo: np.ndarray, hi: np.ndarray, C: np.ndarray | None, d: np.ndarray | None,
                     policy: DampingPolicy) -> tuple[np.ndarray, list[LevelReport]]:
        return _python(levels, lo, hi, C, d, policy, state)

    return warm_started

"""The compiled core's constants that have a Python twin (src/core/constants.hpp and the solver's in
hierarchy.hpp, exposed under their Python names by bind_constants.cpp) equal the Python ones: the
two backends decide with the same tolerances."""

from __future__ import annotations

import importlib

import pytest

from reljac.ik import compiled_available

hierarchy, saturation, joint_space, support, balance, distances = (
    importlib.import_module(f"reljac.{name}") for name in (
        "ik.solvers.hierarchy", "ik.solvers.saturation", "joint_space", "support", "ik.limits.support", "collision.distances"))

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")

TWINS = {
    "RANK_TOLERANCE": hierarchy, "BOUND_TOLERANCE": saturation, "PIVOT_TOLERANCE": saturation,
    "PIVOT_REPROJECT": saturation, "REACHED_AT_ONCE": saturation, "MAX_TIE_PATHS": saturation, "PIN_TOLERANCE": saturation,
    "TIE_PATH_GAIN": saturation,
    "MAX_STALE_SATURATIONS": hierarchy, "MET_TOLERANCE": hierarchy, "AMPLIFIED": hierarchy,
    "UNIT_TOLERANCE": joint_space, "MAX_SQUARE": joint_space,
    "COLLINEAR_TOLERANCE": support, "OVERSHOOT": balance,
    "GJK_TOLERANCE": distances, "FAILED": distances,
}


@pytest.mark.parametrize("name", sorted(TWINS))
def test_a_core_constant_equals_its_python_twin(name: str) -> None:
    from reljac.ik import _core

    assert getattr(_core, name) == getattr(TWINS[name], name)


def test_every_constant_the_core_exposes_has_a_twin_here() -> None:
    from reljac.ik import _core

    exposed = {name for name in dir(_core) if name.isupper() and isinstance(getattr(_core, name), (int, float))}
    assert exposed == set(TWINS)

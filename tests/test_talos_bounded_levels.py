"""examples/talos_bounded_levels.py in numbers: Talos with the support region at level 1 below
the feet and collision avoidance at level 2, a reach at level 3 (tests/test_examples.py runs the
script itself). What could fail: the centre of mass leaving the shrunk region, a pair nearer than
its minimum, the feet moving, and the priorities (the reach carries the centre of mass past the
region's edge when level 1 is taken out, and not with it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "talos_bounded_levels.py"


@pytest.fixture(scope="module")
def example(talos):  # the talos fixture skips without example-robot-data
    spec = importlib.util.spec_from_file_location("talos_bounded_levels", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_levels_hold_what_they_promise(example):
    out = example.run()
    assert out["levels"][1:3] == ["support region", "collision avoidance"]
    # the centre of mass inside the region shrunk by the margin, to within 0.1 mm (second-order steps)
    assert out["com_inside"] >= example.MARGIN - 1e-4, out["com_inside"]
    assert out["com_inside"] <= example.MARGIN + 1e-3  # it came to the edge
    assert out["pair_distance"] >= 0.005 - 1e-4, out["pair_distance"]  # min_distance 5 mm: no pair collides
    assert out["foot_error"] < 1e-4  # the feet, level 0, never moved to keep the levels below
    assert out["moved"] < out["asked"] - 0.1  # the reach is not reached
    at_a_bound = [rows for _, levels in out["log"] for _, _, rows in levels]
    assert any(r.startswith("support region (edge") for rows in at_a_bound for r in rows)
    assert any("/" in r for rows in at_a_bound for r in rows)  # a collision pair held a level


def test_without_the_support_level_the_reach_carries_the_centre_of_mass_past_the_edge(example):
    out = example.run(steps=90, support_level=False)
    assert out["com_inside"] < example.MARGIN - 5e-3, out["com_inside"]

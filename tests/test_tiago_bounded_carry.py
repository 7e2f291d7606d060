"""examples/tiago_dual_bounded_carry.py: the grip's relative pose kept in its box (not fixed)
while the left hand carries the box and the right hand pulls out of it.

The grip's error is recomputed here from the final configurations with Pinocchio's log6 (the
example records it the same way, independently of the controller's rows), and the report's
active rows are compared with the distances of that error to the box.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from reljac.robots import example_robot_data_dir

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "tiago_dual_bounded_carry.py"
BEYOND = 1e-3  # [m or rad] how far beyond the box the grip may go (a step's linearization error)
ON_BOUND = 1e-4  # [m or rad] an active row at rest is this close to its bound
MARGIN = 1e-3  # [m or rad] a row this far inside its box is slack


@pytest.fixture(scope="module")
def run():
    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    spec = importlib.util.spec_from_file_location("tiago_dual_bounded_carry", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclass looks its module up)
    try:
        spec.loader.exec_module(module)
        return module, module.carry(module.setup())
    finally:
        del sys.modules[spec.name]


def test_the_grip_stays_in_its_box_and_uses_it(run):
    example, carry = run
    errors = np.array(carry.grip_errors)
    assert (np.abs(errors) <= example.BOX + BEYOND).all(), np.abs(errors).max(axis=0)
    # the box is used, not held at its centre: the reach pulls the right hand 8 cm out along the
    # line between the hands (the grasp frame's -x: the hands face each other), so e_x rests on -5 cm
    assert errors[-1][0] == pytest.approx(-example.BOX[0], abs=ON_BOUND)
    # and the grip's own error e follows what the robot did: recomputed from the last q
    from reljac import Kinematics

    kin = Kinematics(carry.robot, carry.q)
    e = pin.log6(carry.grip.target.actInv(kin.relative_placement(example.L, example.R))).vector
    np.testing.assert_allclose(e, errors[-1], atol=1e-12)


def test_the_carried_path_is_tracked(run):
    """The lead hand's circle (20 cm across) is followed within a millimetre: the grip's box
    leaves it free (the level below the grip is met)."""
    _, carry = run
    assert max(carry.lead_errors) < 1e-3
    assert carry.controller.last_reports[1].met


def test_rows_on_a_bound_are_active_rows_with_margin_slack(run):
    example, carry = run
    distance = example.BOX - np.abs(carry.grip_errors[-1])  # at rest, after the circle
    active = example.on_bound(carry.controller, 0)
    slack = [i for i in range(6) if i not in active]
    assert active and slack
    assert (distance[active] < ON_BOUND).all(), (active, distance)
    assert all(i in slack for i in np.flatnonzero(distance > MARGIN)), (active, distance)
    assert 0 in active
    # the controller's names of its own level's active rows are the same rows
    report = carry.controller.last_reports[0]
    assert report.active_rows == [f"grip[{i}]" for i in report.active]
    assert not carry.controller.last_reports[2].met  # the reach is held back by the grip


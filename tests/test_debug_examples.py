"""The hierarchy files shipped as examples start where their targets can be dragged.

``examples/tiago_dual_debug.toml`` once started at TIAGo's reference configuration (every joint
at 0: both arms stretched sideways, the edge of their reach): holding the hands' relative pose,
the left hand could not move sideways at all, and the debug page's first drag waited ~15 s for
the posture level to bend the arms. Its [start] now holds the hands 50 cm apart in front of the
robot. Checked here: the start keeps every default collision pair beyond the file's min_distance,
every level is met at rest, and a 3 cm drag of the left hand's target along each world axis, both
ways, moves the hand within a step and is then met (the held relative pose still met too).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from helpers import example_robot_data_dir

from reljac import Kinematics, Robot
from reljac.apps.hierarchy_file import load_hierarchy
from reljac.ik import CollisionAvoidance

FILE = Path(__file__).resolve().parent.parent / "examples" / "tiago_dual_debug.toml"
LEFT = "hand_left_tool_link"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(example_robot_data_dir() is None, reason="example-robot-data is not installed")]


@pytest.fixture(scope="module")
def tiago():
    return Robot.load("tiago_dual").locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])


def test_the_tiago_debug_start_is_clear_of_collisions_and_at_rest(tiago):
    controller, q = load_hierarchy(tiago, FILE)
    avoidance = next(limit for limit in controller.limits if isinstance(limit, CollisionAvoidance))
    nearest = tiago.collisions.distances(q, within=0.1, jacobians=False).distance
    assert nearest.min() > avoidance.min_distance
    for _ in range(50):
        q = controller.step(q)
    assert all(report.met for report in controller.last_reports)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("sign", [1, -1])
def test_a_drag_of_the_left_hand_moves_it_at_once_along_every_axis(tiago, axis, sign):
    controller, q = load_hierarchy(tiago, FILE)
    left = controller.levels[1][0]
    p0 = Kinematics(tiago, q).placement(LEFT).translation
    target = left.target
    shift = np.zeros(3)
    shift[axis] = 0.03 * sign
    left.set_target(pin.SE3(target.rotation, target.translation + shift))
    q = controller.step(q)
    assert np.linalg.norm(Kinematics(tiago, q).placement(LEFT).translation - p0) > 1e-3  # at 10 /s gain: ~3 mm
    for _ in range(200):
        q = controller.step(q)
    errors = controller.errors(q)
    assert errors["left hand"]["position"] < 1e-6 and errors["hands"]["position"] < 1e-6

"""Bounds in hierarchy files (``lower`` / ``upper`` on any task's error, ``type = "ball"``; their
mistakes are in tests/test_hierarchy_file.py's BAD): good files keep what they ask, checked on the robot's motion with Pinocchio (the relative pose's log6, the
distance between the frames), not with the controller's own rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from reljac import Robot
from reljac.apps.hierarchy_file import read_hierarchy
from reljac.ik import BallTask, RelativeFrameTask, RelativePositionTask

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
HANDS = '[[task]]\ntype = "relative"\nframe_a = "left_tool"\nframe_b = "right_tool"\nname = "hands"\n'
BALL = '[[task]]\ntype = "ball"\nframe_a = "torso"\nframe_b = "left_tool"\n'


@pytest.fixture(scope="module")
def dual_arm():
    return Robot.bundled("dual_arm")


def read(robot, tmp_path, text):
    """The hierarchy of `text` with a posture level below it."""
    path = tmp_path / "bounds.toml"
    path.write_text(text + '[[task]]\nlevel = 9\ntype = "posture"\nweight = 0.1\n')
    return read_hierarchy(robot, path)


def run(controller, q, steps=300):
    for _ in range(steps):
        q = controller.step(q)
    return q


def relative(robot, q, a, b) -> pin.SE3:
    """T_ab at q, from Pinocchio's forward kinematics."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return data.oMf[robot.frame_id(a)].actInv(data.oMf[robot.frame_id(b)])


def test_a_box_with_an_open_side_holds_the_hands_where_a_lower_level_pulls(dual_arm, tmp_path):
    """Level 0 keeps the right tool within 2 cm of its start along the start pose's x, open below
    along z; level 1 pulls it 10 cm along +x and 10 cm along -z: x stops on its bound, z goes
    all the way (the open side), the other components stay where the box allows."""
    hierarchy = read(dual_arm, tmp_path, f'{HANDS}gain = 20\nlower = [-0.02, -0.02, -inf, -0.1, -0.1, -0.1]\n'
                     'upper = 0.02\n[[task]]\nlevel = 1\ntype = "position"\nframe_a = "left_tool"\n'
                     'frame_b = "right_tool"\ngain = 20\n')
    (hands,), (pull,), _ = hierarchy.controller.levels
    assert isinstance(hands, RelativeFrameTask) and isinstance(pull, RelativePositionTask)
    np.testing.assert_array_equal(hands.bounds[0], [-0.02, -0.02, -np.inf, -0.1, -0.1, -0.1])
    np.testing.assert_array_equal(hands.bounds[1], [0.02] * 6)
    T_start = hands.target  # the box's centre: the start pose (no position in the file)
    pull.set_target(T_start.translation + T_start.rotation @ np.array([0.10, 0.0, -0.10]))
    q = run(hierarchy.controller, hierarchy.q)
    e = pin.log6(T_start.actInv(relative(dual_arm, q, "left_tool", "right_tool"))).vector
    assert e[0] == pytest.approx(0.02, abs=1e-4)  # on its bound
    assert e[2] < -0.05  # open below: well past the 2 cm the other sides allow
    assert (np.abs(e[[1, 3, 4, 5]]) <= np.array([0.02, 0.1, 0.1, 0.1]) + 1e-4).all()


def test_a_ball_keeps_a_frame_within_its_radius(dual_arm, tmp_path):
    hierarchy = read(dual_arm, tmp_path, f'{BALL}radius = 0.03\ngain = 20\nname = "reach ball"\n[[task]]\n'
                     'level = 1\ntype = "position"\nframe_a = "torso"\nframe_b = "left_tool"\ngain = 20\n')
    (ball,), (reach,), _ = hierarchy.controller.levels
    assert isinstance(ball, BallTask) and ball.radius == 0.03 and ball.name == "reach ball"
    centre = ball.inner.target
    reach.set_target(centre + np.array([0.0, 0.0, 0.10]))  # 10 cm up: the ball lets it go 3 cm
    q = run(hierarchy.controller, hierarchy.q)
    p = relative(dual_arm, q, "torso", "left_tool").translation
    assert np.linalg.norm(p - centre) == pytest.approx(0.03, abs=1e-4)
    assert p[2] - centre[2] == pytest.approx(0.03, abs=2e-3)  # pulled straight up: on the ball's top


def test_the_bounded_tiago_example_file_reads(tmp_path):
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    tiago = Robot.load("tiago_dual").locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])
    hierarchy = read_hierarchy(tiago, EXAMPLES / "tiago_dual_bounded_debug.toml")
    bounded = [task for task in hierarchy.controller.tasks if task.bounds is not None]
    assert bounded and isinstance(bounded[0], RelativeFrameTask)
    q = run(hierarchy.controller, hierarchy.q, steps=5)
    assert np.isfinite(q).all()

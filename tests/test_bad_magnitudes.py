"""Values beyond what reljac computes with (|entries| <= 1e100: MAX_COORDINATE) and waits that
cannot be timed are refused where they are given, in one line, rather than ending as inf in a
result or a wait that never ends (an adversarial pass on the Python API)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.exceptions import ConfigurationError, TaskError
from reljac.ik import (
    BallTask,
    CoMTask,
    ConeTask,
    Controller,
    DistanceTask,
    FrameTask,
    HalfSpaceTask,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    solve_many,
)
from reljac.ik.solvers.backend import BACKENDS

ROBOT = reljac.Robot.bundled("dual_arm")


@pytest.mark.parametrize("make, target", [
    (lambda: FrameTask("left_tool"), pin.SE3(np.eye(3), np.array([1e200, 0.0, 0.0]))),
    (lambda: RelativePositionTask("left_tool", "right_tool"), np.array([0.0, -1e101, 0.0])),
    (lambda: DistanceTask("left_tool", "right_tool"), 1e200),
    (lambda: CoMTask(ROBOT), [1e200, 0.0, 0.5]),
])
def test_a_target_beyond_1e100_is_refused_when_set(make, target):
    """Before: accepted, and solve reported level errors of inf (the squares overflowed)."""
    task = make()
    with pytest.raises(TaskError, match="1e\\+100"):
        task.set_target(target)


def test_a_target_at_the_bound_is_taken():
    task = RelativePositionTask("left_tool", "right_tool")
    task.set_target([1e100, 0.0, 0.0])
    assert task.target[0] == 1e100


def test_solve_many_names_the_problem_whose_target_is_beyond_the_bound():
    task = FrameTask("left_tool")
    task.set_target(pin.SE3.Identity())
    poses = np.tile(np.eye(4), (2, 1, 1))
    poses[1, 0, 3] = 1e200
    with pytest.raises(TaskError, match=r"targets\[1\].*1e\+100"):
        solve_many(ROBOT, None, [[task]], targets=list(poses), timeout=0.05, workers=1)


def test_waiting_for_a_browser_takes_a_finite_time():
    """Before: nan waited forever, inf and 1e10 raised a raw OverflowError."""
    from reljac.viz import Viewer

    viewer = Viewer(ROBOT)
    try:
        for timeout in (float("nan"), float("inf"), 1e10, -1.0, "1"):
            with pytest.raises(ConfigurationError, match="wait_for_browser"):
                viewer.wait_for_browser(timeout)
        assert viewer.wait_for_browser(0.05) is False
    finally:
        viewer.close()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("setting, value", [("gain", 1e20), ("weight", 1e10), ("weight", 1e6)])
def test_huge_gains_and_weights_below_bounded_levels_keep_the_velocity_limits(backend, setting, value):
    """An adversarial pass: a posture of gain 1e20 (compiled) or weight 1e10 / 1e6 (Python) at the
    bottom of a five-level dual-arm stack of bounded levels (cone and half-space > frame and ball >
    relative pose and distance > orientation and CoM > posture) returned steps 172, 0.89 and 6e-5
    rad/s beyond a joint's velocity limit (the bounded solver's ratio tests on steps of 1e20 rad/s
    cancel); its step is now kept in the box, as the equality solver's."""
    q0 = ROBOT.normalize(0.5 * (ROBOT.lower_limits + ROBOT.upper_limits))
    kin = reljac.Kinematics(ROBOT, q0)
    z = kin.placement("left_tool").translation[2]
    frame = FrameTask("right_tool", gain=10.0, max_speed=0.5)
    frame.set_target(reljac.Kinematics(ROBOT, ROBOT.random_configuration(3)).placement("right_tool"))
    relative = RelativeFrameTask("left_tool", "right_tool", gain=10.0, weight=[1, 1, 1, 0.5, 0.5, 0.5])
    relative.set_target(kin.relative_placement("left_tool", "right_tool"))
    position = RelativePositionTask("torso", "left_tool", gain=8.0)
    position.set_target(kin.relative_placement("torso", "left_tool").translation + [0.05, 0.02, 0.0])
    orientation = RelativeOrientationTask("universe", "left_link7", gain=3.0)
    orientation.set_target(reljac.Kinematics(ROBOT, ROBOT.random_configuration(5)).placement("left_link7").rotation)
    distance = DistanceTask("left_tool", "right_tool", gain=4.0)
    distance.set_target(0.4)
    com = CoMTask(ROBOT, axes="xy", gain=2.0)
    com.set_target_from_configuration(q0)
    posture = PostureTask(ROBOT, gain=value if setting == "gain" else 1.0)
    posture.set_weight(value if setting == "weight" else 0.1)
    levels = [[ConeTask("torso", "left_tool", np.radians(30), gain=5.0),
               HalfSpaceTask("universe", "left_tool", [[0, 0, 1], [1, 0, 0]], [z - 0.05, 2.0], gain=5.0)],
              [frame, BallTask(position, 0.02, gain=5.0)], [relative, distance], [orientation, com], [posture]]
    controller = Controller(ROBOT, levels, dt=0.01, backend=backend)
    q = q0
    for _ in range(15):
        q_next = controller.step(q)
        assert (np.abs(controller.last_velocity) <= ROBOT.velocity_limits * (1 + 1e-12)).all(), \
            np.abs(controller.last_velocity) - ROBOT.velocity_limits
        assert np.isfinite(q_next).all()
        q = q_next

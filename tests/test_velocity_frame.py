"""A frame task's feed-forward velocity may be given in the target's axes (the default, as
before) or in a's (the world's for a FrameTask), as pink's and mink's users give it (issue 43:
a world velocity passed as it was doubled the tracking lag, silently).

The oracle is finite differences of a moving target: its own twist log6(T(t-h)^-1 T(t+h)) / 2h,
and its velocity in a's axes [(p(t+h) - p(t-h)) / 2h; log3(R(t+h) R(t-h)^T) / 2h].
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from reljac import Kinematics, Robot, TaskError
from reljac.ik import Controller, FrameTask, RelativeFrameTask, RelativeOrientationTask, RelativePositionTask

H = 1e-5  # [s] finite-difference step


def moving(t: float) -> pin.SE3:
    """A target that turns about a tilted axis while its origin runs on a circle."""
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    R = pin.exp3(0.7 * t * axis) @ pin.rpy.rpyToMatrix(0.2, -0.4, 1.1)
    p = np.array([0.4 + 0.1 * math.cos(2 * t), 0.2 * math.sin(2 * t), 1.0 + 0.05 * t])
    return pin.SE3(R, p)


def own_twist(target, t: float) -> np.ndarray:
    return pin.log6(target(t - H).actInv(target(t + H))).vector / (2 * H)


def velocity_in_a(target, t: float) -> np.ndarray:
    before, after = target(t - H), target(t + H)
    return np.concatenate([(after.translation - before.translation) / (2 * H),
                           pin.log3(after.rotation @ before.rotation.T) / (2 * H)])


@pytest.mark.parametrize("t", [0.0, 0.8, 2.1])
def test_a_world_velocity_is_stored_as_the_targets_own_twist(t):
    task = FrameTask("left_tool")
    task.set_target(moving(t), velocity=velocity_in_a(moving, t), velocity_frame="world")
    np.testing.assert_allclose(task.target_velocity, own_twist(moving, t), atol=1e-6)
    task.set_target(moving(t), velocity=velocity_in_a(moving, t), velocity_frame="a")  # a is the world
    np.testing.assert_allclose(task.target_velocity, own_twist(moving, t), atol=1e-6)


def test_the_default_is_the_targets_own_twist_as_before():
    task = FrameTask("left_tool")
    V = own_twist(moving, 0.5)
    task.set_target(moving(0.5), velocity=V)
    np.testing.assert_array_equal(task.target_velocity, V)
    task.set_target(moving(0.5), velocity=V, velocity_frame="target")
    np.testing.assert_array_equal(task.target_velocity, V)


def test_a_relative_targets_velocity_in_a_and_an_orientations():
    relative = RelativeFrameTask("left_tool", "right_tool")
    relative.set_target(moving(1.3), velocity=velocity_in_a(moving, 1.3), velocity_frame="a")
    np.testing.assert_allclose(relative.target_velocity, own_twist(moving, 1.3), atol=1e-6)
    orientation = RelativeOrientationTask("left_tool", "right_tool")
    orientation.set_target(moving(1.3).rotation, velocity=velocity_in_a(moving, 1.3)[3:], velocity_frame="a")
    np.testing.assert_allclose(orientation.target_velocity, own_twist(moving, 1.3)[3:], atol=1e-6)


def test_unknown_velocity_frames_are_one_line_task_errors():
    with pytest.raises(TaskError, match=r"velocity_frame of task 'pose of left_tool in right_tool' must be one of "
                                        r"'target', 'a', not 'world'"):
        RelativeFrameTask("right_tool", "left_tool").set_target(moving(0.0), velocity=np.zeros(6),
                                                                 velocity_frame="world")
    with pytest.raises(TaskError, match="must be one of 'target', 'a', 'world', not 'local'"):
        FrameTask("left_tool").set_target(moving(0.0), velocity=np.zeros(6), velocity_frame="local")
    with pytest.raises(TaskError, match="must be 'a'"):
        RelativePositionTask("left_tool", "right_tool").set_target(np.zeros(3), velocity_frame="target")
    task = FrameTask("left_tool")
    with pytest.raises(TaskError):
        task.set_target(moving(0.0), velocity=np.full(6, np.nan), velocity_frame="world")
    assert task.target is None  # nothing set by a refused call


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_tracking_with_a_world_velocity_given_as_such_lags_as_little_as_with_the_twist(backend):
    """Track a pose on a circle (turning): the world velocity with velocity_frame="world" gives
    the same lag as the target's own twist, and less than half the lag of the world velocity
    passed as if it were the twist (what the default silently did with it)."""
    robot = Robot.bundled("dual_arm")
    from reljac.apps.demo import DUAL_ARM_MEETING

    q0 = robot.q_from_joint_values(DUAL_ARM_MEETING)
    T0 = Kinematics(robot, q0).placement("left_tool")
    dt = 0.01

    def target(t: float) -> pin.SE3:
        a = 2.0 * t
        turn = pin.exp3(np.array([0.0, 0.0, 0.3 * math.sin(a)]))
        return pin.SE3(turn @ T0.rotation, T0.translation + 0.05 * np.array([0.0, math.sin(a), 1 - math.cos(a)]))

    def worst_lag(velocity, frame) -> float:
        task = FrameTask("left_tool", gain=15.0)
        controller = Controller(robot, [[task]], dt=dt, backend=backend)
        q, worst = q0.copy(), 0.0
        for k in range(200):
            t = k * dt
            task.set_target(target(t), velocity=velocity(t), velocity_frame=frame)
            q = controller.step(q)
            if k >= 100:  # past the start
                error = Kinematics(robot, q).placement("left_tool").translation - target(t + dt).translation
                worst = max(worst, float(np.linalg.norm(error)))
        return worst

    def world(t: float) -> np.ndarray:
        return velocity_in_a(target, t)

    def twist(t: float) -> np.ndarray:
        return own_twist(target, t)

    given_as_world = worst_lag(world, "world")
    given_as_twist = worst_lag(twist, "target")
    mistaken = worst_lag(world, "target")
    assert given_as_world == pytest.approx(given_as_twist, rel=1e-3, abs=1e-7)
    assert mistaken > 2.0 * given_as_world, (mistaken, given_as_world)

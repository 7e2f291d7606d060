"""A Controller warns of a task gain that its control period makes unstable."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from reljac import Robot
from reljac.exceptions import ReljacWarning
from reljac.ik import Controller, PostureTask


def test_a_gain_that_makes_a_task_error_grow_is_warned_of():
    """An adversarial pass: humanoid_stack's contacts (gain 100 /s) at dt = 20 ms kept their feet
    error in a period-2 oscillation and diverged at 21 ms, silently. Checked in closed form: a
    posture's error at gain x dt = 2.5 is multiplied by 1 - 2.5 = -1.5 at each step."""
    robot = Robot.bundled("planar_2link")
    posture = PostureTask(robot, gain=50.0)
    start = robot.neutral() + 1e-3
    posture.set_target(robot.neutral())
    controller = Controller(robot, [[posture]], dt=0.05, anti_chatter=False)
    with pytest.warns(ReljacWarning, match=r"gain 50 /s x dt 0.05 s = 2.5 >= 2: its error would not shrink") as seen:
        q1 = controller.step(start)  # a motion starts
    assert seen[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        controller.step(q1)  # (once per motion)
    np.testing.assert_allclose(q1 - robot.neutral(), -1.5 * (start - robot.neutral()), rtol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        controller.dt = 0.039  # 1.95: shrinks (oscillating), no warning
    with pytest.warns(ReljacWarning, match="= 2 >= 2") as seen:
        controller.dt = 0.04
    assert seen[0].filename == __file__


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_gain_set_during_a_motion_is_checked_too(backend):
    """The check ran only when a motion started and when dt was set: a gain raised mid-motion was
    silent. Each value is warned of once per task; setting a target every step is no gain change."""
    robot = Robot.bundled("planar_2link")
    posture = PostureTask(robot, gain=10.0)
    posture.set_target(robot.neutral())
    controller = Controller(robot, [[posture]], dt=0.05, anti_chatter=False, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = controller.step(robot.neutral() + 1e-3)
        posture.set_target(robot.neutral())
        posture.gain = 39.0  # 1.95
    with pytest.warns(ReljacWarning, match="gain 60 /s x dt 0.05 s = 3 >= 2") as seen:
        posture.gain = 60.0
    assert seen[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        posture.set_target(robot.neutral())  # (the same gain: no warning again)
        controller.step(q)

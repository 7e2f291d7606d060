"""Values beyond what reljac computes with (|entries| <= 1e100: MAX_COORDINATE) and waits that
cannot be timed are refused where they are given, in one line, rather than ending as inf in a
result or a wait that never ends (an adversarial pass on the Python API)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.exceptions import ConfigurationError, TaskError
from reljac.ik import CoMTask, DistanceTask, FrameTask, RelativePositionTask, solve_many

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

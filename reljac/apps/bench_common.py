"""What every ``reljac bench`` table shares: timing, progress hooks and the dual-arm protocol's levels."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from ..ik import FrameTask, PostureTask, RelativeFrameTask, Task
from ..relative import Kinematics
from ..robot import Robot

#: a `progress` hook: called with the number of units of work just done (e.g. a tqdm bar's update)
Progress = Callable[[int], object] | None
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
PAIR = ("left_tool", "right_tool")


def done(progress: Progress, n: int = 1) -> None:
    """Report `n` units of work to a `progress` hook (None: nothing)."""
    if progress is not None:
        progress(n)


def median_seconds(fn: Callable[[], object], *, runs: int = 200, inner: int = 20) -> float:
    """Median over `runs` samples of the mean time of `inner` back-to-back calls [s]."""
    fn()  # warm up caches and lazy imports
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return float(np.median(samples))


def frame_jacobian_call(robot: Robot) -> float:
    """[s] one pin.computeFrameJacobian (LOCAL_WORLD_ALIGNED) on `robot`: the unit of the tables."""
    model, data = robot.model, robot.model.createData()
    q, fid = robot.random_configuration(0), robot.model.nframes - 1
    return median_seconds(lambda: pin.computeFrameJacobian(model, data, q, fid, LWA), runs=300)


def middle(robot: Robot) -> np.ndarray:
    """Where the protocols start, (nq,): each one-DoF joint with finite limits at their middle,
    every other coordinate (floating bases, continuous and spherical joints) as in the neutral
    configuration (the middle of their +-1 or infinite bounds is no configuration)."""
    model = robot.model
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    q = robot.neutral().copy()
    for joint in model.joints[1:]:
        i = joint.idx_q
        if joint.nq == 1 and np.isfinite(lo[i]) and np.isfinite(hi[i]):
            q[i] = 0.5 * (lo[i] + hi[i])
    return q


def dual_arm_levels(robot: Robot, q_target: np.ndarray, gain: float, q_rest: np.ndarray) -> list[list[Task]]:
    """The protocol's levels: relative pose > left-tool pose (both of q_target) > posture toward q_rest."""
    kin = Kinematics(robot, q_target)
    rel = RelativeFrameTask(*PAIR, gain=gain)
    rel.set_target(kin.relative_placement(*PAIR))
    left = FrameTask("left_tool", gain=gain)
    left.set_target(kin.placement("left_tool"))
    posture = PostureTask(robot, gain=1.0, weight=0.1)
    posture.set_target(q_rest)
    return [[rel], [left], [posture]]

"""``reljac bench jacobian``, second table: the relative Jacobian's cost on several robots, in
units of one ``pin.computeFrameJacobian`` call from Python on the same robot, same run.

Cases per robot (frames a, b: its two tools, or its base and tool):
- ``relative_jacobian``: one one-shot call ``reljac.relative_jacobian(robot, q, a, b)``;
- ``Kinematics(q)``: building the shared object (one full Pinocchio pass);
- ``per extra pair (calls)``: one more ``Kinematics.relative_jacobian`` call on it;
- ``per extra pair (batched)``: one more pair in ``Kinematics.relative_jacobians`` (the
  difference between 4 pairs and 1 pair, divided by 3).

The cases are timed interleaved (each run times every case once), so load moves them together.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pinocchio as pin

from ..one_shot import relative_jacobian
from ..relative import Kinematics
from ..robot import Robot
from ..robots import example_robot_data_dir
from .bench_common import LWA

#: robot name: (frame a, frame b); example-robot-data's only when it is installed
ROBOT_FRAMES = {
    "dual_arm": ("left_tool", "right_tool"),
    "baxter": ("left_gripper", "right_gripper"),
    "tiago_dual": ("arm_left_tool_link", "arm_right_tool_link"),
    "ur5": ("base_link", "tool0"),
}
CASES = ("relative_jacobian", "Kinematics(q)", "per extra pair (calls)", "per extra pair (batched)")


def robot_names(*, quick: bool) -> list[str]:
    """dual_arm, and (not `quick`) the example-robot-data robots when the package is installed."""
    if quick or example_robot_data_dir() is None:
        return ["dual_arm"]
    return list(ROBOT_FRAMES)


def interleaved_medians(fns: list[Callable[[], object]], *, runs: int, inner: int = 20) -> list[float]:
    """Median [s] per call of each function, over `runs` rounds that each time every function
    once (`inner` back-to-back calls)."""
    for fn in fns:
        fn()  # warm-up: caches, lazy imports, per-thread data
    samples = np.empty((runs, len(fns)))
    for r in range(runs):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[r, k] = (time.perf_counter() - start) / inner
    return [float(t) for t in np.median(samples, axis=0)]


def robot_row(name: str, *, runs: int) -> dict[str, Any]:
    """One robot's row: {``robot``, ``nv``, ``frames``, ``unit_s``, ``units``: {case: ratio}}."""
    robot = Robot.bundled(name) if name == "dual_arm" else Robot.load(name)
    a, b = ROBOT_FRAMES[name]
    q = robot.random_configuration(0)
    model, data = robot.model, robot.model.createData()
    fb = robot.frame_id(b)
    kin = Kinematics(robot, q)
    one, four = [(a, b)], [(a, b), (b, a), ("universe", a), ("universe", b)]
    fns = [
        lambda: pin.computeFrameJacobian(model, data, q, fb, LWA),
        lambda: relative_jacobian(robot, q, a, b),
        lambda: Kinematics(robot, q, data=data),
        lambda: kin.relative_jacobian(a, b),
        lambda: kin.relative_jacobians(one),
        lambda: kin.relative_jacobians(four),
    ]
    unit, one_shot, build, call, batch_one, batch_four = interleaved_medians(fns, runs=runs)
    times = [one_shot, build, call, (batch_four - batch_one) / 3]
    return {"robot": name, "nv": robot.nv, "frames": [a, b], "unit_s": unit,
            "units": {case: t / unit for case, t in zip(CASES, times, strict=True)}}


def robots_results(*, quick: bool) -> list[dict[str, Any]]:
    runs = 30 if quick else 300
    return [robot_row(name, runs=runs) for name in robot_names(quick=quick)]


def robots_rows(rows: list[dict[str, Any]]) -> list[tuple]:
    """Table rows: robot, nv, frames, unit [us], then each case in units."""
    return [(r["robot"], r["nv"], " > ".join(r["frames"]), r["unit_s"] * 1e6, *(r["units"][c] for c in CASES))
            for r in rows]


HEADER = ["robot", "nv", "frames a > b", "unit [us]", *(f"{c} [units]" for c in CASES)]

"""``reljac bench``: timing tables, medians of many runs, ratios to Pinocchio's own C++ calls.

Every table times its baseline in the same run as the code it compares, so the ratios hold on a
shared, noisy machine even when the absolute times move.
"""

from __future__ import annotations

import time
from statistics import median
from typing import Callable

import numpy as np
import pinocchio as pin

from .relative import Kinematics, relative_jacobian
from .report import format_table
from .robot import Robot

PAIRS = [("left_tool", "right_tool"), ("torso", "left_tool"), ("torso", "right_tool"), ("right_tool", "left_link5")]


def median_seconds(fn: Callable[[], object], *, runs: int = 200, inner: int = 20) -> float:
    """Median over `runs` samples of the mean time of `inner` back-to-back calls [s]."""
    fn()  # warm up caches and lazy imports
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return median(samples)


def jacobian_table(*, quick: bool = False) -> str:
    """Relative Jacobians on dual_arm vs Pinocchio's computeFrameJacobian for one frame."""
    robot = Robot.bundled("dual_arm")
    model, data = robot.model, robot.model.createData()
    q = robot.random_configuration(0)
    fa, fb = robot.frame_id("left_tool"), robot.frame_id("right_tool")
    pairs = [p for p in PAIRS if all(f in robot.frame_names for f in p)]
    runs = 30 if quick else 300
    LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def pin_one_frame():
        pin.computeFrameJacobian(model, data, q, fa, LWA)

    def pin_two_frames():
        pin.computeFrameJacobian(model, data, q, fa, LWA)
        pin.computeFrameJacobian(model, data, q, fb, LWA)

    def one_pair():
        relative_jacobian(robot, q, "left_tool", "right_tool")

    def four_single_calls():
        for a, b in pairs:
            relative_jacobian(robot, q, a, b)

    def shared_four_pairs():
        kin = Kinematics(robot, q, data=robot.data)
        for a, b in pairs:
            kin.relative_jacobian(a, b)

    cases = [
        ("pin.computeFrameJacobian, 1 frame (baseline)", pin_one_frame),
        ("pin.computeFrameJacobian, 2 frames", pin_two_frames),
        ("reljac.relative_jacobian, 1 pair", one_pair),
        (f"reljac.relative_jacobian x {len(pairs)} single calls", four_single_calls),
        (f"reljac.Kinematics, {len(pairs)} pairs (one pass)", shared_four_pairs),
    ]
    times = [median_seconds(fn, runs=runs) for _, fn in cases]
    rows = [(name, t * 1e6, t / times[0]) for (name, _), t in zip(cases, times)]
    title = f"relative Jacobians on dual_arm (nv={robot.nv}), median of {runs} runs x 20 calls"
    return title + "\n" + format_table(["case", "time [us]", "ratio to baseline"], rows)


def reference_table(*, quick: bool = False) -> str:
    """Batched in-house reference vs a Python loop over the Pinocchio layer, per configuration."""
    from .reference import ReferenceRobot

    robot = Robot.bundled("dual_arm")
    ref = ReferenceRobot.from_urdf(robot.urdf_path)
    n = 1000 if quick else 10_000
    rng = np.random.default_rng(0)
    q_ref = ref.random_configuration(rng, n=n)
    from .check import LayerMap

    layers = LayerMap(robot, ref)
    q_pin = list(layers.q_to_pinocchio(q_ref))
    runs = 3 if quick else 7

    def batched():
        ref.relative_jacobian(q_ref, "left_tool", "right_tool")

    def loop():
        for q in q_pin:
            relative_jacobian(robot, q, "left_tool", "right_tool")

    t_batch = median_seconds(batched, runs=runs, inner=1) / n
    t_loop = median_seconds(loop, runs=runs, inner=1) / n
    rows = [
        ("reference, batched numpy (N at once)", t_batch * 1e6, 1.0),
        ("Pinocchio layer, Python loop", t_loop * 1e6, t_loop / t_batch),
    ]
    return (f"relative Jacobians for N={n} random configurations of dual_arm, per configuration, "
            f"median of {runs} runs\n" + format_table(["path", "time per configuration [us]", "ratio to batched"], rows))


def map_tables(*, quick: bool = False) -> str:
    """`reljac bench map`: batched kinematics, capability-map throughput, Dask costs, IK seeding."""
    from .apps.map_bench import map_tables as tables

    return tables(quick=quick)


def _ik_tables(*, quick: bool = False) -> str:
    from .apps.bench_ik import ik_tables

    return ik_tables(quick=quick)


SECTIONS: dict[str, Callable[..., str]] = {
    "jacobian": jacobian_table,
    "reference": reference_table,
    "ik": _ik_tables,
    "map": map_tables,
}


def main(what: str = "all", *, quick: bool = False) -> int:
    names = list(SECTIONS) if what == "all" else [what]
    for i, name in enumerate(names):
        if i:
            print()
        print(SECTIONS[name](quick=quick), flush=True)
    return 0

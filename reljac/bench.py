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


def _run_trials(robot, trials, *, max_steps: int, dt: float) -> dict:
    """Run controller trials: each (levels, q0, success(kin) -> bool). Times every step."""
    from .ik import Controller

    step_times, steps, successes = [], [], 0
    for levels, q0, success in trials:
        controller = Controller(robot, levels, dt=dt)
        q = q0
        ok = success(Kinematics(robot, q))
        n = 0
        while not ok and n < max_steps:
            start = time.perf_counter()
            q = controller.step(q)
            step_times.append(time.perf_counter() - start)
            n += 1
            ok = success(Kinematics(robot, q, data=controller.data))
        successes += ok
        steps.append(n)
    return {
        "success": successes / len(trials),
        "steps": np.array(steps),
        "step_times": np.array(step_times),
    }


def _ik_section(title: str, robot: Robot, trials, pair: tuple[str, str], *, max_steps: int, dt: float) -> str:
    """Run the trials and tabulate them beside one relative_jacobian call on `pair`, same run."""
    q = robot.random_configuration(1)
    call = median_seconds(lambda: relative_jacobian(robot, q, *pair), runs=100)
    return _ik_table(title, _run_trials(robot, trials, max_steps=max_steps, dt=dt), call)


def _ik_table(title: str, result: dict, reference_call: float) -> str:
    steps, times = result["steps"], result["step_times"]
    rows = [
        ("success rate", f"{100 * result['success']:.0f} %"),
        ("steps, median / p95", f"{np.median(steps):.0f} / {np.percentile(steps, 95):.0f}"),
        ("time per step, median / p95 [us]", f"{1e6 * np.median(times):.0f} / {1e6 * np.percentile(times, 95):.0f}"),
        ("one relative_jacobian call [us]", f"{1e6 * reference_call:.1f}"),
        ("median step / relative_jacobian", f"{np.median(times) / reference_call:.1f}"),
    ]
    return title + "\n" + format_table(["quantity", "value"], rows)


def _middle(robot: Robot) -> np.ndarray:
    return robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))


def ik_tables(*, quick: bool = False) -> str:
    """`reljac bench ik`: dual-arm relative + absolute targets, and the hand pinch."""
    from .ik import FrameTask, PostureTask, RelativeFrameTask, RelativePositionTask

    n = 10 if quick else 100
    dt, max_steps, gain = 0.01, 500, 20.0
    out = []

    robot = Robot.bundled("dual_arm")
    rng = np.random.default_rng(2026)
    q_mid = _middle(robot)
    trials = []
    for _ in range(n):
        kin = Kinematics(robot, robot.random_configuration(rng))
        rel = RelativeFrameTask("left_tool", "right_tool", gain=gain)
        rel.set_target(kin.relative_placement("left_tool", "right_tool"))
        left = FrameTask("left_tool", gain=gain)
        left.set_target(kin.placement("left_tool"))
        posture = PostureTask(robot, gain=1.0, weight=0.1)
        posture.set_target(q_mid)

        def success(k, rel=rel):
            e = rel.error_norms(k)
            return e["position"] < 1e-3 and e["orientation"] < 1e-2

        trials.append(([[rel], [left], [posture]], q_mid, success))
    out.append(_ik_section(
        f"IK on dual_arm: {n} reachable targets, levels: right_tool in left_tool > left_tool > posture; "
        f"start mid-limits, dt={dt}, <= {max_steps} steps; success: relative error < 1 mm and < 1e-2 rad",
        robot, trials, ("left_tool", "right_tool"), max_steps=max_steps, dt=dt))

    hand = Robot.bundled("hand")
    rng = np.random.default_rng(2027)
    trials = []
    for i in range(n):
        finger = ("index_tip", "middle_tip")[i % 2]
        pinch = RelativePositionTask(finger, "thumb_tip", gain=gain)
        pinch.set_target(np.zeros(3))
        posture = PostureTask(hand, gain=1.0, weight=0.01)
        posture.set_target(_middle(hand))

        def success(k, pinch=pinch):
            return pinch.error_norms(k)["position"] < 1e-3

        trials.append(([[pinch], [posture]], hand.random_configuration(rng), success))
    out.append(_ik_section(
        f"IK on hand: {n} pinches (thumb_tip on index_tip / middle_tip) from random starts, "
        f"levels: pinch > posture; dt={dt}, <= {max_steps} steps; success: error < 1 mm",
        hand, trials, ("index_tip", "thumb_tip"), max_steps=max_steps, dt=dt))
    from .ik.nlp import nlp_bench_rows

    rows = nlp_bench_rows(n_targets=5 if quick else 20, seed=0)
    out.append("solve (controller iterations) vs solve_nlp (scipy L-BFGS-B, analytic gradients) on dual_arm\n"
               + format_table(["problem / solver", "success rate", "median time per solve [s]"], rows))
    return "\n\n".join(out)


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


SECTIONS: dict[str, Callable[..., str]] = {
    "jacobian": jacobian_table,
    "reference": reference_table,
    "ik": ik_tables,
    "map": map_tables,
}


def main(what: str = "all", *, quick: bool = False) -> int:
    names = list(SECTIONS) if what == "all" else [what]
    for i, name in enumerate(names):
        if i:
            print()
        print(SECTIONS[name](quick=quick), flush=True)
    return 0

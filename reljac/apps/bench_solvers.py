"""``reljac bench ik``, its solver tables: hand pinches from random starts, and the controller's
:func:`~reljac.ik.solve` against :func:`~reljac.ik.solve_nlp` (scipy L-BFGS-B) on dual_arm targets."""

from __future__ import annotations

import time
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from ..costs import pose_cost
from ..ik import (
    Controller,
    PostureTask,
    RelativeFrameTask,
    RelativePositionTask,
    solve,
    solve_nlp,
)
from ..relative import Kinematics
from ..robot import Robot
from ..validation import as_count
from .bench_common import Progress, done, frame_jacobian_call, middle
from .report import format_table


def hand_pinches(quick: bool) -> int:
    return 10 if quick else 100


def hand_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """Pinches on the hand: {``pinches``, ``success`` (fraction), ``steps_median``, ``steps_p95``,
    ``step_median_s``, ``step_median_units``, ``unit_s``}."""
    hand = Robot.bundled("hand")
    n, dt = hand_pinches(quick), 0.01
    rng = np.random.default_rng(2027)
    unit = frame_jacobian_call(hand)
    times, steps, ok = [], [], 0
    for i in range(n):
        pinch = RelativePositionTask(("index_tip", "middle_tip")[i % 2], "thumb_tip", gain=1.0 / dt)
        pinch.set_target(np.zeros(3))
        posture = PostureTask(hand, gain=1.0, weight=0.01)
        posture.set_target(middle(hand))
        controller = Controller(hand, [[pinch], [posture]], dt=dt)
        q = hand.random_configuration(rng)
        taken = 0
        while taken < 500:
            start = time.perf_counter()
            q = controller.step(q)
            times.append(time.perf_counter() - start)
            taken += 1
            if pinch.error_norms(controller.last_kinematics)["position"] < 1e-3:
                ok += 1
                break
        steps.append(taken)
        done(progress)
    med = float(np.median(times))
    return {"pinches": n, "success": ok / n, "steps_median": float(np.median(steps)),
            "steps_p95": float(np.percentile(steps, 95)), "step_median_s": med, "step_median_units": med / unit,
            "unit_s": unit}


def hand_text(r: dict[str, Any]) -> str:
    rows = [("success", f"{100 * r['success']:.0f} %"), ("steps median / p95", f"{r['steps_median']:.0f} / "
            f"{r['steps_p95']:.0f}"), ("step median [us]", f"{1e6 * r['step_median_s']:.0f}"),
            ("step / unit", f"{r['step_median_units']:.0f}")]
    return (f"IK on hand: {r['pinches']} pinches (thumb_tip on index/middle tip) from random starts, gain = 1/dt, "
            "levels pinch > posture; success: < 1 mm\n" + format_table(["quantity", "value"], rows))


def nlp_targets(quick: bool) -> int:
    return 5 if quick else 20


def nlp_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """solve vs solve_nlp: {``targets``, ``rows``: [{``problem``, ``solver``, ``success_rate``,
    ``median_time_s``}]}. One target at a time from one shared generator: the same targets
    and figures as ``nlp_bench_rows(n_targets, seed=0)``."""
    n, rng = nlp_targets(quick), np.random.default_rng(0)
    runs: dict[str, list[tuple[float, float]]] = {}
    for _ in range(n):
        for name, ok, t in nlp_bench_rows(n_targets=1, seed=rng):
            runs.setdefault(name, []).append((ok, t))
        done(progress)
    rows = []
    for name, values in runs.items():
        problem, _, solver = name.rpartition(": ")
        rows.append({"problem": problem, "solver": solver, "success_rate": float(np.mean([ok for ok, _ in values])),
                     "median_time_s": float(np.median([t for _, t in values]))})
    return {"targets": n, "rows": rows}


def nlp_text(r: dict[str, Any]) -> str:
    rows = [(f"{x['problem']}: {x['solver']}", x["success_rate"], x["median_time_s"]) for x in r["rows"]]
    return ("solve (controller iterations) vs solve_nlp (scipy L-BFGS-B, analytic gradients) on dual_arm\n"
            + format_table(["problem / solver", "success rate", "median time per solve [s]"], rows))


class BenchRow(NamedTuple):
    """One solver on one problem: its ``name``, ``success_rate`` in [0, 1] and
    ``median_seconds``, the median wall time per solve [s]."""

    name: str
    success_rate: float
    median_seconds: float


def nlp_bench_rows(n_targets: int = 20, seed: int | np.random.Generator = 0, *,
                   tol: float = 1e-4) -> list[BenchRow]:
    """Compare :func:`solve_nlp` and the controller's :func:`~reljac.ik.solve` on dual_arm targets.

    For each of `n_targets` random configurations (seeded), the pose of left_tool in the world
    and the pose of right_tool in left_tool become targets; both solvers start from the middle
    of the joint limits with the same `tol` [m, rad].

    Returns:
        Rows (name, success rate in [0, 1], median wall time per solve [s]).
    """
    as_count(n_targets, "n_targets", minimum=1)
    robot = Robot.bundled("dual_arm")
    rng = np.random.default_rng(seed)
    q0 = middle(robot)
    problems = {"left_tool pose": ("universe", "left_tool"),
                "right_tool in left_tool pose": ("left_tool", "right_tool")}
    outcomes: dict[str, list[tuple[bool, float]]] = {}
    for _ in range(n_targets):
        kin = Kinematics(robot, robot.random_configuration(rng))
        for label, (a, b) in problems.items():
            T = kin.relative_placement(a, b)
            task = RelativeFrameTask(a, b, gain=20.0)
            task.set_target(T)
            costs = pose_cost(b, T, relative_to=None if a == "universe" else a)
            for solver, run in (("solve_nlp", partial(solve_nlp, robot, q0, costs, tol=tol, max_iters=1000)),
                                ("controller solve", partial(solve, robot, q0, [[task]], tol=tol, max_iters=1000))):
                start = time.perf_counter()
                converged = run().converged
                outcomes.setdefault(f"{label}: {solver}", []).append((converged, time.perf_counter() - start))
    return [BenchRow(name, float(np.mean([ok for ok, _ in runs])), float(np.median([t for _, t in runs])))
            for name, runs in outcomes.items()]

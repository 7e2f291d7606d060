"""``reljac bench ik``: the controller on the peers' protocol, compiled against Python, and chatter.

Protocol (as the IK libraries it is compared with are run): bundled ``dual_arm``, reachable
targets drawn from random configurations, levels relative pose > left-tool pose > posture, a task
gain of one per step (gain = 1/dt, so the velocity limits bind on nearly every step), start at
the middle of the joint limits. Every time is also given as a multiple of one
``pin.computeFrameJacobian`` call timed in the same run.

Chatter (:func:`chatter_fraction`): over the last 100 of 300 steps, the steps in which some
joint's velocity changes sign at more than half its limit, on unreachable relative targets;
:func:`bounded_chatter` measures it with inequality rows on their bounds at rest (the relative
pose in a box, a lower level pulling out of it), on the backend the controller picks.

:func:`ik_results` measures every table into a dict of numbers (the ``--json`` form, times in
seconds), :func:`ik_text` formats it; `progress` hooks are called with the units of work just
done (:func:`ik_units` counts them: one per target, episode, pinch or NLP target).
"""

from __future__ import annotations

import time
from itertools import pairwise
from typing import Any

import numpy as np
import pinocchio as pin

from ..ik import Controller, DampingPolicy, RelativeFrameTask, RelativePositionTask, compiled_available
from ..one_shot import relative_jacobian
from ..relative import Kinematics
from ..robot import Robot
from .bench_collision import (
    collision_episodes,
    collision_results,
    collision_text,
    panda_files,
)
from .bench_common import (
    PAIR,
    Progress,
    done,
    dual_arm_levels,
    frame_jacobian_call,
    median_seconds,
    middle,
)
from .bench_inequality import inequality_results, inequality_text, inequality_units
from .bench_solvers import (
    hand_pinches,
    hand_results,
    hand_text,
    nlp_results,
    nlp_targets,
    nlp_text,
)
from .report import format_table


def _met(task: Any, kin: Kinematics) -> bool:
    e = task.error_norms(kin)
    return e["position"] < 1e-3 and e["orientation"] < 1e-2


class _Limits:
    """Counts position and velocity limit crossings of the steps q -> q_next."""

    def __init__(self, robot: Robot, dt: float) -> None:
        self.model, self.dt, self.crossings = robot.model, dt, 0
        self.lo, self.hi = robot.lower_limits, robot.upper_limits
        self.vmax = robot.velocity_limits

    def check(self, q: np.ndarray, q_next: np.ndarray) -> None:
        v = pin.difference(self.model, q, q_next) / self.dt
        bad_v = np.abs(v) > self.vmax * (1 + 1e-9) + 1e-12
        bad_q = (q_next < self.lo - 1e-9) | (q_next > self.hi + 1e-9)
        self.crossings += int(bad_v.any() or bad_q.any())


def run_targets(robot: Robot, targets: Any, *, backend: str, dt: float, max_steps: int,
                progress: Progress = None) -> dict:
    """Each target from the middle of the limits until both task levels are met (or max_steps);
    success is the top level's; steps are counted until the top level is first met."""
    q_mid = middle(robot)
    times, steps, top, second = [], [], 0, 0
    limits = _Limits(robot, dt)
    for q_target in targets:
        levels = dual_arm_levels(robot, q_target, 1.0 / dt, q_mid)
        controller = Controller(robot, levels, dt=dt, backend=backend)
        q, n, first = q_mid, 0, max_steps
        while n < max_steps:
            start = time.perf_counter()
            q_next = controller.step(q)
            times.append(time.perf_counter() - start)
            limits.check(q, q_next)
            q, n = q_next, n + 1
            kin = Kinematics(robot, q)
            if _met(levels[0][0], kin):
                first = min(first, n)
                if _met(levels[1][0], kin):
                    break
        kin = Kinematics(robot, q)
        top += _met(levels[0][0], kin)
        second += _met(levels[1][0], kin)
        steps.append(first)
        done(progress)
    return {"top": top / len(targets), "second": second / len(targets), "steps": np.array(steps),
            "times": np.array(times), "crossings": limits.crossings}


def _flips(velocities: list[np.ndarray], vmax: np.ndarray) -> float:
    """Over the last 100 steps of `velocities` ((nv,) each), the fraction of steps in which some
    joint's velocity changes sign at more than half its limit `vmax` (nv,)."""
    v = np.array(velocities[-101:])
    fast = np.abs(v) > 0.5 * vmax
    return float((fast[1:] & fast[:-1] & (v[1:] * v[:-1] < 0)).any(axis=1).mean())


def _velocities(robot: Robot, controller: Controller, q: np.ndarray, steps: int,
                rows: list[frozenset[int]] | None = None) -> list[np.ndarray]:
    """The joint velocities (nv,) of `steps` steps from q; with `rows`, the rows of level 0 on a
    bound after each step are appended to it (:func:`_on_bound`)."""
    velocities = []
    for _ in range(steps):
        q_next = controller.step(q)
        velocities.append(pin.difference(robot.model, q, q_next) / controller.dt)
        q = q_next
        if rows is not None:
            rows.append(_on_bound(controller.last_reports))
    return velocities


def _on_bound(reports: list[Any]) -> frozenset[int]:
    """Level 0's inequality rows on a bound: active at its solution, or held by a level below."""
    return frozenset(reports[0].on_bound)


def chatter_fraction(robot: Robot, episodes: int, *, dt: float, steps: int = 300,
                     progress: Progress = None, **options: Any) -> float:
    """Unreachable relative targets with one-step gains: over the last 100 steps of each episode,
    the fraction of steps in which some joint's velocity changes sign at more than half its limit."""
    rng = np.random.default_rng(7)
    q_mid, vmax = middle(robot), robot.velocity_limits
    flips = []
    for _ in range(episodes):
        levels = dual_arm_levels(robot, robot.random_configuration(rng), 1.0 / dt, q_mid)
        far = pin.SE3(pin.exp3(rng.normal(size=3)), np.array([0.0, 2.5, 0.0]) + 0.5 * rng.normal(size=3))
        relative = levels[0][0]
        assert isinstance(relative, RelativeFrameTask)  # dual_arm_levels' top level
        relative.set_target(far)  # the hands cannot be 2.5 m apart
        controller = Controller(robot, levels, dt=dt, **options)
        flips.append(_flips(_velocities(robot, controller, q_mid, steps), vmax))
        done(progress)
    return float(np.mean(flips))


BOUNDED_BOX = np.array([0.05, 0.05, 0.05, 0.1, 0.1, 0.1])  # [m, m, m, rad, rad, rad] half-widths
BOUNDED_PULL = 0.15  # [m] the scale of the pull's offset out of the box (a normal draw per axis)


def bounded_chatter(robot: Robot, episodes: int, *, dt: float, steps: int = 300, progress: Progress = None,
                    **options: Any) -> dict[str, Any]:
    """Chatter with inequality rows active at rest: the protocol's levels (one-step gains), the
    relative pose kept in a box of BOUNDED_BOX about a reachable target instead of held at it,
    and below the left tool's level a pull on the right tool's position in the left's frame,
    BOUNDED_PULL times a normal draw per axis out of the box's centre, which holds rows of the
    box on their bounds. Returns {``chatter``: :func:`chatter_fraction`'s measure over the
    last 100 of `steps` steps, ``row_changes``: the fraction of those steps in which the set of
    the box's rows on a bound (``LevelReport.active`` of its level, or ``held`` by a level
    below) changed, ``active_rows``: the mean count of them at the end, ``backend``: the
    controllers' (tasks with bounds run where the controller puts them)}."""
    rng = np.random.default_rng(11)
    q_mid, vmax = middle(robot), robot.velocity_limits
    flips, changes, counts, backend = [], [], [], ""
    for _ in range(episodes):
        levels = dual_arm_levels(robot, robot.random_configuration(rng), 1.0 / dt, q_mid)
        box = levels[0][0]
        assert isinstance(box, RelativeFrameTask)  # dual_arm_levels' top level
        box.set_bounds(-BOUNDED_BOX, BOUNDED_BOX)
        T = box.target
        pull = RelativePositionTask(*PAIR, gain=1.0 / dt, name="pull")
        pull.set_target(T.translation + T.rotation @ (BOUNDED_PULL * rng.normal(size=3)))
        controller = Controller(robot, [levels[0], levels[1], [pull], levels[2]], dt=dt, **options)
        backend = controller.backend
        rows: list[frozenset[int]] = []
        flips.append(_flips(_velocities(robot, controller, q_mid, steps, rows), vmax))
        last = rows[-101:]
        changes.append(float(np.mean([a != b for a, b in pairwise(last)])))
        counts.append(len(rows[-1]))
        done(progress)
    return {"chatter": float(np.mean(flips)), "row_changes": float(np.mean(changes)),
            "active_rows": float(np.mean(counts)), "backend": backend}


def _protocol_sizes(quick: bool) -> tuple[int, int]:
    return (5 if quick else 100), (2 if quick else 20)  # targets, chatter episodes


def _backends() -> list[str]:
    return (["compiled"] if compiled_available() else []) + ["python"]


def protocol_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """The protocol on dual_arm, per solver. Returns {``robot``, ``nv``, ``targets``, ``dt`` [s],
    ``gain`` [1/s], ``max_steps``, ``unit_s`` (one computeFrameJacobian [s]), ``solvers``: [{``solver``,
    ``top_level_met`` and ``second_met`` (fractions of targets), ``steps_median``, ``steps_p95``,
    ``step_median_s``, ``step_p95_s``, ``step_median_units``, ``step_p95_units``,
    ``steps_crossing_a_limit``, ``chatter`` (fraction of steps)}], ``chatter_without_anti_chatter``,
    ``bounded`` (:func:`bounded_chatter`: ``chatter``, ``row_changes``, ``active_rows``, ``backend``),
    ``compiled_speedup`` (Python step / compiled step, None without the compiled core)}."""
    robot = Robot.bundled("dual_arm")
    (n, episodes), dt, max_steps = _protocol_sizes(quick), 0.01, 500
    rng = np.random.default_rng(2026)
    targets = [robot.random_configuration(rng) for _ in range(n)]
    unit = frame_jacobian_call(robot)
    solvers = []
    for backend in _backends():
        r = run_targets(robot, targets, backend=backend, dt=dt, max_steps=max_steps, progress=progress)
        med, p95 = float(np.median(r["times"])), float(np.percentile(r["times"], 95))
        chatter = chatter_fraction(robot, episodes, dt=dt, backend=backend, progress=progress)
        solvers.append({"solver": backend, "top_level_met": r["top"], "second_met": r["second"],
                        "steps_median": float(np.median(r["steps"])), "steps_p95": float(np.percentile(r["steps"], 95)),
                        "step_median_s": med, "step_p95_s": p95, "step_median_units": med / unit,
                        "step_p95_units": p95 / unit, "steps_crossing_a_limit": r["crossings"], "chatter": chatter})
    old = chatter_fraction(robot, episodes, dt=dt, anti_chatter=False, damping=DampingPolicy(error_damping=0.0),
                           progress=progress)
    bounded = bounded_chatter(robot, episodes, dt=dt, progress=progress)
    medians = {s["solver"]: s["step_median_s"] for s in solvers}
    return {"robot": robot.name, "nv": robot.nv, "targets": n, "dt": dt, "gain": 1 / dt, "max_steps": max_steps,
            "unit_s": unit, "solvers": solvers, "chatter_without_anti_chatter": old, "bounded": bounded,
            "compiled_speedup": medians["python"] / medians["compiled"] if len(medians) == 2 else None}


def protocol_text(r: dict[str, Any]) -> str:
    rows = [(s["solver"], f"{100 * s['top_level_met']:.0f} %", f"{100 * s['second_met']:.0f} %",
             f"{s['steps_median']:.0f} / {s['steps_p95']:.0f}",
             f"{1e6 * s['step_median_s']:.0f} / {1e6 * s['step_p95_s']:.0f}",
             f"{s['step_median_units']:.0f} / {s['step_p95_units']:.0f}",
             s["steps_crossing_a_limit"], f"{100 * s['chatter']:.1f} %") for s in r["solvers"]]
    rows.append(("(no anti-chatter, no error damping)", "", "", "", "", "", "",
                 f"{100 * r['chatter_without_anti_chatter']:.1f} %"))
    bounded = r.get("bounded")  # (runs stored before issue 29's row have none)
    if bounded is not None:
        rows.append((f"(relative pose in a box, pulled out of it: {bounded['backend']})", "", "", "", "", "", "",
                     f"{100 * bounded['chatter']:.1f} %"))
    title = (f"IK on {r['robot']} (nv={r['nv']}): {r['targets']} reachable targets, levels relative pose > "
             f"left_tool pose > posture, gain = 1/dt = {r['gain']:.0f} [1/s], start mid-limits, <= {r['max_steps']} "
             f"steps; success: error < 1 mm and 1e-2 rad; unit: one pin.computeFrameJacobian = "
             f"{1e6 * r['unit_s']:.2f} us")
    table = format_table(["solver", "top level met", "second met", "steps med / p95", "step med / p95 [us]",
                          "step / unit med / p95", "steps crossing a limit", "chatter"], rows)
    if r["compiled_speedup"] is not None:
        table += f"\ncompiled step {r['compiled_speedup']:.1f}x faster than the Python solver's"
    if bounded is not None:
        table += (f"\nbox: the relative pose within +-{1e3 * BOUNDED_BOX[0]:.0f} mm, +-{BOUNDED_BOX[3]:g} rad of a "
                  f"reachable target, a level below pulling the right tool out of it; at rest "
                  f"{bounded['active_rows']:.1f} of its 6 rows on a bound (mean), their set changing in "
                  f"{100 * bounded['row_changes']:.1f} % of steps")
    return title + "\n" + table


def relative_results() -> dict[str, Any]:
    """relative_jacobian and Kinematics per pair: {``robot``, ``unit_s``, ``calls``: [{``call``,
    ``time_s`` (median [s]), ``units`` (in computeFrameJacobian calls)}]}."""
    robot = Robot.bundled("dual_arm")
    q = robot.random_configuration(0)
    unit = frame_jacobian_call(robot)
    one = median_seconds(lambda: relative_jacobian(robot, q, *PAIR))

    def per_pair():
        kin = Kinematics(robot, q)
        for a, b in (PAIR, ("torso", "left_tool"), ("torso", "right_tool"), ("right_tool", "left_link5")):
            kin.relative_jacobian(a, b)

    four = median_seconds(per_pair) / 4
    return {"robot": robot.name, "unit_s": unit, "calls": [
        {"call": "relative_jacobian, one-shot", "time_s": one, "units": one / unit},
        {"call": "Kinematics, 4 pairs, per pair", "time_s": four, "units": four / unit}]}


def relative_text(r: dict[str, Any]) -> str:
    rows = [(c["call"], 1e6 * c["time_s"], c["units"]) for c in r["calls"]]
    return (f"relative Jacobians on {r['robot']}, in units of one pin.computeFrameJacobian\n"
            + format_table(["call", "time [us]", "/ unit"], rows))


def ik_units(*, quick: bool = False) -> int:
    """Units of work :func:`ik_results` reports: targets and chatter episodes per solver, the
    episodes without anti-chatter and with bounds, collision episodes (off and on, per robot), the relative
    table, the pinches and the NLP targets."""
    targets, episodes = _protocol_sizes(quick)
    collision = 2 * collision_episodes(quick) * (1 + (panda_files() is not None))
    return (len(_backends()) * (targets + episodes) + 2 * episodes + collision + 1 + hand_pinches(quick)
            + nlp_targets(quick) + inequality_units(quick=quick))


def ik_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """Every IK measurement of ``reljac bench ik``: {``protocol``, ``collision``, ``relative``,
    ``hand``, ``nlp``, ``inequality``}, the dicts of :func:`protocol_results`,
    :func:`collision_results`, :func:`relative_results`, :func:`hand_results`, :func:`nlp_results`
    and :func:`~reljac.apps.bench_inequality.inequality_results`."""
    out = {"protocol": protocol_results(quick=quick, progress=progress),
           "collision": collision_results(quick=quick, progress=progress), "relative": relative_results()}
    done(progress)
    out["hand"] = hand_results(quick=quick, progress=progress)
    out["nlp"] = nlp_results(quick=quick, progress=progress)
    out["inequality"] = inequality_results(quick=quick, progress=progress)
    return out


def ik_text(r: dict[str, Any]) -> str:
    """The tables of :func:`ik_results`."""
    return "\n\n".join([protocol_text(r["protocol"]), collision_text(r["collision"]), relative_text(r["relative"]),
                        hand_text(r["hand"]), nlp_text(r["nlp"])]
                       + ([inequality_text(r["inequality"])] if "inequality" in r else []))  # (older stored runs)

"""``reljac bench ik --peers``: reljac beside PlaCo and pink, on the same targets, in the same run.

Each case hands one list of :class:`~reljac.apps.bench_peer_libs.Problem` s (targets drawn from
random collision-free configurations, so that every target is reachable), one start (the middle of
the joint limits), the robot's joint limits and, with collision avoidance, one set of collision
pairs to every library (configured as :mod:`reljac.apps.bench_peer_libs` says). Each episode runs
until the top level and the second level are met or ``max_steps``, then ``hold`` more steps at rest.

Judged by reljac's own kinematics on each library's q, for every library alike: **success**, the
top level met (position error < 1 mm and orientation error < 1e-2 rad) within the step budget
and still met after the hold; **accuracy**, the top level's errors after the hold (medians);
**chatter**, the fraction of hold steps in which some joint oscillates: its velocity flips sign on
two steps in a row at more than 1e-3 [rad/s or m/s] (a smooth zero crossing of the posture's
slow self-motion does not count); **step**, median and p95 of the timed call, also in units of
one ``pin.computeFrameJacobian`` on the robot timed in the same run, and as a ratio to reljac's.
With collision avoidance, the smallest distance of the active pairs over every step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from ..collision import CollisionModel
from ..exceptions import URDFError
from ..relative import Kinematics
from ..robot import Robot
from .bench_common import Progress, done, frame_jacobian_call, middle
from .bench_peer_libs import (
    ADAPTERS,
    INFLUENCE,
    MIN_DISTANCE,
    PINK_BARRIER_PAIRS,
    PINK_POSTURE_COST,
    PINK_SECOND_COST,
    PINK_TOP_COST,
    PLACO_POSTURE_WEIGHT,
    PLACO_SECOND_WEIGHT,
    PLACO_TOP_WEIGHT,
    PeerFailure,
    Problem,
    missing_peers,
)
from .report import format_table

POSITION_TOL, ORIENTATION_TOL = 1e-3, 1e-2  # [m], [rad]: the top level is met below both
CHATTER_SPEED = 1e-3  # [rad/s or m/s]
DT, MAX_STEPS, HOLD = 0.01, 500, 50


@dataclass(frozen=True)
class Case:
    """A robot and how its problems are made: ``top`` frames (a, b), ``second`` frame or None,
    ``position_only`` (a pinch); ``fingers`` cycles frame a over these names when given;
    ``collision``: also run with collision avoidance (targets then drawn collision-free)."""

    name: str
    robot_name: str
    top: tuple[str, str]
    second: str | None
    position_only: bool = False
    fingers: tuple[str, ...] = ()
    collision: bool = True  # also run with collision avoidance


CASES = (
    Case("dual_arm (bundled, capsules)", "dual_arm", ("left_tool", "right_tool"), "left_tool"),
    Case("Baxter (example-robot-data, meshes, its SRDF)", "baxter", ("left_gripper", "right_gripper"),
         "left_gripper"),
    # no collision runs: the Allegro's links sit closer than 1 cm to each other at rest (palm to
    # thumb base 6 mm at mid-limits; no random configuration keeps its 185 default pairs 2 cm apart)
    Case("Allegro right hand, pinch (thumb tip in a finger tip)", "allegro_right_hand",
         ("link_3.0_tip", "link_15.0_tip"), None, True, ("link_3.0_tip", "link_7.0_tip", "link_11.0_tip"),
         collision=False),
)


def load(case: Case) -> Robot | None:
    """The case's robot, or None when it is not installed (example-robot-data)."""
    try:
        return Robot.bundled(case.robot_name) if case.robot_name == "dual_arm" else Robot.load(case.robot_name)
    except URDFError:
        return None


def make_problems(case: Case, robot: Robot, collision: CollisionModel | None, n: int,
                  seed: int = 2026) -> list[Problem]:
    """`n` targets from random configurations; with `collision`, from those whose active pairs are
    all at least twice the kept distance apart (at most 1000 n draws)."""
    rng = np.random.default_rng(seed)
    problems: list[Problem] = []
    for _ in range(1000 * n):
        if len(problems) == n:
            break
        q = robot.random_configuration(rng)
        if collision is not None and len(collision.distances(q, within=2 * MIN_DISTANCE, jacobians=False).distance):
            continue
        kin = Kinematics(robot, q)
        a = case.fingers[len(problems) % len(case.fingers)] if case.fingers else case.top[0]
        b = case.top[1]
        second = None if case.second is None else kin.placement(case.second)
        problems.append(Problem((a, b), kin.relative_placement(a, b), case.position_only, case.second, second,
                                middle(robot), q))
    if len(problems) < n:
        raise ValueError(f"{case.name}: only {len(problems)} of {1000 * n} random configurations keep every "
                         f"collision pair {2 * MIN_DISTANCE} m apart; {n} targets asked")
    return problems


def top_errors(robot: Robot, problem: Problem, q: np.ndarray) -> tuple[float, float]:
    """Position [m] and orientation [rad] errors of the top level at q (orientation 0 for a pinch)."""
    T = Kinematics(robot, q).relative_placement(*problem.top)
    position = float(np.linalg.norm(T.translation - problem.T_ab.translation))
    if problem.position_only:
        return position, 0.0
    return position, float(np.linalg.norm(pin.log3(problem.T_ab.rotation.T @ T.rotation)))


def chatter_steps(v: np.ndarray) -> np.ndarray:
    """(steps - 2,) bool: where some joint's velocity (rows of `v`, (steps, nv)) flips sign twice in
    a row (+ - + or - + -) at more than CHATTER_SPEED on all three steps: a two-step oscillation,
    not a smooth zero crossing."""
    fast = np.abs(v) > CHATTER_SPEED
    flip = fast[1:] & fast[:-1] & (v[1:] * v[:-1] < 0)  # (steps - 1, nv): step k-1 -> k reverses
    return (flip[1:] & flip[:-1]).any(axis=1)


def _second_met(robot: Robot, problem: Problem, q: np.ndarray) -> bool:
    if problem.second is None or problem.T_w2 is None:
        return True
    error = problem.T_w2.actInv(Kinematics(robot, q).placement(problem.second))
    return bool(np.linalg.norm(error.translation) < POSITION_TOL and np.linalg.norm(pin.log3(error.rotation))
                < ORIENTATION_TOL)


def _met(errors: tuple[float, float]) -> bool:
    return errors[0] < POSITION_TOL and errors[1] < ORIENTATION_TOL


def run_library(peer: Any, robot: Robot, problems: list[Problem], collision: CollisionModel | None, *,
                dt: float = DT, max_steps: int = MAX_STEPS, hold: int = HOLD, progress: Progress = None) -> dict:
    """Every problem with one library from the middle of the limits. Returns {``times`` (s, every
    timed step), ``episodes``: [{``q`` (nq,) after the hold, ``first`` (step the top level was first
    met, None if never), ``top_met``, ``second_met``, ``errors`` (m, rad), ``chatter`` (fraction of
    hold steps), ``failure`` (None or the library's message)}], ``min_distance`` [m] (inf without
    collision)}."""
    q0, times, episodes, closest = middle(robot), [], [], np.inf
    for problem in problems:
        peer.start(problem, q0)
        q, first, failure, second_met, n = q0, None, None, False, 0
        velocities = []
        try:
            while n < max_steps + hold:
                start = time.perf_counter()
                peer.step()
                elapsed = time.perf_counter() - start
                q_prev, q = q, peer.q()
                n += 1
                if collision is not None:
                    near = collision.distances(q, within=INFLUENCE, jacobians=False)
                    closest = min(closest, float(near.distance.min(initial=np.inf)))
                if first is not None and n > first and (second_met or n > max_steps):
                    velocities.append(pin.difference(robot.model, q_prev, q) / dt)
                    if len(velocities) == hold:
                        break
                    continue
                times.append(elapsed)
                if _met(top_errors(robot, problem, q)):
                    first = n if first is None else first
                    second_met = _second_met(robot, problem, q)
                elif n >= max_steps:
                    break
        except PeerFailure as e:
            failure = str(e)
        errors = top_errors(robot, problem, q)
        v = np.array(velocities).reshape(-1, robot.nv)
        flips = chatter_steps(v)
        episodes.append({"q": q, "first": first, "top_met": first is not None and _met(errors),
                         "second_met": second_met, "errors": errors,
                         "chatter": float(flips.mean()) if len(flips) else 0.0, "failure": failure})
        done(progress)
    return {"times": np.array(times), "episodes": episodes, "min_distance": closest}


def compare(case: Case, robot: Robot, *, targets: int, collision: bool, libraries: list[str] | None = None,
            dt: float = DT, max_steps: int = MAX_STEPS, hold: int = HOLD, progress: Progress = None) -> dict[str, Any]:
    """One case with each installed library (reljac first). Returns {``case``, ``robot``, ``nv``,
    ``collision``, ``pairs``, ``targets``, ``unit_s``, ``problems``, ``runs``: {library: the dict of
    :func:`run_library`}, ``failures``: {library: a setup failure}}. The libraries take turns
    target by target (each target's episode with every library before the next target), so that
    a change of the machine's load during the case falls on all of them alike."""
    model = CollisionModel(robot)
    problems = make_problems(case, robot, model if case.collision else None, targets)
    unit = frame_jacobian_call(robot)
    missing = missing_peers()
    peers, failures = {}, {}
    for name in libraries or list(ADAPTERS):
        if name in missing:
            continue
        try:
            peers[name] = ADAPTERS[name](robot, dt, model if collision else None)
        except PeerFailure as e:
            failures[name] = str(e)
    runs: dict[str, dict] = {name: {"times": [], "episodes": [], "min_distance": np.inf} for name in peers}
    for problem in problems:
        for name, peer in peers.items():
            one = run_library(peer, robot, [problem], model if collision else None, dt=dt, max_steps=max_steps,
                              hold=hold, progress=progress)
            run = runs[name]
            run["times"].append(one["times"])
            run["episodes"] += one["episodes"]
            run["min_distance"] = min(run["min_distance"], one["min_distance"])
    for run in runs.values():
        run["times"] = np.concatenate(run["times"]) if run["times"] else np.zeros(0)
    return {"case": case.name, "robot": robot.name, "nv": robot.nv, "collision": collision,
            "pairs": len(model.pairs) if collision else 0, "targets": targets, "unit_s": unit,
            "problems": problems, "runs": runs, "failures": failures}


def summary(r: dict[str, Any]) -> dict[str, Any]:
    """The numbers of :func:`compare` (JSON-ready): per library ``top_met``, ``second_met``
    (fractions), ``steps_median`` (to the top level, over its successes), ``step_median_s``,
    ``step_p95_s``, ``step_median_units``, ``ratio_to_reljac``, ``top_position_error_m`` and
    ``top_orientation_error_rad`` (medians after the hold), ``chatter``, ``failed_episodes``,
    ``min_distance_m`` (None without collision avoidance)."""
    rows = []
    reljac_median = float(np.median(r["runs"]["reljac"]["times"])) if "reljac" in r["runs"] else None
    for name, run in r["runs"].items():
        eps = run["episodes"]
        med = float(np.median(run["times"])) if len(run["times"]) else float("nan")
        firsts = [e["first"] for e in eps if e["top_met"]]
        rows.append({
            "library": name, "top_met": float(np.mean([e["top_met"] for e in eps])),
            "second_met": float(np.mean([e["second_met"] for e in eps])),
            "steps_median": float(np.median(firsts)) if firsts else None,
            "step_median_s": med, "step_p95_s": float(np.percentile(run["times"], 95)) if len(run["times"]) else med,
            "step_median_units": med / r["unit_s"],
            "ratio_to_reljac": med / reljac_median if reljac_median else None,
            "top_position_error_m": float(np.median([e["errors"][0] for e in eps])),
            "top_orientation_error_rad": float(np.median([e["errors"][1] for e in eps])),
            "chatter": float(np.mean([e["chatter"] for e in eps])),
            "failed_episodes": sum(e["failure"] is not None for e in eps),
            "min_distance_m": run["min_distance"] if r["collision"] else None})
    return {key: r[key] for key in ("case", "robot", "nv", "collision", "pairs", "targets", "unit_s")} | {
        "libraries": rows, "setup_failures": r["failures"]}


def peer_cases(quick: bool) -> list[tuple[Case, int]]:
    """(case, targets): dual_arm only when quick."""
    return [(CASES[0], 5)] if quick else [(c, 50) for c in CASES]


def _settings(case: Case) -> tuple[bool, ...]:
    """Without collision avoidance, and with it when the case runs it."""
    return (False, True) if case.collision else (False,)


def peers_units(*, quick: bool = False) -> int:
    """Units of work :func:`peers_results` reports: one per episode (target x library x setting)."""
    libraries = len(ADAPTERS) - len(missing_peers())
    return sum(len(_settings(case)) * n * libraries for case, n in peer_cases(quick))


def peers_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """Every case without and with collision avoidance: {``dt``, ``max_steps``, ``hold``,
    ``position_tolerance_m``, ``orientation_tolerance_rad``, ``skipped`` (one-line notes),
    ``cases``: [the dicts of :func:`summary`]}."""
    skipped = list(missing_peers().values())
    cases = []
    for case, n in peer_cases(quick):
        robot = load(case)
        if robot is None:
            skipped.append(f"{case.name}: robot '{case.robot_name}' not installed (pip install example-robot-data)")
            done(progress, len(_settings(case)) * n * (len(ADAPTERS) - len(missing_peers())))
            continue
        for collision in _settings(case):
            cases.append(summary(compare(case, robot, targets=n, collision=collision, progress=progress)))
    return {"dt": DT, "max_steps": MAX_STEPS, "hold": HOLD, "position_tolerance_m": POSITION_TOL,
            "orientation_tolerance_rad": ORIENTATION_TOL, "skipped": skipped, "cases": cases}


def _us(x: float | None) -> str:
    return "-" if x is None else f"{1e6 * x:.0f}"


def peers_text(r: dict[str, Any]) -> str:
    """The tables of :func:`peers_results`, one per case and collision setting."""
    out = [f"IK against the peer libraries: the same targets, limits and collision pairs handed to each; dt = "
           f"{r['dt']} s, task gains one per step (1/dt), start mid-limits, <= {r['max_steps']} steps, then "
           f"{r['hold']} at rest. success: top level < {1e3 * r['position_tolerance_m']:.0f} mm and "
           f"{r['orientation_tolerance_rad']} rad at the end; steps: to the top level (median of successes); "
           "top error: medians at the end; chatter: hold steps with a joint's velocity flipping sign twice in a "
           "row at > 1e-3 /s; / unit: step median in pin.computeFrameJacobian calls timed in the same run.\n"
           f"reljac: strict levels (top > second > posture). PlaCo: one weighted QP (qpmad), all 'soft', "
           f"weights {PLACO_TOP_WEIGHT:g} / {PLACO_SECOND_WEIGHT:g} / {PLACO_POSTURE_WEIGHT:g}; its self-collision "
           f"constraint hard. pink: one weighted QP (daqp), costs {PINK_TOP_COST:g} / {PINK_SECOND_COST:g} / "
           f"{PINK_POSTURE_COST:g}; its SelfCollisionBarrier on the {PINK_BARRIER_PAIRS} closest pairs "
           "(reljac.apps.bench_peer_libs says more)"]
    out += [f"note: {note}" for note in r["skipped"]]
    for c in r["cases"]:
        title = (f"{c['case']} (nv={c['nv']}), {c['targets']} targets, "
                 + (f"collision avoidance on {c['pairs']} pairs (min {1e3 * MIN_DISTANCE:.0f} mm)" if c["collision"]
                    else "no collision avoidance")
                 + f"; unit: one pin.computeFrameJacobian = {1e6 * c['unit_s']:.2f} us")
        rows = []
        for x in c["libraries"]:
            rows.append((x["library"], f"{100 * x['top_met']:.0f} %", f"{100 * x['second_met']:.0f} %",
                         "-" if x["steps_median"] is None else f"{x['steps_median']:.0f}",
                         f"{_us(x['step_median_s'])} / {_us(x['step_p95_s'])}", f"{x['step_median_units']:.0f}",
                         "-" if x["ratio_to_reljac"] is None else f"{x['ratio_to_reljac']:.2f}",
                         f"{1e3 * x['top_position_error_m']:.3f} / {1e3 * x['top_orientation_error_rad']:.3f}",
                         f"{100 * x['chatter']:.1f} %", x["failed_episodes"],
                         "-" if x["min_distance_m"] is None else f"{1e3 * x['min_distance_m']:.1f}"))
        for name, why in c["setup_failures"].items():
            rows.append((name, why, "", "", "", "", "", "", "", "", ""))
        out.append(title + "\n" + format_table(
            ["library", "top met", "second met", "steps", "step med / p95 [us]", "/ unit", "/ reljac",
             "top error [mm / mrad]", "chatter", "failed", "min dist [mm]"], rows))
    return "\n\n".join(out)

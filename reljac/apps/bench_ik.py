"""``reljac bench ik``: the controller on the peers' protocol, compiled against Python, and chatter.

Protocol (as the IK libraries it is compared with are run): bundled ``dual_arm``, reachable
targets drawn from random configurations, levels relative pose > left-tool pose > posture, a task
gain of one per step (gain = 1/dt, so the velocity limits bind on nearly every step), start at
the middle of the joint limits. Every time is also given as a multiple of one
``pin.computeFrameJacobian`` call timed in the same run.

:func:`ik_results` measures every table into a dict of numbers (the ``--json`` form, times in
seconds), :func:`ik_text` formats it; `progress` hooks are called with the units of work just
done (:func:`ik_units` counts them: one per target, episode, pinch or NLP target).
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
import pinocchio as pin

from ..ik import Controller, FrameTask, PostureTask, RelativeFrameTask, RelativePositionTask, compiled_available
from ..ik.hierarchy import DampingPolicy
from ..relative import Kinematics, relative_jacobian
from ..report import format_table
from ..robot import Robot

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
PAIR = ("left_tool", "right_tool")


def median_seconds(fn, *, runs: int = 200, inner: int = 20) -> float:
    """Median over `runs` samples of the mean time of `inner` back-to-back calls [s]."""
    fn()
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
    return robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))


def dual_arm_levels(robot: Robot, q_target: np.ndarray, gain: float, q_rest: np.ndarray):
    kin = Kinematics(robot, q_target)
    rel = RelativeFrameTask(*PAIR, gain=gain)
    rel.set_target(kin.relative_placement(*PAIR))
    left = FrameTask("left_tool", gain=gain)
    left.set_target(kin.placement("left_tool"))
    posture = PostureTask(robot, gain=1.0, weight=0.1)
    posture.set_target(q_rest)
    return [[rel], [left], [posture]]


def _met(task, kin) -> bool:
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


def _done(progress: Callable[[int], object] | None) -> None:
    if progress is not None:
        progress(1)


def run_targets(robot: Robot, targets, *, backend: str, dt: float, max_steps: int,
                progress: Callable[[int], object] | None = None) -> dict:
    """Each target from the middle of the limits until the top level is met (or max_steps)."""
    q_mid = middle(robot)
    times, steps, top, second = [], [], 0, 0
    limits = _Limits(robot, dt)
    for q_target in targets:
        levels = dual_arm_levels(robot, q_target, 1.0 / dt, q_mid)
        controller = Controller(robot, levels, dt=dt, backend=backend)
        q, n = q_mid, 0
        while n < max_steps:
            start = time.perf_counter()
            q_next = controller.step(q)
            times.append(time.perf_counter() - start)
            limits.check(q, q_next)
            q, n = q_next, n + 1
            if _met(levels[0][0], controller.last_kinematics):
                break
        kin = Kinematics(robot, q)
        top += _met(levels[0][0], kin)
        second += _met(levels[1][0], kin)
        steps.append(n)
        _done(progress)
    return {"top": top / len(targets), "second": second / len(targets), "steps": np.array(steps),
            "times": np.array(times), "crossings": limits.crossings}


def chatter_fraction(robot: Robot, episodes: int, *, dt: float, steps: int = 300,
                     progress: Callable[[int], object] | None = None, **options) -> float:
    """Unreachable relative targets with one-step gains: over the last 100 steps of each episode,
    the fraction of steps in which some joint's velocity changes sign at more than half its limit."""
    rng = np.random.default_rng(7)
    q_mid, vmax = middle(robot), robot.velocity_limits
    flips = []
    for _ in range(episodes):
        levels = dual_arm_levels(robot, robot.random_configuration(rng), 1.0 / dt, q_mid)
        far = pin.SE3(pin.exp3(rng.normal(size=3)), np.array([0.0, 2.5, 0.0]) + 0.5 * rng.normal(size=3))
        levels[0][0].set_target(far)  # the hands cannot be 2.5 m apart
        controller = Controller(robot, levels, dt=dt, **options)
        q, velocities = q_mid, []
        for _ in range(steps):
            q_next = controller.step(q)
            velocities.append(pin.difference(robot.model, q, q_next) / dt)
            q = q_next
        v = np.array(velocities[-101:])
        fast = np.abs(v) > 0.5 * vmax
        flips.append((fast[1:] & fast[:-1] & (v[1:] * v[:-1] < 0)).any(axis=1).mean())
        _done(progress)
    return float(np.mean(flips))


def _protocol_sizes(quick: bool) -> tuple[int, int]:
    return (10 if quick else 100), (3 if quick else 20)  # targets, chatter episodes


def _backends() -> list[str]:
    return (["compiled"] if compiled_available() else []) + ["python"]


def protocol_results(*, quick: bool = False, progress: Callable[[int], object] | None = None) -> dict[str, Any]:
    """The protocol on dual_arm, per solver. Returns {``robot``, ``nv``, ``targets``, ``dt`` [s],
    ``gain`` [1/s], ``max_steps``, ``unit_s`` (one computeFrameJacobian [s]), ``solvers``: [{``solver``,
    ``top_level_met`` and ``second_met`` (fractions of targets), ``steps_median``, ``steps_p95``,
    ``step_median_s``, ``step_p95_s``, ``step_median_units``, ``step_p95_units``,
    ``steps_crossing_a_limit``, ``chatter`` (fraction of steps)}], ``chatter_without_anti_chatter``,
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
    medians = {s["solver"]: s["step_median_s"] for s in solvers}
    return {"robot": robot.name, "nv": robot.nv, "targets": n, "dt": dt, "gain": 1 / dt, "max_steps": max_steps,
            "unit_s": unit, "solvers": solvers, "chatter_without_anti_chatter": old,
            "compiled_speedup": medians["python"] / medians["compiled"] if len(medians) == 2 else None}


def protocol_text(r: dict[str, Any]) -> str:
    rows = [(s["solver"], f"{100 * s['top_level_met']:.0f} %", f"{100 * s['second_met']:.0f} %",
             f"{s['steps_median']:.0f} / {s['steps_p95']:.0f}",
             f"{1e6 * s['step_median_s']:.0f} / {1e6 * s['step_p95_s']:.0f}",
             f"{s['step_median_units']:.0f} / {s['step_p95_units']:.0f}",
             s["steps_crossing_a_limit"], f"{100 * s['chatter']:.1f} %") for s in r["solvers"]]
    rows.append(("(no anti-chatter, no error damping)", "", "", "", "", "", "",
                 f"{100 * r['chatter_without_anti_chatter']:.1f} %"))
    title = (f"IK on {r['robot']} (nv={r['nv']}): {r['targets']} reachable targets, levels relative pose > "
             f"left_tool pose > posture, gain = 1/dt = {r['gain']:.0f} [1/s], start mid-limits, <= {r['max_steps']} "
             f"steps; success: error < 1 mm and 1e-2 rad; unit: one pin.computeFrameJacobian = "
             f"{1e6 * r['unit_s']:.2f} us")
    table = format_table(["solver", "top level met", "second met", "steps med / p95", "step med / p95 [us]",
                          "step / unit med / p95", "steps crossing a limit", "chatter"], rows)
    if r["compiled_speedup"] is not None:
        table += f"\ncompiled step {r['compiled_speedup']:.1f}x faster than the Python solver's"
    return title + "\n" + table


def protocol_table(*, quick: bool = False) -> str:
    return protocol_text(protocol_results(quick=quick))


def _panda_files():
    """example-robot-data's Panda URDF, its SRDF and the folder of package:// meshes, or None."""
    import sys
    from pathlib import Path

    for entry in sys.path:
        root = Path(entry) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        urdf = root / "panda_description" / "urdf" / "panda.urdf"
        if urdf.is_file():
            return urdf, root / "panda_description" / "srdf" / "panda.srdf", root
    return None


def _example_panda():
    """example-robot-data's Panda with its SRDF, or (None, None) when it is not installed."""
    files = _panda_files()
    if files is None:
        return None, None
    urdf, srdf, root = files
    return Robot.from_urdf(urdf, package_dirs=[root.parent.parent, root.parent]), srdf


def _step_times(robot: Robot, episodes, constraints_for, *, dt: float, steps: int,
                progress: Callable[[int], object] | None = None) -> np.ndarray:
    times = []
    for levels, q in episodes:
        controller = Controller(robot, levels, dt=dt, constraints=constraints_for())
        for _ in range(steps):
            start = time.perf_counter()
            q = controller.step(q)
            times.append(time.perf_counter() - start)
        _done(progress)
    return np.array(times)


def _collision_episodes(quick: bool) -> int:
    return 5 if quick else 30


def collision_results(*, quick: bool = False, progress: Callable[[int], object] | None = None) -> dict[str, Any]:
    """Step time with collision avoidance on against the same runs without it: {``dt`` [s],
    ``episodes``, ``steps``, ``cases``: [{``case``, ``active_pairs``, ``without_s`` and ``with_s``
    (median step [s]), ``added`` (with / without - 1)}]} (panda only when example-robot-data is
    installed)."""
    from ..collision import CollisionModel
    from ..ik import CollisionAvoidance

    dt, n, steps = 0.01, _collision_episodes(quick), 100
    robot = Robot.bundled("dual_arm")
    rng = np.random.default_rng(2026)
    model = CollisionModel(robot)
    episodes = [(dual_arm_levels(robot, robot.random_configuration(rng), 1.0 / dt, middle(robot)), middle(robot))
                for _ in range(n)]
    cases = [("dual_arm (capsules), protocol targets", robot, episodes, model)]
    panda, srdf = _example_panda()
    if panda is not None:
        hand = "panda_hand" if "panda_hand" in panda.frame_names else panda.frame_names[-1]
        panda_model = CollisionModel(panda, srdf=srdf)
        panda_episodes = []
        for _ in range(n):
            task = FrameTask(hand, gain=1.0 / dt)
            task.set_target(Kinematics(panda, panda.random_configuration(rng)).placement(hand))
            panda_episodes.append(([[task], [PostureTask(panda, gain=1.0, weight=0.1)]], middle(panda)))
        cases.append(("panda (meshes, its SRDF), random targets", panda, panda_episodes, panda_model))
    rows = []
    for name, robot_, eps, cm in cases:
        off = float(np.median(_step_times(robot_, eps, list, dt=dt, steps=steps, progress=progress)))
        on = float(np.median(_step_times(robot_, eps, lambda: [CollisionAvoidance(robot_, model=cm)], dt=dt,
                                         steps=steps, progress=progress)))
        rows.append({"case": name, "active_pairs": len(cm.pairs), "without_s": off, "with_s": on,
                     "added": on / off - 1})
    return {"dt": dt, "episodes": n, "steps": steps, "cases": rows}


def collision_text(r: dict[str, Any]) -> str:
    rows = [(c["case"], f"{c['active_pairs']}", f"{1e6 * c['without_s']:.0f}", f"{1e6 * c['with_s']:.0f}",
             f"{100 * c['added']:+.0f} %") for c in r["cases"]]
    return ("controller step with collision avoidance (min 1 cm, influence 5 cm) against the same runs without "
            f"it, gain = 1/dt, {r['episodes']} episodes x {r['steps']} steps, medians\n"
            + format_table(["robot / runs", "active pairs", "without [us]", "with [us]", "added"], rows))


def collision_table(*, quick: bool = False) -> str:
    """Step time with collision avoidance on against the same runs without it."""
    return collision_text(collision_results(quick=quick))


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


def relative_table() -> str:
    """relative_jacobian and Kinematics per pair, in units of one computeFrameJacobian call."""
    return relative_text(relative_results())


def _hand_pinches(quick: bool) -> int:
    return 10 if quick else 100


def hand_results(*, quick: bool = False, progress: Callable[[int], object] | None = None) -> dict[str, Any]:
    """Pinches on the hand: {``pinches``, ``success`` (fraction), ``steps_median``, ``steps_p95``,
    ``step_median_s``, ``step_median_units``, ``unit_s``}."""
    hand = Robot.bundled("hand")
    n, dt = _hand_pinches(quick), 0.01
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
        for k in range(500):
            start = time.perf_counter()
            q = controller.step(q)
            times.append(time.perf_counter() - start)
            if pinch.error_norms(controller.last_kinematics)["position"] < 1e-3:
                ok += 1
                break
        steps.append(k + 1)
        _done(progress)
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


def hand_table(*, quick: bool = False) -> str:
    return hand_text(hand_results(quick=quick))


def _nlp_targets(quick: bool) -> int:
    return 5 if quick else 20


def nlp_results(*, quick: bool = False, progress: Callable[[int], object] | None = None) -> dict[str, Any]:
    """solve vs solve_nlp: {``targets``, ``rows``: [{``problem``, ``solver``, ``success_rate``,
    ``median_time_s``}]}. One target at a time from one shared generator: the same targets
    and figures as ``nlp_bench_rows(n_targets, seed=0)``."""
    from ..ik.nlp import nlp_bench_rows

    n, rng = _nlp_targets(quick), np.random.default_rng(0)
    runs: dict[str, list[tuple[float, float]]] = {}
    for _ in range(n):
        for name, ok, t in nlp_bench_rows(n_targets=1, seed=rng):
            runs.setdefault(name, []).append((ok, t))
        _done(progress)
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


def ik_units(*, quick: bool = False) -> int:
    """Units of work :func:`ik_results` reports: targets and chatter episodes per solver, the
    episodes without anti-chatter, collision episodes (off and on, per robot), the relative
    table, the pinches and the NLP targets."""
    targets, episodes = _protocol_sizes(quick)
    collision = 2 * _collision_episodes(quick) * (1 + (_panda_files() is not None))
    return (len(_backends()) * (targets + episodes) + episodes + collision + 1 + _hand_pinches(quick)
            + _nlp_targets(quick))


def ik_results(*, quick: bool = False, progress: Callable[[int], object] | None = None) -> dict[str, Any]:
    """Every IK measurement of ``reljac bench ik``: {``protocol``, ``collision``, ``relative``,
    ``hand``, ``nlp``}, the dicts of :func:`protocol_results`, :func:`collision_results`,
    :func:`relative_results`, :func:`hand_results` and :func:`nlp_results`."""
    out = {"protocol": protocol_results(quick=quick, progress=progress),
           "collision": collision_results(quick=quick, progress=progress), "relative": relative_results()}
    _done(progress)
    out["hand"] = hand_results(quick=quick, progress=progress)
    out["nlp"] = nlp_results(quick=quick, progress=progress)
    return out


def ik_text(r: dict[str, Any]) -> str:
    """The tables of :func:`ik_results`."""
    return "\n\n".join([protocol_text(r["protocol"]), collision_text(r["collision"]), relative_text(r["relative"]),
                        hand_text(r["hand"]), nlp_text(r["nlp"])])


def ik_tables(*, quick: bool = False) -> str:
    """All IK tables of ``reljac bench ik``."""
    return ik_text(ik_results(quick=quick))

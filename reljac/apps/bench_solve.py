"""``reljac bench solve``: IK that finds a pose, on TRAC-IK's protocol (its README), with ``--peers``
beside TRAC-IK itself (``pytracik``), pink and ikpy on the same targets in the same run.

Protocol: targets are the placements of random configurations inside the joint limits (so every
target is reachable), the full pose at tol = 1e-5 [m, rad], every query seeded at the middle of
the joint limits, a time budget of 5 ms per query; times include the unsuccessful queries.
Per chain: **within budget**, the share solved within the budget (wall clock of the call, from
Python); **at all**, the share a search without time limit (50 restarts) converges on; the mean,
median, p95 and p99 of the call's wall time. reljac's queries run a :class:`~reljac.ik.Solver`
set up once per chain (as TRAC-IK's solver is made once), one target after the other, seed i.

Also a dual-arm problem with relative targets (the right tool in the left tool's frame at level 1,
the left tool in the world at level 2, a posture below: budget 10 ms) and a humanoid with balance
(Talos: feet held, the centre of mass inside the support polygon, a hand reaching: budget 20 ms).
``solve_many`` on every core is timed against one core on the first chain (medians of 9 runs each),
beside the machine's own scaling on as many threads (Pinocchio's kinematics of the chain, compiled:
a shared machine's second core may give less than 2x to any program).
**Budget kept**: the first chain's targets moved 3 m away (out of reach: every query ends on its
budget), the call's wall time against the 5 ms budget (median, p99, max). **With a thread holding
the GIL** beside it (30 ms in one C call, 0.1 s apart): Panda's chain, one Solver reused, the share
within budget of all queries and of those no hold overlapped (a query a hold overlaps waits for
the GIL; the ones after it must not pay for it). ``--collision``: collision-free poses
(:mod:`reljac.apps.bench_solve_collision`).

The peers (``--peers``, :mod:`reljac.apps.bench_solve_peers`, each seeded at the same middle
configuration; how each is configured is printed under the table): TRAC-IK,
``solver_type="Speed"``, its default, the same timeout and epsilon 1e-5 (its own per-axis
criterion), the joint limits handed over from Pinocchio (its URDF parser misreads some); pink,
what a Pinocchio user would otherwise iterate, its "at all" its within-budget figure; ikpy, its
chain built along the URDF's links from base to tip and checked against Pinocchio's forward
kinematics, run without a time limit (it has none), its success checked by reljac at 1e-5.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import pinocchio as pin

from ..ik import FrameTask, PostureTask, RelativeFrameTask, Solver
from ..relative import Kinematics
from ..robot import Robot
from .bench_common import PAIR, Progress, done
from .bench_solve_peers import CONFIGURED, chain_joints, run_ikpy, run_pink, run_tracik, stats
from .report import format_table

TOL, BUDGET = 1e-5, 0.005
GIL_HOLD, GIL_EVERY = 0.030, 0.1  # [s] gil_results: a thread holds the GIL this long, after each this long
MANY_RUNS = 9  # solve_many timings of each kind (one lasts about 0.1 s on 1,000 problems: a median of many)
REFERENCE_CONFIGS = 40_000  # the machine's scaling: kinematics per 1,000 problems of solve_many (~0.06 s)
#: (robot by name, base frame, tip frame)
CHAINS = [("ur5", "base_link", "tool0"), ("panda", "panda_link0", "panda_hand"),
          ("kinova", "j2s6s200_link_base", "j2s6s200_end_effector"), ("xarm7", "link_base", "link_eef")]


def _targets(robot: Robot, base: str, tip: str, n: int, seed: int) -> list[pin.SE3]:
    rng = np.random.default_rng(seed)
    return [Kinematics(robot, robot.random_configuration(rng)).relative_placement(base, tip) for _ in range(n)]


def _run_reljac(solver: Solver, targets: list[Any], task: Any, q0: np.ndarray, budget: float,
                patient: Solver) -> dict[str, Any]:
    times, ok, at_all = [], [], []
    for i, T in enumerate(targets):
        task.set_target(T)
        start = time.perf_counter()
        result = solver.solve(q0, seed=i)
        times.append(time.perf_counter() - start)
        ok.append(result.converged)
        at_all.append(result.converged or patient.solve(q0, seed=i).converged)
    return stats(times, ok, at_all, budget)


def chain_results(name: str, base: str, tip: str, n: int, peers: bool) -> dict[str, Any]:
    robot = Robot.load(name)
    targets = _targets(robot, base, tip, n, seed=2026)
    task = RelativeFrameTask(base, tip)
    task.set_target(targets[0])
    solver = Solver(robot, [[task]], tol=TOL, timeout=BUDGET)
    patient = Solver(robot, [[task]], tol=TOL, restarts=50)
    q0 = solver.middle
    out: dict[str, Any] = {"chain": f"{name} {base}->{tip}", "dof": len(chain_joints(robot, base, tip)),
                           "reljac": _run_reljac(solver, targets, task, q0, BUDGET, patient)}
    if peers:
        out["trac_ik"] = run_tracik(robot, name, base, tip, targets, q0, BUDGET)
        out["pink"] = run_pink(robot, base, tip, targets, q0, BUDGET)
        out["ikpy"] = run_ikpy(robot, name, base, tip, targets, q0, BUDGET)
    return out


def dual_arm_results(n: int, budget: float = 0.010) -> dict[str, Any]:
    """The right tool in the left tool's frame (level 1), the left tool in the world (level 2), a
    posture toward the middle of the limits below; targets from random configurations."""
    robot = Robot.bundled("dual_arm")
    rel, left = RelativeFrameTask(*PAIR, name="relative"), FrameTask(PAIR[0], name="left")
    posture = PostureTask(robot, weight=0.1)
    rng = np.random.default_rng(11)
    kins = [Kinematics(robot, robot.random_configuration(rng)) for _ in range(n)]
    rel.set_target(kins[0].relative_placement(*PAIR))
    left.set_target(kins[0].placement(PAIR[0]))
    levels = [[rel], [left], [posture]]
    solver = Solver(robot, levels, tol=TOL, timeout=budget)
    posture.set_target(solver.middle)
    patient = Solver(robot, levels, tol=TOL, restarts=50)
    times, ok, at_all = [], [], []
    for i, kin in enumerate(kins):
        rel.set_target(kin.relative_placement(*PAIR))
        left.set_target(kin.placement(PAIR[0]))
        start = time.perf_counter()
        result = solver.solve(solver.middle, seed=i)
        times.append(time.perf_counter() - start)
        ok.append(result.converged)
        at_all.append(result.converged or patient.solve(solver.middle, seed=i).converged)
    return {"case": "dual_arm: relative pose > left pose > posture", "budget_s": budget,
            **stats(times, ok, at_all, budget)}


def humanoid_results(n: int, budget: float = 0.020) -> dict[str, Any]:
    """Talos: feet held (level 1), the left gripper's position (level 2), posture; the support
    region held above every level. Success: converged within the budget with the centre of mass
    inside the support polygon shrunk by the margin (to 1 mm)."""
    from ..ik import humanoid_stack
    from .balance_demo import FEET, LEFT, MARGIN, POSITION

    robot = Robot.load("talos")
    q0 = robot.reference_configuration()
    standing = humanoid_stack(robot, q0, feet=FEET, margin=MARGIN, com_priority="none")
    hand = FrameTask(LEFT, weight=POSITION, name="left gripper")
    arm = [robot.model.joints[robot.model.getJointId(f"arm_left_{k}_joint")].idx_q for k in range(1, 5)]
    rng = np.random.default_rng(5)
    targets = []
    for _ in range(n):
        q = q0.copy()
        q[arm] = rng.uniform(robot.lower_limits[arm], robot.upper_limits[arm])
        targets.append(Kinematics(robot, q).placement(LEFT))
    hand.set_target(targets[0])
    levels = [standing.levels[0], [hand], *standing.levels[1:]]
    solver = Solver(robot, levels, tol=1e-4, timeout=budget, constraints=standing.constraints)
    times, ok = [], []
    for i, T in enumerate(targets):
        hand.set_target(T)
        start = time.perf_counter()
        result = solver.solve(q0, seed=i)
        times.append(time.perf_counter() - start)
        kin = Kinematics(robot, result.q)
        balanced = standing.support.polygon(kin).contains(kin.center_of_mass(), margin=MARGIN - 1e-3)
        ok.append(result.converged and balanced)
    return {"case": "Talos: feet > left gripper position > posture, support region held", "budget_s": budget,
            **stats(times, ok, ok, budget)}


def gil_results(n: int) -> dict[str, Any]:
    """TRAC-IK's protocol on Panda's chain, one Solver reused, with a thread beside it that takes the
    GIL GIL_EVERY seconds after each hold and holds it for GIL_HOLD in one C call (a garbage collection,
    another library's work): {``queries``, ``within_budget`` (all), ``disturbed`` (queries a hold
    overlapped: they wait for the GIL), ``within_budget_undisturbed``, ``median_s``, ``p99_s``}."""
    import threading

    name, base, tip = CHAINS[1]
    robot = Robot.load(name)
    targets = _targets(robot, base, tip, n, seed=2026)
    task = RelativeFrameTask(base, tip)
    task.set_target(targets[0])
    solver = Solver(robot, [[task]], tol=TOL, timeout=BUDGET)
    start = time.perf_counter()
    sum(range(1_000_000))  # one C call that never lets the GIL go: its speed here
    count = int(1_000_000 * GIL_HOLD / (time.perf_counter() - start))
    holds: list[tuple[float, float]] = []
    stop = threading.Event()

    def hold() -> None:
        while not stop.wait(GIL_EVERY):
            began = time.perf_counter()
            sum(range(count))
            holds.append((began, time.perf_counter()))

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    spans, ok = [], []
    try:
        for i, T in enumerate(targets):
            task.set_target(T)
            began = time.perf_counter()
            ok.append(solver.solve(None, seed=i).converged)
            spans.append((began, time.perf_counter()))
    finally:
        stop.set()
        holder.join()
    times = np.array([b - a for a, b in spans])
    within = np.array(ok) & (times <= BUDGET)
    disturbed = np.array([any(a < h1 and h0 < b for h0, h1 in holds) for a, b in spans])
    return {"queries": n, "hold_s": GIL_HOLD, "every_s": GIL_EVERY, "holds": len(holds),
            "within_budget": float(within.mean()), "disturbed": int(disturbed.sum()),
            "within_budget_undisturbed": float(within[~disturbed].mean()) if (~disturbed).any() else None,
            "median_s": float(np.median(times)), "p99_s": float(np.percentile(times, 99))}


def budget_results(n: int) -> dict[str, Any]:
    """The wall time of `n` queries that end on their BUDGET (the first chain's targets 3 m out of
    reach), one Solver: {``queries``, ``budget_s``, ``reasons``, ``median_s``, ``p99_s``, ``max_s``},
    and the machine's own tail, interleaved with them (``clock_p99_s``, ``clock_max_s``: a loop
    that does nothing but watch the clock for the budget, late only when the machine preempts it)."""
    name, base, tip = CHAINS[0]
    robot = Robot.load(name)
    task = RelativeFrameTask(base, tip)
    solver = Solver(robot, [[task]], tol=TOL, timeout=BUDGET)
    times, clock, reasons = [], [], set()
    for i, T in enumerate(_targets(robot, base, tip, n, seed=5)):
        task.set_target(pin.SE3(T.rotation, T.translation + np.array([3.0, 0.0, 0.0])))
        start = time.perf_counter()
        reasons.add(solver.solve(None, seed=i).reason)
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        while time.perf_counter() - start < BUDGET:
            pass
        clock.append(time.perf_counter() - start)
    return {"queries": n, "budget_s": BUDGET, "reasons": sorted(reasons), "median_s": float(np.median(times)),
            "p99_s": float(np.percentile(times, 99)), "max_s": float(np.max(times)),
            "clock_p99_s": float(np.percentile(clock, 99)), "clock_max_s": float(np.max(clock))}


def many_results(n: int) -> dict[str, Any]:
    """solve_many on every core against one core, on the first chain's targets (no timeout): the
    median of MANY_RUNS runs of each, interleaved with the machine's own scaling on the same
    threads (``reference_speedup``: Pinocchio's kinematics of the chain, compiled, on
    REFERENCE_CONFIGS configurations per 1,000 problems split across C++ threads; None without
    the compiled core)
    and ``efficiency``, the speedup over the reference's."""
    name, base, tip = CHAINS[0]
    robot = Robot.load(name)
    targets = _targets(robot, base, tip, n, seed=7)
    task = RelativeFrameTask(base, tip)
    task.set_target(targets[0])
    solver = Solver(robot, [[task]], tol=TOL, restarts=20)
    cores = os.cpu_count() or 1
    Q = _reference_configurations(robot, n) if solver.compiled else None
    seconds: dict[int, list[float]] = {1: [], cores: []}
    reference: dict[int, list[float]] = {1: [], cores: []}
    for _ in range(MANY_RUNS):  # interleaved: a change of load falls on both
        for workers, runs in seconds.items():
            start = time.perf_counter()
            solver.solve_many(None, targets, workers=workers, progress=False)
            runs.append(time.perf_counter() - start)
            if Q is not None:
                reference[workers].append(_reference_seconds(robot, base, tip, Q, workers))
    one, all_ = float(np.median(seconds[1])), float(np.median(seconds[cores]))
    ref = float(np.median(reference[1]) / np.median(reference[cores])) if Q is not None else None
    return {"problems": n, "cores": cores, "one_core_per_s": n / one, "all_cores_per_s": n / all_,
            "speedup": one / all_, "reference_speedup": ref, "efficiency": None if ref is None else one / all_ / ref}


def _reference_configurations(robot: Robot, n: int) -> np.ndarray:
    """(REFERENCE_CONFIGS * n / 1000, nq) random configurations: as many per problem of solve_many's `n`."""
    rng = np.random.default_rng(11)
    return np.array([robot.random_configuration(rng) for _ in range(max(REFERENCE_CONFIGS * n // 1000, 1))])


def _reference_seconds(robot: Robot, base: str, tip: str, Q: np.ndarray, workers: int) -> float:
    """Wall time [s] of T_ab and J_ab at every row of Q (the core's PairKinematics on Pinocchio's
    computeJointJacobians, the rows split across `workers` C++ threads)."""
    from ..ik.solvers.backend import core

    return float(core().threaded_kinematics_seconds(robot.model, robot.frame_id(base), robot.frame_id(tip), Q,
                                                    workers))


def solve_results(*, quick: bool = False, progress: Progress = None, peers: bool = False) -> dict[str, Any]:
    """The measurements of ``reljac bench solve`` (times in seconds)."""
    n = 20 if quick else 200
    chains = []
    for name, base, tip in CHAINS:
        chains.append(chain_results(name, base, tip, n, peers))
        done(progress)
    cases = [dual_arm_results(10 if quick else 600)]
    done(progress)
    cases.append(humanoid_results(5 if quick else 50))
    done(progress)
    many = many_results(64 if quick else 1000)
    budget = budget_results(10 if quick else 300)
    done(progress)
    gil = gil_results(300 if quick else 3000)  # (about 0.1 and 1 s of queries: holds fall among them)
    done(progress)
    configured = {who: CONFIGURED[who] for who in CONFIGURED if any(c.get(who) is not None for c in chains)}
    return {"tol": TOL, "budget_s": BUDGET, "chains": chains, "cases": cases, "solve_many": many,
            "budget_kept": budget, "gil": gil, "peers": configured}


def solve_units(quick: bool = False) -> int:
    return len(CHAINS) + 4


def solve_text(r: dict[str, Any]) -> str:
    rows, notes = [], []
    for c in r["chains"]:
        for who in ("reljac", "trac_ik", "pink", "ikpy"):
            s = c.get(who)
            if s is None:
                continue
            if "note" in s:
                notes.append(f"  {who} on {c['chain']}: {s['note']}")
            if "error" in s:
                rows.append([c["chain"], c["dof"], who, s["error"], "", "", "", "", ""])
                continue
            rows.append([c["chain"], c["dof"], who, f"{100 * s['within_budget']:.1f} %", f"{100 * s['at_all']:.1f} %",
                         1e3 * s["mean_s"], 1e3 * s["median_s"], 1e3 * s["p95_s"], 1e3 * s["p99_s"]])
    m, b, g = r["solve_many"], r.get("budget_kept"), r.get("gil")
    cases = [[c["case"], f"{1e3 * c['budget_s']:g} ms", f"{100 * c['within_budget']:.1f} %",
              f"{100 * c['at_all']:.1f} %", 1e3 * c["mean_s"], 1e3 * c["median_s"], 1e3 * c["p95_s"]]
             for c in r["cases"]]
    return "\n".join([
        f"IK that finds a pose: TRAC-IK's protocol (random reachable targets, full pose at {r['tol']:g}, seeded "
        f"at the middle of the limits, {1e3 * r['budget_s']:g} ms budget)",
        format_table(["chain", "dof", "solver", "within budget", "at all", "mean [ms]", "median [ms]", "p95 [ms]",
                      "p99 [ms]"], rows),
        "",
        format_table(["problem", "budget", "within budget", "at all", "mean [ms]", "median [ms]", "p95 [ms]"], cases),
        "",
        f"solve_many, {m['problems']} problems: {m['one_core_per_s']:.0f}/s on one core, "
        f"{m['all_cores_per_s']:.0f}/s on {m['cores']} ({m['speedup']:.2f}x)" + (
            f"; the machine's own scaling, Pinocchio's kinematics on the same threads: {m['reference_speedup']:.2f}x "
            f"(solve_many at {100 * m['efficiency']:.0f} % of it)" if m.get("reference_speedup") else ""),
        *([f"budget kept, {b['queries']} queries out of reach ({', '.join(b['reasons'])}): wall time median "
           f"{1e3 * b['median_s']:.3f} ms, p99 {1e3 * b['p99_s']:.3f} ms, max {1e3 * b['max_s']:.3f} ms "
           f"(budget {1e3 * b['budget_s']:g} ms)" + (
               f"; a loop only watching the clock for the budget, interleaved: p99 {1e3 * b['clock_p99_s']:.3f} ms, "
               f"max {1e3 * b['clock_max_s']:.3f} ms (the machine's preemptions)" if "clock_p99_s" in b else "")]
          if b else []),  # (runs stored before it had none)
        *([f"with a thread holding the GIL for {1e3 * g['hold_s']:g} ms, {g['every_s']:g} s apart, beside it "
           f"({g['holds']} holds), Panda, one Solver: {100 * g['within_budget']:.1f} % within budget; "
           f"{g['disturbed']} of {g['queries']} queries overlapped a hold (they wait for the GIL), "
           f"{100 * (g['within_budget_undisturbed'] or 0):.1f} % of the others within budget; "
           f"median {1e3 * g['median_s']:.3f} ms, p99 {1e3 * g['p99_s']:.3f} ms"] if g else []),
        *(["", "peers, as configured:", *(f"  {text}" for text in r.get("peers", {}).values()), *notes]
          if r.get("peers") else []),
    ])

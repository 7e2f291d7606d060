"""``reljac bench solve --collision [--peers]``: collision-free poses within a budget.

Protocol (issue 42): two cases, each on targets reached at random configurations that keep every
pair of the collision model at least ``MIN_DISTANCE + CLEARANCE`` apart (so a collision-free
answer exists), the full pose at tol = 1e-5 [m, rad], every query seeded at the middle of the
joint limits, two budgets per case:

* example-robot-data's Panda by name (its meshes as convex hulls, the pairs its SRDF leaves) on a
  table, with a box and a shelf board (primitives): the hand's pose; 5 and 20 ms;
* the bundled dual arm (capsules), its self-collision: the right tool in the left tool's frame
  (level 1) and the left tool in the world (level 2), a posture below; 10 and 50 ms.

Methods, each query's wall time measured from Python, the methods interleaved target by target (a
change of the machine's load falls on all of them):

* ``avoidance``: one :class:`~reljac.ik.Solver` per case, reused, with
  :class:`~reljac.ik.CollisionAvoidance` (min 1 cm, its defaults) as a constraint;
* ``loop``: reljac's plain search (a Solver without it, reused) in a rejection loop, as MoveIt
  uses an IK solver: solve with the budget left, reject an answer in a collision, retry from a
  random configuration until the budget ends;
* ``trac_ik`` (``--peers``, when ``pytracik`` is installed): TRAC-IK (Speed, epsilon 1e-5, its
  per-axis criterion) in the same loop: Panda's chain panda_link0 -> panda_hand; the dual arm in
  two stages (the torso and left arm for the left tool's pose, then the right arm for the right
  tool where the relative target puts it), each with the time left; TRAC-IK's timeout is fixed
  when it is made, so it is made for the budget and for halves of it down to 1/32 and each call
  gets the largest that fits in the time left.

Every answer a method calls a success is checked afterwards by an independent distance
computation (Pinocchio's ``computeDistances`` on the same pairs), after its clock stopped: a
success within the budget is one whose call took at most the budget and whose every pair is at
least ``MIN_DISTANCE`` apart (the loops reject with the same computation, inside their time: it is
their method; ``check_s``, the median time of one, says how much of theirs it is);
``colliding`` counts the answers a method returned as converged that are not (0 for each method
here, or it is a bug). ``first_colliding``: how many of the plain search's first answers collide
(what a user without any collision handling gets), and the deepest.

Throughput: :func:`~reljac.ik.solve_many` with collision avoidance on Panda's targets (no budget,
20 restarts), on one thread and on every core: solves per second per core.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin

from ..collision import CollisionModel, box
from ..ik import CollisionAvoidance, FrameTask, PostureTask, RelativeFrameTask, Solver, Task
from ..relative import Kinematics
from ..robot import Robot
from .bench_common import PAIR, Progress, done, middle
from .bench_solve_peers import chain_angles, chain_joints, stdout_to_stderr, with_angles
from .report import format_table

TOL = 1e-5  # [m, rad]
MIN_DISTANCE = 0.01  # [m] the distance every pair keeps (CollisionAvoidance's default)
CLEARANCE = 0.01  # [m] the targets' configurations keep every pair this much beyond MIN_DISTANCE
LADDER = 6  # TRAC-IK solvers made per chain: timeouts budget / 2^k, k < LADDER


@dataclass
class Scene:
    """A case: the robot, its collision model, the levels, how a target configuration sets their
    targets, and its two budgets [s]."""

    name: str
    robot: Robot
    model: CollisionModel
    levels: list[list[Task]]
    set_targets: Callable[[np.ndarray], None]
    budgets: tuple[float, float]


def panda_scene() -> Scene:
    robot = Robot.load("panda")
    model = CollisionModel(robot)
    model.add_obstacle("table", box((1.2, 1.2, 0.05)), np.array([0.3, 0.0, -0.03]))
    model.add_obstacle("box", box((0.2, 0.2, 0.2)), np.array([0.5, 0.35, 0.1]))
    model.add_obstacle("shelf", box((0.3, 0.5, 0.02)), np.array([0.55, -0.3, 0.55]))
    hand = FrameTask("panda_hand", name="hand")

    def set_targets(q: np.ndarray) -> None:
        hand.set_target(Kinematics(robot, q).placement("panda_hand"))

    return Scene("Panda by name (meshes, its SRDF), a table, a box, a shelf: the hand's pose", robot, model,
                 [[hand]], set_targets, (0.005, 0.020))


def dual_arm_scene() -> Scene:
    robot = Robot.bundled("dual_arm")
    rel, left = RelativeFrameTask(*PAIR, name="relative"), FrameTask(PAIR[0], name="left")
    posture = PostureTask(robot, weight=0.1)
    posture.set_target(middle(robot))

    def set_targets(q: np.ndarray) -> None:
        kin = Kinematics(robot, q)
        rel.set_target(kin.relative_placement(*PAIR))
        left.set_target(kin.placement(PAIR[0]))

    return Scene("dual_arm (capsules), self-collision: relative pose > left pose > posture", robot,
                 CollisionModel(robot), [[rel], [left], [posture]], set_targets, (0.010, 0.050))


def distances(robot: Robot, model: CollisionModel, q: np.ndarray) -> np.ndarray:
    """Every active pair's distance at q [m], by Pinocchio's computeDistances (not reljac's code)."""
    geometry = model.geometry_model
    data, gdata = robot.model.createData(), pin.GeometryData(geometry)
    pin.computeDistances(robot.model, data, geometry, gdata, q)
    return np.array([r.min_distance for r in gdata.distanceResults])


def clear(scene: Scene, q: np.ndarray) -> bool:
    return bool(distances(scene.robot, scene.model, q).min() >= MIN_DISTANCE)


def target_configurations(scene: Scene, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        q = scene.robot.random_configuration(rng)
        if distances(scene.robot, scene.model, q).min() >= MIN_DISTANCE + CLEARANCE:
            out.append(q)
    return out


@dataclass
class Tally:
    """One method's queries: wall times [s], successes (converged and clear), answers it called
    converged that collide, tries (solves per query)."""

    times: list[float] = field(default_factory=list)
    ok: list[bool] = field(default_factory=list)
    colliding: int = 0
    tries: list[int] = field(default_factory=list)

    def add(self, seconds: float, ok: bool, colliding: bool, tries: int) -> None:
        self.times.append(seconds)
        self.ok.append(ok)
        self.colliding += colliding
        self.tries.append(tries)

    def summary(self, budget: float) -> dict[str, Any]:
        t = np.array(self.times)
        within = [o and s <= budget for o, s in zip(self.ok, t, strict=True)]
        return {"queries": len(t), "within_budget": float(np.mean(within)), "median_s": float(np.median(t)),
                "p95_s": float(np.percentile(t, 95)), "p99_s": float(np.percentile(t, 99)),
                "colliding": self.colliding, "mean_tries": float(np.mean(self.tries))}


Verdict = Callable[[], tuple[bool, bool]]  # () -> (ok, colliding): the independent check, after the clock stopped
Query = Callable[[int, np.ndarray], tuple[Verdict, int]]  # (i, target q) -> (verdict, tries), targets set


def decided(ok: bool, colliding: bool) -> Verdict:
    """The verdict of a method that checked its answer itself (inside its time)."""
    return lambda: (ok, colliding)


def avoidance_method(scene: Scene, budget: float, checks: list[float]) -> Query:
    """solve with CollisionAvoidance, one Solver reused; its answer checked after the clock stopped
    (`checks`: the time of each independent check [s])."""
    avoid = CollisionAvoidance(scene.robot, model=scene.model, min_distance=MIN_DISTANCE)
    solver = Solver(scene.robot, scene.levels, tol=TOL, timeout=budget, constraints=[avoid])

    def query(i: int, target: np.ndarray) -> tuple[Verdict, int]:
        r = solver.solve(solver.middle, seed=i)

        def verdict() -> tuple[bool, bool]:
            start = time.perf_counter()
            free = r.converged and clear(scene, r.q)
            checks.append(time.perf_counter() - start)
            return free, r.converged and not free

        return verdict, 1

    return query


def loop_method(scene: Scene, budget: float, plain: dict[str, Any]) -> Query:
    """reljac's plain search in a rejection loop (its Solver's timeout set to the time left before
    each try); `plain` counts its first answers in a collision and the deepest."""
    solver = Solver(scene.robot, scene.levels, tol=TOL, timeout=budget)
    rng = np.random.default_rng(1)

    def query(i: int, target: np.ndarray) -> tuple[Verdict, int]:
        start, seed, k = time.perf_counter(), solver.middle, 0
        while (left := budget - (time.perf_counter() - start)) > 0:
            solver.options.timeout = left
            r = solver.solve(seed, seed=i * 1000 + k)
            k += 1
            if r.converged:
                d = distances(scene.robot, scene.model, r.q).min()
                if k == 1 and d < MIN_DISTANCE:
                    plain["first_colliding"] += 1
                    plain["deepest_m"] = max(plain["deepest_m"], MIN_DISTANCE - d)
                if d >= MIN_DISTANCE:
                    return decided(True, False), k
            seed = scene.robot.random_configuration(rng)
        return decided(False, False), k

    return query


def trac_ik_method(scene: Scene, budget: float) -> Query | None:
    """TRAC-IK in the rejection loop (see the module docstring), or None without pytracik."""
    try:
        import pytracik
    except ImportError:
        return None
    robot = scene.robot
    if robot.urdf_path is None:
        return None
    urdf = robot.urdf_path.read_text()
    two = len(scene.levels) > 1
    chains = [(PAIR[0], "base_link"), ("right_tool", "torso")] if two else [("panda_hand", "panda_link0")]
    stages = []
    for tip, base in chains:
        joints = chain_joints(robot, base, tip)
        lower = [float(robot.lower_limits[i]) if n == 1 else -np.pi for i, n in joints]
        upper = [float(robot.upper_limits[i]) if n == 1 else np.pi for i, n in joints]
        ladder = []
        with stdout_to_stderr():  # KDL's parser prints to C's stdout
            for k in range(LADDER):
                s = pytracik.TRAC_IK(base, tip, urdf, budget / 2 ** k, TOL, pytracik.SolveType.Speed)
                pytracik.set_joint_limits(s, lower, upper)
                ladder.append(s)
        stages.append((base, tip, joints, ladder))
    start_q = middle(robot)
    rng = np.random.default_rng(2)

    def stage(q: np.ndarray, seed: np.ndarray, index: int, T: pin.SE3, left: float) -> np.ndarray | None:
        _, _, joints, ladder = stages[index]
        fits = [s for k, s in enumerate(ladder) if budget / 2 ** k <= left]
        if not fits:
            return None
        x, y, z = T.translation
        qx, qy, qz, qw = pin.Quaternion(T.rotation).coeffs()
        r = pytracik.ik(fits[0], chain_angles(seed, joints), x, y, z, qx, qy, qz, qw)
        return with_angles(q, joints, r[1:]) if r[0] >= 0 else None

    def query(i: int, target: np.ndarray) -> tuple[Verdict, int]:
        kin = Kinematics(robot, target)
        start, seed, k = time.perf_counter(), start_q, 0
        while (left := budget - (time.perf_counter() - start)) > 0:
            k += 1
            base, tip, _, _ = stages[0]
            q = stage(start_q, seed, 0, kin.relative_placement(base, tip), left)
            if q is not None and two:  # the right tool where the relative target puts it, in the torso's frame
                placed = Kinematics(robot, q)
                T = placed.placement("torso").actInv(placed.placement(PAIR[0]) * kin.relative_placement(*PAIR))
                q = stage(q, seed, 1, T, budget - (time.perf_counter() - start))
            if q is not None and clear(scene, q):
                return decided(True, False), k
            seed = robot.random_configuration(rng)
        return decided(False, False), k

    return query


def measure(scene: Scene, configurations: list[np.ndarray], budget: float, peers: bool) -> dict[str, Any]:
    """Every method on every target, the methods interleaved target by target (a change of the
    machine's load falls on all of them)."""
    plain = {"first_colliding": 0, "deepest_m": 0.0}
    checks: list[float] = []
    methods: dict[str, Query | None] = {"avoidance": avoidance_method(scene, budget, checks),
                                        "loop": loop_method(scene, budget, plain),
                                        "trac_ik": trac_ik_method(scene, budget) if peers else None}
    tallies = {who: Tally() for who, method in methods.items() if method is not None}
    for i, target in enumerate(configurations):
        scene.set_targets(target)
        for who, tally in tallies.items():
            query = methods[who]
            assert query is not None
            start = time.perf_counter()
            verdict, tries = query(i, target)
            seconds = time.perf_counter() - start
            tally.add(seconds, *verdict(), tries)
    return {**{who: (tallies[who].summary(budget) if who in tallies else None) for who in methods}, "plain": plain,
            "check_s": float(np.median(checks))}


def throughput(scene: Scene, configurations: list[np.ndarray]) -> dict[str, Any]:
    """solve_many with collision avoidance, no budget (20 restarts): on one thread and on every
    core [solves per second] and per core, each after a first call on 20 of the targets (the
    set-up of a controller per thread not timed); the share converged and clear."""
    avoid = CollisionAvoidance(scene.robot, model=scene.model, min_distance=MIN_DISTANCE)
    solver = Solver(scene.robot, scene.levels, tol=TOL, constraints=[avoid])
    task = scene.levels[0][0]
    targets = []
    for q in configurations:
        scene.set_targets(q)
        targets.append(task.target)  # type: ignore[attr-defined]
    cores = os.cpu_count() or 1
    out: dict[str, Any] = {"problems": len(targets), "cores": cores}
    settings = ((1, "one_thread_per_s"), (cores, "all_cores_per_s"))
    for workers, _ in settings:  # set-up out of the timing: the core's step and a controller per thread
        solver.solve_many(None, targets[:20], workers=workers, progress=False)
    for workers, key in settings:
        start = time.perf_counter()
        results = solver.solve_many(None, targets, workers=workers, progress=False)
        out[key] = len(targets) / (time.perf_counter() - start)
    out["per_core_per_s"] = out["all_cores_per_s"] / cores
    out["converged_clear"] = float(np.mean([r.converged and clear(scene, r.q) for r in results]))
    return out


def collision_results(*, quick: bool = False, progress: Progress = None, peers: bool = False) -> dict[str, Any]:
    """The measurements of ``reljac bench solve --collision`` (times in seconds)."""
    n = 20 if quick else 200
    cases = []
    for make, seed in ((panda_scene, 3), (dual_arm_scene, 4)):
        scene = make()
        configurations = target_configurations(scene, n, seed)
        for budget in scene.budgets:
            load = os.getloadavg()[0]
            row: dict[str, Any] = {"case": scene.name, "budget_s": budget,
                                   **measure(scene, configurations, budget, peers)}
            row["load"] = [load, os.getloadavg()[0]]
            cases.append(row)
            done(progress)
    scene = panda_scene()
    many = throughput(scene, target_configurations(scene, 50 if quick else 1000, 5))
    done(progress)
    return {"tol": TOL, "min_distance": MIN_DISTANCE, "clearance": CLEARANCE, "cases": cases, "solve_many": many}


def collision_units(quick: bool = False) -> int:
    return 5


def collision_text(r: dict[str, Any]) -> str:
    rows = []
    for c in r["cases"]:
        for who in ("avoidance", "loop", "trac_ik"):
            s = c.get(who)
            if s is None:
                continue
            rows.append([c["case"] if who == "avoidance" else "", f"{1e3 * c['budget_s']:g} ms",
                         {"avoidance": "reljac solve + CollisionAvoidance", "loop": "reljac + rejection loop",
                          "trac_ik": "TRAC-IK + rejection loop"}[who],
                         f"{100 * s['within_budget']:.1f} %", 1e3 * s["median_s"], 1e3 * s["p95_s"],
                         1e3 * s["p99_s"], f"{s['mean_tries']:.2f}", s["colliding"],
                         f"{c['load'][0]:.1f}-{c['load'][1]:.1f}" if who == "avoidance" else ""])
    m = r["solve_many"]
    plain = [f"{c['plain']['first_colliding']} of {c['loop']['queries']} ({1e3 * c['plain']['deepest_m']:.0f} mm "
             f"deep at most) at {1e3 * c['budget_s']:g} ms" for c in r["cases"]]
    return "\n".join([
        f"Collision-free poses within a budget: targets from configurations {1e3 * r['clearance']:g} mm beyond "
        f"the {1e3 * r['min_distance']:g} mm kept, full pose at {r['tol']:g}, seeded at the middle of the limits; "
        "every answer checked by Pinocchio's computeDistances",
        format_table(["case", "budget", "method", "within budget", "median [ms]", "p95 [ms]", "p99 [ms]", "tries",
                      "colliding", "load"], rows),
        "",
        "the plain search's first answers in a collision: " + "; ".join(plain),
        "one independent check (computeDistances on every pair, after a method's clock; the loops' own rejection "
        "test, inside theirs), median: "
        + "; ".join(f"{1e3 * c['check_s']:.2f} ms" for c in r["cases"] if "check_s" in c),
        f"solve_many with collision avoidance, Panda, {m['problems']} targets (20 restarts, no budget): "
        f"{m['one_thread_per_s']:.0f}/s on one thread, {m['all_cores_per_s']:.0f}/s on {m['cores']} cores "
        f"({m['per_core_per_s']:.0f}/s per core), {100 * m['converged_clear']:.1f} % converged and clear",
    ])

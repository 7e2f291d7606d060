"""``reljac bench place``: the placement maps against a brute-force truth, on TIAGo dual carrying a
box with both hands through 20 poses above a table, and on a Panda on a cart (one hand).

For each scenario: the pose maps' build time and size (and that a map is the same bit for bit
with another chunk size on one thread, and on a Dask LocalCluster when Dask is installed); the
maps' answer for every (placement, pose) pair of a dense grid of placements, timed per pair; the
brute-force truth on the same grid (:mod:`reljac.apps.bench_place_truth`: solve_many with
collision avoidance, no map); the exact check (:class:`reljac.placement.Checker`, from the maps'
configurations) of every placement the maps call feasible; then

* precision: of the placements the maps call feasible, the share confirmed (by the exact check
  or the brute force): with the maps alone (every pose reached), with the margin (every pose
  reached surely), with the unsure poses refined by a short search per hand, and witnessed (every
  pose's configuration from the maps made exact per arm and free of collision:
  :mod:`reljac.placement.witness`);
* recall: of the placements the brute force finds feasible, the share the maps call feasible;
* the best placement found and checked: :func:`reljac.placement.place` with one candidate
  wanted, a placement checked at a time, the maps in memory (median of runs).

Figures, never assertions: the machine's load is printed with them.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from ..collision import CollisionModel, box
from ..placement import (
    Checker,
    FloorRegion,
    MobileBase,
    PlacementTask,
    mobile_base,
    place,
    placement_maps,
    pose_map,
    reach,
    save_maps,
)
from ..placement.inverse import seeds
from ..placement.place import DEFAULT_MARGIN
from ..placement.refine import refined
from ..placement.witness import Witnesses
from ..robot import Robot
from .bench_common import Progress, done
from .bench_place_truth import brute_force
from .report import format_table

FINGERS = ("index", "little", "middle", "ring", "thumb", "mrl")


@dataclass
class Scenario:
    name: str
    mobile: MobileBase
    task: PlacementTask
    region: FloorRegion
    collision: CollisionModel
    samples: int


def tiago(quick: bool) -> Scenario:
    """TIAGo dual by name, wheels and fingers locked, carrying a 45 cm box with both hands through
    20 poses above a table (lifted 15 cm, moved 20 cm sideways, turned 20 degrees)."""
    robot = Robot.load("tiago_dual").locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])
    mobile = mobile_base(robot)
    R_wl = np.column_stack([(0.0, -1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)])
    grasps = {"hand_left_tool_link": pin.SE3(R_wl, np.array([0.0, 0.225, 0.0])),
              "hand_right_tool_link": pin.SE3(R_wl @ pin.rpy.rpyToMatrix(0, 0, math.pi), np.array([0.0, -0.225, 0.0]))}
    waypoints = [pin.SE3(pin.rpy.rpyToMatrix(0, 0, math.radians(-10)), np.array([0.80, -0.10, 0.97])),
                 pin.SE3(pin.rpy.rpyToMatrix(0, 0, math.radians(10)), np.array([0.75, 0.10, 1.12]))]
    task = PlacementTask.along(waypoints, 20, grasps)
    collision = CollisionModel(mobile.robot)
    fingers = [link for link in collision.links if any(f"_{f}_" in link for f in FINGERS)]
    collision.remove_pairs([p for p in collision.pairs if p[0] in fingers or p[1] in fingers])
    collision.add_obstacle("table", box((0.6, 1.2, 0.75)), [1.15, 0.0, 0.375])
    step, yaw_step = (0.1, math.radians(30)) if quick else (0.05, math.radians(10))
    region = FloorRegion(x=(-0.2, 0.45), y=(-0.5, 0.5), yaw=(-math.radians(40), math.radians(40)), step=step,
                         yaw_step=yaw_step)
    return Scenario("tiago_dual, box in both hands", mobile, task, region, collision,
                    100_000 if quick else 2_000_000)


def panda(quick: bool) -> Scenario:
    """Panda by name on a cart (0.6 m), its hand pointing down along 20 poses over a table."""
    mobile = mobile_base(Robot.load("panda"), height=0.6)
    down = pin.rpy.rpyToMatrix(math.pi, 0, 0)
    task = PlacementTask.along([pin.SE3(down, np.array([0.70, -0.30, 0.97])),
                                pin.SE3(down @ pin.rpy.rpyToMatrix(0, 0, 0.5), np.array([0.75, 0.30, 1.05]))],
                               20, ["panda_hand"])
    collision = CollisionModel(mobile.robot)
    collision.add_obstacle("table", box((0.6, 1.2, 0.75)), [0.95, 0.0, 0.375])
    step, yaw_step = (0.1, math.radians(45)) if quick else (0.05, math.radians(30))
    region = FloorRegion(x=(-0.4, 0.5), y=(-0.6, 0.6), step=step, yaw_step=yaw_step)
    return Scenario("panda on a cart, one hand", mobile, task, region, collision, 100_000 if quick else 3_000_000)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _share(part: np.ndarray, whole: np.ndarray) -> float | None:
    return float((part & whole).sum() / whole.sum()) if whole.sum() else None


def identical_maps(scenario: Scenario, samples: int) -> dict[str, Any]:
    """The lead hand's map of `samples` samples: two threads vs one thread and another chunk size,
    vs a Dask LocalCluster of two workers (when Dask is installed)."""
    from ..placement.chains import hand_chains

    mobile, hand = scenario.mobile, scenario.task.hands[0]
    frame = hand_chains(mobile, scenario.task.hands).frame
    reference = pose_map(mobile.robot, frame, hand, samples=samples, workers=2)
    other = pose_map(mobile.robot, frame, hand, samples=samples, workers=1, chunk=samples // 7 + 1)
    out: dict[str, Any] = {"samples": samples, "threads_and_chunks": reference == other, "dask": None}
    try:
        import distributed  # noqa: F401
    except ImportError:
        return out
    on_dask = pose_map(mobile.robot, frame, hand, samples=samples, scheduler="local", workers=2, chunk=samples // 3)
    out["dask"] = reference.same_arrays(on_dask)
    return out


def measure(scenario: Scenario, *, quick: bool, progress: Progress = None) -> dict[str, Any]:
    """Every figure of one scenario (module docstring)."""
    mobile, task, region = scenario.mobile, scenario.task, scenario.region
    start = time.perf_counter()
    maps = placement_maps(mobile, task.hands, samples=scenario.samples, workers=2)
    build = time.perf_counter() - start
    path = save_maps(f"/tmp/reljac-bench-place-{os.getpid()}.npz", maps)
    file_bytes = path.stat().st_size
    path.unlink()
    done(progress)
    P = region.placements()
    for pmap in maps.maps.values():
        pmap.prepare()
    t = time.perf_counter()
    reach(maps, task, P, every_pose=True)  # every pair, plainly: the per-pair time
    query = time.perf_counter() - t
    t = time.perf_counter()
    found = reach(maps, task, P, margin=DEFAULT_MARGIN, every_pose=True)  # and the margin where all reached
    with_margin = time.perf_counter() - t
    pairs = len(P) * len(task)
    plain, sure = np.asarray(found.reached.all(axis=1)), np.asarray(found.sure.all(axis=1))
    decided = np.asarray(refined(maps, task, P, found).all(axis=1))
    index = np.flatnonzero(plain)
    t = time.perf_counter()
    asked = np.array([(i, k) for i in index for k in range(len(task))]).reshape(-1, 2)
    witnessed_pairs = Witnesses(maps, task, scenario.collision).run(P, found, asked).ok
    witnessing = time.perf_counter() - t
    witnessed = np.zeros(len(P), bool)
    witnessed[index] = witnessed_pairs.reshape(len(index), len(task)).all(axis=1)
    done(progress)
    checker = Checker(mobile, task, collision=scenario.collision)
    steps = np.array([region.step, region.step, region.yaw_step])
    truth = brute_force(checker, P, steps)
    done(progress)
    checked = checker.run(P[index], seeds(maps, task, P[index], found.take(index)))
    confirmed = truth.feasible.copy()
    confirmed[index] |= checked.feasible
    done(progress)
    runs = []
    for _ in range(1 if quick else 5):
        t = time.perf_counter()
        result = place(maps, task, region, collision=scenario.collision, candidates=1, batch=1)
        runs.append(time.perf_counter() - t)
    best = result.best
    done(progress)
    return {
        "scenario": scenario.name, "robot": mobile.robot.name, "hands": task.hands, "poses": len(task),
        "load": _load(), "maps": {"samples_per_hand": scenario.samples, "build_seconds": build,
                                  "bytes_in_memory": maps.nbytes, "file_bytes": file_bytes},
        "identical": identical_maps(scenario, 20_000 if quick else 200_000),
        "placements": len(P), "searched": int(truth.searched.sum()), "pairs": pairs,
        "query_seconds": query, "query_us_per_pair": 1e6 * query / pairs, "query_margin_seconds": with_margin,
        "truth": {"feasible": int(truth.feasible.sum()), "searches": truth.searches, "seconds": truth.seconds},
        "maps_feasible": {"reached": int(plain.sum()), "sure": int(sure.sum()), "refined": int(decided.sum()),
                          "witnessed": int(witnessed.sum())},
        "precision": {"reached": _share(confirmed, plain), "sure": _share(confirmed, sure),
                      "refined": _share(confirmed, decided), "witnessed": _share(confirmed, witnessed)},
        "recall": {"reached": _share(plain, truth.feasible), "sure": _share(sure, truth.feasible),
                   "refined": _share(decided, truth.feasible), "witnessed": _share(witnessed, truth.feasible)},
        "witnesses": {"pairs": len(asked), "seconds": witnessing,
                      "us_per_pair": 1e6 * witnessing / max(len(asked), 1)},
        "exact_check": {"placements": len(index), "confirmed": int(checked.feasible.sum()),
                        "seconds": checked.seconds},
        "best": {"seconds_median": float(np.median(runs)), "runs": len(runs),
                 "placement": None if best is None else [float(v) for v in best.placement],
                 "score": None if best is None else best.score, "seconds": result.seconds},
    }


SCENARIOS = (tiago, panda)


def place_units(quick: bool) -> int:
    return 5 * len(SCENARIOS)


def place_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """{``scenarios``: [:func:`measure`'s dict per scenario]}."""
    return {"scenarios": [measure(make(quick), quick=quick, progress=progress) for make in SCENARIOS]}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def place_text(r: dict[str, Any]) -> str:
    """The tables of :func:`place_results`."""
    out = []
    for s in r["scenarios"]:
        m = s["maps"]
        ident = s["identical"]
        out.append(f"{s['scenario']} ({s['robot']}, {len(s['hands'])} hand(s), {s['poses']} poses); load average "
                   f"{' '.join(map(str, s['load']))} on {os.cpu_count()} cores")
        out.append(f"maps: {m['samples_per_hand']:,} samples per hand in {m['build_seconds']:.1f} s, "
                   f"{m['bytes_in_memory'] / 1e6:.1f} MB in memory, {m['file_bytes'] / 1e6:.1f} MB on disk; same map "
                   f"with 1 thread and other chunks: {ident['threads_and_chunks']}, on Dask: {ident['dask']} "
                   f"({ident['samples']:,} samples)")
        out.append(f"grid: {s['placements']:,} placements x {s['poses']} poses; maps {s['query_seconds']:.2f} s "
                   f"({s['query_us_per_pair']:.2f} us per pair; {s['query_margin_seconds']:.2f} s with the margin); "
                   f"brute force: {s['truth']['feasible']} feasible "
                   f"({s['searched']:,} placements searched, {s['truth']['searches']:,} searches, "
                   f"{s['truth']['seconds']:.0f} s)")
        rows = [[name, s["maps_feasible"][key], _pct(s["precision"][key]), _pct(s["recall"][key])]
                for name, key in (("maps: every pose reached", "reached"), ("maps: every pose sure (margin 0.5)",
                                                                           "sure"),
                                  ("maps + unsure poses searched per hand", "refined"),
                                  ("maps + witnesses (exact, free of collision)", "witnessed"))]
        out.append(format_table(["classifier", "feasible", "precision", "recall"], rows))
        w = s["witnesses"]
        out.append(f"witnesses: {w['pairs']:,} (placement, pose) pairs of the placements the maps reach at every pose, "
                   f"{w['seconds']:.1f} s ({w['us_per_pair']:.0f} us per pair)")
        b = s["best"]
        where = "none" if b["placement"] is None else \
            f"x {b['placement'][0]:.2f} m, y {b['placement'][1]:.2f} m, yaw {math.degrees(b['placement'][2]):.0f} deg"
        out.append(f"best placement found and checked: {b['seconds_median']:.2f} s (median of {b['runs']}): {where}\n")
    return "\n".join(out)

"""place: where the base should stand for a task, ranked by the maps and checked exactly.

1. The floor region's placements (:class:`~reljac.placement.task.FloorRegion`) where the base's
   own bodies clear the obstacles (:mod:`reljac.placement.clearance`).
2. The maps' answer for every (placement, pose) pair (:func:`~reljac.placement.inverse.reach`):
   poses reached, surely reached, the map score; with ``refine``, the unsure pairs decided by a
   short search per hand (:mod:`reljac.placement.refine`). This is the floor map of where the
   task is feasible.
3. The placements the maps rank first (:func:`~reljac.placement.rank.map_order`), a batch at a
   time, until `candidates` placements pass or `max_checked` were tried: first their witnesses
   (:mod:`reljac.placement.witness`: the maps' configurations made exact by a short search per
   arm and tested for collision); a placement witnessed at every pose passes as it is (each
   witness verified as the exact check verifies its answers), the others go to the exact check
   (:mod:`reljac.placement.check`: ``solve_many`` with collision avoidance) from their witnesses'
   configurations. Those that pass are ordered by their exact score, and the best is the answer,
   with a configuration for every pose.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..collision import CollisionModel
from ..exceptions import TaskError
from ..validation import as_bool, as_count, as_float
from .check import Checker
from .clearance import Clearance
from .inverse import PlacementMaps, Reach, check_hands, checked_margin, reach, seeds
from .rank import check_score, exact_scores, map_order
from .refine import refined
from .task import MAX_DISTANCE, FloorRegion, PlacementTask
from .witness import Witnesses

DEFAULT_MARGIN = (0.5, 0.5, 0.5, 0.5, 0.0, 0.0)  # rho, z, psi, beta: half a cell each way


@dataclass
class Candidate:
    """A placement the exact check tried.

    Attributes:
        placement: (3,) (x [m], y [m], yaw [rad]).
        index: its row in the result's placements.
        map_score: the maps' worst-pose manipulability; poses_reached, poses_sure: poses the maps
            reach (surely); witnessed: poses with a witness (:mod:`reljac.placement.witness`).
        feasible: every pose reached by the exact check; reached: poses it reached.
        score: the exact worst-pose score (the result's `score`), NaN unless feasible.
        q: (K, nq) a configuration per pose (the closest found where one failed).
    """

    placement: np.ndarray
    index: int
    map_score: float
    poses_reached: int
    poses_sure: int
    feasible: bool
    reached: int
    score: float
    q: np.ndarray
    witnessed: int = 0

    def to_dict(self) -> dict[str, Any]:
        x, y, yaw = (float(v) for v in self.placement)
        return {"x": x, "y": y, "yaw": yaw, "map_score": self.map_score, "map_poses_reached": self.poses_reached,
                "map_poses_sure": self.poses_sure,
                "map_poses_witnessed": self.witnessed, "feasible": self.feasible, "poses_reached": self.reached,
                "score": self.score if self.feasible else None}


@dataclass
class PlacementResult:
    """What :func:`place` found.

    Attributes:
        placements: (N, 3) the floor region's placements.
        free: (N,) bool, the base's bodies clear the obstacles there.
        found: the maps' :class:`~reljac.placement.inverse.Reach` of every placement (blocked
            ones reach nothing); its ``sure`` is tested only where :func:`place` says (elsewhere
            False).
        decided: (N, K) bool, the pairs counted feasible by the maps (reached, or with
            ``refine`` sure or confirmed by the arms' search).
        candidates: the checked placements, feasible ones first, by exact score.
        score: the score's name. seconds: {"clearance", "tables" (the maps' query tables, built
            once per map), "maps", "refine", "check", "total"} [s].
    """

    placements: np.ndarray
    free: np.ndarray
    found: Reach
    decided: np.ndarray
    candidates: list[Candidate]
    score: str
    seconds: dict[str, float] = field(default_factory=dict)
    checked_problems: int = 0

    @property
    def best(self) -> Candidate | None:
        """The best feasible placement, or None."""
        return self.candidates[0] if self.candidates and self.candidates[0].feasible else None

    @property
    def feasible(self) -> np.ndarray:
        """(N,) bool: every pose counted feasible by the maps (:attr:`decided`)."""
        return np.asarray(self.decided.all(axis=1))


def place(maps: PlacementMaps, task: PlacementTask, region: FloorRegion, *, collision: CollisionModel | None = None,
          min_distance: float = 0.01, score: str = "manipulability", candidates: int = 3, batch: int = 4,
          max_checked: int = 32, margin: tuple[float, ...] | None = DEFAULT_MARGIN, refine: bool = False,
          check_timeout: float = 0.05, tol: float = 1e-4, workers: int | None = None, every_pose: bool = False,
          witness: bool = True, progress: Callable[[str, int, int], None] | None = None) -> PlacementResult:
    """Placements of the base for the task, ranked (module docstring).

    Args:
        maps: the hands' pose maps (:func:`~reljac.placement.placement_maps`).
        task: the object's poses and the grasps; region: where the base may stand.
        collision: a CollisionModel of ``maps.mobile.robot`` (self-collision and obstacles), or
            None: no collision avoidance in the check, no clearance test.
        min_distance: [m] kept by every collision pair, in [0, 1e6] (checked with or without obstacles).
        score: "manipulability" or "joint_margin" (:mod:`reljac.placement.rank`).
        candidates: feasible placements wanted (>= 1); batch: placements checked at once;
            max_checked: at most this many checked.
        margin: the maps' margin for a *sure* pose (:func:`~reljac.placement.inverse.reach`); tested
            at every placement reaching every pose (with `every_pose` or `refine`, at every pose
            reached).
        refine: decide the unsure pairs by a short search per hand (for the floor map).
        every_pose: ask the maps every pose at every placement (the floor map's counts); by
            default a placement is dropped at its first pose the maps do not reach (its count is
            then a lower bound), which is faster.
        witness: test the candidates' witnesses first (module docstring); False: every candidate
            goes to the exact check from the maps' configurations.
        check_timeout: [s] the budget of one search of the check; tol: [m, rad].
        progress: called as progress(stage, done, total) with stage "maps", "refine", "check".
    """
    for value, kind, name in ((maps, PlacementMaps, "maps (placement_maps)"), (task, PlacementTask, "task"),
                              (region, FloorRegion, "region"), (collision, (CollisionModel, type(None)), "collision")):
        if not isinstance(value, kind):
            raise TaskError(f"{name} must be a {getattr(kind, '__name__', 'CollisionModel or None')}, got "
                            f"{type(value).__name__}")
    check_score(score)
    check_hands(maps, task)
    margin = checked_margin(margin)
    min_distance = as_float(min_distance, "min_distance", minimum=0.0, valid="a distance in [0, 1e6] m")
    if min_distance > MAX_DISTANCE:
        raise TaskError(f"min_distance must be a distance in [0, 1e6] m, got {min_distance!r}")
    candidates = as_count(candidates, "candidates", minimum=1)
    batch = as_count(batch, "batch", minimum=1)
    max_checked = as_count(max_checked, "max_checked", minimum=1)
    workers = None if workers is None else as_count(workers, "workers", minimum=1)  # (0 is not "every core")
    # (checked here, not where the check first runs: the witnesses may settle every candidate)
    check_timeout = as_float(check_timeout, "check_timeout [s]", minimum=0.0, strict=True,
                             valid="a positive number of seconds")
    tol = as_float(tol, "tol", minimum=0.0, strict=True, valid="a positive number [m or rad]")
    refine, every_pose, witness = (as_bool(flag, name) for name, flag in
                                   (("refine", refine), ("every_pose", every_pose), ("witness", witness)))
    start = time.perf_counter()
    seconds: dict[str, float] = {}
    P = region.placements()
    free = np.ones(len(P), bool)
    if collision is not None and collision.obstacles:
        free = Clearance(maps.mobile, maps.chains, collision, min_distance=min_distance).free(P)
    seconds["clearance"] = time.perf_counter() - start
    t = time.perf_counter()
    for pmap in maps.maps.values():
        pmap.prepare()
    seconds["tables"] = time.perf_counter() - t
    t = time.perf_counter()
    keep = np.flatnonzero(free)
    part = reach(maps, task, P[keep], margin=None if not every_pose and not refine else margin,
                 every_pose=every_pose)
    found = _spread(part, keep, len(P), len(task), maps.hands)
    if margin is not None and not every_pose and not refine:  # how sure: where every pose is reached
        # (at all of them, not at the best by the maps alone: those were often all at the maps' edge, sure at
        # 11 of 12 poses, and failed, while placements sure at every pose ranked below them went untried)
        top = np.flatnonzero(found.reached.all(axis=1))
        found.sure[:] = False  # (untested elsewhere: nothing else reaches every pose)
        if len(top):
            again = reach(maps, task, P[top], margin=margin)
            found.sure[top], found.score[top], found.shared[top] = again.sure, again.score, again.shared
            for hand in found.rows:
                found.rows[hand][top] = again.rows[hand]
    seconds["maps"] = time.perf_counter() - t
    if progress is not None:
        progress("maps", len(P), len(P))
    t = time.perf_counter()
    decided = refined(maps, task, P, found, tol=tol) if refine else found.reached.copy()
    seconds["refine"] = time.perf_counter() - t
    t = time.perf_counter()
    order = [i for i in map_order(found) if found.reached[i].all() and free[i]][:max_checked]
    checker = Checker(maps.mobile, task, collision=collision, min_distance=min_distance, tol=tol,
                      timeout=check_timeout, workers=workers)
    witnesses = Witnesses(maps, task, collision, min_distance=min_distance, tol=tol, workers=workers) \
        if witness else None
    tried: list[Candidate] = []
    problems = 0
    K = len(task)
    for first in range(0, len(order), batch):
        chosen = np.array(order[first:first + batch])
        starts = seeds(maps, task, P[chosen], found.take(chosen))
        ok = np.zeros((len(chosen), K), bool)
        q = starts.copy()
        if witnesses is not None:
            pairs = np.array([(i, k) for i in chosen for k in range(K)])
            found_w = witnesses.run(P, found, pairs)
            ok = found_w.ok.reshape(len(chosen), K)
            q = np.where(ok[..., None], found_w.q.reshape(q.shape), starts)  # the others from the maps' seeds
        whole = ok.all(axis=1)
        feasible, reached_exact = whole.copy(), ok.sum(axis=1)
        rest = np.flatnonzero(~whole)
        if len(rest):
            checked = checker.run(P[chosen[rest]], q[rest])
            problems += checked.problems
            feasible[rest], reached_exact[rest], q[rest] = checked.feasible, checked.ok.sum(axis=1), checked.q
        values = exact_scores(maps, q, score)
        for j, i in enumerate(chosen):
            passed = bool(feasible[j])
            tried.append(Candidate(P[i].copy(), int(i), float(found.worst[i]), int(found.counts[i]),
                                   int(found.sure[i].sum()), passed, int(reached_exact[j]),
                                   float(values[j].min()) if passed else float("nan"), q[j], int(ok[j].sum())))
        if progress is not None:
            progress("check", min(first + batch, len(order)), len(order))
        if sum(c.feasible for c in tried) >= candidates:
            break
    tried.sort(key=lambda c: (not c.feasible, -c.score if c.feasible else 0.0))
    seconds["check"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - start
    return PlacementResult(P, free, found, decided, tried, score, seconds, problems)


def _spread(part: Reach, keep: np.ndarray, n: int, k: int, hands: list[str]) -> Reach:
    """`part` (rows for the placements `keep`) as a Reach of all n placements (the others reach nothing)."""
    out = Reach(np.zeros((n, k), bool), np.zeros((n, k), bool), np.zeros((n, k)), np.full((n, k), -1, np.int64),
                {hand: np.full((n, k), -1, np.int64) for hand in hands})
    out.reached[keep], out.sure[keep], out.score[keep], out.shared[keep] = part.reached, part.sure, part.score, \
        part.shared
    for hand in hands:
        out.rows[hand][keep] = part.rows[hand]
    return out

"""Witnesses: the maps' own configurations made exact and tested for collision, before a
placement is called feasible.

The pose maps know no collision: a pose they reach may be reachable only with an upper arm in
the torso, a hand in the head or a forearm in the table. For a (placement, pose) pair the maps
reach, each hand's arm searches for its pose from its cell's configuration (the arm alone, a few
milliseconds: :class:`~reljac.placement.refine.Refiner`); the whole robot's configuration (the
base at the placement, the shared joints at the maps' value, every arm where its search ended,
the other joints at the reference) is then tested against the collision model, every pair of it
(self-collision and obstacles; coal's distances through
:meth:`reljac.collision.CollisionModel.distances`). It is a *witness* when every hand converged,
within `tol`, and no pair is nearer than `min_distance`: an answer the exact check's independent
verification (:meth:`reljac.placement.Checker.verify`) accepts as it is. Where the first search
fails or collides, the arms search again from the configuration that reached the nearest pose at
the same placement (a path's poses are near each other), up to `retries` times. The joints that
are neither the base's, the shared ones nor the hands' chains' (a head, say) are held at the
reference, but may move out of the way: where a witness's only collisions involve the bodies
they move, each of them is tried at its lower and upper limit, then all at once at each. Last,
a pose still without a witness is searched once more, the whole robot with collision avoidance
(the exact check's search and verification, :class:`~reljac.placement.check.Checker`), from the
nearest witnessed pose's configuration at the same placement, else from the reference
configuration there, within `avoid_timeout` (a search that avoids collisions from where it
starts: from the arms' colliding answer it would stay stuck against the collision).

A pair without a witness is not proven infeasible (another configuration of the arms may be
free, the other joints may move): a placement all of whose poses have witnesses is feasible, the
others are left to the exact check. Nothing here depends on the robot: the collision model's
pairs (the robot's SRDF) say what may touch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..collision import CollisionModel
from ..ik import solve_many
from .check import Checker
from .inverse import PlacementMaps, Reach
from .refine import REFINE_TIMEOUT, Refiner
from .task import PlacementTask

RETRIES = 2  # searches again from the nearest witnessed pose at the same placement
AVOID_TIMEOUT = 0.05  # [s] the last search, with collision avoidance, of a pose that converged into a collision


@dataclass
class Witnessed:
    """Witnesses of n (placement, pose) pairs.

    Attributes:
        pairs: (n, 2) (placement index, pose index).
        converged: (n,) bool, every hand's search reached its pose within tol.
        free: (n,) bool, q passes the exact check's verification (every hand at its target, no
            collision pair nearer than min_distance).
        q: (n, nq) the configurations tested (the last one where no witness was found).
        seconds: [s] wall time.
    """

    pairs: np.ndarray
    converged: np.ndarray
    free: np.ndarray
    q: np.ndarray
    seconds: float = 0.0

    @property
    def ok(self) -> np.ndarray:
        """(n,) bool: a witness (converged and free)."""
        return np.asarray(self.converged & self.free)


class Witnesses:
    """Finds witnesses for one task's maps and collision model (module docstring).

    Args:
        maps: the hands' pose maps; task: the object's poses and grasps.
        collision: the robot's collision model (its pairs and obstacles), or None: a converged
            configuration is a witness.
        min_distance: [m] every pair at least this far apart.
        tol: [m, rad] each hand's error at most this; timeout: [s] each arm search's budget.
        retries: searches again from the nearest witnessed pose (0..).
        avoid_timeout: [s] the budget of the last search, with collision avoidance (0: none).
        workers: threads for the searches (default: every core).
    """

    def __init__(self, maps: PlacementMaps, task: PlacementTask, collision: CollisionModel | None = None, *,
                 min_distance: float = 0.01, tol: float = 1e-4, timeout: float = REFINE_TIMEOUT,
                 retries: int = RETRIES, avoid_timeout: float = AVOID_TIMEOUT, workers: int | None = None) -> None:
        self.maps, self.task, self.collision = maps, task, collision
        self.min_distance, self.retries, self.avoid_timeout = float(min_distance), int(retries), float(avoid_timeout)
        self.refiner = Refiner(maps, tol=tol, timeout=timeout, workers=workers)
        self.checker = Checker(maps.mobile, task, collision=collision, min_distance=min_distance, tol=tol,
                               timeout=avoid_timeout, workers=workers)
        self.others, self.moved = other_joints(maps)

    def colliding(self, q: np.ndarray) -> list[tuple[str, str]]:
        """The pairs of the collision model nearer than min_distance at q (nq,) (none without a model)."""
        if self.collision is None:
            return []
        near = self.collision.distances(q, within=self.min_distance, jacobians=False)
        return [pair for pair, d in zip(near.pairs, near.distance, strict=True) if d < self.min_distance - 1e-6]

    def free(self, q: np.ndarray) -> bool:
        """No pair of the collision model nearer than min_distance at q (nq,), with the other joints
        moved out of the way where that frees it (q is then changed in place; module docstring)."""
        if not np.isfinite(q).all():
            return False
        pairs = self.colliding(q)
        if not pairs:
            return True
        if not self.others or not all(a in self.moved or b in self.moved for a, b in pairs):
            return False
        for columns, values in self.others:
            moved = q.copy()
            moved[columns] = values
            if not self.colliding(moved):
                q[:] = moved
                return True
        return False

    def run(self, placements: np.ndarray, found: Reach, pairs: np.ndarray) -> Witnessed:
        """Witnesses of the (placement, pose) pairs (n, 2) the maps reach (`found`: their answer
        at every placement of `placements` (N, 3))."""
        start = time.perf_counter()
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        converged, q = self.refiner.solve(self.task, placements, found, pairs)
        free = np.array([bool(c) and self.free(x) for c, x in zip(converged, q, strict=True)], bool)
        for _ in range(self.retries):
            ok = converged & free
            again, starts = [], []
            for i in np.flatnonzero(~ok):
                m, k = pairs[i]
                near = np.flatnonzero(ok & (pairs[:, 0] == m))
                if len(near):
                    again.append(i)
                    starts.append(q[near[np.argmin(np.abs(pairs[near, 1] - k))]])
            if not again:
                break
            index = np.array(again)
            c, x = self.refiner.solve(self.task, placements, found, pairs[index], starts=np.array(starts))
            f = np.array([bool(ci) and self.free(xi) for ci, xi in zip(c, x, strict=True)], bool)
            better = c & f
            converged[index[better]], free[index[better]], q[index[better]] = True, True, x[better]
            if not better.any():
                break
        P = np.asarray(placements, dtype=float)
        for i in np.flatnonzero(converged & free):  # the exact check's own verification
            free[i] = self.checker.verify(P[pairs[i, 0]], int(pairs[i, 1]), q[i])
        last = np.flatnonzero(~(converged & free))
        if self.collision is not None and self.avoid_timeout > 0 and len(last):
            checker = self.checker
            starts = []
            for i in last:  # the nearest witnessed pose's configuration, else the reference
                m, k = pairs[i]
                near = np.flatnonzero(converged & free & (pairs[:, 0] == m))
                starts.append(q[near[np.argmin(np.abs(pairs[near, 1] - k))]] if len(near) else
                              self.maps.mobile.configuration(P[m]))
            targets = [checker.targets(P[m], k) for m, k in pairs[last]]
            results = solve_many(self.maps.mobile.robot, np.array(starts), checker.levels, targets, tol=checker.tol,
                                 timeout=self.avoid_timeout, seed=7, constraints=checker.constraints,
                                 workers=checker.workers, progress=False)
            for i, result in zip(last, results, strict=True):
                if result.converged and checker.verify(P[pairs[i, 0]], int(pairs[i, 1]), result.q):
                    converged[i], free[i], q[i] = True, True, result.q
        return Witnessed(pairs, converged, free, q, time.perf_counter() - start)


def other_joints(maps: PlacementMaps) -> tuple[list[tuple[np.ndarray, np.ndarray]], set[str]]:
    """The other joints' variants to try, as (q columns, values), and the links they move: each
    bounded 1-DoF joint that is neither the base joint, a shared joint nor on a hand's chain, at
    its lower then upper limit; then all of them at their lower, then upper limits."""
    mobile = maps.mobile
    model = mobile.robot.model
    chained = {mobile.joint, *maps.chains.shared, *(name for pmap in maps.maps.values()
                                                     for name in pmap.metadata["joints"])}
    joints = []
    for j in range(1, model.njoints):
        joint = model.joints[j]
        if model.names[j] in chained or joint.nq != 1:
            continue
        lo, hi = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
        if np.isfinite(lo) and np.isfinite(hi) and hi > lo:
            joints.append((j, joint.idx_q, float(lo), float(hi)))
    variants = [(np.array([at]), np.array([value])) for _, at, lo, hi in joints for value in (lo, hi)]
    if len(joints) > 1:
        at = np.array([j[1] for j in joints])
        variants += [(at, np.array([j[2] for j in joints])), (at, np.array([j[3] for j in joints]))]
    ids = {j[0] for j in joints}
    moved = set()
    for frame in model.frames:
        j = frame.parentJoint
        while j > 0 and j not in ids:
            j = model.parents[j]
        if j > 0:
            moved.add(frame.name)
    return variants, moved

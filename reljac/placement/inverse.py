"""The inverse of the pose maps: for each placement of the base and pose of the object, can every
hand be where the grasp puts it? Microseconds per (placement, pose) pair.

For a placement (x, y, yaw) the base frame B is at T_wB; hand h must be at
``T_Bh = T_wB^-1 T_wO T_Oh``, that is at ``T_Fh(s) = T_FB(s) T_Bh`` in the frame F of its map
for a value s of the shared joints (:mod:`reljac.placement.chains`). The pose of the object is
*reached* at the placement when, for some s of the grid, every hand's T_Fh(s) is in its pose map;
its map score is then the smallest of the hands' best manipulabilities (the maps' cells' best
samples), at the s where that is largest. When the shared joints only lift F along its z (TIAGo's
torso), the coordinates are computed once and only z moves with s.

This is the inverse reachability map of Reuleaux and RM4D, for two hands holding one object: it
is formed from the maps on the fly for the task's poses, never stored (a placement grid times the
poses is small; a 6-D map of the object's poses per grasp would be rebuilt for every grasp).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import MapError
from ..validation import real_array, short_repr
from .base import MobileBase
from .chains import HandChains, hand_chains, hand_names
from .orbits import rigid_inverse
from .posemap import PoseMap, check_robot
from .posemap_build import DEFAULT_BINS, pose_map
from .task import MAX_DISTANCE, PlacementTask


@dataclass
class PlacementMaps:
    """The pose maps of a task's hands in the frame F of their chains, and the shared joints.

    Attributes:
        mobile: the robot and its base joint.
        chains: F and the shared joints' grid (:class:`~reljac.placement.chains.HandChains`).
        maps: {hand frame: its :class:`~reljac.placement.posemap.PoseMap` in F}.
    """

    mobile: MobileBase
    chains: HandChains
    maps: dict[str, PoseMap]

    @property
    def hands(self) -> list[str]:
        return list(self.maps)

    @property
    def nbytes(self) -> int:
        return sum(m.nbytes for m in self.maps.values())


def placement_maps(mobile: MobileBase, hands: list[str], *, samples: int, voxel: float = 0.04,
                   bins: tuple[int, int, int] = DEFAULT_BINS, seed: int = 0,
                   progress: Callable[[int, int], None] | None = None, **kwargs: Any) -> PlacementMaps:
    """Build the pose maps of `hands` (each from `samples` samples, seeds seed, seed + 1, ...).

    Args:
        mobile: the robot with its base joint (:func:`~reljac.placement.mobile_base`).
        hands: the hand frames (the lead hand first).
        samples: random configurations per hand (:func:`~reljac.placement.pose_map`).
        voxel: [m] the cells' size in rho and z.
        bins: (psi, beta, gamma) angle bins.
        seed: the first hand's seed (the next hands': seed + 1, ...).
        progress: called as progress(samples done, samples of every map).
        **kwargs: :func:`~reljac.placement.pose_map`'s chunk, scheduler, workers, backend and
            connect_timeout.
    """
    hands = hand_names(hands)
    chains = hand_chains(mobile, hands, step=voxel)
    maps = {}
    total = samples * len(hands)
    for i, hand in enumerate(hands):
        def step(done: int, _: int, before: int = i * samples) -> None:
            if progress is not None:
                progress(before + done, total)

        maps[hand] = pose_map(mobile.robot, chains.frame, hand, samples=samples, voxel=voxel, bins=bins,
                              seed=seed + i, progress=step, **kwargs)
    return PlacementMaps(mobile, chains, maps)


def with_maps(mobile: MobileBase, hands: list[str], maps: dict[str, PoseMap]) -> PlacementMaps:
    """Maps built before (loaded from files) for `hands` on `mobile`, checked to fit.

    Raises:
        MapError: a hand without a map, a map of another robot or frame, or `mobile`, `hands` or
            `maps` of the wrong kind.
    """
    hands = hand_names(hands)
    if not isinstance(maps, Mapping) or not all(isinstance(m, PoseMap) for m in maps.values()):
        raise MapError(f"maps must be a dict {{hand frame: PoseMap}} (load_maps, placement_maps), got "
                       f"{short_repr(maps)}")
    chains = hand_chains(mobile, hands, step=min((m.grid.voxel for m in maps.values()), default=0.04))
    for hand in hands:
        if hand not in maps:
            raise MapError(f"no pose map of hand '{hand}' (maps of: {', '.join(maps) or 'none'})")
        pmap = check_robot(maps[hand], mobile.robot)
        if pmap.frame_a != chains.frame or pmap.frame_b != hand:
            raise MapError(f"the pose map of '{hand}' is of '{pmap.frame_b}' in '{pmap.frame_a}', not in "
                           f"'{chains.frame}' (the frame this task's hands hang from)")
    return PlacementMaps(mobile, chains, {hand: maps[hand] for hand in hands})


@dataclass
class Reach:
    """What the maps say of placements (N) and poses (K).

    Attributes:
        reached: (N, K) bool, the pose reached at the placement (every hand, one shared value).
        sure: (N, K) bool, reached with the margin too (the pose is not at the boundary of what
            the maps saw; without a margin, equal to reached).
        score: (N, K) the smallest best manipulability of the hands there (0 where unreached).
        shared: (N, K) int, the index of the shared joints' grid value chosen (-1 unreached): a
            sure one first, then the one of largest score.
        rows: {hand: (N, K) int}, the hand's invariant cell in its map's cells (-1 unreached).
    """

    reached: np.ndarray
    sure: np.ndarray
    score: np.ndarray
    shared: np.ndarray
    rows: dict[str, np.ndarray]

    @property
    def counts(self) -> np.ndarray:
        """(N,) poses reached at each placement."""
        return self.reached.sum(axis=1)

    @property
    def worst(self) -> np.ndarray:
        """(N,) the worst pose's score at each placement (0 unless every pose is reached)."""
        return np.where(self.reached.all(axis=1), self.score.min(axis=1, initial=math.inf), 0.0)

    def take(self, index: np.ndarray) -> Reach:
        """The rows (placements) `index` of every array."""
        return Reach(self.reached[index], self.sure[index], self.score[index], self.shared[index],
                     {hand: rows[index] for hand, rows in self.rows.items()})


def reach(maps: PlacementMaps, task: PlacementTask, placements: np.ndarray,
          margin: tuple[float, ...] | None = None, *, every_pose: bool = True) -> Reach:
    """What the maps say of every (placement, pose) pair (module docstring).

    Args:
        placements: (N, 3) (x [m], y [m], yaw [rad]).
        margin: (rho, z, psi, beta, phi, gamma) fractions of a cell, each in [0, 100]
            (:meth:`PoseMap.locate`; a MapError otherwise): a pose is *sure* when, for one shared
            value, each hand's pose moved that far along each coordinate, both ways, is in its map
            too. Tested only at the placements where the maps reach every pose (elsewhere sure is
            reached).
        every_pose: False: a placement is dropped at its first pose not reached (the poses are
            asked first, last, middle, then the rest); its later poses stay unreached, so its
            count is a lower bound. Every placement reaching every pose is answered in full.
    """
    check_hands(maps, task)
    margin = checked_margin(margin)
    P = real_array(placements)
    if P is None or not (P.shape == (3,) or (P.ndim == 2 and P.shape[1] == 3)) or not np.isfinite(P).all():
        given = short_repr(placements) if P is None else f"shape {P.shape}" if np.isfinite(P).all() else "non-finite"
        raise MapError(f"placements must be finite (x [m], y [m], yaw [rad]) rows, shape (N, 3) or (3,), got {given}")
    P = P.reshape(-1, 3)
    if len(P) and np.abs(P[:, :2]).max() > MAX_DISTANCE:
        raise MapError(f"placements' x and y [m] must be within {MAX_DISTANCE:g} m, got {np.abs(P[:, :2]).max():g}")
    found = _reach(maps, task, P, None, every_pose)
    complete = np.flatnonzero(found.reached.all(axis=1))
    if margin is not None and any(margin) and len(complete):
        again = _reach(maps, task, P[complete], margin, True)
        found.sure[complete] = again.sure
        found.score[complete], found.shared[complete] = again.score, again.shared
        for hand in found.rows:
            found.rows[hand][complete] = again.rows[hand]
    return found


MAX_MARGIN = 100.0  # [bins] the largest margin along a coordinate (a pose that far away is in no map)


def checked_margin(margin: Any) -> tuple[float, ...] | None:
    """`margin` as 6 finite fractions of a bin in [0, MAX_MARGIN] (rho, z, psi, beta, phi,
    gamma), or None; a MapError naming what is wrong."""
    if margin is None:
        return None
    values = real_array(margin)
    if values is None or values.shape != (6,) or not np.isfinite(values).all() or (values < 0).any() \
            or (values > MAX_MARGIN).any():
        raise MapError(f"margin must be None or 6 fractions of a bin in [0, {MAX_MARGIN:g}] (rho, z, psi, beta, "
                       f"phi, gamma), got {short_repr(margin)}")
    return tuple(float(x) for x in values)


def check_hands(maps: PlacementMaps, task: PlacementTask) -> None:
    """MapError unless the task's hands are the maps' hands (a hand without a map was not asked:
    every placement reached it)."""
    if sorted(task.grasps) != sorted(maps.hands):
        raise MapError(f"the task's hands ({', '.join(task.grasps)}) are not the maps' hands "
                       f"({', '.join(maps.hands)}): build maps for the task's hands (placement_maps)")


def pose_order(k: int) -> list[int]:
    """The order poses are asked in when placements drop out: first, last, middle, then by halves."""
    order: list[int] = []
    for i in [0, k - 1, *((k - 1) * np.arange(1, 2 * k) // (2 * k))]:
        if 0 <= i < k and i not in order:
            order.append(int(i))
    return order + [i for i in range(k) if i not in order]


def _reach(maps: PlacementMaps, task: PlacementTask, P: np.ndarray, margin: tuple[float, ...] | None,
           every_pose: bool) -> Reach:
    n, k = len(P), len(task)
    out = Reach(np.zeros((n, k), bool), np.zeros((n, k), bool), np.zeros((n, k)), np.full((n, k), -1, np.int64),
                {hand: np.full((n, k), -1, np.int64) for hand in maps.hands})
    T_Bw = rigid_inverse(maps.mobile.base_poses(P))
    alive = np.arange(n)
    for pose in (range(k) if every_pose else pose_order(k)):
        if not len(alive):
            break
        reached, sure, score, shared, rows = _reach_pose(maps, task, T_Bw[alive], margin, pose)
        out.reached[alive, pose], out.sure[alive, pose] = reached, sure
        out.score[alive, pose], out.shared[alive, pose] = score, shared
        for hand in out.rows:
            out.rows[hand][alive, pose] = rows[hand]
        if not every_pose:
            alive = alive[reached]
    return out


def _reach_pose(maps: PlacementMaps, task: PlacementTask, T_Bw: np.ndarray, margin: tuple[float, ...] | None,
                pose: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """(reached, sure, score, shared, {hand: row}), each (n,), of one pose from the bases T_Bw (n, 4, 4)."""
    n = len(T_Bw)
    chains = maps.chains
    shifts = chains.shifts
    S = len(chains.T_BF)
    T_FB = rigid_inverse(chains.T_BF)
    ok, sure = np.ones((n, S), bool), np.ones((n, S), bool)
    worst = np.full((n, S), math.inf)
    found = {}
    for hand, pmap in maps.maps.items():
        T_Bh = T_Bw @ (task.poses[pose] @ task.grasps[hand])
        lifts = None if shifts is None else _lifts(pmap, shifts)
        if lifts is not None:
            hit, certain, row = pmap.locate(T_FB[0] @ T_Bh, shifts=lifts, margin=margin)
        else:  # every shared value at once: (S, n) poses in one call
            every_value = (T_FB[:, None] @ T_Bh[None]).reshape(S * n, 4, 4)
            hit, certain, row = (x.reshape(S, n).T for x in pmap.locate(every_value, margin=margin))
        ok &= hit
        sure &= certain
        worst = np.minimum(worst, pmap.manipulability(row.ravel()).reshape(row.shape))
        found[hand] = row
    sure &= ok
    value = np.where(ok, np.minimum(worst, 1e6), -1.0) + np.where(sure, 2e6, 0.0)
    best = np.argmax(value, axis=1)
    every = np.arange(n)
    hit = ok[every, best]
    return (hit, sure[every, best], np.where(hit, worst[every, best], 0.0), np.where(hit, best, -1),
            {hand: np.where(hit, row[every, best], -1) for hand, row in found.items()})


def _lifts(pmap: PoseMap, shifts: np.ndarray) -> np.ndarray | None:
    """The chains' lifts of F along its z (S,) [m] as shifts along the map's A's z: hand h's
    T_Fh(s) = Tz(-lift_s) T_Fh(0), a shift along A's z when A's z is along F's (else None: the
    caller locates each value whole)."""
    z_in_A = pmap.orbits.T_aA[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    if abs(abs(z_in_A[2]) - 1.0) > 1e-12:
        return None
    return -shifts * z_in_A[2]


def seeds(maps: PlacementMaps, task: PlacementTask, placements: np.ndarray, found: Reach) -> np.ndarray:
    """(N, K, nq) configurations to start the exact check from: the reference configuration at
    each placement, the shared joints at the value the maps chose, and each hand's chain at its
    cell's best sample turned towards the pose (:meth:`PoseMap.seeds`); NaN rows where a pose was
    not reached."""
    mobile, chains = maps.mobile, maps.chains
    P = np.asarray(placements, dtype=float).reshape(-1, 3)
    n, k = found.reached.shape
    out = np.full((n, k, mobile.robot.nq), np.nan)
    T_Bw = rigid_inverse(mobile.base_poses(P))
    T_FB = rigid_inverse(chains.T_BF)
    for pose in range(k):
        hit = np.flatnonzero(found.reached[:, pose])
        if not len(hit):
            continue
        q = np.array([mobile.configuration(p) for p in P[hit]])
        s = found.shared[hit, pose]
        q[:, chains.q_index] = chains.values[s]
        for hand, pmap in maps.maps.items():
            T_Fh = T_FB[s] @ T_Bw[hit] @ (task.poses[pose] @ task.grasps[hand])
            q[:, pmap.columns] = pmap.seeds(T_Fh, found.rows[hand][hit, pose])
        out[hit, pose] = q
    return out

"""Deciding the poses the maps are unsure of: a short IK search per hand from the maps' own
configuration, the base and the shared joints held where the maps put them.

The maps say a pose is reached when its cell is; near the boundary of what a hand reaches, a cell
is only partly reachable (:mod:`reljac.placement.posemap`). A pose the maps reach but not *surely*
(a margin away it leaves the map: :func:`reljac.placement.inverse.reach`) is decided here: for
each hand, the arm alone (every other joint locked at the reference configuration, so F is where
the maps' shared value puts it) searches for T_Fh from the configuration of the hand's cell,
within a few milliseconds (:func:`reljac.ik.solve_many`). The pose counts when every hand
converges. No collision is checked here (the exact check does).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from ..exceptions import MapError
from ..ik import FrameTask, solve_many
from ..relative import Kinematics
from .inverse import PlacementMaps, Reach
from .orbits import rigid_inverse
from .task import PlacementTask

REFINE_TIMEOUT = 0.003  # [s] per hand and pose


class Refiner:
    """Per-hand IK for unsure (placement, pose) pairs (module docstring).

    Args:
        maps: the placement maps.
        tol: [m, rad] the hand's error at most this.
        timeout: [s] each search's budget.
        workers: threads (default: every core).
    """

    def __init__(self, maps: PlacementMaps, *, tol: float = 1e-4, timeout: float = REFINE_TIMEOUT,
                 workers: int | None = None) -> None:
        self.maps, self.tol, self.timeout, self.workers = maps, tol, timeout, workers
        mobile = maps.mobile
        self.arms = {}
        for hand, pmap in maps.maps.items():
            joints = [n for n in pmap.metadata["joints"] if n in mobile.robot.joint_names]  # (not mimic joints)
            arm = mobile.robot.locked([n for n in mobile.robot.joint_names if n not in joints], q=mobile.reference)
            if arm.joint_names != joints:
                raise MapError(f"the arm of '{hand}' has joints {arm.joint_names}, its map {joints}")
            T_wF = Kinematics(arm, arm.neutral()).placement(maps.chains.frame).homogeneous
            task = FrameTask(hand)
            task.set_target(pin.SE3.Identity())  # (issue 42: solve_many wants a target set before)
            self.arms[hand] = (arm, T_wF, task)

    def run(self, task: PlacementTask, placements: np.ndarray, found: Reach, pairs: np.ndarray) -> np.ndarray:
        """(n,) bool: each (placement, pose) pair of `pairs` (n, 2) reached by every hand."""
        return self.solve(task, placements, found, pairs)[0]

    def solve(self, task: PlacementTask, placements: np.ndarray, found: Reach, pairs: np.ndarray,
              starts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ok (n,) bool, q (n, nq)) of the (placement, pose) pairs `pairs` (n, 2): ok where every
        hand's search converged; q the whole robot's configuration, the base at the placement, the
        shared joints at the maps' value, every hand's chain where its search ended, the other
        joints at the reference (NaN rows where a hand's pose was not reached). Each search starts
        from the hand's cell's configuration turned towards the pose (:meth:`PoseMap.seeds`), or
        from the hand's chain in `starts` (n, nq) where given."""
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        mobile, chains = self.maps.mobile, self.maps.chains
        P = np.asarray(placements, dtype=float)
        ok = np.ones(len(pairs), bool)
        q = np.array([mobile.configuration(P[m]) for m in pairs[:, 0]]).reshape(len(pairs), mobile.robot.nq)
        if not len(pairs):
            return ok, q
        m, k = pairs[:, 0], pairs[:, 1]
        shared = found.shared[m, k]
        q[:, chains.q_index] = chains.values[np.maximum(shared, 0)]
        T_Bw = rigid_inverse(mobile.base_poses(P[m]))
        T_FB = rigid_inverse(chains.T_BF)[shared]
        for hand, pmap in self.maps.maps.items():
            arm, T_wF, hand_task = self.arms[hand]
            T_Fh = T_FB @ T_Bw @ (task.poses[k] @ task.grasps[hand])
            columns = pmap.columns
            first = pmap.seeds(T_Fh, found.rows[hand][m, k]) if starts is None else starts[:, columns]
            have = np.isfinite(first).all(axis=1)
            ok &= have
            q[~have] = np.nan
            q[np.flatnonzero(have)[:, None], columns[None, :]] = first[have]
            todo = np.flatnonzero(ok)
            if not len(todo):
                continue
            targets = [pin.SE3(T_wF @ T) for T in T_Fh[todo]]
            results = solve_many(arm, first[todo], [[hand_task]], targets, tol=self.tol, timeout=self.timeout,
                                 workers=self.workers, progress=False)
            ok[todo] = [r.converged for r in results]
            q[todo[:, None], columns[None, :]] = np.array([r.q for r in results]).reshape(len(todo), len(columns))
        return ok, q


def refined(maps: PlacementMaps, task: PlacementTask, placements: np.ndarray, found: Reach, *,
            only_complete: bool = True, **kwargs: Any) -> np.ndarray:
    """(N, K) bool: the pairs the maps reach surely, and the unsure ones the arms reach
    (:class:`Refiner`); with `only_complete`, unsure pairs are decided only at placements where
    the maps reach every pose (elsewhere the placement fails anyway)."""
    decided = np.array(found.sure, dtype=bool)
    unsure = np.asarray(found.reached & ~found.sure)
    if only_complete:
        unsure &= np.asarray(found.reached.all(axis=1))[:, None]
    pairs = np.argwhere(unsure)
    if len(pairs):
        decided[unsure] = Refiner(maps, **kwargs).run(task, placements, found, pairs)
    return decided

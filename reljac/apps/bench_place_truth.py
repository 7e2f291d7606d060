"""The brute-force truth of ``reljac bench place``: for every placement of a dense grid, is every
pose of the task reachable without collision? Decided by :func:`reljac.ik.solve_many` with
collision avoidance alone (no pose map), every answer checked again independently
(:meth:`reljac.placement.Checker.verify`).

Placements where some hand's pose is farther from the base than the robot's reach (a bound from
the kinematic tree, :func:`reljac.maps.grid.reach_bound`) are infeasible without a search.
The others are searched pose by pose: a placement leaves at its first pose no search reaches.
A pose is searched from the reference configuration at the placement (pose 0) or from the
placement's configuration at the pose before (then, if that fails, from the reference with other
restart seeds); one that fails is searched again from the configurations that reached it at the
neighbouring placements of the grid (a step in x, y or yaw), up to three of them; and last
without collision avoidance in the search, an answer kept only if it collides with nothing (the
exact check's rejection turn, :mod:`reljac.placement.check`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..ik import solve_many
from ..maps.grid import reach_bound
from ..placement import Checker, MobileBase, PlacementTask
from ..placement.orbits import rigid_inverse


@dataclass
class Truth:
    """The brute force's answer: feasible (N,) bool, searched (N,) bool (inside the reach bound),
    searches (problems solved), seconds."""

    feasible: np.ndarray
    searched: np.ndarray
    searches: int
    seconds: float


def within_reach(mobile: MobileBase, task: PlacementTask, placements: np.ndarray) -> np.ndarray:
    """(N,) bool: every hand's pose, at every pose, within the reach bound of the base frame."""
    robot = mobile.robot
    T_Bw = rigid_inverse(mobile.base_poses(placements))
    ok = np.ones(len(placements), bool)
    for hand in task.hands:
        bound = reach_bound(robot, robot.frame_id(mobile.base_frame), robot.frame_id(hand))
        p = (T_Bw[:, None] @ task.hand_poses(hand)[None])[..., :3, 3]  # (N, K, 3)
        ok &= (np.linalg.norm(p, axis=2) <= bound).all(axis=1)
    return ok


def _neighbours(placements: np.ndarray, steps: np.ndarray) -> list[list[int]]:
    key = {tuple(np.round(p / steps).astype(int)): i for i, p in enumerate(placements)}
    out = []
    for p in placements:
        k = np.round(p / steps).astype(int)
        near = []
        for axis in range(3):
            for sign in (-1, 1):
                kk = k.copy()
                kk[axis] += sign
                j = key.get(tuple(kk))
                if j is not None:
                    near.append(j)
        out.append(near)
    return out


def brute_force(checker: Checker, placements: np.ndarray, steps: np.ndarray, *, timeout: float = 0.05,
                progress: Callable[[int, int], None] | None = None) -> Truth:
    """The truth of every placement (module docstring); steps: the grid's (x, y, yaw) steps."""
    start = time.perf_counter()
    mobile, task = checker.mobile, checker.task
    P = np.asarray(placements, dtype=float)
    n, K, nq = len(P), len(task), mobile.robot.nq
    searched = within_reach(mobile, task, P)
    alive = searched.copy()
    ok = np.zeros((n, K), bool)
    q = np.zeros((n, K, nq))
    reference = np.array([mobile.configuration(p) for p in P])
    near = _neighbours(P, steps)
    searches = 0

    def run(index: np.ndarray, starts: np.ndarray, pose: int, seed: int, avoid: bool = True) -> None:
        nonlocal searches
        if not len(index):
            return
        targets = [checker.targets(P[i], pose) for i in index]
        results = solve_many(mobile.robot, starts, checker.levels, targets, tol=checker.tol, timeout=timeout,
                             seed=seed, constraints=checker.constraints if avoid else (), workers=checker.workers,
                             progress=False)
        searches += len(index)
        for i, result in zip(index, results, strict=True):
            if result.converged and checker.verify(P[i], pose, result.q):
                ok[i, pose], q[i, pose] = True, result.q

    for pose in range(K):
        index = np.flatnonzero(alive)
        run(index, reference[index] if pose == 0 else q[index, pose - 1], pose, 1000 * pose)
        if pose > 0:  # (pose 0 started from the reference already)
            failed = index[~ok[index, pose]]
            run(failed, reference[failed], pose, 1000 * pose + 500)
        for turn in range(3):
            goods = [(int(i), [j for j in near[i] if ok[j, pose]]) for i in index if not ok[i, pose]]
            pairs = [(i, good[turn]) for i, good in goods if len(good) > turn]
            if not pairs:
                break
            run(np.array([i for i, _ in pairs]), np.array([mobile.configuration(P[i], q[j, pose]) for i, j in pairs]),
                pose, 1000 * pose + 600 + 100 * turn)
        if checker.constraints:  # one turn of a rejection loop (issue 42: see reljac.placement.check)
            failed = index[~ok[index, pose]]
            run(failed, reference[failed] if pose == 0 else q[failed, pose - 1], pose, 1000 * pose + 900, avoid=False)
        alive &= ok[:, pose]
        if progress is not None:
            progress(pose + 1, K)
    return Truth(alive, searched, searches, time.perf_counter() - start)

"""The exact check: configurations that reach every pose of the task from a placement, found by
:func:`reljac.ik.solve_many` with collision avoidance, and checked again independently.

For placement P and pose k one IK problem: level 0 holds the base frame at T_wB(P) (x, y and yaw
for a planar base: its other rows are constant; all six for a floating base) and every hand at
``T_wO_k T_Oh``; level 1 is a posture task towards the reference configuration. Collision
avoidance (:class:`reljac.ik.CollisionAvoidance`, with the obstacles of the collision model) is
held above both. Every (placement, pose) problem goes to one ``solve_many`` call, on every core.

Each problem starts from a seed (the pose maps' configuration, :meth:`PoseMap.seeds`, when the
caller gives one, else the reference configuration at the placement). A problem that fails is
tried again from the reference configuration, then from the configuration that reached the
neighbouring pose at the same placement, with other restart seeds; then, with a collision model,
once more without collision avoidance in the search, from the first seed (a search that stops
against a collision does not restart as a loop that rejects colliding answers does: issue 42;
this round is that loop's one turn). An answer counts only when an independent check agrees:
each hand within `tol` of its target (position [m] and angle [rad], from Pinocchio's
placements), the base at the placement, and no collision pair nearer than the avoidance's
minimum distance (coal's distances, :meth:`CollisionModel.distances`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin

from ..collision import CollisionModel
from ..ik import CollisionAvoidance, FrameTask, PostureTask, solve_many
from ..relative import Kinematics
from .base import PLANAR, MobileBase, as_placements
from .task import PlacementTask

POSTURE_WEIGHT = 0.01
CHECK_SLACK = 10.0  # the independent check allows errors up to tol * CHECK_SLACK (its own rounding)
PLANAR_ROWS = (1.0, 1.0, 0.0, 0.0, 0.0, 1.0)  # x, y, yaw of a planar base (the other rows do not move)


@dataclass
class Checked:
    """The exact check of M placements and K poses.

    Attributes:
        placements: (M, 3) (x [m], y [m], yaw [rad]).
        ok: (M, K) bool, pose k reached from placement m (checked independently).
        q: (M, K, nq) the configurations (the last one tried where not ok).
        attempts: (M, K) int, searches run for each problem.
        seconds: [s] wall time of the check.
    """

    placements: np.ndarray
    ok: np.ndarray
    q: np.ndarray
    attempts: np.ndarray
    seconds: float = 0.0
    problems: int = field(default=0)

    @property
    def feasible(self) -> np.ndarray:
        """(M,) bool: every pose reached."""
        return np.asarray(self.ok.all(axis=1))


class Checker:
    """Runs exact checks for one robot, task and collision model (the tasks and the avoidance are
    set up once).

    Args:
        mobile: the robot and its base joint.
        task: the object's poses and the grasps.
        collision: a :class:`~reljac.collision.CollisionModel` of ``mobile.robot`` (self-collision
            pairs and obstacles), or None for no collision avoidance.
        min_distance: [m] the distance every collision pair keeps.
        tol: [m, rad] each task's error at most this.
        timeout: [s] the budget of one search.
        retries: rounds of retries for the problems that failed (0..3; the third, with a
            collision model, searches without collision avoidance and rejects colliding answers).
        workers: threads (default: every core).
    """

    def __init__(self, mobile: MobileBase, task: PlacementTask, *, collision: CollisionModel | None = None,
                 min_distance: float = 0.01, tol: float = 1e-4, timeout: float = 0.05, retries: int = 3,
                 workers: int | None = None) -> None:
        self.mobile, self.task, self.collision = mobile, task, collision
        self.min_distance, self.tol, self.timeout, self.retries = min_distance, tol, timeout, retries
        self.workers = workers or os.cpu_count() or 1
        robot = mobile.robot
        rows = PLANAR_ROWS if mobile.kind == PLANAR else (1.0,) * 6
        self.base = FrameTask(mobile.base_frame, weight=list(rows))
        self.hands = {hand: FrameTask(hand) for hand in task.hands}
        for t in (self.base, *self.hands.values()):  # (issue 42: solve_many needs targets set before)
            t.set_target(pin.SE3.Identity())
        posture = PostureTask(robot, weight=POSTURE_WEIGHT)
        posture.set_target(mobile.reference)
        self.levels = [[self.base, *self.hands.values()], [posture]]
        self.constraints: list[Any] = []
        if collision is not None:
            self.constraints.append(CollisionAvoidance(robot, model=collision, min_distance=min_distance,
                                                       influence_distance=min_distance + 0.04))

    def targets(self, placement: np.ndarray, pose: int) -> dict:
        """The targets of one problem: {task: pin.SE3}."""
        out = {self.base: pin.SE3(self.mobile.base_poses(placement)[0])}
        for hand, t in self.hands.items():
            out[t] = pin.SE3(self.task.poses[pose] @ self.task.grasps[hand])
        return out

    def run(self, placements: Any, seeds: np.ndarray | None = None, *,
            progress: Callable[[int, int], None] | None = None) -> Checked:
        """Check every pose at every placement (M, 3); seeds: (M, K, nq) starts (NaN rows: none)."""
        import time

        start = time.perf_counter()
        P = as_placements(placements)
        M, K, nq = len(P), len(self.task), self.mobile.robot.nq
        ok = np.zeros((M, K), bool)
        q = np.zeros((M, K, nq))
        attempts = np.zeros((M, K), np.int64)
        reference = np.array([self.mobile.configuration(p) for p in P]).reshape(M, nq)
        first = np.repeat(reference[:, None, :], K, axis=1)
        if seeds is not None:
            given = np.isfinite(seeds).all(axis=2)
            first[given] = seeds[given]
        todo = [(m, k) for m in range(M) for k in range(K)]
        total = len(todo)
        problems = 0
        for round_ in range(1 + max(0, int(self.retries))):
            if not todo:
                break
            if round_ == 0:
                starts = [first[m, k] for m, k in todo]
            elif round_ == 1:
                starts = [reference[m] for m, _ in todo]
            elif round_ == 2:
                starts = [_neighbour(q, ok, m, k, reference[m]) for m, k in todo]
            elif self.collision is not None:  # one turn of a rejection loop (issue 42)
                starts = [first[m, k] for m, k in todo]
            else:
                break
            self._solve(P, todo, np.array(starts), ok, q, attempts, seed=1000 * round_, avoid=round_ < 3)
            problems += len(todo)
            todo = [(m, k) for m, k in todo if not ok[m, k]]
            if progress is not None:
                progress(total - len(todo), total)
        return Checked(P, ok, q, attempts, time.perf_counter() - start, problems)

    def _solve(self, P: np.ndarray, todo: list[tuple[int, int]], starts: np.ndarray, ok: np.ndarray, q: np.ndarray,
               attempts: np.ndarray, seed: int, avoid: bool = True) -> None:
        targets = [self.targets(P[m], k) for m, k in todo]
        results = solve_many(self.mobile.robot, starts, self.levels, targets, tol=self.tol, timeout=self.timeout,
                             seed=seed, constraints=self.constraints if avoid else (), workers=self.workers,
                             progress=False)
        for (m, k), result in zip(todo, results, strict=True):
            attempts[m, k] += 1
            passed = bool(result.converged) and self.verify(P[m], k, result.q)
            if passed or not ok[m, k]:
                q[m, k] = result.q
            ok[m, k] = passed

    def verify(self, placement: np.ndarray, pose: int, q: np.ndarray) -> bool:
        """The independent check of one answer (module docstring)."""
        robot = self.mobile.robot
        kin = Kinematics(robot, q)
        slack = self.tol * CHECK_SLACK
        base = self.mobile.placement_of(q)
        if np.abs(base[:2] - placement[:2]).max() > slack or abs(_wrap(base[2] - placement[2])) > slack:
            return False
        for hand in self.hands:
            target = pin.SE3(self.task.poses[pose] @ self.task.grasps[hand])
            error = target.actInv(kin.placement(hand))
            if np.linalg.norm(error.translation) > slack or np.linalg.norm(pin.log3(error.rotation)) > slack:
                return False
        if self.collision is not None:
            near = self.collision.distances(q, within=self.min_distance, jacobians=False)
            if len(near.distance) and near.distance.min() < self.min_distance - 1e-6:
                return False
        return True


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


def _neighbour(q: np.ndarray, ok: np.ndarray, m: int, k: int, fallback: np.ndarray) -> np.ndarray:
    """The configuration of the nearest pose reached at placement m (a path's poses are near each
    other), or `fallback`."""
    reached = np.flatnonzero(ok[m])
    if not len(reached):
        return fallback
    return q[m, reached[np.argmin(np.abs(reached - k))]]

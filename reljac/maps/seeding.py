"""seed_for: a configuration from a capability map to start IK from, for a target T_ab."""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from ..exceptions import MapError
from ..poses import as_se3
from ..robot import Robot
from ..validation import as_vector, short_repr
from .result import CapabilityMap

ORIENTATION_WEIGHT = 0.1  # [m/rad]: with a robot, candidates are ranked by |dp| + 0.1 * angle


def seed_for(cmap: CapabilityMap, target: Any, *, robot: Robot | str | None = None,
             candidates: int = 16) -> np.ndarray:
    """A configuration (nq,) from the map to start IK from for the target, from a's frame.

    Args:
        cmap: a capability map of b in a.
        target: T_ab (``pin.SE3`` or (4, 4)), or p_ab (3,) [m] in a.
        robot: the map's robot (a Robot, a robot name or a URDF path). Without it, the best_q of
            the reached voxel nearest the target position: of the voxels whose centres are nearest
            (within 1e-9 m), the one with the largest coverage index, then the largest best
            manipulability, then the smallest flat index. With it (and a pose target), the best_q
            of the `candidates` nearest reached voxels whose T_ab is closest to the target, by
            |p_ab - p_target| + 0.1 m/rad x the rotation angle between them (one batched
            kinematics call).
        candidates: an integer >= 1.

    Use it as q0 of :func:`reljac.ik.solve` with a relative task from a to b.

    Raises:
        MapError: the map has no reached voxel, or is of another robot; candidates not an
        integer >= 1. TaskError: a malformed target. URDFError: a robot name or path that does
        not load.
    """
    if not isinstance(cmap, CapabilityMap):
        raise MapError(f"cmap must be a CapabilityMap (from capability_map or load_map), not {type(cmap).__name__}")
    if isinstance(candidates, (bool, np.bool_)) or not isinstance(candidates, (int, np.integer)) or candidates < 1:
        raise MapError(f"candidates must be an integer >= 1 (the nearest reached voxels compared), "
                       f"not {short_repr(candidates)}")
    if robot is not None and not isinstance(robot, Robot):
        robot = Robot.load(robot)  # a name or URDF path, as capability_map takes
    pose = isinstance(target, pin.SE3) or np.shape(target) == (4, 4)
    if pose:
        T = as_se3(target, "target T_ab")
        p = T.translation
    else:
        p = as_vector(target, 3, "target position p_ab")
    reached = cmap.reached_voxels()
    if reached.size == 0:
        raise MapError("the capability map has no reached voxel to seed from")
    distance = np.linalg.norm(cmap.grid.centers(reached) - p, axis=1)
    if robot is not None and pose:
        return _closest_pose(cmap, robot, T, reached, distance, candidates)
    near = np.flatnonzero(distance <= distance.min() + 1e-9)
    coverage = cmap.coverage_index().ravel()[reached[near]]
    manipulability = cmap.best_manipulability.ravel()[reached[near]]
    pick = near[np.lexsort((reached[near], -manipulability, -coverage))[0]]
    return cmap.best_q[pick].copy()


def _closest_pose(cmap: CapabilityMap, robot: Robot, T: pin.SE3, reached: np.ndarray, distance: np.ndarray,
                  candidates: int) -> np.ndarray:
    from .compiled import relative_kinematics
    from .result import check_robot

    check_robot(cmap, robot)
    rows = np.argsort(distance, kind="stable")[:candidates]
    Q = cmap.best_q[rows]
    poses, _ = relative_kinematics(robot, Q, cmap.metadata["frame_a"], cmap.metadata["frame_b"])
    position = np.linalg.norm(poses[:, :3, 3] - T.translation, axis=1)
    cos = np.clip((np.einsum("nij,ij->n", poses[:, :3, :3], T.rotation) - 1.0) / 2.0, -1.0, 1.0)
    score = position + ORIENTATION_WEIGHT * np.arccos(cos)
    return Q[int(np.argmin(score))].copy()

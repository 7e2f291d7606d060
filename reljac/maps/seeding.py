"""seed_for: a configuration from a capability map to start IK from, for a target T_ab."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..exceptions import MapError
from ..validation import as_se3, as_vector
from .result import CapabilityMap


def seed_for(cmap: CapabilityMap, target) -> np.ndarray:
    """The best_q of the reached voxel nearest the target position, shape (nq,).

    Args:
        cmap: a capability map of b in a.
        target: T_ab (``pin.SE3`` or (4, 4)), or p_ab (3,) [m] in a: only the position is used.

    Of the reached voxels whose centres are nearest to p_ab (within 1e-9 m), the one with the
    largest coverage index, then the largest best manipulability, then the smallest flat index.
    Use it as q0 of :func:`reljac.ik.solve` with a relative task from a to b.

    Raises:
        MapError: the map has no reached voxel. TaskError: a malformed target.
    """
    if isinstance(target, pin.SE3) or np.shape(target) == (4, 4):
        p = as_se3(target, "target T_ab").translation
    else:
        p = as_vector(target, 3, "target position p_ab")
    reached = cmap.reached_voxels()
    if reached.size == 0:
        raise MapError("the capability map has no reached voxel to seed from")
    distance = np.linalg.norm(cmap.grid.centers(reached) - p, axis=1)
    near = np.flatnonzero(distance <= distance.min() + 1e-9)
    coverage = cmap.coverage_index().ravel()[reached[near]]
    manipulability = cmap.best_manipulability.ravel()[reached[near]]
    pick = near[np.lexsort((reached[near], -manipulability, -coverage))[0]]
    return cmap.best_q[pick].copy()

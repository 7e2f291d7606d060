"""The axis-aligned bounding box of a robot as displayed: its visual geometry, or its frames.

Positions in the world frame w [m]. Coal's local bounding boxes already include the URDF's mesh
scale (meshes are scaled when loaded), so ``meshScale`` is not applied again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .camera import box_corners


def geometry_corners(visual_model: Any, visual_data: Any) -> np.ndarray:
    """Corners (8 k, 3) in w of the local bounding boxes of the k visual geometries that have one,
    at the placements ``visual_data.oMg`` (as last displayed)."""
    corners = []
    for geom, oMg in zip(visual_model.geometryObjects, visual_data.oMg, strict=True):
        try:
            geom.geometry.computeLocalAABB()
            box = geom.geometry.aabb_local
            lo, hi = np.asarray(box.min_, dtype=float), np.asarray(box.max_, dtype=float)
        except Exception:  # a shape without a bounding box: its origin only
            lo = hi = np.zeros(3)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))) or np.any(lo > hi):
            lo = hi = np.zeros(3)
        corners.append(box_corners(lo, hi) @ oMg.rotation.T + oMg.translation)
    return np.concatenate(corners) if corners else np.zeros((0, 3))


def robot_box(visual_model: Any, visual_data: Any, oMf: Any) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) corners (3,) of the box around the robot's visual geometry in w; around its
    frames' origins (the universe excepted) when it has no visual geometry."""
    points = geometry_corners(visual_model, visual_data)
    if points.shape[0] == 0:
        points = np.array([M.translation for M in list(oMf)[1:]] or [np.zeros(3)])
    return points.min(axis=0), points.max(axis=0)

"""The axis-aligned bounding box of a robot as displayed: its visual geometry, or its frames.

Positions in the world frame w [m]. Coal's local bounding boxes already include the URDF's mesh
scale (meshes are scaled when loaded), so ``meshScale`` is not applied again. The local boxes are
computed once per geometry model (:func:`local_corners`, slow for meshes); each display only
moves their corners.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .camera import box_corners


def local_corners(visual_model: Any) -> np.ndarray:
    """Corners (k, 8, 3), each in its geometry's frame, of the local bounding boxes of the k visual
    geometries (a shape without a finite box: 8 times its origin)."""
    corners = np.zeros((visual_model.ngeoms, 8, 3))
    for g, geom in enumerate(visual_model.geometryObjects):
        try:
            geom.geometry.computeLocalAABB()
            box = geom.geometry.aabb_local
            lo, hi = np.asarray(box.min_, dtype=float), np.asarray(box.max_, dtype=float)
        except Exception:  # a shape without a bounding box: its origin only
            lo = hi = np.zeros(3)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))) or np.any(lo > hi):
            lo = hi = np.zeros(3)
        corners[g] = box_corners(lo, hi)
    return corners


def geometry_corners(visual_model: Any, visual_data: Any, local: np.ndarray | None = None) -> np.ndarray:
    """Corners (8 k, 3) in w of the local bounding boxes of the k visual geometries, at the
    placements ``visual_data.oMg`` (as last displayed); `local`: :func:`local_corners`, if kept."""
    local = local_corners(visual_model) if local is None else local
    if local.shape[0] == 0:
        return np.zeros((0, 3))
    R = np.array([M.rotation for M in visual_data.oMg])  # (k, 3, 3)
    p = np.array([M.translation for M in visual_data.oMg])  # (k, 3)
    return (np.einsum("kij,kcj->kci", R, local) + p[:, None, :]).reshape(-1, 3)


def robot_points(visual_model: Any, visual_data: Any, oMf: Any, local: np.ndarray | None = None) -> np.ndarray:
    """Points (n, 3) in w [m] around the robot as displayed: the corners of its visual geometries'
    local boxes (:func:`geometry_corners`), or its frames' origins (the universe excepted) when it
    has no visual geometry. What the viewer's camera frames."""
    points = geometry_corners(visual_model, visual_data, local)
    if points.shape[0] == 0:
        points = np.array([M.translation for M in list(oMf)[1:]] or [np.zeros(3)])
    return points

"""A foot's sole read from the robot: the footprint of its collision geometry, as a SupportContact.

A foot's sole is the lowest face of the collision geometry rigidly attached to its frame (the
geometries on the frame's parent joint): the vertices of its boxes and meshes are expressed in
the frame, those within `tolerance` of the lowest one (along the frame's -z) are kept, and their
convex hull in the frame's x-y plane, at that lowest height, is the contact's points [m]. On
example-robot-data's Talos this reads 0.21 m x 0.13 m from the sole boxes of ``talos_box`` and
the same footprint (0.21 m x 0.124 m, rounded corners) from the meshes of ``talos``.
"""

from __future__ import annotations

import numpy as np

from .exceptions import SupportError
from .robot import FrameRef, Robot, as_robot
from .support import SupportContact, convex_hull
from .validation import as_float

SOLE_TOLERANCE = 0.005  # [m] vertices this close to the lowest one belong to the sole


def _vertices(geometry: object) -> np.ndarray | None:
    """The vertices (k, 3) of a box, mesh or convex hull in its own frame [m], else None (a mesh's
    vertices are scaled when Pinocchio loads it: its ``meshScale`` is not applied again)."""
    half = getattr(geometry, "halfSide", None)
    if half is not None:  # coal.Box
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        return signs * np.asarray(half, dtype=float)
    points = getattr(geometry, "vertices", None) or getattr(geometry, "points", None)
    if callable(points):
        points = points()
    if points is None:
        return None
    array = np.asarray(points, dtype=float).reshape(-1, 3)
    return array if len(array) else None


def sole_contact(robot: Robot, frame: FrameRef, *, tolerance: float = SOLE_TOLERANCE) -> SupportContact:
    """The sole of the foot whose frame is `frame`, read from the robot's collision geometry.

    Args:
        robot: the robot (its ``collision_model``).
        frame: the foot's frame (name or id); its z axis points up, out of the sole.
        tolerance: [m] vertices this close above the lowest one belong to the sole.

    Returns:
        a SupportContact on `frame` whose points are the footprint's corners in the frame [m].

    Raises:
        FrameNotFound: unknown frame.
        SupportError: no box or mesh is attached to the frame's body, or its lowest face spans
            no area (then give the sole's size: ``humanoid_stack(..., sole=(length, width))``).
    """
    robot = as_robot(robot)
    fid = robot.frame_id(frame)
    tolerance = as_float(tolerance, "tolerance [m]", minimum=0.0, error=SupportError)
    name = robot.model.frames[fid].name
    T_jf = robot.model.frames[fid].placement  # the frame in its parent joint
    joint = robot.model.frames[fid].parentJoint
    points = []
    geometry_model = robot.collision_model
    for g in [] if geometry_model is None else geometry_model.geometryObjects:
        if g.parentJoint != joint:
            continue
        local = _vertices(g.geometry)
        if local is None:
            continue
        T_fg = T_jf.actInv(g.placement)  # the geometry in the foot's frame
        points.append(local @ T_fg.rotation.T + T_fg.translation)
    if not points:
        raise SupportError(f"no box or mesh collision geometry is attached to the body of frame '{name}' to read "
                           "a sole from: give the sole's size, sole=(length, width) [m]")
    p = np.vstack(points)
    lowest = float(p[:, 2].min())
    sole = p[p[:, 2] <= lowest + tolerance]
    hull = convex_hull(sole)
    if len(hull) < 3:
        raise SupportError(f"the lowest face of the collision geometry of frame '{name}' spans no area: "
                           "give the sole's size, sole=(length, width) [m]")
    return SupportContact(frame, np.column_stack((hull, np.full(len(hull), lowest))))


__all__ = ["SOLE_TOLERANCE", "sole_contact"]

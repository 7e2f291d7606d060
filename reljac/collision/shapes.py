"""Shapes for obstacles (coal geometries) and convex hulls of meshes.

Sizes are in metres. Each shape is described in its own frame o: spheres, boxes, capsules and
cylinders are centred on o's origin, capsules and cylinders along o's z axis (``length`` is the
length of the cylindrical part: a capsule's total length is ``length + 2 radius``). Where o is
placed is the obstacle's business (:meth:`reljac.collision.CollisionModel.add_obstacle`).
"""

from __future__ import annotations

import math
import os
from typing import Any

import coal
import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..exceptions import CollisionError
from ..files import regular_file
from ..poses import as_se3
from ..validation import as_float, real_array

#: the largest size and distance from the frame's origin [m] an obstacle may have: coal's broad phase
#: and distances fail on coordinates of 1e12 m and beyond (1e20: "the bounding volume has a negative volume")
MAX_EXTENT = 1e6


def _size(x: ArrayLike, what: str) -> float:
    size = as_float(x, what, minimum=0.0, strict=True, valid="a positive number of metres", error=CollisionError)
    if size > MAX_EXTENT:
        raise CollisionError(f"{what} must be at most {MAX_EXTENT:g} m, got {size:g}")
    return size


def sphere(radius: float) -> coal.Sphere:
    """A sphere of `radius` [m] centred on the obstacle frame's origin."""
    return coal.Sphere(_size(radius, "a sphere's radius"))


def box(size: ArrayLike) -> coal.Box:
    """A box with full side lengths ``size = (x, y, z)`` [m], centred on the origin."""
    array = real_array(size)  # None for booleans and text, which numpy would read as numbers
    sides = [] if array is None else [float(s) for s in array.reshape(-1)]
    if len(sides) != 3:
        raise CollisionError(f"a box's size must be 3 side lengths (x, y, z) [m], not {size!r}")
    return coal.Box(*(_size(s, "a box's side") for s in sides))


def capsule(radius: float, length: float) -> coal.Capsule:
    """A capsule along z: a cylinder of `length` [m] capped by half-spheres of `radius` [m]."""
    return coal.Capsule(_size(radius, "a capsule's radius"), _size(length, "a capsule's length"))


def cylinder(radius: float, length: float) -> coal.Cylinder:
    """A cylinder along z of `radius` and `length` [m], centred on the origin."""
    return coal.Cylinder(_size(radius, "a cylinder's radius"), _size(length, "a cylinder's length"))


def mesh(path: str | os.PathLike, scale: float = 1.0, *, convex: bool = True) -> coal.CollisionGeometry:
    """A triangle mesh from a file (STL, OBJ, DAE, ...: what coal's loader reads), scaled.

    With `convex` (default), its convex hull: distances are then signed (negative inside) and
    fast; without, the triangles themselves (distances never below 0).

    Raises:
        CollisionError: missing file, a file coal cannot read, or a bad scale.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise CollisionError(f"a mesh file path must be a string or a path, not {type(path).__name__}")
    regular_file(path, "mesh file", CollisionError)  # missing, a FIFO, a link loop, ...: named
    factor = _size(scale, "a mesh's scale")
    try:
        model = coal.MeshLoader().load(str(path), np.full(3, factor))
    except (RuntimeError, ValueError) as exc:
        raise CollisionError(f"coal cannot read the mesh file '{path}': {exc}") from None
    if getattr(model, "num_vertices", 0) == 0:
        raise CollisionError(f"the mesh file '{path}' has no vertices")
    rank = _rank(np.asarray(model.vertices(), dtype=float))
    if rank < 2:  # (coal measured -radius to such triangles)
        raise CollisionError(f"the mesh file '{path}' has no area: its vertices are on a line or at one point")
    return _hull(model, rank) if convex else model


def convex_hull(geometry: coal.CollisionGeometry) -> coal.CollisionGeometry:
    """The convex hull of a triangle mesh (a ``coal.Convex``); other geometries as they are.

    A mesh whose hull cannot be built (fewer than 4 points, all in a plane) is returned as it is:
    it is checked here, qhull is not asked (a flat mesh of 4 points crashed the process in it).
    """
    if not isinstance(geometry, coal.BVHModelBase):
        return geometry
    return _hull(geometry, 3 if geometry.convex is not None else _rank(np.asarray(geometry.vertices(), dtype=float)))


def _hull(geometry: coal.BVHModelBase, rank: int) -> coal.CollisionGeometry:
    """:func:`convex_hull` of a mesh whose vertices span `rank` dimensions (:func:`_rank`)."""
    if geometry.convex is None and rank < 3:
        return geometry
    if geometry.convex is None:
        try:
            geometry.buildConvexHull(True, "Qt")
        except (RuntimeError, ValueError):
            return geometry
    return geometry.convex if geometry.convex is not None else geometry


def _rank(vertices: np.ndarray) -> int:
    """The dimension (0-3) vertices (n, 3) span about their mean, to rounding of their extent: 3
    for a solid, 2 for a flat mesh, 1 on a line."""
    if not np.isfinite(vertices).all():
        return 0
    centred = vertices - vertices.mean(axis=0)
    extent = float(np.abs(centred).max()) if len(centred) else 0.0
    if extent == 0.0:
        return 0
    # (1e-6: qhull, asked for the hull of points 1e-8 of their extent off a plane, crashed too)
    return int((np.linalg.svd(centred, compute_uv=False) > 1e-6 * extent * math.sqrt(len(vertices))).sum())


def check_measurable(name: str, geometry: coal.CollisionGeometry, others: list[coal.CollisionGeometry]) -> None:
    """CollisionError unless coal measures the distance from `geometry` (obstacle `name`) to each
    kind of geometry in `others` (the robot's bodies and the obstacles): a pair of it, added now
    or later (a pair to an obstacle added without any), would break the model's distances."""
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    far = coal.Transform3s(np.eye(3), np.array([1e3, 0.0, 0.0]))
    for other in {type(g): g for g in others}.values():
        try:
            coal.distance(geometry, coal.Transform3s(), other, far, request, result)
        except (ValueError, RuntimeError):
            raise CollisionError(f"obstacle '{name}': coal cannot measure the distance from a "
                                 f"{type(geometry).__name__} to a {type(other).__name__}; use reljac.collision's "
                                 "sphere, box, capsule, cylinder or mesh") from None


def as_geometry(shape: Any) -> coal.CollisionGeometry:
    """A copy of a coal geometry given by the user, checked (the caller's object, changed later,
    does not change the model); a mesh is kept as given (its triangles, or its hull)."""
    if not isinstance(shape, coal.CollisionGeometry):
        raise CollisionError(
            "an obstacle's shape must be a coal geometry: use reljac.collision.sphere(r), box((x, y, z)), "
            f"capsule(r, length), cylinder(r, length) or mesh(path), not {type(shape).__name__}"
        )
    if isinstance(shape, (coal.Halfspace, coal.Plane)):
        raise CollisionError(f"an obstacle must be bounded, not a {type(shape).__name__}: use a large thin "
                             "box, e.g. box((4, 4, 0.02)) for a floor")
    shape = shape.clone()
    for attribute in _SIZES:  # a shape built with coal directly is checked as reljac's builders check
        if hasattr(shape, attribute):
            values = np.atleast_1d(np.asarray(getattr(shape, attribute), dtype=float))
            if not np.all(np.isfinite(values) & (values > 0) & (values <= MAX_EXTENT)):
                raise CollisionError(f"an obstacle's {type(shape).__name__} has {attribute} {values.tolist()}; "
                                     f"sizes must be positive finite numbers of metres, at most {MAX_EXTENT:g}")
    points = _points(shape)
    if points is not None and not (np.isfinite(points).all() and np.abs(points).max(initial=0.0) <= MAX_EXTENT):
        raise CollisionError(f"an obstacle's {type(shape).__name__} has a vertex that is not a finite number of "
                             f"metres within {MAX_EXTENT:g} of its origin")
    return shape


def _points(shape: coal.CollisionGeometry) -> np.ndarray | None:
    """The vertices (n, 3) of a mesh or a convex hull; None for a primitive shape."""
    if isinstance(shape, coal.BVHModelBase):
        return np.asarray(shape.vertices(), dtype=float).reshape(-1, 3) if shape.num_vertices else np.zeros((0, 3))
    if isinstance(shape, coal.ConvexBase):
        return np.asarray(shape.points(), dtype=float).reshape(-1, 3) if shape.num_points else np.zeros((0, 3))
    return None


_SIZES = ("radius", "halfSide", "halfLength", "radii")  # coal's size attributes of primitive shapes


def as_placement(placement: Any) -> pin.SE3:
    """An obstacle's pose T_fo: a ``pin.SE3``, a (4, 4) rigid transform, a position (3,) [m] or None
    (identity); its position within MAX_EXTENT of the frame's origin."""
    if placement is None:
        return pin.SE3.Identity()
    if not isinstance(placement, pin.SE3):
        arr = np.asarray(placement, dtype=object)
        if arr.shape == (3,):
            position = real_array(placement)  # None for booleans and text, which numpy reads as numbers
            if position is None or not np.isfinite(position).all():
                raise CollisionError(f"an obstacle's position must be 3 finite numbers [m], not {placement!r}")
            placement = pin.SE3(np.eye(3), position)
    try:
        T = as_se3(placement, "an obstacle's placement")
    except ValueError as exc:
        raise CollisionError(str(exc)) from None
    if np.abs(T.translation).max() > MAX_EXTENT:
        raise CollisionError(f"an obstacle's position must be within {MAX_EXTENT:g} m of its frame's origin in each "
                             f"coordinate, got {T.translation.tolist()}")
    return T

"""Support regions: where a robot's horizontal centre of mass may go while it stands on contacts.

A :class:`SupportContact` is a frame and points fixed in it (a foot's sole corners, a hand's
fingertips on a table) [m]. The support region of a set of contacts is the convex hull of all their
points projected on the horizontal plane of a reference frame (the world's x-y plane by default,
gravity along -z), as a :class:`SupportPolygon`: counter-clockwise vertices and one half-plane per
edge, ``n_i . x <= h_i`` with n_i the outward unit normal. Shrinking it by a margin moves every
edge inward by that distance.

Pure numpy geometry (the kinematics that place the contact points live in :mod:`reljac.relative`;
the limit that keeps the centre of mass inside, in :mod:`reljac.ik.limits.support`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .exceptions import SupportError
from .validation import MAX_COORDINATE, as_float, real_array, short_repr

COLLINEAR_TOLERANCE = 1e-12  # |cross| below this x scale^2 counts as collinear (scale: the points' extent)


@dataclass(frozen=True)
class SupportContact:
    """A contact: `points` (k, 3) [m] fixed in frame `frame` (a name or id), e.g. a sole's corners.

    ``SupportContact.rectangle(frame, length, width)`` makes a sole: the four corners of a
    length x width rectangle [m] in the frame's x-y plane, centred at `center` (3,) [m].
    """

    frame: str | int
    points: np.ndarray

    def __post_init__(self) -> None:
        points = real_array(self.points)
        if points is None or points.ndim != 2 or points.shape[1] != 3 or not points.shape[0] \
                or not np.isfinite(points).all() or np.abs(points).max() > MAX_COORDINATE:
            raise SupportError(f"points of the contact on '{self.frame}' must be (k, 3) finite numbers [m] within "
                               f"{MAX_COORDINATE:g}, got {short_repr(self.points)}")
        points = points.astype(float)  # a copy: the caller's array is never aliased
        points.flags.writeable = False
        object.__setattr__(self, "points", points)

    @classmethod
    def rectangle(cls, frame: str | int, length: float, width: float, center: ArrayLike = (0.0, 0.0, 0.0)
                  ) -> SupportContact:
        """The corners of a length (along x) by width (along y) rectangle [m] in `frame`."""
        half_x = 0.5 * as_float(length, "length [m]", minimum=0.0, strict=True, error=SupportError)
        half_y = 0.5 * as_float(width, "width [m]", minimum=0.0, strict=True, error=SupportError)
        c = real_array(center)
        if c is None or c.shape != (3,) or not np.isfinite(c).all():
            raise SupportError(f"center of the rectangle on '{frame}' must be 3 finite numbers [m], "
                               f"got {short_repr(center)}")
        corners = np.array([[half_x, half_y, 0.0], [-half_x, half_y, 0.0], [-half_x, -half_y, 0.0],
                            [half_x, -half_y, 0.0]])
        return cls(frame, corners + c)


@dataclass(frozen=True)
class SupportPolygon:
    """A convex polygon in a horizontal plane: `vertices` (n, 2) counter-clockwise [m], n >= 3;
    `normals` (n, 2) outward unit normals of the edges (edge i from vertex i to i + 1) and
    `offsets` (n,) [m]: x is inside when ``normals @ x <= offsets``."""

    vertices: np.ndarray
    normals: np.ndarray
    offsets: np.ndarray

    def signed_distance(self, x: ArrayLike) -> float:
        """min_i (h_i - n_i . x) [m] of the point x ((2,) or (3,) [m], only x-y used): > 0 inside
        (the distance to the nearest edge's line), < 0 outside.

        Raises:
            SupportError: x is not 2 or 3 finite real numbers.
        """
        p = real_array(x)
        if p is None or p.shape not in ((2,), (3,)) or not np.isfinite(p).all():
            raise SupportError(f"a point of the support plane must be 2 or 3 finite numbers [m] (x, y[, z]), "
                               f"got {short_repr(x)}")
        return float(np.min(self.offsets - self.normals @ p[:2]))

    def contains(self, x: ArrayLike, margin: float = 0.0) -> bool:
        """Whether the point x ((2,) or (3,) [m], only x-y used) is inside, `margin` [m] (>= 0)
        from every edge.

        Raises:
            SupportError: x is not 2 or 3 finite numbers, or margin is not a finite number >= 0.
        """
        margin = as_float(margin, "margin [m]", minimum=0.0, error=SupportError)
        return self.signed_distance(x) >= margin

    @property
    def area(self) -> float:
        """[m^2]."""
        x, y = self.vertices[:, 0], self.vertices[:, 1]
        return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))

    def shrunk(self, margin: float) -> SupportPolygon:
        """The polygon with every edge moved `margin` [m] inward (edges that vanish are dropped).

        Raises:
            SupportError: nothing with an area is left (the margin is too large for the region).
        """
        margin = as_float(margin, "margin [m]", minimum=0.0, error=SupportError)
        if margin == 0:
            return self
        vertices = self.vertices
        for n, h in zip(self.normals, self.offsets - margin, strict=True):
            vertices = _clip(vertices, n, h)
            if len(vertices) < 3:
                break
        try:
            return support_polygon(vertices)
        except SupportError:
            raise SupportError(f"a margin of {margin:g} m leaves nothing of the support region "
                               f"(area {self.area:.4g} m^2): use a smaller margin or wider contacts") from None


def _clip(vertices: np.ndarray, n: np.ndarray, h: float) -> np.ndarray:
    """The convex polygon `vertices` (counter-clockwise) cut by the half-plane n . x <= h."""
    out = []
    inside = vertices @ n - h
    for i in range(len(vertices)):
        j = (i + 1) % len(vertices)
        if inside[i] <= 0:
            out.append(vertices[i])
        if (inside[i] < 0 < inside[j]) or (inside[j] < 0 < inside[i]):
            t = inside[i] / (inside[i] - inside[j])
            out.append(vertices[i] + t * (vertices[j] - vertices[i]))
    return np.array(out).reshape(-1, 2)


def collinear_tolerance(scale: float | np.ndarray) -> np.ndarray:
    """|cross product| [m^2] at or below which three points of extent `scale` [m] count as on one
    line: COLLINEAR_TOLERANCE x scale^2. The one tolerance of every hull in reljac: convex_hull
    (and so support_polygon and the compiled SupportRegion, which uses the same constant) and the
    capability maps' vectorised test (:func:`reljac.maps.balance.inside_hull`)."""
    return COLLINEAR_TOLERANCE * np.maximum(np.square(scale), np.finfo(float).tiny)


def convex_hull(points: ArrayLike) -> np.ndarray:
    """The convex hull of points (k, 2) (or (k, 3): x-y used) as counter-clockwise vertices (n, 2),
    collinear and repeated points dropped.

    Two passes: Andrew's monotone chain on the points sorted by x then y with the exact turn test
    (a point leaves the chain on any turn that is not strictly to the left), which is correct for
    any order of the sort however close the x values are; then every vertex where the hull turns
    by at most the collinear tolerance (:func:`collinear_tolerance` of the points' extent) is
    dropped, one at a time, until none is left (dropping a vertex of a convex polygon leaves it
    convex). A tolerance inside the chain's test instead dropped true corners, or kept a chain out
    of convexity, where rounding noise in x ordered points of one line x = const (the front corners
    of two feet side by side) by that noise."""
    p = np.asarray(points, dtype=float)[:, :2]
    p = p[np.lexsort((p[:, 1], p[:, 0]))]
    extent = np.ptp(p, axis=0).max() if len(p) else 0.0
    tol = float(collinear_tolerance(extent))

    def chain(ordered: np.ndarray) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for x in ordered:
            while len(out) >= 2 and _cross(out[-2], out[-1], x) <= 0.0:
                out.pop()
            out.append(x)
        return out

    lower, upper = chain(p), chain(p[::-1])
    return np.array(drop_collinear(lower[:-1] + upper[:-1], tol)).reshape(-1, 2)


def drop_collinear(hull: list[np.ndarray], tol: float) -> list[np.ndarray]:
    """The vertices of a closed polygon (counter-clockwise) without those where it turns by at most
    `tol` (cross product [m^2]), each checked against its neighbours as they are once the others
    were dropped; fewer than three points come back as they are."""
    out = list(hull)
    changed = True
    while changed and len(out) >= 3:
        changed = False
        i = 0
        while i < len(out) and len(out) >= 3:
            if _cross(out[i - 1], out[i], out[(i + 1) % len(out)]) <= tol:
                del out[i]
                changed = True
            else:
                i += 1
    return out


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def support_polygon(points: ArrayLike | Sequence[ArrayLike]) -> SupportPolygon:
    """The convex hull of contact points (k, 2) or (k, 3) [m], x-y used, as a SupportPolygon.

    Raises:
        SupportError: the points are not finite numbers within MAX_COORDINATE, or span no area
            (fewer than three points not on one line: a single foot's edge, two points).
    """
    p = real_array(points)
    if p is None or p.ndim != 2 or p.shape[1] not in (2, 3) or not p.shape[0] or not np.isfinite(p).all() \
            or np.abs(p).max() > MAX_COORDINATE:
        raise SupportError(f"support points must be (k, 2) or (k, 3) finite numbers [m] within {MAX_COORDINATE:g}, "
                           f"got {short_repr(points)}")
    vertices = convex_hull(p)
    if len(vertices) < 3:
        raise SupportError(f"the {len(p)} support points span no area (all on one line or one point): "
                           "a support region needs three points not on one line")
    edges = np.roll(vertices, -1, axis=0) - vertices
    lengths = np.linalg.norm(edges, axis=1)
    normals = np.column_stack((edges[:, 1], -edges[:, 0])) / lengths[:, None]
    offsets = np.einsum("ij,ij->i", normals, vertices)
    for a in (vertices, normals, offsets):
        a.flags.writeable = False
    return SupportPolygon(vertices, normals, offsets)


__all__ = ["SupportContact", "SupportPolygon", "collinear_tolerance", "convex_hull", "support_polygon"]

"""Camera framing and overlay sizes from a robot's bounding box: pure numpy, no meshcat.

Everything is in the world frame w [m], z up; bad arguments raise ConfigurationError. A camera
pose is a position and a target (the point it looks at); ``direction`` always points from the
target toward the camera. Image coordinates (:func:`project`) are x to the right and y up, both
in [-1, 1] across the picture.

The viewer calls :func:`frame_points` on the corners of its geometries' own boxes at the displayed
configuration (:func:`frame_box` frames a given box) and :func:`overlay_scale` for the size of
triads and labels; nothing here needs a server or a browser, so the framing is tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import ConfigurationError
from ..validation import as_vector, real_array, short_repr

FIELD_OF_VIEW = 75.0  # [deg] vertical field of view of meshcat's camera
ASPECT = 4.0 / 3.0  # width / height assumed for the browser window (a wider one only adds room)
FILL = 0.9  # the box's projection stays inside this fraction of the picture's half-size
DEFAULT_DIRECTION = (1.0, 0.3, 0.4)  # from the robot toward the camera: front (+x), a bit left, above
OVERLAY_FRACTION = 0.06  # triad axis length, as a fraction of the bounding box's diagonal
MIN_SIZE = 1e-3  # [m] boxes are padded to at least this size (a robot with no extent)


@dataclass(frozen=True)
class CameraPose:
    """A camera at `position` looking at `target`, both (3,) in w [m]."""

    position: np.ndarray
    target: np.ndarray

    @property
    def distance(self) -> float:
        return float(np.linalg.norm(self.position - self.target))

    @property
    def direction(self) -> np.ndarray:
        """Unit vector (3,) from the target toward the camera."""
        return (self.position - self.target) / self.distance


def _vector3(x: ArrayLike, what: str) -> np.ndarray:
    return as_vector(x, 3, what, error=ConfigurationError)


class ViewAxes(NamedTuple):
    """A camera's unit axes in w (3,) each: ``right``, ``up`` and ``back`` (toward the camera)."""

    right: np.ndarray
    up: np.ndarray
    back: np.ndarray


def view_axes(direction: ArrayLike = DEFAULT_DIRECTION) -> ViewAxes:
    """(right, up, back): the camera's unit axes in w for a view from `direction` (3,).

    ``back`` is `direction` normalized (toward the camera); ``up`` is as close to world z as the
    view allows (world y when looking straight down or up); ``right = up x back``.
    """
    back = _vector3(direction, "direction")
    norm = np.linalg.norm(back)
    if norm < 1e-12:
        raise ConfigurationError("direction must not be the zero vector")
    back = back / norm
    reference = np.array([0.0, 0.0, 1.0]) if abs(back[2]) < 0.999 else np.array([0.0, 1.0, 0.0])
    right = np.cross(reference, back)
    right /= np.linalg.norm(right)
    return ViewAxes(right, np.cross(back, right), back)


def box_corners(lower: ArrayLike, upper: ArrayLike) -> np.ndarray:
    """The 8 corners (8, 3) of the axis-aligned box [lower, upper] (each (3,), lower <= upper)."""
    lo, hi = _vector3(lower, "lower"), _vector3(upper, "upper")
    if np.any(lo > hi):
        raise ConfigurationError(f"box lower corner {lo} exceeds its upper corner {hi}")
    pick = np.array([[(k >> i) & 1 for i in range(3)] for k in range(8)], dtype=bool)
    return np.where(pick, hi, lo)


def _padded(lower: ArrayLike, upper: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    corners = box_corners(lower, upper)
    lo, hi = corners[0], corners[7]
    pad = 0.5 * np.maximum(MIN_SIZE - (hi - lo), 0.0)
    return lo - pad, hi + pad


def grid_cell(lower: ArrayLike, upper: ArrayLike) -> float:
    """[m] floor grid spacing for the box [lower, upper]: 0.5 m times the power of ten at or below
    its diagonal (0.05 m for a hand of diagonal 0.3 m, 0.5 m for a 1.9 m humanoid)."""
    lo, hi = _padded(lower, upper)
    return 0.5 * 10.0 ** np.floor(np.log10(float(np.linalg.norm(hi - lo))))


def overlay_scale(lower: ArrayLike, upper: ArrayLike) -> float:
    """Triad axis length [m] for a robot whose bounding box is [lower, upper]: 6 % of its diagonal."""
    lo, hi = _padded(lower, upper)
    return OVERLAY_FRACTION * float(np.linalg.norm(hi - lo))


def _check_lens(fov: float, aspect: float, fill: float) -> None:
    if not (0.0 < fov < 180.0 and aspect > 0.0 and 0.0 < fill <= 1.0):
        raise ConfigurationError(f"need 0 < fov < 180 deg, aspect > 0 and 0 < fill <= 1; got {fov}, {aspect}, {fill}")


def frame_box(
    lower: ArrayLike,
    upper: ArrayLike,
    direction: ArrayLike = DEFAULT_DIRECTION,
    *,
    fov: float = FIELD_OF_VIEW,
    aspect: float = ASPECT,
    fill: float = FILL,
) -> CameraPose:
    """The closest camera on `direction` from the box's centre that sees the whole box.

    Args:
        lower: lowest corner (3,) of the axis-aligned bounding box in w [m].
        upper: highest corner (3,) of the axis-aligned bounding box in w [m].
        direction: (3,) from the target toward the camera (any length).
        fov: vertical field of view [deg]; aspect: picture width / height.
        fill: every corner projects inside this fraction of the picture's half-width and
            half-height (:func:`project` returns |x|, |y| <= fill), and at least one corner on it.

    Returns:
        the :class:`CameraPose`, target at the box's centre.
    """
    _check_lens(fov, aspect, fill)
    right, up, back = view_axes(direction)
    lo, hi = _padded(lower, upper)
    target = 0.5 * (lo + hi)
    rel = box_corners(lo, hi) - target
    depth, x, y = rel @ back, rel @ right, rel @ up  # depth toward the camera
    tan_v = fill * np.tan(np.radians(fov) / 2.0)
    tan_h = aspect * tan_v
    # a corner at depth a is inside when (D - a) tan >= |lateral|, i.e. D >= a + |lateral| / tan
    distance = float(np.max(depth + np.maximum(np.abs(x) / tan_h, np.abs(y) / tan_v)))
    return CameraPose(target + distance * back, target)


def frame_points(points: ArrayLike, direction: ArrayLike = DEFAULT_DIRECTION, *, fov: float = FIELD_OF_VIEW,
                 aspect: float = ASPECT, fill: float = FILL) -> CameraPose:
    """The closest camera looking along -`direction` that sees every point, centred on them.

    Framing the points themselves (a robot's geometry corners) rather than their axis-aligned box
    keeps a robot seen obliquely from taking a small part of the picture: the box's corners, which
    no geometry reaches, would set the distance.

    Args:
        points: (n, 3) in w [m], n >= 1 (points within MIN_SIZE of each other frame that box).
        direction: (3,) from the target toward the camera (any length).
        fov: vertical field of view [deg]; aspect: picture width / height.
        fill: every point projects inside this fraction of the picture's half-width and
            half-height (:func:`project`), and the extreme points on both sides of the picture
            along one of its axes exactly on it (the closest such camera).

    Returns:
        the :class:`CameraPose`: its target is on the view axis through the middle of the points'
        projections, at the depth of their bounding box's centre. In closed form: with x_i, y_i,
        z_i a point's coordinates along right, up and back from the box's centre, and
        t = fill tan(fov / 2) (times aspect across), the camera at distance D sees the point when
        |x_i - a| <= t_x (D - z_i) and |y_i - b| <= t_y (D - z_i); the least D is
        max over the two axes of (max(x + t z) - min(x - t z)) / (2 t), and a, b the middles.
    """
    _check_lens(fov, aspect, fill)
    p = real_array(points)
    if p is None or p.ndim != 2 or p.shape[0] == 0 or p.shape[1] != 3 or not np.isfinite(p).all():
        raise ConfigurationError(f"points must be (n, 3) finite numbers [m] with n >= 1, got {short_repr(points)}")
    if np.ptp(p, axis=0).max() < MIN_SIZE:  # a point, or nearly: its padded box
        p = box_corners(*_padded(p.min(axis=0), p.max(axis=0)))
    right, up, back = view_axes(direction)
    centre = 0.5 * (p.min(axis=0) + p.max(axis=0))
    rel = p - centre
    depth = rel @ back
    tan_v = fill * np.tan(np.radians(fov) / 2.0)
    distance, offsets = -np.inf, []
    for lateral, tan in ((rel @ right, aspect * tan_v), (rel @ up, tan_v)):
        high, low = float(np.max(lateral + tan * depth)), float(np.min(lateral - tan * depth))
        distance = max(distance, (high - low) / (2.0 * tan))
        offsets.append(0.5 * (high + low))
    target = centre + offsets[0] * right + offsets[1] * up
    return CameraPose(target + distance * back, target)


def points_leave_picture(points: ArrayLike, camera: CameraPose, *, fov: float = FIELD_OF_VIEW,
                         aspect: float = ASPECT) -> bool:
    """Whether one of the points (n, 3) in w [m] lies out of the picture `camera` takes
    (projected beyond [-1, 1], or behind the camera)."""
    xy = project(points, camera, fov=fov, aspect=aspect)
    return bool(not np.all(np.abs(xy) <= 1.0))  # NaN (behind) is out


def project(points: ArrayLike, camera: CameraPose, *, fov: float = FIELD_OF_VIEW,
            aspect: float = ASPECT) -> np.ndarray:
    """Image coordinates (n, 2) of points (n, 3) in w seen by `camera`: x right, y up, [-1, 1]
    across the picture; points behind the camera get NaN."""
    right, up, back = view_axes(camera.direction)
    rel = np.atleast_2d(np.asarray(points, dtype=float)) - camera.position
    ahead = -(rel @ back)  # distance in front of the camera
    tan_v = np.tan(np.radians(fov) / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.stack([(rel @ right) / (ahead * aspect * tan_v), (rel @ up) / (ahead * tan_v)], axis=1)
    out[ahead <= 0] = np.nan
    return out


def leaves_picture(lower: ArrayLike, upper: ArrayLike, camera: CameraPose, *, fov: float = FIELD_OF_VIEW,
                   aspect: float = ASPECT) -> bool:
    """Whether part of the box [lower, upper] (corners (3,) in w [m]) lies out of the picture
    `camera` takes (a corner projected beyond [-1, 1], or behind the camera)."""
    return points_leave_picture(box_corners(*_padded(lower, upper)), camera, fov=fov, aspect=aspect)

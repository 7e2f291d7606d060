"""The voxel grid of a capability map, its approach directions and the rows of J_ab it rates.

The grid is a cube in frame a, centred on a's origin, large enough for every position b's
origin can take: its half-width is a bound on |p_ab| from the kinematic tree (the norms of the
joint and frame placements between a and b, plus the largest displacement of each prismatic,
planar or free-flyer joint there). Voxel (i, j, k) spans ``origin + [i, i+1) * voxel`` (and
likewise in y, z); a's origin is the centre of the middle voxel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..decimal_text import decimal_number, held_text
from ..exceptions import MapError
from ..joint_space import MAX_COORDINATE
from ..robot import Robot
from ..validation import as_task_rows, real_array, short_repr

MAX_VOXEL = 1e3  # [m] the largest voxel edge (larger ones overflow the viewer's float32 coordinates)
MAX_VOXELS = 2**25        # ~34 million voxels: 32 bytes each while the map is built (~1.1 GB)
MAX_DIRECTIONS = 64       # coverage is a 64-bit mask per voxel
AXES = ("x", "y", "z")
PRISMATIC_KINDS = {"JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismaticUnaligned"}
ROTATING_KINDS = {"JointModelRX", "JointModelRY", "JointModelRZ", "JointModelRevoluteUnaligned", "JointModelRUBX",
                  "JointModelRUBY", "JointModelRUBZ", "JointModelRevoluteUnboundedUnaligned", "JointModelSpherical"}


@dataclass(frozen=True)
class Grid:
    """Voxels of edge `voxel` [m]; voxel (0, 0, 0) has its lower corner at `origin` (in a)."""

    origin: tuple[float, float, float]
    voxel: float
    dims: tuple[int, int, int]

    @property
    def size(self) -> int:
        return int(np.prod(self.dims))

    def centers(self, flat: np.ndarray) -> np.ndarray:
        """Centres (n, 3) in a [m] of voxels given by flat indices (n,)."""
        ijk = np.stack(np.unravel_index(np.asarray(flat, dtype=np.int64), self.dims), axis=-1)
        return np.asarray(self.origin) + (ijk + 0.5) * self.voxel

    def flat_index(self, p: ArrayLike) -> int | None:
        """Flat index of the voxel holding position p (3,) in a, None outside the grid."""
        cell = np.floor((np.asarray(p, dtype=float) - self.origin) / self.voxel)
        if not np.all((cell >= 0) & (cell < self.dims)):
            return None
        return int(np.ravel_multi_index(tuple(cell.astype(np.int64)), self.dims))


def sampled_range(lower: float, upper: float, default: float) -> tuple[float, float]:
    """The range a one-coordinate joint is sampled in: its limits, within +-MAX_COORDINATE (1e100,
    as :meth:`reljac.Robot.random_configuration`: limits of +-1e308 would overflow), or
    [-default, default] where a limit is infinite."""
    a = max(lower, -MAX_COORDINATE) if math.isfinite(lower) else -default
    b = min(upper, MAX_COORDINATE) if math.isfinite(upper) else default
    return float(a), float(b)


def _chain(model: pin.Model, joint: int) -> list[int]:
    path = []
    while joint > 0:
        path.append(joint)
        joint = model.parents[joint]
    return path[::-1]


def _displacement(robot: Robot, j: int) -> float:
    """Largest distance a joint's own motion moves its frame's origin [m], as sampled."""
    model = robot.model
    joint = model.joints[j]
    kind = joint.shortname()
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    if kind == "JointModelMimic":
        return _mimic_displacement(robot, j)
    i = joint.idx_q
    if kind in PRISMATIC_KINDS:
        return max(map(abs, sampled_range(lo[i], hi[i], 1.0)))
    if kind == "JointModelFreeFlyer":
        reach = [max(abs(max(lo[i + k], -1.0)), abs(min(hi[i + k], 1.0))) for k in range(3)]
        return math.sqrt(sum(r * r for r in reach))
    if kind == "JointModelPlanar":
        return math.sqrt(2.0)
    if kind in ROTATING_KINDS:
        return 0.0
    raise MapError(f"joint '{model.names[j]}' has type {kind}, whose reach reljac.maps cannot bound")


def _mimic_displacement(robot: Robot, j: int) -> float:
    """_displacement of mimic joint j (value = scaling * leader's q + offset): 0 for a rotation
    about an axis through its origin; for a translation, its largest over the leader's sampled range
    (read from the joint's motion subspace S at neutral: Pinocchio scales it by the mimic's scaling)."""
    model = robot.model
    joint = model.joints[j]
    mimic = joint.extract()
    data = joint.createData()
    joint.calc(data, pin.neutral(model))
    S = np.asarray(data.S).reshape(6)
    linear, angular = np.linalg.norm(S[:3]), np.linalg.norm(S[3:])
    if angular > 1e-12 and linear <= 1e-12:
        return 0.0
    if angular <= 1e-12 and mimic.scaling != 0.0:
        a, b = sampled_range(model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q], 1.0)
        return max(abs(mimic.scaling * a + mimic.offset), abs(mimic.scaling * b + mimic.offset)) * linear / abs(
            mimic.scaling)
    raise MapError(f"mimic joint '{model.names[j]}' moves unlike a revolute or prismatic joint: reljac.maps cannot "
                   "bound its reach")


def reach_bound(robot: Robot, frame_a: int, frame_b: int) -> float:
    """An upper bound on |p_ab| over all sampled configurations [m]."""
    model = robot.model
    fa, fb = model.frames[frame_a], model.frames[frame_b]
    up_a, up_b = _chain(model, fa.parentJoint), _chain(model, fb.parentJoint)
    common = 0
    while common < min(len(up_a), len(up_b)) and up_a[common] == up_b[common]:
        common += 1
    total = np.linalg.norm(fa.placement.translation) + np.linalg.norm(fb.placement.translation)
    for j in up_a[common:] + up_b[common:]:
        total += np.linalg.norm(model.jointPlacements[j].translation) + _displacement(robot, j)
    return float(total)


def make_grid(robot: Robot, frame_a: int, frame_b: int, voxel: float) -> Grid:
    """The cube of voxels holding every reachable p_ab, centred on a's origin.

    Raises:
        MapError: voxel not a positive finite number, or more than MAX_VOXELS voxels.
    """
    voxel = positive_voxel(voxel)
    reach = reach_bound(robot, frame_a, frame_b)
    half = reach * (1 + 1e-9) / voxel  # inf for a voxel of 1e-310 m: compared before any int()
    bound = 2 * half + 3  # side <= bound; side^3 is checked exactly below (x * x * x gives inf, ** raises)
    if not bound * bound * bound <= 2 * MAX_VOXELS:
        count = (2 * half + 1) * (2 * half + 1) * (2 * half + 1)
        raise MapError(_too_many(voxel, reach, f"about {count:.3g}" if math.isfinite(count) else "more than 1e308"))
    n = math.ceil(half)
    side = 2 * n + 1
    if side**3 > MAX_VOXELS:
        raise MapError(_too_many(voxel, reach, f"{side}^3 = {side**3:,}"))
    corner = -(n + 0.5) * voxel
    return Grid(origin=(corner, corner, corner), voxel=voxel, dims=(side, side, side))


def smallest_voxel(reach: float) -> float:
    """The smallest voxel [m], at 4 significant digits, whose grid for `reach` has at most
    MAX_VOXELS voxels (the grid's side is odd: 2 n + 1 voxels, n = ceil(reach (1 + 1e-9) / voxel))."""
    side = round(MAX_VOXELS ** (1 / 3))
    while side**3 > MAX_VOXELS:
        side -= 1
    n = (side - 1) // 2  # the largest odd side that fits is 2 n + 1
    exact = reach * (1 + 1e-9) / n
    if exact <= 0 or not math.isfinite(exact):
        return exact
    scale = 10.0 ** (math.floor(math.log10(exact)) - 3)
    return math.ceil(exact / scale) * scale  # rounded up: the value printed is allowed


def _too_many(voxel: float, reach: float, count: str) -> str:
    return (f"voxel {voxel:.4g} m makes {count} voxels for a reach of {reach:.4g} m; at most {MAX_VOXELS:,} "
            f"are allowed: use voxel >= {smallest_voxel(reach):.4g} m")


def positive_voxel(voxel: Any) -> float:
    """voxel as a positive finite number of metres, or MapError."""
    if isinstance(voxel, (bool, np.bool_)):
        raise MapError(f"voxel must be a positive number of metres, not {voxel!r}")
    text = held_text(voxel)  # (e.g. the command line's --voxel) read in decimal: float() reads "0.0_5" as 0.05
    try:
        value = float(voxel) if text is None else decimal_number(text)
    except OverflowError:  # an int beyond the float range, such as 10**400
        raise MapError(f"voxel must be a positive number of metres, not an integer of {len(str(voxel))} digits") \
            from None
    except (TypeError, ValueError):
        raise MapError(f"voxel must be a positive number of metres, not {voxel!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise MapError(f"voxel must be a positive number of metres, not {voxel!r}")
    if value > MAX_VOXEL:
        raise MapError(f"voxel must be at most {MAX_VOXEL:g} m, not {voxel!r}")
    return value


def fibonacci_directions(n: int) -> np.ndarray:
    """n unit vectors spread evenly over the sphere (a Fibonacci lattice), shape (n, 3)."""
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    r = np.sqrt(np.clip(1.0 - z * z, 0.0, None))
    phi = i * math.pi * (3.0 - math.sqrt(5.0))
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=-1)


def as_directions(directions: ArrayLike) -> np.ndarray:
    """Approach directions (n, 3), unit rows, 1 <= n <= 64, from a count or an array."""
    if isinstance(directions, (int, np.integer)) and not isinstance(directions, bool):
        if not 1 <= directions <= MAX_DIRECTIONS:
            raise MapError(f"directions must be between 1 and {MAX_DIRECTIONS}, not {directions}")
        return fibonacci_directions(int(directions))
    d = real_array(directions)  # None for booleans and text, which numpy would read as numbers
    if d is None:
        raise MapError(f"directions must be a count or an (n, 3) array of vectors, not {short_repr(directions)}")
    if d.ndim != 2 or d.shape[1] != 3 or not 1 <= d.shape[0] <= MAX_DIRECTIONS:
        raise MapError(f"directions must be an (n, 3) array with 1 <= n <= {MAX_DIRECTIONS}, got shape {d.shape}")
    norms = np.linalg.norm(d, axis=1)
    if not np.all(np.isfinite(norms) & (norms > 0)):
        raise MapError("directions must be finite, non-zero vectors")
    return d / norms[:, None]


def as_rows(part: Any) -> tuple[int, ...]:
    """Rows of J_ab rated by the manipulability: "position", "orientation", "full", or names /
    indices of rows (vx, vy, vz, wx, wy, wz); MapError otherwise."""
    return as_task_rows(part, error=MapError)


def as_axis(axis: Any) -> int:
    """The axis of frame b taken as its approach direction: "x", "y" or "z" (or 0, 1, 2)."""
    if axis in AXES:
        return AXES.index(axis)
    if axis in (0, 1, 2) and not isinstance(axis, bool):
        return int(axis)
    raise MapError(f"axis must be 'x', 'y' or 'z', not {axis!r}")

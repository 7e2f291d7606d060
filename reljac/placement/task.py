"""What a placement is asked for: the object's poses and how each hand holds it
(:class:`PlacementTask`), and the floor region where the base may stand (:class:`FloorRegion`).

A task is the poses T_wO of an object in the world (one, a list, or a path sampled from
waypoints: :meth:`PlacementTask.along`) and, for each hand frame h, its pose T_Oh in the object's
frame (the grasp). Hand h must then be at ``T_wh = T_wO T_Oh`` at each pose; with two hands their
relative pose ``T_h1h2 = T_Oh1^-1 T_Oh2`` is held: this is the relative task. One hand is the
single-arm case (a hand's poses in the world: give T_Oh = identity).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from ..exceptions import ConfigurationError, TaskError
from ..poses import as_se3
from ..validation import as_count, as_float, real_array, short_repr

MAX_POSES = 10_000
MAX_DISTANCE = 1e6  # [m] the largest coordinate of an object pose or a grasp (the maps' cells are counted in int64)
MAX_PLACEMENTS = 10_000_000
ORIENTATION_LENGTH = 0.1  # [m/rad]: a waypoint path's length counts an angle as 0.1 m per radian


@dataclass(frozen=True, eq=False, init=False)
class PlacementTask:
    """Object poses in the world and the hands' grasps.

    Attributes:
        poses: (K, 4, 4) T_wO of each pose of the object [m].
        grasps: {hand frame name: (4, 4) T_Oh}, the lead hand first (the hand the maps key on).
    """

    poses: np.ndarray
    grasps: dict[str, np.ndarray]

    def __init__(self, poses: Any, grasps: Mapping[str, Any] | Sequence[str]) -> None:
        """poses: a pin.SE3 or (4, 4) array, or a list of them (1..10,000). grasps: {hand frame:
        T_Oh (pin.SE3 or (4, 4))}, or a list of frame names (each held at the object's origin:
        T_Oh = identity, the single-arm case with one name).

        Raises:
            TaskError: no pose or grasp, a pose or grasp that is not a rigid transform.
        """
        if isinstance(poses, (pin.SE3, np.ndarray)) and np.shape(poses) in ((), (4, 4)):
            poses = [poses]
        if isinstance(poses, np.ndarray):
            poses = list(poses)
        if not isinstance(poses, Sequence) or isinstance(poses, str) or not 1 <= len(poses) <= MAX_POSES:
            raise TaskError(f"poses must be a list of 1 to {MAX_POSES:,} object poses (pin.SE3 or (4, 4))")
        T = np.array([as_se3(p, f"object pose {i}").homogeneous for i, p in enumerate(poses)])
        if isinstance(grasps, Mapping):
            items = list(grasps.items())
        elif isinstance(grasps, Sequence) and not isinstance(grasps, str):
            items = [(name, np.eye(4)) for name in grasps]
        else:
            raise TaskError(f"grasps must be {{hand frame: T_Oh}} or a list of hand frames, got {grasps!r}")
        if not items:
            raise TaskError("a placement task needs at least one hand (grasps)")
        held: dict[str, np.ndarray] = {}
        for name, pose in items:
            if not isinstance(name, str) or not name:
                raise TaskError(f"a grasp's hand is a frame name, got {name!r}")
            if name in held:
                raise TaskError(f"hand {name!r} has two grasps")
            held[name] = as_se3(pose, f"the grasp of {name!r}").homogeneous
        for what, translations in [("object poses", T[:, :3, 3])] + [(f"the grasp of {name!r}", G[:3, 3])
                                                                      for name, G in held.items()]:
            if np.abs(translations).max() > MAX_DISTANCE:
                raise TaskError(f"the positions of {what} must be within {MAX_DISTANCE:g} m of the origin in each "
                                f"coordinate, got {np.abs(translations).max():g} m")
        object.__setattr__(self, "poses", T)
        object.__setattr__(self, "grasps", held)

    @classmethod
    def along(cls, waypoints: Any, samples: int, grasps: Mapping[str, Any] | Sequence[str]) -> PlacementTask:
        """`samples` object poses spread evenly along waypoints (a path: positions linear, rotations
        along the shortest arc between consecutive waypoints; its length counts |dp| [m] plus
        0.1 m per radian of rotation), the first and last waypoints included.

        Raises:
            TaskError: fewer than 2 waypoints, samples not in 2..10,000, a bad pose.
        """
        if not isinstance(waypoints, Sequence) or isinstance(waypoints, str) or len(waypoints) < 2:
            raise TaskError("waypoints must be a list of at least 2 object poses")
        samples = as_count(samples, "samples", minimum=2, maximum=MAX_POSES)
        W = [as_se3(w, f"waypoint {i}") for i, w in enumerate(waypoints)]
        lengths = np.array([np.linalg.norm(b.translation - a.translation)
                            + ORIENTATION_LENGTH * np.linalg.norm(pin.log3(a.rotation.T @ b.rotation))
                            for a, b in itertools.pairwise(W)])
        at = np.concatenate([[0.0], np.cumsum(lengths)])
        total = at[-1]
        poses = []
        for s in np.linspace(0.0, total, samples) if total > 0 else np.zeros(samples):
            i = min(int(np.searchsorted(at, s, side="right")) - 1, len(W) - 2)
            t = 0.0 if lengths[i] == 0 else (s - at[i]) / lengths[i]
            a, b = W[i], W[i + 1]
            R = a.rotation @ pin.exp3(t * pin.log3(a.rotation.T @ b.rotation))
            poses.append(pin.SE3(R, (1 - t) * a.translation + t * b.translation))
        return cls(poses, grasps)

    @property
    def hands(self) -> list[str]:
        """The hand frames, the lead hand first."""
        return list(self.grasps)

    def hand_poses(self, hand: str) -> np.ndarray:
        """T_wh (K, 4, 4) of hand `hand` at every pose of the object."""
        return self.poses @ self.grasps[hand]

    def __len__(self) -> int:
        return len(self.poses)


@dataclass(frozen=True, eq=False)
class FloorRegion:
    """Where the base may stand: a box x, y [m] (optionally cut to a polygon) and yaws [rad],
    sampled on a grid.

    Attributes:
        x, y: (lower, upper) [m]; yaw: (lower, upper) [rad] (default a full turn).
        step: [m] grid step in x and y; yaw_step: [rad] in yaw.
        polygon: None, or (m, 2) vertices [m] of a polygon (either orientation) the base's origin
            must be inside.
    """

    x: tuple[float, float]
    y: tuple[float, float]
    yaw: tuple[float, float] = (-math.pi, math.pi)
    step: float = 0.05
    yaw_step: float = math.radians(10.0)
    polygon: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("x", "y", "yaw"):
            value = getattr(self, name)
            try:
                if isinstance(value, (str, bytes)):  # (b"12" read as the numbers 49 and 50)
                    raise TypeError
                lo, hi = (as_float(v, f"{name} bound", error=ConfigurationError) for v in value)
            except (TypeError, ValueError):
                raise ConfigurationError(f"{name} must be (lower, upper), got {value!r}") from None
            if hi < lo:
                raise ConfigurationError(f"{name} must be (lower, upper) with lower <= upper, got {value!r}")
            if name != "yaw" and max(abs(lo), abs(hi)) > MAX_DISTANCE:
                raise ConfigurationError(f"{name} bounds [m] must be within {MAX_DISTANCE:g} m, got {value!r}")
            if name == "yaw" and max(abs(lo), abs(hi)) > 4 * math.pi:
                raise ConfigurationError(f"yaw bounds [rad] must be within 4 pi, got {value!r}")
            object.__setattr__(self, name, (lo, hi))
        if self.yaw[1] - self.yaw[0] > 2 * math.pi + 1e-9:
            raise ConfigurationError(f"yaw spans {self.yaw[1] - self.yaw[0]:.4g} rad, more than a turn")
        object.__setattr__(self, "step", as_float(self.step, "step [m]", minimum=0.0, strict=True,
                                                  error=ConfigurationError))
        object.__setattr__(self, "yaw_step", as_float(self.yaw_step, "yaw_step [rad]", minimum=0.0, strict=True,
                                                      error=ConfigurationError))
        if self.polygon is not None:
            P = real_array(self.polygon)  # (None for text, complex or ragged entries)
            if P is None or P.ndim != 2 or P.shape[1] != 2 or len(P) < 3 or not np.isfinite(P).all() or \
                    np.abs(P).max() > MAX_DISTANCE:
                raise ConfigurationError(f"polygon must be at least 3 finite (x, y) vertices [m] within "
                                         f"{MAX_DISTANCE:g} m, got {short_repr(self.polygon)}")
            object.__setattr__(self, "polygon", P)
        spans = (self.x[1] - self.x[0]) / self.step, (self.y[1] - self.y[0]) / self.step, \
            (self.yaw[1] - self.yaw[0]) / self.yaw_step
        if max(spans) > MAX_PLACEMENTS:
            raise ConfigurationError(f"the floor region makes more than {MAX_PLACEMENTS:,} placements; use a larger "
                                     "step or yaw_step")
        count = _steps(*self.x, self.step) * _steps(*self.y, self.step) * _steps(*self.yaw, self.yaw_step)
        if count > MAX_PLACEMENTS:
            raise ConfigurationError(f"the floor region makes {count:,} placements; at most {MAX_PLACEMENTS:,}: "
                                     "use a larger step or yaw_step")
        if self.polygon is not None and not len(self.placements()):
            raise ConfigurationError(f"the floor region is empty: no point of its grid (x {self.x}, y {self.y}, "
                                     f"step {self.step:g} m) is inside its polygon")

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The grid's x, y [m] and yaw [rad] values (each from its lower bound by steps; a full
        turn of yaw does not repeat its end)."""
        def values(lo: float, hi: float, step: float) -> np.ndarray:
            return lo + step * np.arange(_steps(lo, hi, step))

        yaws = values(*self.yaw, self.yaw_step)
        if len(yaws) > 1 and abs(yaws[-1] - yaws[0] - 2 * math.pi) < 1e-9:
            yaws = yaws[:-1]
        return values(*self.x, self.step), values(*self.y, self.step), yaws

    @property
    def shape(self) -> tuple[int, int, int]:
        """(nx, ny, nyaw) of the grid."""
        x, y, yaw = self.axes()
        return len(x), len(y), len(yaw)

    def placements(self) -> np.ndarray:
        """Every placement of the grid, (nx * ny * nyaw, 3) in C order (x slowest, yaw fastest);
        with a polygon, only those whose (x, y) is inside it."""
        x, y, yaw = self.axes()
        X, Y, A = np.meshgrid(x, y, yaw, indexing="ij")
        P = np.column_stack([X.ravel(), Y.ravel(), A.ravel()])
        return P[self.inside(P[:, :2])] if self.polygon is not None else P

    def inside(self, xy: np.ndarray) -> np.ndarray:
        """(n,) bool: points (n, 2) inside the box and the polygon (if any; even-odd rule)."""
        xy = np.asarray(xy, dtype=float)
        eps = 1e-9
        ok = ((xy[:, 0] >= self.x[0] - eps) & (xy[:, 0] <= self.x[1] + eps) & (xy[:, 1] >= self.y[0] - eps)
              & (xy[:, 1] <= self.y[1] + eps))
        if self.polygon is None:
            return ok
        P = self.polygon
        a, b = P, np.roll(P, -1, axis=0)
        px, py = xy[:, 0:1], xy[:, 1:2]
        crosses = ((a[:, 1] > py) != (b[:, 1] > py)) & (
            px < (b[:, 0] - a[:, 0]) * (py - a[:, 1]) / np.where(b[:, 1] == a[:, 1], 1.0, b[:, 1] - a[:, 1]) + a[:, 0])
        return ok & (crosses.sum(axis=1) % 2 == 1)


def _steps(lo: float, hi: float, step: float) -> int:
    """Grid values from lo to at most hi by step (at least 1)."""
    return math.floor((hi - lo) / step + 1e-9) + 1

"""Tasks whose rows keep a region rather than reach a target (issue 29): a frame's axis within a
cone, a frame's origin in a half-space (or several: a convex polytope), and the base of the
tasks a limit becomes when it is put in a level (:meth:`reljac.ik.SupportRegion.as_task`,
:meth:`reljac.ik.CollisionAvoidance.as_task`).

Each is a :class:`~reljac.ik.tasks.base.Task` with one-sided bounds on its error e (see
:meth:`~reljac.ik.tasks.base.Task.set_bounds`): inside with margin its rows cost nothing and leave the
levels below free; on or past the bound they ask de/dt <= gain (bound - e), the way back at the
task's gain [1/s]. A level holding them is solved by the bounded solver
(:mod:`reljac.ik.solvers.inequality`, compiled in the core), in the controller and in
:func:`~reljac.ik.solve`; their rows come from Python at each step.

A box on a frame's position, or a half-space whose normal is an axis of frame a, needs no class
of its own: ``RelativePositionTask(a, b)`` with its target at 0 and ``set_bounds`` on the chosen
components (``upper=[c, inf, inf]`` is p_ab.x <= c). :class:`HalfSpaceTask` takes any normal.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...exceptions import TaskError
from ...relative import Kinematics
from ...robot import FrameRef, Robot
from ...validation import as_float, as_matrix, as_vector, real_array, short_repr, single_entry
from ..description import Description, frozen
from .base import Task, TaskTerms
from .frames import BetweenFrames

TINY_SINE = 1e-9  # below this sin(angle) the cone task's axes are (anti)parallel: the row's direction is chosen


def _unit_rows(V: np.ndarray) -> np.ndarray:
    """The rows of V (k, 3), finite, each scaled to unit length (by its largest entry first: rows
    of huge numbers, 1e308, do not overflow the norm); a row of norm below 1e-9 stays near 0."""
    largest = np.abs(V).max(axis=1, keepdims=True)
    scaled = np.divide(V, largest, out=np.zeros_like(V), where=largest >= 1e-9)
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    return np.divide(scaled, norms, out=np.zeros_like(V), where=norms > 0.0)


def _unit(x: ArrayLike, what: str) -> np.ndarray:
    """x as a unit vector (3,) (normalized); TaskError for 3 numbers not finite or of norm ~0."""
    arr = real_array(x)
    v = None if arr is None or arr.size != 3 else arr.reshape(3).astype(float)
    if v is None or not np.isfinite(v).all() or np.abs(v).max() < 1e-9:
        raise TaskError(f"{what} must be 3 finite numbers, not all zero (a direction), got {short_repr(x)}")
    return _unit_rows(v[None, :])[0]


class ConeTask(BetweenFrames, kind="cone"):
    """Keeps an axis of frame b within a cone about an axis of frame a: the angle theta [rad]
    between w = R_ab u_b (u_b: `axis_b`, in b's axes) and `axis_a` (in a's axes) stays <= the
    half-angle (one row, size 1).

    e = theta = atan2(|w x a|, w . a) in [0, pi], upper bound `half_angle`. Its Jacobian, from
    the relative Jacobian's angular rows (omega_ab = J_ab[3:] v, measured and expressed in a):
    d theta/dt = -n . omega_ab with n = (w x a) / |w x a|, so J = -n^T J_ab[3:] (1, nv) [rad/s
    per unit of v]. At theta = 0 the row is zero (the axes aligned: inside the cone unless the
    half-angle is 0); at theta = pi, n is a fixed unit vector perpendicular to `axis_a` (any
    rotation about it brings the axis back). Inside the cone with margin the task costs nothing;
    outside, theta comes back at the task's gain: d theta/dt = gain (half_angle - theta).
    A half-angle of 0 keeps the axes aligned only up to that feedback: at theta = 0 the row is
    zero, so a step that the levels below fill can tilt the axis before the row pulls it back
    (seen: up to 30 mrad on the bundled dual arm, a posture pulling away at the level below). To
    hold two axes aligned, use an equality task on the orientation
    (:class:`~reljac.ik.tasks.frames.RelativeOrientationTask` or a
    :class:`~reljac.ik.tasks.frames.FrameTask` whose weights keep only the two tilting rotations).

    Args:
        frame_a: frame a (name or id) the cone is fixed in ("universe": the world).
        frame_b: frame b (name or id) whose axis is kept in the cone.
        half_angle: the cone's half-angle [rad], in [0, pi] (can be changed between steps).
        axis_b: (3,) the axis of b, in b's axes (normalized; default z).
        axis_a: (3,) the cone's axis, in a's axes (normalized; default z).
        **kwargs: gain [1/s], max_speed [rad/s], name, as :class:`~reljac.ik.tasks.base.Task` (weight:
            a scalar; 0 masks the row out).

    Raises:
        TaskError: a half-angle outside [0, pi] or not a number, an axis not a direction.
    """

    size = 1
    speed_parts = ((slice(None), 1),)

    def __init__(self, frame_a: FrameRef, frame_b: FrameRef, half_angle: float, *,
                 axis_b: ArrayLike = (0.0, 0.0, 1.0), axis_a: ArrayLike = (0.0, 0.0, 1.0), **kwargs: Any) -> None:
        self._set_frames(frame_a, frame_b)
        self._axis_b = _unit(axis_b, "axis_b of a ConeTask")
        self._axis_a = _unit(axis_a, "axis_a of a ConeTask")
        kwargs.setdefault("name", f"cone of {frame_b} in {frame_a}")
        super().__init__(**kwargs)
        self.half_angle = half_angle

    @property
    def axis_a(self) -> np.ndarray:
        """The cone's axis (3,), unit, in a's axes (a copy)."""
        return self._axis_a.copy()

    @property
    def axis_b(self) -> np.ndarray:
        """b's axis (3,), unit, in b's axes (a copy)."""
        return self._axis_b.copy()

    @property
    def half_angle(self) -> float:
        """The cone's half-angle [rad], in [0, pi]."""
        return self._half_angle

    @half_angle.setter
    def half_angle(self, value: float) -> None:
        angle = as_float(value, f"half_angle [rad] of task '{self.name}'", valid="a number of radians in [0, pi]")
        if not 0.0 <= angle <= math.pi:
            raise TaskError(f"half_angle [rad] of task '{self.name}' must be in [0, pi], got {angle}")
        self._half_angle = angle
        super().set_bounds(None, angle)

    def set_bounds(self, lower: ArrayLike | None = None, upper: ArrayLike | None = None) -> None:
        """A cone's only bound is its half-angle: ``set_bounds(None, angle)`` sets it (as
        :attr:`half_angle` does); any other bound raises TaskError."""
        single, angle = single_entry(upper)
        if lower is not None or not single:
            raise TaskError(f"task '{self.name}' keeps the angle within its half-angle (theta <= half_angle): "
                            f"set half_angle [rad] instead of bounds (got lower={short_repr(lower)}, "
                            f"upper={short_repr(upper)})")
        self.half_angle = angle  # (checked as half_angle is)

    def description(self, robot: Robot) -> Description:
        """The task for the compiled step (frames resolved on `robot`)."""
        return Description("ConeTaskDescription", frame_a=robot.frame_id(self.frame_a),
                           frame_b=robot.frame_id(self.frame_b), axis_a=frozen(self._axis_a),
                           axis_b=frozen(self._axis_b), **self.described_parameters())

    def angle(self, kin: Kinematics) -> float:
        """theta [rad]: the angle between b's axis and the cone's axis at kin's configuration."""
        return float(self.compute(kin)[0][0])

    def compute(self, kin: Kinematics) -> TaskTerms:
        w = kin.relative_placement(self.frame_a, self.frame_b).rotation @ self._axis_b  # b's axis, in a's axes
        a = self._axis_a
        cross = np.cross(w, a)
        sine, cosine = float(np.linalg.norm(cross)), float(w @ a)
        theta = math.atan2(sine, cosine)
        nv = kin.model.nv
        if sine > TINY_SINE:
            n = cross / sine
        elif cosine > 0:  # aligned: the angle's gradient vanishes (a zero row)
            return TaskTerms(np.array([theta]), np.zeros((1, nv)), np.zeros(1))
        else:  # opposite: a fixed perpendicular of a (any rotation about one brings the axis back)
            n = np.cross(a, np.eye(3)[int(np.argmin(np.abs(a)))])
            n /= np.linalg.norm(n)
        J = -(n @ kin.relative_jacobian(self.frame_a, self.frame_b)[3:])
        return TaskTerms(np.array([theta]), J[None, :], np.zeros(1))

    def error_norms(self, kin: Kinematics) -> dict[str, float]:
        """{'outside': how far the axis is outside the cone [rad], 0 inside}."""
        return {"outside": max(0.0, self.angle(kin) - self.half_angle)}


class HalfSpaceTask(BetweenFrames, kind="half_space"):
    """Keeps the origin of frame b in a half-space of frame a, n . p_ab <= c, or in the
    intersection of k of them (a convex polytope), N p_ab <= c.

    e = N p_ab - c (k,) [m] with the rows of N unit normals (the given ones normalized, in a's
    axes, pointing out of the region) and c (k,) [m] the planes' distances from a's origin along
    them; upper bound 0. J = N J_ab[:3] (k, nv) [m/s per unit of v]. Inside with margin the task
    costs nothing; past a plane, b comes back at the task's gain: n . d/dt p_ab = gain (c - n . p_ab).

    Args:
        frame_a: frame a (name or id) the planes are fixed in ("universe": the world).
        frame_b: frame b (name or id) whose origin is kept in the region.
        normal: (3,) or (k, 3) outward normals, in a's axes.
        offset: a number or (k,) numbers c [m].
        **kwargs: gain [1/s], weight (scalar or (k,)), max_speed [m/s], name, as
            :class:`~reljac.ik.tasks.base.Task`.

    ``set_planes(normal, offset)`` moves the planes (the same count k). An axis-aligned plane
    is also ``RelativePositionTask(a, b)`` with target 0 and ``set_bounds`` on that component.

    Raises:
        TaskError: a normal not a direction, or normals and offsets of different counts.
    """

    def __init__(self, frame_a: FrameRef, frame_b: FrameRef, normal: ArrayLike, offset: ArrayLike,
                 **kwargs: Any) -> None:
        self._set_frames(frame_a, frame_b)
        kwargs.setdefault("name", f"half-space of {frame_b} in {frame_a}")
        self._normals, self._offsets = self._planes(normal, offset, kwargs["name"])
        self.size = len(self._offsets)
        super().__init__(**kwargs)
        self.set_bounds(None, 0.0)

    @staticmethod
    def _planes(normal: ArrayLike, offset: ArrayLike, name: str) -> tuple[np.ndarray, np.ndarray]:
        N = as_matrix(normal, 3, f"normal of task '{name}'", error=TaskError)
        if N.shape[0] == 0:
            raise TaskError(f"normal of task '{name}' must hold at least one plane's normal, got none")
        largest = np.abs(N).max(axis=1)
        if (largest < 1e-9).any():
            raise TaskError(f"normal of task '{name}' must not be zero (row {int(np.argmin(largest))})")
        c = real_array(offset)
        c = None if c is None else c.reshape(-1).astype(float)
        if c is None or c.shape != (N.shape[0],) or not np.isfinite(c).all():
            raise TaskError(f"offset of task '{name}' must be {N.shape[0]} finite number(s) [m] (one per normal), "
                            f"got {short_repr(offset)}")
        return _unit_rows(N), c

    def set_planes(self, normal: ArrayLike, offset: ArrayLike) -> None:
        """New planes: normals (3,) or (k, 3) in a's axes and offsets (k,) [m], k unchanged."""
        N, c = self._planes(normal, offset, self.name)
        if len(c) != self.size:
            raise TaskError(f"task '{self.name}' has {self.size} plane(s); set_planes got {len(c)}")
        self._normals, self._offsets = N, c
        self._changed()

    @property
    def normals(self) -> np.ndarray:
        """(k, 3) unit outward normals, in a's axes (a copy)."""
        return self._normals.copy()

    @property
    def offsets(self) -> np.ndarray:
        """(k,) the planes' offsets c [m] (a copy)."""
        return self._offsets.copy()

    def description(self, robot: Robot) -> Description:
        """The task for the compiled step (frames resolved on `robot`)."""
        return Description("HalfSpaceTaskDescription", frame_a=robot.frame_id(self.frame_a),
                           frame_b=robot.frame_id(self.frame_b), normals=frozen(self._normals),
                           offsets=frozen(self._offsets), **self.described_parameters())

    def compute(self, kin: Kinematics) -> TaskTerms:
        p = kin.relative_placement(self.frame_a, self.frame_b).translation
        J = self._normals @ kin.relative_jacobian(self.frame_a, self.frame_b)[:3]
        return TaskTerms(self._normals @ p - self._offsets, J, np.zeros(self.size))

    def error_norms(self, kin: Kinematics) -> dict[str, float]:
        """{'outside': the largest distance of b's origin past a plane [m], 0 inside}."""
        return {"outside": max(0.0, float(np.max(self.compute(kin)[0][self._rows], initial=0.0)))}


class RegionRowsTask(Task):
    """Base of a limit put in a level: one-sided rows whose count changes from step to step
    (an edge of a support region, a collision pair within reach).

    A subclass gives :meth:`measure`: at kin's configuration, e (m,) [its units], J (m, nv) with
    de/dt = J v, and a name per row. Its rows keep e <= 0 (``side = "upper"``) or e >= 0
    (``"lower"``): rate back at the task's gain from past the bound, free inside it. ``size``,
    ``weight`` (a scalar for every row), ``bounds`` and ``row_names`` are those of the last
    :meth:`compute` (size 0 before the first), or, in a compiled step (``held_by``: the step and
    the task's index there), of that step's last rows. The bounds are the task's own:
    ``set_bounds`` raises. A subclass names its rows from where they come from
    (:meth:`names_of`: an edge, a collision pair).
    """

    side = "upper"
    held_by: tuple[Any, int] | None = None  # (compiled step, index) that computed the last rows

    def __init__(self, robot: Robot, **kwargs: Any) -> None:
        self.robot = robot
        self._size = 0
        self._row_names: list[str] = []
        super().__init__(**kwargs)
        self._bounds = (np.zeros(0), np.zeros(0))

    @property
    def size(self) -> int:
        """Rows of the last step (0 before the first)."""
        if self.held_by is not None:
            step, index = self.held_by
            return len(step.task_row_sources(index))
        return self._size

    @size.setter
    def size(self, value: int) -> None:
        self._size = int(value)

    @property
    def row_names(self) -> list[str]:
        """A name per row of the last step (an edge, a pair)."""
        if self.held_by is not None:
            step, index = self.held_by
            return self.names_of(step, index)
        return list(self._row_names)

    def names_of(self, step: Any, index: int) -> list[str]:
        """The names of the rows the compiled step `step` gave task `index` in its last step."""
        return [f"{self.name}[{i}]" for i in range(len(step.task_row_sources(index)))]

    def described_parameters(self) -> dict[str, Any]:
        """gain, weight (one for every row: (1,)) and max_speed; no bounds (the kind's own)."""
        return {"gain": self._gain, "weight": np.array([self._scalar_weight]),
                "max_speed": None if self._max_speed is None else frozen(self._max_speed), "lower": None, "upper": None}

    @abstractmethod
    def measure(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """(e (m,), J (m, nv), names (m,)) at kin's configuration."""

    def compute(self, kin: Kinematics) -> TaskTerms:
        e, J, names = self.measure(kin)
        m = len(e)
        self._size, self._row_names, self.held_by = m, list(names), None
        zero, far = np.zeros(m), np.full(m, np.inf)
        self._bounds = (-far, zero) if self.side == "upper" else (zero, far)
        self._rows = np.arange(m) if self._scalar_weight > 0 else np.zeros(0, dtype=int)
        return TaskTerms(np.asarray(e, dtype=float), np.asarray(J, dtype=float).reshape(m, kin.model.nv), np.zeros(m))

    def set_weight(self, weight: ArrayLike) -> None:
        """One weight [>= 0] for every row (their number changes between steps); 0 masks them out."""
        what = f"weight of task '{self.name}' (one number for all its rows)"
        # (and at most MAX_COORDINATE, as every task's: 1e200 overflowed one backend and not the other)
        w = float(as_vector(np.full(1, as_float(weight, what, minimum=0.0)), 1, what)[0])
        self._scalar_weight = w
        self._rows = np.zeros(0, dtype=int)
        self._unit_weights = w == 1.0
        self._changed()

    @property
    def weight(self) -> np.ndarray:
        """(size,) the weight of each row of the last compute (read-only array)."""
        view = np.full(self.size, self._scalar_weight)
        view.flags.writeable = False
        return view

    @weight.setter
    def weight(self, value: ArrayLike) -> None:
        self.set_weight(value)

    @property
    def has_weight(self) -> bool:
        """Its weight is positive, whatever rows the last step had (none: no pair near)."""
        return self._scalar_weight > 0

    def set_bounds(self, lower: ArrayLike | None = None, upper: ArrayLike | None = None) -> None:
        raise TaskError(f"task '{self.name}' keeps its own bounds (e {'<=' if self.side == 'upper' else '>='} 0 "
                        "on each row): change its limit's parameters instead")

    def error_norms(self, kin: Kinematics) -> dict[str, float]:
        """{'outside': the largest distance of a row past its bound [units of e], 0 inside}."""
        e = self.compute(kin)[0]
        past = e if self.side == "upper" else -e
        return {"outside": max(0.0, float(np.max(past, initial=0.0)))}


__all__ = ["ConeTask", "HalfSpaceTask", "RegionRowsTask"]

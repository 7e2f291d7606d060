"""What a task or limit tells the compiled core: explicit, public, typed descriptions.

Every built-in task and limit answers ``description(robot)`` with one of the records below; the
compiled step (:mod:`reljac.ik.compiled`) runs what they describe in C++, and the Python
classes' ``compute`` / ``rows`` / ``constraint`` remain the specification it is tested against.
A task or limit that answers None (the default, and any subclass that overrides how its rows are
computed without describing itself) runs in Python every step, beside the compiled parts, on
either backend.

Tasks and limits are :class:`Observable`: every public setter announces the change to the
controllers that use the object, which push the new description into their compiled step before
their next step. Frames are Pinocchio frame ids, arrays are copies (read-only).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np


class Observable:
    """An object whose changes the controllers using it hear about (:meth:`_changed`)."""

    _version = 0

    def _listen(self, listener: Any) -> None:
        """`listener._heard(self)` is called after each change (held weakly)."""
        listeners = self.__dict__.get("_listeners")
        if listeners is None:
            listeners = self.__dict__["_listeners"] = weakref.WeakSet()
        listeners.add(listener)

    def _changed(self) -> None:
        self._version += 1
        for listener in list(self.__dict__.get("_listeners", ())):
            listener._heard(self)


def frozen(array: Any) -> np.ndarray:
    """A read-only float copy of `array`."""
    out = np.array(array, dtype=float)
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class TaskDescription:
    """What a task gives the compiled step: one subclass per compiled task kind (a frozen dataclass)
    whose fields are, in order, the named arguments of the core's class of the same name
    (``reljac.ik._core``; ``tests/test_core_schema.py`` checks it). Each kind's last two fields,
    ``lower`` and ``upper``, are the bounds of a task with bounds (:meth:`reljac.ik.task.Task.set_bounds`,
    (size,) each [units of e], +-inf for an open side), or None: the task drives e to 0."""


@dataclass(frozen=True)
class LimitDescription:
    """What a limit gives the compiled step: one subclass per compiled limit kind, as
    :class:`TaskDescription`."""


@dataclass(frozen=True)
class FrameTaskDescription(TaskDescription):
    """A task on the motion of frame b measured in frame a (RelativeFrameTask and its kin).

    kind: "pose" (e = log6(T_t^-1 T_ab), 6 rows), "position" (e = p_ab - p_t, 3 rows) or
    "orientation" (e = log3(R_t^T R_ab), 3 rows); frame_a, frame_b: Pinocchio frame ids;
    gain [1/s]; weight (size,); max_speed (linear, angular) [m/s, rad/s] or None; target (4, 4)
    homogeneous T_ab (the parts the kind does not use are identity); target_velocity (size,).
    """

    kind: Literal["pose", "position", "orientation"]
    frame_a: int
    frame_b: int
    gain: float
    weight: np.ndarray
    max_speed: np.ndarray | None
    target: np.ndarray
    target_velocity: np.ndarray
    lower: np.ndarray | None = None  # (size,) bounds on e of a task with bounds (+-inf: open), or None
    upper: np.ndarray | None = None


@dataclass(frozen=True)
class PostureDescription(TaskDescription):
    """A joint posture task: e = difference(target, q) (nv rows); target (nq,); lower, upper (nv,)
    the bounds of a centring band (or any bounds on e), or None."""

    gain: float
    weight: np.ndarray
    max_speed: np.ndarray | None
    target: np.ndarray
    lower: np.ndarray | None = None  # (size,) bounds on e of a task with bounds (+-inf: open), or None
    upper: np.ndarray | None = None


@dataclass(frozen=True)
class CoMTaskDescription(TaskDescription):
    """The centre of mass measured in frame a (CoMTask): e = p_ac[axes] - target [m].

    frame: Pinocchio frame id of a (0: the world); axes: indices among (x, y, z) controlled;
    gain [1/s]; weight (size,); max_speed (linear, angular) [m/s] (the linear one caps |gain e|)
    or None; target and target_velocity (size,) [m, m/s]. size = len(axes).
    """

    frame: int
    axes: tuple[int, ...]
    gain: float
    weight: np.ndarray
    max_speed: np.ndarray | None
    target: np.ndarray
    target_velocity: np.ndarray
    lower: np.ndarray | None = None  # (size,) bounds on e of a task with bounds (+-inf: open), or None
    upper: np.ndarray | None = None


@dataclass(frozen=True)
class VelocityBoxDescription(LimitDescription):
    """A constant box lo <= v <= hi, (nv,) each [rad/s, m/s]."""

    lo: np.ndarray
    hi: np.ndarray


@dataclass(frozen=True)
class PositionLimitDescription(LimitDescription):
    """Position limits as velocity bounds (JointPositionLimit): the limited joints' q and v
    indices, the limits kept (q_min, q_max) and the URDF's (urdf_min, urdf_max), and gamma."""

    q_index: np.ndarray
    v_index: np.ndarray
    q_min: np.ndarray
    q_max: np.ndarray
    urdf_min: np.ndarray
    urdf_max: np.ndarray
    limit_gain: float


@dataclass(frozen=True)
class ReversalDampingDescription(LimitDescription):
    """Rprop's step-size control (ReversalDamping): velocity limits and floors (nv,) and factors."""

    velocity_limits: np.ndarray
    floor: np.ndarray
    shrink: float
    grow: float


@dataclass(frozen=True)
class CollisionAvoidanceDescription(LimitDescription):
    """Velocity dampers on the geometry pairs of `geometry` (its collisionPairs) [m]."""

    geometry: Any  # pin.GeometryModel
    min_distance: float
    influence_distance: float
    gain: float
    margin: float


@dataclass(frozen=True)
class SupportRegionDescription(LimitDescription):
    """The horizontal centre of mass inside the contacts' hull (SupportRegion): rows
    n_i . J_xy v <= d_i per hull edge (d_i: SupportRegion's damper, 0 in the margin), in the x-y plane of frame
    `frame` (id); contact frames (ids, (k,)) and their points (one (p_j, 3) array each) [m]."""

    frame: int
    contact_frames: np.ndarray
    contact_points: tuple[np.ndarray, ...]
    margin: float
    gain: float



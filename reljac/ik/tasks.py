"""IK tasks: an error e(q) that is zero at the target and its Jacobian de/dt = J v.

The controller asks every task for ``J v = -gain * e + feed_forward`` (gain in [1/s]). Rows can be
weighted (``weight``: a scalar or one number per error component; a zero weight masks that
component out). All tasks read the shared :class:`~reljac.relative.Kinematics` of the step, so one
kinematics pass serves every task.

Frame tasks use the SE(3) log: e = log6(T_t^-1 T_ab) = [translation part; rotation vector], in
the target frame's axes, with its exact Jacobian ``pin.Jlog6(T_t^-1 T_ab) @ J_ab_in_b``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..exceptions import TaskError
from ..poses import as_rotation, as_se3
from ..relative import Kinematics
from ..robot import FrameRef, Robot
from ..robots import as_robot
from ..validation import as_float, as_vector
from .description import FrameTaskDescription, Observable, PostureDescription, TaskDescription, frozen

WORLD = "universe"


class TaskTerms(NamedTuple):
    """A task at one configuration (what :meth:`Task.compute` returns): ``error`` e (size,),
    ``jacobian`` J (size, nv) with de/dt = J v, and ``feed_forward`` (size,), the rate the
    target's own motion asks for [units of e / s]. A plain 3-tuple works as well."""

    error: np.ndarray
    jacobian: np.ndarray
    feed_forward: np.ndarray


@dataclass
class TaskRows:
    """A task's rows in the controller's system ``A v = b`` (masked rows dropped).

    A: (m, nv) weighted Jacobian W J, or None when A = identity_scale * diag(mask) (then b has
    zeros on the masked rows, m = nv); b: (m,) weighted desired rate W (-gain e + feed-forward)
    [m/s, rad/s]; feedback: (m,) its feedback part W gain e (without the feed-forward), from
    which the controller's error-dependent damping is computed.
    """

    A: np.ndarray | None
    b: np.ndarray
    feedback: np.ndarray
    identity_scale: float | None = None
    mask: np.ndarray | None = None

    def dense(self, nv: int) -> tuple[np.ndarray, np.ndarray]:
        """(A, b) with A explicit, masked rows dropped."""
        if self.A is not None:
            return self.A, self.b
        kept = np.ones(nv, dtype=bool) if self.mask is None else self.mask > 0
        scale = 1.0 if self.identity_scale is None else self.identity_scale
        return scale * np.eye(nv)[kept], self.b[kept]


class Task(ABC, Observable):
    """Base class: subclasses define ``size``, :meth:`compute` and a target.

    Args:
        gain: [1/s] rate at which the error is driven to zero (error ~ exp(-gain t)).
        weight: scalar or (size,) per-component weight; zeros mask components out.
        max_speed: cap on the norm of the feedback velocity gain * e (step-size clamping) [m/s or
            rad/s; for 6D frame tasks it caps the linear and the angular halves separately, and
            a pair (linear, angular) may be given]. None: no cap.
        name: label used in reports (default: derived from the frames).

    Every public attribute (gain, weight, max_speed, target, frames) can be changed between
    steps, on either backend: the controllers using the task hear about it.
    """

    size = 6
    counts_for_convergence = True
    # which parts of e max_speed caps: (slice of e, index in the (linear, angular) pair)
    speed_parts: tuple[tuple[slice, int], ...] = ((slice(None), 0),)

    def __init__(self, *, gain: float = 1.0, weight: ArrayLike = 1.0, max_speed: ArrayLike | None = None,
                 name: str | None = None) -> None:
        self.gain = gain
        self.max_speed = max_speed
        self.name = name or type(self).__name__
        self.set_weight(weight)

    @property
    def gain(self) -> float:
        """[1/s] rate at which the error is driven to zero."""
        return self._gain

    @gain.setter
    def gain(self, value: float) -> None:
        self._gain = as_float(value, "gain [1/s]", minimum=0.0)
        self._changed()

    @property
    def max_speed(self) -> np.ndarray | None:
        """(linear, angular) caps on the feedback speed [m/s, rad/s], or None (a copy)."""
        return None if self._max_speed is None else self._max_speed.copy()

    @max_speed.setter
    def max_speed(self, value: ArrayLike | None) -> None:
        if value is None:
            self._max_speed = None
        else:
            pair = as_vector(value, 2, "max_speed (linear, angular)") if np.ndim(value) \
                else np.full(2, as_float(value, "max_speed"))
            if not (pair > 0).all():
                raise TaskError(f"max_speed must be positive, got {value}")
            self._max_speed = pair
        self._changed()

    def set_weight(self, weight: ArrayLike) -> None:
        """Per-component weights (scalar or (size,)); a zero masks the component out."""
        what = f"weight of task '{self.name}'"
        w = np.full(self.size, as_float(weight, what)) if np.ndim(weight) == 0 else as_vector(weight, self.size, what)
        if (w < 0).any():
            raise TaskError(f"weights of task '{self.name}' must be finite and >= 0, got {w}")
        self._weight = w
        self._rows = np.flatnonzero(w > 0)
        self._unit_weights = bool(np.all(w == 1.0))
        self._changed()

    @property
    def weight(self) -> np.ndarray:
        """(size,) per-component weights (read-only array: assign a new value or call set_weight)."""
        view = self._weight.view()
        view.flags.writeable = False
        return view

    @weight.setter
    def weight(self, value: ArrayLike) -> None:
        self.set_weight(value)

    def description(self, robot: Robot) -> TaskDescription | None:
        """What the compiled step needs to compute this task's rows itself (see
        :mod:`reljac.ik.description`), or None: its rows are computed in Python every step."""
        return None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # a subclass that changes how its rows are computed, without describing itself anew,
        # is not what its base's description says: it runs in Python
        if cls.__module__ != __name__ and "description" not in cls.__dict__ and any(
                m in cls.__dict__ for m in ("compute", "rows", "weighted", "_feedback", "error", "set_weight")):
            cls.description = Task.description  # type: ignore[method-assign]

    @abstractmethod
    def compute(self, kin: Kinematics) -> TaskTerms:
        """(e, J, feed_forward) at kin's configuration: shapes (size,), (size, nv), (size,)."""

    def weighted(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray]:
        """Rows (A, b) of the level's system: A = W J, b = W (-gain e + feed_forward), masked rows dropped."""
        return self.rows(kin).dense(kin.model.nv)

    def _feedback(self, e: np.ndarray) -> np.ndarray:
        """gain * e [units of e / s], capped by max_speed (a new array)."""
        feedback = self._gain * e
        if self._max_speed is not None:
            for part, which in self.speed_parts:
                cap = self._max_speed[which]
                norm = float(np.linalg.norm(feedback[part]))
                if norm > cap:
                    feedback[part] *= cap / norm
        return feedback

    def rows(self, kin: Kinematics) -> TaskRows:
        """The task's rows at kin's configuration: A = W J, b = W (-gain e + feed_forward)."""
        e, J, ff = self.compute(kin)
        feedback = self._feedback(e)
        if self._unit_weights:  # the common case: no copies
            return TaskRows(J, ff - feedback, feedback)
        w = self.weight[self._rows]
        fb = w * feedback[self._rows]
        return TaskRows(w[:, None] * J[self._rows], w * ff[self._rows] - fb, fb)

    def error_norms(self, kin: Kinematics) -> dict[str, float]:
        """Norms of the (masked) error for reports: e.g. {'position': m, 'orientation': rad}."""
        e = self.compute(kin)[0][self._rows]
        return {"error": float(np.linalg.norm(e))}


class _FramePairTask(Task):
    """A task on the motion of frame b measured in frame a: the frames, a target (None until
    set_target) and the target's velocity for feed-forward (size entries, zero by default)."""

    quantity = "motion"  # what the task controls, for its default name

    kind: str = "pose"  # FrameTaskDescription.kind

    def __init__(self, frame_a: FrameRef, frame_b: FrameRef, **kwargs: Any) -> None:
        self._frame_a, self._frame_b = frame_a, frame_b
        kwargs.setdefault("name", f"{self.quantity} of {frame_b} in {frame_a}")
        super().__init__(**kwargs)
        self._target: Any = None  # pin.SE3, (3,) position or (3, 3) rotation: the subclass's
        self._target_velocity = np.zeros(self.size)

    @property
    def frame_a(self) -> FrameRef:
        """Frame a (name or id): the motion of b is measured in it."""
        return self._frame_a

    @frame_a.setter
    def frame_a(self, frame: FrameRef) -> None:
        self._frame_a = frame
        self._changed()

    @property
    def frame_b(self) -> FrameRef:
        """Frame b (name or id), the frame controlled."""
        return self._frame_b

    @frame_b.setter
    def frame_b(self, frame: FrameRef) -> None:
        self._frame_b = frame
        self._changed()

    def description(self, robot: Robot) -> FrameTaskDescription:
        """The task for the compiled step (frames resolved on `robot`)."""
        target = self._require_target()
        T = np.eye(4)
        if isinstance(target, pin.SE3):
            T[:3, :3], T[:3, 3] = target.rotation, target.translation
        elif target.shape == (3,):
            T[:3, 3] = target
        else:
            T[:3, :3] = target
        return FrameTaskDescription(self.kind, robot.frame_id(self._frame_a), robot.frame_id(self._frame_b),  # type: ignore[arg-type]
                                    self._gain, frozen(self._weight), None if self._max_speed is None else
                                    frozen(self._max_speed), frozen(T), frozen(self._target_velocity))

    @property
    def target(self):
        """The target (None until set_target); a copy: change it with set_target."""
        return None if self._target is None else self._target.copy()

    @target.setter
    def target(self, value: Any) -> None:
        self.set_target(value)

    @property
    def target_velocity(self) -> np.ndarray:
        """The target's velocity for feed-forward, (size,) (a copy)."""
        return self._target_velocity.copy()

    @target_velocity.setter
    def target_velocity(self, value: Any) -> None:
        self._set_target_velocity(value)
        self._changed()

    def set_target(self, target: Any, velocity: ArrayLike | None = None) -> None:  # pragma: no cover - subclasses
        raise NotImplementedError

    def _set_target_velocity(self, velocity: ArrayLike | None) -> None:
        self._target_velocity = np.zeros(self.size) if velocity is None else \
            as_vector(velocity, self.size, "target velocity")

    def _require_target(self):
        if self._target is None:
            raise TaskError(f"task '{self.name}' has no target: call set_target first")
        return self._target


class RelativeFrameTask(_FramePairTask):
    """Pose of frame b in frame a (6D): e = log6(T_t^-1 T_ab), in the target frame's axes.

    ``set_target(T_ab_target, velocity=None)``; `velocity` is the target's own twist
    [linear; angular] (6,), measured in a and expressed in the target frame, for feed-forward.
    Weights apply to e = [position error (3); rotation vector (3)].
    """

    quantity = "pose"
    speed_parts = ((slice(0, 3), 0), (slice(3, 6), 1))

    def set_target(self, T_ab: Any, velocity: ArrayLike | None = None) -> None:
        self._target = as_se3(T_ab, f"target of task '{self.name}'")
        self._set_target_velocity(velocity)
        self._changed()

    def set_target_from_configuration(self, robot: Robot, q: ArrayLike) -> None:
        """Target = the current relative pose at configuration q."""
        self.set_target(Kinematics(robot, q).relative_placement(self.frame_a, self.frame_b))

    def compute(self, kin: Kinematics) -> TaskTerms:
        T_err = self._require_target().actInv(kin.relative_placement(self.frame_a, self.frame_b))
        e = pin.log6(T_err).vector
        Jlog = pin.Jlog6(T_err)
        J = Jlog @ kin.relative_jacobian(self.frame_a, self.frame_b, expressed_in="b")
        # d/dt (T_t^-1 T_ab) gets -Ad(T_err^-1) V_t from a moving target
        if self._target_velocity.any():
            ff = Jlog @ (T_err.inverse().toActionMatrix() @ self._target_velocity)
        else:
            ff = np.zeros(6)
        return TaskTerms(e, J, ff)

    def error_norms(self, kin):
        T_err = self._require_target().actInv(kin.relative_placement(self.frame_a, self.frame_b))
        return {
            "position": float(np.linalg.norm(T_err.translation * (self.weight[:3] > 0))),
            "orientation": float(np.linalg.norm(pin.log3(T_err.rotation) * (self.weight[3:] > 0))),
        }


class FrameTask(RelativeFrameTask):
    """Absolute pose of a frame in the world: a :class:`RelativeFrameTask` whose a is the world."""

    def __init__(self, frame: FrameRef, **kwargs: Any) -> None:
        kwargs.setdefault("name", f"pose of {frame}")
        super().__init__(WORLD, frame, **kwargs)


class RelativePositionTask(_FramePairTask):
    """Position of b's origin in a: e = p_ab - p_target (in a's axes). Target: (3,) [m]."""

    size = 3
    quantity = "position"
    kind = "position"

    def set_target(self, p_ab: ArrayLike, velocity: ArrayLike | None = None) -> None:
        """Target position of b in a (3,) [m]; optional velocity d/dt p_target (3,) [m/s]."""
        self._target = as_vector(p_ab, 3, f"target of task '{self.name}'")
        self._set_target_velocity(velocity)
        self._changed()

    def compute(self, kin: Kinematics) -> TaskTerms:
        target = self._require_target()
        T_ab = kin.relative_placement(self.frame_a, self.frame_b)
        J = kin.relative_jacobian(self.frame_a, self.frame_b)[:3]
        return TaskTerms(T_ab.translation - target, J, self._target_velocity.copy())

    def error_norms(self, kin):
        return {"position": super().error_norms(kin)["error"]}


class RelativeOrientationTask(_FramePairTask):
    """Orientation of b in a: e = log3(R_t^T R_ab) (target axes). Target: (3, 3) rotation.

    Optional target angular velocity (3,): measured in a, expressed in the target frame.
    """

    size = 3
    quantity = "orientation"
    kind = "orientation"
    speed_parts = ((slice(None), 1),)

    def set_target(self, R_ab: Any, velocity: ArrayLike | None = None) -> None:
        self._target = as_rotation(R_ab, f"target of task '{self.name}'")
        self._set_target_velocity(velocity)
        self._changed()

    def compute(self, kin: Kinematics) -> TaskTerms:
        R_err = self._require_target().T @ kin.relative_placement(self.frame_a, self.frame_b).rotation
        Jlog = pin.Jlog3(R_err)
        J = Jlog @ kin.relative_jacobian(self.frame_a, self.frame_b, expressed_in="b")[3:]
        ff = Jlog @ (R_err.T @ self._target_velocity)
        return TaskTerms(pin.log3(R_err), J, ff)

    def error_norms(self, kin):
        return {"orientation": super().error_norms(kin)["error"]}


class PostureTask(Task):
    """Joint posture: e = difference(q_target, q) (nv,), so J = d difference / dq (identity
    for revolute, prismatic and continuous joints). Usually the lowest level; it does not count
    for convergence. Target: a configuration (nq,); mask a floating base with zero weights.

    When the weighted Jacobian is c times a selection of identity rows (uniform weights, and any
    floating or spherical joint masked out), the controller takes a fast path: the level's
    correction is the null-space projection of the weighted posture error (exact when nothing
    above constrains the joints).
    """

    counts_for_convergence = False

    def __init__(self, robot: Robot, **kwargs: Any) -> None:
        self.robot = robot = as_robot(robot)
        self.size = robot.nv
        model = robot.model
        # velocity rows whose d difference / dq block is not the identity (free-flyer, spherical, planar)
        curved = np.zeros(model.nv, dtype=bool)
        for j in range(1, model.njoints):
            joint = model.joints[j]
            if joint.nv > 1:
                curved[joint.idx_v : joint.idx_v + joint.nv] = True
        self._curved_rows = curved
        self._euclidean = not curved.any()
        kwargs.setdefault("name", "posture")
        super().__init__(**kwargs)
        self._target = robot.reference_configuration()

    @property
    def target(self) -> np.ndarray:
        """The target configuration (nq,) (a copy: change it with set_target)."""
        return self._target.copy()

    @target.setter
    def target(self, q: ArrayLike) -> None:
        self.set_target(q)

    def set_target(self, q: ArrayLike) -> None:
        self._target = self.robot.validate_q(q, name=f"target of task '{self.name}'")
        self._changed()

    def description(self, robot: Robot) -> PostureDescription:
        """The task for the compiled step."""
        return PostureDescription(self._gain, frozen(self._weight), None if self._max_speed is None else
                                  frozen(self._max_speed), frozen(self._target))

    def compute(self, kin: Kinematics) -> TaskTerms:
        model = self.robot.model
        e = pin.difference(model, self._target, kin.q)
        J = np.eye(model.nv) if self._euclidean else pin.dDifference(model, self._target, kin.q, pin.ARG1)
        return TaskTerms(e, J, np.zeros(model.nv))

    def error(self, kin: Kinematics) -> np.ndarray:
        """e = difference(q_target, q), (nv,), without the Jacobian."""
        return pin.difference(self.robot.model, self._target, kin.q)

    def rows(self, kin: Kinematics) -> TaskRows:
        """Identity form (A = c diag(mask), not built) when the weights allow it, else dense rows."""
        c = self._identity_scale
        if c is None:
            return super().rows(kin)
        mask = self.row_mask
        feedback = mask * (c * self._feedback(self.error(kin)))
        return TaskRows(None, -feedback, feedback, identity_scale=c, mask=mask)

    @property
    def identity_scale(self) -> float | None:
        """c when the weighted Jacobian is c times identity rows (solver fast path), else None."""
        return self._identity_scale

    @property
    def row_mask(self) -> np.ndarray:
        """(nv,) 1.0 for the rows the task keeps, 0.0 for masked ones."""
        return (self.weight > 0).astype(float)

    def set_weight(self, weight: ArrayLike) -> None:
        super().set_weight(weight)
        kept = self.weight[self.weight > 0]
        uniform = kept.size and np.all(kept == kept[0])
        curved_kept = (self._curved_rows & (self.weight > 0)).any()
        self._identity_scale = float(kept[0]) if uniform and not curved_kept else None

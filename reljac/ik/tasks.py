"""IK tasks: an error e(q) that is zero at the target and its Jacobian de/dt = J v.

The controller asks every task for ``J v = -gain * e + feed_forward`` (gain in [1/s]). Rows can be
weighted (``weight``: a scalar or one number per error component; a zero weight masks that
component out). All tasks read the shared :class:`~reljac.relative.Kinematics` of the step, so one
kinematics pass serves every task.

Frame tasks use the SE(3) log: e = log6(T_t^-1 T_ab) = [translation part; rotation vector], in
the target frame's axes, with its exact Jacobian ``pin.Jlog6(T_t^-1 T_ab) @ J_ab_in_b``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..exceptions import TaskError
from ..relative import Kinematics
from ..robot import FrameRef, Robot
from ..validation import as_float, as_se3 as _as_se3, as_vector as _as_vector, check_rotation as _check_rotation

WORLD = "universe"


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
        return self.identity_scale * np.eye(nv)[kept], self.b[kept]


class Task:
    """Base class: subclasses define ``size``, :meth:`compute` and a target.

    Args:
        gain: [1/s] rate at which the error is driven to zero (error ~ exp(-gain t)).
        weight: scalar or (size,) per-component weight; zeros mask components out.
        max_speed: cap on the norm of the feedback velocity gain * e (step-size clamping) [m/s or
            rad/s; for 6D frame tasks it caps the linear and the angular halves separately, and
            a pair (linear, angular) may be given]. None: no cap.
        name: label used in reports (default: derived from the frames).
    """

    size = 6
    counts_for_convergence = True

    def __init__(self, *, gain: float = 1.0, weight=1.0, max_speed=None, name: str | None = None) -> None:
        self.gain = as_float(gain, "gain [1/s]", minimum=0.0)
        if max_speed is None:
            self.max_speed = None
        else:
            pair = _as_vector(max_speed, 2, "max_speed (linear, angular)") if np.ndim(max_speed) \
                else np.full(2, as_float(max_speed, "max_speed"))
            if not (pair > 0).all():
                raise TaskError(f"max_speed must be positive, got {max_speed}")
            self.max_speed = pair
        self.name = name or type(self).__name__
        self.set_weight(weight)

    def set_weight(self, weight) -> None:
        """Per-component weights (scalar or (size,)); a zero masks the component out."""
        what = f"weight of task '{self.name}'"
        w = np.full(self.size, as_float(weight, what)) if np.ndim(weight) == 0 else _as_vector(weight, self.size, what)
        if (w < 0).any():
            raise TaskError(f"weights of task '{self.name}' must be finite and >= 0, got {w}")
        self.weight = w
        self._rows = np.flatnonzero(w > 0)
        self._unit_weights = bool(np.all(w == 1.0))

    def compute(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(e, J, feed_forward) at kin's configuration: shapes (size,), (size, nv), (size,)."""
        raise NotImplementedError

    def weighted(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray]:
        """Rows (A, b) of the level's system: A = W J, b = W (-gain e + feed_forward), masked rows dropped."""
        return self.rows(kin).dense(kin.model.nv)

    def _feedback(self, e: np.ndarray) -> np.ndarray:
        """gain * e [units of e / s], capped by max_speed (a new array)."""
        feedback = self.gain * e
        if self.max_speed is not None:
            halves = (slice(0, 3), slice(3, 6)) if self.size == 6 else (slice(None),)
            for half, cap in zip(halves, self.max_speed):
                norm = float(np.linalg.norm(feedback[half]))
                if norm > cap:
                    feedback[half] *= cap / norm
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

    def __init__(self, frame_a: FrameRef, frame_b: FrameRef, **kwargs) -> None:
        self.frame_a, self.frame_b = frame_a, frame_b
        kwargs.setdefault("name", f"{self.quantity} of {frame_b} in {frame_a}")
        super().__init__(**kwargs)
        self.target = None
        self.target_velocity = np.zeros(self.size)

    def _set_target_velocity(self, velocity) -> None:
        self.target_velocity = np.zeros(self.size) if velocity is None else \
            _as_vector(velocity, self.size, "target velocity")

    def _require_target(self):
        if self.target is None:
            raise TaskError(f"task '{self.name}' has no target: call set_target first")
        return self.target


class RelativeFrameTask(_FramePairTask):
    """Pose of frame b in frame a (6D): e = log6(T_t^-1 T_ab), in the target frame's axes.

    ``set_target(T_ab_target, velocity=None)``; `velocity` is the target's own twist
    [linear; angular] (6,), measured in a and expressed in the target frame, for feed-forward.
    Weights apply to e = [position error (3); rotation vector (3)].
    """

    quantity = "pose"

    def set_target(self, T_ab, velocity=None) -> None:
        self.target = _as_se3(T_ab, f"target of task '{self.name}'")
        self._set_target_velocity(velocity)

    def set_target_from_configuration(self, robot: Robot, q) -> None:
        """Target = the current relative pose at configuration q."""
        self.set_target(Kinematics(robot, q).relative_placement(self.frame_a, self.frame_b))

    def compute(self, kin):
        T_err = self._require_target().actInv(kin.relative_placement(self.frame_a, self.frame_b))
        e = pin.log6(T_err).vector
        Jlog = pin.Jlog6(T_err)
        J = Jlog @ kin.relative_jacobian(self.frame_a, self.frame_b, expressed_in="b")
        # d/dt (T_t^-1 T_ab) gets -Ad(T_err^-1) V_t from a moving target
        if self.target_velocity.any():
            ff = Jlog @ (T_err.inverse().toActionMatrix() @ self.target_velocity)
        else:
            ff = np.zeros(6)
        return e, J, ff

    def error_norms(self, kin):
        T_err = self._require_target().actInv(kin.relative_placement(self.frame_a, self.frame_b))
        return {
            "position": float(np.linalg.norm(T_err.translation * (self.weight[:3] > 0))),
            "orientation": float(np.linalg.norm(pin.log3(T_err.rotation) * (self.weight[3:] > 0))),
        }


class FrameTask(RelativeFrameTask):
    """Absolute pose of a frame in the world: a :class:`RelativeFrameTask` whose a is the world."""

    def __init__(self, frame: FrameRef, **kwargs) -> None:
        kwargs.setdefault("name", f"pose of {frame}")
        super().__init__(WORLD, frame, **kwargs)


class RelativePositionTask(_FramePairTask):
    """Position of b's origin in a: e = p_ab - p_target (in a's axes). Target: (3,) [m]."""

    size = 3
    quantity = "position"

    def set_target(self, p_ab, velocity=None) -> None:
        """Target position of b in a (3,) [m]; optional velocity d/dt p_target (3,) [m/s]."""
        self.target = _as_vector(p_ab, 3, f"target of task '{self.name}'")
        self._set_target_velocity(velocity)

    def compute(self, kin):
        target = self._require_target()
        T_ab = kin.relative_placement(self.frame_a, self.frame_b)
        J = kin.relative_jacobian(self.frame_a, self.frame_b)[:3]
        return T_ab.translation - target, J, self.target_velocity

    def error_norms(self, kin):
        return {"position": super().error_norms(kin)["error"]}


class RelativeOrientationTask(_FramePairTask):
    """Orientation of b in a: e = log3(R_t^T R_ab) (target axes). Target: (3, 3) rotation.

    Optional target angular velocity (3,): measured in a, expressed in the target frame.
    """

    size = 3
    quantity = "orientation"

    def set_target(self, R_ab, velocity=None) -> None:
        try:
            R = np.array(R_ab.rotation if isinstance(R_ab, pin.SE3) else R_ab, dtype=float)
        except (TypeError, ValueError):
            raise TaskError(f"target of task '{self.name}' must be a (3, 3) rotation, got {R_ab!r}") from None
        if R.shape != (3, 3):
            raise TaskError(f"target of task '{self.name}' must be a (3, 3) rotation, got {R.shape}")
        _check_rotation(R, f"target of task '{self.name}'")
        self.target = R
        self._set_target_velocity(velocity)

    def compute(self, kin):
        R_err = self._require_target().T @ kin.relative_placement(self.frame_a, self.frame_b).rotation
        Jlog = pin.Jlog3(R_err)
        J = Jlog @ kin.relative_jacobian(self.frame_a, self.frame_b, expressed_in="b")[3:]
        ff = Jlog @ (R_err.T @ self.target_velocity)
        return pin.log3(R_err), J, ff

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

    def __init__(self, robot: Robot, **kwargs) -> None:
        self.robot = robot
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
        self.target = robot.neutral()

    def set_target(self, q) -> None:
        self.target = self.robot.validate_q(q, name=f"target of task '{self.name}'")

    def compute(self, kin):
        model = self.robot.model
        e = pin.difference(model, self.target, kin.q)
        J = np.eye(model.nv) if self._euclidean else pin.dDifference(model, self.target, kin.q, pin.ARG1)
        return e, J, np.zeros(model.nv)

    def error(self, kin: Kinematics) -> np.ndarray:
        """e = difference(q_target, q), (nv,), without the Jacobian."""
        return pin.difference(self.robot.model, self.target, kin.q)

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

    def set_weight(self, weight) -> None:
        super().set_weight(weight)
        kept = self.weight[self.weight > 0]
        uniform = kept.size and np.all(kept == kept[0])
        curved_kept = (self._curved_rows & (self.weight > 0)).any()
        self._identity_scale = float(kept[0]) if uniform and not curved_kept else None

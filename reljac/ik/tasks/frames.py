"""Tasks on the motion of frame b measured in frame a: pose (6D, through the SE(3) log), position
and orientation, and the absolute pose of a frame in the world (a = the world).

Errors are in the target frame's axes (pose, orientation) or in a's (position); see
:mod:`reljac.ik.tasks` for the conventions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ...exceptions import TaskError
from ...poses import as_rotation, as_se3, homogeneous
from ...relative import Kinematics
from ...robot import FrameRef, Robot
from ...validation import as_frame_ref, as_vector
from ..description import Description, frozen
from .base import TargetedTask, Task, TaskTerms

WORLD = "universe"
VELOCITY_FRAMES = ("target", "a")  # where a feed-forward velocity may be given (see set_target)


def _in_target_axes(task: Any, velocity: ArrayLike | None, R_at: np.ndarray, frame: Any,
                    names: tuple[str, ...]) -> np.ndarray | None:
    """`velocity` (None, or task.size numbers in 3-row blocks: [linear; angular] or angular)
    given in `frame` -> the same velocity in the target frame's axes, the task's own convention.

    "target": as it is; "a" (or an alias in `names` for frame a, such as "world" for a
    FrameTask): each 3-vector in a's axes, rotated by R_at^T (R_at: the target's rotation in a).
    """
    if frame not in names:
        valid = ", ".join(repr(n) for n in names)
        raise TaskError(f"velocity_frame of task '{task.name}' must be one of {valid}, not {frame!r}")
    if velocity is None or frame == "target":
        return None if velocity is None else as_vector(velocity, task.size, f"target velocity of task '{task.name}'")
    v = as_vector(velocity, task.size, f"target velocity of task '{task.name}'")
    return (v.reshape(-1, 3) @ R_at).ravel()  # each block: R_at^T x


class BetweenFrames(Task):
    """A task on frame b seen from frame a (a relative pose, a cone, half-spaces): the two frames,
    which can be changed between steps like a target (a controller's compiled step hears of it)."""

    _frame_a: FrameRef
    _frame_b: FrameRef

    def _set_frames(self, frame_a: FrameRef, frame_b: FrameRef) -> None:
        """The frames as the constructor got them (before Task's: nothing listens yet)."""
        self._frame_a = as_frame_ref(frame_a, f"frame_a of a {type(self).__name__}")
        self._frame_b = as_frame_ref(frame_b, f"frame_b of a {type(self).__name__}")

    @property
    def frame_a(self) -> FrameRef:
        """Frame a (name or id): b is measured in it."""
        return self._frame_a

    @frame_a.setter
    def frame_a(self, frame: FrameRef) -> None:
        self._frame_a = as_frame_ref(frame, f"frame_a of task '{self.name}'")
        self._changed()

    @property
    def frame_b(self) -> FrameRef:
        """Frame b (name or id), the frame controlled."""
        return self._frame_b

    @frame_b.setter
    def frame_b(self, frame: FrameRef) -> None:
        self._frame_b = as_frame_ref(frame, f"frame_b of task '{self.name}'")
        self._changed()


class FramePairTask(BetweenFrames, TargetedTask):
    """A task on the motion of frame b measured in frame a: the frames, a target (None until
    set_target) and the target's velocity for feed-forward (size entries, zero by default)."""

    quantity = "motion"  # what the task controls, for its default name

    kind: str = "pose"  # FrameTaskDescription.kind

    def __init__(self, frame_a: FrameRef, frame_b: FrameRef, **kwargs: Any) -> None:
        self._set_frames(frame_a, frame_b)
        kwargs.setdefault("name", f"{self.quantity} of {frame_b} in {frame_a}")
        super().__init__(**kwargs)

    def description(self, robot: Robot) -> Description:
        """The task for the compiled step (frames resolved on `robot`)."""
        return Description("FrameTaskDescription", kind=self.kind, frame_a=robot.frame_id(self._frame_a),
                           frame_b=robot.frame_id(self._frame_b), target=frozen(homogeneous(self._require_target())),
                           target_velocity=frozen(self._target_velocity), **self.described_parameters())

class RelativeFrameTask(FramePairTask, kind="relative"):
    """Pose of frame b in frame a (6D): e = log6(T_t^-1 T_ab), in the target frame's axes.

    ``set_target(T_ab_target, velocity=None, velocity_frame="target")``: `velocity` is the
    target's velocity for feed-forward, measured in a; see :meth:`set_target` for the frames it
    may be expressed in. Weights apply to e = [position error (3); rotation vector (3)].
    """

    quantity = "pose"
    speed_parts = ((slice(0, 3), 0), (slice(3, 6), 1))
    velocity_frames: tuple[str, ...] = VELOCITY_FRAMES

    def set_target(self, T_ab: Any, velocity: ArrayLike | None = None, velocity_frame: str = "target") -> None:
        """Target pose T_ab of b in a (``pin.SE3`` or (4, 4)), and its velocity for feed-forward.

        Args:
            velocity: (6,) [linear [m/s]; angular [rad/s]] of the target measured in a, or None
                (a target at rest).
            velocity_frame: the axes `velocity` is expressed in. "target" (the default): the
                target's own twist, both parts in the target frame's axes (``T_t^-1 dT_t/dt``,
                Pinocchio's LOCAL velocity of the target). "a" (for a :class:`FrameTask`, also
                "world"): [d/dt p_target; w_target] both in a's axes, the rows of J_ab (the
                "world" velocity of pink, mink and Pinocchio's LOCAL_WORLD_ALIGNED when a is the
                world). It is stored, and read back by ``target_velocity``, in the target's axes.

        Raises:
            TaskError: a pose that is not a rigid transform; a velocity that is not 6 finite
                numbers; an unknown velocity_frame.
        """
        target = as_se3(T_ab, f"target of task '{self.name}'")
        velocity = _in_target_axes(self, velocity, target.rotation, velocity_frame, self.velocity_frames)
        self._target = target
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
        if self._bounds is not None:  # the violation of the bounds on e = log6(T_err), per half
            gap = self.violation(self.compute(kin)[0]) * (self.weight > 0)
            return {"position": float(np.linalg.norm(gap[:3])), "orientation": float(np.linalg.norm(gap[3:]))}
        T_err = self._require_target().actInv(kin.relative_placement(self.frame_a, self.frame_b))
        return {
            "position": float(np.linalg.norm(T_err.translation * (self.weight[:3] > 0))),
            "orientation": float(np.linalg.norm(pin.log3(T_err.rotation) * (self.weight[3:] > 0))),
        }


class FrameTask(RelativeFrameTask, kind="frame"):
    """Absolute pose of a frame in the world: a :class:`RelativeFrameTask` whose a is the world.

    Its feed-forward velocity is the target's own twist in the target's axes by default;
    ``set_target(T, velocity=[d/dt p; w], velocity_frame="world")`` takes it in world axes, as
    pink's and mink's users give it."""

    velocity_frames: tuple[str, ...] = (*VELOCITY_FRAMES, "world")  # "world" = "a": a is the world

    def __init__(self, frame: FrameRef, **kwargs: Any) -> None:
        kwargs.setdefault("name", f"pose of {frame}")
        super().__init__(WORLD, frame, **kwargs)


class RelativePositionTask(FramePairTask, kind="position"):
    """Position of b's origin in a: e = p_ab - p_target (in a's axes). Target: (3,) [m]."""

    size = 3
    quantity = "position"
    kind = "position"

    def set_target(self, p_ab: ArrayLike, velocity: ArrayLike | None = None, velocity_frame: str = "a") -> None:
        """Target position of b in a (3,) [m]; optional velocity d/dt p_target (3,) [m/s] in a's
        axes (`velocity_frame` "a", the only one: a position target has no axes of its own)."""
        if isinstance(p_ab, pin.SE3):  # (as_vector would read its 16 matrix entries)
            raise TaskError(f"target of task '{self.name}' is a position (3,) [m], got a pin.SE3 (a pose): "
                            "give its .translation")
        if velocity_frame != "a":
            raise TaskError(f"velocity_frame of task '{self.name}' must be 'a' (a position target's velocity "
                            f"is d/dt p_target in a's axes), not {velocity_frame!r}")
        target = as_vector(p_ab, 3, f"target of task '{self.name}'")
        self._target, self._target_velocity = target, self._checked_target_velocity(velocity)
        self._changed()

    def compute(self, kin: Kinematics) -> TaskTerms:
        target = self._require_target()
        T_ab = kin.relative_placement(self.frame_a, self.frame_b)
        J = kin.relative_jacobian(self.frame_a, self.frame_b)[:3]
        return TaskTerms(T_ab.translation - target, J, self._target_velocity.copy())

    def error_norms(self, kin):
        return {"position": super().error_norms(kin)["error"]}


class RelativeOrientationTask(FramePairTask, kind="orientation"):
    """Orientation of b in a: e = log3(R_t^T R_ab) (target axes). Target: (3, 3) rotation.

    Optional target angular velocity (3,) [rad/s], measured in a, expressed in the target
    frame (``velocity_frame="target"``, the default) or in a's axes (``"a"``).
    """

    size = 3
    quantity = "orientation"
    kind = "orientation"
    speed_parts = ((slice(None), 1),)

    def set_target(self, R_ab: Any, velocity: ArrayLike | None = None, velocity_frame: str = "target") -> None:
        """Target rotation R_ab (3, 3), and its angular velocity (3,) [rad/s] measured in a,
        expressed in the target's axes ("target") or in a's ("a"); stored in the target's.

        Raises:
            TaskError: not a rotation; a velocity that is not 3 finite numbers; an unknown
                velocity_frame.
        """
        target = as_rotation(R_ab, f"target of task '{self.name}'")
        velocity = _in_target_axes(self, velocity, target, velocity_frame, VELOCITY_FRAMES)
        self._target = target
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

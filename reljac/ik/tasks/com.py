"""The centre of mass as a task: :class:`CoMTask` drives the robot's centre of mass c, measured
in any frame a (the world by default, or a mid-feet frame, a base...), on all three axes or a
subset (``axes="xy"``: the horizontal plane): e = p_ac[axes] - target, J = J_ac[axes]
(Pinocchio's ``jacobianCenterOfMass`` carried into a,
:meth:`~reljac.relative.Kinematics.center_of_mass_jacobian`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...exceptions import SupportError, TaskError
from ...mass import total_mass
from ...relative import Kinematics
from ...robot import FrameRef, Robot, as_robot
from ...validation import as_vector, dims
from ..description import Description, frozen
from .base import TargetedTask, TaskTerms

WORLD = "universe"
_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


def massive_robot(robot: Robot) -> Robot:
    """`robot` as a Robot with mass (SupportError: it has none: its centre of mass is undefined)."""
    robot = as_robot(robot)
    if not total_mass(robot.model) > 0:
        raise SupportError(f"robot '{robot.name}' has no mass: its centre of mass is undefined")
    return robot


def _axes(axes: str) -> tuple[int, ...]:
    if not isinstance(axes, str) or not axes or any(a not in _AXIS_INDEX for a in axes) or len(set(axes)) != len(axes):
        raise TaskError(f"axes must be distinct letters among 'x', 'y', 'z' (e.g. 'xyz', 'xy'), got {axes!r}")
    return tuple(_AXIS_INDEX[a] for a in axes)


class CoMTask(TargetedTask, kind="com"):
    """The centre of mass c in frame a: e = p_ac[axes] - target [m], J = J_ac[axes] (size = len(axes)).

    Args:
        robot: the robot.
        frame: frame a (name or id) the centre of mass is measured in, in a's axes (default: the world).
        axes: the components controlled, e.g. "xyz" (default) or "xy" (horizontal, with a z-up a).
        **kwargs: gain, weight, max_speed, name, as :class:`~reljac.ik.tasks.Task` (max_speed in [m/s]).

    ``set_target(p, velocity=None)``: the target p_ac (3,) [m] (only `axes` used) or (size,), and
    its velocity for feed-forward (size,) [m/s].
    """

    def __init__(self, robot: Robot, frame: FrameRef = WORLD, *, axes: str = "xyz", **kwargs: Any) -> None:
        self.robot = robot = massive_robot(robot)
        self._axes = _axes(axes)
        self._axes_given = axes
        self.size = len(self._axes)
        self._frame = frame
        robot.frame_id(frame)  # FrameNotFound now rather than at the first step
        kwargs.setdefault("name", "centre of mass" + ("" if frame == WORLD else f" in {frame}"))
        super().__init__(**kwargs)

    @property
    def axes(self) -> str:
        """The components controlled, as given ("xyz", "xy", ...): fixed at construction (the
        task's row count)."""
        return self._axes_given

    @property
    def frame(self) -> FrameRef:
        """Frame a (name or id) the centre of mass is measured and expressed in."""
        return self._frame

    @frame.setter
    def frame(self, frame: FrameRef) -> None:
        self.robot.frame_id(frame)
        self._frame = frame
        self._changed()

    def set_target(self, p: ArrayLike, velocity: ArrayLike | None = None) -> None:
        """Target p_ac: (3,) [m] (the controlled axes are taken) or (size,); velocity (size,) [m/s]."""
        what = f"target of task '{self.name}'"
        whole = self.size != 3 and dims(p) == 1 and np.size(np.asarray(p, dtype=object)) == 3
        # (a whole point: the controlled axes are taken)
        target = as_vector(p, 3, what)[list(self._axes)] if whole else as_vector(p, self.size, what)
        self._target, self._target_velocity = target, self._checked_target_velocity(velocity)
        self._changed()

    def set_target_from_configuration(self, q: ArrayLike) -> None:
        """Target = the centre of mass at configuration q (nq,)."""
        self.set_target(Kinematics(self.robot, q).center_of_mass(self._frame)[list(self._axes)])

    def compute(self, kin: Kinematics) -> TaskTerms:
        target = self._require_target()
        rows = list(self._axes)
        return TaskTerms(kin.center_of_mass(self._frame)[rows] - target,
                         kin.center_of_mass_jacobian(self._frame)[rows], self._target_velocity.copy())

    def error_norms(self, kin: Kinematics) -> dict[str, float]:
        return {"position": super().error_norms(kin)["error"]}

    def description(self, robot: Robot) -> Description:
        """The task for the compiled step."""
        return Description("CoMTaskDescription", frame=robot.frame_id(self._frame), axes=np.array(self._axes),
                           target=frozen(self._require_target()), target_velocity=frozen(self._target_velocity),
                           **self.described_parameters())



__all__ = ["WORLD", "CoMTask", "massive_robot"]

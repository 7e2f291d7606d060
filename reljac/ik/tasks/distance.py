"""The distance between two frames' origins as a task (one row), compiled by the core's kind
``DistanceTaskDescription`` (``src/core/task_distance.cpp``: its description's fields, its class):
a new compiled task kind is this module, that C++ file and their test (``tests/test_distance_task.py``).

e = |p_ab| - d [m], p_ab the position of b's origin measured and expressed in a; its Jacobian is
u^T J_ab^v with u = p_ab / |p_ab| (a zero row where the origins coincide, where the distance has
no derivative) and J_ab^v the linear rows of J_ab in a's axes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...exceptions import TaskError
from ...relative import Kinematics
from ...robot import Robot
from ...validation import MAX_COORDINATE, as_float
from ..description import Description
from .base import TaskTerms
from .frames import FramePairTask


class DistanceTask(FramePairTask, kind="distance"):
    """Distance between the origins of frames a and b: e = |p_ab| - d [m] (1 row).

    ``set_target(distance, velocity=None)``: the distance d >= 0 [m] and its rate [m/s] for
    feed-forward.
    """

    size = 1
    quantity = "distance"
    kind = "distance"

    def set_target(self, distance: Any, velocity: ArrayLike | None = None) -> None:
        """distance [m] >= 0: a number, or an array of one (the task's own :attr:`target` back)."""
        if isinstance(distance, np.ndarray) and distance.size == 1 and distance.ndim <= 1:
            distance = distance.reshape(-1)[0]
        value = as_float(distance, f"target distance of task '{self.name}' [m]", minimum=0.0)
        if value > MAX_COORDINATE:
            raise TaskError(f"target distance of task '{self.name}' [m] must be <= {MAX_COORDINATE:g}, got {value:g}")
        self._target, self._target_velocity = np.array([value]), self._checked_target_velocity(velocity)
        self._changed()

    def set_target_from_configuration(self, robot: Robot, q: ArrayLike) -> None:
        """Target = the distance between the origins at configuration q (nq,) of `robot`."""
        kin = Kinematics(robot, q)
        self.set_target(float(np.linalg.norm(kin.relative_placement(self.frame_a, self.frame_b).translation)))

    def compute(self, kin: Kinematics) -> TaskTerms:
        target = self._require_target()
        p_ab = kin.relative_placement(self.frame_a, self.frame_b).translation
        distance = float(np.linalg.norm(p_ab))
        u = p_ab / distance if distance > 0 else np.zeros(3)
        J = u @ kin.relative_jacobian(self.frame_a, self.frame_b)[:3]
        return TaskTerms(np.array([distance]) - target, J[None, :], self._target_velocity.copy())

    def description(self, robot: Robot) -> Description:
        """The task for the compiled step (frames resolved on `robot`)."""
        target = self._require_target()
        return Description("DistanceTaskDescription", frame_a=robot.frame_id(self.frame_a),
                           frame_b=robot.frame_id(self.frame_b), target=float(target[0]),
                           target_velocity=float(self._target_velocity[0]), **self.described_parameters())



__all__ = ["DistanceTask"]

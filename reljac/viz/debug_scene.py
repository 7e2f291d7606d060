"""What a debug page draws over the robot: a drag handle at each draggable task's target, the
collision limits' near pairs, and the marks of the joints that saturated a level.

Poses are in the world frame w or in a task's frame a [m] (``T_ah``: a handle's pose in a).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from ..relative import Kinematics
from ..robot import Robot
from .debug_overlays import Handle, JointMarks
from .debug_state import bounds_region, draggable, handle_pose, parent_frame, set_handle_target, targeted
from .viewer import Viewer

HANDLE_SIZE = 1.5  # handle axis length, in the viewer's scale
MARK_SIZE = 0.35  # a saturated joint's mark, in the viewer's scale


class DebugScene:
    """The debugger's overlays on `viewer`, drawn once at configuration q (nq,).

    Each draggable task (:func:`~reljac.viz.debug_state.draggable`) gets a triad at its frame b and
    a 6-DoF handle at its target, drawn in (and moving with) its frame a; a task without a target
    yet is given the pose its frame b has at q. Each collision limit's pairs nearer than its
    influence distance are drawn (:meth:`~reljac.viz.Viewer.show_collisions`).

    Attributes:
        handles: {handle name: (task, its :class:`~reljac.viz.debug_overlays.Handle`)}.
        marks: the saturated joints' marks (set its ``joints``; drawn at the next display).
    """

    def __init__(self, viewer: Viewer, robot: Robot, tasks: list, collision: list, q: np.ndarray) -> None:
        self.handles: dict[str, tuple[Any, Handle]] = {}
        for task in tasks:
            if not draggable(task):
                continue
            viewer.show_frame(targeted(task).frame_b, label=None)
            T_ah = handle_pose(task)
            if T_ah is None:  # no target yet: the frame where it is now
                T_ah = relative_pose(robot, task, q)
                set_handle_target(task, T_ah)
            name = "handle " + task.name.replace("/", "|")
            size = HANDLE_SIZE * viewer.scale
            handle = Handle(None, parent_frame(robot, task), T_ah, size, draw=False, region=bounds_region(task, size))
            viewer.add_overlay(name, handle.attach)
            self.handles[name] = (task, handle)
        for limit in collision:
            viewer.show_collisions(limit.model, within=limit.influence_distance, name=f"collisions {id(limit)}")
        self.marks = JointMarks(None, robot.model, MARK_SIZE * viewer.scale, lambda: viewer.visualizer.data.oMi)
        viewer.add_overlay("saturated joints", self.marks.attach)

    def target_rows(self) -> dict[str, list]:
        """Each handle's T_wh (4x4, row-major lists) as drawn."""
        return {name: handle.T_wh.homogeneous.tolist() for name, (_, handle) in self.handles.items()}


def relative_pose(robot: Robot, task: Any, q: np.ndarray) -> pin.SE3:
    """T_ab at q: the task's frame b in its frame a (in w when a is the world)."""
    kin = Kinematics(robot, q)
    frame_a = parent_frame(robot, task)
    T_wb = kin.placement(targeted(task).frame_b)
    return T_wb if frame_a is None else kin.placement(frame_a).actInv(T_wb)

"""Contacts as tasks, and the usual humanoid stack built from a reference posture.

:class:`ContactTask` holds a frame (a foot on the ground, a hand on a table) where it is in the
world: a 6D :class:`~reljac.ik.tasks.FrameTask` whose target is the frame's placement T_wf at a
configuration, at a high gain. It is described to the compiled step like any frame task.

:func:`humanoid_stack` builds the levels and limits a standing humanoid needs, highest first::

    feet held (ContactTask per foot)
    > balance: horizontal centre of mass at its place (CoMTask "xy", world), under the
      SupportRegion limit over the soles, shrunk by `margin`, held above every level
    > the pose of one hand in the other (RelativeFrameTask: a carried box stays rigid)
    > the pelvis height, if asked (`pelvis`: the world z of a frame, x-y left free)
    > the caller's own levels (`tasks`, e.g. where one hand goes)
    > posture: the robot's reference posture (its SRDF's, ``robot.reference_configuration()``),
      floating base masked

``com_priority="low"`` moves the centre-of-mass task just above the posture (it centres the
centre of mass with what the levels above leave free); ``"none"`` leaves it out: the hands may then
carry the centre of mass anywhere inside the support region, and the region's edge is what stops
them (the level it stops is told in its report's ``saturated_constraints``).

A carried payload counts in the centre of mass when the robot carries it in its model:
``humanoid_stack(robot.with_payload(mass, hand, offset), ...)`` (:meth:`reljac.Robot.with_payload`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import SupportError, TaskError
from ..footprint import sole_contact
from ..relative import Kinematics
from ..robot import FrameRef, Robot, as_robot
from ..support import SupportContact
from ..validation import as_float
from .controller import Controller
from .levels import as_levels
from .limits.base import Limit
from .limits.support import WORLD, SupportRegion
from .tasks import FrameTask, PostureTask, RelativeFrameTask, RelativePositionTask, Task
from .tasks.com import CoMTask

CONTACT_GAIN = 100.0  # [1/s]: a contact's error removed in one step at dt = 10 ms
HANDS_GAIN = 100.0  # [1/s]: as a contact (a carried box stays rigid)
COM_GAIN = 2.0  # [1/s]
PELVIS_GAIN = 10.0  # [1/s]
POSTURE_GAIN = 1.0  # [1/s]
COM_PRIORITIES = ("high", "low", "none")


class ContactTask(FrameTask, kind="contact"):
    """A frame held fixed in the world: e = log6(T_target^-1 T_wf) (6,), target T_wf at q.

    Args:
        robot: the robot.
        frame: the frame held (name or id), e.g. a foot's sole frame.
        q: the configuration (nq,) whose placement of the frame is held (default: the robot's
            reference configuration).
        gain: [1/s] (default 100: the error of one 10 ms step removed at the next, so only the
            step's second-order drift remains).
        **kwargs: weight, max_speed, name, as :class:`~reljac.ik.tasks.FrameTask` (name: "contact FRAME").

    ``hold(q)`` moves the contact to where the frame is at q (a step taken, a foot put down).

    Raises:
        FrameNotFound: unknown frame. ConfigurationError: bad q.
    """

    def __init__(self, robot: Robot, frame: FrameRef, q: ArrayLike | None = None, *,
                 gain: float = CONTACT_GAIN, **kwargs: Any) -> None:
        self.robot = robot = as_robot(robot)
        fid = robot.frame_id(frame)  # FrameNotFound now, not at the first step
        kwargs.setdefault("name", f"contact {robot.model.frames[fid].name}")
        super().__init__(frame, gain=gain, **kwargs)
        self.hold(robot.reference_configuration() if q is None else q)

    def hold(self, q: ArrayLike) -> None:
        """Hold the frame where it is at configuration q (nq,), at rest."""
        self.set_target(Kinematics(self.robot, q).placement(self.frame_b))


@dataclass
class HumanoidStack:
    """What :func:`humanoid_stack` built: the tasks by role, the levels and the limits.

    Attributes:
        robot: the robot.
        feet: one ContactTask per foot (level 0).
        contacts: the SupportContact objects the support region is made of.
        support: the SupportRegion limit (in ``constraints``).
        com: the horizontal CoMTask (target: the centre of mass at q, world x-y [m]).
        hands: the RelativeFrameTask of the second hand in the first (None without hands).
        posture: the PostureTask toward the reference posture, floating base masked.
        pelvis: the pelvis height task (None unless asked): a RelativePositionTask of the pelvis
            frame in the world weighted (0, 0, 1), so only its height z [m] counts.
        levels: highest first, for :class:`~reljac.ik.Controller`; constraints: its limits.

    Targets are set on the tasks (``stack.hands.set_target(T_ab)``, ``stack.com.set_target(p)``,
    ``stack.feet[0].hold(q)``, ``stack.pelvis.set_target([0, 0, z])``: x and y unused); a
    controller built from the stack hears of every change.
    """

    robot: Robot
    feet: tuple[ContactTask, ...]
    contacts: tuple[SupportContact, ...]
    support: SupportRegion
    com: CoMTask
    hands: RelativeFrameTask | None
    posture: PostureTask
    levels: list[list[Task]] = field(default_factory=list)
    constraints: list[Limit] = field(default_factory=list)
    pelvis: RelativePositionTask | None = None

    def controller(self, dt: float, **options: Any) -> Controller:
        """A :class:`~reljac.ik.Controller` of these levels and limits (`options`: its keyword
        arguments; ``constraints=`` adds limits to the support region)."""
        constraints = [*self.constraints, *options.pop("constraints", ())]
        return Controller(self.robot, self.levels, dt=dt, constraints=constraints, **options)


def _frames(robot: Robot, frames: Any, what: str, count: int | None = None) -> list[FrameRef]:
    """Frame names or ids, checked (FrameNotFound names an unknown one), no repeats."""
    if isinstance(frames, (str, int, np.integer)):
        frames = [frames]
    if not isinstance(frames, (list, tuple)) or not frames or (count is not None and len(frames) != count):
        size = "one frame or more" if count is None else "one frame" if count == 1 else f"{count} frames"
        raise TaskError(f"{what} must be {size} (names or ids), got {frames!r}")
    ids = [robot.frame_id(f) for f in frames]
    if len(set(ids)) != len(ids):
        raise TaskError(f"{what} name a frame twice: {frames!r}")
    return list(frames)


def _soles(robot: Robot, feet: list[FrameRef], sole: Any) -> tuple[SupportContact, ...]:
    """The contacts of the support region: read from the robot, rectangles, or given."""
    if sole is None:
        return tuple(sole_contact(robot, foot) for foot in feet)
    if isinstance(sole, SupportContact):
        sole = [sole]
    if isinstance(sole, (list, tuple)) and sole and all(isinstance(c, SupportContact) for c in sole):
        for c in sole:
            robot.frame_id(c.frame)
        return tuple(sole)
    if isinstance(sole, (list, tuple, np.ndarray)) and len(sole) == 2:
        length, width = (as_float(x, f"sole {name} [m]", minimum=0.0, strict=True, error=SupportError)
                         for x, name in zip(sole, ("length", "width"), strict=True))
        return tuple(SupportContact.rectangle(foot, length, width) for foot in feet)
    raise SupportError(f"sole must be None (read from the robot's collision geometry), (length, width) [m] or "
                       f"a list of reljac.SupportContact, got {sole!r}")


def _posture(robot: Robot, gain: float) -> PostureTask:
    """The reference posture, every free-flyer joint's velocity rows masked."""
    weight = np.ones(robot.nv)
    model = robot.model
    for j in range(1, model.njoints):
        if model.joints[j].shortname() == "JointModelFreeFlyer":
            weight[model.joints[j].idx_v : model.joints[j].idx_v + 6] = 0.0
    posture = PostureTask(robot, gain=gain, weight=weight)
    posture.set_target(robot.reference_configuration())
    return posture


def _pelvis(robot: Robot, q: np.ndarray, frame: FrameRef, height: float | None, gain: float) -> RelativePositionTask:
    """The pelvis height task: p_wf's z held at `height` [m] (default: its value at q)."""
    task = RelativePositionTask(WORLD, frame, gain=gain, weight=(0.0, 0.0, 1.0),
                                name=f"pelvis height ({robot.model.frames[robot.frame_id(frame)].name})")
    where = Kinematics(robot, q).placement(frame).translation
    if height is not None:
        where[2] = as_float(height, "pelvis_height [m]", error=TaskError)
    task.set_target(where)
    return task


def humanoid_stack(robot: Robot, q: ArrayLike | None = None, *, feet: Sequence[FrameRef],
                   hands: Sequence[FrameRef] | None = None, sole: Any = None, margin: float = 0.02,
                   tasks: Sequence[Any] = (), com_priority: str = "high", contact_gain: float = CONTACT_GAIN,
                   hands_gain: float = HANDS_GAIN, com_gain: float = COM_GAIN,
                   posture_gain: float = POSTURE_GAIN, pelvis: FrameRef | None = None,
                   pelvis_height: float | None = None, pelvis_gain: float = PELVIS_GAIN) -> HumanoidStack:
    """The usual humanoid stack at configuration q (module docstring): feet held > balance >
    one hand in the other > pelvis height > `tasks` > posture, under the support region.

    Args:
        robot: the robot (usually with a floating base).
        q: the configuration (nq,) where the feet are held and the hands' relative pose and the
            centre of mass taken (default: ``robot.reference_configuration()``).
        feet: the frames held fixed (names or ids), e.g. ``("left_sole_link", "right_sole_link")``;
            their z axis points up, out of the sole.
        hands: (a, b): the pose of b in a is held (None: no relative hand task).
        sole: None: each foot's sole read from its collision geometry (:func:`reljac.footprint.sole_contact`);
            (length, width) [m]: a rectangle centred on each foot's frame, length along its x;
            or a list of :class:`~reljac.SupportContact` (feet, a hand on a table...).
        margin: [m] kept between the centre of mass and the support region's edges.
        tasks: more levels (each a task or a list of tasks), below the hands, above the posture.
        com_priority: "high" (the centre of mass held after the feet) or "low" (just above the
            posture) or "none" (no centre-of-mass task: the support region alone keeps the
            balance, and is what limits the hands).
        contact_gain: [1/s] of the feet's ContactTasks.
        hands_gain: [1/s] of the hands' RelativeFrameTask.
        com_gain: [1/s] of the CoMTask.
        posture_gain: [1/s] of the PostureTask.
        pelvis: a frame (name or id; Talos: ``"base_link"``) whose height above the world's x-y
            plane is held, below the hands and above `tasks` (None: no such task). Its x-y and
            orientation are left to the other levels.
        pelvis_height: [m] the height held, world z of the frame's origin (default: where it
            is at q).
        pelvis_gain: [1/s] of the pelvis height task.

    Raises:
        FrameNotFound: an unknown foot, hand or contact frame.
        SupportError: a sole size <= 0, no sole geometry to read, contacts spanning no area, or
            a margin that leaves nothing of the region.
        TaskError: feet or hands not frames (hands: two), a bad com_priority, gain or
            pelvis_height.
    """
    robot = as_robot(robot)
    q = robot.reference_configuration() if q is None else robot.validate_q(q)
    if com_priority not in COM_PRIORITIES:
        raise TaskError(f"com_priority must be 'high', 'low' or 'none', got {com_priority!r}")
    if pelvis is None and pelvis_height is not None:  # (it was ignored)
        raise TaskError("pelvis_height is the height of the pelvis frame: give pelvis= too")
    foot_frames = _frames(robot, feet, "feet")
    contacts = _soles(robot, foot_frames, sole)
    held = tuple(ContactTask(robot, f, q, gain=contact_gain) for f in foot_frames)
    support = SupportRegion(robot, contacts, margin=margin)
    support.polygon(Kinematics(robot, q)).shrunk(support.margin)  # SupportError now, not at the first step
    com = CoMTask(robot, axes="xy", gain=com_gain)
    com.set_target_from_configuration(q)
    relative = None
    if hands is not None:
        a, b = _frames(robot, hands, "hands", count=2)
        relative = RelativeFrameTask(a, b, gain=hands_gain)
        relative.set_target_from_configuration(robot, q)
    height = None if pelvis is None else _pelvis(robot, q, _frames(robot, pelvis, "pelvis", count=1)[0],
                                                 pelvis_height, pelvis_gain)
    posture = _posture(robot, posture_gain)
    extra = as_levels(list(tasks)) if len(tasks) else []
    levels: list[list[Task]] = [list(held)]
    if com_priority == "high":
        levels.append([com])
    if relative is not None:
        levels.append([relative])
    if height is not None:
        levels.append([height])
    levels += extra
    if com_priority == "low":
        levels.append([com])
    levels.append([posture])
    return HumanoidStack(robot, held, contacts, support, com, relative, posture, levels, [support], height)


__all__ = ["COM_PRIORITIES", "PELVIS_GAIN", "ContactTask", "HumanoidStack", "humanoid_stack"]

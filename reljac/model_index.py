"""ModelIndex: a Pinocchio model's names, ids, sizes and limits, and its ``pin.Data``.

The base of :class:`reljac.Robot`: frame and joint names -> Pinocchio ids (with the errors a
wrong name gets), the joints that own blocks of q and v, and per-thread data for one-shot
computations. No file I/O and no configurations here.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from .exceptions import FrameNotFound, JointNotFound, suggest
from .joint_space import Value, unit_slice
from .memory import new_data
from .urdf_files import shown
from .validation import is_frame_id, shown_integer

if TYPE_CHECKING:  # pragma: no cover
    from .loading import MimicFree

FrameRef = str | int
SPARE_DATA = 4  # pin.Data objects a model keeps for the next Kinematics objects (see borrow_data)


def _same_frame(a: pin.Frame, b: pin.Frame) -> bool:
    """Two frames that always coincide (a joint named as its own child link gives two of these)."""
    return a.parentJoint == b.parentJoint and a.placement.isApprox(b.placement, 1e-12)


class ModelIndex:
    """Names, ids, sizes and limits of a ``pin.Model`` (see :class:`reljac.Robot`).

    Frame names: a name that two different frames carry (a joint named like a link that is not
    its child) is ambiguous: give it as ``"link:NAME"`` or ``"joint:NAME"`` (or by frame id).

    Attributes:
        dof_joint_ids: the ids of the joints with degrees of freedom, in q order (those of
            ``joint_names``).
        unit_blocks: (joint id, slice of q) of each unit-norm block of q: a quaternion, a
            (cos, sin) pair.
        movable: True when the model has a degree of freedom (nv > 0; Pinocchio's Jacobians
            crash with nv = 0).
    """

    def __init__(self, model: pin.Model) -> None:
        self.model = model
        self.name = model.name or "robot"
        self.locked_joints: dict[str, Value] = {}
        self._lock = threading.RLock()  # lazily built parts
        self._local = threading.local()  # per-thread pin.Data
        self._data: pin.Data | None = None
        self._spare_data: list[pin.Data] = []  # data of collected Kinematics objects: see borrow_data
        self._without_mimic: MimicFree | None = None
        self._index_names()

    def _index_names(self) -> None:
        model = self.model
        self._frame_ids: dict[str, int] = {}
        self._ambiguous: dict[str, list[int]] = {}
        for i, frame in enumerate(model.frames):
            first = self._frame_ids.setdefault(frame.name, i)
            if first != i and not _same_frame(model.frames[first], frame):
                self._ambiguous.setdefault(frame.name, [first]).append(i)
        for name in self._ambiguous:
            del self._frame_ids[name]
        dof_joints = [j for j in range(1, model.njoints) if model.joints[j].nq > 0]
        dof_joints.sort(key=lambda j: model.joints[j].idx_q)
        self.dof_joint_ids = dof_joints
        self.joint_names = [model.names[j] for j in dof_joints]
        self._joint_ids = {model.names[j]: j for j in dof_joints}
        self._mimic_leader = {model.names[f]: model.names[leader]
                              for f, leader in zip(model.mimicking_joints, model.mimicked_joints, strict=True)}
        self._q_shape = (model.nq,)
        self.movable = model.nv > 0  # (Pinocchio's Jacobians crash with nv = 0)
        self.unit_blocks: list[tuple[int, slice]] = []
        for j in dof_joints:
            block = unit_slice(model.joints[j])
            if block is not None:
                start = model.joints[j].idx_q
                self.unit_blocks.append((j, slice(start + block.start, start + block.stop)))

    # ----------------------------------------------------------------- pin.Data
    def new_data(self) -> pin.Data:
        """A new ``pin.Data`` of the model.

        Raises:
            ModelTooLarge: Pinocchio's data for this model (about 64 nv^3 bytes) does not fit in
                the memory available.
        """
        return new_data(self.model, self.name)

    def borrow_data(self) -> pin.Data:
        """A ``pin.Data`` that nothing else holds, for a Kinematics that was given none: one that
        a collected Kinematics gave back (see :meth:`give_back_data`), else a new one (a new
        ``pin.Data`` costs about ten Kinematics passes). list.pop is atomic: threads never share one."""
        try:
            return self._spare_data.pop()
        except IndexError:
            return self.new_data()

    def give_back_data(self, data: pin.Data) -> None:
        """Keep `data` (which nothing else holds) for the next :meth:`borrow_data` (a few at most)."""
        if len(self._spare_data) < SPARE_DATA:
            self._spare_data.append(data)

    @property
    def data(self) -> pin.Data:
        """A ``pin.Data`` for the caller's own use (made on first use; reljac's functions do not
        touch it). Not thread safe: give each thread its own (:meth:`new_data`)."""
        if self._data is None:
            with self._lock:
                if self._data is None:
                    self._data = self.new_data()
        return self._data

    def thread_data(self) -> pin.Data:
        """The calling thread's ``pin.Data`` for one-shot computations (made on the thread's first
        call; each one-shot function overwrites it)."""
        try:
            return self._local.data
        except AttributeError:
            data = self._local.data = self.new_data()
            return data

    def _mimic_free(self) -> MimicFree:  # pragma: no cover - Robot's (it knows where the model came from)
        raise NotImplementedError

    def thread_mimic_free_data(self) -> pin.Data:
        """The calling thread's data of :meth:`without_mimic`'s model."""
        try:
            return self._local.mimic_free_data
        except AttributeError:
            data = self._local.mimic_free_data = new_data(self._mimic_free()[0], self.name)
            return data

    # ----------------------------------------------------------------- sizes and names
    @property
    def nq(self) -> int:
        return self.model.nq

    @property
    def nv(self) -> int:
        return self.model.nv

    @property
    def frame_names(self) -> list[str]:
        return [f.name for f in self.model.frames]

    @property
    def link_names(self) -> list[str]:
        """Names of the links (Pinocchio's BODY frames), in model order."""
        return [f.name for f in self.model.frames if f.type == pin.FrameType.BODY]

    @property
    def joint_frame_names(self) -> list[str]:
        """Names of every joint: with degrees of freedom, mimic, fixed or locked (frames of type
        JOINT and FIXED_JOINT), in model order."""
        kinds = (pin.FrameType.JOINT, pin.FrameType.FIXED_JOINT)
        return [f.name for f in self.model.frames if f.type in kinds]

    @property
    def lower_limits(self) -> np.ndarray:
        return self.model.lowerPositionLimit.copy()

    @property
    def upper_limits(self) -> np.ndarray:
        return self.model.upperPositionLimit.copy()

    @property
    def velocity_limits(self) -> np.ndarray:
        return self.model.velocityLimit.copy()

    def frame_id(self, frame: FrameRef) -> int:
        """Pinocchio frame id of a frame given by name or id ('world' means 'universe' unless
        the robot has a frame of that name; ``"link:NAME"`` / ``"joint:NAME"`` pick the link or
        the joint frame of a name both carry).

        Raises:
            FrameNotFound: unknown or ambiguous name (near matches are suggested) or id out of range.
        """
        if isinstance(frame, str):
            fid = self._frame_ids.get(frame)
            if fid is not None:
                return fid
            return self._frame_id_slow(frame)
        if is_frame_id(frame):
            if 0 <= frame < self.model.nframes:
                return int(frame)
            raise FrameNotFound(f"frame id {shown_integer(int(frame))} is out of range for robot '{self.name}' "
                                f"(valid ids: 0..{self.model.nframes - 1})")
        if isinstance(frame, pin.ReferenceFrame):
            raise FrameNotFound(f"a frame is given by name (str) or id (int), not the Pinocchio reference frame "
                                f"pin.{frame.name}: relative Jacobians choose their axes by expressed_in='a', 'b', "
                                "'world' or a frame")
        raise FrameNotFound(f"a frame is given by name (str) or id (int), not {type(frame).__name__}")

    def _frame_id_slow(self, frame: str) -> int:
        """Names that are not a single frame's: 'world', ambiguous names and qualified names."""
        if frame == "world":  # Pinocchio calls the world frame 'universe'
            return 0
        kinds = {"link": (pin.FrameType.BODY,), "joint": (pin.FrameType.JOINT, pin.FrameType.FIXED_JOINT)}
        kind, sep, name = frame.partition(":")
        if sep and kind in kinds:
            ids = [i for i, f in enumerate(self.model.frames) if f.name == name and f.type in kinds[kind]]
            if ids:
                return ids[0]
        if frame in self._ambiguous:
            ids = self._ambiguous[frame]
            described = ", ".join(f"{str(self.model.frames[i].type).rsplit('.', 1)[-1].lower()} frame {i}"
                                  for i in ids)
            raise FrameNotFound(
                f"frame name '{frame}' is ambiguous in robot '{self.name}': different frames carry it "
                f"({described}); say 'link:{frame}' or 'joint:{frame}', or give the frame id")
        raise FrameNotFound(f"frame '{shown(frame)}' is not in robot '{self.name}'{suggest(frame, self._frame_ids)}")

    def joint_id(self, name: str) -> int:
        """Pinocchio joint id of a joint with its own degrees of freedom.

        Raises:
            JointNotFound: unknown name, a mimic joint (names its leader) or a fixed or locked joint.
        """
        if not isinstance(name, str):
            raise JointNotFound(f"a joint is given by its name (str), not {name!r}")
        jid = self._joint_ids.get(name)
        if jid is not None:
            return jid
        if name in self._mimic_leader:
            leader = self._mimic_leader[name]
            raise JointNotFound(f"joint '{name}' of robot '{self.name}' is a mimic joint: it follows "
                                f"'{leader}'; give the value of '{leader}' instead")
        if name in self.locked_joints:
            raise JointNotFound(f"joint '{name}' of robot '{self.name}' is locked (at {self.locked_joints[name]})")
        fixed = [f.name for f in self.model.frames if f.type == pin.FrameType.FIXED_JOINT]
        if name in fixed:
            raise JointNotFound(f"joint '{name}' of robot '{self.name}' is fixed: it has no value")
        listed = ", ".join(self.joint_names[:40]) + (" ..." if len(self.joint_names) > 40 else "")
        raise JointNotFound(f"joint '{shown(name)}' is not in robot '{self.name}'"
                            f"{suggest(name, self.joint_names)} (joints: {listed})")

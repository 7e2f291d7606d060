"""The kinematic tree of a robot: bodies in depth-first order, frames and the configuration layout.

Bodies. Body 0 is the ``universe`` (the world frame w, at identity). Every URDF link is one body,
numbered in depth-first order from the root link, visiting a link's child joints in the order they
appear in the file. A body carries the joint whose child it is; the root link's joint is a fixed
identity (or the free joint ``root_joint`` when the robot has a floating base).

Frames. One per link (named as the link), one per joint (named as the joint; it coincides with its
child link's frame: the joint origin composed with the joint motion), and ``universe``.

Configuration layout. ``joint_names`` lists the joints with their own degrees of freedom (not fixed,
not mimic) in body order. A revolute, continuous or prismatic joint takes one entry of q and of v
(continuous: an angle [rad], not Pinocchio's (cos, sin) pair). A planar joint takes 3 entries of q,
``[x, y, theta]`` (the child frame's position in the joint frame's x-y plane [m] and its angle
about z [rad]: Pinocchio's ``[x, y, cos theta, sin theta]`` as an angle), and 3 of v,
``[vx, vy, w]``: the twist ``[vx, vy, 0; 0, 0, w]`` of the child frame expressed in the child frame
(Pinocchio's convention, ``q (+) v dt = T(q) @ exp_se3(twist dt)``). A free joint (``floating`` in URDF,
or ``root_joint``) takes 7 entries of q, ``[x, y, z, qx, qy, qz, qw]`` (the child frame's position
in the parent frame and its unit quaternion), and 6 of v, ``[v; w]``: the twist of the child frame
expressed in the child frame, so that ``q (+) v dt = T(q) @ exp_se3(v dt)`` (Pinocchio's free-flyer
convention). A mimic joint follows ``q_follower = multiplier * q_leader + offset``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from reljac.exceptions import FrameNotFound, JointNotFound, URDFError, suggest
from reljac.reference.urdf import UrdfJoint, UrdfRobot

#: Name of the world frame (body 0).
UNIVERSE = "universe"
#: Name of the free joint added above the root link by ``floating_base=True``.
ROOT_JOINT = "root_joint"
#: (nq, nv) of each joint type.
JOINT_DIMENSIONS = {
    "fixed": (0, 0),
    "revolute": (1, 1),
    "continuous": (1, 1),
    "prismatic": (1, 1),
    "floating": (7, 6),
    "planar": (3, 3),
}


@dataclass(frozen=True, eq=False)
class Body:
    """One body of the tree and the joint that carries it.

    Attributes:
        index: position in ``KinematicTree.bodies``.
        link: the URDF link's name (``universe`` for body 0).
        parent: index of the parent body (-1 for the universe).
        joint: name of the joint whose child this body is (None for the universe and a fixed root).
        joint_type: "fixed", "revolute", "continuous", "prismatic", "floating" or "planar".
        origin: T_parent_joint, the joint frame in the parent body frame at zero motion, (4, 4).
        axis: unit joint axis in the joint frame, (3,).
        q_index: first entry of q that drives the joint (-1 if fixed); for a mimic joint, its
            leader's.
        v_index: first entry of v that drives the joint (-1 if fixed; a mimic joint: its leader's).
        multiplier: joint position = multiplier * q[q_index] + offset (1 unless mimic).
        offset: see multiplier (0 unless mimic).
    """

    index: int
    link: str
    parent: int
    joint: str | None
    joint_type: str
    origin: np.ndarray
    axis: np.ndarray
    q_index: int = -1
    v_index: int = -1
    multiplier: float = 1.0
    offset: float = 0.0

    @property
    def moves(self) -> bool:
        """True if the body moves relative to its parent when q changes."""
        return self.joint_type != "fixed"


class KinematicTree:
    """Bodies, frames and configuration layout of a robot (see the module docstring).

    Attributes:
        name: robot name from the URDF.
        bodies: bodies in depth-first order, ``bodies[0]`` being the universe.
        joint_names: joints with their own degrees of freedom, in configuration order.
        nq: size of a configuration q.
        nv: size of a velocity v.
        q_slices: entries of q of each joint in `joint_names`.
        v_slices: entries of v of each joint in `joint_names`.
        joint_types: type of each joint in `joint_names` ("revolute", "continuous", "prismatic",
            "floating", "planar").
        lower: lower position limits, shape (nq,); infinite where unbounded (continuous and planar
            joints, free-joint positions, revolute/prismatic joints without ``<limit>``); the quaternion
            entries of a free joint are bounded by [-1, 1].
        upper: upper position limits, shape (nq,), likewise.
        mimics: follower joint -> (leader, multiplier, offset), the leader having its own DoF.
        frame_names: all frame names: ``universe``, then the joint and link frames in body order
            (a joint and a different link that share a name: ``"joint:NAME"`` and ``"link:NAME"``).
    """

    def __init__(self, urdf: UrdfRobot, *, floating_base: bool = False) -> None:
        self.name = urdf.name
        self.source = urdf.source
        if floating_base and any(joint.name == ROOT_JOINT for joint in urdf.joints):
            raise URDFError(
                f"{urdf.source}: joint '{ROOT_JOINT}' exists, so floating_base=True cannot add it"
            )
        bodies, joints = _depth_first_bodies(urdf, floating_base)

        # Configuration layout of the joints with their own degrees of freedom, in body order.
        q_slices: dict[str, slice] = {}
        v_slices: dict[str, slice] = {}
        joint_types: dict[str, str] = {}
        lower: list[float] = []
        upper: list[float] = []
        nv_total = 0
        for body, joint in zip(bodies, joints, strict=True):
            if not body.moves or (joint is not None and joint.mimic is not None):
                continue
            nq, nv = JOINT_DIMENSIONS[body.joint_type]
            name = body.joint
            assert name is not None  # a moving body has a joint
            q_slices[name] = slice(len(lower), len(lower) + nq)
            v_slices[name] = slice(nv_total, nv_total + nv)
            joint_types[name] = body.joint_type
            nv_total += nv
            if body.joint_type == "floating":
                lower += [-math.inf] * 3 + [-1.0] * 4
                upper += [math.inf] * 3 + [1.0] * 4
            elif body.joint_type == "planar":  # (a planar joint's <limit> is not read, as Pinocchio)
                lower += [-math.inf] * 3
                upper += [math.inf] * 3
            else:
                assert joint is not None  # only the added floating root has no URDF joint
                lower.append(joint.lower)
                upper.append(joint.upper)

        # Each moving body reads its position from its own entry of q, or from its mimic leader's.
        mimics = _resolve_mimics(urdf)
        for i, body in enumerate(bodies):
            if body.moves and body.joint is not None:
                leader, multiplier, offset = mimics.get(body.joint, (body.joint, 1.0, 0.0))
                bodies[i] = replace(
                    body,
                    q_index=q_slices[leader].start,
                    v_index=v_slices[leader].start,
                    multiplier=multiplier,
                    offset=offset,
                )

        self.bodies: tuple[Body, ...] = tuple(bodies)
        self.joint_names: tuple[str, ...] = tuple(q_slices)
        self.q_slices: Mapping[str, slice] = MappingProxyType(q_slices)
        self.v_slices: Mapping[str, slice] = MappingProxyType(v_slices)
        self.joint_types: Mapping[str, str] = MappingProxyType(joint_types)
        self.nq = len(lower)
        self.nv = nv_total
        self.lower = np.array(lower, dtype=float)
        self.upper = np.array(upper, dtype=float)
        self.lower.flags.writeable = self.upper.flags.writeable = False
        self.mimics: Mapping[str, tuple[str, float, float]] = MappingProxyType(mimics)
        self._frames = self._name_frames(urdf.source)
        self.frame_names: tuple[str, ...] = tuple(self._frames)

    def _name_frames(self, source: str) -> dict[str, int]:
        """Frame name -> body index. A joint and a different link that share a name (URDF names
        each set apart) are both kept, as ``"joint:NAME"`` and ``"link:NAME"``, as the Pinocchio
        layer names them; the bare name is then ambiguous (:meth:`frame_body` says so)."""
        frames = {UNIVERSE: 0}
        kinds: dict[str, str] = {}
        self._ambiguous: set[str] = set()
        for body in self.bodies[1:]:
            for kind, name in (("joint", body.joint), ("link", body.link)):
                if name is None or frames.get(name) == body.index:
                    continue  # no joint frame, or a joint named as its own child link: one frame
                if name == UNIVERSE:
                    raise URDFError(f"{source}: {kind} name '{UNIVERSE}' is reserved for the world frame")
                if name in frames:  # link and joint names are each unique: a joint's with a link's
                    frames[f"{kinds[name]}:{name}"] = frames.pop(name)
                    self._ambiguous.add(name)
                if name in self._ambiguous:
                    frames[f"{kind}:{name}"] = body.index
                else:
                    frames[name], kinds[name] = body.index, kind
        return frames

    def frame_body(self, frame: str) -> int:
        """Index of the body whose frame is `frame`.

        Raises:
            FrameNotFound: if no frame has that name.
        """
        if frame in self._ambiguous:
            raise FrameNotFound(f"frame name '{frame}' is ambiguous in robot '{self.name}': a joint and a different "
                                f"link carry it; say 'link:{frame}' or 'joint:{frame}'")
        try:
            return self._frames[frame]
        except (KeyError, TypeError):
            raise FrameNotFound(
                f"frame {frame!r} is not in robot '{self.name}'"
                f"{suggest(str(frame), self.frame_names) or '; frames: ' + _shortlist(self.frame_names)}"
            ) from None

    def joint_index(self, joint: str) -> int:
        """Position of `joint` in `joint_names`.

        Raises:
            JointNotFound: if `joint` has no degree of freedom of its own (or does not exist).
        """
        if joint in self.q_slices:
            return self.joint_names.index(joint)
        if joint in self.mimics:
            leader = self.mimics[joint][0]
            raise JointNotFound(
                f"joint {joint!r} of robot '{self.name}' mimics '{leader}' and has no entry in q"
            )
        hint = suggest(str(joint), self.joint_names) or "; joints: " + _shortlist(self.joint_names)
        raise JointNotFound(
            f"joint {joint!r} is not a joint with degrees of freedom of robot '{self.name}'{hint}"
        )


def _shortlist(names: tuple[str, ...], limit: int = 12) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def _depth_first_bodies(urdf: UrdfRobot, floating_base: bool) -> tuple[list[Body], list[UrdfJoint | None]]:
    """Bodies in depth-first order (children in file order) and the URDF joint carrying each."""
    children: dict[str, list[UrdfJoint]] = {}
    for joint in urdf.joints:
        children.setdefault(joint.parent, []).append(joint)
    identity, x_axis = np.eye(4), np.array([1.0, 0.0, 0.0])
    root_type, root_joint = ("floating", ROOT_JOINT) if floating_base else ("fixed", None)
    bodies = [Body(0, UNIVERSE, -1, None, "fixed", identity, x_axis)]
    joints: list[UrdfJoint | None] = [None]
    stack: list[tuple[str, int, UrdfJoint | None]] = [(urdf.root, 0, None)]  # (link, parent, joint)
    while stack:
        link, parent, via = stack.pop()
        index = len(bodies)
        if via is None:
            bodies.append(Body(index, link, parent, root_joint, root_type, identity, x_axis))
        else:
            bodies.append(Body(index, link, parent, via.name, via.type, via.origin, via.axis))
        joints.append(via)
        for child_joint in reversed(children.get(link, [])):  # reversed: popped in file order
            stack.append((child_joint.child, index, child_joint))
    return bodies, joints


def _resolve_mimics(urdf: UrdfRobot) -> dict[str, tuple[str, float, float]]:
    """Follower -> (leader, multiplier, offset), following chains down to a joint that does not mimic."""
    joints = {joint.name: joint for joint in urdf.joints}
    mimics = {}
    for joint in urdf.joints:
        if joint.mimic is None:
            continue
        leader, multiplier, offset = joint.name, 1.0, 0.0
        while (step := joints[leader].mimic) is not None:
            # q = m q_leader + o with q_leader = m' q_next + o'  gives  q = (m m') q_next + (m o' + o)
            leader = step.leader
            multiplier, offset = multiplier * step.multiplier, multiplier * step.offset + offset
        mimics[joint.name] = (leader, multiplier, offset)
    return mimics

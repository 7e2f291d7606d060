"""MobileBase: a robot whose base moves in the plane, and where it stands (x, y, yaw).

A placement is ``(x, y, yaw)`` [m, m, rad]: the base frame B (the robot's root link) at
``T_wB = (Rz(yaw), (x, y, h))`` in the world, h the base's height. Three kinds of robot:

* a robot whose root joint is planar (Pinocchio's ``JointModelPlanar``: q = (x, y, cos, sin)):
  that joint is the base joint, h = 0 (a joint ``<origin>`` moves the plane: x, y and yaw are then
  its q, in the x-y plane of its origin, :attr:`MobileBase.plane`);
* a robot with a floating base (a free-flyer root, a humanoid): the free-flyer is the base joint,
  held at the reference configuration's height, roll and pitch (a humanoid standing);
  :meth:`MobileBase.base_pose` keeps them, the placement sets x, y and the yaw;
* a fixed-base robot (a mobile manipulator's URDF without its base joint, an arm on a cart): a
  planar joint named ``base_joint`` is added above its root link (:func:`with_planar_base`,
  Pinocchio's ``appendModel`` on the model and on both geometry models), h = 0.

The base joint is never part of a hand's chain: the capability maps of :mod:`reljac.placement`
are of the hands relative to frames the base carries, and the exact check holds the base at the
placement with a frame task (:mod:`reljac.placement.check`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..exceptions import ConfigurationError
from ..robot import Robot, as_robot
from ..validation import as_float

BASE_JOINT = "base_joint"  # the planar joint added to a fixed-base robot
PLANAR, FREE_FLYER = "planar", "free-flyer"

MAX_HEIGHT = 1e6  # [m] the largest mount height of with_planar_base (as the largest pose coordinate)


def with_planar_base(robot: Robot, name: str = BASE_JOINT, height: float = 0.0) -> Robot:
    """The robot with a planar joint `name` above its root link (x, y, yaw in the world's x-y
    plane), the root link `height` [m] above it (an arm on a cart): a new Robot whose q starts
    with (x, y, cos yaw, sin yaw), then the robot's q. Its frames, geometry (collision and
    visual), SRDF, reference posture and locked joints are the robot's; x and y have no limits.

    Raises:
        ConfigurationError: the robot already has a joint named `name`, or a bad height.
    """
    robot = as_robot(robot)
    height = as_float(height, "height [m]", error=ConfigurationError)
    if abs(height) > MAX_HEIGHT:
        raise ConfigurationError(f"height [m] must be within {MAX_HEIGHT:g} m of the floor, got {height:g}")
    if name in robot.model.names:
        raise ConfigurationError(f"robot '{robot.name}' already has a joint named {name!r}")
    planar = pin.Model()
    joint = planar.addJoint(0, pin.JointModelPlanar(), pin.SE3.Identity(), name)
    planar.addJointFrame(joint, 0)
    planar.lowerPositionLimit[:] = [-np.inf, -np.inf, -1.01, -1.01]
    planar.upperPositionLimit[:] = [np.inf, np.inf, 1.01, 1.01]
    frame = planar.getFrameId(name)
    mount = pin.SE3(np.eye(3), np.array([0.0, 0.0, height]))
    model, collision = pin.appendModel(planar, robot.model, pin.GeometryModel(), robot.collision_model, frame, mount)
    _, visual = pin.appendModel(planar, robot.model, pin.GeometryModel(), robot.visual_model, frame, mount)
    model.name = robot.name
    mobile = Robot.from_pinocchio(model, collision, visual)
    mobile.srdf = robot.srdf
    mobile.reference_posture = robot.reference_posture
    mobile.locked_joints = dict(robot.locked_joints)
    return mobile


@dataclass(frozen=True)
class MobileBase:
    """A robot and its base joint (see the module docstring; made by :func:`mobile_base`).

    Attributes:
        robot: the robot, its base joint first in q.
        joint: the base joint's name; kind: "planar" or "free-flyer".
        base_frame: the frame B placements put in the world (the base joint's child body).
        q_index: where the base joint's q starts (0).
        reference: (nq,) the configuration the other joints start from (the robot's reference
            configuration, base at the origin).
        held: (4, 4) T_wB at placement (0, 0, 0): the height, roll and pitch kept (for a planar
            base, the base frame on the planar joint: identity, or a mount height).
        plane: (4, 4) the frame whose x-y plane the placements move in: a planar root joint's
            origin (its URDF ``<origin>``; x, y and yaw are then its q), the world otherwise.
    """

    robot: Robot
    joint: str
    kind: str
    base_frame: str
    q_index: int
    reference: np.ndarray
    held: np.ndarray
    plane: np.ndarray = field(default_factory=lambda: np.eye(4))

    def base_poses(self, placements: ArrayLike) -> np.ndarray:
        """T_wB (n, 4, 4) of placements (n, 3) [m, m, rad]: ``O M(x, y, yaw) O^-1 T_held``, M the
        motion ``(Rz(yaw), (x, y, 0))`` in the plane's frame O (:attr:`plane`; the world for all
        but a planar root joint with an ``<origin>``): where :meth:`configuration` puts B."""
        P = as_placements(placements)
        c, s = np.cos(P[:, 2]), np.sin(P[:, 2])
        M = np.zeros((len(P), 4, 4))
        M[:, 0, 0], M[:, 0, 1], M[:, 1, 0], M[:, 1, 1], M[:, 2, 2], M[:, 3, 3] = c, -s, s, c, 1.0, 1.0
        M[:, 0, 3], M[:, 1, 3] = P[:, 0], P[:, 1]
        if np.array_equal(self.plane, np.eye(4)):
            return M @ self.held
        return self.plane @ M @ (np.linalg.inv(self.plane) @ self.held)

    def configuration(self, placement: ArrayLike, q: ArrayLike | None = None) -> np.ndarray:
        """q (nq,) with the base joint at `placement` (3,) and the other joints from q (default:
        :attr:`reference`)."""
        out = (self.reference if q is None else self.robot.validate_q(q)).copy()
        x, y, yaw = as_placements(placement)[0]
        i = self.q_index
        if self.kind == PLANAR:
            out[i:i + 4] = (x, y, math.cos(yaw), math.sin(yaw))
        else:
            T = self.base_poses([(x, y, yaw)])[0]
            out[i:i + 3] = T[:3, 3]
            out[i + 3:i + 7] = pin.Quaternion(T[:3, :3]).coeffs()
        return out

    def placement_of(self, q: ArrayLike) -> np.ndarray:
        """(x, y, yaw) of the base in configuration q (nq,)."""
        q = self.robot.validate_q(q)
        i = self.q_index
        if self.kind == PLANAR:
            return np.array([q[i], q[i + 1], math.atan2(q[i + 3], q[i + 2])])
        T = pin.XYZQUATToSE3(q[i:i + 7]).homogeneous @ np.linalg.inv(self.held)
        return np.array([T[0, 3], T[1, 3], math.atan2(T[1, 0], T[0, 0])])


def mobile_base(robot: Robot | str, *, height: float = 0.0) -> MobileBase:
    """The robot as a :class:`MobileBase`: its planar or free-flyer root joint, or a planar
    joint added above a fixed base, its root link `height` [m] above the floor
    (:func:`with_planar_base`; a height is refused for a robot that has its own base joint).

    Raises:
        ConfigurationError: a height for a robot with a base joint, or a bad height.
    """
    robot = Robot.load(robot) if isinstance(robot, str) else as_robot(robot)
    model = robot.model
    first = model.joints[1].shortname() if model.njoints > 1 and model.parents[1] == 0 else ""
    if first not in ("JointModelPlanar", "JointModelFreeFlyer"):
        robot = with_planar_base(robot, height=height)
        model = robot.model
        first = "JointModelPlanar"
    elif as_float(height, "height [m]", error=ConfigurationError) != 0.0:
        raise ConfigurationError(f"robot '{robot.name}' has its own base joint '{model.names[1]}': a height is "
                                 "only for a planar joint reljac adds")
    kind = PLANAR if first == "JointModelPlanar" else FREE_FLYER
    child = [f for f in model.frames if f.parentJoint == 1 and f.type == pin.FrameType.BODY]
    base_frame = child[0].name if child else model.names[1]
    reference = robot.reference_configuration()
    held = np.eye(4)
    if kind == PLANAR:  # the root link's pose on the planar joint (a mount height)
        child_frame = model.frames[robot.frame_id(base_frame)]
        held = (model.jointPlacements[1] * child_frame.placement).homogeneous
    if kind == FREE_FLYER:
        T = pin.XYZQUATToSE3(reference[:7]).homogeneous
        yaw = math.atan2(T[1, 0], T[0, 0])
        c, s = math.cos(-yaw), math.sin(-yaw)
        held = np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]) @ T
        held[:2, 3] = 0.0
    plane = model.jointPlacements[1].homogeneous if kind == PLANAR else np.eye(4)
    mobile = MobileBase(robot, model.names[1], kind, base_frame, 0, reference, held, plane)
    reference[:] = mobile.configuration((0.0, 0.0, 0.0), reference)
    return mobile


def as_placements(placements: ArrayLike, what: str = "placements") -> np.ndarray:
    """Placements as a float array (n, 3) of finite (x [m], y [m], yaw [rad]) rows (one
    placement (3,) gives (1, 3))."""
    try:
        P = np.array(placements, dtype=float)
    except (TypeError, ValueError):
        raise ConfigurationError(f"{what} must be (x, y, yaw) rows of numbers, got {placements!r}") from None
    if P.ndim == 1:
        P = P[None, :]
    if P.ndim != 2 or P.shape[1] != 3:
        raise ConfigurationError(f"{what} must have shape (n, 3): (x [m], y [m], yaw [rad]) rows, got {P.shape}")
    if not np.isfinite(P).all():
        raise ConfigurationError(f"{what} must be finite")
    return P

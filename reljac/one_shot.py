"""One-shot relative kinematics: ``reljac.relative_placement``, ``relative_jacobian``,
``relative_twist``, ``relative_jacobian_time_variation``, ``center_of_mass`` and
``center_of_mass_jacobian`` of a robot at one q, each computed into the calling thread's
``pin.Data`` (:meth:`Robot.thread_data`); placements and Jacobians in the compiled core when it is
built. Same frames, axes and shapes as :class:`reljac.relative.Kinematics`, whose methods they call
otherwise.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .compiled_core import Core as _Core
from .relative import EXPRESSED_IN_KEYWORDS, LWA, Kinematics, axes_code, frame_jacobian_of
from .relative_layer import relative_jacobian_from_frames
from .robot import FrameRef, Robot, as_robot


def _contiguous(q: np.ndarray) -> np.ndarray:
    """q (validated) as the compiled core reads it: contiguous (a copy of a strided view)."""
    return q if q.flags.c_contiguous else q.copy()


def one_shot_kinematics(robot: Robot, q: ArrayLike, v: ArrayLike | None = None) -> Kinematics:
    """A Kinematics in the calling thread's data of `robot` (:meth:`Robot.thread_data`): for
    one-shot functions, whose answer is taken before the thread's next call overwrites it."""
    robot = as_robot(robot)
    mimic_free = robot.thread_mimic_free_data() if v is not None and robot.model.mimicking_joints else None
    return Kinematics(robot, q, v, data=robot.thread_data(), _mimic_free_data=mimic_free)


def relative_placement(robot: Robot, q: ArrayLike, frame_a: FrameRef, frame_b: FrameRef) -> pin.SE3:
    """T_ab: pose of frame b in frame a at configuration q (nq,).

    Safe to call from several threads on one robot (each thread computes in its own data).
    """
    if type(robot) is not Robot:  # a RobotWrapper or a subclass (no call on the common path)
        robot = as_robot(robot)
    model, data = robot.model, robot.thread_data()
    fa, fb = robot.frame_id(frame_a), robot.frame_id(frame_b)
    core = _Core.module if _Core.loaded else _Core.get()
    if core is not None:
        T = core.relative_placement(model, data, q, fa, fb, True)  # None: q is to be validated first
        if T is None:
            T = core.relative_placement(model, data, _contiguous(robot.validate_q(q, copy=False)), fa, fb, False)
        return pin.SE3(T)
    q = robot.validate_q(q, copy=False)
    pin.forwardKinematics(model, data, q)
    return pin.updateFramePlacement(model, data, fa).actInv(pin.updateFramePlacement(model, data, fb))


def relative_jacobian(
    robot: Robot, q: ArrayLike, frame_a: FrameRef, frame_b: FrameRef, *, expressed_in: FrameRef = "a"
) -> np.ndarray:
    """Jacobian of frame b's motion measured in frame a, shape (6, robot.nv).

    ``[d/dt p_ab; w_ab] = J @ v``, expressed in `expressed_in` ("a", "b", "world" or any frame).
    For many pairs at one q, build a :class:`Kinematics` once instead. Safe to call from several
    threads on one robot (each thread computes in its own data, :meth:`Robot.thread_data`).

    Raises:
        FrameNotFound: a frame name or id is not in the robot.
        ConfigurationError: q has a wrong shape or a non-finite entry.
    """
    # Kinematics.relative_jacobian with only the frames it needs
    if type(robot) is not Robot:  # a RobotWrapper or a subclass (no call on the common path)
        robot = as_robot(robot)
    model, data = robot.model, robot.thread_data()
    fa, fb = robot.frame_id(frame_a), robot.frame_id(frame_b)
    core = _Core.module if _Core.loaded else _Core.get()
    if core is not None and robot.movable:  # (Pinocchio's Jacobians crash with nv = 0)
        code, fc = axes_code(robot, expressed_in, fa, fb)
        J = core.relative_jacobian(model, data, q, fa, fb, code, fc, True)  # None: q is to be validated first
        if J is None:
            q = _contiguous(robot.validate_q(q, copy=False))
            J = core.relative_jacobian(model, data, q, fa, fb, code, fc, False)
        return J
    q = robot.validate_q(q, copy=False)
    pin.computeJointJacobians(model, data, q)
    T_a, T_b = pin.updateFramePlacement(model, data, fa), pin.updateFramePlacement(model, data, fb)
    if isinstance(expressed_in, str) and expressed_in in EXPRESSED_IN_KEYWORDS:
        axes = expressed_in
    else:
        fc = robot.frame_id(expressed_in)
        axes = "a" if fc == fa else "b" if fc == fb else pin.updateFramePlacement(model, data, fc).rotation
    J_a, J_b = frame_jacobian_of(model, data, fa, LWA), frame_jacobian_of(model, data, fb, LWA)
    return relative_jacobian_from_frames(J_a, J_b, T_a, T_b, expressed_in=axes)


def relative_twist(
    robot: Robot, q: ArrayLike, v: ArrayLike, frame_a: FrameRef, frame_b: FrameRef, *, expressed_in: FrameRef = "a"
) -> np.ndarray:
    """``[d/dt p_ab; w_ab]`` (6,) at configuration q (nq,) and velocity v (nv,)."""
    robot = as_robot(robot)
    v = robot.validate_v(v)
    return relative_jacobian(robot, q, frame_a, frame_b, expressed_in=expressed_in) @ v


def relative_jacobian_time_variation(
    robot: Robot, q: ArrayLike, v: ArrayLike, frame_a: FrameRef, frame_b: FrameRef, *, expressed_in: FrameRef = "a"
) -> np.ndarray:
    """d/dt J_ab along v, shape (6, nv); relative acceleration = ``J @ a + dJ @ v``."""
    kin = one_shot_kinematics(robot, q, v)
    return kin.relative_jacobian_time_variation(frame_a, frame_b, expressed_in=expressed_in)


def center_of_mass(robot: Robot, q: ArrayLike, frame: FrameRef = "universe") -> np.ndarray:
    """p_ac: the centre of mass at configuration q (nq,) in frame a = `frame` (a's axes), (3,) [m].

    Raises:
        SupportError: the robot has no mass. FrameNotFound, ConfigurationError: as relative_jacobian.
    """
    return one_shot_kinematics(robot, q).center_of_mass(frame)


def center_of_mass_jacobian(robot: Robot, q: ArrayLike, frame: FrameRef = "universe") -> np.ndarray:
    """J_ac (3, nv): d/dt p_ac = J_ac v, the centre of mass's velocity measured and expressed in
    frame a = `frame` at configuration q (nq,) (see :meth:`Kinematics.center_of_mass_jacobian`)."""
    return one_shot_kinematics(robot, q).center_of_mass_jacobian(frame)

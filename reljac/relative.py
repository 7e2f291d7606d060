"""Relative kinematics between two frames a and b: T_ab, J_ab, relative twists and dJ_ab/dt.

The formulas, in terms of Pinocchio's LOCAL_WORLD_ALIGNED frame Jacobians J_a, J_b (rows
[linear; angular], linear = velocity of the frame origin, both in world coordinates):

    w_ab = R_wa^T (w_b - w_a)                        ->  J^w_ab = R_wa^T (J^w_b - J^w_a)
    d/dt p_ab = [p_ab]x R_wa^T w_a + R_wa^T (v_b - v_a) ->  J^v_ab = [p_ab]x R_wa^T J^w_a + R_wa^T (J^v_b - J^v_a)

with p_ab = R_wa^T (p_wb - p_wa). Expressing the same motion in a frame c multiplies both blocks
by R_ca. The formulas live once, in :mod:`reljac.relative_layer` (pure functions of the frame
Jacobians and placements); this module feeds them Pinocchio's, and tests check them against
finite differences and the in-house reference.

:class:`Kinematics` computes the robot's kinematics once for q (and v) and answers any number of
frame-pair queries; :mod:`reljac.one_shot` holds the one-shot functions (``reljac.relative_jacobian``, ...).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterable

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .compiled_core import Core as _Core
from .exceptions import ConfigurationError, FrameNotFound, SupportError
from .mass import mass_split
from .memory import new_data
from .relative_layer import relative_jacobian_from_frames, relative_jacobian_time_variation_from_frames
from .robot import FrameRef, Robot, as_robot

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
WORLD = pin.ReferenceFrame.WORLD
EXPRESSED_IN_KEYWORDS = ("a", "b", "world")
_AXES = {"a": 0, "b": 1, "world": 2}


def frame_jacobian_of(model: pin.Model, data: pin.Data, fid: int, reference: pin.ReferenceFrame) -> np.ndarray:
    """pin.getFrameJacobian, always (6, nv): Pinocchio returns (6,) when nv = 1 and crashes when nv = 0."""
    if model.nv == 0:
        return np.zeros((6, 0))
    J = pin.getFrameJacobian(model, data, fid, reference)
    return J if J.ndim == 2 else J.reshape(6, model.nv)


#: joints whose Jacobian time variation Pinocchio 4.1 computes wrong (its dS/dt left out: off
#: central differences of J along v by 0.1-1.2 on one joint), refused rather than answered
WRONG_RATE_JOINTS = ("JointModelSphericalZYX", "JointModelUniversal", "JointModelEllipsoid")


def _check_rates(model: pin.Model, name: str) -> None:
    """ConfigurationError when the model has a joint of WRONG_RATE_JOINTS (none from a URDF)."""
    for j in range(1, model.njoints):
        kind = model.joints[j].shortname()
        if kind in WRONG_RATE_JOINTS:
            raise ConfigurationError(f"robot '{name}': Jacobian time variations are not available for joint "
                                     f"'{model.names[j]}' ({kind}): Pinocchio's are wrong for it (checked by finite "
                                     "differences); its Jacobians and twists are right")


def _frame_jacobian_time_variation(model: pin.Model, data: pin.Data, fid: int) -> np.ndarray:
    """pin.getFrameJacobianTimeVariation (LOCAL_WORLD_ALIGNED), always (6, nv)."""
    if model.nv == 0:
        return np.zeros((6, 0))
    dJ = pin.getFrameJacobianTimeVariation(model, data, fid, LWA)
    return dJ if dJ.ndim == 2 else dJ.reshape(6, model.nv)


class Kinematics:
    """Kinematics of a robot at one configuration q (and optionally velocity v).

    One Pinocchio pass (placements and joint Jacobians, plus their time variation when v is
    given) serves every query; frame Jacobians are computed once per frame and cached. Every
    array returned is the caller's own (a copy); ``q`` and ``v`` are read-only copies.

    A Kinematics is not thread safe (its caches fill on demand): use one per thread. The robot
    itself may be shared.

    Args:
        robot: the robot.
        q: configuration, shape (nq,).
        v: velocity, shape (nv,); needed for twists and Jacobian time variations.
        data: a ``pin.Data`` to compute into (default: one that nothing else holds, so objects
            are independent: a new one, or one a collected Kinematics of the robot gave back).
    """

    def __init__(self, robot: Robot, q: ArrayLike, v: ArrayLike | None = None, *, data: pin.Data | None = None,
                 _mimic_free_data: pin.Data | None = None) -> None:
        if type(robot) is not Robot:  # a RobotWrapper or a subclass (no call on the common path)
            robot = as_robot(robot)
        self.robot = robot
        self.model = model = robot.model
        self.q = q = robot.validate_q(q)
        self.v = None if v is None else robot.validate_v(v)
        q.flags.writeable = False
        if self.v is not None:
            self.v.flags.writeable = False
        if data is not None:
            _check_data(robot, data)
        else:  # one that nothing else holds: given back to the robot when this object goes,
            data = robot.borrow_data()  # unless it was handed out (see data)
            self._lender = robot
        self._data = data
        self._rates_source = None
        if self.v is None:
            pin.computeJointJacobians(model, data, q)
        elif model.mimicking_joints:  # Pinocchio's dJ is wrong with mimic joints: see Robot.without_mimic
            pin.computeJointJacobians(model, data, q)
            free = robot.without_mimic(copy=False)
            full, G = free.model, free.G
            full_data = _mimic_free_data if _mimic_free_data is not None else new_data(full, robot.name)
            pin.computeJointJacobiansTimeVariation(full, full_data, free.configuration(q), G @ self.v)
            self._rates_source = (full, full_data, G)
        else:
            pin.computeJointJacobiansTimeVariation(model, data, q, self.v)
        pin.updateFramePlacements(model, data)
        self._frames: dict[int, pin.SE3] = {}
        self._jacobians: dict[int, np.ndarray] = {}
        self._jacobian_rates: dict[int, np.ndarray] = {}

    _lender: Robot | None = None  # the robot self._data was borrowed from, while it was never handed out

    def __copy__(self) -> Kinematics:
        """A Kinematics at the same q (and v) with its own data: a shallow copy would share (and
        give back twice) the data this one borrowed."""
        return Kinematics(self.robot, self.q, self.v)

    @property
    def data(self) -> pin.Data:
        """The ``pin.Data`` this object computed into (Pinocchio's own object, valid while this
        object lives). Once read, it is never reused by another Kinematics."""
        self._lender = None  # handed out: anything may now hold it, or a view into it
        return self._data

    def __del__(self) -> None:
        # a borrowed data that was never handed out goes back to its robot for the next
        # Kinematics: only this object's private caches referred to it
        lender = self._lender
        if lender is not None:
            self._lender = None
            with contextlib.suppress(Exception):  # (at interpreter exit the modules may be gone)
                self._frames.clear()  # its placements are views into the data (a resurrected object's too)
                lender.give_back_data(self.__dict__.pop("_data"))  # (a resurrected object fails loudly)

    @classmethod
    def from_data(cls, robot: Robot, q: np.ndarray, data: pin.Data) -> Kinematics:
        """A Kinematics over `data` that already holds the joint Jacobians and every frame
        placement at q (validated, (nq,)): no new pass (the compiled step computed it)."""
        kin = cls.__new__(cls)
        kin.robot, kin.model, kin._data, kin.v, kin._rates_source = robot, robot.model, data, None, None
        kin.q = np.array(q, dtype=float)
        kin.q.flags.writeable = False
        kin._frames, kin._jacobians, kin._jacobian_rates = {}, {}, {}
        return kin

    # ------------------------------------------------------------------ single frames
    def placement(self, frame: FrameRef) -> pin.SE3:
        """T_wf: pose of the frame in the world (a copy)."""
        return self._data.oMf[self.robot.frame_id(frame)].copy()

    def frame_jacobian(self, frame: FrameRef) -> np.ndarray:
        """LOCAL_WORLD_ALIGNED Jacobian of a frame, shape (6, nv), rows [v_origin; w] in world axes."""
        return self._lwa(self.robot.frame_id(frame)).copy()

    def _lwa(self, fid: int) -> np.ndarray:
        """frame_jacobian of frame id fid, cached (internal: never hand it out)."""
        J = self._jacobians.get(fid)
        if J is None:
            J = self._jacobians[fid] = frame_jacobian_of(self.model, self._data, fid, LWA)
        return J

    def _oMf(self, fid: int) -> pin.SE3:
        """T_wf of frame id fid (Pinocchio's own object: do not modify), cached."""
        T = self._frames.get(fid)
        if T is None:
            T = self._frames[fid] = self._data.oMf[fid]
        return T

    def frame_jacobian_time_variation(self, frame: FrameRef) -> np.ndarray:
        """d/dt of :meth:`frame_jacobian` along v, shape (6, nv)."""
        self._require_v("Jacobian time variations")
        return self._lwa_rate(self.robot.frame_id(frame)).copy()

    def _lwa_rate(self, fid: int) -> np.ndarray:
        """frame_jacobian_time_variation of frame id fid, cached (internal)."""
        dJ = self._jacobian_rates.get(fid)
        if dJ is None:
            if not self._jacobian_rates:  # (the first time: the model's joints do not change)
                _check_rates(self.model, self.robot.name)
            if self._rates_source is None:
                dJ = _frame_jacobian_time_variation(self.model, self._data, fid)
            else:
                full, full_data, G = self._rates_source
                full_id = full.getFrameId(self.model.frames[fid].name, self.model.frames[fid].type)
                dJ = _frame_jacobian_time_variation(full, full_data, full_id) @ G
            self._jacobian_rates[fid] = dJ
        return dJ

    def _require_v(self, what: str) -> np.ndarray:
        """v (nv,), or ConfigurationError naming `what` needs it."""
        if self.v is None:
            raise ConfigurationError(f"{what} need a velocity: build Kinematics(robot, q, v)")
        return self.v

    # ------------------------------------------------------------------ frame pairs
    def relative_placement(self, frame_a: FrameRef, frame_b: FrameRef) -> pin.SE3:
        """T_ab = T_wa^-1 T_wb: pose of frame b in frame a."""
        oMf = self._data.oMf
        return oMf[self.robot.frame_id(frame_a)].actInv(oMf[self.robot.frame_id(frame_b)])

    def relative_jacobian(
        self, frame_a: FrameRef, frame_b: FrameRef, *, expressed_in: FrameRef = "a"
    ) -> np.ndarray:
        """Jacobian of frame b's motion measured in frame a, shape (6, nv).

        ``[d/dt p_ab; w_ab] = J @ v`` with both blocks expressed in `expressed_in`: "a" (default),
        "b", "world", or any frame name or id (the keywords win over frames of the same name; pass
        an id to mean such a frame). With "b" it is the body Jacobian of T_ab (``pin.Jlog6``'s).
        """
        robot = self.robot
        fa, fb = robot.frame_id(frame_a), robot.frame_id(frame_b)
        core = _Core.module if _Core.loaded else _Core.get()
        if core is not None and robot.movable:  # (Pinocchio's Jacobians crash with nv = 0)
            code, fc = axes_code(robot, expressed_in, fa, fb)
            return core.relative_jacobian_in(self.model, self._data, fa, fb, code, fc)
        return relative_jacobian_from_frames(self._lwa(fa), self._lwa(fb), self._oMf(fa), self._oMf(fb),
                                             expressed_in=self._expressed(expressed_in, fa, fb))

    def relative_jacobians(self, pairs: Iterable[tuple[FrameRef, FrameRef]], *,
                           expressed_in: FrameRef = "a") -> np.ndarray:
        """J_ab of every pair (a, b) of `pairs`, shape (k, 6, nv): ``out[i]`` is
        ``relative_jacobian(a_i, b_i, expressed_in=expressed_in)``, computed in one call.

        Raises:
            FrameNotFound: a frame is not in the robot, or an entry of `pairs` is not a pair.
        """
        robot = self.robot
        frame_id = robot.frame_id
        ids: list[int] = []
        if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
            raise FrameNotFound(f"pairs must be a list of (frame_a, frame_b) pairs, got {pairs!r}")
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise FrameNotFound(f"pairs must hold (frame_a, frame_b) pairs, got {pair!r}")
            ids += (frame_id(pair[0]), frame_id(pair[1]))
        code, fc = axes_code(robot, expressed_in, -1, -1)  # (no frame is -1: any frame c is code 3)
        core = _Core.module if _Core.loaded else _Core.get()
        if core is not None and robot.movable:
            return core.relative_jacobians_in(self.model, self._data, ids, code, fc, self.model.nv)
        pairs_ids = zip(ids[::2], ids[1::2], strict=True)
        return np.array([self.relative_jacobian(a, b, expressed_in=expressed_in) for a, b in pairs_ids]
                        ).reshape(len(ids) // 2, 6, self.model.nv)

    def _expressed(self, expressed_in: FrameRef, fa: int, fb: int) -> str | np.ndarray:
        """`expressed_in` for the relative layer: "a", "b", "world" or a frame's rotation R_wc."""
        if isinstance(expressed_in, str) and expressed_in in EXPRESSED_IN_KEYWORDS:
            return expressed_in
        fc = self.robot.frame_id(expressed_in)
        return "a" if fc == fa else "b" if fc == fb else self._oMf(fc).rotation

    def relative_twist(
        self, frame_a: FrameRef, frame_b: FrameRef, *, expressed_in: FrameRef = "a"
    ) -> np.ndarray:
        """``[d/dt p_ab; w_ab]`` (6,) for the velocity v given at construction."""
        self._require_v("relative twists")
        return self.relative_jacobian(frame_a, frame_b, expressed_in=expressed_in) @ self.v

    def relative_jacobian_time_variation(
        self, frame_a: FrameRef, frame_b: FrameRef, *, expressed_in: FrameRef = "a"
    ) -> np.ndarray:
        """d/dt J_ab along v, shape (6, nv): the relative acceleration is ``J @ a + dJ @ v``.

        Same frames and `expressed_in` convention as :meth:`relative_jacobian`. Built from the
        LOCAL_WORLD_ALIGNED Jacobians and their time variations (Pinocchio's): with
        D = J_b - J_a + [p_wb - p_wa]x-shift of a's angular part (world axes),
        d/dt J_ab_in_c = R_cw (dD/dt - [w_c]x D).
        """
        v = self._require_v("Jacobian time variations")
        fa, fb = self.robot.frame_id(frame_a), self.robot.frame_id(frame_b)
        axes = self._expressed(expressed_in, fa, fb)
        omega_c = None
        if not isinstance(axes, str):  # another frame's axes: its angular velocity, world axes
            omega_c = self._lwa(self.robot.frame_id(expressed_in))[3:] @ v
        return relative_jacobian_time_variation_from_frames(
            self._lwa(fa), self._lwa(fb), self._lwa_rate(fa), self._lwa_rate(fb), self._oMf(fa), self._oMf(fb),
            v, expressed_in=axes, omega_c=omega_c)

    # ------------------------------------------------------------------ centre of mass
    def _com_world(self) -> tuple[np.ndarray, np.ndarray]:
        """(c (3,), J_c (3, nv)): the whole robot's centre of mass in the world and its Jacobian,
        cached. Pinocchio's centerOfMass leaves out the inertia of joint 0, where it puts every
        body fixed to the world (a fixed base's root link, a locked floating base and what is
        locked with it); they count here: c = (m c_m + m0 c0) / (m + m0), J_c = m / (m + m0) J_cm,
        with m, c_m, J_cm Pinocchio's (the moving bodies) and m0, c0 the fixed bodies'."""
        com = self.__dict__.get("_com")
        if com is None:
            m, m0, c0 = mass_split(self.model)
            total = m + m0
            if not total > 0:
                raise SupportError(f"robot '{self.robot.name}' has no mass: its centre of mass is undefined")
            if m > 0:  # Pinocchio's own, on the forward pass in data (it also rewrites data.J, same values)
                J = np.array(pin.jacobianCenterOfMass(self.model, self._data, False)).reshape(3, -1)  # (3,) if nv 1
                com = ((m * self._data.com[0] + m0 * c0) / total, (m / total) * J)
            else:
                com = (c0, np.zeros((3, self.model.nv)))
            self._com = com
        return com

    def center_of_mass(self, frame: FrameRef = "universe") -> np.ndarray:
        """p_ac: the robot's centre of mass c in frame a = `frame` (a's axes), (3,) [m]. Every
        body counts, those fixed to the world too (unlike ``pin.centerOfMass``: see _com_world)."""
        c = self._com_world()[0]
        fa = self.robot.frame_id(frame)
        if fa == 0:
            return c.copy()
        T_a = self._oMf(fa)
        return T_a.rotation.T @ (c - T_a.translation)

    def center_of_mass_jacobian(self, frame: FrameRef = "universe") -> np.ndarray:
        """J_ac: d/dt p_ac = J_ac v, (3, nv): the centre of mass's velocity measured in and
        expressed in frame a = `frame`: the linear rows of :meth:`relative_jacobian` for a point
        frame b at c moving with J_c (Pinocchio's ``jacobianCenterOfMass``, weighted by the
        moving bodies' share of the mass)."""
        c, J_c = self._com_world()
        fa = self.robot.frame_id(frame)
        if fa == 0:
            return J_c.copy()
        J_point = np.vstack((J_c, np.zeros_like(J_c)))  # the point's angular rows are never read
        return relative_jacobian_from_frames(self._lwa(fa), J_point, self._oMf(fa), pin.SE3(np.eye(3), c))[:3]


_CHECKED: weakref.WeakKeyDictionary[Robot, list[object]] = weakref.WeakKeyDictionary()
_CHECKED_KEPT = 4  # the last data objects found to be a robot's, held (so their ids stay theirs)


def _check_data(robot: Robot, data: object) -> None:
    """ConfigurationError unless `data` is a ``pin.Data`` of robot's model (its joints, frames
    and nv): Pinocchio's algorithms crash on another model's data. The last few data objects
    found to be the robot's are not checked again (a controller passes its own on every step)."""
    checked = _CHECKED.setdefault(robot, [])
    if any(known is data for known in checked):
        return
    model = robot.model
    if not isinstance(data, pin.Data):
        raise ConfigurationError(f"data must be a pin.Data of robot '{robot.name}' (robot.model.createData()), "
                                 f"not {type(data).__name__}")
    if len(data.oMi) != model.njoints or len(data.oMf) != model.nframes or data.J.size != 6 * model.nvExtended or \
            [_kind(j.shortname()) for j in data.joints] != [_kind(j.shortname()) for j in model.joints]:
        raise ConfigurationError(
            f"data is a pin.Data of another model ({len(data.oMi)} joints, {len(data.oMf)} frames, "
            f"{data.J.size // 6} Jacobian columns); robot '{robot.name}' has {model.njoints} joints, "
            f"{model.nframes} frames, {model.nvExtended} columns: pass robot.model.createData()")
    checked.append(data)
    del checked[:-_CHECKED_KEPT]


def _kind(shortname: str) -> str:
    """A joint's type from its model's or data's short name (JointModelRX, JointDataRX: RX; Pinocchio
    adds "Tpl" to some data names)."""
    return shortname.removeprefix("JointModel").removeprefix("JointData").removesuffix("Tpl")


def axes_code(robot: Robot, expressed_in: FrameRef, fa: int, fb: int) -> tuple[int, int]:
    """(code, frame id c) of the compiled core for `expressed_in`: 0 a's axes, 1 b's, 2 the
    world's, 3 frame c's (the keywords win over frames of the same name; a str subclass such as
    numpy's str_ is text)."""
    if isinstance(expressed_in, str):
        code = _AXES.get(str(expressed_in))
        if code is not None:
            return code, 0
    fc = robot.frame_id(expressed_in)
    return (0 if fc == fa else 1 if fc == fb else 3), fc

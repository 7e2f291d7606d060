"""Scalar costs on frame poses, for optimisation-based IK, with exact gradients.

Two costs, for a frame b either in the world (absolute) or relative to a frame a:

* position:    ``f_p(q) = |p_ab(q) - p_hat|^2``                      [m^2]
* orientation: ``f_e(q) = 1 - (e_ab(q) . e_hat)^2``                  [-], in [0, 1]

with ``p_ab`` in a's axes and ``e_ab`` the unit quaternion of ``R_ab`` (a = the world when
``relative_to`` is None). ``f_e = sin^2(theta / 2)`` for the angle theta of ``R_hat^T R_ab``: 0 at
the target, 1 half a turn away, blind to the sign of either quaternion.

Gradients. Along a velocity v (nv,), ``d/dt p_ab = J_ab^v v`` and ``d/dt e_ab = E(e_ab) J_ab^w v``
with J_ab the relative Jacobian expressed in a (rows [linear; angular]) and E the quaternion-rate
matrix (:func:`quaternion_rate_matrix`), so the *tangent* gradients (nv,) are

    grad_v f_p = 2 J^v^T (p_ab - p_hat)
    grad_v f_e = -2 (e . e_hat) J^w^T E(e)^T e_hat

which is what optimisers stepping with ``pin.integrate(model, q, dv)`` want. The gradient in the
coordinates of q (nq,) follows from q' = N(q) v, N = ``pin.lieGroup(model).tangentMap(q)``
(nq, nv): ``grad_q f = N (N^T N)^-1 grad_v f``. Every cost is evaluated on ``normalize(q)`` (unit
quaternions and (cos, sin) pairs), so it is a function of all nq coordinates, it does not change
along the radial direction of those blocks, and ``grad_q`` is its true gradient there (finite
differences in q agree). With only 1-DoF joints, N = I and both gradients are equal.

Targets. Positions are (3,) [m] in a's axes. Orientations are a rotation matrix (3, 3), a
``pin.SE3`` (its rotation), a ``pin.Quaternion`` or 4 numbers in Pinocchio's (x, y, z, w) order;
a quaternion whose norm is not 1 (within 1e-6) is *rejected* with a TaskError, never silently
normalized: a non-unit quaternion usually means a wrong order or a bug upstream.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .exceptions import TaskError
from .joint_space import MAX_COORDINATE
from .one_shot import one_shot_kinematics
from .poses import as_unit_quaternion
from .relative import Kinematics
from .robot import FrameRef, Robot
from .validation import ROTATION_TOLERANCE, as_float, as_frame_ref, as_vector

MAX_WEIGHT = 1e100  # with targets and positions within +-1e100 [m], weight * |p - p_hat|^2 stays finite


# ---------------------------------------------------------------------------- helpers
def as_weight(weight: Any) -> float:
    """A cost's weight: a real number in [0, MAX_WEIGHT] (larger ones make the cost overflow)."""
    value = as_float(weight, "weight", minimum=0.0, valid=f"a number in [0, {MAX_WEIGHT:g}]")
    if value > MAX_WEIGHT:
        raise TaskError(f"weight must be a number in [0, {MAX_WEIGHT:g}] (larger weights make the cost "
                        f"overflow), got {value:g}")
    return value


def quaternion_rate_matrix(quat_xyzw: ArrayLike) -> np.ndarray:
    """E(e), shape (4, 3): ``d/dt e = E(e) @ w`` for a unit quaternion e = (x, y, z, w).

    w is the angular velocity [rad/s] of the rotated frame, in the axes of the frame the rotation
    is expressed in (``d/dt R = [w]x R``): with e the quaternion of R_ab, w = w_ab in a's axes.
    It is ``1/2 (w ⊗ e)`` (Hamilton product, w as a pure quaternion) written as a matrix:
    vector part ``1/2 (e_w I - [e_v]x) w``, scalar part ``-1/2 e_v . w``.

    Raises:
        TaskError: e is not 4 finite real numbers or its norm differs from 1 by more than 1e-6.
    """
    e = as_vector(quat_xyzw, 4, "a quaternion (x, y, z, w)")
    norm = float(np.linalg.norm(e))
    if abs(norm - 1.0) > ROTATION_TOLERANCE:
        raise TaskError(f"quaternion {e.tolist()} has norm {norm:.6g}; E(e) needs a unit quaternion")
    E = np.empty((4, 3))
    E[:3] = 0.5 * (e[3] * np.eye(3) - pin.skew(e[:3]))
    E[3] = -0.5 * e[:3]
    return E


def q_gradient(robot: Robot, q: ArrayLike, tangent_gradient: ArrayLike) -> np.ndarray:
    """Gradient (nq,) in the coordinates of q from a tangent gradient (nv,) at q.

    ``N (N^T N)^-1 g_v`` with N = dq/dv (nq, nv) from ``pin.lieGroup(model).tangentMap(q)``: the
    gradient of f(normalize(q)), with no component along the radial direction of quaternion and
    (cos, sin) blocks. Equal to g_v for robots with only 1-DoF joints.
    """
    q = robot.validate_q(q)
    g = robot.validate_v(tangent_gradient, name="tangent_gradient")
    if robot.nq == robot.nv:  # 1-DoF joints only (any 2-entry-per-DoF joint makes nq > nv)
        return g
    N = pin.lieGroup(robot.model).tangentMap(pin.normalize(robot.model, q))
    return N @ np.linalg.solve(N.T @ N, g)


def _kinematics(robot: Robot, q: ArrayLike) -> Kinematics:
    """Kinematics at normalize(q), in the calling thread's pin.Data of the robot."""
    q = robot.validate_q(q)
    if robot.nq != robot.nv:
        q = pin.normalize(robot.model, q)
    return one_shot_kinematics(robot, q)


# ---------------------------------------------------------------------------- costs
class CostValue(NamedTuple):
    """A cost at one configuration: ``value`` = weight * f (a float) and ``gradient`` = weight *
    grad_v f, the tangent gradient (nv,)."""

    value: float
    gradient: np.ndarray


class Cost(ABC):
    """A weighted scalar cost ``weight * f(q)`` with exact gradients.

    Subclasses implement :meth:`evaluate` (on a :class:`~reljac.relative.Kinematics`, so that
    several costs share one kinematics pass) and :meth:`errors`.
    """

    weight: float
    name: str

    @abstractmethod
    def evaluate(self, kin: Kinematics) -> CostValue:
        """(weight * f, weight * grad_v f) at kin's configuration: a float and an (nv,) array."""

    @abstractmethod
    def errors(self, kin: Kinematics) -> dict[str, float]:
        """Unweighted error norms for reports: {'position': [m]} or {'orientation': [rad]}."""

    def terms(self) -> list[Cost]:
        """The single costs this cost is a sum of (itself, for a single cost)."""
        return [self]

    # one-shot conveniences: q is (nq,), validated, and normalized before evaluation
    def value(self, robot: Robot, q: ArrayLike) -> float:
        """weight * f(q), a float."""
        return self.evaluate(_kinematics(robot, q))[0]

    def tangent_gradient(self, robot: Robot, q: ArrayLike) -> np.ndarray:
        """Gradient along velocities, shape (nv,): ``f(integrate(q, dv)) ~ f(q) + g . dv``."""
        return self.evaluate(_kinematics(robot, q))[1]

    def gradient(self, robot: Robot, q: ArrayLike) -> np.ndarray:
        """Gradient in the coordinates of q, shape (nq,) (see the module docstring)."""
        return q_gradient(robot, q, self.tangent_gradient(robot, q))

    def value_and_tangent_gradient(self, robot: Robot, q: ArrayLike) -> CostValue:
        """(value, tangent gradient (nv,)) from one kinematics pass."""
        return self.evaluate(_kinematics(robot, q))

    def __add__(self, other: object) -> CostSum:
        if not isinstance(other, Cost):
            return NotImplemented
        return CostSum([self, other])


class _FrameCost(Cost, ABC):
    """Shared parts of the frame costs: frames, weight, and T_ab with its Jacobian."""

    def __init__(self, frame: FrameRef, *, relative_to: FrameRef | None, weight: float, name: str | None,
                 kind: str) -> None:
        self.frame = as_frame_ref(frame, "frame")
        self.relative_to = None if relative_to is None else as_frame_ref(relative_to, "relative_to")
        self.weight = as_weight(weight)
        where = "" if relative_to is None else f" in {relative_to}"
        self.name = name or f"{kind} of {frame}{where}"

    def _pose_and_jacobian(self, kin: Kinematics) -> tuple[pin.SE3, np.ndarray]:
        """T_ab (a = world if relative_to is None) and J_ab expressed in a, (6, nv)."""
        if self.relative_to is None:
            return kin.placement(self.frame), kin.frame_jacobian(self.frame)
        return (kin.relative_placement(self.relative_to, self.frame),
                kin.relative_jacobian(self.relative_to, self.frame, expressed_in="a"))

    def _pose(self, kin: Kinematics) -> pin.SE3:
        if self.relative_to is None:
            return kin.placement(self.frame)
        return kin.relative_placement(self.relative_to, self.frame)


class PositionCost(_FrameCost):
    """``weight * |p_ab(q) - p_hat|^2`` [m^2]: position of the frame's origin.

    Args:
        frame: frame b (name or id).
        target: p_hat (3,) [m], in a's axes (the world's if `relative_to` is None).
        relative_to: frame a, or None for the world.
        weight: >= 0 [1/m^2 to make the cost unitless, if you wish].
        name: label in reports (default "position of b[ in a]").
    """

    def __init__(self, frame: FrameRef, target: Any, *, relative_to: FrameRef | None = None,
                 weight: float = 1.0, name: str | None = None) -> None:
        super().__init__(frame, relative_to=relative_to, weight=weight, name=name, kind="position")
        self.set_target(target)

    def set_target(self, target: Any) -> None:
        """Target position p_hat (3,) [m], in a's axes."""
        what = f"target of '{self.name}' [m]"
        target = as_vector(target, 3, what)
        if np.abs(target).max() > MAX_COORDINATE:
            raise TaskError(f"{what} has an entry of {target[np.argmax(np.abs(target))]:.3g}; reljac computes with "
                            f"|entries| <= {MAX_COORDINATE:g} (so no square of them overflows)")
        self.target = target

    def evaluate(self, kin: Kinematics) -> CostValue:
        T_ab, J_ab = self._pose_and_jacobian(kin)
        r = T_ab.translation - self.target
        return CostValue(self.weight * float(r @ r), (2.0 * self.weight) * (J_ab[:3].T @ r))

    def errors(self, kin: Kinematics) -> dict[str, float]:
        return {"position": float(np.linalg.norm(self._pose(kin).translation - self.target))}


class OrientationCost(_FrameCost):
    """``weight * (1 - (e_ab(q) . e_hat)^2)`` [-]: quaternion distance, ``sin^2(theta / 2)``.

    Args:
        frame: frame b (name or id).
        target: R_hat as a (3, 3) rotation, a pin.SE3 (its rotation), a pin.Quaternion or
            4 numbers (x, y, z, w); rotations of b in a (in the world if `relative_to` is None).
            Non-unit quaternions are rejected (TaskError), not normalized.
        relative_to: frame a, or None for the world.
        weight: >= 0.
        name: label in reports (default "orientation of b[ in a]").
    """

    def __init__(self, frame: FrameRef, target: Any, *, relative_to: FrameRef | None = None,
                 weight: float = 1.0, name: str | None = None) -> None:
        super().__init__(frame, relative_to=relative_to, weight=weight, name=name, kind="orientation")
        self.set_target(target)

    def set_target(self, target: Any) -> None:
        """Target orientation (see the class docstring); stored as the unit quaternion e_hat (x, y, z, w)."""
        self.target = as_unit_quaternion(target, f"target of '{self.name}'")

    def evaluate(self, kin: Kinematics) -> CostValue:
        T_ab, J_ab = self._pose_and_jacobian(kin)
        e = pin.Quaternion(T_ab.rotation).coeffs()
        d = float(e @ self.target)
        de_dw = quaternion_rate_matrix(e).T @ self.target  # d(e . e_hat)/dw_ab, (3,)
        return CostValue(self.weight * (1.0 - d * d), (-2.0 * self.weight * d) * (J_ab[3:].T @ de_dw))

    def errors(self, kin: Kinematics) -> dict[str, float]:
        R_hat = pin.Quaternion(self.target).toRotationMatrix()
        return {"orientation": float(np.linalg.norm(pin.log3(R_hat.T @ self._pose(kin).rotation)))}


class CostSum(Cost):
    """Sum of costs ``sum_i weight_i f_i(q)`` (nested sums are flattened), one kinematics pass.

    ``weight`` scales the whole sum. Term names must be unique (they key :meth:`term_errors`).
    """

    def __init__(self, costs: Iterable[Cost], *, weight: float = 1.0, name: str = "sum") -> None:
        terms: list[Cost] = []
        for cost in costs:
            if not isinstance(cost, Cost):
                raise TaskError(f"a CostSum takes Cost objects (PositionCost, OrientationCost, ...), got {cost!r}")
            if isinstance(cost, CostSum) and cost.weight != 1.0:
                raise TaskError(f"cannot flatten cost sum '{cost.name}' with weight {cost.weight}; "
                                "put the weight on its terms")
            terms.extend(cost.terms())
        if not terms:
            raise TaskError("a CostSum needs at least one cost")
        names = [t.name for t in terms]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise TaskError(f"cost names must be unique; repeated: {duplicates} (pass name=...)")
        self._terms = terms
        self.weight = as_weight(weight)
        self.name = name

    def terms(self) -> list[Cost]:
        return list(self._terms)

    def evaluate(self, kin: Kinematics) -> CostValue:
        value, grad = 0.0, np.zeros(kin.robot.nv)
        for term in self._terms:
            f, g = term.evaluate(kin)
            value += f
            grad += g
        return CostValue(self.weight * value, self.weight * grad)

    def errors(self, kin: Kinematics) -> dict[str, float]:
        """The largest error of each kind over the terms: {'position': m, 'orientation': rad}."""
        out: dict[str, float] = {}
        for errors in self.term_errors(kin).values():
            for kind, e in errors.items():
                out[kind] = max(out.get(kind, 0.0), e)
        return out

    def term_errors(self, kin: Kinematics) -> dict[str, dict[str, float]]:
        """Error norms of each term, by term name."""
        return {term.name: term.errors(kin) for term in self._terms}


def pose_cost(frame: FrameRef, target: pin.SE3, *, relative_to: FrameRef | None = None,
              position_weight: float = 1.0, orientation_weight: float = 1.0) -> CostSum:
    """Position + orientation costs of frame b toward a pose T_hat (pin.SE3 of b in a)."""
    if not isinstance(target, pin.SE3):
        raise TaskError(f"the target pose must be a pin.SE3, got {type(target).__name__}")
    return CostSum([
        PositionCost(frame, target.translation, relative_to=relative_to, weight=position_weight),
        OrientationCost(frame, target.rotation, relative_to=relative_to, weight=orientation_weight),
    ])


def as_cost(objectives: Cost | Sequence[Cost]) -> CostSum:
    """A CostSum from one cost or a sequence of costs (what the solvers accept)."""
    if isinstance(objectives, CostSum):
        return objectives
    if isinstance(objectives, Cost):
        return CostSum([objectives])
    if isinstance(objectives, (str, bytes)) or not isinstance(objectives, Iterable):
        raise TaskError(f"objectives must be a Cost or a list of Costs, got {objectives!r}")
    return CostSum(list(objectives))

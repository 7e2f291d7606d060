"""Constraints between two frames: residuals g(q), joint-space Jacobians G (k, nv), effective mass.

Every constraint ties a point fixed on frame a to a point fixed on frame b. The points are given
in their frame's own axes (``point_a`` in a, ``point_b`` in b, [m], default the origins); in the
world they are ``x_a = p_wa + R_wa point_a`` and ``x_b = p_wb + R_wb point_b``, and

    r(q) = x_b - x_a          (world axes, from a's point to b's point)

The ball-joint Jacobian is the velocity of b's point minus that of a's point (world axes),
built from the LOCAL_WORLD_ALIGNED frame Jacobians J_f = [J_f^v; J_f^w]:

    G_ball = (J_b^v - [R_wb point_b]x J_b^w) - (J_a^v - [R_wa point_a]x J_a^w)      (3, nv)

so that ``d/dt r = G_ball @ v``. The other constraints project it:

| constraint | residual g(q) | Jacobian G (d/dt g = G v) |
| --- | --- | --- |
| BallJoint | r (3,) | G_ball (3, nv) |
| Distance | `norm(r) - length` (1,) | `(r / norm(r))^T G_ball` (1, nv) |
| Contact | `B r` (3,) | `B G_ball` (3, nv), B = rows [n; t1; t2] |

Contact: n is the unit normal (given in world axes, or in a's axes and then turning with a) and
(t1, t2) two tangents (:func:`contact_basis`). G is the velocity-level contact Jacobian of the
rigid-body literature: it treats B as fixed at the current q, so ``d/dt (B r) = G v`` holds for B
frozen at q (exactly the derivative of ``B(q0) r(q)`` at q0; with a normal turning with a, the
extra term ``(dB/dt) r`` vanishes at contact, r = 0).

:func:`effective_inverse_mass` gives ``G M^-1 G^T`` (k, k) [1/kg for position rows], the inverse of
the apparent inertia felt along the constraint, with M from ``pin.crba`` and a Cholesky solve.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .exceptions import ConfigurationError, ReljacError, TaskError
from .one_shot import one_shot_kinematics
from .relative import Kinematics
from .robot import FrameRef, Robot
from .validation import as_float, as_frame_ref, as_matrix, as_vector

#: Below this |r| [m] the direction of a distance constraint is undefined.
MIN_DISTANCE = 1e-12
NORMAL_KEYWORDS = ("world", "a")


def contact_basis(normal: ArrayLike) -> np.ndarray:
    """Rows [n; t1; t2], shape (3, 3), orthonormal, from a normal (3,) (normalized here).

    t1 is n x e normalized, e the coordinate axis least aligned with n (deterministic, never
    degenerate); t2 = n x t1, so (t1, t2, n) is right-handed.

    Raises:
        TaskError: a normal that is not 3 finite numbers or has zero length.
    """
    n = as_vector(normal, 3, "contact normal")
    scale = float(np.abs(n).max())  # divide first: |n| of a huge finite normal overflows
    if scale == 0.0 or scale * float(np.linalg.norm(n / scale)) < 1e-12:
        raise TaskError(f"the contact normal {n.tolist()} has zero length; give a direction")
    n = n / scale
    n /= np.linalg.norm(n)
    e = np.zeros(3)
    e[int(np.argmin(np.abs(n)))] = 1.0
    t1 = np.cross(n, e)
    t1 /= np.linalg.norm(t1)
    return np.vstack([n, t1, np.cross(n, t1)])


class ConstraintValue(NamedTuple):
    """A constraint at one configuration: residual ``g`` (size,) and Jacobian ``G`` (size, nv),
    ``d/dt g = G @ v``."""

    g: np.ndarray
    G: np.ndarray


class PointPair(ABC):
    """Base of the constraints: a point fixed on frame a and a point fixed on frame b (offsets in
    their own frames' axes). A subclass defines ``size`` and :meth:`compute` from :meth:`_points`."""

    size = 3

    def __init__(self, frame_a: FrameRef, frame_b: FrameRef, *, point_a: ArrayLike = (0.0, 0.0, 0.0),
                 point_b: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        self.frame_a = as_frame_ref(frame_a, "frame_a")
        self.frame_b = as_frame_ref(frame_b, "frame_b")
        self.point_a = as_vector(point_a, 3, "point_a")
        self.point_b = as_vector(point_b, 3, "point_b")

    def _points(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray]:
        """r = x_b - x_a (3,) and G_ball (3, nv), world axes."""
        out = []
        for frame, point in ((self.frame_a, self.point_a), (self.frame_b, self.point_b)):
            T = kin.data.oMf[kin.robot.frame_id(frame)]
            offset = T.rotation @ point  # point relative to the frame origin, world axes
            J = kin.frame_jacobian(frame)
            out.append((T.translation + offset, J[:3] - pin.skew(offset) @ J[3:]))
        (x_a, G_a), (x_b, G_b) = out
        return x_b - x_a, G_b - G_a

    @abstractmethod
    def compute(self, kin: Kinematics) -> ConstraintValue:
        """(g, G): residual (size,) and Jacobian (size, nv) at kin's configuration."""

    def residual(self, robot: Robot, q: ArrayLike) -> np.ndarray:
        """g(q), shape (size,), at configuration q (nq,)."""
        return self.compute(one_shot_kinematics(robot, q))[0]

    def jacobian(self, robot: Robot, q: ArrayLike) -> np.ndarray:
        """G (size, nv) with ``d/dt g = G @ v`` at configuration q (nq,)."""
        return self.compute(one_shot_kinematics(robot, q))[1]


class BallJoint(PointPair):
    """b's point coincides with a's point: g = x_b - x_a (3,) [m], world axes; G (3, nv).

    Args:
        frame_a: frame a (name or id); the world frame "universe" is allowed.
        frame_b: frame b (name or id); the world frame "universe" is allowed.
        point_a: the point on a, in a's axes [m].
        point_b: the point on b, in b's axes [m].
    """

    def compute(self, kin: Kinematics) -> ConstraintValue:
        return ConstraintValue(*self._points(kin))


class Distance(PointPair):
    """The points stay `length` apart: g = |x_b - x_a| - length (1,) [m]; G (1, nv).

    Raises (at evaluation):
        ConfigurationError: the two points coincide (|r| < 1e-12 m): the direction is undefined.
    """

    size = 1

    def __init__(self, frame_a: FrameRef, frame_b: FrameRef, length: float, *, point_a: ArrayLike = (0.0, 0.0, 0.0),
                 point_b: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        super().__init__(frame_a, frame_b, point_a=point_a, point_b=point_b)
        self.length = as_float(length, "length [m]", minimum=0.0)

    def compute(self, kin: Kinematics) -> ConstraintValue:
        r, G = self._points(kin)
        d = float(np.linalg.norm(r))
        if d < MIN_DISTANCE:
            raise ConfigurationError(
                f"distance constraint between {self.frame_a!r} and {self.frame_b!r}: the two points "
                f"coincide (|r| = {d:.3g} m), so its direction and Jacobian are undefined; "
                "use a BallJoint (3 rows) there"
            )
        return ConstraintValue(np.array([d - self.length]), (r / d)[None, :] @ G)


class Contact(PointPair):
    """Contact frame at the points: g = B r (3,) [m], rows (normal, tangent 1, tangent 2); G = B G_ball.

    Args:
        frame_a: as for :class:`BallJoint`.
        frame_b: as for :class:`BallJoint`.
        normal: the contact normal (3,), normalized here; it points from a toward b for a
            separation velocity ``(G v)[0] > 0``.
        normal_in: "world" (a fixed direction) or "a" (given in a's axes, turning with a).
        point_a: as for :class:`BallJoint`.
        point_b: as for :class:`BallJoint`.
    """

    def __init__(self, frame_a: FrameRef, frame_b: FrameRef, normal: ArrayLike, *, normal_in: str = "world",
                 point_a: ArrayLike = (0.0, 0.0, 0.0), point_b: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        super().__init__(frame_a, frame_b, point_a=point_a, point_b=point_b)
        if normal_in not in NORMAL_KEYWORDS:
            raise TaskError(f"normal_in must be one of {NORMAL_KEYWORDS}, got {normal_in!r}")
        self.normal_in = normal_in
        self._basis_local = contact_basis(normal)

    def basis(self, kin: Kinematics) -> np.ndarray:
        """B (3, 3): rows n, t1, t2 in world axes at kin's configuration."""
        if self.normal_in == "world":
            return self._basis_local.copy()
        return self._basis_local @ kin.data.oMf[kin.robot.frame_id(self.frame_a)].rotation.T

    def compute(self, kin: Kinematics) -> ConstraintValue:
        r, G = self._points(kin)
        B = self.basis(kin)
        return ConstraintValue(B @ r, B @ G)


def mass_matrix(robot: Robot, q: ArrayLike) -> np.ndarray:
    """Joint-space mass matrix M(q) (nv, nv), symmetric, from ``pin.crba`` (upper triangle)."""
    q = robot.validate_q(q)
    # Pinocchio 4.1's crba accumulates in its data where a mimic joint has moving joints below it:
    # on reused data every call drifted (an entry grew by its value each call, M lost definiteness)
    data = robot.model.createData() if len(robot.model.mimicking_joints) else robot.thread_data()
    M = pin.crba(robot.model, data, q)
    if not np.isfinite(M).all():
        raise ConfigurationError(f"the mass matrix of '{robot.name}' overflows at this q (entries beyond "
                                 "1e308): q is too far from any physical configuration")
    return np.triu(M) + np.triu(M, 1).T


def effective_inverse_mass(robot: Robot, q: ArrayLike, G: ArrayLike) -> np.ndarray:
    """``G M(q)^-1 G^T`` (k, k) for a constraint Jacobian G (k, nv) (or (nv,) for one row).

    The inverse of the apparent inertia along the constraint rows ([1/kg] for rows in metres,
    [1/(kg m^2)] for angular rows). Solved with a Cholesky factorization of M, never an inverse.

    Raises:
        ConfigurationError: G has a wrong shape or non-finite entries; q is invalid.
        ReljacError: M is not positive definite (links without mass or inertia).
    """
    G = as_matrix(G, robot.nv, "G", note=f" (columns: nv of '{robot.name}')")
    M = mass_matrix(robot, q)
    import scipy.linalg  # here: the package's import stays light (scipy takes about a second)

    try:
        factor = scipy.linalg.cho_factor(M, lower=True)
    except np.linalg.LinAlgError:
        raise ReljacError(
            f"the mass matrix of '{robot.name}' at this q is not positive definite: some moving "
            "link has no mass or inertia in the URDF"
        ) from None
    largest = float(np.abs(G).max(initial=0.0))
    scale = largest if largest > 1e100 else 1.0  # scaled: no overflow inside the solve
    Gs = G / scale
    W = Gs @ scipy.linalg.cho_solve(factor, Gs.T)
    with np.errstate(over="ignore"):
        W = (0.5 * (W + W.T)) * scale * scale
    if not np.isfinite(W).all():
        raise ConfigurationError(f"G M^-1 G^T overflows float64 (max |G| = {largest:.3g}): G's entries are too large")
    return W

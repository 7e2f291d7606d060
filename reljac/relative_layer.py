"""The relative layer: J_ab from two frames' LOCAL_WORLD_ALIGNED Jacobians, as pure functions.

Inputs are the frame Jacobians J_a, J_b (6, n) of frames a and b (rows [velocity of the frame's
origin; angular velocity], world axes: Pinocchio's LOCAL_WORLD_ALIGNED, or any other source: a
robot's SDK, another library, a logged run) and their placements T_wa, T_wb (``pin.SE3`` or any
object with ``rotation`` (3, 3) and ``translation`` (3,), or a (4, 4) homogeneous matrix):

    J^w_ab = R_wa^T (J^w_b - J^w_a)
    J^v_ab = [p_ab]x R_wa^T J^w_a + R_wa^T (J^v_b - J^v_a),   p_ab = R_wa^T (p_wb - p_wa)

expressed in a; in another frame c both blocks are rotated by R_ca. Written as the velocity of
b relative to the point of a that coincides with b, in world axes,
``D = J_b - J_a + [[0, [p_wb - p_wa]x], [0, 0]] J_a``, it is ``J_ab_in_c = blockdiag(R_cw, R_cw) D``,
which is how it is computed. numpy only: usable with Jacobians that never saw Pinocchio (the
tests feed it the in-house reference's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .exceptions import ConfigurationError

_IDENTITY = np.eye(3)


def _translation(T: Any, what: str) -> np.ndarray:
    """p (3,) of a placement given as an SE3-like object or a (4, 4) matrix."""
    p = getattr(T, "translation", None)
    return p if p is not None else _homogeneous(T, what)[:3, 3]


def _rotation(T: Any, what: str) -> np.ndarray:
    """R (3, 3) of a placement given as an SE3-like object or a (4, 4) matrix."""
    R = getattr(T, "rotation", None)
    return R if R is not None else _homogeneous(T, what)[:3, :3]


def _homogeneous(T: Any, what: str) -> np.ndarray:
    M = np.asarray(T, dtype=float)
    if M.shape != (4, 4):
        raise ConfigurationError(f"{what} must be a pin.SE3 or a (4, 4) homogeneous matrix, got shape {M.shape}")
    return M


def _axes(expressed_in: Any, T_wa: Any, T_wb: Any) -> np.ndarray | None:
    """R_wc of the axes `expressed_in` names ("a", "b", "world" (None) or a rotation R_wc)."""
    if isinstance(expressed_in, str):
        if expressed_in == "a":
            return _rotation(T_wa, "T_wa")
        if expressed_in == "b":
            return _rotation(T_wb, "T_wb")
        if expressed_in == "world":
            return None
        raise ConfigurationError(f"expressed_in must be 'a', 'b', 'world' or a (3, 3) rotation R_wc, "
                                 f"got {expressed_in!r}")
    R = np.asarray(expressed_in, dtype=float)
    if R.shape != (3, 3):
        raise ConfigurationError(f"expressed_in as a rotation R_wc must be (3, 3), got shape {R.shape}")
    return R


_LEVI_CIVITA = np.zeros((3, 3, 3))  # E @ p = [p]x: E[i, k, j] = epsilon_ijk
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _LEVI_CIVITA[_i, _k, _j], _LEVI_CIVITA[_i, _j, _k] = 1.0, -1.0


def _skew(p: np.ndarray) -> np.ndarray:
    """[p]x (3, 3), with [p]x y = p x y."""
    return _LEVI_CIVITA @ p


def _rotate_blocks(R_wc: np.ndarray | None, D: np.ndarray) -> np.ndarray:
    """blockdiag(R_cw, R_cw) @ D for D (6, n); D itself when R_wc is None (world axes)."""
    if R_wc is None:
        return D
    n = D.shape[1]
    return (R_wc.T @ D.reshape(2, 3, n)).reshape(6, n)


def _shifted_difference(J_a: np.ndarray, J_b: np.ndarray, p_w: np.ndarray) -> np.ndarray:
    """D = J_b - J_a with a's angular velocity moved to b's origin: D_v += [p_w]x J^w_a."""
    D = J_b - J_a
    D[:3] += _skew(p_w) @ J_a[3:]
    return D


def relative_jacobian_from_frames(J_a: np.ndarray, J_b: np.ndarray, T_wa: Any, T_wb: Any, *,
                                  expressed_in: Any = "a") -> np.ndarray:
    """J_ab (6, n): ``[d/dt p_ab; w_ab] = J_ab v``, from frame Jacobians J_a, J_b (6, n).

    Args:
        J_a, J_b: LOCAL_WORLD_ALIGNED Jacobians of frames a and b, (6, n).
        T_wa, T_wb: placements of a and b in the world.
        expressed_in: "a" (default), "b" (the body Jacobian of T_ab), "world", or a rotation
            R_wc (3, 3) giving the axes of any frame c.
    """
    p_w = _translation(T_wb, "T_wb") - _translation(T_wa, "T_wa")
    return _rotate_blocks(_axes(expressed_in, T_wa, T_wb), _shifted_difference(J_a, J_b, p_w))


def relative_jacobian_time_variation_from_frames(
    J_a: np.ndarray, J_b: np.ndarray, dJ_a: np.ndarray, dJ_b: np.ndarray, T_wa: Any, T_wb: Any, v: np.ndarray,
    *, expressed_in: Any = "a", omega_c: np.ndarray | None = None,
) -> np.ndarray:
    """d/dt J_ab (6, n) along v (n,), from frame Jacobians and their time variations.

    The relative acceleration is ``J_ab a + dJ_ab v``. With D as in the module docstring,
    ``d/dt J_ab_in_c = blockdiag(R_cw, R_cw) (dD/dt - [w_c]x D)`` (per block), w_c being c's
    angular velocity in world axes: J^w_a v for c = a, J^w_b v for c = b, 0 for the world,
    `omega_c` (3,) when `expressed_in` is a rotation (default 0: c fixed in the world).
    """
    p_w = _translation(T_wb, "T_wb") - _translation(T_wa, "T_wa")
    D = _shifted_difference(J_a, J_b, p_w)
    p_w_dot = (J_b[:3] - J_a[:3]) @ v
    dD = dJ_b - dJ_a
    dD[:3] += _skew(p_w_dot) @ J_a[3:] + _skew(p_w) @ dJ_a[3:]
    R_wc = _axes(expressed_in, T_wa, T_wb)
    if R_wc is None:
        return dD
    if isinstance(expressed_in, str):
        w_c = (J_a if expressed_in == "a" else J_b)[3:] @ v
    else:
        w_c = np.zeros(3) if omega_c is None else np.asarray(omega_c, dtype=float)
    W_c = _skew(w_c)
    dD[:3] -= W_c @ D[:3]
    dD[3:] -= W_c @ D[3:]
    return _rotate_blocks(R_wc, dD)

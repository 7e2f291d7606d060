"""Relative placement ``T_ab`` and relative Jacobian ``J_ab`` from two world-aligned frame Jacobians.

With ``p_ab = R_aw (p_wb - p_wa)`` and ``d/dt R_aw = -R_aw [w_a]x`` (w_a: a's angular velocity in
world coordinates), writing ``d = p_wb - p_wa``:

    R_wa d/dt p_ab = (v_b - v_a) + d x w_a        R_wa w_ab = w_b - w_a

so, with J^v, J^w the linear and angular rows of the world-aligned Jacobians of a and b:

    J_ab expressed in world = [J^v_b - J^v_a + [d]x J^w_a ;  J^w_b - J^w_a]

and J_ab expressed in a frame c is ``blockdiag(R_cw, R_cw) @`` that (c = a gives J_ab itself,
c = b the body Jacobian of T_ab). This is the relative-Jacobian reference's formula
``J^v_ab = [p_ab]x R_aw J^w_a + R_aw (J^v_b - J^v_a)``, since ``[p_ab]x R_aw = R_aw [d]x``.

Inputs are batch-last, as in :mod:`reljac.reference.kinematics`: poses (4, 3, N) (axes and origin
as columns), Jacobians (nv, 6, N).
"""

from __future__ import annotations

import numpy as np

from reljac.reference.jacobians import to_batch_first
from reljac.reference.lie import add_cross


def relative_placement(cols_a: np.ndarray, cols_b: np.ndarray) -> np.ndarray:
    """``T_ab = T_wa^-1 T_wb`` as columns (4, 3, N): ``R_ab[i, k] = x_i(a) . x_k(b)`` and
    ``p_ab[i] = x_i(a) . (p_wb - p_wa)``, where x_i are the frames' axes in world coordinates."""
    targets = np.concatenate((cols_b[:3], (cols_b[3] - cols_a[3])[None]))
    return np.einsum("imn,kmn->kin", cols_a[:3], targets)


def relative_jacobian_in_world(
    p_wa: np.ndarray, p_wb: np.ndarray, jacobian_a: np.ndarray, jacobian_b: np.ndarray
) -> np.ndarray:
    """J_ab with both blocks in world coordinates, ``blockdiag(R_wa, R_wa) @ J_ab``: (nv, 6, N).

    Args:
        p_wa: origin of a in world coordinates, (3, N).
        p_wb: origin of b in world coordinates, (3, N).
        jacobian_a: world-aligned Jacobian of a, (nv, 6, N).
        jacobian_b: world-aligned Jacobian of b, (nv, 6, N).
    """
    lever = p_wb - p_wa  # d, (3, N)
    out = jacobian_b - jacobian_a
    add_cross(out[:, :3].swapaxes(0, 1), lever[:, None], jacobian_a[:, 3:].swapaxes(0, 1))  # += d x J^w_a
    return out


def express_in(cols_c: np.ndarray, jacobian: np.ndarray) -> np.ndarray:
    """``blockdiag(R_cw, R_cw) @ J`` for J (nv, 6, N) in world coordinates and frame c's pose
    (4, 3, N), returned batch-first, (N, 6, nv): each 3-vector is projected on c's axes."""
    rotation_cw = np.ascontiguousarray(cols_c[:3].transpose(2, 0, 1))  # rows of R_cw = c's axes
    out = to_batch_first(jacobian)
    block = np.empty((out.shape[0], 3, out.shape[2]))
    for rows in (slice(0, 3), slice(3, 6)):
        np.matmul(rotation_cw, out[:, rows], out=block)
        out[:, rows] = block
    return out

"""Frame Jacobian by the geometric cross-product construction (world-aligned).

For a frame e and every joint j that moves it, with the joint's unit axis z_j and origin p_j in
world coordinates (the joint frame is its child body's frame, whose origin lies on the axis):

- revolute / continuous: column ``[z_j x (p_e - p_j); z_j]``;
- prismatic: column ``[z_j; 0]``;
- free joint with child frame axes R_wj = [x_j y_j z_j]: the twist [v; w] is expressed in the child
  frame, so its 6 columns are ``[R_wj e_k; 0]`` (linear) and ``[R_wj e_k x (p_e - p_j); R_wj e_k]``
  (angular), k = 0, 1, 2;
- planar joint (velocity ``[vx, vy, w]``, the twist ``[vx, vy, 0; 0, 0, w]`` of its child frame in
  that frame, axes R_wj = [x_j y_j z_j]): columns ``[x_j; 0]``, ``[y_j; 0]`` and
  ``[z_j x (p_e - p_j); z_j]``;
- a mimic joint adds ``multiplier *`` its column into its leader's column.

The result is what Pinocchio calls LOCAL_WORLD_ALIGNED: rows ``[d/dt p_we; w_we]``, the velocity of
e's origin and e's angular velocity, both in world coordinates. It is built batch-last, shape
(nv, 6, N) (column, row, configuration); :func:`to_batch_first` gives the public (N, 6, nv).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reljac.reference.kinematics import ForwardKinematics
from reljac.reference.lie import add_cross


def to_batch_first(jacobian: np.ndarray) -> np.ndarray:
    """(nv, 6, N) -> (N, 6, nv), always a new C-contiguous array (never a view of the input)."""
    return jacobian.transpose(2, 1, 0).copy()


def to_batch_last(jacobian: np.ndarray) -> np.ndarray:
    """(N, 6, nv) -> (nv, 6, N) (a view)."""
    return jacobian.transpose(2, 1, 0)


def cross_product_jacobian(kinematics: ForwardKinematics, body: int) -> np.ndarray:
    """World-aligned Jacobian of `body`'s frame by the cross-product construction, (nv, 6, N)."""
    chain = kinematics.plan.moving_chain(body)
    return _columns(kinematics, [(joint, 1.0) for joint in chain], kinematics.frame(body)[3])


def relative_cross_product_jacobian(kinematics: ForwardKinematics, body_a: int, body_b: int) -> np.ndarray:
    """``blockdiag(R_wa, R_wa) @ J_ab`` (world axes) by the cross-product construction, (nv, 6, N).

    A joint that moves both a and b moves them rigidly together and adds nothing; a joint that
    moves b only adds its column ``[z_j x (p_b - p_j); z_j]``; one that moves a only adds minus
    that same column (a's rotation about p_j, seen from b's origin). This equals
    ``J_b - J_a + (p_b - p_a) x J^w_a`` column by column with half the work.
    """
    chain_a = kinematics.plan.moving_chain(body_a)
    chain_b = kinematics.plan.moving_chain(body_b)
    common = set(chain_a) & set(chain_b)
    signed = [(j, 1.0) for j in chain_b if j not in common] + [(j, -1.0) for j in chain_a if j not in common]
    return _columns(kinematics, signed, kinematics.frame(body_b)[3])


def _columns(kinematics: ForwardKinematics, signed_joints: Any, p_e: np.ndarray) -> np.ndarray:
    """Sum of sign * (cross-product column of each joint, taken at point p_e (3, N)), (nv, 6, N)."""
    tree = kinematics.tree
    jacobian = np.zeros((tree.nv, 6, kinematics.count))
    for joint_body, sign in signed_joints:
        spec = tree.bodies[joint_body]
        cols = kinematics.aligned(joint_body)  # axes and origin of the joint frame, z = joint axis
        column = spec.v_index
        if spec.joint_type == "floating":
            lever = p_e - cols[3]  # p_e - p_j
            for k in range(3):
                axis = cols[k] if sign == 1.0 else -cols[k]
                jacobian[column + k, :3] += axis
                add_cross(jacobian[column + 3 + k, :3], axis, lever)
                jacobian[column + 3 + k, 3:] += axis
            continue
        if spec.joint_type == "planar":
            for k in range(2):
                jacobian[column + k, :3] += cols[k] if sign == 1.0 else -cols[k]
            z = cols[2] if sign == 1.0 else -cols[2]
            add_cross(jacobian[column + 2, :3], z, p_e - cols[3])
            jacobian[column + 2, 3:] += z
            continue
        factor = sign * spec.multiplier
        z = cols[2] if factor == 1.0 else factor * cols[2]
        if spec.joint_type == "prismatic":
            jacobian[column, :3] += z
        else:
            add_cross(jacobian[column, :3], z, p_e - cols[3])
            jacobian[column, 3:] += z
    return jacobian

"""Frame Jacobian by the product of exponentials and adjoints (independent of :mod:`kinematics`).

Along the chain from the root to a frame e, the pose is a product of joint origins and joint
exponentials, ``T_we = ... O_j exp(S_j theta_j) ...``, with S_j the joint's screw in its own (child)
frame: ``[0; a]`` for a revolute joint of unit axis a, ``[a; 0]`` for a prismatic one, the
6 x 6 identity for a free joint (its velocity is already a twist of its child frame) and its
columns x, y and wz for a planar joint. Differentiating
gives the body Jacobian, whose column for joint j is ``Ad(T_ej) S_j`` (times the mimic multiplier).

This module walks the chain from e back to the root, accumulating ``X = T_e,k`` from the joints'
local transforms only (``T_e,parent = T_e,k @ inv(O_k exp(S_k theta_k))``). At the root X is
``T_ew``, so the world pose of e comes out of the same pass and the body Jacobian can be rotated
to world-aligned without the forward kinematics of :mod:`reljac.reference.kinematics`.
"""

from __future__ import annotations

import numpy as np

from reljac.reference.lie import adjoint, exp_se3, inverse_transform, make_transform, quaternion_to_rotation
from reljac.reference.model import Body, KinematicTree


def joint_screw(body: Body) -> np.ndarray:
    """Screw axes of the body's joint in its child frame, shape (6, k): k = 1, 6 for a free joint
    or 3 for a planar one (x, y and z of the twist ``[vx, vy, 0; 0, 0, w]``)."""
    if body.joint_type == "floating":
        return np.eye(6)
    if body.joint_type == "planar":
        return np.eye(6)[:, [0, 1, 5]]
    if body.joint_type == "prismatic":
        return np.concatenate((body.axis, np.zeros(3)))[:, None]
    return np.concatenate((np.zeros(3), body.axis))[:, None]


def joint_transform(body: Body, q: np.ndarray) -> np.ndarray:
    """``T_parent,body(q) = origin @ exp(S theta)`` (free joint: ``origin @ T(q7)``), shape (N, 4, 4)."""
    if body.joint_type == "fixed":
        return np.broadcast_to(body.origin, (q.shape[0], 4, 4))
    if body.joint_type == "floating":
        q7 = q[:, body.q_index : body.q_index + 7]
        return body.origin @ make_transform(quaternion_to_rotation(q7[:, 3:]), q7[:, :3])
    if body.joint_type == "planar":  # Tx(x) Ty(y) Rz(theta)
        x, y, theta = (q[:, body.q_index + k] for k in range(3))
        motion = exp_se3(theta[:, None] * joint_screw(body)[:, 2])
        motion[:, 0, 3], motion[:, 1, 3] = x, y
        return body.origin @ motion
    theta = body.multiplier * q[:, body.q_index] + body.offset
    return body.origin @ exp_se3(theta[:, None] * joint_screw(body)[:, 0])


def poe_body_jacobian(tree: KinematicTree, q: np.ndarray, body: int) -> tuple[np.ndarray, np.ndarray]:
    """Body Jacobian of `body`'s frame e and its world pose, by the product of exponentials.

    Args:
        q: checked configurations, shape (N, nq).

    Returns:
        ``(J, T_we)``: J of shape (N, 6, nv) with rows ``[v; w]`` = the twist of e expressed in e
        (Pinocchio's LOCAL), and T_we of shape (N, 4, 4).
    """
    count = q.shape[0]
    jacobian = np.zeros((count, 6, tree.nv))
    x = np.broadcast_to(np.eye(4), (count, 4, 4))  # T_e,k for the current body k, starting at k = e
    current = body
    while current > 0:
        spec = tree.bodies[current]
        if spec.moves:
            screw = joint_screw(spec)
            columns = adjoint(x) @ screw  # (N, 6, k)
            width = screw.shape[1]
            jacobian[:, :, spec.v_index : spec.v_index + width] += spec.multiplier * columns
        x = x @ inverse_transform(joint_transform(spec, q))  # T_e,parent
        current = spec.parent
    return jacobian, inverse_transform(x)


def poe_world_aligned_jacobian(tree: KinematicTree, q: np.ndarray, body: int) -> np.ndarray:
    """World-aligned Jacobian (rows ``[d/dt p_we; w_we]`` in world coordinates), (N, 6, nv):
    the PoE body Jacobian with both 3-row blocks rotated by R_we."""
    body_jacobian, pose = poe_body_jacobian(tree, q, body)
    rotation = pose[:, :3, :3]
    return np.concatenate((rotation @ body_jacobian[:, :3], rotation @ body_jacobian[:, 3:]), axis=1)

"""Batched forward kinematics: the world pose of any body, computed only where asked.

Layout. Inside the package a batch of N poses ``T_wf`` is stored batch-last as its four columns:
``cols[0..2]`` are the frame's x, y, z axes and ``cols[3]`` its origin, in world coordinates, each
(3, N); shape (4, 3, N). Every scalar is then a contiguous N-vector, so the few operations per
joint vectorize well. :func:`to_matrices` converts to (N, 4, 4) at the public boundary.

Reduced tree. A moving body j is placed relative to its nearest moving ancestor b (or the universe)
by ``T_bj(q) = C_j @ M_j(q)``: the constant ``C_j`` folds the fixed joints in between with j's joint
origin and ``M_j`` is the joint motion. Fixed joints cost nothing at run time.

Axis-aligned frames. For each 1-DoF joint a constant rotation Q_j maps e_z onto the unit axis a_j.
Since a motion about (or along) a_j is ``Q_j Rz(t) Q_j^T`` (or ``Q_j Tz(d) Q_j^T``), the frame
``j' = j Q_j``, whose z axis is the joint axis, moves by

    T_w,j' = T_w,b' @ D_j @ Rz(t)        with the constant  D_j = Q_b^T C_j Q_j,

one (4, 4) x (4, 3N) product for D_j then six vector operations for Rz(t) (one for Tz(d)). The axis
z_j and origin p_j that the cross-product Jacobian needs are simply columns 2 and 3 of ``T_w,j'``. A
free joint has Q = I and right-multiplies by its pose T(q); a planar joint (its normal is z) has
Q = I and right-multiplies by ``Tx(x) Ty(y) Rz(theta)``. Any body f is then
``T_w,f = T_w,anchor' @ E_f`` with the constant ``E_f = Q_anchor^T T_anchor,f``.
"""

from __future__ import annotations

import numpy as np

from reljac.reference.lie import quaternion_to_rotation
from reljac.reference.model import KinematicTree


def axis_aligned_rotation(axis: np.ndarray) -> np.ndarray:
    """A rotation Q (3, 3) with ``Q @ [0, 0, 1] == axis`` for a unit `axis` (3,); identity for z."""
    if np.array_equal(axis, [0.0, 0.0, 1.0]):
        return np.eye(3)
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, axis)
    x /= np.linalg.norm(x)
    return np.column_stack((x, np.cross(axis, x), axis))


def _rotation4(rotation: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = rotation
    return out


def to_matrices(cols: np.ndarray) -> np.ndarray:
    """Poses from batch-last columns (4, 3, N) to homogeneous matrices (N, 4, 4)."""
    out = np.zeros((cols.shape[2], 4, 4))
    out[:, :3, :] = cols.transpose(2, 1, 0)
    out[:, 3, 3] = 1.0
    return out


def right_multiply(cols: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """``T @ E`` for poses T as columns (4, 3, N) and a constant transform E (4, 4): (4, 3, N)."""
    count = cols.shape[2]
    return (transform.T @ cols.reshape(4, 3 * count)).reshape(4, 3, count)


class ForwardPlan:
    """Constants of the reduced tree and the axis-aligned frames (see the module docstring).

    Attributes:
        anchor: for each body, its nearest moving ancestor-or-self (0 = universe).
        base: for each moving body, its nearest moving strict ancestor (0 = universe).
        step: for each moving body, D_j (4, 4); None for fixed bodies.
        to_frame: for each body, E_f = T_anchor',f (4, 4), or None when it is the identity.
    """

    def __init__(self, tree: KinematicTree) -> None:
        count = len(tree.bodies)
        self.anchor = [0] * count
        self.base = [0] * count
        self.step: list[np.ndarray | None] = [None] * count
        self.to_frame: list[np.ndarray | None] = [None] * count
        offset = [np.eye(4)] * count  # T_anchor,body (fixed bodies), identity for moving ones
        aligned = [np.eye(4)] * count  # Q_j as a (4, 4) transform (identity for fixed/free bodies)
        for body in tree.bodies[1:]:
            i, parent = body.index, body.parent
            if body.moves:
                self.anchor[i] = i
                self.base[i] = self.anchor[parent]
                if body.joint_type not in ("floating", "planar"):
                    aligned[i] = _rotation4(axis_aligned_rotation(body.axis))
                origin = offset[parent] @ body.origin  # C_j
                self.step[i] = aligned[self.base[i]].T @ origin @ aligned[i]
                frame = aligned[i].T  # T_j',j
            else:
                self.anchor[i] = self.anchor[parent]
                offset[i] = offset[parent] @ body.origin
                frame = aligned[self.anchor[i]].T @ offset[i]
            self.to_frame[i] = None if np.allclose(frame, np.eye(4), rtol=0.0, atol=1e-15) else frame

    def moving_chain(self, body: int) -> list[int]:
        """Moving bodies whose joints move `body`: itself if moving, then its moving ancestors."""
        chain = []
        current = self.anchor[body]
        while current > 0:
            chain.append(current)
            current = self.base[current]
        return chain


class ForwardKinematics:
    """World poses of a batch of configurations, computed on demand and cached (batch-last layout).

    Args:
        q: checked configurations, shape (N, nq).
    """

    def __init__(self, tree: KinematicTree, plan: ForwardPlan, q: np.ndarray) -> None:
        self.tree = tree
        self.plan = plan
        self.count = q.shape[0]
        self.q_t = np.ascontiguousarray(q.T)  # (nq, N): each joint's values contiguous
        identity = np.broadcast_to(np.eye(4)[:, :3, None], (4, 3, self.count))
        self._aligned: dict[int, np.ndarray] = {0: identity}
        self._frames: dict[int, np.ndarray] = {}

    def aligned(self, body: int) -> np.ndarray:
        """``T_w,j'`` of a moving body j (its axis-aligned frame) or the universe: (4, 3, N), read-only."""
        pending = []
        current = body
        while current not in self._aligned:
            pending.append(current)
            current = self.plan.base[current]
        for current in reversed(pending):
            self._aligned[current] = self._move(current)
        return self._aligned[body]

    def frame(self, body: int) -> np.ndarray:
        """``T_w,body``, the body's (URDF) frame: (4, 3, N), read-only."""
        if body not in self._frames:
            cols = self.aligned(self.plan.anchor[body])
            to_frame = self.plan.to_frame[body]
            self._frames[body] = cols if to_frame is None else right_multiply(cols, to_frame)
        return self._frames[body]

    def _move(self, body: int) -> np.ndarray:
        """``T_w,j' = T_w,b' @ D_j @ M(q)`` for a moving body j."""
        spec = self.tree.bodies[body]
        base = self.plan.base[body]
        step = self.plan.step[body]
        assert step is not None  # every moving body has its fixed step from its base
        if base == 0:
            before = np.broadcast_to(step[:3, :].T[:, :, None], (4, 3, self.count))
        else:
            before = right_multiply(self._aligned[base], step)
        out = np.empty((4, 3, self.count))
        if spec.joint_type == "floating":
            q7 = self.q_t[spec.q_index : spec.q_index + 7]
            rotation = quaternion_to_rotation(q7[3:].T).transpose(1, 2, 0)  # (3, 3, N)
            for k in range(3):
                out[k] = before[0] * rotation[0, k] + before[1] * rotation[1, k] + before[2] * rotation[2, k]
            out[3] = before[3] + before[0] * q7[0] + before[1] * q7[1] + before[2] * q7[2]
            return out
        if spec.joint_type == "planar":  # T @ Tx(x) Ty(y) Rz(theta)
            x, y, theta = self.q_t[spec.q_index : spec.q_index + 3]
            cos, sin = np.cos(theta), np.sin(theta)
            out[0] = before[0] * cos + before[1] * sin
            out[1] = before[1] * cos - before[0] * sin
            out[2] = before[2]
            out[3] = before[3] + before[0] * x + before[1] * y
            return out
        position = self.q_t[spec.q_index]
        if spec.multiplier != 1.0 or spec.offset != 0.0:
            position = spec.multiplier * position + spec.offset
        out[2] = before[2]
        if spec.joint_type == "prismatic":  # T @ Tz(d): the origin slides along the z column
            out[0], out[1] = before[0], before[1]
            np.multiply(before[2], position, out=out[3])
            out[3] += before[3]
            return out
        cos, sin = np.cos(position), np.sin(position)  # T @ Rz(t) mixes the x and y columns
        np.multiply(before[0], cos, out=out[0])
        out[0] += before[1] * sin
        np.multiply(before[1], cos, out=out[1])
        out[1] -= before[0] * sin
        out[3] = before[3]
        return out

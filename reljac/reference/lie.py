"""Rotations, rigid transforms and twists in plain numpy, batched over leading axes.

Conventions (the same as the rest of reljac):

- A transform ``T_ab`` is a homogeneous matrix ``[[R_ab, p_ab], [0, 1]]`` of shape ``(..., 4, 4)``:
  the pose of frame b in frame a, so that subscripts cancel, ``T_ac = T_ab @ T_bc``.
- A twist is ``[v; w]`` (linear part first), shape ``(..., 6)``.
- A quaternion is ``[x, y, z, w]`` (scalar last, like Pinocchio's configuration vectors).

Every function accepts any number of leading batch axes and never loops over them in Python.
"""

from __future__ import annotations

import numpy as np

# Below this angle [rad], the exponential maps switch to their Taylor series.
_SMALL_ANGLE = 1e-6


def skew(v: np.ndarray) -> np.ndarray:
    """Cross-product matrix ``[v]x`` with ``[v]x @ u == cross(v, u)``. Shape (..., 3) -> (..., 3, 3)."""
    v = np.asarray(v, dtype=float)
    out = np.zeros((*v.shape[:-1], 3, 3))
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    out[..., 0, 1], out[..., 0, 2] = -z, y
    out[..., 1, 0], out[..., 1, 2] = z, -x
    out[..., 2, 0], out[..., 2, 1] = -y, x
    return out


def cross(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Cross product of 3-vectors stored along `axis` (broadcasting); faster than np.cross on batches."""
    a0, a1, a2 = np.moveaxis(a, axis, 0)
    b0, b1, b2 = np.moveaxis(b, axis, 0)
    return np.moveaxis(np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)), 0, axis)


def add_cross(out: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """``out += a x b`` in place, for 3-vectors along the FIRST axis: out, a, b of shape (3, ...)
    (broadcasting over the trailing axes). Used on batch-last arrays, whose rows are contiguous."""
    out[0] += a[1] * b[2]
    out[0] -= a[2] * b[1]
    out[1] += a[2] * b[0]
    out[1] -= a[0] * b[2]
    out[2] += a[0] * b[1]
    out[2] -= a[1] * b[0]


def rpy_to_rotation(rpy: np.ndarray) -> np.ndarray:
    """Rotation of URDF ``rpy`` angles [rad]: fixed-axis roll about x, then pitch about y, then yaw
    about z, i.e. ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``. Shape (..., 3) -> (..., 3, 3)."""
    rpy = np.asarray(rpy, dtype=float)
    axes = np.eye(3)
    r_x = exp_so3(rpy[..., 0, None] * axes[0])
    r_y = exp_so3(rpy[..., 1, None] * axes[1])
    r_z = exp_so3(rpy[..., 2, None] * axes[2])
    return r_z @ r_y @ r_x


def make_transform(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """Homogeneous transform from R (..., 3, 3) and p (..., 3). Shape (..., 4, 4)."""
    rotation = np.asarray(rotation, dtype=float)
    translation = np.asarray(translation, dtype=float)
    batch = np.broadcast_shapes(rotation.shape[:-2], translation.shape[:-1])
    out = np.zeros((*batch, 4, 4))
    out[..., :3, :3] = rotation
    out[..., :3, 3] = translation
    out[..., 3, 3] = 1.0
    return out


def inverse_transform(transform: np.ndarray) -> np.ndarray:
    """``T_ba`` from ``T_ab``: ``[[R^T, -R^T p], [0, 1]]``. Shape (..., 4, 4) -> (..., 4, 4)."""
    rotation_t = np.swapaxes(transform[..., :3, :3], -1, -2)
    translation = transform[..., :3, 3]
    return make_transform(rotation_t, -np.einsum("...ij,...j->...i", rotation_t, translation))


def _rodrigues_coefficients(angle: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sin(t)/t``, ``(1 - cos t)/t^2`` and ``(t - sin t)/t^3``, with series near t = 0."""
    small = angle < _SMALL_ANGLE
    safe = np.where(small, 1.0, angle)
    sq = angle * angle
    a = np.where(small, 1.0 - sq / 6.0, np.sin(safe) / safe)
    b = np.where(small, 0.5 - sq / 24.0, (1.0 - np.cos(safe)) / safe**2)
    c = np.where(small, 1.0 / 6.0 - sq / 120.0, (safe - np.sin(safe)) / safe**3)
    return a, b, c


def exp_so3(rotation_vector: np.ndarray) -> np.ndarray:
    """Rotation matrix ``exp([w]x)`` of a rotation vector w [rad]. Shape (..., 3) -> (..., 3, 3)."""
    w = np.asarray(rotation_vector, dtype=float)
    a, b, _ = _rodrigues_coefficients(np.linalg.norm(w, axis=-1))
    k = skew(w)
    return np.eye(3) + a[..., None, None] * k + b[..., None, None] * (k @ k)


def exp_se3(twist: np.ndarray) -> np.ndarray:
    """Transform ``exp(twist^)`` reached by following the constant twist ``[v; w]`` for unit time.

    ``T @ exp_se3(xi * dt)`` moves T by the body twist xi (expressed in T's own frame) for dt.
    Shape (..., 6) -> (..., 4, 4).
    """
    twist = np.asarray(twist, dtype=float)
    v, w = twist[..., :3], twist[..., 3:]
    a, b, c = _rodrigues_coefficients(np.linalg.norm(w, axis=-1))
    k = skew(w)
    k2 = k @ k
    eye = np.eye(3)
    rotation = eye + a[..., None, None] * k + b[..., None, None] * k2
    left_jacobian = eye + b[..., None, None] * k + c[..., None, None] * k2
    return make_transform(rotation, np.einsum("...ij,...j->...i", left_jacobian, v))


def adjoint(transform: np.ndarray) -> np.ndarray:
    """Twist transform ``Ad_T_ab = [[R, [p]x R], [0, R]]`` mapping a twist [v; w] expressed in b
    (at b's origin) to the same motion expressed in a (at a's origin). Shape (..., 4, 4) -> (..., 6, 6)."""
    rotation = transform[..., :3, :3]
    out = np.zeros((*transform.shape[:-2], 6, 6))
    out[..., :3, :3] = rotation
    out[..., 3:, 3:] = rotation
    out[..., :3, 3:] = skew(transform[..., :3, 3]) @ rotation
    return out


def quaternion_to_rotation(quaternion: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion [x, y, z, w]. Shape (..., 4) -> (..., 3, 3)."""
    quaternion = np.asarray(quaternion, dtype=float)
    x, y, z, w = (quaternion[..., i] for i in range(4))
    out = np.empty((*quaternion.shape[:-1], 3, 3))
    out[..., 0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[..., 0, 1] = 2.0 * (x * y - z * w)
    out[..., 0, 2] = 2.0 * (x * z + y * w)
    out[..., 1, 0] = 2.0 * (x * y + z * w)
    out[..., 1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[..., 1, 2] = 2.0 * (y * z - x * w)
    out[..., 2, 0] = 2.0 * (x * z - y * w)
    out[..., 2, 1] = 2.0 * (y * z + x * w)
    out[..., 2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return out


def quaternion_multiply(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Hamilton product ``q1 * q2`` (rotation q2 then q1, as matrices R1 @ R2). Shape (..., 4)."""
    v1, w1 = q1[..., :3], q1[..., 3:]
    v2, w2 = q2[..., :3], q2[..., 3:]
    vector = w1 * v2 + w2 * v1 + cross(v1, v2)
    scalar = w1 * w2 - np.sum(v1 * v2, axis=-1, keepdims=True)
    return np.concatenate((vector, scalar), axis=-1)


def quaternion_exp(rotation_vector: np.ndarray) -> np.ndarray:
    """Unit quaternion [x, y, z, w] of the rotation ``exp_so3(w)``. Shape (..., 3) -> (..., 4)."""
    w = np.asarray(rotation_vector, dtype=float)
    angle = np.linalg.norm(w, axis=-1, keepdims=True)
    small = angle < _SMALL_ANGLE
    safe = np.where(small, 1.0, angle)
    # sin(angle / 2) / angle, with its series 1/2 - angle^2 / 48 near zero.
    half_sinc = np.where(small, 0.5 - angle**2 / 48.0, np.sin(safe / 2.0) / safe)
    return np.concatenate((half_sinc * w, np.cos(angle / 2.0)), axis=-1)

"""Poses and rotations given by the user -> ``pin.SE3``, rotation matrices and unit quaternions.

The Pinocchio side of :mod:`reljac.validation` (which is numpy only): targets of tasks and costs,
obstacle placements, capability-map queries and viewer targets come through here. Each returns a
new object (never the caller's), refuses non-finite entries and matrices that are not rotations
(within :data:`~reljac.validation.ROTATION_TOLERANCE`), and raises a TaskError naming the value
unless the caller names another class (the rule is in :mod:`reljac.validation`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from .exceptions import TaskError
from .validation import MAX_COORDINATE, ROTATION_TOLERANCE, ErrorClass, check_rotation, real_array, short_repr

__all__ = ["as_rotation", "as_se3", "as_unit_quaternion"]

_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])  # a homogeneous matrix's, within np.allclose's default tolerances:
_LAST_ROW_TOLERANCE = 1e-8 + 1e-5 * np.abs(_LAST_ROW)  # atol + rtol |expected|


def homogeneous(target: pin.SE3 | np.ndarray) -> np.ndarray:
    """(4, 4) of a pose (pin.SE3), a position (3,) [m] or a rotation (3, 3): what is not given is
    the identity's (a position's rotation, a rotation's translation)."""
    T = np.eye(4)
    if isinstance(target, pin.SE3):
        T[:3, :3], T[:3, 3] = target.rotation, target.translation
    elif np.shape(target) == (3,):
        T[:3, 3] = target
    else:
        T[:3, :3] = target
    return T


def as_se3(T: Any, what: str, *, error: ErrorClass = TaskError) -> pin.SE3:
    """A pin.SE3 (a copy) from a pin.SE3 or a (4, 4) homogeneous matrix."""
    if isinstance(T, pin.SE3):
        M = T.homogeneous
    else:
        M = real_array(T)
        if M is None:
            raise error(f"{what} must be a pin.SE3 or a (4, 4) array of real numbers, got {short_repr(T)}")
        if M.shape != (4, 4):
            raise error(f"{what} has shape {M.shape}, expected (4, 4) (or give a pin.SE3)")
    if not np.isfinite(M).all():
        raise error(f"{what} has non-finite entries")
    if not (np.abs(M[3] - _LAST_ROW) <= _LAST_ROW_TOLERANCE).all():  # (np.allclose's test, in a fifth of its time)
        raise error(f"{what}'s last row is {M[3].tolist()}, expected [0, 0, 0, 1]")
    check_rotation(M[:3, :3], f"the rotation of {what}", error=error)
    if np.abs(M[:3, 3]).max() > MAX_COORDINATE:
        raise error(f"the translation of {what} has an entry of {np.abs(M[:3, 3]).max():.3g} m: reljac computes "
                    f"with |entries| <= {MAX_COORDINATE:g} (so no square of them overflows)")
    return pin.SE3(np.array(M[:3, :3]), np.array(M[:3, 3]))


def as_rotation(R: Any, what: str, *, error: ErrorClass = TaskError) -> np.ndarray:
    """A rotation matrix (3, 3) (a copy) from a (3, 3) array or a pin.SE3 (its rotation)."""
    M = real_array(R.rotation if isinstance(R, pin.SE3) else R)
    if M is None:
        raise error(f"{what} must be a (3, 3) rotation, got {short_repr(R)}")
    if M.shape != (3, 3):
        raise error(f"{what} must be a (3, 3) rotation, got {M.shape}")
    check_rotation(M, what, error=error)
    return M


def as_unit_quaternion(target: Any, what: str = "target orientation", *, error: ErrorClass = TaskError) -> np.ndarray:
    """Unit quaternion (x, y, z, w) from a rotation (3, 3), pin.SE3, pin.Quaternion or 4 numbers.

    A quaternion whose norm differs from 1 by more than 1e-6 is rejected, never normalized: it
    usually means a wrong order or a bug upstream.
    """
    if isinstance(target, pin.SE3):
        target = target.rotation
    if isinstance(target, pin.Quaternion):
        target = target.coeffs()
    arr = real_array(target)
    if arr is None:
        raise error(f"{what} must be a (3, 3) rotation, a pin.SE3, a pin.Quaternion or "
                    f"4 numbers (x, y, z, w), got {short_repr(target)}")
    if not np.isfinite(arr).all():
        raise error(f"{what} has non-finite entries: {arr.tolist()}")
    if arr.shape == (4,):
        norm = float(np.linalg.norm(arr))
        if abs(norm - 1.0) > ROTATION_TOLERANCE:
            raise error(
                f"{what}: quaternion {arr.tolist()} has norm {norm:.6g}, not 1. reljac rejects "
                "non-unit quaternions instead of normalizing them; check the order (x, y, z, w) "
                "and pass q / np.linalg.norm(q) if that is what you mean"
            )
        return arr
    if arr.shape == (3, 3):
        check_rotation(arr, what, error=error)
        return pin.Quaternion(arr).coeffs().copy()
    raise error(f"{what} must be a (3, 3) rotation or 4 numbers (x, y, z, w), got shape {arr.shape}")

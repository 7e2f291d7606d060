"""Checks of user-given vectors, rotations and poses, shared by tasks, costs, constraints and views.

Each returns a clean float copy or raises :class:`~reljac.exceptions.TaskError` naming the value.
"""

from __future__ import annotations

import numbers

import numpy as np
import pinocchio as pin

from .exceptions import ConfigurationError, TaskError

ROTATION_TOLERANCE = 1e-6  # max |R^T R - I| entry accepted as a rotation


def is_real_number(x) -> bool:
    """A real number that is not a bool (numbers.Real: int, float, numpy integers and floats)."""
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def real_array(x, *, copy: bool = True) -> np.ndarray | None:
    """x as a float64 array when every entry is a real number (not a bool, text or complex
    number; numpy would read True as 1.0, '0.5' as 0.5 and drop imaginary parts), else None."""
    if type(x) is np.ndarray and x.dtype.kind in "fiu":
        return np.array(x, dtype=float) if copy else np.asarray(x, dtype=float)
    if isinstance(x, (str, bytes)) or (isinstance(x, (list, tuple)) and not _all_real(x)):
        return None
    try:
        arr = np.asarray(x)
        if arr.dtype.kind == "O":
            if not all(is_real_number(e) for e in arr.flat):
                return None
        elif arr.dtype.kind not in "fiu":
            return None
        return np.array(arr, dtype=float) if copy else np.asarray(arr, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return None


def _all_real(items: list | tuple) -> bool:
    """Every leaf of nested lists / tuples / arrays is a real number (iterative, any depth)."""
    stack = [items]
    while stack:
        for e in stack.pop():
            if isinstance(e, (list, tuple)):
                stack.append(e)
            elif isinstance(e, np.ndarray):
                if e.dtype.kind not in "fiu" and not (e.dtype.kind == "O" and all(map(is_real_number, e.flat))):
                    return False
            elif not is_real_number(e):
                return False
    return True


def as_vector(x, size: int, what: str) -> np.ndarray:
    """x as a float array of shape (size,) with finite real entries."""
    arr = real_array(x)
    if arr is None:
        raise TaskError(f"{what} must be {size} finite real numbers, got {_short(x)}")
    arr = arr.reshape(-1)
    if arr.shape != (size,) or not np.isfinite(arr).all():
        raise TaskError(f"{what} must be {size} finite numbers, got {arr.size} entries: {arr.tolist()}")
    return arr


def check_rotation(R: np.ndarray, what: str) -> None:
    """Raise unless R (3, 3) is finite, orthonormal and right-handed."""
    if not np.isfinite(R).all():
        raise TaskError(f"{what} has a non-finite rotation")
    if np.abs(R.T @ R - np.eye(3)).max() > ROTATION_TOLERANCE or np.linalg.det(R) < 0:
        raise TaskError(f"{what}: its rotation is not a rotation matrix (R^T R != I or det < 0)")


def as_se3(T, what: str) -> pin.SE3:
    """A pin.SE3 (a copy) from a pin.SE3 or a (4, 4) homogeneous matrix."""
    if isinstance(T, pin.SE3):
        M = T.homogeneous
    else:
        M = real_array(T)
        if M is None:
            raise TaskError(f"{what} must be a pin.SE3 or a (4, 4) array of real numbers, got {_short(T)}")
        if M.shape != (4, 4):
            raise TaskError(f"{what} has shape {M.shape}, expected (4, 4) (or give a pin.SE3)")
    if not np.isfinite(M).all():
        raise TaskError(f"{what} has non-finite entries")
    if not np.allclose(M[3], [0.0, 0.0, 0.0, 1.0]):
        raise TaskError(f"{what}'s last row is {M[3].tolist()}, expected [0, 0, 0, 1]")
    check_rotation(M[:3, :3], what)
    return pin.SE3(np.array(M[:3, :3]), np.array(M[:3, 3]))


def as_float(x, what: str, *, minimum: float | None = None, strict: bool = False,
             error: type[Exception] = TaskError) -> float:
    """x as a finite real number (not a bool), optionally > or >= `minimum`."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise error(f"{what} must be a real number, got {x!r}")
    value = float(x)
    if not np.isfinite(value):
        raise error(f"{what} must be finite, got {value}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        raise error(f"{what} must be {'>' if strict else '>='} {minimum}, got {value}")
    return value


def as_count(x, what: str, *, minimum: int = 0, error: type[Exception] = ConfigurationError) -> int:
    """x as an integer (not a bool, not a float) >= minimum."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise error(f"{what} must be an integer, got {x!r}")
    if int(x) < minimum:
        raise error(f"{what} must be >= {minimum}, got {int(x)}")
    return int(x)


def _short(x: object, limit: int = 80) -> str:
    text = " ".join(repr(x).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def as_rng(seed) -> np.random.Generator:
    """A numpy Generator from None, a Generator, or a non-negative integer seed."""
    if seed is None or isinstance(seed, np.random.Generator):
        return np.random.default_rng(seed)
    return np.random.default_rng(as_count(seed, "seed"))

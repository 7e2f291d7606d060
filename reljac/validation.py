"""User values -> clean arrays and numbers, and the one rule for which exception a mistake raises.

numpy only: the in-house reference (:mod:`reljac.reference`) uses it without loading Pinocchio;
poses and rotations given as ``pin.SE3`` are converted by :mod:`reljac.poses`. Every converter
returns a new float copy (never a view of the caller's array), refuses booleans, text and complex
numbers (numpy would read True as 1.0, "0.5" as 0.5 and drop imaginary parts) and non-finite
entries, and raises one line naming the value and what is valid.

Which exception a mistake raises
--------------------------------
The mistake is named by what the value belongs to; every class is a :class:`~reljac.ReljacError`
and a ``ValueError`` (:mod:`reljac.exceptions`). A converter here takes the class as ``error=``
from its caller, which picks it by this table:

| the value | exception |
| --- | --- |
| a frame or joint name (or id) the robot does not have | FrameNotFound, JointNotFound |
| a URDF or SRDF file, or its content | URDFError, SRDFError |
| a joint-space value, or a setting of a controller, a limit or a viewer | ConfigurationError |
| a task, cost, target or constraint, or a parameter of a solve or an analysis | TaskError |
| collision geometry, pairs, obstacles and distance bounds | CollisionError |
| a capability map's parameters or file | MapError |

Joint-space values are q, v, joint values, per-joint arrays (nq or nv entries: velocity limits,
constraint Jacobian columns) and the seeds of random configurations; settings are dt, limit gains,
margins, damping, backend and constraints, and a viewer's scale, sizes, overlay names and camera.
What is asked of the robot: a task's or cost's target, gain, weight or max_speed, a constraint's
points and normal, a pose or rotation given as a target, and a solve's or an analysis' tol,
iteration counts, samples and rows.

So ``tol`` is a TaskError for :func:`~reljac.ik.solve` and :func:`~reljac.ik.solve_nlp` alike,
and ``gain`` a TaskError on a task but a ConfigurationError on a limit (a limit belongs to the
controller). The defaults below follow the table for the values they are used for most.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .exceptions import ConfigurationError, ReljacError, TaskError

__all__ = [
    "ROTATION_TOLERANCE",
    "as_count",
    "as_float",
    "as_frame_ref",
    "as_matrix",
    "as_rng",
    "as_task_rows",
    "as_vector",
    "check_rotation",
    "is_real_number",
    "real_array",
    "short_repr",
]

#: Largest |entry| of q, v, targets and poses' translations [rad, m, rad/s, m/s]: products of three
#: such numbers stay finite (an error's square, a cost, a Jacobian row times a velocity).
MAX_COORDINATE = 1e100
ROTATION_TOLERANCE = 1e-6  # max |R^T R - I| entry accepted as a rotation; max |1 - |e|| of a unit quaternion

ErrorClass = type[ReljacError]
#: Rows of a 6-row Jacobian [linear; angular] by name, and the named parts of it.
ROW_NAMES = ("vx", "vy", "vz", "wx", "wy", "wz")
PARTS = {"position": (0, 1, 2), "orientation": (3, 4, 5), "full": (0, 1, 2, 3, 4, 5)}


def is_real_number(x: object) -> bool:
    """A real number that is not a bool (numbers.Real: int, float, numpy integers and floats)."""
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def dims(x: Any) -> int:
    """np.ndim(x), and 1 for what numpy cannot make an array of (nested lists of different
    lengths: a vector's checks then name it; np.ndim raised numpy's own ValueError)."""
    try:
        return int(np.ndim(x))
    except (ValueError, TypeError):
        return 1


def single_entry(x: Any) -> tuple[bool, Any]:
    """(True, the entry) for a scalar or a sequence of one entry (not nested deeper), else (False,
    None): what a task whose only bound is one number (a cone's half-angle, a ball's radius)
    reads from ``set_bounds(None, upper)``; the entry is checked by its caller."""
    if x is None or dims(x) > 1:
        return False, None
    entries = np.reshape(np.asarray(x, dtype=object), -1)
    return (True, entries[0]) if entries.size == 1 else (False, None)


def real_array(x: Any, *, copy: bool = True) -> np.ndarray | None:
    """x as a float64 array when every entry is a real number (not a bool, text or complex
    number), else None. With ``copy=False`` a float64 array is returned as it is. A masked array
    with masked entries is None too (numpy would read the values it hides)."""
    if isinstance(x, np.ma.MaskedArray) and np.ma.is_masked(x):
        return None
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
    except OverflowError:  # integers beyond float's range: +-inf, which the finiteness checks then name
        return np.array(_clipped(x), dtype=float)
    except (TypeError, ValueError):
        return None


def _clipped(x: Any) -> Any:
    """Nested lists of real numbers with each integer beyond float's range as +-inf."""
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_clipped(e) for e in x]
    try:
        return float(x)
    except OverflowError:
        return np.inf if x > 0 else -np.inf


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


def short_repr(x: object, limit: int = 80) -> str:
    """repr(x) on one line, cut to `limit` characters (for messages about a user's value)."""
    text = " ".join(repr(x).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def as_vector(x: Any, size: int, what: str, *, error: ErrorClass = TaskError) -> np.ndarray:
    """x as a float array of shape (size,) with finite real entries (a copy)."""
    arr = real_array(x)
    if arr is None:
        raise error(f"{what} must be {size} finite real numbers, got {short_repr(x)}")
    arr = arr.reshape(-1)
    if arr.shape != (size,) or not np.isfinite(arr).all():
        raise error(f"{what} must be {size} finite numbers, got {arr.size} entries: {arr.tolist()}")
    if size and np.abs(arr).max() > MAX_COORDINATE:
        raise error(f"{what} has an entry of {np.abs(arr).max():.3g}: reljac computes with |entries| <= "
                    f"{MAX_COORDINATE:g} (so no square of them overflows)")
    return arr


def as_matrix(x: Any, columns: int, what: str, *, rows: str = "k", note: str = "",
              error: ErrorClass = ConfigurationError) -> np.ndarray:
    """x as a C-contiguous float array (rows, columns) of finite real entries (a copy); one row
    may be given as shape (columns,). `rows` names the row count in messages ("k", "N"), `note`
    is added to the shape message."""
    arr = real_array(x)
    if arr is None:
        raise error(f"{what} must be a ({rows}, {columns}) array of real numbers, got {short_repr(x)}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != columns:
        raise error(f"{what} has shape {arr.shape}, expected ({rows}, {columns}){note}")
    if not np.isfinite(arr).all():
        raise error(f"{what} has non-finite entries")
    return np.ascontiguousarray(arr)


def check_rotation(R: np.ndarray, what: str, *, error: ErrorClass = TaskError) -> None:
    """Raise unless R (3, 3) is finite, orthonormal and right-handed (within ROTATION_TOLERANCE)."""
    if not np.isfinite(R).all():
        raise error(f"{what} has a non-finite rotation")
    (a, b, c), (d, e, f), (g, h, i) = R.tolist()
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)  # (floats: a tenth of np.linalg.det)
    if np.abs(R.T @ R - _IDENTITY3).max() > ROTATION_TOLERANCE or det < 0:
        raise error(f"{what} is not a rotation matrix (R^T R != I or det(R) < 0)")


_IDENTITY3 = np.eye(3)
_IDENTITY3.flags.writeable = False


def rotations_ok(R: np.ndarray) -> bool:
    """Every matrix of R (n, 3, 3) passes :func:`check_rotation` (finite, orthonormal within
    ROTATION_TOLERANCE, right-handed), checked at once."""
    off = np.abs(np.matmul(R.transpose(0, 2, 1), R) - _IDENTITY3).max(axis=(1, 2), initial=0.0)
    return bool(np.isfinite(R).all() and (off <= ROTATION_TOLERANCE).all() and (determinants(R) >= 0).all())


def determinants(R: np.ndarray) -> np.ndarray:
    """det of each matrix of R (n, 3, 3), by cofactors (numpy's LU path: 8x slower here)."""
    a, b, c = R[:, 0], R[:, 1], R[:, 2]
    return (a[:, 0] * (b[:, 1] * c[:, 2] - b[:, 2] * c[:, 1]) - a[:, 1] * (b[:, 0] * c[:, 2] - b[:, 2] * c[:, 0])
            + a[:, 2] * (b[:, 0] * c[:, 1] - b[:, 1] * c[:, 0]))


def as_float(x: Any, what: str, *, minimum: float | None = None, strict: bool = False, allow_inf: bool = False,
             valid: str | None = None, error: ErrorClass = TaskError) -> float:
    """x as a real number (not a bool, not text), finite unless `allow_inf`, and > `minimum`
    (`strict`) or >= `minimum`.

    `valid` words what is valid ("a positive number of metres"): every mistake then reads
    "{what} must be {valid}, got {x!r}".
    """
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise error(f"{what} must be {valid or 'a real number'}, got {short_repr(x)}")
    try:
        value = float(x)
    except OverflowError:  # an int beyond the float range, such as 10**400
        raise error(f"{what} must be {valid or 'finite'}, got an integer of {len(str(abs(x)))} digits") from None
    if value != value or (not allow_inf and not np.isfinite(value)):
        raise error(f"{what} must be {valid or 'finite'}, got {value}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        raise error(f"{what} must be {valid or ('>' if strict else '>=') + f' {minimum}'}, got {value}")
    return value


def as_bool(x: Any, what: str, *, error: ErrorClass = TaskError) -> bool:
    """x as a boolean: True or False (numpy's too), not a truthy string or number ('no' is not False)."""
    if not isinstance(x, (bool, np.bool_)):
        raise error(f"{what} must be True or False, got {short_repr(x)}")
    return bool(x)


def as_count(x: Any, what: str, *, minimum: int = 0, maximum: int | None = None,
             error: ErrorClass = TaskError) -> int:
    """x as an integer (not a bool, not a float) >= minimum (and <= maximum, when given)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise error(f"{what} must be an integer, got {short_repr(x)}")
    if int(x) < minimum:
        raise error(f"{what} must be >= {minimum}, got {shown_integer(int(x))}")
    if maximum is not None and int(x) > maximum:
        raise error(f"{what} must be at most {maximum}, got {shown_integer(int(x))}")
    return int(x)


def shown_integer(n: int) -> str:
    """An integer for a message: its digits, or how many there are beyond 24 (10**400 made a
    message of 400 characters)."""
    digits = str(abs(n))
    return f"{'-' if n < 0 else ''}{digits}" if len(digits) <= 24 else \
        f"{'a negative' if n < 0 else 'an'} integer of {len(digits)} digits"


def is_frame_id(frame: Any) -> bool:
    """True for a frame id: an int or a numpy integer, not an int subclass (an enum: bool, or
    pin.LOCAL, a Pinocchio reference frame)."""
    return type(frame) is int or isinstance(frame, np.integer)


def as_frame_ref(frame: Any, what: str, *, error: ErrorClass = TaskError) -> str | int:
    """A frame given by name (str) or id (int, :func:`is_frame_id`), as it is; the robot resolves
    it later (FrameNotFound when it has no such frame)."""
    if not (isinstance(frame, str) or is_frame_id(frame)):
        raise error(f"{what} must be a frame name (str) or id (int), got {frame!r}")
    return frame if isinstance(frame, str) else int(frame)


def as_rng(seed: Any, what: str = "seed", *, error: ErrorClass = ConfigurationError) -> np.random.Generator:
    """A numpy Generator from None (fresh entropy), a Generator (used as it is), a BitGenerator
    or SeedSequence, or an integer seed >= 0."""
    if seed is None or isinstance(seed, np.random.Generator):
        return np.random.default_rng(seed)
    if isinstance(seed, (np.random.BitGenerator, np.random.SeedSequence)):
        return np.random.default_rng(seed)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise error(f"{what} must be a numpy Generator, an integer seed >= 0 or None, got {short_repr(seed)}")
    return np.random.default_rng(int(seed))


def as_task_rows(part: Any, *, error: ErrorClass = TaskError) -> tuple[int, ...]:
    """Rows of a 6-row Jacobian [vx, vy, vz, wx, wy, wz] selected by `part`: "position"
    (0, 1, 2), "orientation" (3, 4, 5), "full", or distinct rows given by name ("vx", ...) or
    by integer index 0..5 (floats and bools are not row indices)."""
    usage = f"part must be one of {', '.join(PARTS)} or distinct integer row indices in 0..5 (or names)"
    if isinstance(part, str):
        named = PARTS.get(part)
        if named is None:
            raise error(f"{usage}, got {part!r}")
        return named
    try:
        items = list(part)
    except TypeError:
        raise error(f"{usage}, got {short_repr(part)}") from None
    rows = []
    for r in items:
        if isinstance(r, str) and r in ROW_NAMES:
            rows.append(ROW_NAMES.index(r))
        elif isinstance(r, (int, np.integer)) and not isinstance(r, (bool, np.bool_)):
            rows.append(int(r))
        else:
            raise error(f"{usage} ({', '.join(ROW_NAMES)}), got {short_repr(items)}")
    if not rows or len(set(rows)) != len(rows) or not all(0 <= r < 6 for r in rows):
        raise error(f"row indices must be distinct integers in 0..5 ({', '.join(ROW_NAMES)}), got {tuple(rows)}")
    return tuple(rows)

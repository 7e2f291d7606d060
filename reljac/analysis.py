"""Manipulability of absolute and relative tasks, and its distribution over the workspace.

For a task Jacobian J (m, nv) (rows of J_ab, see :mod:`reljac.relative`), the velocity
ellipsoid ``{J v : |v| <= 1}`` has principal axes along the left singular vectors u_i of J with
half-lengths the singular values sigma_i. reljac reports m singular values (zeros beyond
min(m, nv), so a task with more rows than joints is singular) and

* Yoshikawa's index ``w = sqrt(det(J J^T)) = prod_i sigma_i``, computed as the product of the
  singular values (no determinant: it neither underflows to a negative nor loses digits),
* the condition number ``sigma_max / sigma_min`` (inf at a singularity),
* sigma_min, the 2-norm distance from J to the nearest singular Jacobian.

The distribution of these measures over random configurations is :mod:`reljac.workspace`'s.

Rows mix units with ``part="full"`` (m/s and rad/s per rad/s); prefer "position" or
"orientation", or pick rows explicitly. Singular values do not depend on the axes the task is
expressed in; the directions do (they are in those axes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .exceptions import TaskError
from .json_values import json_ready
from .one_shot import one_shot_kinematics
from .robot import FrameRef, Robot
from .validation import as_task_rows, real_array, short_repr

SCALE_ABOVE = 1e150  # Jacobians with larger entries are scaled before the SVD


@dataclass(frozen=True)
class Manipulability:
    """Manipulability of a task Jacobian J (m, nv).

    Attributes:
        index: Yoshikawa's ``sqrt(det(J J^T))`` = product of the m singular values (0 if m > nv).
        singular_values: (m,), descending; zeros beyond min(m, nv).
        directions: (m, m), column i the task-space axis u_i of the velocity ellipsoid.
        condition_number: sigma_max / sigma_min (inf when sigma_min = 0).
    """

    index: float
    singular_values: np.ndarray
    directions: np.ndarray
    condition_number: float

    @property
    def smallest_singular_value(self) -> float:
        """sigma_min, the 2-norm distance from J to the nearest singular Jacobian."""
        return float(self.singular_values[-1])

    def format(self, spec: str = ".4g") -> str:
        """One line with the index, condition number and singular values, each formatted with
        the float format `spec` (``str(m)`` uses ".4g"; ``f"{m:.3e}"`` gives ".3e").

        Raises:
            TaskError: `spec` is not a float format specification.
        """
        spec = spec or ".4g"
        try:
            numbers = [format(float(x), spec) for x in (self.index, self.condition_number, *self.singular_values)]
        except (ValueError, TypeError):
            raise TaskError(f"{spec!r} is not a float format specification "
                            "(valid: e.g. '.4g', '.3e', '10.5f')") from None
        index, condition, *sigma = numbers
        return (f"manipulability index {index}, condition number {condition}, "
                f"singular values [{', '.join(sigma)}]")

    def __format__(self, spec: str) -> str:
        return self.format(spec)

    def __str__(self) -> str:
        return self.format()

    def to_dict(self) -> dict:
        """Plain Python numbers and lists, ready for ``json.dumps``: ``index``,
        ``condition_number``, ``smallest_singular_value``, ``singular_values`` (m,) and
        ``directions`` (m, m) as rows (column i is the axis u_i). Non-finite numbers (the
        condition number at a singularity, an index beyond the float range) are None."""
        return json_ready({"index": self.index, "condition_number": self.condition_number,
                      "smallest_singular_value": self.smallest_singular_value,
                      "singular_values": self.singular_values, "directions": self.directions})


def manipulability(J: ArrayLike) -> Manipulability:
    """Manipulability of a task Jacobian J, shape (m, n) with m >= 1 rows (see the module doc).

    Huge finite entries are fine (beyond 1e150, J is scaled before the SVD); ``index`` is inf
    when the product of the singular values exceeds the float range.

    Raises:
        TaskError: J is not a finite, real 2-D array with at least one row and one column, or its
            singular values themselves overflow (entries near 1e308).
    """
    J = _real_matrix(J)
    if J.ndim != 2 or 0 in J.shape:
        raise TaskError(f"a task Jacobian is a non-empty (m, nv) matrix, got shape {J.shape}")
    if not np.isfinite(J).all():
        raise TaskError("the task Jacobian has non-finite entries")
    largest = float(np.abs(J).max())
    scale = largest if largest > SCALE_ABOVE else 1.0  # sums of squares overflow near 1e154
    U, s, _ = np.linalg.svd(J / scale, full_matrices=True)
    sigma = np.zeros(J.shape[0])
    sigma[: s.size] = s
    sigma = rescale_singular_values(sigma, scale)
    return Manipulability(
        index=float(yoshikawa_index(sigma[None, :])[0]),
        singular_values=sigma,
        directions=U,
        condition_number=_condition(sigma[0], sigma[-1]),
    )


def rescale_singular_values(sigma: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
    """Singular values of J / scale back to J's; TaskError if they overflow."""
    with np.errstate(over="ignore"):
        sigma = sigma * scale
    if not np.isfinite(sigma).all():
        raise TaskError("the task Jacobian's singular values overflow float64 (entries near 1e308)")
    return sigma


def yoshikawa_index(sigma: np.ndarray) -> np.ndarray:
    """Yoshikawa's index, the product of each row of singular values (N, m), in log space: no
    NaN from 0 * inf when partial products overflow; inf or 0 where the product is out of range."""
    with np.errstate(divide="ignore", over="ignore"):
        return np.exp(np.log(sigma).sum(axis=1))


def _real_matrix(J: ArrayLike) -> np.ndarray:
    """J as a float array; TaskError for booleans, text, complex or other non-real entries."""
    arr = real_array(J)
    if arr is None:
        raise TaskError(f"a task Jacobian is a matrix of real numbers, got {short_repr(J)}")
    return arr


def _condition(largest: float, smallest: float) -> float:
    return math.inf if smallest <= 0.0 else float(largest / smallest)


def task_rows(part: str | Sequence[int | str]) -> tuple[int, ...]:
    """Rows of a 6-row Jacobian [vx, vy, vz, wx, wy, wz] selected by `part`.

    `part` is "position" (0, 1, 2), "orientation" (3, 4, 5), "full", or a sequence of distinct
    rows, integer indices in 0..5 or names (e.g. (0, 1) or ("vx", "vy") for the in-plane position
    of a planar robot).

    Raises:
        TaskError: an unknown name or bad row indices (floats and bools are not row indices).
    """
    return as_task_rows(part)


def relative_manipulability(robot: Robot, q: ArrayLike, frame_a: FrameRef, frame_b: FrameRef, *,
                            part: str | Sequence[int] = "position",
                            expressed_in: FrameRef = "a") -> Manipulability:
    """Manipulability of the motion of b measured in a: rows `part` of J_ab (6, nv) at q (nq,).

    `expressed_in` ("a", "b", "world" or a frame) only changes the axes of ``directions``.
    For the absolute task of a frame, use :func:`frame_manipulability` (a = the world).

    Raises:
        FrameNotFound, ConfigurationError, TaskError: bad frame, q or part.
    """
    rows = task_rows(part)
    J = one_shot_kinematics(robot, q).relative_jacobian(frame_a, frame_b, expressed_in=expressed_in)
    return manipulability(J[list(rows)])


def frame_manipulability(robot: Robot, q: ArrayLike, frame: FrameRef, *,
                         part: str | Sequence[int] = "position") -> Manipulability:
    """Manipulability of a frame's absolute motion (LOCAL_WORLD_ALIGNED rows `part`; world axes)."""
    rows = task_rows(part)
    J = one_shot_kinematics(robot, q).frame_jacobian(frame)
    return manipulability(J[list(rows)])

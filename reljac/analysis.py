"""Manipulability of absolute and relative tasks, and its distribution over the workspace.

For a task Jacobian J (m, nv) (rows of J_ab, see :mod:`reljac.relative`), the velocity
ellipsoid ``{J v : |v| <= 1}`` has principal axes along the left singular vectors u_i of J with
half-lengths the singular values sigma_i. reljac reports m singular values (zeros beyond
min(m, nv), so a task with more rows than joints is singular) and

* Yoshikawa's index ``w = sqrt(det(J J^T)) = prod_i sigma_i``, computed as the product of the
  singular values (no determinant: it neither underflows to a negative nor loses digits),
* the condition number ``sigma_max / sigma_min`` (inf at a singularity),
* sigma_min, the 2-norm distance from J to the nearest singular Jacobian.

Rows mix units with ``part="full"`` (m/s and rad/s per rad/s); prefer "position" or
"orientation", or pick rows explicitly. Singular values do not depend on the axes the task is
expressed in; the directions do (they are in those axes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .exceptions import ReljacError, TaskError
from .relative import Kinematics
from .robot import FrameRef, Robot
from .validation import as_rng

PARTS = {"position": (0, 1, 2), "orientation": (3, 4, 5), "full": (0, 1, 2, 3, 4, 5)}
QUANTILES = (("min", 0.0), ("5%", 0.05), ("25%", 0.25), ("median", 0.5), ("75%", 0.75), ("95%", 0.95),
             ("max", 1.0))
ROW_NAMES = ("vx", "vy", "vz", "wx", "wy", "wz")


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
        return float(self.singular_values[-1])


def manipulability(J) -> Manipulability:
    """Manipulability of a task Jacobian J, shape (m, n) with m >= 1 rows (see the module doc).

    Raises:
        TaskError: J is not a finite, real 2-D array with at least one row and one column.
    """
    J = _real_matrix(J)
    if J.ndim != 2 or 0 in J.shape:
        raise TaskError(f"a task Jacobian is a non-empty (m, nv) matrix, got shape {J.shape}")
    if not np.isfinite(J).all():
        raise TaskError("the task Jacobian has non-finite entries")
    U, s, _ = np.linalg.svd(J, full_matrices=True)
    sigma = np.zeros(J.shape[0])
    sigma[: s.size] = s
    return Manipulability(
        index=float(np.prod(sigma)),
        singular_values=sigma,
        directions=U,
        condition_number=_condition(sigma[0], sigma[-1]),
    )


def _real_matrix(J) -> np.ndarray:
    """J as a float array; TaskError for text, complex or other non-real entries (never truncated)."""
    try:
        arr = np.asarray(J)
        if arr.dtype.kind not in "biufO":
            raise TypeError
        return arr.astype(float)
    except (TypeError, ValueError):
        raise TaskError(f"a task Jacobian is a matrix of real numbers, got {J!r}") from None


def _condition(largest: float, smallest: float) -> float:
    return math.inf if smallest <= 0.0 else float(largest / smallest)


def task_rows(part: str | Sequence[int]) -> tuple[int, ...]:
    """Rows of a 6-row Jacobian [vx, vy, vz, wx, wy, wz] selected by `part`.

    `part` is "position" (0, 1, 2), "orientation" (3, 4, 5), "full", or a sequence of distinct
    integer row indices in 0..5 (e.g. (0, 1) for the in-plane position of a planar robot).

    Raises:
        TaskError: an unknown name or bad row indices (floats and bools are not row indices).
    """
    usage = f"part must be one of {', '.join(PARTS)} or distinct integer row indices in 0..5"
    if isinstance(part, str):
        rows = PARTS.get(part)
        if rows is None:
            raise TaskError(f"{usage}, got {part!r}")
        return rows
    try:
        items = list(part)
    except TypeError:
        raise TaskError(f"{usage}, got {part!r}") from None
    if any(isinstance(r, (bool, np.bool_)) or not isinstance(r, (int, np.integer)) for r in items):
        raise TaskError(f"{usage} ({', '.join(ROW_NAMES)}), got {items!r}")
    rows = tuple(int(r) for r in items)
    if not rows or len(set(rows)) != len(rows) or not all(0 <= r < 6 for r in rows):
        raise TaskError(f"row indices must be distinct integers in 0..5 ({', '.join(ROW_NAMES)}), got {rows}")
    return rows


def relative_manipulability(robot: Robot, q, frame_a: FrameRef, frame_b: FrameRef, *,
                            part: str | Sequence[int] = "position",
                            expressed_in: FrameRef = "a") -> Manipulability:
    """Manipulability of the motion of b measured in a: rows `part` of J_ab (6, nv) at q (nq,).

    `expressed_in` ("a", "b", "world" or a frame) only changes the axes of ``directions``.
    For the absolute task of a frame, use :func:`frame_manipulability` (a = the world).

    Raises:
        FrameNotFound, ConfigurationError, TaskError: bad frame, q or part.
    """
    rows = task_rows(part)
    J = Kinematics(robot, q, data=robot.data).relative_jacobian(frame_a, frame_b, expressed_in=expressed_in)
    return manipulability(J[list(rows)])


def frame_manipulability(robot: Robot, q, frame: FrameRef, *,
                         part: str | Sequence[int] = "position") -> Manipulability:
    """Manipulability of a frame's absolute motion (LOCAL_WORLD_ALIGNED rows `part`; world axes)."""
    rows = task_rows(part)
    J = Kinematics(robot, q, data=robot.data).frame_jacobian(frame)
    return manipulability(J[list(rows)])


# ---------------------------------------------------------------------------- workspace
@dataclass(frozen=True)
class SingularSample:
    """One sampled configuration: q (nq,) in the robot's (Pinocchio) layout and its measures."""

    q: np.ndarray
    index: float
    smallest_singular_value: float
    condition_number: float


@dataclass
class WorkspaceSummary:
    """Distribution of a relative task's manipulability over random configurations.

    Attributes:
        robot, frame_a, frame_b, part: what was analysed (part as row indices into [v; w]).
        samples, seed: the number of configurations (uniform within the joint limits) and seed.
        backend: "reference" (the batched in-house kinematics) or "pinocchio" (a loop).
        index, smallest_singular_value, condition_number: quantiles of each measure, keyed
            "min", "5%", "25%", "median", "75%", "95%", "max".
        closest_to_singular: the sampled configurations with the smallest sigma_min, closest first.
    """

    robot: str
    frame_a: str
    frame_b: str
    part: tuple[int, ...]
    samples: int
    seed: int | None
    backend: str
    index: dict[str, float] = field(default_factory=dict)
    smallest_singular_value: dict[str, float] = field(default_factory=dict)
    condition_number: dict[str, float] = field(default_factory=dict)
    closest_to_singular: list[SingularSample] = field(default_factory=list)


def _frame_name(robot: Robot, frame: FrameRef) -> str:
    return robot.model.frames[robot.frame_id(frame)].name


def _reference_jacobians(robot: Robot, a: str, b: str, samples: int,
                         rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
    """(q (N, nq) Pinocchio layout, J_ab (N, 6, nv_ref)) from the in-house batched kinematics,
    or None when it is unavailable or cannot load this robot."""
    try:
        from .reference import ReferenceRobot
    except ImportError:  # pragma: no cover - the reference package is part of reljac
        return None
    if robot.urdf_path is None:
        return None
    try:
        ref = ReferenceRobot.from_urdf(robot.urdf_path, floating_base=robot.floating_base)
        if set(ref.joint_names) != set(robot.joint_names) or not {a, b} <= set(ref.frame_names):
            return None
        q_ref = ref.random_configuration(rng, n=samples)
        J = ref.relative_jacobian(q_ref, a, b)
    except ReljacError:
        return None
    return reference_to_pinocchio_q(robot, ref, q_ref), J


def reference_to_pinocchio_q(robot: Robot, ref, q_ref) -> np.ndarray:
    """Configurations (N, ref.nq) in the reference layout -> (N, robot.nq) in the robot's layout.

    Joints are matched by name; continuous angles become (cos, sin) pairs; free joints keep
    [x, y, z, qx, qy, qz, qw] (the same convention in both).
    """
    from .check import LayerMap

    return LayerMap(robot, ref).q_to_pinocchio(np.atleast_2d(np.asarray(q_ref, dtype=float)))


def workspace_summary(robot: Robot, frame_a: FrameRef, frame_b: FrameRef, samples: int = 1000,
                      seed: int | None = 0, *, part: str | Sequence[int] = "position", worst: int = 5,
                      backend: str = "auto") -> WorkspaceSummary:
    """Sample `samples` configurations uniformly within the joint limits and summarize the
    manipulability of b's motion in a (rows `part` of J_ab).

    Args:
        backend: "reference" (batched in-house kinematics; its own sampling stream),
            "pinocchio" (a loop over :class:`~reljac.relative.Kinematics`), or "auto" (the
            reference when it can load the robot's URDF and knows the frames, else Pinocchio).
        worst: how many closest-to-singular configurations to keep (by smallest singular value).

    Raises:
        FrameNotFound, TaskError: bad frames, part, samples, worst or backend.
        ConfigurationError: a seed that is not None, a numpy Generator or an integer >= 0.
    """
    a, b = _frame_name(robot, frame_a), _frame_name(robot, frame_b)
    rows = list(task_rows(part))
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise TaskError(f"samples must be a positive integer, got {samples!r}")
    if isinstance(worst, bool) or not isinstance(worst, (int, np.integer)) or worst < 0:
        raise TaskError(f"worst must be an integer >= 0, got {worst!r}")
    if backend not in ("auto", "reference", "pinocchio"):
        raise TaskError(f"backend must be 'auto', 'reference' or 'pinocchio', got {backend!r}")
    rng = as_rng(seed)

    batch = None if backend == "pinocchio" else _reference_jacobians(robot, a, b, samples, rng)
    if batch is None and backend == "reference":
        raise ReljacError(f"the reference kinematics cannot analyse {b!r} in {a!r} on robot '{robot.name}'")
    if batch is not None:
        used = "reference"
        qs, J = batch
        J = J[:, rows]
    else:
        used = "pinocchio"
        qs = np.array([robot.random_configuration(rng) for _ in range(samples)])
        J = np.empty((samples, len(rows), robot.nv))
        for k, q in enumerate(qs):
            J[k] = Kinematics(robot, q, data=robot.data).relative_jacobian(a, b)[rows]

    s = np.linalg.svd(J, compute_uv=False)  # (N, min(m, nv)), descending
    sigma = np.zeros((samples, len(rows)))
    sigma[:, : s.shape[1]] = s
    index = np.prod(sigma, axis=1)
    smallest = sigma[:, -1]
    with np.errstate(divide="ignore"):
        condition = np.where(smallest > 0, sigma[:, 0] / np.where(smallest > 0, smallest, 1.0), np.inf)

    def quantiles(x: np.ndarray) -> dict[str, float]:
        return {key: _quantile(x, p) for key, p in QUANTILES}

    order = np.argsort(smallest, kind="stable")[:worst]
    return WorkspaceSummary(
        robot=robot.name, frame_a=a, frame_b=b, part=tuple(rows), samples=int(samples), seed=seed,
        backend=used, index=quantiles(index), smallest_singular_value=quantiles(smallest),
        condition_number=quantiles(condition),
        closest_to_singular=[SingularSample(qs[k].copy(), float(index[k]), float(smallest[k]), float(condition[k]))
                             for k in order],
    )


def _quantile(x: np.ndarray, p: float) -> float:
    """np.quantile's linear interpolation, but inf (not NaN) between two infinite samples
    (condition numbers are inf at singular samples)."""
    x = np.sort(x)
    position = p * (x.size - 1)
    lo, hi = math.floor(position), math.ceil(position)
    if x[lo] == x[hi]:
        return float(x[lo])
    return float(x[lo] + (position - lo) * (x[hi] - x[lo]))


def _part_label(rows: tuple[int, ...]) -> str:
    for name, r in PARTS.items():
        if r == rows:
            return f"{name} part"
    return "rows " + ", ".join(ROW_NAMES[r] for r in rows)


def format_workspace_summary(summary: WorkspaceSummary) -> str:
    """A plain-text report of a :class:`WorkspaceSummary` (what ``reljac analyze`` prints)."""
    keys = [key for key, _ in QUANTILES]
    lines = [
        f"manipulability of {summary.frame_b} relative to {summary.frame_a} ({_part_label(summary.part)}), "
        f"robot {summary.robot}",
        f"{summary.samples} random configurations within the joint limits "
        f"(seed {summary.seed}, {summary.backend} kinematics)",
        "",
        f"{'':<22}" + "".join(f"{k:>11}" for k in keys),
    ]
    for label, stats in (("index sqrt(det JJ^T)", summary.index),
                         ("sigma_min", summary.smallest_singular_value),
                         ("condition number", summary.condition_number)):
        lines.append(f"{label:<22}" + "".join(f"{stats[k]:>11.4g}" for k in keys))
    if summary.closest_to_singular:
        lines += ["", "closest to singular (smallest sigma_min first), q in the robot's layout:"]
        for i, sample in enumerate(summary.closest_to_singular, 1):
            q = np.array2string(sample.q, precision=4, separator=", ", max_line_width=10**6)
            lines.append(f"  {i}. sigma_min={sample.smallest_singular_value:.4g}  index={sample.index:.4g}  "
                         f"cond={sample.condition_number:.4g}")
            lines.append(f"     q = {q}")
    return "\n".join(lines)

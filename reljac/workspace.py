"""The manipulability of a relative task over the workspace: its distribution over random configurations.

:func:`workspace_summary` samples configurations uniformly within the joint limits and keeps, for
the rows `part` of J_ab (see :func:`~reljac.analysis.task_rows`), quantiles of Yoshikawa's index,
of sigma_min and of the condition number (:mod:`reljac.analysis` defines them), and the samples
closest to a singularity. It runs on the batched in-house reference when that can load the robot's
URDF (:mod:`reljac.reference_map`), else on a loop over the Pinocchio layer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .analysis import SCALE_ABOVE, rescale_singular_values, task_rows, yoshikawa_index
from .exceptions import ReljacError, TaskError
from .json_values import json_ready
from .one_shot import one_shot_kinematics
from .reference import ReferenceRobot
from .reference_map import LayerMap, reference_robot
from .robot import FrameRef, Robot, as_robot
from .validation import PARTS, ROW_NAMES, as_count, as_rng

QUANTILES = (("min", 0.0), ("5%", 0.05), ("25%", 0.25), ("median", 0.5), ("75%", 0.75), ("95%", 0.95),
             ("max", 1.0))
#: [bytes] working set of one chunk of samples in :func:`workspace_summary` (memory does not grow
#: with the number of samples beyond 24 bytes per sample for the exact quantiles)
CHUNK_BYTES = 32 * 2**20
MAX_SAMPLES = 10_000_000
#: a singular value below this x the largest one is rounding: that sample's rows have lower rank
RANK_TOLERANCE = 1e-10

@dataclass(frozen=True)
class SingularSample:
    """One sampled configuration: q (nq,) in the robot's (Pinocchio) layout and its measures;
    ``joint_values``: the same q by joint name (:meth:`Robot.joint_values`)."""

    q: np.ndarray
    index: float
    smallest_singular_value: float
    condition_number: float
    joint_values: dict = field(default_factory=dict)


@dataclass
class WorkspaceSummary:
    """Distribution of a relative task's manipulability over random configurations.

    Attributes:
        robot: the robot analysed (its name).
        frame_a: frame a of the relative task.
        frame_b: frame b of the relative task.
        part: the rows of J_ab rated, as row indices into [v; w].
        samples: the number of configurations (uniform within the joint limits).
        seed: their random seed.
        backend: "reference" (the batched in-house kinematics) or "pinocchio" (a loop).
        index: quantiles of the manipulability index, keyed "min", "5%", "25%", "median", "75%",
            "95%", "max".
        smallest_singular_value: quantiles of sigma_min, keyed alike.
        condition_number: quantiles of the condition number, keyed alike.
        closest_to_singular: the sampled configurations with the smallest sigma_min, closest first.
        rank: None, or the largest rank the rows had when it is below their number at every sample
            (structurally singular: b moves in only `rank` directions in a, e.g. UR5's tool0 in
            forearm_link); then index and sigma_min are 0 and the condition number infinite at
            every sample, and closest_to_singular is empty (rounding noise is not reported as data).
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
    rank: int | None = None

    def to_dict(self) -> dict:
        """What ``reljac analyze --json`` prints: plain Python numbers and lists.

        Keys: ``robot``, ``frame_a``, ``frame_b``, ``part`` (row indices into [v; w]), ``rows``
        (their names: vx, vy, vz, wx, wy, wz), ``samples``, ``seed`` (None unless an integer),
        ``backend``, ``index``, ``smallest_singular_value`` and ``condition_number`` (each a
        dict of quantiles keyed "min", "5%", "25%", "median", "75%", "95%", "max"), and
        ``closest_to_singular`` (a list of {``q`` (nq,), ``index``, ``smallest_singular_value``,
        ``condition_number``}, closest first). Non-finite numbers (the condition number of a
        singular sample is infinite) are None.
        """
        return json_ready({
            "robot": self.robot, "frame_a": self.frame_a, "frame_b": self.frame_b, "part": list(self.part),
            "rows": [ROW_NAMES[r] for r in self.part], "samples": self.samples,
            "seed": self.seed if isinstance(self.seed, (int, np.integer)) else None, "backend": self.backend,
            "index": self.index, "smallest_singular_value": self.smallest_singular_value,
            "condition_number": self.condition_number,
            "closest_to_singular": [{"q": s.q, "index": s.index, "smallest_singular_value": s.smallest_singular_value,
                                     "condition_number": s.condition_number} for s in self.closest_to_singular],
            "rank": self.rank,
        })


def _reference_robot(robot: Robot, a: str, b: str) -> ReferenceRobot | None:
    """The in-house reference of the robot's URDF when it can analyse frames a and b, else None."""
    if robot.urdf_path is None:
        return None
    try:
        ref = reference_robot(robot)
    except ReljacError:
        return None
    if set(ref.joint_names) != set(robot.joint_names) or not {a, b} <= set(ref.frame_names):
        return None
    return ref


def reference_to_pinocchio_q(robot: Robot, ref: Any, q_ref: ArrayLike) -> np.ndarray:
    """Configurations (N, ref.nq) in the reference layout -> (N, robot.nq) in the robot's layout.

    Joints are matched by name; continuous angles become (cos, sin) pairs; free joints keep
    [x, y, z, qx, qy, qz, qw] (the same convention in both).
    """
    return LayerMap(robot, ref).q_to_pinocchio(np.atleast_2d(np.asarray(q_ref, dtype=float)))


def workspace_summary(robot: Robot, frame_a: FrameRef, frame_b: FrameRef, samples: int = 1000,
                      seed: int | None = 0, *, part: str | Sequence[int] = "position", worst: int = 5,
                      backend: str = "auto", progress: Callable[[int], object] | None = None) -> WorkspaceSummary:
    """Sample `samples` configurations uniformly within the joint limits and summarize the
    manipulability of b's motion in a (rows `part` of J_ab).

    Args:
        backend: "reference" (batched in-house kinematics; its own sampling stream),
            "pinocchio" (a loop over :class:`~reljac.relative.Kinematics`), or "auto" (the
            reference when it can load the robot's URDF and knows the frames, else Pinocchio).
        worst: how many closest-to-singular configurations to keep (by smallest singular value).
        progress: called with the number of samples just done after each chunk (e.g. a tqdm
            bar's ``update``); None: silent.

    Raises:
        FrameNotFound, TaskError: bad frames, part, samples (1..10^7), worst or backend.
        ConfigurationError: a seed that is not None, a numpy Generator or an integer >= 0.
    """
    robot = as_robot(robot)
    fa, fb = robot.frame_id(frame_a), robot.frame_id(frame_b)
    a, b = robot.model.frames[fa].name, robot.model.frames[fb].name
    rows = list(task_rows(part))
    samples = as_count(samples, "samples", minimum=1)
    if samples > MAX_SAMPLES:
        raise TaskError(f"samples must be at most {MAX_SAMPLES} (24 bytes each are kept for exact quantiles), "
                        f"got {samples}")
    worst = as_count(worst, "worst", minimum=0)
    if not isinstance(backend, str) or backend not in ("auto", "reference", "pinocchio"):
        raise TaskError(f"backend must be 'auto', 'reference' or 'pinocchio', got {backend!r}")
    rng = as_rng(seed)

    ref = None if backend == "pinocchio" else _reference_robot(robot, a, b)
    if ref is None and backend == "reference":
        raise TaskError(f"the reference kinematics cannot analyse {b!r} in {a!r} on robot '{robot.name}': it reads "
                        "the robot's URDF, and needs the same joints as the robot (no mimic or locked joint, no "
                        "joint added to the model after loading) and both frames; use backend='auto' or "
                        "'pinocchio'")
    layers = None if ref is None else LayerMap(robot, ref)
    index, smallest, condition = (np.empty(samples) for _ in range(3))
    kept = np.empty(0, dtype=int)  # sample numbers of the closest-to-singular so far
    kept_q = np.empty((0, robot.nq))
    rank = 0  # the largest numerical rank seen
    chunk = max(1, min(samples, CHUNK_BYTES // (8 * (8 * robot.nv + 2 * robot.nq + 64))))
    for start in range(0, samples, chunk):
        n = min(chunk, samples - start)
        if ref is not None and layers is not None:
            q_ref = ref.random_configuration(rng, n=n)
            qs, J = layers.q_to_pinocchio(q_ref), ref.relative_jacobian(q_ref, a, b)[:, rows]
        else:
            qs = np.array([robot.random_configuration(rng) for _ in range(n)]).reshape(n, robot.nq)
            J = np.empty((n, len(rows), robot.nv))
            for k, q in enumerate(qs):
                J[k] = one_shot_kinematics(robot, q).relative_jacobian(fa, fb)[rows]
        sigma = _batch_singular_values(J, len(rows))
        part_index, part_smallest = yoshikawa_index(sigma), sigma[:, -1]
        rank = max(rank, int((sigma > RANK_TOLERANCE * sigma[:, :1]).sum(axis=1).max(initial=0)))
        with np.errstate(divide="ignore", over="ignore"):
            part_condition = np.where(part_smallest > 0,
                                      sigma[:, 0] / np.where(part_smallest > 0, part_smallest, 1.0), np.inf)
        window = slice(start, start + n)
        index[window], smallest[window], condition[window] = part_index, part_smallest, part_condition
        candidates = np.concatenate([kept, np.arange(start, start + n)])  # earlier samples first: stable ties
        order = np.argsort(smallest[candidates], kind="stable")[:worst]
        kept, kept_q = candidates[order], np.vstack([kept_q, qs])[order]
        if progress is not None:
            progress(n)

    def quantiles(x: np.ndarray) -> dict[str, float]:
        return {key: _quantile(x, p) for key, p in QUANTILES}

    if rank < len(rows):  # singular at every sample: the values are rounding noise, not data
        index[:], smallest[:], condition[:], kept, kept_q = 0.0, 0.0, np.inf, kept[:0], kept_q[:0]
    return WorkspaceSummary(
        robot=robot.name, frame_a=a, frame_b=b, part=tuple(rows), samples=int(samples), seed=seed,
        backend="pinocchio" if ref is None else "reference", index=quantiles(index),
        smallest_singular_value=quantiles(smallest), condition_number=quantiles(condition),
        closest_to_singular=[SingularSample(q.copy(), float(index[k]), float(smallest[k]), float(condition[k]),
                                            robot.joint_values(q)) for k, q in zip(kept, kept_q, strict=True)],
        rank=rank if rank < len(rows) else None,
    )


def _batch_singular_values(J: np.ndarray, m: int) -> np.ndarray:
    """Singular values (N, m) of each J[k] (m, nv), descending, zeros beyond min(m, nv); a matrix
    with entries beyond 1e150 is scaled by its largest entry first (no overflow inside the SVD)."""
    scale = np.abs(J).max(axis=(1, 2), initial=0.0)
    safe = np.where(scale > SCALE_ABOVE, scale, 1.0)
    sigma = np.zeros((J.shape[0], m))
    if J.shape[2]:
        s = np.linalg.svd(J / safe[:, None, None], compute_uv=False)
        sigma[:, : s.shape[1]] = s
    return rescale_singular_values(sigma, safe[:, None])


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


def _joint_lines(sample: SingularSample, width: int = 100, short_q: int = 12) -> list[str]:
    """'name: value' of every joint, wrapped at `width` characters, then q itself when it has at
    most `short_q` entries (to paste into --q)."""
    q = [f"     q = {np.array2string(sample.q, precision=4, separator=', ', max_line_width=10**6)}"]
    if not sample.joint_values:
        return q
    items = [f"{name}: " + (f"{value:.4g}" if isinstance(value, float) else
                            "(" + ", ".join(f"{x:.4g}" for x in value) + ")")
             for name, value in sample.joint_values.items()]
    lines, line = [], "    "
    for item in items:
        if len(line) + len(item) + 2 > width and line.strip():
            lines.append(line.rstrip(","))
            line = "    "
        line += f" {item},"
    return lines + [line.rstrip(",")] + (q if sample.q.size <= short_q else [])


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
    if summary.rank is not None:
        m = len(summary.part)
        lines[-1:] = [f"the {_part_label(summary.part)} of J_ab has rank {summary.rank} < {m} at every sample: "
                      f"{summary.frame_b} moves in only {summary.rank} of these {m} directions in {summary.frame_a} "
                      f"(structurally singular); index and sigma_min are 0, the condition number infinite"]
        return "\n".join(lines)
    for label, stats in (("index sqrt(det JJ^T)", summary.index),
                         ("sigma_min", summary.smallest_singular_value),
                         ("condition number", summary.condition_number)):
        lines.append(f"{label:<22}" + "".join(f"{stats[k]:>11.4g}" for k in keys))
    if summary.closest_to_singular:
        lines += ["", "closest to singular (smallest sigma_min first), joint values [rad or m]:"]
        for i, sample in enumerate(summary.closest_to_singular, 1):
            lines.append(f"  {i}. sigma_min={sample.smallest_singular_value:.4g}  index={sample.index:.4g}  "
                         f"cond={sample.condition_number:.4g}")
            lines += _joint_lines(sample)
    return "\n".join(lines)

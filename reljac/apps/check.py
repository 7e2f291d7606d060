"""``reljac check``: the Pinocchio layer against the in-house reference kinematics.

Both layers load the same URDF; joints are matched by name (continuous joints: angle <-> (cos, sin);
free joints: same [x, y, z, qx, qy, qz, qw] layout; mimic joints: neither layer has a column for
them), so the reference's q and v map onto Pinocchio's. On random configurations the check compares
every frame's placement and LOCAL_WORLD_ALIGNED Jacobian, then relative placements and relative
Jacobians (expressed in a, b and the world) for every frame pair or a random sample of them. Where
the layers disagree it names the first frame (in tree order) and its joint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import TaskError
from ..reference import ReferenceRobot
from ..reference_map import LayerMap, reference_robot
from ..relative import Kinematics
from ..robot import Robot
from ..validation import as_count, as_float, as_rng
from .report import format_table

TOLERANCE = 1e-9


@dataclass
class CheckRow:
    """One compared quantity: its largest difference between the layers and where it was."""

    quantity: str
    max_error: float
    where: str


@dataclass
class CheckReport:
    """The outcome of :func:`check_robot`: one :class:`CheckRow` per compared quantity."""

    robot: str
    samples: int
    pairs: int
    rows: list[CheckRow] = field(default_factory=list)
    tolerance: float = TOLERANCE

    @property
    def ok(self) -> bool:
        return all(r.max_error <= self.tolerance for r in self.rows)

    def format(self) -> str:
        head = (f"reljac check '{self.robot}': Pinocchio layer vs in-house reference, {self.samples} random "
                f"configurations, {self.pairs} frame pairs, tolerance {self.tolerance:g}")
        table = format_table(["quantity", "max error", "worst at"],
                             [(r.quantity, r.max_error, r.where) for r in self.rows])
        verdict = "OK: the layers agree" if self.ok else "MISMATCH: the layers disagree (see 'worst at')"
        return f"{head}\n{table}\n{verdict}"

    def to_dict(self) -> dict:
        """What ``reljac check --json`` prints: plain Python values.

        Keys: ``robot``, ``samples``, ``pairs`` (frame pairs compared), ``tolerance``, ``ok``
        (every max error within the tolerance) and ``rows``: a list of {``quantity``,
        ``max_error`` (largest absolute difference over all samples: [m] and [rad] for
        placements, per unit of v for Jacobians; None when not finite: a NaN in either layer
        counts as an infinite error), ``where`` (the frame or pair where it was largest)}.
        """
        from ..json_values import json_ready

        return json_ready({"robot": self.robot, "samples": self.samples, "pairs": self.pairs,
                      "tolerance": self.tolerance, "ok": self.ok,
                      "rows": [{"quantity": r.quantity, "max_error": r.max_error, "where": r.where}
                               for r in self.rows]})


def _worst(errors: dict[str, float]) -> tuple[float, str]:
    if not errors:
        return 0.0, "-"
    key = max(errors, key=lambda k: errors[k])
    return errors[key], key


#: [bytes] the working set of one chunk of samples (both layers' answers; one pin.Data besides)
CHUNK_BYTES = 128 * 2**20
MAX_SAMPLES = 1_000_000
WHERE = ("a", "b", "world")


def chunk_size(robot: Robot, ref: ReferenceRobot, frames: int, samples: int, pairs: int = 400) -> int:
    """Samples per chunk: memory stays about CHUNK_BYTES whatever the number of samples.

    Per sample, each layer holds every frame's placement and Jacobian and every pair's relative
    placement and three relative Jacobians (the reference also caches its frame Jacobians)."""
    nv = max(robot.nv, ref.nv, 1)
    per_sample = 8 * (3 * (frames + 1) * (16 + 6 * nv) + 2 * pairs * (16 + 18 * nv))
    return int(max(1, min(samples, CHUNK_BYTES // per_sample)))


def check_robot(
    robot: Robot,
    ref: ReferenceRobot,
    *,
    samples: int = 50,
    seed: int = 0,
    pairs: list[tuple[str, str]] | None = None,
    max_pairs: int = 400,
    tolerance: float = TOLERANCE,
    progress: Callable[[int], object] | None = None,
) -> CheckReport:
    """Compare the two layers on `samples` random configurations (see the module docstring).

    The samples are streamed in chunks (:func:`chunk_size`): memory does not grow with `samples`.
    `progress` is called with the number of samples just compared after each chunk (e.g. a
    tqdm bar's ``update``); None: silent.
    """
    samples = as_count(samples, "samples", minimum=1)
    if samples > MAX_SAMPLES:
        raise TaskError(f"samples must be at most {MAX_SAMPLES}, got {samples}")
    max_pairs = as_count(max_pairs, "max_pairs", minimum=0)
    tolerance = as_float(tolerance, "tolerance", minimum=0.0)
    layers = LayerMap(robot, ref)
    rng = as_rng(seed)
    frames = layers.frames
    if pairs is None:
        every = [(a, b) for a in frames for b in frames if a != b]
        if len(every) > max_pairs:
            every = [every[i] for i in rng.choice(len(every), size=max_pairs, replace=False)]
        pairs = every
    placement_err = dict.fromkeys(frames, 0.0)
    jacobian_err = dict.fromkeys(frames, 0.0)
    rel_place = {f"{a} -> {b}": 0.0 for a, b in pairs}
    rel_jac = {where: dict.fromkeys(rel_place, 0.0) for where in WHERE}
    chunk = chunk_size(robot, ref, len(frames), samples, len(pairs))
    data = robot.new_data()  # one, reused by every sample (a pin.Data takes ~64 nv^3 bytes)
    for start in range(0, samples, chunk):
        q_refs = ref.random_configuration(rng, n=min(chunk, samples - start))
        ref_kin = ref.kinematics(q_refs)  # batched over the chunk
        got = _pinocchio_answers(robot, layers.q_to_pinocchio(q_refs), data, frames, pairs)
        for i, f in enumerate(frames):
            _keep_max(placement_err, f, got["T"][:, i] - ref_kin.placement(f))
            _keep_max(jacobian_err, f, layers.columns(got["J"][:, i]) - ref_kin.jacobian(f))
        for i, (a, b) in enumerate(pairs):
            key = f"{a} -> {b}"
            _keep_max(rel_place, key, got["T_ab"][:, i] - ref_kin.relative_placement(a, b))
            for w, (where, errors) in enumerate(rel_jac.items()):
                _keep_max(errors, key, layers.columns(got["J_ab"][w, :, i]) - ref_kin.relative_jacobian(a, b, where))
        del got, ref_kin
        if progress is not None:
            progress(len(q_refs))
    report = CheckReport(robot.name, samples, len(pairs), tolerance=tolerance)
    first_bad = next((f for f in frames if max(placement_err[f], jacobian_err[f]) > tolerance), None)
    for name, errs in (("frame placements T_wf", placement_err), ("frame Jacobians (LWA)", jacobian_err)):
        worst, where = _worst(errs)
        if first_bad is not None and errs[first_bad] > tolerance:
            where = f"first bad frame '{first_bad}' ({_joint_of(robot, first_bad)}); worst '{where}'"
        report.rows.append(CheckRow(name, worst, where))
    report.rows.append(CheckRow("relative placements T_ab", *_worst(rel_place)))
    for where, errs in rel_jac.items():
        report.rows.append(CheckRow(f"relative Jacobians, expressed in {where}", *_worst(errs)))
    return report


def _pinocchio_answers(robot: Robot, qs: np.ndarray, data: Any, frames: list[str],
                       pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
    """The Pinocchio layer's answers (through Kinematics) at each q of a chunk, one data reused:
    T (n, F, 4, 4), J (n, F, 6, nv), T_ab (n, P, 4, 4), J_ab (3, n, P, 6, nv) for WHERE."""
    n, nv = len(qs), robot.nv
    got = {"T": np.empty((n, len(frames), 4, 4)), "J": np.empty((n, len(frames), 6, nv)),
           "T_ab": np.empty((n, len(pairs), 4, 4)), "J_ab": np.empty((len(WHERE), n, len(pairs), 6, nv))}
    for k, q in enumerate(qs):
        kin = Kinematics(robot, q, data=data)
        for i, f in enumerate(frames):
            got["T"][k, i] = kin.placement(f).homogeneous
            got["J"][k, i] = kin.frame_jacobian(f)
        for i, (a, b) in enumerate(pairs):
            got["T_ab"][k, i] = kin.relative_placement(a, b).homogeneous
            for w, where in enumerate(WHERE):
                got["J_ab"][w, k, i] = kin.relative_jacobian(a, b, expressed_in=where)
    return got


def _keep_max(errors: dict[str, float], key: str, difference: np.ndarray) -> None:
    """errors[key] = max(errors[key], max |difference|); NaN counts as an infinite error."""
    worst = float(np.abs(difference).max(initial=0.0))
    errors[key] = max(errors[key], worst if worst == worst else float("inf"))


def _joint_of(robot: Robot, frame: str) -> str:
    frame_obj = robot.model.frames[robot.frame_id(frame)]
    return f"moved by joint '{robot.model.names[frame_obj.parentJoint]}'"


def check_urdf(
    robot_name_or_path: str | Path, *, floating_base: bool | None = None, package_dirs: Any = None,
    mimic: bool | None = None, **kwargs: Any
) -> CheckReport:
    """Load a named robot or URDF in both layers and :func:`check_robot` them.

    With ``mimic=False`` both layers load <mimic> joints as independent joints; None keeps a
    named robot's own choices (floating base, mimic), else False and True.
    """
    options = {key: value for key, value in (("floating_base", floating_base), ("mimic", mimic)) if value is not None}
    if package_dirs:
        options["package_dirs"] = package_dirs
    robot = Robot.load(robot_name_or_path, **options)
    return check_robot(robot, reference_robot(robot), **kwargs)

"""What the debug page shows, as plain data: the level panel, nearest collision pairs, the
recording behind the timeline, and the targets the handles drag. No server, no meshcat.

Only the controller's public API is read: ``levels``, ``limits``, ``last_reports``, ``errors()``,
``last_kinematics``, the tasks' ``name``, ``target``, ``frame_a``, ``set_target``, ``weight``,
``bounds`` and ``compute``, and ``CollisionAvoidance.last``. Units: positions [m], angles [rad],
times [s].

A task with bounds (``Task.set_bounds``, ``BallTask``) bounds its error e, which is measured
from its target: its handle moves the target, and the bounds (the box drawn around the handle)
move with it. A ``BallTask``'s handle moves the target of the task whose error it bounds.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import pinocchio as pin

from ..ik import (
    BallTask,
    CollisionAvoidance,
    CoMTask,
    Controller,
    LevelReport,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    Task,
)
from ..relative import Kinematics

NEAREST_PAIRS = 5  # collision pairs listed in the panel
PLOT_SECONDS = 10.0  # [s] of samples the plots show
PLOT_RATE = 30.0  # [1/s] samples kept for the plots, at most
MAX_HISTORY = 3600.0  # [s] a recording may be asked to keep
MAX_FRAMES = 36_000  # frames a recording keeps at most (memory: see Recording)


def _finite(x: float) -> float | None:
    """x, or None where JSON has no number (inf, NaN)."""
    return float(x) if math.isfinite(x) else None


# ---------------------------------------------------------------------------- targets
def targeted(task: Task) -> Any:
    """The task whose target stands for `task`'s: a BallTask's inner task, else the task itself."""
    return task.inner if isinstance(task, BallTask) else task


def draggable(task: Task) -> bool:
    """True for a task whose target a 6-DoF handle can move: a pose or a position of b in a
    (or a ball about one)."""
    return isinstance(targeted(task), (RelativeFrameTask, RelativePositionTask))


def handle_pose(task: Task) -> pin.SE3 | None:
    """The target as a pose T_ah in frame a (a position target gets a's axes); None if unset."""
    target = targeted(task).target
    if target is None:
        return None
    if isinstance(target, pin.SE3):
        return target
    return pin.SE3(np.eye(3), np.asarray(target, dtype=float))


def set_handle_target(task: Task, T_ah: pin.SE3) -> pin.SE3:
    """Set the task's target from a handle pose T_ah (a position task keeps only the
    translation); returns the handle pose the target now stands for. The target's velocity is
    set to zero (a dragged target has no feed-forward)."""
    task = targeted(task)
    if isinstance(task, RelativePositionTask):
        task.set_target(T_ah.translation.copy())
        return pin.SE3(np.eye(3), T_ah.translation.copy())
    task.set_target(T_ah.copy())  # type: ignore[attr-defined]
    return T_ah.copy()


def parent_frame(robot: Any, task: Task) -> int | None:
    """Frame id of the task's frame a, None for the world."""
    frame_a = targeted(task).frame_a
    if isinstance(frame_a, pin.ReferenceFrame) or (isinstance(frame_a, str) and frame_a in ("world", "universe")):
        return None
    return int(robot.frame_id(frame_a))


# ---------------------------------------------------------------------------- the collision panel
def collision_limits(controller: Controller) -> list[CollisionAvoidance]:
    return [limit for limit in controller.limits if isinstance(limit, CollisionAvoidance)]


def collision_panel(limits: list[CollisionAvoidance], count: int = NEAREST_PAIRS) -> tuple[list[dict], float]:
    """The `count` nearest (body, body) pairs of the limits' last step, nearest first
    (``{"pair": "a/b", "bodies": [a, b], "distance": d}``, one row per pair: its nearest
    geometries), and the smallest distance [m] (inf when no pair is within reach). Each limit's
    rows (what its compiled step computed) are read once."""
    best: dict[tuple[str, str], float] = {}
    for limit in limits:
        rows = limit.last
        if rows is None:
            continue
        for pair, d in zip(rows.pairs, rows.distance.tolist(), strict=True):
            if d < best.get(pair, math.inf):
                best[pair] = d
    ranked = sorted(best.items(), key=lambda item: item[1])[:count]
    smallest = min(best.values(), default=math.inf)
    return [{"pair": f"{a}/{b}", "bodies": [a, b], "distance": d} for (a, b), d in ranked], smallest


def level_error(norms: list[dict[str, float]]) -> float:
    """One number per level for the plot: sqrt of the sum of its tasks' squared error norms
    (position [m], orientation [rad], or a posture task's error)."""
    return math.sqrt(sum(value**2 for n in norms for value in n.values() if math.isfinite(value)))


# ---------------------------------------------------------------------------- inequality rows
def error_units(task: Task) -> list[str]:
    """The unit of each component of the task's error e (size,): "m", "rad", or "" (a posture's
    joints, a ball of mixed units)."""
    if isinstance(task, BallTask):
        inner = [u for u, w in zip(error_units(task.inner), task.inner.weight, strict=True) if w > 0]
        return [inner[0] if inner and len(set(inner)) == 1 else ""]
    if isinstance(task, RelativeFrameTask):
        return ["m"] * 3 + ["rad"] * 3
    if isinstance(task, (RelativePositionTask, CoMTask)):
        return ["m"] * task.size
    if isinstance(task, RelativeOrientationTask):
        return ["rad"] * 3
    return [""] * task.size


def on_bound(reports: list[LevelReport], level: int) -> set[int]:
    """The inequality rows of `level` (indices in its stacked rows) on a bound or beyond it at
    the last step: active at their own level's solution (``LevelReport.active``), or held on
    their bound by a level below it (``LevelReport.on_bound``)."""
    return set(reports[level].on_bound) if level < len(reports) else set()


def bound_rows(tasks: tuple[Task, ...], reports: list[LevelReport], level: int,
               kin: Kinematics | None) -> list[dict]:
    """The level's inequality rows (its tasks with bounds, kept components), in its stacked
    order: ``name`` ("task name[component]", as ``LevelReport.active_rows``), ``active`` (on a
    bound at the last step: :func:`on_bound`), ``distance`` of e to the nearest bound at kin
    [units of e; negative: beyond it by that much; None: both sides open or no step yet] and
    its ``unit`` (:func:`error_units`)."""
    active = on_bound(reports, level)
    rows, offset = [], 0
    for task in tasks:
        kept = np.flatnonzero(task.weight > 0)
        bounds = task.bounds
        if bounds is not None:
            e = None if kin is None else np.asarray(task.compute(kin)[0], dtype=float)
            units = error_units(task)
            for j, i in enumerate(kept.tolist()):
                distance = None if e is None else _finite(min(e[i] - bounds[0][i], bounds[1][i] - e[i]))
                rows.append({"name": f"{task.name}[{i}]", "active": offset + j in active, "distance": distance,
                             "unit": units[i]})
        offset += len(kept)
    return rows


def bounds_region(task: Task, size: float) -> tuple[str, np.ndarray, np.ndarray] | tuple[str, float] | None:
    """What the handle of a task with bounds draws around its target, in the handle's frame [m]:
    ``("box", lower (3,), upper (3,))``, the bounds of e's position part (a RelativeFrameTask's
    or a RelativePositionTask's; an open side drawn `size` out), ``("ball", radius)`` for a
    BallTask about a RelativePositionTask, else None (no bounds on the position)."""
    if isinstance(task, BallTask):
        return ("ball", task.radius) if isinstance(task.inner, RelativePositionTask) else None
    bounds = task.bounds
    if bounds is None or not isinstance(task, (RelativeFrameTask, RelativePositionTask)):
        return None
    low, high = bounds[0][:3], bounds[1][:3]
    if not (np.isfinite(low).any() or np.isfinite(high).any()):
        return None
    return "box", np.where(np.isfinite(low), low, -size), np.where(np.isfinite(high), high, size)


# ---------------------------------------------------------------------------- the panel
def moved_joints(tasks: Sequence[Task], kin: Kinematics, nv: int) -> np.ndarray | None:
    """(nv,) bool: the velocity entries the level of `tasks` depends on at kin (a column of a
    task's rows that is not all zero; every unmasked joint of a posture), or None when a task's
    rows cannot be read (then every joint counts)."""
    moved = np.zeros(nv, dtype=bool)
    for task in tasks:
        try:
            rows = task.rows(kin)
        except Exception:  # a task the panel cannot read: no joint is left out
            return None
        if rows.A is None:  # an identity level (posture): the unmasked joints
            moved |= np.ones(nv, dtype=bool) if rows.mask is None else np.asarray(rows.mask) > 0
        else:
            moved |= np.any(np.asarray(rows.A) != 0.0, axis=0)
    return moved


def limiting_joints(report: LevelReport, tasks: Sequence[Task], kin: Kinematics | None, nv: int) -> list[str]:
    """The joints saturated for a level that limit it: those its tasks move (a joint held on its
    bound for every level, such as a finger at its limit under the bounded solver, is listed only
    under the levels that move it)."""
    if not report.saturated:
        return []
    moved = None if kin is None else moved_joints(tasks, kin, nv)
    return [name for j, name in zip(report.saturated, report.saturated_joints, strict=True)
            if moved is None or moved[j]]


def levels_panel(controller: Controller, errors: dict[str, dict[str, float]]) -> list[dict]:
    """Per level, highest first: its tasks with their error norms, the scale, met, the residual,
    the joints that saturated it and limit it (:func:`limiting_joints`), the constraints
    (collision pairs as "link/link") that saturated it, what
    limited its scale when it fell short (``LevelReport.limited_by``), ``posture``: True
    for a level of posture tasks only (a regularization, not expected to be met), and ``rows``:
    its inequality rows, active or slack, and their distances to the bounds (:func:`bound_rows`,
    at the q of the last step)."""
    reports = controller.last_reports
    step_kin = controller.last_kinematics
    kin = step_kin if any(t.bounds is not None for t in controller.tasks) else None
    nv = controller.robot.nv
    panel = []
    for i, tasks in enumerate(controller.levels):
        report = reports[i] if i < len(reports) else None
        norms = [errors.get(task.name, {}) for task in tasks]
        panel.append({
            "level": i,
            "tasks": [{"name": task.name, "errors": {k: _finite(v) for k, v in n.items()}}
                      for task, n in zip(tasks, norms, strict=True)],
            "error": level_error(norms),
            "scale": None if report is None else float(report.scale),
            "met": None if report is None else bool(report.met),
            "residual": None if report is None else _finite(report.residual),
            "saturated_joints": [] if report is None else limiting_joints(report, tasks, step_kin, nv),
            "saturated_constraints": [] if report is None else list(report.saturated_constraints),
            "limited_by": "" if report is None else report.limited_by,
            "posture": bool(tasks) and all(isinstance(task, PostureTask) for task in tasks),
            "rows": bound_rows(tasks, reports, i, kin) if kin is not None else [],
        })
    return panel


# ---------------------------------------------------------------------------- the recording
@dataclass
class Frame:
    """One control step on record: time t [s], q (nq,) before the step, the targets set for it
    (task name -> copy), the error norms at q, and the panel of the step (levels, pairs)."""

    t: float
    q: np.ndarray
    targets: dict[str, Any]
    errors: dict[str, dict[str, float]]
    levels: list[dict] = field(default_factory=list)
    pairs: list[dict] = field(default_factory=list)
    min_distance: float = math.inf


class Recording:
    """The last `seconds` [s] of a run at one frame per step of `dt` [s] (older frames drop), and
    never more than `max_frames` frames: a frame holds q, the targets and the panel (measured:
    5 kB on dual_arm's demo hierarchy, 3 levels and collision pairs), so MAX_FRAMES bounds the
    memory to about 200 MB whatever `seconds` and `dt` (``--history 3600`` at ``dt = 1e-4``
    would be 36 M frames).

    Attributes:
        frames: the frames on record, oldest first. asked: frames `seconds` would hold.
        bounded: True when `max_frames` cut the history short (fewer than `asked` frames kept).
        dropped: frames that fell off the start of the recording since the last clear.
    """

    def __init__(self, seconds: float, dt: float, max_frames: int = MAX_FRAMES) -> None:
        self.dt = float(dt)
        wanted = seconds / self.dt  # may be huge (inf): compared as a float before any int
        self.asked = math.ceil(wanted) if wanted < 1e15 else None
        self.frames: deque[Frame] = deque(maxlen=max(math.ceil(min(wanted, max_frames)), 1))
        self.bounded = wanted > max_frames
        self.dropped = 0

    def __len__(self) -> int:
        return len(self.frames)

    @property
    def seconds(self) -> float:
        """[s] of the run the recording can hold (its frames times dt)."""
        return float(self.frames.maxlen or 0) * self.dt

    def add(self, frame: Frame) -> None:
        if len(self.frames) == self.frames.maxlen:
            self.dropped += 1
        self.frames.append(frame)

    def truncate(self, index: int) -> Frame:
        """Keep frames 0..index (the run goes on from there); returns frame `index`."""
        while len(self.frames) > index + 1:
            self.frames.pop()
        return self.frames[index]

    def clear(self) -> None:
        self.frames.clear()
        self.dropped = 0

    def write(self, log: Any, tasks: list[Task]) -> Any:
        """Feed every frame to `log` (an object with ``record(t, q, active_tasks, norms)``, like
        ``reljac demo --record``'s run log) with each task at its recorded target; returns `log`."""
        for frame in self.frames:
            active = [SimpleNamespace(name=task.name, target=frame.targets.get(task.name)) for task in tasks]
            log.record(frame.t, frame.q, active, frame.errors)
        return log


def targets_of(tasks: list[Task]) -> dict[str, Any]:
    """Each task's target (a copy; None if unset; a BallTask's: its inner task's), by task name."""
    return {task.name: getattr(targeted(task), "target", None) for task in tasks}


def restore_targets(tasks: list[Task], targets: dict[str, Any]) -> None:
    """Set each task's recorded target back (tasks without one on record are left alone)."""
    for task in tasks:
        target = targets.get(task.name)
        if target is not None:
            targeted(task).set_target(target)


# ---------------------------------------------------------------------------- plot samples
def merge_samples(held: list[list], new: list[list], restart: bool = False) -> list[list]:
    """Plot samples ``[t, level errors, distance]`` held for a page, with `new` ones added: the
    newest PLOT_SECONDS of them at most PLOT_RATE a second (what the page keeps, so at most
    PLOT_SECONDS * PLOT_RATE + 1 samples however long a page is busy). `restart` (a reset or a
    rewind since `held`) drops `held`; so does time going back. Returns a new list."""
    out = [] if restart else list(held)
    for sample in new:
        add_sample(out, sample)
    return out


def add_sample(samples: list[list], sample: list) -> None:
    """Add `sample` to `samples` in place, as :func:`merge_samples` does."""
    t = sample[0]
    if samples and t < samples[-1][0]:
        samples.clear()
    if samples and t - samples[-1][0] < 1.0 / PLOT_RATE:
        return
    samples.append(sample)
    while samples[0][0] < t - PLOT_SECONDS:
        del samples[0]

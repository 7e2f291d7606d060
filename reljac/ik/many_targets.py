"""The targets of many problems (:meth:`reljac.ik.solve.Solver.solve_many`): each problem's targets
checked as the tasks check them and written as the compiled core holds them, and back (a result's
errors are read against its problem's targets: :mod:`reljac.ik.many_results`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pinocchio as pin

from ..exceptions import ConfigurationError
from ..poses import homogeneous
from ..robot import Robot
from ..validation import rotations_ok
from .task import Task


def target_values(tasks: list[Task], robot: Robot, targets: Sequence[Any],
                  aliases: Mapping[int, Task] | None = None) -> tuple[list[Task], np.ndarray]:
    """The tasks whose targets change and, per problem, their core target values in a row
    (each target checked by its task's set_target, or as it checks, all at once:
    :func:`_poses_at_once`). `targets`: :meth:`~reljac.ik.solve.Solver.solve_many`'s; aliases:
    id(a task) -> the task of `tasks` a dict keyed by it sets (solve_many's copies of the caller's)."""
    fast = _poses_at_once(tasks[0], targets)
    if fast is not None:
        return [tasks[0]], fast
    by_name = {t.name: t for t in tasks}
    changed: list[Task] = []
    rows = []
    for i, entry in enumerate(targets):
        pairs = entry.items() if isinstance(entry, Mapping) else [(tasks[0], entry)]
        if not pairs:
            raise ConfigurationError(f"targets[{i}] is an empty dict: give {{task (or its name): target}} for "
                                     "at least one task, or a bare target for the first task")
        row: dict[int, np.ndarray] = {}
        for key, target in pairs:
            task = by_name.get(key) if isinstance(key, str) else aliases.get(id(key), key) if aliases else key
            if task is None or not any(task is t for t in tasks):
                raise ConfigurationError(f"targets[{i}] names task {key!r}, not one of the levels' "
                                         f"({', '.join(repr(t.name) for t in tasks)})")
            if not hasattr(task, "set_target"):
                raise ConfigurationError(f"task '{task.name}' takes no target")
            if id(task) in row:
                raise ConfigurationError(f"targets[{i}] sets task '{task.name}' twice (by the task and by its name)")
            task.set_target(target)  # type: ignore[union-attr]
            if not any(task is t for t in changed):
                if i > 0:
                    raise ConfigurationError(f"targets[{i}] sets task '{task.name}', which targets[0] does not: "
                                             "every problem must set the same tasks")
                changed.append(task)
            row[id(task)] = core_target(task, robot)
        if len(row) != len(changed):
            raise ConfigurationError(f"targets[{i}] does not set every task targets[0] sets "
                                     f"({', '.join(t.name for t in changed)})")
        rows.append(np.concatenate([row[id(t)] for t in changed]))
    return changed, np.array(rows)


def own_copy(task: Task) -> Task:
    """A shallow copy of a task that no controller listens to (its targets are the copy's), with
    its own copies of the tasks it is built on (a BallTask's inner task, whose changes the copy
    hears): setting the copy's targets never touches the original's."""
    twin = copy.copy(task)
    twin.__dict__.pop("_listeners", None)
    for name, value in list(vars(twin).items()):
        if isinstance(value, Task):
            heard = task in value.__dict__.get("_listeners", ())
            twin.__dict__[name] = inner = own_copy(value)
            if heard:
                inner._listen(twin)
    return twin


def own_copies(levels: list[list[Task]]) -> tuple[list[list[Task]], dict[int, Task]]:
    """The levels with :func:`own_copy` of each task (one copy per task, in however many levels it
    is), and id(task) -> its copy (a target keyed by the caller's task sets its copy's)."""
    twins: dict[int, Task] = {}
    for task in (task for level in levels for task in level):
        if id(task) not in twins:
            twins[id(task)] = own_copy(task)
    return [[twins[id(task)] for task in level] for level in levels], twins


def _poses_at_once(task: Task, targets: Sequence[Any]) -> np.ndarray | None:
    """(n, 16): the homogeneous matrices of bare pin.SE3 targets of a pose task, checked at once
    as set_target checks each (finite, a rotation within ROTATION_TOLERANCE, right-handed); None
    for any other kind of target or task, or when one fails (set_target then says why)."""
    if getattr(task, "kind", None) != "pose" or not all(isinstance(T, pin.SE3) for T in targets):
        return None
    H = np.array([T.homogeneous for T in targets])
    if not (np.isfinite(H).all() and rotations_ok(H[:, :3, :3])):
        return None
    return H.reshape(len(targets), 16)


def core_target(task: Task, robot: Robot) -> np.ndarray:
    """The task's current target as the core holds it (Step.set_task_target's values); for a
    task computed in Python (no description), its target in the same layout: a pose, position
    or orientation as a homogeneous matrix (16,), any other target flattened."""
    d: Any = task.description(robot)
    if d is not None:
        return np.asarray(d.target, dtype=float).reshape(-1)
    target = getattr(task, "target", None)
    if target is None:
        raise ConfigurationError(f"task '{task.name}' has no target that solve_many can set (no `target`)")
    if isinstance(target, pin.SE3):
        return homogeneous(target).reshape(-1)
    values = np.array(target, dtype=float)
    if getattr(task, "kind", None) in ("position", "orientation") and values.shape in ((3,), (3, 3)):
        return homogeneous(values).reshape(-1)
    return values.reshape(-1)


def set_from_core(task: Task, values: np.ndarray) -> None:
    """The inverse of :func:`core_target` on the Python task."""
    if len(values) == 16:
        T = values.reshape(4, 4)
        kind = getattr(task, "kind", "pose")
        task.set_target(T if kind == "pose" else T[:3, 3] if kind == "position" else T[:3, :3])  # type: ignore[attr-defined]
    else:
        task.set_target(values)  # type: ignore[attr-defined]


def set_row(tasks: list[Task], sizes: list[int], row: np.ndarray) -> None:
    """Set each task's target from its segment of one problem's row of core targets (its size,
    in order): :func:`set_from_core` for each."""
    at = 0
    for task, size in zip(tasks, sizes, strict=True):
        set_from_core(task, row[at:at + size])
        at += size

"""The targets of many problems (:meth:`reljac.ik.search.solve.Solver.solve_many`): each problem's targets
checked as the tasks check them and written as the compiled core holds them, and back (a result's
errors are read against its problem's targets: :mod:`reljac.ik.search.results`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pinocchio as pin

from ...exceptions import ConfigurationError, ReljacError
from ...poses import homogeneous
from ...robot import Robot
from ...validation import rotations_ok
from ..level_names import check_names
from ..tasks.base import Task


def settable_tasks(tasks: Sequence[Task]) -> list[Task]:
    """The tasks whose targets a problem may set: `tasks` (a controller's, level by level) and
    the tasks they are built on (a BallTask's inner task), each once, in that order."""
    out: list[Task] = []
    seen: set[int] = set()

    def visit(task: Task) -> None:
        if id(task) in seen:
            return
        seen.add(id(task))
        out.append(task)
        for value in vars(task).values():
            if isinstance(value, Task):
                visit(value)

    for task in tasks:
        visit(task)
    return out


def built_on(task: Task, inner: Task) -> bool:
    """`task` is `inner` or is built on it (through the tasks it holds, at any depth)."""
    return task is inner or any(isinstance(v, Task) and built_on(v, inner) for v in vars(task).values())


def target_values(tasks: list[Task], robot: Robot, targets: Sequence[Any],
                  aliases: Mapping[int, Task] | None = None) -> tuple[list[Task], np.ndarray]:
    """The tasks whose targets change and, per problem, their core target values in a row
    (each target checked by its task's set_target, or as it checks, all at once:
    :func:`_poses_at_once`; a target refused names its problem, "targets[i]: ..."). `tasks`: a
    controller's; a problem may set theirs and those of the tasks they are built on
    (:func:`settable_tasks`). `targets`: :meth:`~reljac.ik.search.solve.Solver.solve_many`'s;
    aliases: id(a task) -> the task a dict keyed by it sets (solve_many's copies of the caller's).
    Each changed task is left with the last problem's target (the caller's tasks are copies)."""
    fast = _poses_at_once(tasks[0], targets)
    if fast is not None:
        _set(tasks[0], targets[-1], len(targets) - 1)  # (a task without a target gets one: the core needs it)
        return [tasks[0]], fast
    settable = settable_tasks(tasks)
    check_names([tasks])  # (a task renamed since its solver was made: a name must still be one task's)
    by_name: dict[str, Task] = {}
    shared: set[str] = set()  # names of two settable tasks (an inner task named as another): ambiguous keys
    for t in settable:
        if by_name.setdefault(t.name, t) is not t:
            shared.add(t.name)
    changed: list[Task] = []
    rows = []
    for i, entry in enumerate(targets):
        pairs = entry.items() if isinstance(entry, Mapping) else [(tasks[0], entry)]
        if not pairs:
            raise ConfigurationError(f"targets[{i}] is an empty dict: give {{task (or its name): target}} for "
                                     "at least one task, or a bare target for the first task")
        row: dict[int, np.ndarray] = {}
        for key, target in pairs:
            if isinstance(key, str) and key in shared:
                raise ConfigurationError(f"targets[{i}] names task {key!r}, the name of two tasks (one is built on "
                                         "another's level: a BallTask's inner task): key it by the task itself")
            task = by_name.get(key) if isinstance(key, str) else aliases.get(id(key), key) if aliases else key
            if task is None or not any(task is t for t in settable):
                raise ConfigurationError(f"targets[{i}] names task {key!r}, not one of the levels' or of the tasks "
                                         f"they are built on ({', '.join(repr(t.name) for t in settable)})")
            if not hasattr(task, "set_target"):
                raise ConfigurationError(f"task '{task.name}' takes no target")
            if id(task) in row:
                raise ConfigurationError(f"targets[{i}] sets task '{task.name}' twice (by the task and by its name)")
            _set(task, target, i)
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


def _set(task: Task, target: Any, i: int) -> None:
    """task.set_target(target), its error naming problem i."""
    try:
        task.set_target(target)  # type: ignore[attr-defined]
    except ReljacError as error:
        raise type(error)(f"targets[{i}]: {error}") from None


def core_entries(tasks: list[Task], changed: list[Task], sizes: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Where each problem's row of core targets goes in the compiled step: (task indices, column
    offsets, sizes), one entry per index of `tasks` (a controller's) that is a changed task or is
    built on one (a task in two levels: both; a BallTask about a changed task: the ball, whose
    core task sets its inner task's target)."""
    indices, offsets, widths = [], [], []
    at = 0
    for task, size in zip(changed, sizes, strict=True):
        for i, t in enumerate(tasks):
            if built_on(t, task):
                indices.append(i)
                offsets.append(at)
                widths.append(size)
        at += size
    return indices, offsets, widths


def copies_of(tasks: Sequence[Task]) -> dict[int, Task]:
    """id(task) -> a shallow copy that no controller listens to, for each of `tasks` and each task
    they are built on, one copy per task: a copy holds the copies of the tasks its original
    holds (a BallTask's inner task) and hears their changes where its original heard theirs.
    Setting a copy's target never touches the original's."""
    twins: dict[int, Task] = {}

    def copy_of(task: Task) -> Task:
        if id(task) in twins:
            return twins[id(task)]
        twins[id(task)] = twin = copy.copy(task)
        twin.drop_listeners()
        for name, value in list(vars(twin).items()):
            if isinstance(value, Task):
                heard = value.listened_by(task)
                twin.__dict__[name] = inner = copy_of(value)
                if heard:
                    inner.listen(twin)
        return twin

    for task in tasks:
        copy_of(task)
    return twins


def own_copy(task: Task) -> Task:
    """A copy of one task (:func:`copies_of`), with its own copies of the tasks it is built on."""
    return copies_of([task])[id(task)]


def own_copies(levels: list[list[Task]]) -> tuple[list[list[Task]], dict[int, Task]]:
    """The levels with a copy of each task (:func:`copies_of`: one per task, in however many
    levels it is, and a ball's inner task the copy of that task where it is in a level too), and
    id(task) -> its copy (a target keyed by the caller's task sets its copy's)."""
    twins = copies_of([task for level in levels for task in level])
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
    """The inverse of :func:`core_target` on the Python task: 16 values are a homogeneous matrix
    only for a pose, position or orientation task (or a task without a kind whose target is a
    pin.SE3); a posture of a robot with nq = 16 is 16 joint values."""
    kind = getattr(task, "kind", None)
    if kind is None and isinstance(getattr(task, "target", None), pin.SE3):
        kind = "pose"
    if len(values) == 16 and kind in ("pose", "position", "orientation"):
        T = values.reshape(4, 4)
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

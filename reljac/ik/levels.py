"""What a level of a hierarchy is: tasks stacked with their weights, or a limit that can be a
level's rows (``as_task()``: SupportRegion, CollisionAvoidance) standing for its task.

:func:`as_levels` is the one reading of a hierarchy's ``levels`` argument, shared by the
:class:`~reljac.ik.Controller`, :func:`~reljac.ik.solve` / :class:`~reljac.ik.Solver` and
:func:`~reljac.ik.humanoid_stack`'s extra levels.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import TaskError
from .limits.base import Limit
from .tasks import Task


def level_item(item: Any, i: int) -> Any:
    """A level's item: a Task as it is, a Limit that can be a level's rows (``as_task()``:
    SupportRegion, CollisionAvoidance) as its task; anything else as it is (refused by the caller)."""
    if isinstance(item, Limit):
        as_task = getattr(item, "as_task", None)
        if not callable(as_task):
            raise TaskError(f"level {i}: limit '{item.name}' cannot be a level's rows (a limit with as_task(), "
                            "e.g. SupportRegion or CollisionAvoidance, can): pass it in constraints=")
        return as_task()
    return item


def as_levels(levels: Any) -> list[list[Task]]:
    """Normalize ``levels``: a list of levels, each a task or a list of tasks (a limit with
    ``as_task()`` in a level stands for its task: its rows at that level).

    Raises:
        TaskError: anything else, or no level.
    """
    if isinstance(levels, (Task, Limit)):
        levels = [[levels]]
    if not isinstance(levels, (list, tuple)):
        raise TaskError(f"levels must be a list of levels (lists of tasks), got {type(levels).__name__}")
    out: list[list[Task]] = []
    for i, level in enumerate(levels):
        items = [level] if isinstance(level, (Task, Limit)) else list(level) if isinstance(level, (list, tuple)) \
            else []
        tasks = [level_item(item, i) for item in items]
        if not tasks or not all(isinstance(t, Task) for t in tasks):
            raise TaskError(f"level {i} must be a Task or a non-empty list of Tasks, got {level!r}")
        out.append(tasks)
    if not out:
        raise TaskError(f"levels must hold at least one level of tasks, got {levels!r}")
    return out


__all__ = ["as_levels", "level_item"]

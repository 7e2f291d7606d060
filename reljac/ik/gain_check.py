"""A controller's check of its tasks' gains against its control period: a gain x dt of 2 or more
makes a task's error grow or oscillate, which a ReljacWarning says when a motion starts, when dt is
set, and when a task's gain is set during a motion (:class:`GainCheck`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..exceptions import ReljacWarning
from .tasks import Task


def warn_of_unstable_gains(tasks: Sequence[Task], dt: float, *, stacklevel: int) -> None:
    """A ReljacWarning for each task whose gain x dt is 2 or more: its error e_k+1 = (1 - gain dt) e_k
    (its rows met) then never shrinks (a period-2 oscillation at 2, growing beyond)."""
    for task in tasks:
        gain = getattr(task, "gain", 0.0)
        if gain * dt >= 2.0:
            warnings.warn(ReljacWarning(
                f"task '{task.name}': gain {gain:g} /s x dt {dt:g} s = {gain * dt:.3g} >= 2: its error would "
                f"not shrink from step to step (it oscillates, or grows); use a gain below 2/dt = {2 / dt:.4g} /s "
                "or a shorter dt"), stacklevel=stacklevel)


class GainCheck:
    """Hears a controller's tasks (Observable.listen) and warns when one's gain is set to a value
    whose gain x dt() is 2 or more (each value once per task: a target set every step is no gain
    change). Held by the controller; the tasks hold it weakly."""

    def __init__(self, tasks: Sequence[Task], dt: Callable[[], float]) -> None:
        self._dt = dt
        self._gains = {id(task): getattr(task, "gain", 0.0) for task in tasks}
        for task in tasks:
            task.listen(self)

    def heard(self, task: Any) -> None:
        gain = getattr(task, "gain", 0.0)
        if self._gains.get(id(task), gain) != gain:
            self._gains[id(task)] = gain
            # (the user's line: above the gain setter, Observable._changed, this, the warning)
            warn_of_unstable_gains([task], self._dt(), stacklevel=5)

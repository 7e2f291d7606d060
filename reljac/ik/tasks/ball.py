"""Tasks with bounds instead of a target (issue 29): the norm bound on another task's error (a
ball for a position task) and the names of a level's rows for reports.

Per-component bounds on any task's error are :meth:`reljac.ik.tasks.base.Task.set_bounds` (a box for
:class:`~reljac.ik.tasks.frames.RelativePositionTask`: its target is the box's centre); the
joint-centring band is :meth:`reljac.ik.tasks.posture.PostureTask.set_centring_band`. A controller
with such tasks solves its hierarchy with :func:`reljac.ik.solvers.inequality.solve_lexicographic`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...exceptions import TaskError
from ...relative import Kinematics
from ...robot import Robot
from ...validation import as_float, short_repr, single_entry
from ..description import Description
from .base import Task, TaskTerms

TINY_NORM = 1e-12  # below this |e| [units of e] the ball task's direction is undefined: its row is zero


class BallTask(Task, kind="ball"):
    """Keeps the norm of another task's error within a radius: |e| <= radius [units of e], over
    the components the other task keeps (weight > 0), e.g. b's origin within a ball around a
    :class:`~reljac.ik.tasks.frames.RelativePositionTask`'s target, or the rotation from a
    :class:`~reljac.ik.tasks.frames.RelativeOrientationTask`'s target within an angle.

    Its error is the scalar |e| (size 1), its Jacobian u^T J with u = e / |e|: the constraint
    linearized as one row along e (at |e| = 0 the row is zero: the ball's centre is inside
    with margin). The other task gives e, J and its feed-forward; its own gain and weights are
    not used (this task has its own). ``radius`` can be changed between steps, and so can the
    other task (its target): a controller using the ball hears of both.
    """

    size = 1

    def __init__(self, task: Task, radius: float, **kwargs: Any) -> None:
        if not isinstance(task, Task):
            raise TaskError(f"BallTask needs a reljac.ik Task whose error it bounds, got {task!r}")
        self._inner = task
        self.robot = getattr(task, "robot", None)
        kwargs.setdefault("name", f"ball of {task.name}")
        super().__init__(**kwargs)
        self.radius = radius
        task.listen(self)  # the inner task's changes are this one's (its compiled description holds them)

    @property
    def inner(self) -> Task:
        """The task whose error the ball bounds (fixed at construction; its target can change)."""
        return self._inner

    def heard(self, task: Any) -> None:
        """The inner task changed: this one's description changes with it (an
        :class:`~reljac.ik.description.Observable`'s listener)."""
        self._changed()

    def description(self, robot: Robot) -> Description | None:
        """The task for the compiled step (its inner task's description within), or None (its rows
        from Python) when the inner task has no compiled description."""
        inner = self.inner.description(robot)
        if inner is None:
            return None
        return Description("BallTaskDescription", inner=inner, **self.described_parameters())

    @property
    def radius(self) -> float:
        """The bound on |e| [units of e], >= 0."""
        return float(self._bounds[1][0]) if self._bounds is not None else float("inf")

    @radius.setter
    def radius(self, value: float) -> None:
        super().set_bounds(None, as_float(value, f"radius of task '{self.name}'", minimum=0.0))

    def set_bounds(self, lower: ArrayLike | None = None, upper: ArrayLike | None = None) -> None:
        """A ball's only bound is its radius: ``set_bounds(None, radius)`` sets it (as
        :attr:`radius` does, >= 0); any other bound raises TaskError (a radius of -1 was taken)."""
        single, radius = single_entry(upper)
        if lower is not None or not single:
            raise TaskError(f"task '{self.name}' keeps |e| within its radius (|e| <= radius): set radius instead "
                            f"of bounds (got lower={short_repr(lower)}, upper={short_repr(upper)})")
        self.radius = radius  # (checked as radius is)

    def compute(self, kin: Kinematics) -> TaskTerms:
        e, J, ff = self.inner.compute(kin)
        kept = self.inner.weight > 0
        e, J, ff = np.asarray(e)[kept], np.asarray(J)[kept], np.asarray(ff)[kept]
        norm = float(np.linalg.norm(e))
        if norm <= TINY_NORM:
            return TaskTerms(np.array([norm]), np.zeros((1, J.shape[1])), np.zeros(1))
        u = e / norm
        return TaskTerms(np.array([norm]), (u @ J)[None, :], np.array([u @ ff]))


def row_labels(tasks: Sequence[Task]) -> list[str]:
    """Names of a level's stacked rows, "task name[component]", in the controller's order; a task
    whose rows change with the configuration (a region's: :class:`reljac.ik.tasks.regions.RegionRowsTask`)
    names its rows of the last step itself (``row_names``: an edge, a pair)."""
    names: list[str] = []
    for task in tasks:
        own = getattr(task, "row_names", None)
        names += own if own is not None else [f"{task.name}[{i}]" for i in np.flatnonzero(task.weight > 0)]
    return names

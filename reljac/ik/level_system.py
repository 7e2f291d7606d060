"""A level's system at one configuration: its tasks' rows stacked (:func:`level_system`).

Each task gives its rows at the configuration (``Task.rows(kin)``); a level stacks them with their
weights into one :class:`~reljac.ik.solvers.hierarchy.Level` (A v = b, or bounds lower <= A v <= upper
where a task has bounds), and its error part of damping (Levenberg-Marquardt: the displacement
the level asks for in one step, see :class:`~reljac.ik.solvers.damping.DampingPolicy`). What the
Python backend's controller solves at each step; the compiled step builds the same in C++.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..relative import Kinematics
from .compiled_step import task_overflow
from .solvers.damping import DampingPolicy
from .solvers.hierarchy import Level
from .tasks import Task


def level_system(tasks: Sequence[Task], kin: Kinematics, nv: int, damping: DampingPolicy, dt: float) -> Level:
    """The level of `tasks` at `kin`'s configuration: rows (m, nv) and right-hand sides (m,) [rad/s,
    m/s per row], bounds where a task has them, its extra damping for control period `dt` [s].
    An identity level (one posture-like task without a matrix) stays one (and is not damped).
    Raises TaskError (:func:`~reljac.ik.compiled_step.task_overflow`) where a task's rows overflow."""
    rows = [task.rows(kin) for task in tasks]
    if len(rows) == 1 and rows[0].A is None:
        r = rows[0]
        level = Level(None, r.b, identity_scale=r.identity_scale, mask=r.mask, lower=r.lower, upper=r.upper)
    else:
        for task, r in zip(tasks, rows, strict=True):
            if not (np.isfinite(r.b).all() and (r.A is None or np.isfinite(r.A).all())):
                raise task_overflow(task)
        dense = [r.dense(nv) for r in rows]
        if len(dense) == 1:
            level = Level(*dense[0])
        else:
            level = Level(np.vstack([A for A, _ in dense]), np.concatenate([b for _, b in dense]))
        if any(r.lower is not None for r in rows):  # bounds: inequality rows (equality rows: lower = upper = b)
            bounds = [r.dense_bounds(nv) for r in rows]
            level.lower = np.concatenate([lo for lo, _ in bounds])
            level.upper = np.concatenate([hi for _, hi in bounds])
    if damping.error_damping and level.identity_scale is None:  # (an identity level: undamped)
        # |b dt|^2 (dt * dt: ** raises on overflow where a product gives inf)
        with np.errstate(over="ignore"):
            parts = [float(r.feedback @ r.feedback) for r in rows]
        for task, part in zip(tasks, parts, strict=True):
            if not np.isfinite(part):  # |gain e|^2 overflows: lambda^2 = inf would stop the level and call it met
                raise task_overflow(task)
        asked = sum(parts) * (dt * dt)
        level.extra_damping = damping.error_part(asked)
    return level

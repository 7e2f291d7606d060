"""A task's rows and a level in a search's *search mode* (:mod:`reljac.ik.search.local_search`): the
controller's rows (:meth:`reljac.ik.tasks.base.Task.rows`, ``Controller._level``) with gain 1, no speed
cap and no feed-forward, bounds kept (:meth:`reljac.ik.tasks.base.Task.bound_rates` with
``search=True``). The compiled twin is ``Step::Impl::task_rows`` and ``assemble`` under
``newton`` (src/core/step_rows.cpp)."""

from __future__ import annotations

import numpy as np

from ...relative import Kinematics
from ..solvers.hierarchy import Level
from ..tasks.base import Task, TaskRows


def newton_rows(task: Task, kin: Kinematics) -> TaskRows:
    """A task's rows in search mode, as :meth:`Task.rows` with gain 1, no speed cap and no
    feed-forward: A = W J, b = -W e (masked rows dropped), or a posture's identity form (A None,
    b = -c mask e (nv,), A = c diag(mask) not built). A task with bounds keeps them as
    :meth:`Task.rows` does, from :meth:`Task.bound_rates` in search mode: b = -W (e - n) (n the
    nearest point of the bounds to e) and its rows' lower, upper = W (lower - e), W (upper - e)."""
    scale = getattr(task, "identity_scale", None)
    if scale is not None:
        mask = task.row_mask  # type: ignore[attr-defined]
        e = task.error(kin)  # type: ignore[attr-defined]
        if task.bounds is None:
            return TaskRows(None, -scale * mask * e, scale * mask * e, identity_scale=scale, mask=mask)
        b, feedback, lower, upper = task.bound_rates(e, np.zeros(len(e)), search=True)
        kept = mask > 0  # (PostureTask.rows: a band, open on masked rows)
        return TaskRows(None, mask * (scale * b), mask * (scale * feedback), identity_scale=scale, mask=mask,
                        lower=np.where(kept, scale * lower, -np.inf), upper=np.where(kept, scale * upper, np.inf))
    e, J, _ = task.compute(kin)
    kept = task.weight > 0
    w = task.weight[kept]
    A = w[:, None] * np.asarray(J)[kept]
    if task.bounds is None:
        return TaskRows(A, -w * np.asarray(e)[kept], w * np.asarray(e)[kept])
    e = np.asarray(e, dtype=float)
    b, feedback, lower, upper = task.bound_rates(e, np.zeros(len(e)), search=True)
    return TaskRows(A, w * b[kept], w * feedback[kept], lower=w * lower[kept], upper=w * upper[kept])


def level_of(rows: list[TaskRows], nv: int) -> Level:
    """The level of these tasks' rows (Controller._level): a lone identity form kept as it is,
    else the rows stacked (:meth:`TaskRows.dense`), with their bounds when one has any
    (:meth:`TaskRows.dense_bounds`: lower = upper = b on a row without)."""
    if len(rows) == 1 and rows[0].A is None:
        r = rows[0]
        return Level(None, r.b, identity_scale=r.identity_scale, mask=r.mask, lower=r.lower, upper=r.upper)
    dense = [r.dense(nv) for r in rows]
    level = Level(np.vstack([A for A, _ in dense]), np.concatenate([b for _, b in dense]))
    if any(r.lower is not None for r in rows):
        bounds = [r.dense_bounds(nv) for r in rows]
        level.lower = np.concatenate([lo for lo, _ in bounds])
        level.upper = np.concatenate([hi for _, hi in bounds])
    return level

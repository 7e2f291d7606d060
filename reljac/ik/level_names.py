"""Names in a controller's hierarchy: one task per name, and what a level's report says by name.

:func:`check_names` refuses two distinct tasks of one name (errors, reports and ``solve_many``'s
targets are keyed by name). :func:`name_reports` turns the solver's indices in a
:class:`~reljac.ik.solvers.hierarchy.LevelReport` (joints, constraint rows, a level's rows) into
the names a user reads, and says why a level not met is not met (:func:`why_unmet`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..exceptions import TaskError
from .solvers.hierarchy import LevelReport
from .tasks import Task
from .tasks.ball import row_labels

SINGULAR = 1e-3  # a level whose smallest singular value is below this is called singular in reports


def check_names(levels: Sequence[Sequence[Task]]) -> None:
    """Refuse two distinct tasks of one name: errors, reports and solve_many's targets are keyed by
    name (the same task in two levels is one task)."""
    seen: dict[str, tuple[Task, int]] = {}
    for i, level in enumerate(levels):
        for task in level:
            first = seen.setdefault(task.name, (task, i))
            if first[0] is not task:
                raise TaskError(f"two tasks are named {task.name!r} (levels {first[1]} and {i}): give one another "
                                "name (name=...): errors, reports and solve_many's targets are keyed by name")


def why_unmet(report: LevelReport) -> str:
    """Why a level not met at full scale is not met: the joints or rows saturated for it, else
    a singular level or its target out of reach (the closest point held), else the levels above."""
    held = report.saturated_joints + report.saturated_constraints
    if held:
        return f"{', '.join(held)} at {'its limit' if len(held) == 1 else 'their limits'}"
    sigma = report.smallest_singular_value
    if sigma < SINGULAR or report.damping > 0.0:
        return (f"out of reach or singular (smallest singular value {sigma:.2g}, damping {report.damping:.2g}): "
                "the closest point is held")
    return "the levels above (what they leave cannot meet it)"


def name_reports(reports: list[LevelReport], levels: Sequence[Sequence[Task]], labels: Sequence[str],
                 row_names: Sequence[str]) -> list[LevelReport]:
    """The solver's reports of `levels` (one per level, highest first) with their names filled in,
    in place: the tasks, the saturated joints (`labels`: one per velocity coordinate) and
    constraint rows (`row_names`: one per row C v <= d), what limited the level, and its rows on
    a bound. Returns `reports`."""
    for k, (report, tasks) in enumerate(zip(reports, levels, strict=True)):
        report.scale += 0.0  # -0.0 (a level scaled to nothing from below) reads as 0.0
        report.tasks = [t.name for t in tasks]
        report.saturated_joints = [labels[j] for j in report.saturated]
        report.saturated_constraints = [row_names[i] for i in report.saturated_rows]
        report.limited_by = (labels[report.limit_index] if report.limit_kind == 0 else
                             row_names[report.limit_index] if report.limit_kind == 1 else
                             "the levels above (no freedom left)" if report.limit_kind == 2 else
                             row_labels(levels[report.limit_level])[report.limit_index]
                             if report.limit_kind == 3 else
                             why_unmet(report) if not report.met else "")
        report.on_bound = sorted(set(report.active) | {i for r in reports[k + 1:] for j, i in r.held if j == k})
        if report.on_bound:  # a level with bounds: its rows at or beyond a bound, by name
            labels_ = row_labels(tasks)
            report.active_rows = [labels_[i] for i in report.active]
            report.on_bound_rows = [labels_[i] for i in report.on_bound]
    return reports

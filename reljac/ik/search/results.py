"""What searches found: :class:`IKResult` (one search's outcome, exported as ``reljac.ik.IKResult``),
the results of many searches (:meth:`reljac.ik.search.solve.Solver.solve_many`) as arrays, and what an
IKResult computes from them only when it is read: its tasks' errors and the message of an unmet
level (:class:`Explainer`, one per call, shared by its results)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...exceptions import TaskError
from ...relative import Kinematics
from ...robot import Robot
from ..level_names import check_names
from ..limits.base import Limit
from ..limits.collision import CollisionAvoidance
from ..tasks.base import Task
from .options import CONVERGED, EXHAUSTED, FAILED, TIMEOUT, SearchResult
from .targets import copies_of, set_row

AT_LIMIT = 1e-6  # [rad or m] a joint this close to a limit is at it (for the messages)
REASONS = {CONVERGED: "converged", TIMEOUT: "timeout", EXHAUSTED: "unreachable"}


@dataclass(repr=False)
class IKResult:
    """Outcome of a search (:func:`~reljac.ik.search.solve.solve`).

    q: (nq,) the configuration found (the closest one seen when not converged: lexicographically
    smallest level errors); converged: every task that counts (not postures) has its error norms
    at most tol; reason: "converged", "timeout" (the time budget ran out first) or "unreachable"
    (every local search allowed ended without converging: the closest configuration is returned);
    iterations: Newton steps in all; restarts: local searches after the first; seconds:
    wall-clock time of the search [s]; level_errors: per level, |W e| at q [m, rad, weighted; for
    a task with bounds, its weighted violation: the distance of e to its bounds]; call_seconds:
    wall-clock time of the whole call [s], which a timeout counts (``solve``: the Solver's
    set-up, the checks and the result built too; a problem of ``solve_many``: its search's, the
    budget being each search's there). Computed when
    first read, against the targets the search had: message, one line saying in words why it
    ended; errors, per task its error norms at q (:meth:`Task.error_norms`: of the violation for
    a task with bounds, 0 inside them); levels_met.
    """

    q: np.ndarray
    converged: bool
    iterations: int
    reason: str = "converged"
    restarts: int = 0
    seconds: float = 0.0
    level_errors: list[float] = field(default_factory=list)
    call_seconds: float = 0.0
    _explainer: Explainer | None = None  # the call's: what errors and message are computed from
    _index: int = 0  # this problem's in the call
    _message: str | None = None
    _errors: dict[str, dict[str, float]] | None = None

    @property
    def message(self) -> str:
        """"converged", or the first unmet level, its tasks, what ended the search, the level
        errors and the joints at a limit, in one line."""
        if self._message is None:
            self._message = ("converged" if self.converged else "" if self._explainer is None else
                             self._explainer.message(self.q, self._index, self.reason, self.restarts + 1,
                                                     self.level_errors))
        return self._message

    @property
    def levels_met(self) -> list[bool | None]:
        """Per level: its counted tasks all within tol (None: a level of postures alone)."""
        return [] if self._explainer is None else self._explainer.levels_met(self.errors)

    @property
    def errors(self) -> dict[str, dict[str, float]]:
        """Per task (by name), its error norms at q (:meth:`Task.error_norms`) [m, rad]."""
        if self._errors is None:
            self._errors = {} if self._explainer is None else self._explainer.errors(self.q, self._index)
        return self._errors

    def __repr__(self) -> str:
        return (f"IKResult(q={self.q!r}, converged={self.converged}, iterations={self.iterations}, "
                f"reason={self.reason!r}, message={self.message!r}, restarts={self.restarts}, "
                f"seconds={self.seconds!r}, call_seconds={self.call_seconds!r}, level_errors={self.level_errors!r})")


@dataclass
class SearchBatch:
    """What n searches found, row i problem i's (:class:`~reljac.ik.search.options.SearchResult`'s fields
    as arrays): q (n, nq), converged (n,) bool, reason, iterations, searches, failing (n,) int,
    level_costs (n, levels) [m^2, rad^2, weighted], seconds (n,) [s]."""

    q: np.ndarray
    converged: np.ndarray
    reason: np.ndarray
    iterations: np.ndarray
    searches: np.ndarray
    level_costs: np.ndarray
    seconds: np.ndarray
    failing: np.ndarray

    def __len__(self) -> int:
        return len(self.q)

    @classmethod
    def of(cls, found: Sequence[SearchResult]) -> SearchBatch:
        """The batch of searches run one by one (at least one)."""
        def column(name: str, dtype: Any) -> np.ndarray:
            return np.array([getattr(f, name) for f in found], dtype=dtype)

        return cls(column("q", float), column("converged", bool), column("reason", int), column("iterations", int),
                   column("searches", int), column("level_costs", float), column("seconds", float),
                   column("failing", int))

    @classmethod
    def from_core(cls, raw: Any) -> SearchBatch:
        """The batch of ``_core.search_many`` (its SearchBatch's arrays, copied)."""
        return cls(*(np.array(getattr(raw, f.name)) for f in dataclasses.fields(cls)))

    @classmethod
    def joined(cls, parts: Sequence[SearchBatch]) -> SearchBatch:
        """The batches one after the other (at least one)."""
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(cls)))

    def first_failed(self) -> int | None:
        """The first problem no configuration of which had finite rows (FAILED), or None."""
        failed = np.flatnonzero(self.reason == FAILED)
        return int(failed[0]) if len(failed) else None


class State(dict[str, Any]):
    """A task's attributes at one moment (:func:`snapshot`)."""


def snapshot(task: Task) -> State:
    """The task's attributes now, but the controllers listening and the tasks it holds (a
    BallTask's inner task: snapshot on its own): put into a copy of the task later
    (:func:`_restore`), the copy is the task as it was."""
    return State((name, value) for name, value in vars(task).items()
                 if name != "_listeners" and not isinstance(value, Task))


def _restore(twin: Task, state: State) -> None:
    """Puts a snapshot's attributes into a copy of its task (:func:`copies_of`'s: the tasks it
    holds are copies, restored from their own snapshots)."""
    vars(twin).update(state)


Problems = tuple[list[Task], list[int], np.ndarray]  # solve_many's: changed tasks, their sizes, (n, k) core targets


def check_search(failing: int | None, level_costs: Any, tasks: Sequence[Task], levels: Sequence[Sequence[Task]],
                 batch: bool = False) -> None:
    """TaskError for what searches found that no result can stand for: a search whose task
    `failing` (an index of `tasks`, -1 not known; None: none failed) had rows that were not finite
    at every configuration searched, or a level's cost (the squared norm of its weighted errors)
    that overflowed: rows finite, but weight x error beyond 1e154 (the search cannot rank what it
    finds). level_costs: (levels,) of one search, or (n, levels) of n (`batch`: the error names
    the problem)."""
    if failing is not None:
        task = tasks[failing].name if failing >= 0 else "a task"
        raise TaskError(f"task '{task}' has rows that are not finite at every configuration searched "
                        "(its weights or target overflow)")
    bad = ~np.isfinite(np.atleast_2d(np.asarray(level_costs)))
    if not bad.any():
        return
    i, k = (int(x) for x in np.argwhere(bad)[0])
    names = ", ".join(f"'{t.name}'" for t in levels[k])
    where = f"problem {i}: " if batch else ""
    raise TaskError(f"{where}level {k + 1} ({names}): its weighted errors overflow (|weight x error| must "
                    "stay below 1e154 for its square to be finite): lower the weights or the targets")


def limits_not_met(limits: Sequence[Limit], q: np.ndarray, shown: int = 3) -> str:
    """What of `limits` q (nq,) does not meet, in words: a collision avoidance's pairs nearer than
    its minimum distance (read off its collision model, which keeps no state of the searches),
    the other limits by kind."""
    pairs, others = [], []
    for limit in limits:
        if isinstance(limit, CollisionAvoidance):
            pairs += [f"{a}/{b} ({d * 1e3:.1f} mm)" for a, b, d in limit.model.pairs_below(q, limit.min_distance)]
        else:
            others.append(type(limit).__name__)
    if pairs:
        more = f" and {len(pairs) - shown} more" if len(pairs) > shown else ""
        return f"{len(pairs)} collision pair(s) nearer than their minimum distance: {', '.join(pairs[:shown])}{more}"
    if others:
        return f"the rows of {', '.join(dict.fromkeys(others))}"
    return "none held (the search's costs above its floor by rounding)"


@dataclass
class SolverView:
    """What a Solver's results read of it (the same at every call): the robot, its tasks, per
    level its tasks that count for convergence, tol [m, rad], timeout [s], the joints'
    sampling (search_restarts.sampling's (kind, lower, upper)) and the limits held above every
    level (the Solver's `constraints`)."""

    robot: Robot
    tasks: list[Task]
    levels: list[list[Task]]
    tol: float
    timeout: float | None
    sample: tuple[np.ndarray, np.ndarray, np.ndarray]
    constraints: tuple[Limit, ...] = ()


@dataclass
class Explainer:
    """What the results of one call read when first asked (their errors, the message of an unmet
    level): the solver, the tasks as they were at the call (`states`, the attributes of each task
    and of each task they are built on: copies are made from them when first needed, as the caller
    may change the tasks since), and each problem's own targets (`problems`: they replace the
    changed tasks' targets)."""

    solver: SolverView
    states: list[tuple[Task, State]]  # (task, snapshot(task)) at the call, for every task the results read
    problems: Problems | None = None

    def posed(self, index: int) -> Callable[[Task], Task]:
        """task -> the task as problem `index` had it (a copy: see the class)."""
        twins = copies_of([task for task, _ in self.states])
        for task, state in self.states:
            _restore(twins[id(task)], state)
        if self.problems is not None:
            changed, sizes, values = self.problems
            set_row([twins[id(task)] for task in changed], sizes, values[index])
        return lambda task: twins.get(id(task), task)

    def errors(self, q: np.ndarray, index: int) -> dict[str, dict[str, float]]:
        """Per task (by name), its error norms at q with problem `index`'s targets [m, rad]."""
        check_names(self.solver.levels)  # (a task renamed since: two of one name would share one entry)
        posed, kin = self.posed(index), Kinematics(self.solver.robot, q)
        return {task.name: posed(task).error_norms(kin) for task in self.solver.tasks}

    def levels_met(self, errors: dict[str, dict[str, float]]) -> list[bool | None]:
        """Per level: its counted tasks all within tol (None: a level of postures alone)."""
        tol = self.solver.tol
        return [None if not tasks else all(max(errors[t.name].values()) <= tol for t in tasks)
                for tasks in self.solver.levels]

    def message(self, q: np.ndarray, index: int, reason: str, searches: int, level_errors: list[float]) -> str:
        """Why problem `index`'s search (reason "timeout" or "unreachable", `searches` local
        searches) did not converge, in one line: the first unmet level and its tasks (or, every
        level met, the rows of the limits the configuration found violates: collision pairs,
        the support region), what ended the search, the level errors and the joints at a limit."""
        o = self.solver
        posed, kin = self.posed(index), Kinematics(o.robot, q)
        k, unmet = 0, []
        for k, tasks in enumerate(o.levels):  # noqa: B007 - k names the level after
            unmet = [t.name for t in tasks if max(posed(t).error_norms(kin).values()) > o.tol]
            if unmet:
                break
        what = (f"the time budget of {o.timeout:g} s ran out" if reason == "timeout" else
                f"{searches} local searches ended without converging")
        kind, lower, upper = o.sample
        model = o.robot.model
        at_limit = [model.names[j.id] for j in model.joints[1:] if j.nq == 1 and kind[j.idx_q] == 0 and
                    min(q[j.idx_q] - lower[j.idx_q], upper[j.idx_q] - q[j.idx_q]) < AT_LIMIT]
        limits = f"; at their limits there: {', '.join(at_limit)}" if at_limit else ""
        errors = ", ".join(f"{e:.3g}" for e in level_errors)
        if unmet:
            failed = f"level {k + 1} ({', '.join(unmet)}) not met within tol={o.tol:g}"
        else:
            failed = f"every level met within tol={o.tol:g} but not the limits: {limits_not_met(o.constraints, q)}"
        return f"{failed}: {what}; the closest configuration found is returned (level errors {errors}){limits}"

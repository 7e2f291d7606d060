"""IK that finds a pose: :class:`Solver`, :func:`solve` (one problem), :func:`solve_many` (many).

They run the search of :mod:`reljac.ik.search.local_search` (its docstring states the method): Newton steps on
the controller's strict-priority hierarchy with Levenberg-Marquardt damping, joint limits held by
saturation, restarts from random configurations, within a budget of restarts or of wall-clock
time. On the compiled backend a whole search is one C++ call (``_core.Step.search``) and many are
spread over C++ threads with the GIL released (``_core.search_many``); ``RELJAC_BACKEND=python``
runs the Python specification, which finds the same configurations from the same seeds.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...exceptions import ConfigurationError, ReljacError
from ...progress import progress_wanted
from ...robot import Robot, as_robot
from ...validation import as_count
from ..controller import Controller, as_constraints
from ..levels import as_levels
from ..limits.base import Limit
from ..limits.joints import JointPositionLimit
from ..solvers.damping import DampingPolicy
from ..tasks.base import Task
from .budget import OUTSIDE_START, OUTSIDE_WINDOW, CallShare
from .many import seed_rows_of, with_progress
from .options import SearchOptions, checked_options, checked_seed, core_options, weigh, weighted_options
from .python_search import PythonSearch
from .restarts import sampling
from .results import REASONS, Explainer, IKResult, Problems, SearchBatch, SolverView, check_search, snapshot
from .targets import core_entries, core_target, own_copies, set_row, settable_tasks, target_values

SEARCH_LIMIT_GAIN = 0.5  # a step may use half the way to a position limit: full steps slam joints onto them
UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)  # the search's: mu damps
PROGRESS_EVERY = 0.1  # [s] solve_many's bar (and Ctrl-C) is looked at this often during its one call to the core
MAX_WORKERS = 256  # solve_many's workers at most (a thread, a controller and its buffers each)


class Solver:
    """A search problem set up once, then solved from any seed, or for many targets.

    Args:
        robot: the robot.
        levels: as :class:`Controller`'s: a list of levels, highest priority first. Gains, speed
            caps and target velocities do not apply (full Newton steps); weights do, and so do
            bounds (:meth:`Task.set_bounds`, regions, :class:`~reljac.ik.tasks.ball.BallTask`): a
            task with bounds is met when its error is inside them up to tol, anywhere inside
            (docs/guide/bounds.md). The tasks are the caller's: a target or bounds changed
            between two calls are used by the next.
        tol: every counted task's error norms (of its violation, for a task with bounds) at
            most this [m, rad]; postures (a centring band too) do not count.
        max_iters: Newton iterations of one local search.
        restarts: local searches after the first (None: 20 without a timeout, no cap with one),
            each from where the last one ended with the joints at a limit drawn anew inside
            their limits, every third from a random configuration inside them.
        timeout: wall-clock budget of one search [s] (None: none); the best configuration is
            returned when it runs out. The budget is the whole call's: the search gets what the
            call's checks left, less what this Solver's recent calls spent after their searches
            (building the result, taking the GIL back: tens of us), :func:`~reljac.ik.search.budget.outside_reserve`:
            the median of the last ``OUTSIDE_WINDOW`` calls' (``OUTSIDE_START`` before the first), at most
            ``RESERVE_SHARE`` of the budget (:mod:`reljac.ik.search.budget`). One slow call (a garbage collection,
            another thread holding the GIL) does not shorten the next ones' searches. A result's
            ``seconds`` is its search's, ``call_seconds`` the whole call's, which the budget counts.
        max_step: a cap on each Newton step's largest joint displacement max_i |v_i| [rad or m]
            (None: no cap, full steps); a larger step is scaled down whole, its direction kept.
        constraints: :class:`~reljac.ik.limits.base.Limit` objects held above every level (collision
            avoidance, a support region), as in the controller. A configuration converges only
            where their rows hold at v = 0: no pair closer than its minimum distance, the centre
            of mass inside its shrunk support region up to the 0.1 mm overshoot the region holds
            (:mod:`reljac.ik.limits.support`).
        damping: a singular damping policy added to the search's own damping (default: none;
            its error-dependent part does not apply).
        position_margin: distance kept from every position limit [rad or m] (or a range's middle).
        backend: "compiled" or "python" (default: as :class:`Controller`).

    ``solve(q0, seed=0)`` and ``solve_many(seeds, targets, seed=0)`` return :class:`IKResult`
    objects; never NaN, never outside the position limits. A Solver keeps per-search state: use
    one per thread (``solve_many`` spreads its problems over threads itself).
    """

    def __init__(self, robot: Robot, levels: Any, *, tol: float = 1e-4, max_iters: int = 100,
                 restarts: int | None = None, timeout: float | None = None, constraints: Sequence[Limit] = (),
                 damping: DampingPolicy | None = None, position_margin: float = 0.0,
                 backend: str | None = None, max_step: float | None = None) -> None:
        self.options = checked_options(tol, max_iters, restarts, timeout, 0, max_step)
        constraints = tuple(as_constraints(constraints))  # (a Limit alone too)
        self._settings: dict[str, Any] = dict(  # (solve_dask's, and solve_many's copy's)
            tol=tol, max_iters=max_iters, restarts=restarts, timeout=timeout, constraints=constraints, damping=damping,
            position_margin=position_margin, backend=backend, max_step=max_step)
        self.robot = robot = as_robot(robot)
        self._levels = as_levels(levels)
        self._make = lambda: Controller(
            robot, self._levels, dt=1.0, velocity_limits=np.full(robot.nv, np.inf), limit_gain=SEARCH_LIMIT_GAIN,
            position_margin=position_margin, damping=UNDAMPED if damping is None else damping,
            constraints=constraints, backend=backend, anti_chatter=False)
        first = self._make()
        step = first.core_step
        self.compiled = step is not None and not step.has_python_parts
        self.controllers = [first]
        position = next(limit for limit in first.limits if isinstance(limit, JointPositionLimit))
        self.sample = sampling(robot, position)
        kind, lower, upper = self.sample
        self.middle = np.where(kind == 0, 0.5 * (lower + upper), robot.neutral())
        self._core_options: Any = self._to_core(self.options) if self.compiled else None
        self._lock = threading.Lock()
        self._outside: collections.deque[float] = collections.deque([OUTSIDE_START], maxlen=OUTSIDE_WINDOW)
        self._aliases: dict[int, Task] = {}  # id(a task) -> the levels' task that stands for it (solve_many's copies)
        self._private = False  # its tasks are copies no caller holds (the module's solve_many): searched as they are

    @property
    def backend(self) -> str:
        """Where the search runs: "compiled" (one C++ call) or "python"."""
        return "compiled" if self.compiled else "python"

    @property
    def settings(self) -> dict[str, Any]:
        """The keyword arguments this Solver was made with (a copy): what a Dask worker of
        :meth:`solve_many` makes its own Solver from."""
        return dict(self._settings)

    def solve_chunk(self, changed: list[Task], sizes: list[int], values: np.ndarray, seeds: np.ndarray,
                    seed: int) -> SearchBatch:
        """Problems of :meth:`solve_many` on this thread (a Dask worker's chunk), the Solver held
        for the call: `changed`, the tasks whose targets change, `sizes` their targets' sizes in
        the core, values (n, sum(sizes)) the targets, seeds one row (nq,) or one per problem;
        problem i from seed + i."""
        with self._held():
            return self._chunk(changed, sizes, values, seeds, seed, 1)

    def solve(self, q0: ArrayLike | None = None, *, seed: int = 0) -> IKResult:
        """A configuration meeting every level, searched from q0 (nq,) (None: the middle of the
        joint limits, unbounded coordinates at the neutral configuration's; a q0 outside the
        position limits starts on them: :meth:`inside`); `seed` seeds the restarts' random stream
        (the same q on one backend; the two part only by rounding: docs/guide/solve.md)."""
        return self._solve_from(time.perf_counter(), q0, seed)

    def _solve_from(self, start: float, q0: ArrayLike | None, seed: Any) -> IKResult:
        """solve(q0, seed=seed), its timeout counted from `start` (time.perf_counter() [s])."""
        q = self.middle if q0 is None else self.inside(self.robot.validate_q(q0, name="q0"))
        seed = checked_seed(seed)
        with self._held():
            call = None if self.options.timeout is None else CallShare(self.options.timeout, start, self._outside)
            result = self._solve(q, seed, call)
            end = time.perf_counter()
            result.call_seconds = end - start
            if call is not None:
                self._outside.append(call.outside(end, result.seconds))
            return result

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """The solver held for one call; another thread's call meanwhile raises."""
        if not self._lock.acquire(blocking=False):
            raise ReljacError("this Solver is in use by another thread: create one Solver per thread "
                              "(solve_many spreads problems over threads itself)")
        try:
            yield
        finally:
            self._lock.release()

    def _solve(self, q: np.ndarray, seed: int, call: CallShare | None) -> IKResult:
        """The result of one search from q within `call`'s budget (None: none). Every check and
        copy is made before the search's share is set, so that what the call keeps for after the
        search is building the result alone (:class:`~reljac.ik.search.budget.CallShare`)."""
        controller = self.controllers[0]
        counted = self.counted()
        explainer = self._explainer(None, counted)  # (the tasks as they are at the call)
        options = dataclasses.replace(weighted_options(self.options, counted), seed=seed)
        if not self.compiled:
            options = dataclasses.replace(options, timeout=None if call is None else call.share())
            return self.result(PythonSearch(controller, counted, options, self.sample).run(q), explainer)
        core_options = self._core_options
        core_options.seed = seed
        core_options.timeout = -1.0
        core_options.counted = self._counted_indices()
        weigh(core_options, options)
        step = controller.core_step
        assert step is not None
        found = step.search(q, core_options, None if call is None else call.share)  # (the core's SearchResult)
        return self.result(found, explainer)

    def solve_many(self, seeds: ArrayLike | None, targets: Sequence[Any], *, seed: int = 0,
                   workers: int | None = None, progress: bool | None = None,
                   scheduler: Any = None) -> list[IKResult]:
        """:meth:`solve` for each of `targets`, on `workers` threads (default: every core; at most
        :data:`MAX_WORKERS`, and no more threads than problems: each is a thread and a controller).

        seeds: None (every problem from the middle of the limits), one q (nq,) for all, or
        (len(targets), nq), one per problem. targets: one entry per problem (a list, or an array
        whose rows are the entries: (n, 4, 4) poses): a dict {task (object or name): target} of
        the targets that change, or a bare target for the first task of the first level; a task
        may be keyed in however many levels it is, and a task that a level's task is built on (a
        BallTask's inner task: the ball's centre) may be keyed too. Problem i uses the seed
        ``(seed + i) % 2**64``: its result equals ``solve(seeds[i], seed=(seed + i) % 2**64)`` with
        its targets set (without a timeout, whose results depend on the machine's speed; with one,
        each problem's search has the whole budget). The results' errors and messages are those of
        the tasks as the search had them, whatever is changed afterwards. progress: True (a progress
        bar on standard error), False (none) or None (the default: a bar for 1,000 problems or more
        when standard error is a terminal and ``CI`` is unset, never into a pipe or a log:
        :mod:`reljac.progress`). scheduler: None or "threads"
        (C++ threads here), "local" (a Dask LocalCluster of `workers` processes), a Dask address
        ("tcp://HOST:8786") or a distributed.Client: the same results, computed on the cluster's
        workers (:mod:`reljac.ik.search.dask_batches`; Dask is the extra ``.[scale]``; a failure of
        the cluster is a SchedulerError).

        It searches on copies of this Solver's tasks made at the call (their targets and settings
        as they are then): the tasks themselves are never changed (a task that had no target has
        none), so a controller or another Solver sharing them in another thread is not disturbed.
        """
        n_workers = (os.cpu_count() or 1) if workers is None else as_count(
            workers, "workers (threads or Dask workers)", minimum=1, maximum=MAX_WORKERS, error=ConfigurationError)
        if isinstance(targets, np.ndarray) and targets.ndim > 0:  # (n, 4, 4) poses, (n, 3) positions: n problems
            targets = list(targets)
        if isinstance(targets, (str, bytes, Mapping)) or not isinstance(targets, Sequence):
            raise ConfigurationError(f"targets must be a list with one entry per problem, got "
                                     f"{type(targets).__name__}")
        if progress is not None and not isinstance(progress, (bool, np.bool_)):
            raise ConfigurationError(f"progress must be True, False or None (on a terminal, for 1,000 problems "
                                     f"or more), "
                                     f"got {progress!r}")
        seed = checked_seed(seed)
        seed_rows = self.inside(seed_rows_of(self.robot, self.middle, seeds, len(targets)))
        if not targets:
            return []
        with self._held():
            return self._on_copies()._solve_many(targets, seed_rows, seed, n_workers, progress, scheduler)

    def _on_copies(self) -> Solver:
        """A Solver of the same settings on copies of this one's tasks (:func:`own_copies`: their
        targets as they are now; a target keyed by one of these tasks sets its copy's)."""
        if self._private:
            return self
        copies, twins = own_copies(self._levels)
        twin = Solver(self.robot, copies, **self._settings)
        twin._aliases, twin._private = twins, True
        return twin

    def _solve_many(self, targets: Sequence[Any], seed_rows: np.ndarray, seed: int, n_workers: int,
                    progress: bool | None, scheduler: Any = None) -> list[IKResult]:
        tasks = self.controllers[0].tasks
        changed, values = target_values(tasks, self.robot, targets, self._aliases)
        threads = scheduler is None or scheduler == "threads"
        if self.compiled and threads:
            while len(self.controllers) < min(n_workers, len(targets)):
                self.controllers.append(self._make())
        show = progress_wanted(progress) and (progress is not None or len(targets) >= 1000)
        if not threads:
            from .dask_batches import run_many

            return run_many(self, scheduler, changed, values, seed_rows, seed, show, n_workers)
        return self._run_many(changed, values, seed_rows, seed, show, min(n_workers, len(targets)))

    # ------------------------------------------------------------------ helpers
    def _to_core(self, options: SearchOptions) -> Any:
        from ..solvers.backend import core

        o = core_options(options, core())
        o.counted = self._counted_indices()
        o.sample_kind, o.lower, o.upper = self.sample
        return o

    def result(self, found: Any, explainer: Explainer) -> IKResult:
        """The IKResult of one search (see :meth:`results`): a SearchResult, or the core's record
        of the same fields (its q a read-only view: copied); explainer: the tasks as they were at
        the call (:meth:`_explainer`)."""
        controller = self.controllers[0]
        check_search(None if found.reason in REASONS else found.failing, found.level_costs, controller.tasks,
                     controller.levels)
        return IKResult(np.array(found.q), found.converged, found.iterations, REASONS[found.reason], found.searches - 1,
                        found.seconds, np.sqrt(found.level_costs).tolist(), found.seconds,
                        _explainer=explainer)

    def results(self, found: SearchBatch, problems: Problems | None = None) -> list[IKResult]:
        """The IKResults of searches (a TaskError for one that no result can stand for: check_search),
        built from the batch's arrays; their errors and messages are computed when first read.
        problems: solve_many's (changed tasks, their core targets' sizes, one row of core targets
        per search): each result's errors and message are for its own targets."""
        failed, controller = found.first_failed(), self.controllers[0]
        check_search(None if failed is None else int(found.failing[failed]), found.level_costs, controller.tasks,
                     controller.levels, batch=len(found.q) > 1)
        explainer = self._explainer(problems)
        reasons = [REASONS[r] for r in found.reason.tolist()]
        return [IKResult(q, converged, iterations, reason, searches - 1, seconds, level_errors, seconds,
                         _explainer=explainer, _index=i)
                for i, (q, converged, iterations, reason, searches, seconds, level_errors) in enumerate(zip(
                    found.q, found.converged.tolist(), found.iterations.tolist(), reasons, found.searches.tolist(),
                    found.seconds.tolist(), np.sqrt(found.level_costs).tolist(), strict=True))]

    def _explainer(self, problems: Problems | None, counted: list[Task] | None = None) -> Explainer:
        """What results made now read when first asked: the tasks as they are now (but for the
        targets the problems set); counted: :meth:`counted`, if known."""
        c, kept = self.controllers[0], set(map(id, self.counted() if counted is None else counted))
        view = SolverView(self.robot, c.tasks, [[t for t in level if id(t) in kept] for level in c.levels],
                          self.options.tol, self.options.timeout, self.sample, tuple(self._settings["constraints"]))
        return Explainer(view, [(t, snapshot(t)) for t in settable_tasks(view.tasks)], problems)

    def counted(self) -> list[Task]:
        """The tasks whose errors decide convergence now: every task but postures, of a weight
        that keeps a row (a task of weight 0 has none; a limit put in a level,
        :class:`~reljac.ik.tasks.regions.RegionRowsTask`, counts whatever rows its last step had:
        none, where no collision pair was near)."""
        return [t for t in self.controllers[0].tasks if t.counts_for_convergence and t.has_weight]

    def _counted_indices(self) -> list[int]:
        """The core's counted tasks: every task that counts by its kind (a task of weight 0 keeps
        no row, so its violation there is 0: it decides nothing; it stays in the flat phase's first
        level, as the Python search's structure)."""
        return [i for i, t in enumerate(self.controllers[0].tasks) if t.counts_for_convergence]

    def inside(self, q: np.ndarray) -> np.ndarray:
        """q (nq,) or rows of them with each bounded coordinate clipped into its position limits
        (as the search keeps them, `position_margin` included): a seed outside them starts the
        search on them, never is the answer."""
        kind, lower, upper = self.sample
        return np.where(kind == 0, np.clip(q, lower, upper), q)

    def _run_many(self, changed: list[Task], values: np.ndarray, seed_rows: np.ndarray, seed: int, show: bool,
                  workers: int) -> list[IKResult]:
        sizes = [len(core_target(t, self.robot)) for t in changed]
        found = with_progress(len(values), show, lambda progress: self._chunk(changed, sizes, values, seed_rows, seed,
                                                                            workers, progress))
        return self.results(found, (changed, sizes, values))

    def _chunk(self, changed: list[Task], sizes: list[int], values: np.ndarray, seeds: np.ndarray, seed: int,
               workers: int, progress: Callable[[int], None] | None = None) -> SearchBatch:
        """The searches of problems (values: (n, k) core targets; seeds: one row, or one per
        problem), problem i from seed + i, on `workers` threads in one call to the core; progress:
        called with the number of problems finished, now and then (on the Python backend after
        each)."""
        weighted = weighted_options(self.options, self.counted())
        if not self.compiled:
            out = []
            for i, row in enumerate(values):
                set_row(changed, sizes, row)
                options = dataclasses.replace(weighted, seed=(seed + i) % 2**64)
                q = seeds[0 if len(seeds) == 1 else i]
                out.append(PythonSearch(self.controllers[0], self.counted(), options, self.sample).run(q))
                if progress is not None:
                    progress(i + 1)
            return SearchBatch.of(out)
        from ..solvers.backend import core

        steps = [c.core_step.prepared_core() for c in self.controllers[:workers]]  # type: ignore[union-attr]
        indices, offsets, widths = core_entries(self.controllers[0].tasks, changed, sizes)
        core_options = self._core_options
        core_options.seed = seed
        core_options.timeout = -1.0 if self.options.timeout is None else self.options.timeout  # (solve's: less)
        core_options.counted = self._counted_indices()
        weigh(core_options, weighted)
        return SearchBatch.from_core(core().search_many(steps, indices, offsets, widths, values, seeds, core_options,
                                                        progress=progress, every=PROGRESS_EVERY))


def solve(robot: Robot, q0: ArrayLike | None, levels: Any, *, tol: float = 1e-4, max_iters: int = 100,
          restarts: int | None = None, timeout: float | None = None, seed: int = 0,
          constraints: Sequence[Limit] = (), damping: DampingPolicy | None = None, position_margin: float = 0.0,
          backend: str | None = None, max_step: float | None = None) -> IKResult:
    """A configuration meeting every level (a task with bounds: its error inside them), found from
    q0: ``Solver(robot, levels, ...).solve(q0, seed=seed)`` (see :class:`Solver` for the
    arguments; set a Solver up once to solve many times). The timeout counts from this call, the
    Solver's set-up included.

    Raises:
        TaskError: a bad tol, max_iters, restarts, timeout, max_step or seed, or a task whose rows
            are not finite anywhere searched (the rule: :mod:`reljac.validation`).
        ConfigurationError: a bad q0, robot or option.
    """
    start = time.perf_counter()
    solver = Solver(robot, levels, tol=tol, max_iters=max_iters, restarts=restarts, timeout=timeout,
                    constraints=constraints, damping=damping, position_margin=position_margin, backend=backend,
                    max_step=max_step)
    return solver._solve_from(start, q0, seed)


def solve_many(robot: Robot, seeds: ArrayLike | None, levels: Any, targets: Sequence[Any], *,
               workers: int | None = None, progress: bool | None = None, tol: float = 1e-4, max_iters: int = 100,
               restarts: int | None = None, timeout: float | None = None, seed: int = 0,
               constraints: Sequence[Limit] = (), damping: DampingPolicy | None = None,
               position_margin: float = 0.0, backend: str | None = None, scheduler: Any = None,
               max_step: float | None = None) -> list[IKResult]:
    """:meth:`Solver.solve_many` (on copies of the levels' tasks: the caller's are not touched):
    one :class:`IKResult` per target, on every core or on a Dask cluster (`scheduler`: see
    :meth:`Solver.solve_many`; :class:`Solver` for the other arguments)."""
    copies, twins = own_copies(as_levels(levels))  # (one Solver, on copies: a Solver's set-up is a pin.Data)
    solver = Solver(robot, copies, tol=tol, max_iters=max_iters, restarts=restarts, timeout=timeout,
                    constraints=constraints, damping=damping, position_margin=position_margin, backend=backend,
                    max_step=max_step)
    solver._aliases, solver._private = twins, True
    return solver.solve_many(seeds, targets, seed=seed, workers=workers, progress=progress, scheduler=scheduler)


"""``solve_many`` beyond one machine: the problems in chunks on a Dask cluster
(:meth:`Solver.solve_many(..., scheduler=...) <reljac.ik.search.solve.Solver.solve_many>`).

The schedulers are the capability maps' (:mod:`reljac.dask_client`): ``"local"`` (a
``LocalCluster`` of ``workers`` single-threaded processes), a Dask address or a
``distributed.Client``; ``None`` and ``"threads"`` never reach this module (C++ threads in this
process). Dask is imported only here, on a call.

What travels: a :class:`Recipe` (the robot, copies of the levels' tasks, the constraints, the
options), scattered once to every worker, from which each worker (each worker thread) builds a
:class:`~reljac.ik.search.solve.Solver` once and keeps it for the next chunks of the same call; then
per chunk the problems' targets as the core holds them (``many_targets``), their seeds and the
first problem's seed. A chunk runs on the worker's Solver as the threaded path runs it (one
thread), so problem i of the call searches from the same seed ``seed + i`` and finds the same
configuration (without a timeout); the :class:`~reljac.ik.IKResult` objects are made
here, in order. At most ``2 * workers`` chunks are in flight. A failure of the cluster is one
:class:`~reljac.exceptions.SchedulerError`; reljac's own errors arrive as they are.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import pickle
import threading
import uuid
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ...dask_client import check_scheduler, describe, make_client, raise_task_error
from ...exceptions import ConfigurationError, ReljacError, SchedulerError
from ...robot import Robot
from ..tasks.base import Task
from .results import SearchBatch
from .targets import copies_of, core_target, own_copy


class SolverParts(Protocol):
    """What this module reads of a :class:`~reljac.ik.search.solve.Solver` (which imports it: named here
    as a Protocol, as the architecture's rule for a room that a room it serves imports)."""

    robot: Robot
    compiled: bool
    controllers: list[Any]

    @property
    def backend(self) -> str: ...

    @property
    def settings(self) -> dict[str, Any]: ...

    def results(self, found: SearchBatch, problems: Any = None) -> list[Any]: ...

    def solve_chunk(self, changed: list[Task], sizes: list[int], values: np.ndarray, seeds: np.ndarray,
                    seed: int) -> SearchBatch: ...

CONNECT_TIMEOUT = 10.0  # [s] for a scheduler address to answer (as the capability maps' default)
CHUNK_MIN, CHUNK_MAX = 16, 256  # problems per chunk: enough to hide a task's overhead, few for progress
KEPT_RECIPES = 2  # a worker keeps the Solvers (one per thread) of the recipes it used last


@dataclasses.dataclass(frozen=True)
class CollisionRecipe:
    """A :class:`~reljac.ik.CollisionAvoidance` as what it is made of (its CollisionModel holds
    coal objects that do not pickle): the model's pairs and obstacles, and its distances."""

    state: Any  # reljac.collision.state.CollisionState
    min_distance: float
    influence_distance: float
    gain: float
    margin: float

    def build(self, robot: Robot) -> Any:
        from ...collision.state import restore
        from ..limits.collision import CollisionAvoidance

        return CollisionAvoidance(robot, model=restore(robot, self.state), min_distance=self.min_distance,
                                  influence_distance=self.influence_distance, gain=self.gain, margin=self.margin)


@dataclasses.dataclass(frozen=True)
class Recipe:
    """What a worker builds the caller's Solver from: the robot; `parts`, the pickled levels
    (copies of the tasks, their current targets: one copy per task, however many levels hold it,
    a ball's inner task the copy of that task), the tasks whose targets change (of those copies)
    and the constraints (copies, or a :class:`CollisionRecipe`): each worker thread unpickles its
    own; the Solver's keyword arguments and class (pickled by its name)."""

    kind: type
    key: str
    robot: Robot
    parts: bytes
    settings: dict[str, Any]

    def solver(self) -> tuple[SolverParts, list[Task]]:
        """A Solver of the recipe on tasks of its own, and its tasks whose targets change."""
        levels, changed, given, tasks, heard = pickle.loads(self.parts)
        for i, name in heard:  # a task hears the tasks it holds again (a ball, its inner task)
            vars(tasks[i])[name].listen(tasks[i])
        constraints = [c.build(self.robot) if isinstance(c, CollisionRecipe) else c for c in given]
        made: SolverParts = self.kind(self.robot, levels, constraints=constraints, **self.settings)
        return made, changed


def recipe(solver: SolverParts, changed: list[Task]) -> Recipe:
    """The Recipe of `solver` (checked to pickle: ConfigurationError naming what does not)."""
    from ..limits.collision import CollisionAvoidance

    settings = {**solver.settings, "backend": solver.backend if solver.compiled else solver.controllers[0].backend}
    given = settings.pop("constraints")
    constraints = []
    for limit in list(given) if isinstance(given, (list, tuple)) else [given]:
        if isinstance(limit, CollisionAvoidance):
            from ...collision.state import collision_state

            constraints.append(CollisionRecipe(collision_state(limit.model), limit.min_distance,
                                               limit.influence_distance, limit.gain, limit.margin))
        else:
            constraints.append(own_copy(limit))  # type: ignore[arg-type]
    controller = solver.controllers[0]
    twins = copies_of(controller.tasks + changed)
    tasks = list(twins.values())
    heard = [(i, name) for i, task in enumerate(tasks) for name, value in vars(task).items()
             if isinstance(value, Task) and value.listened_by(task)]
    for task in tasks:  # (weak references do not pickle: the worker makes them again from `heard`)
        task.drop_listeners()
    levels = [[twins[id(t)] for t in level] for level in controller.levels]
    for what, sent in (("task", list(twins.values())), ("constraint", constraints)):
        for part in sent:
            try:
                pickle.dumps(part)
            except Exception as exc:
                name = getattr(part, "name", type(part).__name__)
                raise ConfigurationError(f"{what} {name!r} cannot be sent to Dask workers ({type(exc).__name__}: "
                                         f"{exc}); solve it with scheduler=None (threads)") from None
    parts = pickle.dumps((levels, [twins[id(t)] for t in changed], constraints, tasks, heard))
    return Recipe(type(solver), uuid.uuid4().hex, solver.robot, parts, settings)


# ---------------------------------------------------------------------------- on a worker
_SOLVERS: collections.OrderedDict[str, dict[int, tuple[SolverParts, list[Task]]]] = collections.OrderedDict()
# recipe -> thread -> its Solver and tasks whose targets change
_SOLVERS_LOCK = threading.Lock()


def worker_solver(made: Recipe) -> tuple[SolverParts, list[Task]]:
    """This thread's Solver of the recipe and its tasks whose targets change, built on its first
    chunk and kept for the next."""
    thread = threading.get_ident()
    with _SOLVERS_LOCK:
        solvers = _SOLVERS.setdefault(made.key, {})
        _SOLVERS.move_to_end(made.key)
        while len(_SOLVERS) > KEPT_RECIPES:
            _SOLVERS.popitem(last=False)
        built = solvers.get(thread)
    if built is None:
        built = solvers[thread] = made.solver()
    return built


def run_chunk(made: Recipe, values: np.ndarray, seeds: np.ndarray, seed: int) -> SearchBatch:
    """The searches of one chunk (problem k from seed + k), as the threaded path runs them."""
    solver, changed = worker_solver(made)
    sizes = [len(core_target(t, solver.robot)) for t in changed]
    return solver.solve_chunk(changed, sizes, values, seeds, seed)


# ---------------------------------------------------------------------------- here
def chunk_size(n: int, workers: int) -> int:
    """Problems per chunk: about four chunks per worker, within [CHUNK_MIN, CHUNK_MAX]."""
    return int(min(CHUNK_MAX, max(CHUNK_MIN, -(-n // (4 * workers)))))


def run_many(solver: SolverParts, scheduler: Any, changed: list[Task], values: np.ndarray, seed_rows: np.ndarray,
             seed: int, show: bool, workers: int) -> list[Any]:
    """The IKResults of every problem (values: (n, k) core targets), in order, computed on Dask."""
    from tqdm.auto import tqdm

    check_scheduler(scheduler, ConfigurationError)
    made = recipe(solver, changed)
    client, created = make_client(scheduler, workers, CONNECT_TIMEOUT, what="solve_many")  # SchedulerError
    n = len(values)
    try:
        with tqdm(total=n, disable=not show, unit="pose", desc=f"solve_many on {describe(scheduler)}") as bar:
            found = _stream(client, made, values, seed_rows, seed, workers, bar.update)
    except ReljacError:
        raise
    except (Exception, asyncio.CancelledError) as exc:  # a worker died, the scheduler went away, ...
        text = str(exc).strip()
        raise SchedulerError(f"the Dask cluster failed during solve_many ({type(exc).__name__}: "
                             f"{text.splitlines()[0] if text else 'no detail'}); run it again, or with "
                             "scheduler=None to use local threads") from None
    finally:
        if client is not scheduler:
            client.close()
        for thing in created:
            thing.close()
    sizes = [len(core_target(t, solver.robot)) for t in changed]
    return solver.results(found, (changed, sizes, values))


def _stream(client: Any, made: Recipe, values: np.ndarray, seed_rows: np.ndarray, seed: int, workers: int,
            on_progress: Callable[[int], Any]) -> SearchBatch:
    import distributed

    n = len(values)
    n_workers = max(1, len(client.scheduler_info(n_workers=-1).get("workers", {})) or workers)
    size = chunk_size(n, n_workers)
    starts = iter(range(0, n, size))
    parts: dict[int, SearchBatch] = {}
    with client.as_current():  # as_completed looks the client up
        # a key of its own (hash=False), as the maps' job: a call stopped midway releases it
        shipped = client.scatter(made, broadcast=True, hash=False, timeout=max(CONNECT_TIMEOUT, 60.0))
        begun: dict[str, int] = {}

        def submit(start: int) -> Any:
            stop = min(n, start + size)
            seeds = seed_rows if len(seed_rows) == 1 else seed_rows[start:stop]
            future = client.submit(run_chunk, shipped, values[start:stop], seeds, (seed + start) % 2**64, pure=False)
            begun[future.key] = start
            return future

        stream = distributed.as_completed([submit(s) for _, s in zip(range(2 * n_workers), starts, strict=False)])
        try:
            for future in stream:
                if future.status == "error":
                    raise_task_error(future, "a solve_many chunk")
                start = begun.pop(future.key)
                parts[start] = future.result()
                on_progress(len(parts[start]))
                nxt = next(starts, None)
                if nxt is not None:
                    stream.add(submit(nxt))
        finally:  # stopped midway (an error, Ctrl-C): the chunks still in flight are dropped
            left = [f for f in stream.futures if not f.done()]
            if left:
                client.cancel(left)
    return SearchBatch.joined([parts[start] for start in sorted(parts)])

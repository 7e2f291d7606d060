"""Where the chunks of a capability map run, and the streaming merge of their results.

``scheduler``:

* ``None`` or ``"threads"`` (the default): a pool of ``workers`` threads in this process; the
  compiled reduction releases the GIL, so threads scale over cores. Needs nothing but reljac.
* ``"local"``: a Dask ``LocalCluster`` of ``workers`` single-threaded processes on this machine.
* ``"tcp://HOST:8786"`` (any Dask address): an existing Dask cluster, whose workers must have
  reljac installed; or a ``distributed.Client``. Dask is the optional extra ``reljac[scale]``.

At most ``2 * workers`` chunks are in flight, so memory does not grow with the number of
samples; the job (robot model, grid, directions) is sent once per worker. With threads, each
chunk's result is merged into the map's arrays as it arrives. On Dask, results stay on the
workers and are merged there pairwise as they finish (a tree reduction: the merge is
order-independent), so the client receives one partial result at the end, not one per chunk.
A failure of the cluster (a worker that dies, a scheduler that goes away) is one
:class:`~reljac.exceptions.SchedulerError`, never a raw Dask exception; connecting is
:mod:`reljac.dask_client`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
from collections.abc import Callable, Iterable
from typing import Any

from ..dask_client import check_scheduler as check_any_scheduler
from ..dask_client import describe, make_client, raise_task_error
from ..exceptions import MapError, ReljacError, SchedulerError
from .kernel import Job, Partial, merge_partials, run_chunk

__all__ = ["check_scheduler", "describe", "run"]


class _CallerError(Exception):
    """An exception raised by the caller's own callback, carried through the Dask wrapper."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _passing(callback: Callable) -> Callable:
    def call(*args: Any) -> Any:
        try:
            return callback(*args)
        except Exception as exc:
            raise _CallerError(exc) from exc
    return call


def check_scheduler(scheduler: Any) -> None:
    """MapError for a scheduler that is neither None, 'threads', 'local', an address nor a Client."""
    check_any_scheduler(scheduler, MapError)


def run(job: Any, chunks: Iterable[tuple[int, int]], on_result: Callable[[Any], None],
        on_progress: Callable[[int], None], *, scheduler: Any, workers: int, connect_timeout: float,
        chunk: Callable[..., Any] | None = None, merge: Callable[[list], Any] | None = None) -> None:
    """Run every chunk (start, stop) of the job; pass results (one per chunk, or merged ones) to
    on_result and the size of each finished chunk to on_progress, both in this thread.

    `chunk(job, start, stop)` computes a chunk's partial result (with its count of ``samples``)
    and `merge(partials)` merges several in any order (default: a capability map's; the pose maps
    of :mod:`reljac.placement` pass their own; module-level functions, for Dask)."""
    chunk = run_chunk if chunk is None else chunk  # (looked up now: a test may stand in for run_chunk)
    merge = merge_partials if merge is None else merge
    if scheduler is None or scheduler == "threads":
        _run_threads(job, chunks, on_result, on_progress, workers, chunk)
    else:
        _run_dask(job, chunks, on_result, on_progress, scheduler, workers, connect_timeout, chunk, merge)


def _run_threads(job: Job, chunks: Iterable[tuple[int, int]], on_result: Callable[[Partial], None], on_progress: Any,
                 workers: int, chunk: Callable[..., Any] = run_chunk) -> None:
    pending: set[cf.Future] = set()
    todo = iter(chunks)
    with cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reljac-map") as pool:
        try:
            for start, stop in todo:
                pending.add(pool.submit(chunk, job, start, stop))
                if len(pending) >= 2 * workers:
                    break
            while pending:
                done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    part = future.result()
                    on_result(part)
                    on_progress(part.samples)
                    nxt = next(todo, None)
                    if nxt is not None:
                        pending.add(pool.submit(chunk, job, *nxt))
        except BaseException:
            for future in pending:
                future.cancel()
            raise


def _run_dask(job: Job, chunks: Iterable[tuple[int, int]], on_result: Callable[[Partial], None], on_progress: Any,
              scheduler: Any, workers: int, connect_timeout: float, chunk: Callable[..., Any] = run_chunk,
              merge: Callable[[list], Any] = merge_partials) -> None:
    client, created = make_client(scheduler, workers, connect_timeout)  # SchedulerError
    owned = client is not scheduler
    try:
        _stream(client, job, chunks, _passing(on_result), _passing(on_progress), workers, connect_timeout, chunk,
                merge)
    except _CallerError as passed:
        raise passed.error from None
    except ReljacError:
        raise
    except (Exception, asyncio.CancelledError) as exc:  # a worker died, the scheduler went away, ...
        raise SchedulerError(f"the Dask cluster failed during the map ({type(exc).__name__}: "
                             f"{str(exc).strip().splitlines()[0] if str(exc).strip() else 'no detail'}); "
                             "run it again, or without a scheduler (scheduler=None, or no --scheduler on the command "
                             "line) to use local threads") from None
    finally:
        if owned:
            client.close()
        for thing in created:
            thing.close()


def _stream(client: Any, job: Job, chunks: Iterable[tuple[int, int]], on_result: Callable[[Partial], None],
            on_progress: Any, workers: int, connect_timeout: float, run_one: Callable[..., Any] = run_chunk,
            merge: Callable[[list], Any] = merge_partials) -> None:
    import distributed

    n_workers = max(1, len(client.scheduler_info(n_workers=-1).get("workers", {})) or workers)
    with client.as_current():  # as_completed looks the client up
        # a key of its own (hash=False): a map stopped midway releases its job while the same job
        # hashed to the same key would be scattered again by the next map (lost dependencies)
        job_future = client.scatter(job, broadcast=True, hash=False, timeout=max(connect_timeout, 60.0))
        todo = iter(chunks)
        sizes: dict[str, int] = {}

        def submit(chunk):
            future = client.submit(run_one, job_future, *chunk, pure=False)
            sizes[future.key] = chunk[1] - chunk[0]
            return future

        first = zip(range(2 * n_workers), todo, strict=False)  # at most 2 chunks per worker in flight
        stream = distributed.as_completed([submit(c) for _, c in first])
        finished = []  # results on the workers, not merged yet
        for future in stream:
            if future.status == "error":
                raise_task_error(future, "a map task")
            if future.key in sizes:
                on_progress(sizes.pop(future.key))
                nxt = next(todo, None)
                if nxt is not None:
                    stream.add(submit(nxt))
            finished.append(future)
            if len(finished) == 2:
                stream.add(client.submit(merge, finished, pure=False))
                finished = []
        for future in finished:  # the one left: every chunk merged
            on_result(future.result())

"""A Dask client for work spread over a cluster (capability maps, ``solve_many``), with every wait
on the scheduler bounded.

* ``None`` or ``"threads"``: no Dask at all (the caller's own threads); :func:`check_scheduler`
  refuses anything that is neither that, ``"local"``, an address nor a ``distributed.Client``.

* ``"local"``: a ``LocalCluster`` of single-threaded worker processes. Dask starts them with
  multiprocessing's *spawn*, which imports the ``__main__`` script again in each worker: a script
  that calls the map outside an ``if __name__ == "__main__":`` block would run it (and start
  another cluster) in every worker. :func:`check_main_guard` refuses that case in one line
  before any process starts.
* an address: its scheme must be one Dask speaks (``tcp://``, ``tls://``, ``ws://``, ``wss://``,
  ``ucx://``, ``inproc://``). Before a ``distributed.Client`` exists (a half-made Client prints a
  traceback from ``__del__`` and waits for its own close), :func:`probe` connects and asks the
  server who it is, giving up after ``connect_timeout`` seconds: a port that refuses, a listener
  that accepts and never answers, and a server that is not a Dask scheduler are each one
  :class:`~reljac.exceptions.SchedulerError`.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures as cf
import contextlib
import logging
import signal
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

from .exceptions import ReljacError, SchedulerAddressError, SchedulerError

DASK_HINT = "pip install '.[scale]' in the reljac folder, or pip install 'dask[distributed]'"
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
LOOPBACK = "127.0.0.1"
GUARD = 'put the code that runs the {what} under `if __name__ == "__main__":` (see docs/guide/maps.md)'


def local_servers() -> dict[str, Any]:
    """The keyword arguments that keep a ``LocalCluster``'s (or a local ``distributed.Client``'s)
    servers on this machine: its HTTP server (health checks; the dashboard when bokeh is
    installed) on loopback, on a port the OS picks, without the dashboard. The scheduler itself
    listens on loopback by default. (``dashboard_address=None`` does not do it with distributed
    2026.x: the HTTP server still starts, on every interface, at port 8787, or another one with a
    "Port 8787 is already in use" warning when something holds 8787.)"""
    return {"dashboard_address": f"{LOOPBACK}:0", "scheduler_kwargs": {"dashboard": False}}


def check_scheduler(scheduler: Any, error: type[ReljacError]) -> None:
    """Raise `error` unless the scheduler is None, 'threads', 'local', an address or a Client
    (without importing Dask)."""
    if scheduler is None or (isinstance(scheduler, str) and scheduler.strip()):
        return
    if type(scheduler).__name__ == "Client" and type(scheduler).__module__.startswith("distributed"):
        return
    raise error(f"scheduler must be None, 'threads', 'local', a Dask address such as 'tcp://HOST:8786' "
                f"or a distributed.Client, not {scheduler!r}")


def raise_task_error(future: Any, what: str) -> None:
    """Raise a failed Dask task's exception: reljac's own as it is, anything else as a
    SchedulerError naming `what` failed ("a map task")."""
    exc = future.exception()
    if isinstance(exc, ReljacError):
        raise exc
    raise SchedulerError(f"{what} failed on a Dask worker ({type(exc).__name__}: {exc}); the workers need "
                         "reljac installed, with the same version as here") from None


def describe(scheduler: Any) -> str:
    """The scheduler as shown to the user: "threads", the string given, or the Client's type."""
    if scheduler is None or scheduler == "threads":
        return "threads"
    return scheduler if isinstance(scheduler, str) else type(scheduler).__name__


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and \
        any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def unguarded_main_line() -> tuple[str, int] | None:
    """(script, line) when the ``__main__`` script's top level is running, on that line, outside an
    ``if __name__ == "__main__":`` block; None when spawned workers would not run this call again
    (a guarded call, an interactive session, ``python -c``, a call from a thread, or a source that
    cannot be read)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not isinstance(path, str):
        return None
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == "<module>" and frame.f_globals is main.__dict__):
        frame = frame.f_back
    if frame is None:
        return None
    line = frame.f_lineno
    try:
        with open(path, "rb") as file:
            tree = ast.parse(file.read())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test) and \
                node.lineno <= line <= (node.end_lineno or node.lineno):
            return None
    return path, line


def check_main_guard(what: str = "map") -> None:
    """SchedulerError when a LocalCluster's spawned workers would run this script's call (a `what`:
    "map", "solve_many") again."""
    import dask

    if dask.config.get("distributed.worker.multiprocessing-method", "spawn") == "fork":
        return
    found = unguarded_main_line()
    if found is not None:
        path, line = found
        raise SchedulerError(f"scheduler='local' starts worker processes that import {path} again and would "
                             f"run its line {line} (this {what}) in each of them: {GUARD.format(what=what)}")


def check_address(address: str) -> None:
    """SchedulerError unless `address` reads as a Dask address with a scheme Dask speaks."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address, strict=False)
        if scheme not in SCHEMES:
            raise ValueError(f"its scheme is {scheme}://")
        if scheme in ("tcp", "tls", "ws", "wss", "ucx"):
            parse_host_port(location)
    except (ValueError, TypeError) as exc:
        hint = "; http:// is the dashboard's, not the scheduler's" if address.lower().startswith("http") else ""
        raise SchedulerAddressError(f"{address!r} is not a Dask scheduler address ({exc}{hint}); use "
                                    "tcp://HOST:PORT (e.g. tcp://HOST:8786; also tls://, ws://, wss://), 'local', "
                                    "or no scheduler (threads here)") from None


async def _identity(address: str, timeout: float) -> Any:
    import distributed
    from distributed.comm import connect

    comm = await connect(address, timeout=timeout, **distributed.Security().get_connection_args("client"))
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def probe(address: str, timeout: float) -> None:
    """Ask the server at `address` who it is, within `timeout` seconds; SchedulerError unless a
    Dask scheduler answers. Runs on its own thread and event loop (the caller may have one)."""
    def ask() -> Any:
        return asyncio.run(asyncio.wait_for(_identity(address, timeout), timeout))

    with cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="reljac-probe") as pool:
        try:
            reply = pool.submit(ask).result()
        except (asyncio.TimeoutError, TimeoutError):
            raise SchedulerError(f"no Dask scheduler answered at {address!r} within {timeout:g} s (the connection "
                                 "was made or tried, but no scheduler replied); start one with `dask scheduler` "
                                 "or use no scheduler to run here") from None
        except (Exception, asyncio.CancelledError) as exc:  # whatever a server that is not Dask's made it do
            raise SchedulerError(f"no Dask scheduler answered at {address!r} within {timeout:g} s "
                                 f"({_first_line(exc)}); start one with `dask scheduler` or use no "
                                 "scheduler to run here") from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        raise SchedulerError(f"the server at {address!r} is {'a Dask ' + kind if kind else 'not Dask'}, not a Dask "
                             "scheduler; give the scheduler's address (tcp://HOST:8786 by default)")


@contextlib.contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """SIGINT ignored while a LocalCluster starts its worker processes, which inherit that (Python
    keeps an inherited SIG_IGN): Ctrl-C then reaches this process only, which closes the cluster,
    instead of every worker dying with its own traceback. Only from the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def make_client(scheduler: Any, workers: int, connect_timeout: float, what: str = "map") -> tuple[Any, list]:
    """(client, things to close): a Client for the scheduler, and what this call created; `what`
    names the call in the message of :func:`check_main_guard` ("map", "solve_many").

    Raises:
        SchedulerError: Dask is not installed, a LocalCluster from an unguarded script, a bad
            address, or no scheduler answering there within `connect_timeout` seconds.
    """
    try:
        import distributed
    except ImportError:
        raise SchedulerError(f"scheduler={describe(scheduler)!r} needs Dask: {DASK_HINT}") from None
    if isinstance(scheduler, distributed.Client):
        return scheduler, []
    if scheduler == "local":
        check_main_guard(what)
        with _workers_ignore_ctrl_c():
            # its processes log nothing below CRITICAL: a failed map (or solve_many) reaches the caller as one
            # SchedulerError, and the workers' ERROR lines are shutdown races (a heartbeat to the
            # closing scheduler printed a traceback once, at load 3)
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                               silence_logs=logging.CRITICAL, **local_servers())
        return distributed.Client(cluster, set_as_default=False), [cluster]
    check_address(scheduler)
    probe(scheduler, connect_timeout)
    try:
        client = distributed.Client(scheduler, timeout=f"{connect_timeout}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise SchedulerError(f"no Dask scheduler answered at {scheduler!r} within {connect_timeout:g} s "
                             f"({_first_line(exc)}); start one with `dask scheduler` or use no scheduler "
                             "to run here") from None
    return client, []

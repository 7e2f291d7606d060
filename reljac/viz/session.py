"""A meshcat session: the server a view talks to (started and owned, or joined), and its lifecycle.

:class:`Session` is what every meshcat view shares, whatever it draws: connect to a server
(start one in a subprocess, or join one by its ZMQ address), say whether browser pages are
connected, turn a dead server's socket errors into one-line errors, and close (stopping a server
it started, also when the Python process exits). :class:`~reljac.viz.Viewer` draws a robot in one.
"""

from __future__ import annotations

import atexit
import contextlib
import html
import time
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, TypeVar

import zmq

from ..exceptions import ConfigurationError, ReljacError
from ..validation import as_float
from .server import LOOPBACK, Server, ask_web_url, connect

MAX_WAIT = 1e6  # [s] the longest wait for a browser (a timed wait beyond the platform's time_t fails)

if TYPE_CHECKING:  # pragma: no cover
    import meshcat

_live_sessions: weakref.WeakSet[Session] = weakref.WeakSet()
_S = TypeVar("_S", bound="Session")


@atexit.register
def _close_all_sessions() -> None:
    for session in list(_live_sessions):
        session.close()


def page_iframe(url: str, title: str, height: int) -> str:
    """HTML of the page at `url` in an iframe `height` px tall and as wide as it may be, resizable:
    what Jupyter shows for a view (``_repr_html_``). `title` is plain text (escaped here)."""
    return (f'<div style="height: {int(height)}px; width: 100%; overflow: hidden; resize: both">'
            f'<iframe src="{html.escape(url, quote=True)}" title="{html.escape(title, quote=True)}" '
            'style="width: 100%; height: 100%; border: none"></iframe></div>')


class Session:
    """A connection to a meshcat server (see the module docstring); closed until :meth:`connect`.

    Attributes:
        url: the page to open, ``http://127.0.0.1:PORT/static/``.
        zmq_url: the server's ZMQ address (pass it to another view to share the scene).
        viewer: the ``meshcat.Visualizer`` (scene root).
    """

    _closed = True  # until connected: close() and __del__ then do nothing harmful
    _server: Server | None = None
    viewer: meshcat.Visualizer
    zmq_url: str
    url: str

    def connect(self, zmq_url: str | None, host: str | None = None) -> None:
        """Start a server subprocess owned by this session (`zmq_url` None), or join the one at
        `zmq_url` (e.g. ``"tcp://127.0.0.1:6000"``). The page of a server started here listens
        on `host` (default: 127.0.0.1, this machine only; '0.0.0.0' every IPv4 interface).

        Raises:
            ReljacError: the server could not be started or reached. ConfigurationError: a bad host,
                or a host with a zmq_url.
        """
        if host is not None and zmq_url is not None:
            raise ConfigurationError("host is the address of a server this viewer starts; a joined server "
                              f"({zmq_url}) listens where it was started")
        if zmq_url is None:
            self._server = Server(LOOPBACK if host is None else host)
            zmq_url, web_url = self._server.zmq_url, self._server.web_url
        else:
            web_url = ask_web_url(zmq_url)
        self.viewer = connect(zmq_url, web_url)
        self.zmq_url, self.url = zmq_url, web_url
        self._closed = False
        _live_sessions.add(self)

    def describe(self) -> str:
        """What this session shows, for messages ("viewer of robot 'dual_arm'")."""
        return "meshcat session"

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def browsers(self) -> int | None:
        """Browser pages connected now (None when joining a server this viewer did not start)."""
        return None if self._server is None else self._server.browsers

    def wait_for_browser(self, timeout: float) -> bool:
        """Wait until a browser page is connected, at most `timeout` [s]; True if one is.

        On a joined server (whose connections this viewer cannot see), wait `timeout` and
        return False.
        """
        timeout = as_float(timeout, "wait_for_browser's timeout [s]", minimum=0.0,
                           valid=f"a number of seconds in [0, {MAX_WAIT:g}]", error=ConfigurationError)
        if timeout > MAX_WAIT:
            raise ConfigurationError(f"wait_for_browser's timeout [s] must be a number of seconds in "
                                     f"[0, {MAX_WAIT:g}], got {timeout:g}")
        if self._server is None:
            time.sleep(timeout)
            return False
        return self._server.wait_for_browser(timeout)

    def close(self) -> None:
        """Disconnect, and stop the server if this viewer started it (which frees its ports).

        Idempotent. A joined server (``zmq_url`` given) keeps running and keeps the scene.
        """
        self._closed = True
        _live_sessions.discard(self)
        viewer = getattr(self, "viewer", None)
        if viewer is not None:
            with contextlib.suppress(Exception):
                viewer.window.zmq_socket.close(linger=0)
        if self._server is not None:
            self._server.stop()
            self._server = None

    @contextlib.contextmanager
    def batch(self, wait: bool = True) -> Iterator[None]:
        """Send the meshcat commands of the block together, in order, when it ends: one round trip
        to the server instead of one per command (:mod:`reljac.viz.batching`). Blocks nest.

        `wait` (the outermost block's): wait for the server's answer; False returns once the
        batch is sent (the answer is read before the next command: a control loop never waits
        for a busy server).

        Raises:
            ReljacError: this session is closed, or its server did not answer.
        """
        batched = getattr(self.viewer.window, "batched", None) if not self._closed else None
        with self._talking(), (batched(wait) if batched is not None else contextlib.nullcontext()):
            yield

    @contextlib.contextmanager
    def _talking(self) -> Iterator[None]:
        """Turn meshcat's socket errors into ReljacError (a dead server would block forever)."""
        if self._closed:
            raise ReljacError(f"this {self.describe()} is closed")
        try:
            yield
        except zmq.ZMQError as exc:
            raise ReljacError(
                f"the meshcat server at {self.zmq_url} did not answer ({exc}); "
                "it may have stopped: close this viewer and start a new one"
            ) from None

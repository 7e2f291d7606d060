"""The debug page's web server: the page, meshcat's scene relayed, and a channel back to Python.

meshcat-python only sends commands to its page; nothing comes back. The debug page therefore
comes from a small tornado server of ours (tornado is meshcat's own dependency), on loopback by
default, in a thread of the Python process:

| path | what |
| --- | --- |
| `/` | the page (`debug_page.html`, and in it `debug_page.js` then `debug_panel.js`, beside this module) |
| `/static/...` | meshcat's viewer bundle (`main.min.js`), served from the meshcat package |
| `/scene` | websocket relaying every scene message of the meshcat server unchanged (one scene, the Viewer's) |
| `/control` | websocket of JSON messages: the page's requests in (drag, pause, step, ...), the debugger's state out |

Every path answers only requests whose Host (and a websocket's Origin) name this server
(:mod:`reljac.viz.debug_access`: no DNS rebinding); anything else gets 403.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tornado.httpserver
import tornado.ioloop
import tornado.netutil
import tornado.web
import tornado.websocket

from ..exceptions import ReljacError
from .debug_access import HostPolicy, check_address
from .debug_state import merge_samples

with warnings.catch_warnings():  # meshcat imports pyzmq's deprecated zmq.eventloop.ioloop
    warnings.simplefilter("ignore", DeprecationWarning)
    import meshcat
    from meshcat.commands import Delete, SetTransform

HERE = Path(__file__).resolve().parent
MESHCAT_DIST = Path(meshcat.__file__).resolve().parent / "viewer" / "dist"
LOOPBACK = "127.0.0.1"
START_TIMEOUT = 10.0  # [s] for the server thread to listen
MAX_MESSAGE = 1 << 20  # [bytes] of one message from a page (a drag is ~400 bytes): a larger one closes the socket


class _Guarded(tornado.web.RequestHandler):
    """Answers 403 to a request whose Host does not name this server (see debug_access)."""

    def initialize(self, server: DebugServer) -> None:
        self.server = server

    def prepare(self) -> None:
        if not self.server.policy.allows_host(self.request.headers.get("Host")):
            raise tornado.web.HTTPError(403, "Host not allowed")


class _Page(_Guarded):
    def get(self) -> None:
        page = (HERE / "debug_page.html").read_text(encoding="utf-8")
        script = "\n".join((HERE / name).read_text(encoding="utf-8") for name in ("debug_page.js", "debug_panel.js"))
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.write(page.replace("/*DEBUG_PAGE_JS*/", script))


class _NoIcon(_Guarded):
    def get(self) -> None:
        self.set_status(204)


class _Static(tornado.web.StaticFileHandler):
    def initialize(self, server: DebugServer, path: str) -> None:  # type: ignore[override]
        super().initialize(path)
        self.server = server

    def prepare(self) -> None:
        _Guarded.prepare(self)  # type: ignore[arg-type]


class _Socket(tornado.websocket.WebSocketHandler):
    """A websocket of this server: Host and Origin checked before the handshake."""

    def initialize(self, server: DebugServer) -> None:
        self.server = server

    def prepare(self) -> None:
        _Guarded.prepare(self)  # type: ignore[arg-type]

    def check_origin(self, origin: str) -> bool:
        return self.server.policy.allows_origin(origin, self.request.headers.get("Host"))


class _Scene(_Socket):
    """Relays the meshcat server's websocket: its whole scene on connect, then every command."""

    def initialize(self, server: DebugServer) -> None:
        super().initialize(server)
        self.upstream: Any = None

    async def open(self, *args: Any) -> None:
        try:
            self.upstream = await tornado.websocket.websocket_connect(self.server.meshcat_ws)
        except Exception:  # the meshcat server is gone: the page shows no scene
            self.close()
            return
        while True:
            message = await self.upstream.read_message()
            if message is None:
                break
            try:
                await self.write_message(message, binary=isinstance(message, bytes))
            except tornado.websocket.WebSocketClosedError:
                break
        self.close()

    def on_message(self, message: str | bytes) -> None:
        if self.upstream is not None:  # meshcat's capture_image answer goes back to its server
            self.upstream.write_message(message, binary=isinstance(message, bytes))

    def on_close(self) -> None:
        if self.upstream is not None:
            self.upstream.close()


class _Control(_Socket):
    """One page's control channel, with flow control: a page gets the next update (transforms
    and state) only once it acknowledged the last one (``{"type": "ack"}``); meanwhile updates
    are merged (the newest transform of each node, the newest state with the plot samples of
    the last seconds, thinned: ``debug_state.merge_samples``), so a slow page sees the latest
    state late by one update, never a growing backlog. A message that is not a JSON object is
    answered with an error (to this page only)."""

    def initialize(self, server: DebugServer) -> None:
        super().initialize(server)
        self.ready = True
        self.transforms: dict[str, Any] = {}
        self.state: dict | None = None

    def open(self, *args: Any) -> None:
        # small messages at once: with Nagle's algorithm an update waited for the page's TCP
        # acknowledgement of the last one (delayed up to 40 ms), capping the page at ~20 updates/s
        self.set_nodelay(True)
        self.server._pages.add(self)
        for message in self.server.on_connect():
            self.write_message(json.dumps(message, allow_nan=False))

    def on_message(self, message: str | bytes) -> None:
        try:
            request = json.loads(message)
        except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
            why = "nested too deep" if isinstance(exc, RecursionError) else "not valid JSON"
            self.answer({"type": "error", "message": f"a message must be a JSON object; this one is {why}"})
            return
        if not isinstance(request, dict):
            self.answer({"type": "error", "message": f"a message must be a JSON object, not {type(request).__name__}"})
        elif request.get("type") == "ack":
            self.ready = True
            self.deliver()
        else:
            self.server.on_message(request)

    def answer(self, message: dict) -> None:
        """Send `message` to this page now (answers and errors are not held back)."""
        with contextlib.suppress(tornado.websocket.WebSocketClosedError):
            self.write_message(json.dumps(message, allow_nan=False))

    def queue(self, message: dict) -> None:
        kind = message.get("type")
        if kind == "transforms":
            self.transforms.update(message["items"])
        elif kind == "state":
            held = self.state or {"samples": [], "restart": False}
            self.state = {**message, "samples": merge_samples(held["samples"], message["samples"], message["restart"]),
                          "restart": held["restart"] or message["restart"]}
        else:  # answers and errors go at once
            self.answer(message)
            return
        self.deliver()

    def deliver(self) -> None:
        if not self.ready or self.state is None:
            return
        messages = ([{"type": "transforms", "items": list(self.transforms.items())}] if self.transforms else []) + [
            self.state]
        self.transforms, self.state, self.ready = {}, None, False
        with contextlib.suppress(tornado.websocket.WebSocketClosedError):
            for message in messages:
                self.write_message(json.dumps(message, allow_nan=False))

    def on_close(self) -> None:
        self.server._pages.discard(self)


class DebugServer:
    """The server of one debug page (see the module docstring).

    Args:
        meshcat_url: the meshcat server's page, ``http://HOST:PORT/static/`` (its websocket is at
            ``ws://HOST:PORT/``).
        on_message: called with each JSON object a page sends, in the server's thread.
        on_connect: called when a page connects; the JSON objects it returns are sent to it.
        host: address to listen on (loopback by default: anyone who reaches the page can move
            the robot's targets); requests must name it (or loopback) as their Host.
        port: port, 0..65535 (0: a free one).

    Attributes:
        url: the page, ``http://HOST:PORT/`` (on a wildcard host, 0.0.0.0 or ::, the loopback
            address: the page on this machine).

    Raises:
        ConfigurationError: a host or port that is not one (:func:`debug_access.check_address`).
        ReljacError: the address cannot be listened on.
    """

    def __init__(self, meshcat_url: str, on_message: Callable[[dict], None],
                 on_connect: Callable[[], list[dict]] = list, *, host: str = LOOPBACK,
                 port: int = 0) -> None:
        host, port = check_address(host, port)
        self.policy = HostPolicy(host)
        address = meshcat_url.split("//", 1)[-1].split("/", 1)[0]
        self.meshcat_ws = f"ws://{address}/"
        self.on_message, self.on_connect = on_message, on_connect
        self._pages: set[_Control] = set()
        self._lock = threading.Lock()
        self._states_in_flight = 0  # states broadcast that the server's thread has not queued yet
        self._loop: tornado.ioloop.IOLoop | None = None
        self._http: tornado.httpserver.HTTPServer | None = None
        started = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            asyncio.set_event_loop(asyncio.new_event_loop())
            loop = tornado.ioloop.IOLoop.current()
            app = tornado.web.Application([
                (r"/", _Page, {"server": self}),
                (r"/favicon.ico", _NoIcon, {"server": self}),
                (r"/static/(.*)", _Static, {"server": self, "path": str(MESHCAT_DIST)}),
                (r"/scene", _Scene, {"server": self}),
                (r"/control", _Control, {"server": self}),
            ], websocket_max_message_size=MAX_MESSAGE)
            try:
                sockets = tornado.netutil.bind_sockets(port, address=host)
            except OSError as exc:
                failure.append(exc)
                started.set()
                return
            self._http = tornado.httpserver.HTTPServer(app)
            self._http.add_sockets(sockets)
            self._loop = loop
            self.port = int(sockets[0].getsockname()[1])
            started.set()
            loop.start()
            # writes still under way end here (cancelled), not destroyed pending by the close
            events = asyncio.get_event_loop()
            pending = asyncio.all_tasks(events)
            for task in pending:
                task.cancel()
            events.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close(all_fds=True)

        self._thread = threading.Thread(target=serve, name="reljac-debug-server", daemon=True)
        self._thread.start()
        if not started.wait(START_TIMEOUT) or failure:
            why = failure[0] if failure else "timed out"
            raise ReljacError(f"the debug page's server could not listen on {host}:{port} ({why})")
        shown = LOOPBACK if host in ("0.0.0.0", "::") else f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{self.port}/"

    @property
    def pages(self) -> int:
        """Pages connected to the control channel now."""
        return len(self._pages)

    @property
    def ready(self) -> bool:
        """True when no page is connected or one has acknowledged its last update (it takes
        the next at once)."""
        pages = list(self._pages)
        return not pages or (not self._states_in_flight and any(page.ready for page in pages))

    def broadcast(self, message: dict) -> None:
        """Send a JSON object to every page (from any thread; dropped once closed). Transforms
        and states wait for the page's acknowledgement of the last ones (see ``_Control``)."""
        loop = self._loop
        if loop is None:
            return

        state = message.get("type") == "state"

        def send() -> None:
            try:
                for page in list(self._pages):
                    page.queue(message)
            finally:
                if state:
                    with self._lock:
                        self._states_in_flight -= 1

        if state:  # until the page has it, the page is not ready for another (no race with `ready`)
            with self._lock:
                self._states_in_flight += 1
        try:
            loop.add_callback(send)
        except RuntimeError:  # the loop closed meanwhile
            if state:
                with self._lock:
                    self._states_in_flight -= 1

    def close(self) -> None:
        """Stop listening and end the thread (idempotent)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return

        def stop() -> None:
            if self._http is not None:
                self._http.stop()
            for page in list(self._pages):
                page.close()
            loop.stop()

        with contextlib.suppress(RuntimeError):
            loop.add_callback(stop)
        self._thread.join(timeout=5)


class TransformRelay:
    """A meshcat window that sends node transforms to the debug pages in one batch per update.

    meshcat's own window sends each command to its server and waits for the answer: a robot's
    display is one round trip per visual geometry (tens of milliseconds for a robot of a few
    dozen meshes). Put in place of a ``meshcat.Visualizer``'s ``window``, this keeps every
    other command on the meshcat server (which holds the scene for pages that connect later)
    and collects the transforms (``set_transform``: node path -> 16 numbers, column-major as
    meshcat sends them) that differ from the node's last one until :meth:`flush`, which sends
    them to the pages as one ``{"type": "transforms", "items": [[path, matrix], ...]}`` message
    (a robot at rest sends none; the page draws again only when something moved). ``latest``
    keeps the last transform of every node, sent again to a page that connects.
    """

    def __init__(self, window: Any, server: DebugServer | None = None) -> None:
        self.window, self.server = window, server
        self._lock = threading.Lock()
        self.pending: dict[str, list[float]] = {}
        self.latest: dict[str, list[float]] = {}

    def __getattr__(self, name: str) -> Any:  # zmq_socket, get_scene, ... of meshcat's window
        return getattr(self.window, name)

    def send(self, command: Any) -> None:
        if isinstance(command, SetTransform):
            path = command.path.lower()
            matrix = command.matrix.T.ravel().tolist()  # column-major, as meshcat sends it
            with self._lock:
                if self.latest.get(path) != matrix:  # a node that did not move is not sent again
                    self.pending[path] = self.latest[path] = matrix
            return
        if isinstance(command, Delete):  # a deleted node's transforms go with it
            deleted = command.path.lower()
            prefix = deleted.rstrip("/") + "/"
            with self._lock:
                for path in [p for p in self.latest if p == deleted or p.startswith(prefix)]:
                    del self.latest[path]
                    self.pending.pop(path, None)
        self.flush()  # transforms before a later command, in order
        self.window.send(command)

    def flush(self) -> int:
        """Send the transforms collected since the last flush; returns how many."""
        with self._lock:
            items, self.pending = list(self.pending.items()), {}
        if items and self.server is not None:
            self.server.broadcast({"type": "transforms", "items": items})
        return len(items)

    def everything(self) -> dict:
        """Every node's last transform, as one message (for a page that connects)."""
        with self._lock:
            return {"type": "transforms", "items": list(self.latest.items())}

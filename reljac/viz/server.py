"""The meshcat server: a subprocess of ours, or one joined by its ZMQ address.

A server we start exits by itself when the Python process that started it is gone (even after
SIGKILL), so no meshcat server outlives its script. Replies to every command time out instead of
blocking forever on a dead server. Its web page listens on the loopback address 127.0.0.1 only
(meshcat's own server listens on every interface): another host is an opt-in (``host``); its ZMQ
commands stay on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import zmq

with warnings.catch_warnings():  # meshcat 0.3.2 imports pyzmq's deprecated zmq.eventloop.ioloop
    warnings.simplefilter("ignore", DeprecationWarning)
    import meshcat

from typing import Any

from ..exceptions import ConfigurationError, ReljacError
from .batching import BATCH_HANDLER, BatchingWindow

SERVER_START_TIMEOUT = 30.0  # [s] for a new meshcat server to print its addresses
REPLY_TIMEOUT_MS = 15_000  # [ms] for the meshcat server to acknowledge one command

# A server of ours runs this: it exits by itself when the Python process that started it is gone
# (even after SIGKILL), so no meshcat server outlives its script.
# Its web page listens on `host` only (meshcat's server calls tornado's listen without an address:
# every interface), its ZMQ socket on loopback (meshcat's default), both on ports the OS picks
# (meshcat tries 7000, 7001, ... and 6000, 6001, ...: a race with any other server starting then).
_SERVER_BOOTSTRAP = """
import os, sys, threading, time
parent, host = int(sys.argv.pop(1)), sys.argv.pop(1)
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
import tornado.httpserver, tornado.netutil, tornado.web, zmq
from meshcat.servers import zmqserver
def listen(self, port, address=host, **kw):
    sockets = tornado.netutil.bind_sockets(0, address)
    tornado.httpserver.HTTPServer(self, **kw).add_sockets(sockets)
    return sockets[0].getsockname()[1]
tornado.web.Application.listen = listen
setup_zmq = zmqserver.ZMQWebSocketBridge.setup_zmq
def setup_on_any_port(self, url):
    socket, stream, _ = setup_zmq(self, url.rpartition(":")[0] + ":*")
    return socket, stream, socket.getsockopt(zmq.LAST_ENDPOINT).decode()
zmqserver.ZMQWebSocketBridge.setup_zmq = setup_on_any_port
def first_port(bind, default_port, **kw):
    bound = bind(0, **kw)
    return bound, bound if isinstance(bound, int) else 0
zmqserver.find_available_port = first_port
""" + BATCH_HANDLER + """
zmqserver.main()
"""
LOOPBACK = "127.0.0.1"
_ANY = ("0.0.0.0", "::", "")  # every interface: the page's address printed is then the loopback one


def check_host(host: object) -> str:
    """The address the page listens on: an IP address or host name (str) of this machine."""
    if not isinstance(host, str) or any(c.isspace() or c in "/[]" for c in host):
        raise ConfigurationError(f"host must be an address or host name of this machine, such as '127.0.0.1' "
                          f"(default), '0.0.0.0' (every IPv4 interface) or '::', not {host!r}")
    try:  # one line now, rather than meshcat trying 1000 ports in vain
        family = socket.getaddrinfo(host or None, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
    except OSError as exc:
        raise ConfigurationError(f"the viewer cannot listen on host {host!r}: {exc}") from None
    return host


class Server:
    """A meshcat server subprocess: its ZMQ address and web page address.

    Args:
        host: the address its page listens on (default: loopback only; '0.0.0.0' opens it to
            the network).
    """

    def __init__(self, host: str = LOOPBACK) -> None:
        host = check_host(host)
        meshcat_parent = str(Path(meshcat.__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (meshcat_parent, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-c", _SERVER_BOOTSTRAP, str(os.getpid()), host],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,  # it logs each browser page that connects or leaves there
            env=env,
            start_new_session=True,  # a Ctrl-C in the terminal reaches only us; we stop the server
        )
        lines: queue.Queue[str | None] = queue.Queue()
        # The thread keeps draining stdout so the server can never block on a full pipe.
        threading.Thread(target=self._pump, args=(self.proc.stdout, lines), daemon=True).start()
        self.browsers = 0  # pages connected now
        self._browser_change = threading.Condition()
        threading.Thread(target=self._count_browsers, args=(self.proc.stderr,), daemon=True).start()
        found: dict[str, str] = {}
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while len(found) < 2:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                line = None
            if line is None:
                self.stop()
                raise ReljacError(
                    f"the meshcat server did not start (exit code {self.proc.returncode}); "
                    f"try `{sys.executable} -m meshcat.servers.zmqserver` to see why"
                )
            key, _, value = line.strip().partition("=")
            if key in ("zmq_url", "web_url"):
                found[key] = value
        self.zmq_url, self.web_url = found["zmq_url"], found["web_url"]
        if host not in _ANY:  # meshcat prints 127.0.0.1 whatever it listens on
            name = f"[{host}]" if ":" in host else host
            self.web_url = self.web_url.replace(f"//{LOOPBACK}:", f"//{name}:", 1)

    @staticmethod
    def _pump(stream: Any, lines: queue.Queue[str | None]) -> None:
        with contextlib.suppress(Exception):
            for raw in stream:
                lines.put(raw.decode("utf-8", "replace"))
        lines.put(None)

    def _count_browsers(self, stream: Any) -> None:
        """Follow the server's log: "opened: ..." when a page connects, "closed: ..." when it leaves,
        "Uncaught exception GET / (...)" when a page left while the scene was being sent to it
        (meshcat then logs no "closed:")."""
        with contextlib.suppress(Exception):
            for raw in stream:
                change = {b"opened:": 1, b"closed:": -1}.get(raw[:7], 0)
                if raw.startswith(b"Uncaught exception GET / ("):
                    change = -1
                if change:
                    with self._browser_change:
                        self.browsers = max(self.browsers + change, 0)
                        self._browser_change.notify_all()

    def wait_for_browser(self, timeout: float) -> bool:
        """Block until a page is connected, or `timeout` [s] passed; True if one is."""
        with self._browser_change:
            return self._browser_change.wait_for(lambda: self.browsers > 0, timeout=timeout)

    def stop(self) -> None:
        """Terminate the server and wait for it, which releases its ports."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()


def ask_web_url(zmq_url: str, timeout_ms: int = 3000) -> str:
    """The page address of the meshcat server at zmq_url; ReljacError if none answers."""
    if zmq_url.startswith("tcp://"):  # fail fast on a closed port (ZMQ would retry silently)
        host, _, port = zmq_url[len("tcp://"):].rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_ms / 1000).close()
        except (OSError, ValueError) as exc:
            raise ReljacError(
                f"no meshcat server answers at {zmq_url!r} ({exc}); start one with "
                "`meshcat-server`, or leave zmq_url=None to start one"
            ) from None
    probe: zmq.Socket = zmq.Context.instance().socket(zmq.REQ)
    probe.setsockopt(zmq.LINGER, 0)
    try:
        probe.connect(zmq_url)
        probe.send(b"url")
        if not probe.poll(timeout_ms):
            raise ReljacError(
                f"no meshcat server answers at {zmq_url!r} (waited {timeout_ms / 1000:g} s); "
                "start one with `meshcat-server`, or leave zmq_url=None to start one"
            )
        return probe.recv().decode("utf-8")
    except zmq.ZMQError as exc:
        raise ReljacError(f"cannot reach a meshcat server at {zmq_url!r}: {exc}") from None
    finally:
        probe.close()


def connect(zmq_url: str, web_url: str) -> meshcat.Visualizer:
    """A meshcat.Visualizer on one REQ socket whose replies time out instead of blocking, and
    which sends a batch of commands in one round trip (:class:`~reljac.viz.batching.BatchingWindow`)."""
    # meshcat's own constructor prints, and leaks a first socket when joining a server.
    options = {zmq.LINGER: 0, zmq.RCVTIMEO: REPLY_TIMEOUT_MS, zmq.SNDTIMEO: REPLY_TIMEOUT_MS}
    try:
        window = BatchingWindow.connected(zmq_url, web_url, options)
    except zmq.ZMQError as exc:
        raise ReljacError(f"the meshcat server at {zmq_url} did not answer ({exc})") from None
    return meshcat.Visualizer(window=window)

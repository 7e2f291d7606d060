"""``reljac demo`` with its viewer, as a person and as CI run it.

From a terminal (a pseudo-terminal here, whose Ctrl-C is a real \\x03 typed into it) the demo
waits for a browser page before moving and keeps serving the last scene until Ctrl-C; through
pipes it does neither. Ctrl-C at any moment ends it with exit code 130, one line, no traceback.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import pty
import re
import select
import socket
import subprocess
import sys
import termios
import time

import pytest
from test_viz import port_of, port_open

pytestmark = pytest.mark.slow

DEMO = [sys.executable, "-m", "reljac.apps.cli", "demo"]
MOVING = re.compile(r"^t = ", re.M)  # a progress line


class Terminal:
    """A command running in a pseudo-terminal (its controlling terminal): read, type, wait."""

    def __init__(self, argv: list[str]) -> None:
        master, slave = pty.openpty()
        self.master = master

        def take_terminal():  # after setsid (start_new_session): the pty becomes ours
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                                     preexec_fn=take_terminal, close_fds=True)
        os.close(slave)
        self.text = ""

    def read_until(self, pattern: str, timeout: float = 30.0) -> str:
        """Everything read so far, once `pattern` (a regex) appears in it."""
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.text):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {pattern!r} in the terminal after {timeout} s:\n{self.text}")
            if select.select([self.master], [], [], min(left, 0.2))[0]:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the command ended and closed the terminal
                    chunk = b""
                if not chunk and self.proc.poll() is not None:
                    raise EOFError(f"the command exited ({self.proc.returncode}) before {pattern!r}:\n{self.text}")
                self.text += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return self.text

    def read_for(self, seconds: float) -> str:
        """Everything read so far, after reading for `seconds` more."""
        with contextlib.suppress(TimeoutError):
            self.read_until(r"(?!x)x", timeout=seconds)  # a pattern that never matches
        return self.text

    def ctrl_c(self) -> None:
        os.write(self.master, b"\x03")  # the terminal turns it into SIGINT for its foreground group

    def finish(self, timeout: float = 30.0) -> int:
        """Wait for the exit code, reading the rest of the output."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None or select.select([self.master], [], [], 0)[0]:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the command did not end:\n{self.text}")
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                self.text += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return self.proc.wait(timeout=max(deadline - time.monotonic(), 1.0))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


@pytest.fixture
def terminal():
    opened = []

    def start(*args: str) -> Terminal:
        opened.append(Terminal([*DEMO, *args]))
        return opened[-1]

    yield start
    for term in opened:
        term.close()


def url_in(text: str) -> str:
    return re.search(r"http://\S+", text).group(0)


def open_page(url: str) -> socket.socket:
    """Connect to the meshcat server's websocket as its page does (the server counts it as a
    browser page); :func:`close_page` leaves."""
    port = port_of(url)
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    assert sock.recv(4096).startswith(b"HTTP/1.1 101"), "no websocket handshake"
    sock.settimeout(0.5)
    try:
        while sock.recv(1 << 16):  # the scene, until the server pauses
            pass
    except TimeoutError:
        pass
    return sock


def close_page(sock: socket.socket) -> None:
    sock.shutdown(socket.SHUT_RDWR)  # the server sees the page leave
    sock.close()


def assert_ended_by_ctrl_c(term: Terminal) -> None:
    assert term.finish() == 130, term.text
    assert "Traceback" not in term.text and "KeyboardInterrupt" not in term.text, term.text
    assert len(re.findall(r"(?<!\()interrupted(?!\))", term.text)) == 1, term.text  # not the table's "(interrupted)"


def test_terminal_waits_for_a_browser_and_ctrl_c_while_waiting_ends_it(terminal):
    term = terminal("hand", "--duration", "1")
    text = term.read_until(r"waiting up to 10 s for a browser")
    url = url_in(text)
    assert port_open(port_of(url))
    assert not MOVING.search(term.read_for(1.5))  # no motion while nobody watches
    term.ctrl_c()
    assert_ended_by_ctrl_c(term)
    assert not MOVING.search(term.text) and not port_open(port_of(url))


def test_terminal_keeps_serving_after_the_motion_until_ctrl_c(terminal):
    term = terminal("hand", "--duration", "1", "--no-wait")
    text = term.read_until(r"motion done; still serving")
    assert "waiting" not in text and "real-time factor" in text  # the summary came first
    url = url_in(text)
    term.read_for(1.0)
    assert term.proc.poll() is None and port_open(port_of(url))  # still serving the scene
    term.ctrl_c()
    assert_ended_by_ctrl_c(term)
    assert not port_open(port_of(url))


def test_terminal_ctrl_c_during_the_motion_prints_the_summary(terminal):
    term = terminal("dual-arm", "--loop", "--no-wait")
    term.read_until(r"t = \s*1\.\d+ s")  # moving
    term.ctrl_c()
    assert_ended_by_ctrl_c(term)
    assert "(interrupted)" in term.text and "still serving" not in term.text


def test_terminal_exit_option_stops_when_the_motion_ends(terminal):
    term = terminal("hand", "--duration", "0.5", "--no-wait", "--exit")
    assert term.finish() == 0, term.text
    assert "real-time factor" in term.text and "still serving" not in term.text


def test_pipes_never_wait_and_exit_when_the_motion_ends():
    """CI and pipes: no terminal on stdin/stdout, so no waiting and no holding."""
    result = subprocess.run([*DEMO, "hand", "--duration", "0.5"], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "waiting" not in result.stdout and "still serving" not in result.stdout
    assert "real-time factor" in result.stdout and "http://" in result.stdout


def test_terminal_starts_moving_once_a_browser_page_connects(terminal):
    term = terminal("hand", "--duration", "0.5", "--exit")
    page = open_page(url_in(term.read_until(r"waiting up to 10 s")))
    try:
        text = term.read_until(r"real-time factor")  # the motion ran
    finally:
        close_page(page)
    assert "a browser page is connected: starting" in text and "starting anyway" not in text
    assert term.finish() == 0, term.text


def test_viewer_counts_browser_pages():
    from reljac import Robot
    from reljac.viz import Viewer

    with Viewer(Robot.bundled("planar_2link")) as viewer:
        assert viewer.browsers == 0 and not viewer.wait_for_browser(0.2)
        page = open_page(viewer.url)
        assert viewer.wait_for_browser(30.0) and viewer.browsers == 1
        close_page(page)
        deadline = time.monotonic() + 30.0
        while viewer.browsers and time.monotonic() < deadline:
            time.sleep(0.05)
        assert viewer.browsers == 0

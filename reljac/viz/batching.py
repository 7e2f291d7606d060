"""A meshcat window that sends many commands in one round trip to the server.

meshcat's own window (``meshcat.visualizer.ViewerWindow``) sends each command and waits for the
server's answer: showing a robot at a new configuration is one round trip per visual geometry,
frame triad and label (about 60 for ``dual_arm``). On a loaded machine each round trip waits
for both processes to be scheduled, and a viewer updated 30 times a second spent more than the
control period on them (``reljac demo dual-arm``: real-time factor 0.23 under load 5-11).

:class:`BatchingWindow` keeps meshcat's protocol and adds two things:

* inside :meth:`BatchingWindow.batched`, commands are collected and sent when the outermost
  block ends, in order, as one ZMQ message to a server that understands it (the servers reljac
  starts: :data:`BATCH_COMMAND`, handled by :data:`BATCH_HANDLER` in the server's bootstrap), or
  one by one to a joined server that does not (a plain ``meshcat-server``);
* a ``set_transform`` that repeats a node's last transform is not sent (the server's scene, which
  pages that connect later are given, has it already); deleting a node forgets its transforms.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import umsgpack  # type: ignore[import-untyped]  # meshcat's dependency, without stubs
import zmq

with warnings.catch_warnings():  # meshcat 0.3.2 imports pyzmq's deprecated zmq.eventloop.ioloop
    warnings.simplefilter("ignore", DeprecationWarning)
    from meshcat.commands import SetTransform
    from meshcat.visualizer import ViewerWindow

BATCH_COMMAND = b"reljac_batch"

# Python run in the meshcat server's process (see server.py's bootstrap): a message
# [BATCH_COMMAND, type, path, data, type, path, data, ...] is handled as that many meshcat
# commands, in order, answered once with b"ok"; an empty one answers b"ok" (the client's probe).
BATCH_HANDLER = f"""
BATCH_COMMAND = {BATCH_COMMAND!r}
from meshcat.servers import zmqserver as _zs
_handle = _zs.ZMQWebSocketBridge.handle_zmq
class _Quiet:
    def send(self, *args, **kwargs):
        pass
def _handle_batch(self, frames):
    if frames[0] != BATCH_COMMAND:
        return _handle(self, frames)
    socket, self.zmq_socket = self.zmq_socket, _Quiet()
    try:
        for i in range(1, len(frames) - 2, 3):
            if frames[i].decode("utf-8") in _zs.MESHCAT_COMMANDS:
                _handle(self, frames[i:i + 3])
    finally:
        self.zmq_socket = socket
    socket.send(b"ok")
_zs.ZMQWebSocketBridge.handle_zmq = _handle_batch
"""

Frames = tuple[bytes, bytes, bytes]
_DOUBLES = np.dtype([("marker", "u1"), ("value", ">f8")])  # msgpack's float 64: 0xcb, big-endian


def _packed_str(text: bytes) -> bytes:
    n = len(text)
    if n < 32:
        return bytes([0xA0 | n]) + text
    if n < 256:
        return b"\xd9" + bytes([n]) + text
    return b"\xda" + n.to_bytes(2, "big") + text if n < 65536 else b"\xdb" + n.to_bytes(4, "big") + text


def packed_transform(path: str, matrix: np.ndarray) -> bytes:
    """The bytes ``umsgpack.packb(SetTransform(matrix, path).lower())`` gives (a map of type,
    path and the 16 entries column-major as float 64), without packing each number in Python.

    `matrix`: (4, 4) homogeneous transform; `path`: the node's path, as meshcat writes it.
    """
    entries = np.empty(16, _DOUBLES)
    entries["marker"] = 0xCB
    entries["value"] = np.asarray(matrix, dtype=float).T.ravel()
    return (b"\x83" + _packed_str(b"type") + _packed_str(b"set_transform") + _packed_str(b"path")
            + _packed_str(path.encode("utf-8")) + _packed_str(b"matrix") + b"\xdc\x00\x10" + entries.tobytes())


class BatchingWindow(ViewerWindow):
    """meshcat's window with batches and without repeated transforms (see the module docstring).

    Build it with :meth:`connected`. ``batches``: whether the server takes a batch in one
    message; ``round_trips``: messages sent and answered so far (for measurements and tests).
    """

    batches = False
    round_trips = 0
    _pending: list[Frames]
    _depth: int
    sizes: dict[str, int]  # node path -> bytes of its last set_object (what a page has to load)
    _wait = True
    _unanswered = False
    _latest: dict[bytes, bytes]

    @classmethod
    def connected(cls, zmq_url: str, web_url: str, options: dict[Any, int]) -> BatchingWindow:
        """A window on one REQ socket to `zmq_url` with socket `options` set, its server asked once
        whether it takes batches."""
        window = cls.__new__(cls)  # meshcat's constructor prints, and may start a server
        window.server_proc, window.zmq_url, window.web_url = None, zmq_url, web_url
        window._pending, window._depth, window._latest, window.sizes = [], 0, {}, {}
        window.connect_zmq()
        for option, value in options.items():
            window.zmq_socket.setsockopt(option, value)
        window.zmq_socket.send(BATCH_COMMAND)
        window.batches = window.zmq_socket.recv() == b"ok"
        return window

    def send(self, command: Any) -> None:
        """Send one meshcat command (inside :meth:`batched`: keep it for the batch)."""
        if isinstance(command, SetTransform):
            text = command.path.lower()
            kind, path, packed = b"set_transform", text.encode("utf-8"), packed_transform(text, command.matrix)
        else:
            data = command.lower()
            kind, path = data["type"].encode("utf-8"), data["path"].encode("utf-8")
            packed = umsgpack.packb(data)
        if kind == b"set_transform":
            if self._latest.get(path) == packed:
                return
            self._latest[path] = packed
        elif kind == b"set_object":
            self.sizes[path.decode("utf-8")] = len(packed)
        elif kind == b"delete":
            prefix = path.rstrip(b"/") + b"/"
            for known in [p for p in self._latest if p == path or p.startswith(prefix)]:
                del self._latest[known]
            for node in [p for p in self.sizes if p == path.decode("utf-8") or p.startswith(prefix.decode("utf-8"))]:
                del self.sizes[node]
        self._pending.append((kind, path, packed))
        if self._depth == 0:
            self.flush()

    @contextlib.contextmanager
    def batched(self, wait: bool = True) -> Iterator[None]:
        """Collect the commands sent inside the block; send them when the outermost block ends
        (also when it ends by an exception: what was drawn so far is shown).

        `wait` (the outermost block's): wait for the server's answer; False returns as soon as
        the batch is sent, and the answer is read before the next command (a control loop then
        never waits for a busy server's process to be scheduled; one batch is in flight at most).
        """
        self._depth += 1
        if self._depth == 1:
            self._wait = bool(wait)
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self.flush(wait=self._wait)

    def flush(self, wait: bool = True) -> None:
        """Send the commands collected: one message if the server takes batches, else one each
        (`wait`: see :meth:`batched`)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        if self.batches and len(pending) > 1:
            self._ask([BATCH_COMMAND, *(frame for frames in pending for frame in frames)], wait)
        else:
            for frames in pending:
                self._ask(list(frames), wait)

    def settle(self) -> None:
        """Read the answer to a batch sent without waiting, if one is due (before any other use
        of the socket)."""
        if self._unanswered:
            self._unanswered = False
            try:
                self.zmq_socket.recv()
            except zmq.ZMQError:
                self._latest.clear()  # what the server holds is unknown now
                raise

    def _ask(self, frames: list[bytes], wait: bool = True) -> None:
        self.settle()
        try:
            self.zmq_socket.send_multipart(frames)
            if wait:
                self.zmq_socket.recv()
        except zmq.ZMQError:
            self._latest.clear()
            raise
        self._unanswered = not wait
        self.round_trips += 1

    # meshcat's own requests use the socket directly: the answer due is read first
    def request_web_url(self) -> str:
        self.settle()
        return super().request_web_url()

    def wait(self) -> str:
        self.settle()
        return super().wait()

    def get_scene(self) -> str:
        self.settle()
        return super().get_scene()

    def get_image(self) -> Any:
        self.settle()
        return super().get_image()

"""A debug page without a browser, for tests: the ``/control`` websocket of a running
:class:`~reljac.viz.debugger.Debugger`, driven with real messages from the test's thread; and
``wait_for``, the debug tests' polling helper."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import tornado.httpclient
import tornado.websocket
from helpers import wait_for  # noqa: F401 - the pages' tests wait with it too

TIMEOUT = 30.0  # [s] generous: the machine is shared


class ControlPage:
    """A page on `url`'s control channel (`headers`: extra request headers, e.g. Host or
    Origin; `path`: another websocket of the server). Every state read is acknowledged (so the debugger keeps making updates) unless
    ``ack=False``; ``received`` keeps every message read."""

    def __init__(self, url: str, headers: dict[str, str] | None = None, ack: bool = True,
                 path: str = "control") -> None:
        self.loop = asyncio.new_event_loop()
        self.ack = ack
        self.received: list[dict] = []
        request = tornado.httpclient.HTTPRequest(url.replace("http", "ws", 1) + path, headers=headers or {})
        async def connect():
            return await asyncio.wait_for(tornado.websocket.websocket_connect(request), TIMEOUT)

        try:
            self.ws = self.loop.run_until_complete(connect())
        except BaseException:
            self.loop.close()
            raise

    def send(self, message: Any) -> None:
        """A JSON object, or raw text sent as it is."""
        text = message if isinstance(message, str) else json.dumps(message)
        async def write():
            await self.ws.write_message(text)

        self.loop.run_until_complete(write())

    def read(self, timeout: float = TIMEOUT) -> dict | None:
        """The next message (None: the socket closed)."""
        async def read():
            return await asyncio.wait_for(self.ws.read_message(), timeout)

        text = self.loop.run_until_complete(read())
        if text is None:
            return None
        message = json.loads(text)
        self.received.append(message)
        if self.ack and message.get("type") == "state":
            self.send({"type": "ack"})
        return message

    def until(self, condition: Callable[[dict], bool], what: str, timeout: float = TIMEOUT) -> dict:
        """Read until a message meets `condition`; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"waited {timeout} s for {what}")
            message = self.read(left)
            if message is None:
                raise ConnectionError(f"the control socket closed while waiting for {what}")
            if condition(message):
                return message

    def errors(self) -> list[str]:
        return [m["message"] for m in self.received if m.get("type") == "error"]

    def close(self) -> None:
        # tornado writes the close frame on the thread's current loop: make it this page's (an
        # earlier test may have left the main thread without one)
        asyncio.set_event_loop(self.loop)
        try:
            self.ws.close()
            self.loop.run_until_complete(asyncio.sleep(0.05))  # the close frame goes out
        finally:
            asyncio.set_event_loop(None)
            self.loop.close()

    def __enter__(self) -> ControlPage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

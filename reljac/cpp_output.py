"""Text that C++ libraries (urdfdom, Pinocchio) print or throw, turned into one-line messages.

:func:`captured_output` keeps what they print on file descriptors 1 and 2 off the terminal;
:func:`cpp_message` takes one line out of a C++ exception's multi-line text.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator


def cpp_message(exc: BaseException) -> str:
    """One line from a C++ exception: its 'message:' line when it is Pinocchio's multi-line dump."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("message:"):
            return " ".join([line[len("message:"):].strip(), *lines[i + 1:i + 2]])
    return lines[0] if lines else type(exc).__name__


class Captured:
    """Text printed by C++ code inside :func:`captured_output` (available after the block)."""

    text = ""

    def first_error(self) -> str:
        """urdfdom's first 'Error:' message as one line ('' if none)."""
        for line in self.text.splitlines():
            if line.strip().startswith("Error:"):
                return line.strip()[len("Error:"):].strip()
        return ""


_REDIRECTING = threading.RLock()  # descriptors 1 and 2 belong to the process: one redirection at a time


@contextlib.contextmanager
def captured_output() -> Iterator[Captured]:
    """Redirect file descriptors 1 and 2 to a temporary file (what C++ libraries print there
    never reaches the terminal); its text is in the yielded object after the block.

    Process-wide: other threads' output during the block goes to the same file (blocks of
    several threads take turns)."""
    with _REDIRECTING, _redirected() as captured:
        yield captured


@contextlib.contextmanager
def _redirected() -> Iterator[Captured]:
    captured = Captured()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        saved = [os.dup(1), os.dup(2)]
    except OSError:  # no usable descriptors: nothing to silence
        yield captured
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                yield captured
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                sink.seek(0)
                captured.text = sink.read(1 << 16).decode("utf-8", "replace")
    finally:
        for fd in saved:
            os.close(fd)

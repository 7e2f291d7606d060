"""The ``reljac`` program's first moments: Ctrl-C while it starts ends it with one line.

Until the command runs, the modules the program loads (reljac's, the standard library's) would
turn Ctrl-C into a traceback: :func:`catch_interrupts_while_starting`, called first thing by
``reljac/__init__.py``, makes it print ``reljac: interrupted`` and exit 130 instead, in the
``reljac`` program only (the installed script, ``python -m reljac.apps.cli``, a script named
``reljac``). The command line's ``main()`` then turns Ctrl-C back into KeyboardInterrupt, which
it ends the same way. Nothing else: another program importing reljac, and the worker processes
of ``reljac map --scheduler local`` (multiprocessing's spawn imports the program's script again
as ``__mp_main__``), keep Python's own Ctrl-C. Only the standard library is imported here.

What remains before: the interpreter's own start (its ``site`` module), which prints Python's
traceback or dies by SIGINT for any program.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

PROGRAM_NAMES = ("reljac", "cli.py")  # a script's name that makes it the reljac program
MODULE = "reljac.apps.cli"  # python -m MODULE


def interrupted_while_starting(signum: int, frame: Any) -> None:  # pragma: no cover - runs in a dying process
    """The program's SIGINT handler until its command runs: one line, exit 130 (no cleanup to do)."""
    os.write(2, b"reljac: interrupted\n")
    os._exit(130)


_interrupt_received = False  # interrupt_noted was called


def interrupt_noted(signum: int, frame: Any) -> None:
    """The program's SIGINT handler while its command runs: Python's own (KeyboardInterrupt), and a
    note that Ctrl-C came. An extension module may swallow the KeyboardInterrupt raised inside its
    import and raise another error (numpy's C code turns it into "PyCapsule_Import could not import
    module 'datetime'", chaining nothing): the note tells ``main()`` that error was the interrupt."""
    global _interrupt_received
    _interrupt_received = True
    raise KeyboardInterrupt


def interrupt_received() -> bool:
    """Whether Ctrl-C came while the command ran (:func:`interrupt_noted` was called) and no
    :func:`ctrl_c_ends_the_wait` block took it as its end."""
    return _interrupt_received


def stop_if_interrupted() -> None:
    """Raise KeyboardInterrupt if Ctrl-C came: a long loop calls it between its steps, so that a
    Ctrl-C an extension module swallowed (Boost.Python's overload resolution clears any error a
    conversion raised, KeyboardInterrupt included) still ends the command within a step."""
    if _interrupt_received:
        raise KeyboardInterrupt


@contextmanager
def ctrl_c_ends_the_wait() -> Iterator[None]:
    """A block that Ctrl-C ends without ending the program (a viewer served until Ctrl-C): the
    KeyboardInterrupt is caught and the note of it cleared, so the command ends normally. A Ctrl-C
    that came before the block, and that something swallowed, ends the program instead."""
    global _interrupt_received
    stop_if_interrupted()
    try:
        yield
    except KeyboardInterrupt:
        _interrupt_received = False


def program_run(argv: list[str]) -> str | None:
    """What the interpreter command line `argv` (``sys.orig_argv``) runs: the module of ``-m``,
    the script's path, or None (``-c`` code, or nothing)."""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "-m":
            return argv[i + 1] if i + 1 < len(argv) else None
        if arg.startswith("-m"):
            return arg[2:]
        if arg.startswith("-c") or arg == "-":
            return None
        if arg in ("-X", "-W", "--check-hash-based-pycs"):  # options taking the next argument
            i += 2
            continue
        if not arg.startswith("-"):
            return arg
        i += 1
    return None


def is_reljac_program() -> bool:
    """True when this process runs the reljac program (see the module docstring)."""
    if "__mp_main__" in sys.modules:
        return False
    run = program_run(list(getattr(sys, "orig_argv", []) or []))
    return run is not None and (run == MODULE or os.path.basename(run) in PROGRAM_NAMES)


def catch_interrupts_while_starting() -> None:
    """In the reljac program, from the main thread, while Python's own handler is in place: Ctrl-C
    prints one line and exits 130 until ``main()`` takes it back."""
    if threading.current_thread() is threading.main_thread() and is_reljac_program() \
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupted_while_starting)

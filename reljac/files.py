"""Files a user names (URDF, SRDF, capability map, mesh, a recording written): printable paths, a
check that says what a path is when it is not a readable regular file, and a way to open one
for writing that never blocks on a FIFO (stdlib only).

A FIFO would block a reader forever and a symbolic-link loop reads as "missing" to
``Path.is_file()``: :func:`regular_file` looks with ``os.stat`` first and names what it found
(missing, a broken link, a link loop, a folder, a FIFO, a socket, a device, no permission) in one
line, in the caller's exception class.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any, BinaryIO

from .exceptions import ReljacError


def shown(path: str | bytes | os.PathLike) -> str:
    """A path as printable one-line text (bytes that are not UTF-8 and control characters
    become \\x escapes)."""
    try:
        text = os.fsencode(path).decode("utf-8", "backslashreplace")
    except (TypeError, ValueError):
        text = str(path).encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)  # NUL, newlines: escaped


def regular_file(path: Any, what: str, error: type[ReljacError], *, article: str = "a") -> os.stat_result:
    """``os.stat(path)`` of a regular file, or `error` naming what `path` is instead.

    Args:
        what: the kind of file, as in messages ("URDF file", "capability map file").
        article: "a" or "an", for "is a directory, not an SRDF file".
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise error(f"a {what} path must be a string or a path, not {type(path).__name__}")
    name = f"'{shown(path)}'"
    try:
        info = os.stat(path)
    except OSError as exc:
        raise error(unreachable(path, f"{what} {name}", exc)) from None
    except ValueError:
        raise error(f"{what} path {name} contains a NUL byte; no file has such a name") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{name} is a directory, not {article} {what}")
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{name} is {_kind(info.st_mode)}; {article} {what} must be a regular file")
    return info


def unreachable(path: Any, name: str, exc: OSError) -> str:
    """Why `path` (shown as `name`, e.g. "URDF file 'x'") cannot be opened, from the OSError."""
    if exc.errno == errno.ENOENT:
        if os.path.lexists(path):
            return f"{name} is a symbolic link to a file that does not exist"
        return f"{name} does not exist"
    reasons = {
        errno.ELOOP: "is a symbolic link loop (or has too many levels of links)",
        errno.EACCES: "cannot be read: permission denied (on the file or one of its folders)",
        errno.EPERM: "cannot be read: operation not permitted",
        errno.ENOTDIR: "cannot be reached: a part of its path is not a folder",
        errno.ENAMETOOLONG: "cannot be reached: its name is too long",
    }
    reason = reasons.get(exc.errno or 0, f"cannot be read: {exc.strerror or exc}")
    return f"{name} {reason}"


def open_for_writing(path: Any, what: str, error: type[ReljacError]) -> BinaryIO:
    """`path` opened to be written from its start (created, or a regular file truncated), or
    `error` saying why not in one line: a folder, a FIFO, a socket or a device (never opened: a
    FIFO would block the writer until a reader comes), a name too long, a NUL byte, a missing
    folder, no permission.

    The file is opened without blocking (``O_NONBLOCK``) and checked to be a regular file once
    open, so a FIFO put in its place after the look is refused too.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise error(f"a {what} path must be a string or a path, not {type(path).__name__}")
    name = f"{what} '{shown(path)}'"
    try:
        info = os.stat(path)
    except UnicodeError:  # (a ValueError too) a lone surrogate, which no file name can hold
        raise error(f"{what} path '{shown(path)}' cannot be encoded as a file name") from None
    except ValueError:
        raise error(f"{what} path '{shown(path)}' contains a NUL byte; no file has such a name") from None
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise error(unwritable(path, name, exc)) from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise error(f"{name} is {_kind(info.st_mode)}; it must be a regular file (or not exist yet)")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise error(unwritable(path, name, exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{name} is {_kind(info.st_mode)}; it must be a regular file (or not exist yet)")
        os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    return ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")


def unwritable(path: Any, name: str, exc: OSError) -> str:
    """Why `path` (shown as `name`) cannot be written, from the OSError."""
    reasons = {
        errno.ENOENT: "cannot be written: its folder does not exist",
        errno.EISDIR: "is a directory",
        errno.ENXIO: "is a FIFO (named pipe) or a device without a reader",
        errno.EROFS: "cannot be written: the file system is read-only",
        errno.ENOSPC: "cannot be written: no space left on the device",
    }
    if exc.errno in reasons:
        return f"{name} {reasons[exc.errno]}"
    return unreachable(path, name, exc).replace("cannot be read", "cannot be written")

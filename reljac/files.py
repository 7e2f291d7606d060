"""Files a user names (URDF, SRDF, capability map, mesh): printable paths, and one check that says
what a path is when it is not a readable regular file (stdlib only).

A FIFO would block a reader forever and a symbolic-link loop reads as "missing" to
``Path.is_file()``: :func:`regular_file` looks with ``os.stat`` first and names what it found
(missing, a broken link, a link loop, a folder, a FIFO, a socket, a device, no permission) in one
line, in the caller's exception class.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

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
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode)
                else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "not a regular file")
        raise error(f"{name} is {kind}; {article} {what} must be a regular file")
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

"""URDF files as the Pinocchio layer reads them: bytes from a path, then the <robot> element (stdlib only).

Nothing is handed to C++ by path: :func:`read_urdf` reads the file itself, so FIFOs, symbolic-link
loops, folders, huge files and unreadable paths each get a one-line :class:`~reljac.URDFError`;
:func:`parse_xml` parses it. The structure is checked next by :mod:`reljac.urdf_checks`.
"""

from __future__ import annotations

import errno
import os
import stat
import xml.etree.ElementTree as ET
from typing import Any

from .exceptions import URDFError

MAX_BYTES = 256 * 2**20  # larger files are refused before they are read


def shown(path: str | os.PathLike) -> str:
    """A path as printable one-line text (bytes that are not UTF-8 and control characters
    become \\x escapes)."""
    try:
        text = os.fsencode(path).decode("utf-8", "backslashreplace")
    except (TypeError, ValueError):
        text = str(path).encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)  # NUL, newlines: escaped


def read_urdf(path: str | os.PathLike) -> bytes:
    """The bytes of a URDF file; URDFError naming why it cannot be read (one line)."""
    name = f"'{shown(path)}'"
    try:
        info = os.stat(path)
    except OSError as exc:
        raise URDFError(_unreachable(path, name, exc)) from None
    except ValueError:
        raise URDFError(f"URDF path {name} contains a NUL byte; no file has such a name") from None
    if stat.S_ISDIR(info.st_mode):
        raise URDFError(f"{name} is a directory, not a URDF file")
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode)
                else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "not a regular file")
        raise URDFError(f"{name} is {kind}; a URDF must be a regular file")
    if info.st_size > MAX_BYTES:
        raise URDFError(f"URDF file {name} has {info.st_size / 2**20:.0f} MB; reljac reads URDF files "
                        f"up to {MAX_BYTES // 2**20} MB")
    try:
        with open(path, "rb") as file:
            return file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise URDFError(_unreachable(path, name, exc)) from None


def _unreachable(path: Any, name: str, exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        if os.path.lexists(path):
            return f"URDF file {name} is a symbolic link to a file that does not exist"
        return f"URDF file {name} does not exist"
    reasons = {
        errno.ELOOP: "is a symbolic link loop (or has too many levels of links)",
        errno.EACCES: "cannot be read: permission denied (on the file or one of its folders)",
        errno.EPERM: "cannot be read: operation not permitted",
        errno.ENOTDIR: "cannot be reached: a part of its path is not a folder",
        errno.ENAMETOOLONG: "cannot be reached: its name is too long",
    }
    reason = reasons.get(exc.errno or 0, f"cannot be read: {exc.strerror or exc}")
    return f"URDF file {name} {reason}"


def parse_xml(data: bytes, source: str) -> ET.Element:
    """The <robot> element of URDF bytes, or URDFError (not well-formed, wrong root)."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise URDFError(f"URDF {source} is not well-formed XML: {exc}") from None
    except (ValueError, LookupError) as exc:  # e.g. an unknown declared encoding
        raise URDFError(f"URDF {source} cannot be decoded: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"URDF {source} has root element <{root.tag}>, expected <robot>")
    return root


def exists_on_disk(path: str | os.PathLike) -> bool:
    """True when `path` names something on disk (even a broken link or an unreadable entry)."""
    try:
        os.lstat(path)
    except OSError as exc:
        return exc.errno not in (errno.ENOENT, errno.ENOTDIR)
    except ValueError:  # a NUL byte: no such file can exist
        return False
    return True

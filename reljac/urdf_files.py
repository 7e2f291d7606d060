"""URDF files as the Pinocchio layer reads them: bytes from a path, then the <robot> element (stdlib only).

Nothing is handed to C++ by path: :func:`read_urdf` reads the file itself, so FIFOs, symbolic-link
loops, folders, huge files and unreadable paths each get a one-line :class:`~reljac.URDFError`;
:func:`parse_xml` parses it. The structure is checked next by :mod:`reljac.urdf_checks`.
"""

from __future__ import annotations

import errno
import os
import xml.etree.ElementTree as ET

from .exceptions import URDFError
from .files import regular_file, shown, unreachable

__all__ = ["MAX_BYTES", "exists_on_disk", "parse_xml", "read_urdf", "shown"]

MAX_BYTES = 256 * 2**20  # larger files are refused before they are read


def read_urdf(path: str | os.PathLike) -> bytes:
    """The bytes of a URDF file; URDFError naming why it cannot be read (one line)."""
    name = f"'{shown(path)}'"
    info = regular_file(path, "URDF file", URDFError)
    if info.st_size > MAX_BYTES:
        raise URDFError(f"URDF file {name} has {info.st_size / 2**20:.0f} MB; reljac reads URDF files "
                        f"up to {MAX_BYTES // 2**20} MB")
    try:
        with open(path, "rb") as file:
            return file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise URDFError(unreachable(path, f"URDF file {name}", exc)) from None


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

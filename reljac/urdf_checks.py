"""Checks around loading a URDF through Pinocchio: what it accepts but should not (zero axes,
inverted limits), named reasons for what it rejects, and silencing urdfdom's own stderr output."""

from __future__ import annotations

import contextlib
import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterator

from .exceptions import URDFError


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence what C++ (urdfdom) prints on file descriptor 2: reljac raises its own message."""
    try:
        saved = os.dup(2)
    except OSError:  # no usable stderr: nothing to silence
        yield
        return
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def check_joint_values(path: Path, root: ET.Element) -> None:
    """What Pinocchio accepts but would give wrong numbers: zero axes and lower > upper limits."""
    for joint in root.findall("joint"):
        name, kind = joint.get("name", "?"), joint.get("type", "?")
        if kind not in ("revolute", "continuous", "prismatic"):
            continue
        axis = joint.find("axis")
        if axis is not None:
            try:
                xyz = [float(x) for x in axis.get("xyz", "1 0 0").split()]
            except ValueError:
                raise URDFError(f"URDF '{path}': joint '{name}' has a non-numeric <axis xyz>") from None
            if len(xyz) != 3 or not all(math.isfinite(x) for x in xyz) or not any(xyz):
                raise URDFError(f"URDF '{path}': joint '{name}' has axis {xyz}; it must be a non-zero 3-vector")
        limit = joint.find("limit")
        if limit is not None and kind != "continuous":
            try:
                lower, upper = float(limit.get("lower", 0)), float(limit.get("upper", 0))
            except ValueError:
                raise URDFError(f"URDF '{path}': joint '{name}' has non-numeric limits") from None
            if lower > upper:
                raise URDFError(f"URDF '{path}': joint '{name}' has lower limit {lower} > upper limit {upper}")


def explain_rejection(path: Path) -> str:
    """A named reason for a URDF Pinocchio rejects, from reljac's own URDF reader ('' if none)."""
    from .reference.urdf import parse_urdf_file  # pure Python: no second Pinocchio pass

    try:
        parse_urdf_file(path)
    except URDFError as exc:
        return str(exc)
    except Exception:  # noqa: BLE001 - the explanation is best effort; Pinocchio's message stays
        return ""
    return ""

"""The parts of a Robot that a room above the robot layer builds and keeps with it: today its
collision model (``robot.collisions``, built by :mod:`reljac.collision`).

The robot layer imports no room above it. A part is registered here by name with how to build it
for a robot (from what a copy or pickle of that robot kept of it, or from nothing) and what of it
a copy or pickle keeps. ``reljac/__init__.py`` registers the collision model's: Python runs it
before any module of reljac, and it may import every layer (its imports wait for the part's first
use, so ``import reljac.robot`` still loads no collision room).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Part:
    """How a room above the robot layer builds a robot's part, and what a copy keeps of it."""

    build: Callable[[Any, Any], Any]  # (robot, what a copy or pickle kept, or None) -> the part
    keep: Callable[[Any], Any]  # the part -> what a copy or pickle of its robot keeps (picklable)


_PARTS: dict[str, Part] = {}


def register(name: str, build: Callable[[Any, Any], Any], keep: Callable[[Any], Any]) -> None:
    """Register the part `name` (a later registration of the name replaces the earlier)."""
    _PARTS[name] = Part(build, keep)


def part(name: str) -> Part:
    """The part registered as `name`."""
    try:
        return _PARTS[name]
    except KeyError:
        raise KeyError(f"no robot part {name!r} is registered (registered: {', '.join(_PARTS) or 'none'})") from None


__all__ = ["Part", "part", "register"]

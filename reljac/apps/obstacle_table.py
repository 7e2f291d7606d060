"""An ``[[obstacle]]`` table of a hierarchy file or a placement task file: its name and its coal
shape (box, sphere, capsule, cylinder), each size checked; where it stands is the caller's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..collision import CollisionModel, shapes
from ..exceptions import ConfigurationError, ReljacError, prefixed
from .hierarchy_values import number, numbers, table, text, unknown_keys, within

#: each shape's size keys, in the order of its constructor in :mod:`reljac.collision.shapes` [m]
SHAPES = {"box": ("size",), "sphere": ("radius",), "capsule": ("radius", "length"), "cylinder": ("radius", "length")}
SIZE_KEYS = set().union(*SHAPES.values())


def obstacle_shape(spec: Any, where: str, keys: set[str]) -> tuple[dict, str, str, Any]:
    """(the table, its name, `where` naming it, its shape) of one [[obstacle]] table whose keys,
    but the size keys, may be `keys` (ConfigurationError, one line starting with `where`)."""
    spec = table(spec, where, "an obstacle ([[obstacle]])")
    name = text(spec.get("name"), where, "name")
    where = f"{where} ({name!r})"
    kind = spec.get("shape")
    if kind not in SHAPES:
        raise ConfigurationError(f"{where}: shape must be one of {', '.join(SHAPES)}, got {kind!r}")
    unknown_keys(spec, keys - SIZE_KEYS | set(SHAPES[kind]), where)
    for key in SHAPES[kind]:
        if key not in spec:
            raise ConfigurationError(f"{where}: a {kind} needs {' and '.join(SHAPES[kind])} [m]")
    sizes = [numbers(spec[key], where, "size [m] (x, y, z)", (3,)) if key == "size" else
             number(spec[key], where, f"{key} [m]", minimum=0.0, strict=True) for key in SHAPES[kind]]
    if kind == "box" and not bool(np.all(np.asarray(sizes[0]) > 0)):
        raise ConfigurationError(f"{where}: a box's size must be 3 positive numbers [m]")
    return spec, name, where, within(where, lambda: getattr(shapes, kind)(*sizes))


#: [[obstacle]] tables a file may hold. They are added at once (CollisionModel.add_obstacles: one
#: rebuild of the pairs), but Pinocchio's geometry model grows a table of every pair of its objects
#: with each object it takes: 1000 objects 0.5 s, 3000 about 12 s (2026-12-04)
MAX_OBSTACLES = 1000


def check_count(obstacles: Any, where: str) -> None:
    """ConfigurationError when a file holds more than MAX_OBSTACLES [[obstacle]] tables."""
    if isinstance(obstacles, list) and len(obstacles) > MAX_OBSTACLES:
        raise ConfigurationError(f"{where}: {len(obstacles):,} [[obstacle]] tables; at most {MAX_OBSTACLES}: "
                                 "merge small obstacles into larger shapes")


def add_obstacles(model: CollisionModel, specs: list[dict[str, Any]], where: str) -> None:
    """model.add_obstacles(specs), of a file's [[obstacle]] tables in file order: an error names the
    table as the table's own checks do (`where`, obstacle i ('name'): ...)."""
    try:
        model.add_obstacles(specs)
    except ReljacError as exc:
        raise prefixed(exc, where, separator=", ") from None


def unique_names(names: list[str], where: str) -> None:
    """ConfigurationError where two [[obstacle]] tables (names in file order) share a name: the
    second would replace the first."""
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            raise ConfigurationError(f"{where}: obstacles {first[name] + 1} and {i + 1} are both named {name!r} "
                                     "(an obstacle's name must be unique)")
        first[name] = i


__all__ = ["MAX_OBSTACLES", "SHAPES", "add_obstacles", "check_count", "obstacle_shape", "unique_names"]

"""A placement task described in a TOML file, for ``reljac place ROBOT TASKFILE``.

The format (``examples/tiago_dual_place.toml`` and ``examples/panda_cart_place.toml`` are
complete examples; docs/cli.md is the reference)::

    lock = ["hand_*"]                # optional: joints fixed at the reference configuration
    score = "manipulability"         # or "joint_margin": how placements that pass are ranked

    [base]                           # optional, for a robot without a base joint (a planar one
    height = 0.7                     # is added): its root link this high above the floor [m]

    [object]                         # the object's poses in the world: a list ...
    poses = [{position = [0.75, 0.0, 0.95], rpy = [0.0, 0.0, 0.0]}]   # [m], [rad]
    # ... or a path through waypoints, sampled evenly:
    # waypoints = [{position = [...], rpy = [...]}, ...]
    # samples = 20

    [[hand]]                         # one table per hand, the lead hand first
    frame = "hand_left_tool_link"
    position = [0.0, 0.225, 0.0]     # the hand's pose in the object's frame [m], [rad]
    rpy = [0.0, 0.0, -1.5708]        # (default: the object's origin and axes)

    [[obstacle]]                     # optional: shapes fixed in the world
    name = "table"
    shape = "box"                    # box (size) | sphere (radius) | capsule, cylinder (radius, length)
    size = [0.8, 1.2, 0.04]
    position = [0.95, 0.0, 0.73]

    [floor]                          # where the base may stand
    x = [-0.4, 0.5]                  # [m]
    y = [-0.7, 0.7]
    yaw = [-3.1416, 3.1416]          # [rad] (default: a full turn)
    step = 0.05                      # [m] (default 0.05)
    yaw_step = 0.1745                # [rad] (default 10 degrees)
    polygon = [[-0.4, -0.7], [0.5, -0.7], [0.5, 0.7]]   # optional: the base's origin inside

    [maps]                           # the pose maps of the hands
    samples = 2000000                # per hand
    voxel = 0.04                     # [m]; bins = [36, 12, 24] (psi, beta, gamma); seed = 0
    file = "tiago_dual_maps.npz"     # optional: read when it exists, else built and saved there
                                     # (relative to this file's folder)

    [collision]                      # optional (default: self-collision and the obstacles)
    min_distance = 0.01              # [m]
    ignore = ["hand_*_index_*"]      # links (names or patterns) left out of every pair
    enabled = true                   # false: no collision avoidance in the check

    [check]                          # optional
    candidates = 3                   # feasible placements wanted
    timeout = 0.05                   # [s] per IK search
    margin = 0.5                     # fraction of a cell: how sure a pose must be for the ranking
    refine = false                   # decide the maps' unsure poses by a short search per hand

Every mistake raises a reljac error (ConfigurationError unless a name is unknown) in one line
naming the file and the table.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from ..collision import CollisionModel
from ..exceptions import ConfigurationError
from ..files import shown
from ..maps.grid import MAX_VOXEL
from ..placement import FloorRegion, MobileBase, PlacementTask
from ..placement.task import MAX_DISTANCE
from .hierarchy_values import number, numbers, table, text, texts, unknown_keys, within
from .obstacle_table import add_obstacles, check_count, obstacle_shape, unique_names
from .toml_file import read_toml

TOP = {"lock", "score", "base", "object", "hand", "obstacle", "floor", "maps", "collision", "check"}
BASE = {"height"}
OBJECT = {"poses", "waypoints", "samples"}
POSE = {"position", "rpy"}
HAND = {"frame", "position", "rpy"}
OBSTACLE = {"name", "shape", "position", "rpy", "size", "radius", "length"}
FLOOR = {"x", "y", "yaw", "step", "yaw_step", "polygon"}
MAPS = {"samples", "voxel", "bins", "seed", "file"}
COLLISION = {"min_distance", "ignore", "enabled"}
CHECK = {"candidates", "timeout", "margin", "refine"}
MAX_CHECK_TIMEOUT = 10.0  # [s] of one search of the check: a Ctrl-C is heard when the search in progress ends
MAX_BYTES = 1 << 22
MAX_DEPTH = 8


@dataclass
class PlaceFile:
    """What a task file describes (module docstring); the robot-dependent parts (the task, the
    collision model) are made by :meth:`task` and :meth:`collision` for a given robot."""

    path: Path
    lock: list[str]
    score: str
    height: float
    poses: list[pin.SE3]
    hands: list[tuple[str, pin.SE3]]
    obstacles: list[tuple[str, Any, pin.SE3]]
    region: FloorRegion
    maps: dict[str, Any] = field(default_factory=dict)
    collision_options: dict[str, Any] = field(default_factory=dict)
    check: dict[str, Any] = field(default_factory=dict)

    def task(self) -> PlacementTask:
        return within(self.where, lambda: PlacementTask(self.poses, dict(self.hands)))

    @property
    def where(self) -> str:
        return f"task file '{shown(self.path)}'"

    @property
    def map_file(self) -> Path | None:
        name = self.maps.get("file")
        return None if name is None else (self.path.parent / name)

    def collision(self, mobile: MobileBase) -> CollisionModel | None:
        """The collision model of the robot with the file's obstacles, or None when disabled."""
        if not self.collision_options.get("enabled", True):
            return None
        where = f"{self.where}, [collision]"
        model = within(where, lambda: CollisionModel(mobile.robot))
        patterns = self.collision_options.get("ignore", [])
        for pattern in patterns:
            if not any(fnmatch.fnmatchcase(link, pattern) for link in model.links):
                raise ConfigurationError(f"{where}: ignore pattern {pattern!r} matches no link with geometry")
        gone = [p for p in model.pairs if any(fnmatch.fnmatchcase(link, pat) for link in p for pat in patterns)]
        if gone:
            model.remove_pairs(gone)
        add_obstacles(model, [{"name": name, "shape": shape, "placement": placement}
                              for name, shape, placement in self.obstacles], self.where)
        return model


def _pose(spec: Any, where: str, keys: set[str] = POSE) -> pin.SE3:
    spec = table(spec, where, "a pose {position = [x, y, z], rpy = [r, p, y]}")
    unknown_keys(spec, keys, where)
    p = numbers(spec["position"], where, "position [m]", (3,)) if "position" in spec else np.zeros(3)
    R = pin.rpy.rpyToMatrix(*numbers(spec["rpy"], where, "rpy [rad]", (3,))) if "rpy" in spec else np.eye(3)
    return pin.SE3(R, p)


def _poses(spec: Any, where: str) -> list[pin.SE3]:
    here = f"{where}, [object]"
    spec = table(spec, here, "[object]")
    unknown_keys(spec, OBJECT, here)
    if ("poses" in spec) == ("waypoints" in spec):
        raise ConfigurationError(f"{here}: give poses = [...] or waypoints = [...] (with samples = N), one of them")
    key = "poses" if "poses" in spec else "waypoints"
    items = spec[key]
    if not isinstance(items, list) or not items:
        raise ConfigurationError(f"{here}: {key} must be a non-empty list of {{position, rpy}} tables")
    poses = [_pose(item, f"{here}, {key}[{i}]") for i, item in enumerate(items)]
    if key == "poses":
        if "samples" in spec:
            raise ConfigurationError(f"{here}: samples goes with waypoints, not with poses")
        return poses
    samples = spec.get("samples", 20)
    if isinstance(samples, bool) or not isinstance(samples, int) or not 2 <= samples <= 10_000:
        raise ConfigurationError(f"{here}: samples must be an integer in 2..10000, got {samples!r}")
    return list(within(here, lambda: PlacementTask.along(poses, samples, ["object"])).poses)


def _obstacle(spec: Any, where: str) -> tuple[str, Any, pin.SE3]:
    spec, name, where, shape = obstacle_shape(spec, where, OBSTACLE)
    return name, shape, _pose({k: v for k, v in spec.items() if k in POSE}, where)


def _floor(spec: Any, where: str) -> FloorRegion:
    here = f"{where}, [floor]"
    spec = table(spec, here, "[floor]")
    unknown_keys(spec, FLOOR, here)
    for key in ("x", "y"):
        if key not in spec:
            raise ConfigurationError(f"{here}: {key} = [lower, upper] [m] is needed (where the base may stand)")
    values: dict[str, Any] = {key: tuple(numbers(spec[key], here, f"{key} [lower, upper]", (2,)).tolist())
                              for key in ("x", "y", "yaw") if key in spec}
    for key in ("step", "yaw_step"):
        if key in spec:
            values[key] = number(spec[key], here, key, minimum=0.0, strict=True)
    if "polygon" in spec:
        polygon = spec["polygon"]
        if not isinstance(polygon, list) or len(polygon) < 3:
            raise ConfigurationError(f"{here}: polygon must be a list of at least 3 [x, y] vertices [m]")
        values["polygon"] = np.array([numbers(v, here, "a polygon vertex [x, y]", (2,)) for v in polygon])
    return within(here, lambda: FloorRegion(**values))


def _options(spec: Any, where: str, name: str, keys: set[str]) -> dict[str, Any]:
    here = f"{where}, [{name}]"
    spec = table(spec, here, f"[{name}]")
    unknown_keys(spec, keys, here)
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if key in ("refine", "enabled"):
            if not isinstance(value, bool):
                raise ConfigurationError(f"{here}: {key} must be true or false, got {value!r}")
            out[key] = value
        elif key in ("samples", "seed", "candidates"):
            low, high = (0 if key == "seed" else 1), (1000 if key == "candidates" else 10**12)  # (as --candidates)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigurationError(f"{here}: {key} must be an integer in {low}..{high:,}, got {value!r}")
            out[key] = value
        elif key == "bins":
            if not (isinstance(value, list) and len(value) == 3 and all(isinstance(b, int) and not isinstance(b, bool)
                                                                       and 1 <= b <= 1024 for b in value)
                    and value[1] >= 3):
                raise ConfigurationError(f"{here}: bins must be 3 integers (psi, beta, gamma) in 1..1024, beta at "
                                         f"least 3 (two polar charts and the equator), got {value!r}")
            out[key] = tuple(value)
        elif key == "file":
            out[key] = text(value, here, "file")
        elif key == "ignore":
            out[key] = texts(value, here, "ignore")
        else:
            out[key] = number(value, here, key, minimum=0.0, strict=key in ("voxel", "timeout"))
            if key == "voxel" and out[key] > MAX_VOXEL:  # (as `reljac map --voxel`)
                raise ConfigurationError(f"{here}: voxel must be at most {MAX_VOXEL:g} m, got {value!r}")
            if key == "min_distance" and out[key] > MAX_DISTANCE:
                raise ConfigurationError(f"{here}: min_distance must be a distance in [0, {MAX_DISTANCE:g}] m, got "
                                         f"{value!r}")
            if key == "timeout" and out[key] > MAX_CHECK_TIMEOUT:  # a search ends (and hears Ctrl-C) at its budget
                raise ConfigurationError(f"{here}: timeout [s] (of one search) must be at most {MAX_CHECK_TIMEOUT:g}, "
                                         f"got {value!r}")
    return out


def read_place_file(path: str | Path) -> PlaceFile:
    """The :class:`PlaceFile` a task file describes (module docstring).

    Raises:
        ConfigurationError: a mistake in the file (its message names the file and the table).
    """
    path = Path(path)
    where = f"task file '{shown(path)}'"
    doc = read_toml(path, where, "task file", max_bytes=MAX_BYTES, max_depth=MAX_DEPTH)
    unknown_keys(doc, TOP, where)
    for key in ("object", "hand", "floor"):
        if key not in doc:
            raise ConfigurationError(f"{where}: [{key}] is needed ([object] poses, [[hand]] grasps, [floor] region)")
    hands_spec = doc["hand"]
    if not isinstance(hands_spec, list) or not hands_spec:
        raise ConfigurationError(f"{where}: hands are [[hand]] tables (frame, position, rpy), got {hands_spec!r}")
    hands: list[tuple[str, pin.SE3]] = []
    for i, spec in enumerate(hands_spec):
        here = f"{where}, hand {i + 1}"
        spec = table(spec, here, "[[hand]]")
        unknown_keys(spec, HAND, here)
        if any(spec.get("frame") == frame for frame, _ in hands):
            raise ConfigurationError(f"{here}: frame {spec['frame']!r} has a [[hand]] already (one grasp per hand)")
        hands.append((text(spec.get("frame"), here, "frame"), _pose({k: v for k, v in spec.items() if k != "frame"},
                                                                    here)))
    obstacles = doc.get("obstacle", [])
    if not isinstance(obstacles, list):
        raise ConfigurationError(f"{where}: obstacles are [[obstacle]] tables, got {obstacles!r}")
    check_count(obstacles, where)
    score = doc.get("score", "manipulability")
    if score not in ("manipulability", "joint_margin"):
        raise ConfigurationError(f"{where}: score must be \"manipulability\" or \"joint_margin\", got {score!r}")
    lock = texts(doc["lock"], where, "lock") if "lock" in doc else []
    base = table(doc.get("base", {}), f"{where}, [base]", "[base]")
    unknown_keys(base, BASE, f"{where}, [base]")
    height = number(base["height"], f"{where}, [base]", "height [m]") if "height" in base else 0.0
    out = PlaceFile(path, lock, score, height, _poses(doc["object"], where), hands,
                    [_obstacle(spec, f"{where}, obstacle {i + 1}") for i, spec in enumerate(obstacles)],
                    _floor(doc["floor"], where), _options(doc.get("maps", {}), where, "maps", MAPS),
                    _options(doc.get("collision", {}), where, "collision", COLLISION),
                    _options(doc.get("check", {}), where, "check", CHECK))
    unique_names([name for name, _, _ in out.obstacles], where)
    margin = out.check.get("margin")
    if margin is not None and not (math.isfinite(margin) and margin <= 2):
        raise ConfigurationError(f"{where}, [check]: margin must be a fraction of a cell in [0, 2], got {margin}")
    return out

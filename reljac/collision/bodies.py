"""The bodies of a collision model, by name: the robot's links that carry collision geometry and
the user's obstacles; their order, the checks of the names and pairs a user gives, and the
geometry model of both.

A link with geometry is named by its Pinocchio frame (the URDF link); its geometries are its
indices in the robot's (copied) ``pin.GeometryModel``. An obstacle is a shape placed at T_fo in a
robot frame f (0: the world). Bodies are ordered links first (in model order), then obstacles
(in the order added): a pair is kept as (the first in that order, the second).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pinocchio as pin

from ..exceptions import CollisionError, ReljacError, prefixed, suggest
from ..validation import short_repr
from . import shapes

if TYPE_CHECKING:  # pragma: no cover
    from ..robot import Robot


@dataclass
class Obstacle:
    """A user shape: geometry in frame o, placed at T_fo in frame `frame` (0: the world)."""

    name: str
    geometry: object
    frame: int
    T_fo: pin.SE3
    links: tuple[str, ...]


class Bodies:
    """The links of `robot` that carry geometry in `geometry` (its geometry objects' parent frames)
    and the obstacles added since.

    Attributes:
        links: names of the links with geometry, in model order.
        geometry: the robot's geometry model these bodies index (not modified here).
    """

    def __init__(self, robot: Robot, geometry: pin.GeometryModel) -> None:
        self.robot, self.geometry = robot, geometry
        frames = robot.model.frames
        self._link_frame: dict[str, int] = {}
        self._link_geoms: dict[str, list[int]] = {}
        for g, obj in enumerate(geometry.geometryObjects):
            name = frames[obj.parentFrame].name
            if name not in self._link_geoms:
                self._link_geoms[name] = []
                self._link_frame[name] = obj.parentFrame
            self._link_geoms[name].append(g)
        self.links: list[str] = sorted(self._link_geoms, key=lambda n: self._link_frame[n])
        self._obstacles: dict[str, Obstacle] = {}
        self._rank: dict[str, int] | None = {}  # each obstacle's place in the order added (None: to count)
        # the geometry model of the robot and the first obstacles (None: to build), kept because
        # Pinocchio's addGeometryObject costs O(objects^2): a rebuild copies it
        self._model: pin.GeometryModel | None = None

    # ------------------------------------------------------------------ names
    def robot_links(self) -> list[str]:
        """Every link of the robot (BODY frames), with or without geometry."""
        return [f.name for f in self.robot.model.frames if f.type == pin.FrameType.BODY]

    def __getstate__(self) -> dict:
        """What a copy or a pickle keeps: not the geometry model kept for rebuilds (made again)."""
        return {**self.__dict__, "_model": None}

    @property
    def names(self) -> list[str]:
        """The links with geometry, then the obstacles."""
        return self.links + list(self._obstacles)

    @property
    def obstacle_names(self) -> list[str]:
        """The obstacles, in the order added."""
        return list(self._obstacles)

    def order(self, name: str) -> tuple[int, int]:
        """The sort key of a body: links in model order, then obstacles in the order added."""
        if name in self._link_frame:
            return (0, self._link_frame[name])
        return (1, self._obstacle_rank(name))

    def _obstacle_rank(self, name: str) -> int:
        """Obstacle `name`'s place in the order added (0 first), counted once per change."""
        if self._rank is None:
            self._rank = {other: i for i, other in enumerate(self._obstacles)}
        return self._rank[name]

    def canonical(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """The pairs without repeats, each as (first body, second body) in :meth:`order`, sorted."""
        out = {(a, b) if self.order(a) <= self.order(b) else (b, a) for a, b in pairs}
        return sorted(out, key=lambda p: (self.order(p[0]), self.order(p[1])))

    def check_body(self, name: Any, *, allow_obstacles: bool = True) -> str:
        """`name` if it is a link with geometry (or an obstacle, if allowed), else CollisionError."""
        valid = self.names if allow_obstacles else self.links
        if isinstance(name, str) and name in valid:
            return str(name)  # (not numpy's str_)
        if not isinstance(name, str):
            raise CollisionError(f"a link or obstacle is given by its name (str), not {name!r}")
        if name in self.robot_links() or (name in self._obstacles and not allow_obstacles):
            raise CollisionError(f"link '{name}' of robot '{self.robot.name}' has no collision geometry "
                                 f"(links with geometry: {', '.join(self.links)})")
        kind = "link or obstacle" if allow_obstacles else "link"
        raise CollisionError(f"'{name}' is not a {kind} with collision geometry of robot "
                             f"'{self.robot.name}'{suggest(name, valid)} (valid: {', '.join(valid)})")

    def check_pairs(self, pairs: Any, *, allow_obstacles: bool = True) -> list[tuple[str, str]]:
        """`pairs` as a list of (body, body) of two different bodies, else CollisionError."""
        if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
            raise CollisionError(f"pairs must be a list of (name, name) pairs, not {pairs!r}")
        out = []
        for pair in pairs:
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise CollisionError(f"a pair must be two names (body 1, body 2), not {pair!r}")
            a, b = (self.check_body(x, allow_obstacles=allow_obstacles) for x in pair)
            if a == b:
                raise CollisionError(f"a pair needs two different bodies, not ({a!r}, {b!r})")
            out.append((a, b))
        return out

    def check_links(self, links: Any) -> list[str]:
        """`links` as a list of links with geometry, else CollisionError."""
        if isinstance(links, (str, bytes)) or not isinstance(links, Iterable):
            raise CollisionError(f"links must be a list of link names, not {links!r}")
        return [self.check_body(x, allow_obstacles=False) for x in links]

    def joint_of(self, name: str) -> int:
        """The id of the joint a link with geometry (or an obstacle, by its frame) moves with."""
        if name in self._obstacles:
            return self.robot.model.frames[self._obstacles[name].frame].parentJoint
        return self.robot.model.frames[self._link_frame[name]].parentJoint

    # ------------------------------------------------------------------ obstacles
    def obstacle(self, name: str) -> Obstacle:
        """The obstacle called `name`, else CollisionError naming the obstacles."""
        if not isinstance(name, str):  # (a list: a bare TypeError from the dict)
            raise CollisionError(f"an obstacle's name is a string, not {type(name).__name__} {name!r}")
        if name not in self._obstacles:
            raise CollisionError(f"no obstacle named {name!r}{suggest(str(name), self._obstacles)} "
                                 f"(obstacles: {', '.join(self._obstacles) or 'none'})")
        return self._obstacles[name]

    def put_obstacle(self, obstacle: Obstacle) -> None:
        """Add `obstacle`, last (one of the same name is taken out first)."""
        if self._obstacles.pop(obstacle.name, None) is not None:
            self._model = None  # (the others' places change)
        self._obstacles[obstacle.name] = obstacle
        self._rank = None

    def kept(self) -> dict[str, Obstacle]:
        """The obstacles as they are, for :meth:`restore` (the records are not copied)."""
        return dict(self._obstacles)

    def restore(self, obstacles: dict[str, Obstacle]) -> None:
        """The obstacles :meth:`kept` returned, back (an edit interrupted half way undone)."""
        self._obstacles = dict(obstacles)
        self._rank, self._model = None, None

    def move_obstacle(self, name: str, T_fo: pin.SE3) -> tuple[int, pin.SE3]:
        """Set obstacle `name`'s pose T_fo in its frame; its index in :meth:`geometry_model` and
        its pose T_jo in its frame's parent joint, for the caller's model."""
        obstacle = self.obstacle(name)
        obstacle.T_fo = T_fo
        g, T_jo = self.geometry_index(name), self.joint_placement(obstacle)
        if self._model is not None and g < self._model.ngeoms:
            self._model.geometryObjects[g].placement = T_jo
        return g, T_jo

    def drop_obstacle(self, name: str) -> None:
        """Take obstacle `name` out (CollisionError if there is none)."""
        self.obstacle(name)
        del self._obstacles[name]
        self._rank, self._model = None, None

    def joint_placement(self, obstacle: Obstacle) -> pin.SE3:
        """T_jo: the obstacle's pose in its frame's parent joint."""
        return self.robot.model.frames[obstacle.frame].placement * obstacle.T_fo

    def geometry_index(self, name: str) -> int:
        """The index of obstacle `name`'s object in :meth:`geometry_model` (after the robot's)."""
        return self.geometry.ngeoms + self._obstacle_rank(name)

    # ------------------------------------------------------------------ geometry
    def geometry_model(self) -> tuple[pin.GeometryModel, dict[str, list[int]]]:
        """A copy of the robot's geometry with one object per obstacle after it, and each body's
        geometries in it (no collision pair yet)."""
        if self._model is None:
            self._model = self.geometry.copy()
        modelled = self._model.ngeoms - self.geometry.ngeoms  # (read off the model: true after a Ctrl-C here)
        for obstacle in list(self._obstacles.values())[modelled:]:
            frame = self.robot.model.frames[obstacle.frame]
            self._model.addGeometryObject(pin.GeometryObject(
                obstacle.name, frame.parentJoint, obstacle.frame, self.joint_placement(obstacle), obstacle.geometry))
        geoms = dict(self._link_geoms)
        for name in self._obstacles:
            geoms[name] = [self.geometry_index(name)]
        return self._model.copy(), geoms

    # ------------------------------------------------------------------ new obstacles
    def shape_kinds(self) -> dict[type, Any]:
        """One geometry of each kind the bodies hold (the robot's and the obstacles')."""
        kinds = {type(g.geometry): g.geometry for g in self.geometry.geometryObjects}
        for obstacle in self._obstacles.values():
            kinds.setdefault(type(obstacle.geometry), obstacle.geometry)
        return kinds

    def checked_obstacle(self, name: Any, shape: Any, placement: Any, frame: Any, links: Any,
                         kinds: dict[type, Any]) -> Obstacle:
        """The obstacle of CollisionModel.add_obstacle's arguments, checked (coal measures its
        distance to each geometry of `kinds`), not added."""
        if not isinstance(name, str) or not name.strip():
            raise CollisionError(f"an obstacle's name must be a non-empty string, not {short_repr(name)}")
        name = str(name)
        if name in self.robot_links():
            raise CollisionError(f"obstacle name '{name}' is a link of robot '{self.robot.name}'; pick another")
        geometry = shapes.as_geometry(shape)
        shapes.check_measurable(name, geometry, list(kinds.values()))
        fid = 0 if frame is None else self.robot.frame_id(frame)
        T_fo = shapes.as_placement(placement)
        joint = self.robot.model.frames[fid].parentJoint
        chosen = [link for link in self.links if self.joint_of(link) != joint] if links is None else \
            self.check_links(links)
        return Obstacle(name, geometry, fid, T_fo, tuple(chosen))

    def checked_obstacles(self, items: Any) -> list[Obstacle]:
        """The obstacles of CollisionModel.add_obstacles' mappings, each checked as
        :meth:`checked_obstacle`, an error naming the first bad one by its place; not added."""
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
            raise CollisionError("obstacles must be a list of mappings of add_obstacle's arguments, "
                                 f"not {type(items).__name__}")
        kinds, records = self.shape_kinds(), []
        first: dict[str, int] = {}  # each name's place
        for i, item in enumerate(items):
            where = f"obstacle {i + 1}"
            if not isinstance(item, Mapping):
                raise CollisionError(f"{where}: a mapping of add_obstacle's arguments (name, shape, placement, "
                                     f"frame, links), not {type(item).__name__}")
            unknown = sorted(set(item) - OBSTACLE_KEYS, key=str)
            if unknown or "name" not in item or "shape" not in item:
                what = f"unknown key {short_repr(unknown[0])}" if unknown else "name and shape are needed"
                raise CollisionError(f"{where}: {what} (keys: name, shape, placement, frame, links)")
            try:
                record = self.checked_obstacle(item["name"], item["shape"], item.get("placement"),
                                               item.get("frame"), item.get("links"), kinds)
            except ReljacError as exc:
                raise prefixed(exc, f"{where} ({short_repr(item['name'])})") from None
            if record.name in first:
                raise CollisionError(f"obstacles {first[record.name] + 1} and {i + 1} are both named "
                                     f"{short_repr(record.name)} (an obstacle's name must be unique)")
            first[record.name] = i
            kinds.setdefault(type(record.geometry), record.geometry)
            records.append(record)
        return records


#: the keys of one obstacle's mapping (CollisionModel.add_obstacles): add_obstacle's arguments
OBSTACLE_KEYS = frozenset({"name", "shape", "placement", "frame", "links"})

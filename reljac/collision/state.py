"""What a copied or pickled Robot keeps of its collision model (``robot.collisions``).

A :class:`~reljac.collision.CollisionModel` holds Pinocchio and coal objects that do not pickle
(a broad-phase manager, per-model data); a Robot's ``__getstate__`` keeps instead the user's
edits: the active pairs, the dropped ones with their reasons, and the obstacles (coal
geometries pickle). :func:`restore` rebuilds the model from them without running the
default-pair rules again; :func:`robot_collisions` builds the model ``robot.collisions`` holds
(registered as a robot's part by ``reljac/__init__.py``: :mod:`reljac.robot_parts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..robot import Robot
    from .bodies import Obstacle
    from .model import CollisionModel


@dataclass(frozen=True)
class CollisionState:
    """The pairs (body 1, body 2), the dropped pairs (body 1, body 2, reason) and the obstacles."""

    pairs: tuple[tuple[str, str], ...]
    dropped: tuple[tuple[str, str, str], ...]
    obstacles: tuple[Obstacle, ...]


def collision_state(model: CollisionModel) -> CollisionState:
    """The state of `model` to keep (copies: later edits of the model do not change it)."""
    from .bodies import Obstacle

    obstacles = tuple(Obstacle(o.name, o.geometry, o.frame, o.T_fo.copy(), o.links)
                      for o in (model.obstacle(name) for name in model.obstacles))
    return CollisionState(tuple(model.pairs), tuple(model.dropped), obstacles)


def restore(robot: Robot, state: CollisionState) -> CollisionModel:
    """robot's collision model with the pairs, dropped pairs and obstacles of `state`."""
    from .model import CollisionModel

    obstacles = {o.name for o in state.obstacles}
    links = [p for p in state.pairs if p[0] not in obstacles and p[1] not in obstacles]
    model = CollisionModel(robot, pairs=links)
    model.add_obstacles({"name": o.name, "shape": o.geometry, "placement": o.T_fo, "frame": o.frame, "links": o.links}
                        for o in state.obstacles)
    model.check_only(state.pairs)
    model.dropped = list(state.dropped)
    return model


def robot_collisions(robot: Robot, kept: CollisionState | None) -> CollisionModel:
    """The model ``robot.collisions`` holds: built with the robot's SRDF (its disabled pairs left
    out), or restored from what a copy or pickle of the robot kept (:func:`collision_state`)."""
    from .model import CollisionModel

    return CollisionModel(robot) if kept is None else restore(robot, kept)

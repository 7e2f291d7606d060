"""A robot's geometry, built on first use: its visual and collision ``pin.GeometryModel`` and its
collision model (``robot.collisions``).

Where the geometry models come from is the robot's to say (its URDF, the robot it was reduced
from, or none: then the models it was given, copied, or empty ones); :class:`RobotGeometry` keeps
what was given and what was loaded, and builds the collision model through
:mod:`reljac.robot_parts` (the collision room, above this one, registers how). A copy or pickle
keeps the given models and the collision model's edits (its pairs and obstacles), not what was
loaded: meshes load again on first use.

Threads: the robot passes its lock; each part is built once under it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pinocchio as pin

from . import loading, robot_parts

GeometryLoader = Callable[[str], "pin.GeometryModel | None"]  # kind -> the model, or None: the given one


class RobotGeometry:
    """The geometry of a robot of `model`: the models it was given (`collision`, `visual`: checked to
    be of `model` and copied; None: none), the models loaded since, its collision model.

    Attributes:
        given: {"visual" | "collision": the model given, or None}.
    """

    def __init__(self, model: pin.Model, collision: pin.GeometryModel | None = None,
                 visual: pin.GeometryModel | None = None) -> None:
        self.given = {"collision": loading.check_geometry(collision, model, "collision"),
                      "visual": loading.check_geometry(visual, model, "visual")}
        self._models: dict[str, pin.GeometryModel] = {}
        self._collisions: Any = None  # the CollisionModel, once built (typed Any: its room is above)
        self._kept: Any = None  # the collision model's edits a copy or pickle kept, until it is built

    def model(self, kind: str, lock: AbstractContextManager, load: GeometryLoader) -> pin.GeometryModel:
        """The `kind` ("visual" or "collision") model: ``load(kind)`` under `lock` on first use (None:
        a copy of the model given, or an empty model)."""
        if kind not in self._models:
            with lock:
                if kind not in self._models:
                    loaded, given = load(kind), self.given[kind]
                    self._models[kind] = (loaded if loaded is not None else
                                          given.copy() if given is not None else pin.GeometryModel())
        return self._models[kind]

    def collisions(self, robot: Any, lock: AbstractContextManager) -> Any:
        """`robot`'s collision model, built under `lock` on first use (from what a copy kept, if any)."""
        if self._collisions is None:
            with lock:
                if self._collisions is None:
                    self._collisions = robot_parts.part("collisions").build(robot, self._kept)
        return self._collisions

    def kept(self) -> Any:
        """What a copy keeps of the collision model: its edits, or None if it was never built."""
        if self._collisions is not None:
            return robot_parts.part("collisions").keep(self._collisions)
        return self._kept

    def copy(self) -> RobotGeometry:
        """The geometry of a robot of the same joints and frames (this one with a payload): the given
        and loaded models (copies) and the collision model's edits (built again on first use)."""
        other = RobotGeometry.__new__(RobotGeometry)
        other.__setstate__(self.__getstate__())
        other._models = {kind: model.copy() for kind, model in self._models.items()}
        return other

    def __getstate__(self) -> dict:
        """For pickle and deepcopy: the given models and the collision model's edits."""
        return {"given": dict(self.given), "kept": self.kept()}

    def __setstate__(self, state: dict) -> None:
        self.given, self._kept = state["given"], state["kept"]
        self._models, self._collisions = {}, None

"""Collision overlay: a CollisionModel's obstacles, and the closest-point segments of near pairs.

Drawn under <root>/overlays/<name>/: ``obstacles/<obstacle>`` (translucent teal, at their pose
in w) and ``pairs/<body 1>--<body 2>``: for each active pair nearer than the bound, a bar
between its witness points p1, p2 (in w [m]) with a ball at each, coloured by the distance d:
red at d <= 0 (touching or overlapping), through yellow at half the bound, to green at the bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import coal
import numpy as np
import pinocchio as pin

from ..collision import CollisionModel, Distances
from .overlays import Overlay
from .shapes import material, mg, rotation_y_to

OBSTACLE_COLOR = 0x00897B
OBSTACLE_OPACITY = 0.7
NEAR_COLOR = (0xE5, 0x39, 0x35)  # d <= 0
MIDDLE_COLOR = (0xFD, 0xD8, 0x35)  # d = within / 2
FAR_COLOR = (0x43, 0xA0, 0x47)  # d = within
COLOR_LEVELS = 16  # colours are quantized, so that a bar is redrawn only when its colour changes


def distance_color(d: float, within: float) -> int:
    """0xRRGGBB for a distance d [m] below the bound `within` [m] (> 0): red at d <= 0, yellow at
    within / 2, green at within, linear in between (quantized to COLOR_LEVELS steps)."""
    t = float(np.clip(d / within, 0.0, 1.0))
    t = round(t * COLOR_LEVELS) / COLOR_LEVELS
    a, b, s = (NEAR_COLOR, MIDDLE_COLOR, 2 * t) if t <= 0.5 else (MIDDLE_COLOR, FAR_COLOR, 2 * t - 1)
    r, g, bl = (round(x + s * (y - x)) for x, y in zip(a, b, strict=True))
    return (r << 16) | (g << 8) | bl


def _obstacle_object(geometry):
    from pinocchio.visualize.meshcat_visualizer import loadMesh, loadPrimitive

    if isinstance(geometry, coal.BVHModelBase):
        return loadMesh(geometry)
    return loadPrimitive(pin.GeometryObject("obstacle", 0, pin.SE3.Identity(), geometry))


class CollisionOverlay(Overlay):
    """Obstacles and closest-point segments of a CollisionModel, at the viewer's configuration.

    ``rows``: the :class:`~reljac.collision.Distances` drawn last; ``shown``: bar name -> colour.
    """

    def __init__(self, node: Any, model: CollisionModel, within: float, get_q: Callable[[], np.ndarray],
                 radius: float) -> None:
        super().__init__(node)
        self.model, self.within, self.get_q, self.radius = model, within, get_q, radius
        self.obstacles: dict[str, object] = {}  # name -> geometry drawn
        self.shown: dict[str, int] = {}
        self.rows: Distances | None = None

    def _draw_obstacles(self, oMf: Any) -> None:
        names = self.model.obstacles
        for name in [n for n in self.obstacles if n not in names]:
            self.node["obstacles"][name].delete()
            del self.obstacles[name]
        for name in names:
            obstacle = self.model.obstacle(name)
            if self.obstacles.get(name) is not obstacle.geometry:
                shape = _obstacle_object(obstacle.geometry)
                self.node["obstacles"][name].set_object(shape, mg.MeshLambertMaterial(
                    color=OBSTACLE_COLOR, opacity=OBSTACLE_OPACITY, transparent=True))
                self.obstacles[name] = obstacle.geometry
            T_wo = oMf[obstacle.frame] * obstacle.T_fo
            self.node["obstacles"][name].set_transform(T_wo.homogeneous)

    def update(self, oMf: Any) -> None:
        self._draw_obstacles(oMf)
        rows = self.rows = self.model.distances(self.get_q(), within=self.within, jacobians=False)
        seen = set()
        for (a, b), d, p1, p2 in zip(rows.pairs, rows.distance, rows.point1, rows.point2, strict=True):
            key = f"{a}--{b}"
            seen.add(key)
            color = distance_color(d, self.within)
            bar = self.node["pairs"][key]
            if self.shown.get(key) != color:
                look = material(color)
                bar["bar"].set_object(mg.Mesh(mg.Cylinder(1.0, self.radius), look))
                bar["p1"].set_object(mg.Mesh(mg.Sphere(2.0 * self.radius), look))
                bar["p2"].set_object(mg.Mesh(mg.Sphere(2.0 * self.radius), look))
                self.shown[key] = color
            gap = p2 - p1
            length = float(np.linalg.norm(gap))
            T = np.eye(4)  # the unit cylinder along y, stretched to the gap and turned onto it
            turn = rotation_y_to(gap / length) if length > 1e-12 else np.eye(3)
            T[:3, :3] = turn @ np.diag([1.0, max(length, 1e-9), 1.0])
            T[:3, 3] = 0.5 * (p1 + p2)
            bar["bar"].set_transform(T)
            for end, p in (("p1", p1), ("p2", p2)):
                M = np.eye(4)
                M[:3, 3] = p
                bar[end].set_transform(M)
        for key in [k for k in self.shown if k not in seen]:
            self.node["pairs"][key].delete()
            del self.shown[key]

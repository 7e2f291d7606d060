"""A placement result (:func:`reljac.placement.place`) in the browser: the floor coloured by where
the task is feasible, the checked candidates as arrows, the object at each pose, and the robot at
the best placement holding it.

Under <root>/overlays/<name>/ (all in the world frame w [m]; they do not follow the robot):

* ``floor``: one flat square per (x, y) of the floor region's grid, 2 mm above the ground: grey
  where the base's bodies hit an obstacle at every yaw; else coloured from dark blue (no pose
  reached at any yaw) to yellow, by the best yaw's share of the poses the maps reach; a square
  where some yaw reaches every pose is coloured by that yaw's map score instead, from dark green
  (the smallest) to bright green (the largest), so the feasible region reads at a glance;
* ``candidates``: an arrow per checked placement, from its (x, y) along its yaw, green when the
  exact check passed, red when it failed (the best one thicker);
* ``poses``: a triad at each pose of the object (T_wO).

:func:`show_placement` opens a :class:`~reljac.viz.Viewer` on the robot at the best placement
(or the best-ranked one) and draws these; :func:`play` shows the robot holding the object at
each pose in turn.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..exceptions import ConfigurationError
from ..validation import as_count, as_float
from .capability import colormap
from .overlays import Overlay
from .shapes import TARGET_AXIS_RADIUS, draw_axes, mg
from .viewer import Viewer

GROUND_LIFT = 0.002  # [m]
BLOCKED = (0.55, 0.55, 0.55)
PASSED, FAILED = 0x2E7D32, 0xC62828
ARROW = 0.6  # an arrow's length, in floor steps


def floor_colors(result: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(xy (m, 2) [m], colours (m, 3) in [0, 1], feasible (m,) bool) of the floor's squares: per
    (x, y), the best yaw's share of poses reached (or its map score where every pose is)."""
    P = result.placements
    found = result.found
    k = max(found.reached.shape[1], 1)
    xy, where = np.unique(np.round(P[:, :2], 9), axis=0, return_inverse=True)
    where = where.reshape(-1)
    share = np.full(len(xy), -1.0)
    np.maximum.at(share, where, np.where(result.free, found.counts / k, -1.0))
    feasible = np.zeros(len(xy), bool)
    np.logical_or.at(feasible, where, result.free & found.reached.all(axis=1))
    score = np.zeros(len(xy))
    np.maximum.at(score, where, np.where(result.free & found.reached.all(axis=1), found.worst, 0.0))
    colors = colormap(np.clip(share, 0.0, 1.0))
    colors[share < 0] = BLOCKED
    if feasible.any():
        lo, hi = score[feasible].min(), score[feasible].max()
        t = (score[feasible] - lo) / (hi - lo) if hi > lo else np.ones(feasible.sum())
        colors[feasible] = np.column_stack([0.05 + 0.25 * t, 0.35 + 0.55 * t, 0.1 + 0.1 * t])
    return xy, colors, feasible


def squares(xy: np.ndarray, size: float, colors: np.ndarray, height: float = GROUND_LIFT) -> tuple[np.ndarray, ...]:
    """Flat squares (vertices (4m, 3) float32, faces (2m, 3) uint32, vertex colours (4m, 3))
    centred on xy (m, 2), facing up."""
    corners = 0.5 * size * np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float)
    m = len(xy)
    vertices = np.zeros((m, 4, 3))
    vertices[:, :, :2] = xy[:, None, :] + corners[None]
    vertices[:, :, 2] = height
    faces = (np.array([[0, 1, 2], [0, 2, 3]], np.uint32)[None] + 4 * np.arange(m, dtype=np.uint32)[:, None, None])
    return (vertices.reshape(-1, 3).astype(np.float32), faces.reshape(-1, 3),
            np.repeat(colors, 4, axis=0).astype(np.float32))


def arrow_points(placement: np.ndarray, length: float) -> np.ndarray:
    """(3, 6) line segments of an arrow on the ground from (x, y) along yaw: its shaft and head."""
    x, y, yaw = placement
    d = np.array([np.cos(yaw), np.sin(yaw)])
    n = np.array([-d[1], d[0]])
    p0, p1 = np.array([x, y]), np.array([x, y]) + length * d
    head = [p1 - 0.3 * length * d + 0.2 * length * n, p1 - 0.3 * length * d - 0.2 * length * n]
    points = [p0, p1, p1, head[0], p1, head[1]]
    return np.array([[p[0], p[1], 2 * GROUND_LIFT] for p in points]).T


class PlacementOverlay(Overlay):
    """The floor, the candidates and the object's poses of a placement result (module docstring)."""

    def __init__(self, node: Any, result: Any, poses: np.ndarray, step: float, scale: float) -> None:
        super().__init__(node)
        xy, colors, self.feasible = floor_colors(result)
        vertices, faces, vertex_colors = squares(xy, 0.9 * step, colors)
        node["floor"].set_object(mg.Mesh(mg.TriangularMeshGeometry(vertices, faces, color=vertex_colors),
                                         mg.MeshBasicMaterial(vertexColors=True, side=2)))
        self.box = (np.r_[xy.min(axis=0) - step, 0.0], np.r_[xy.max(axis=0) + step, 0.0])
        for i, c in enumerate(result.candidates):
            points = arrow_points(c.placement, ARROW * step * (1.6 if i == 0 and c.feasible else 1.0))
            node["candidates"][str(i)].set_object(mg.LineSegments(
                mg.PointsGeometry(points.astype(np.float32)),
                mg.LineBasicMaterial(color=PASSED if c.feasible else FAILED, linewidth=4)))
        for k, T in enumerate(poses):
            draw_axes(node["poses"][str(k)], 0.5 * scale, TARGET_AXIS_RADIUS)
            node["poses"][str(k)].set_transform(T)

    def world_box(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self.box


def view_direction(placement: np.ndarray, poses: np.ndarray) -> np.ndarray:
    """(3,) in w: from the scene towards the camera, beside the base at `placement` (x, y, yaw),
    a little behind it, above: the line from the base to the object's poses (T_wO (K, 4, 4)),
    where the obstacles the task reaches over stand, is seen from the side, never through them."""
    ahead = poses[:, :2, 3].mean(axis=0) - np.asarray(placement[:2], dtype=float)
    if np.linalg.norm(ahead) < 1e-9:
        ahead = np.array([math.cos(placement[2]), math.sin(placement[2])])
    ahead = ahead / np.linalg.norm(ahead)
    side = np.array([-ahead[1], ahead[0]])
    return np.r_[0.8 * side - 0.4 * ahead, 0.7]


def show_placement(mobile: Any, task: Any, result: Any, *, open: bool = False, obstacles: Any = None,
                   host: str | None = None, zmq_url: str | None = None, name: str = "placement") -> Viewer:
    """A Viewer of ``mobile.robot`` at the best placement holding the object at its first pose (or
    at the best-ranked placement, at the reference configuration), with the result's overlay and
    the collision model's obstacles (`obstacles`: a CollisionModel, or None)."""
    best = result.best
    if best is not None:
        q = best.q[0]
    elif result.candidates:
        q = mobile.configuration(result.candidates[0].placement)
    else:
        q = mobile.reference
    viewer = Viewer(mobile.robot, q=q, open=open, host=host, zmq_url=zmq_url)
    try:
        P = result.placements
        steps = np.diff(np.unique(np.round(P[:, 0], 9))) if len(P) else np.zeros(0)
        step = float(steps.min()) if len(steps) else 0.05
        viewer.add_overlay(name, lambda node: PlacementOverlay(node, result, task.poses, step, viewer.scale))
        if obstacles is not None and obstacles.obstacles:
            viewer.show_collisions(obstacles, within=0.01)
        viewer.frame_camera(view_direction(mobile.placement_of(q), task.poses))
    except BaseException:
        viewer.close()
        raise
    return viewer


def play(viewer: Viewer, q: np.ndarray, *, period: float = 0.4, rounds: int | None = None) -> None:
    """Show the configurations q (K, nq) one after the other, `period` [s] each, `rounds` times
    (None: until Ctrl-C; else at least 0); period in [0, 3600] s."""
    period = as_float(period, "period [s]", minimum=0.0, valid="a number of seconds in [0, 3600]",
                      error=ConfigurationError)
    if period > 3600.0:
        raise ConfigurationError(f"period [s] must be a number of seconds in [0, 3600], got {period:g}")
    if rounds is not None:
        rounds = as_count(rounds, "rounds", minimum=0, error=ConfigurationError)
    done = 0
    while rounds is None or done < rounds:
        for x in q:
            viewer.display(x)
            time.sleep(period)
        done += 1

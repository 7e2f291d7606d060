"""The scene's side of framing the camera: the page's camera, the scene shift, the grid, sizes.

meshcat's page always orbits its scene origin, so the scene (robot, overlays, grid, world axes)
is shifted by minus the camera's target: the robot's centre is where the page looks, and the
mouse orbits around it. Everything in w [m]; the pure geometry is in :mod:`reljac.viz.camera`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .camera import FIELD_OF_VIEW, CameraPose, grid_cell

LABEL_HEIGHT = 0.7  # label height, as a fraction of the viewer's scale
LABEL_MIN_FRACTION = 0.03  # ... and at least this fraction of the picture's height (a camera framing more)


def show_camera(scene: Any, camera: CameraPose, lower: np.ndarray, upper: np.ndarray, scale: float) -> None:
    """Set the page's camera to `camera`, framing the box [lower, upper]: shift the scene by minus
    its target, size the floor grid's cells (:func:`~reljac.viz.camera.grid_cell`) and the world
    axes (2 `scale` long). `scene`: the ``meshcat.Visualizer``."""
    shift = np.eye(4)
    shift[:3, 3] = -camera.target
    grid, axes = shift.copy(), shift.copy()  # meshcat's grid: 0.5 m cells; world axes 0.5 m long
    grid[:3, :3] *= grid_cell(lower, upper) / 0.5
    axes[:3, :3] *= 4.0 * scale
    for path, T in (("/meshcat", shift), ("/Grid", grid), ("/Axes", axes)):
        scene[path].set_transform(T)
    offset = camera.position - camera.target  # the camera's parent node has y up: (x, y, z)_w = (x, -z, y)
    scene["/Cameras/default/rotated/<object>"].set_property(
        "position", [float(offset[0]), float(offset[2]), float(-offset[1])])


def label_height(scale: float, camera: CameraPose) -> float:
    """[m] LABEL_HEIGHT times `scale`, and at least LABEL_MIN_FRACTION of the picture's height at
    the camera's target (labels stay readable when the camera frames more than the robot)."""
    picture = 2.0 * camera.distance * np.tan(np.radians(FIELD_OF_VIEW) / 2.0)
    return max(LABEL_HEIGHT * scale, LABEL_MIN_FRACTION * picture)

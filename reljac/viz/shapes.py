"""meshcat shapes reljac draws: axis triads, text sprites, colours.

Three.js cylinders lie along their local y axis; every shape here is built from that.
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pinocchio as pin

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import meshcat.geometry as mg

FRAME_AXIS_RADIUS = 0.04  # triad axis radius, as a fraction of the axis length
TARGET_AXIS_RADIUS = 0.015
TARGET_SPHERE_RADIUS = 0.1
SEGMENT_RADIUS = 0.004  # [m]
AXIS_COLORS = {"x": 0xFF0000, "y": 0x00C000, "z": 0x0000FF}
TARGET_SPHERE_COLOR = 0x00BCD4
SEGMENT_COLOR = 0xFFD400
TRAIL_COLOR = 0xFF00FF
ELLIPSOID_COLOR = 0x7E57C2

Y_AXIS = np.array([0.0, 1.0, 0.0])  # three.js cylinders lie along their local y axis


def rotation_y_to(direction: np.ndarray) -> np.ndarray:
    """A rotation matrix taking the y axis onto the unit vector `direction` (3,)."""
    return pin.Quaternion.FromTwoVectors(Y_AXIS, direction).toRotationMatrix()


def axis_transforms(length: float) -> dict[str, np.ndarray]:
    """(4, 4) poses, in the triad's frame, of y-aligned cylinders of `length` along x, y, z."""
    poses = {}
    for k, axis in enumerate("xyz"):
        T = np.eye(4)
        e = np.zeros(3)
        e[k] = 1.0
        T[:3, :3] = rotation_y_to(e)
        T[:3, 3] = 0.5 * length * e
        poses[axis] = T
    return poses


def material(color: int) -> mg.MeshLambertMaterial:
    return mg.MeshLambertMaterial(color=color)


class _TextTexture(mg.Texture):
    """A canvas texture drawn by the meshcat page (its "_text" texture type)."""

    def __init__(self, text: str, font_size: int = 64, font_face: str = "sans-serif") -> None:
        super().__init__()
        self.text, self.font_size, self.font_face = text, font_size, font_face

    def lower(self, object_data):
        return {"uuid": self.uuid, "type": "_text", "text": self.text,
                "font_size": self.font_size, "font_face": self.font_face}


class _SpriteMaterial(mg.GenericMaterial):
    _type = "SpriteMaterial"


class Sprite(mg.Object):
    """A camera-facing square of side `size` [m] (three.js Sprite; the geometry is unused)."""

    _type = "Sprite"

    def __init__(self, text: str, size: float) -> None:
        super().__init__(mg.Box([size, size, size]),
                         _SpriteMaterial(map=_TextTexture(text), transparent=True, color=0xFFFFFF))
        self.size = size

    def lower(self):
        data = super().lower()
        data["object"]["matrix"] = list(np.diag([self.size, self.size, self.size, 1.0]).flatten())
        return data



def draw_axes(node, scale: float, radius: float) -> None:
    """RGB axis cylinders (x red, y green, z blue) of length `scale` and radius `radius` * scale."""
    for axis, T in axis_transforms(scale).items():
        node[axis].set_object(mg.Mesh(mg.Cylinder(scale, radius * scale), material(AXIS_COLORS[axis])))
        node[axis].set_transform(T)



def translation(p: Sequence[float]) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = p
    return T

"""meshcat shapes reljac draws: axis triads, text labels, colours.

Three.js cylinders lie along their local y axis; every shape here is built from that.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pinocchio as pin

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import meshcat.geometry as mg

FRAME_AXIS_RADIUS = 0.04  # triad axis radius, as a fraction of the axis length
TARGET_AXIS_RADIUS = 0.015
TARGET_SPHERE_RADIUS = 0.1
SEGMENT_RADIUS = 0.04  # segment radius, as a fraction of the viewer's scale (0.004 m at 0.1 m)
AXIS_COLORS = {"x": 0xFF0000, "y": 0x00C000, "z": 0x0000FF}
TARGET_SPHERE_COLOR = 0x00BCD4
SEGMENT_COLOR = 0xFFD400
TRAIL_COLOR = 0xFF00FF
ELLIPSOID_COLOR = 0x7E57C2
LEADER_COLOR = 0x404040  # line from a frame to its label
LABEL_FONT_PX = 48

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


def material(color: int, on_top: bool = False) -> mg.MeshLambertMaterial:
    """A matte material; `on_top`: drawn over the robot (no depth test), as triads are."""
    if on_top:
        return mg.MeshLambertMaterial(color=color, depthTest=False, depthWrite=False)
    return mg.MeshLambertMaterial(color=color)


class OnTop(mg.Mesh):
    """A mesh drawn after the robot (three.js renderOrder), with an `on_top` material."""

    def lower(self):
        data = super().lower()
        data["object"]["renderOrder"] = 500
        return data


class _SpriteMaterial(mg.GenericMaterial):
    _type = "SpriteMaterial"


def font(px: int = LABEL_FONT_PX) -> Any:
    """Pillow's default font at `px` pixels (a small bitmap font on Pillow < 10.1)."""
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=px)
    except TypeError:  # Pillow < 10.1: a small bitmap font, scaled up by the sprite
        return ImageFont.load_default()


def png_bytes(image: Any) -> bytes:
    """A Pillow image as PNG bytes."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def label_png(text: str) -> tuple[bytes, float]:
    """A PNG of `text`, dark on a white rounded box with a grey border, and its width / height.

    Drawn with Pillow (a meshcat dependency) at 48 px so it stays sharp when magnified.
    """
    from PIL import Image, ImageDraw

    font_ = font()
    left, _, right, bottom = font_.getbbox(text or " ")
    ascent, descent = font_.getmetrics() if hasattr(font_, "getmetrics") else (bottom, 0)
    pad = max(3, (ascent + descent) // 6)
    width, height = int(right - left + 2 * pad), int(ascent + descent + 2 * pad)
    image = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    border = int(max(2, height // 16))
    draw.rounded_rectangle((0, 0, width - 1, height - 1), radius=height // 4, fill=(255, 255, 255, 230),
                           outline=(90, 90, 90, 255), width=border)
    draw.text((pad - left, pad), text, font=font_, fill=(20, 20, 20, 255))
    return png_bytes(image), width / height


class Picture(mg.Object):
    """A PNG image facing the camera, `height` [m] tall and `aspect` times as wide, drawn over
    everything (three.js Sprite with a PNG texture, no depth test; the geometry is unused)."""

    _type = "Sprite"

    def __init__(self, png: bytes, aspect: float, height: float) -> None:
        texture = mg.ImageTexture(mg.PngImage(png))
        super().__init__(mg.Box([1.0, 1.0, 1.0]),
                         _SpriteMaterial(map=texture, transparent=True, color=0xFFFFFF,
                                         depthTest=False, depthWrite=False))
        self.height, self.width = height, aspect * height

    def lower(self):
        data = super().lower()
        data["object"]["matrix"] = list(np.diag([self.width, self.height, 1.0, 1.0]).flatten())
        data["object"]["renderOrder"] = 1000  # after the robot and the other overlays
        return data


class Label(Picture):
    """A text label facing the camera, `height` [m] tall, drawn over everything; ``width`` [m]
    follows the text."""

    def __init__(self, text: str, height: float) -> None:
        super().__init__(*label_png(text), height)
        self.text = text


def draw_axes(node: Any, scale: float, radius: float) -> None:
    """RGB axis cylinders (x red, y green, z blue) of length `scale` and radius `radius` * scale,
    drawn over the robot (a frame inside a link stays visible)."""
    for axis, T in axis_transforms(scale).items():
        node[axis].set_object(OnTop(mg.Cylinder(scale, radius * scale), material(AXIS_COLORS[axis], on_top=True)))
        node[axis].set_transform(T)


def translation(p: Sequence[float]) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = p
    return T

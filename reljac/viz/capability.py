"""A capability map (:mod:`reljac.maps`) drawn as coloured voxels in frame a, following a.

The voxels are one merged mesh (24 vertices and 12 triangles per voxel, unlit, each face's colour
shaded by its direction so the cubes read as 3-D); colours run from dark blue (0) through green
to yellow (the map's largest value) over the coverage index (the fraction of approach directions
reached) or the best manipulability. At most ``max_voxels`` are drawn: the highest-valued ones.

The voxels are opaque cubes 0.6 voxel wide (gaps show what lies behind), with their true colours
(those of the legend). They are drawn before the robot and leave no depth behind, so the robot is
drawn whole through them (three.js draws opaque objects in render order: the voxels' is -1); among
themselves they are painted far to near as seen from the viewer's default direction, front faces
only. A legend (a colour bar with the value of each end) is drawn in the lower right of the
picture the viewer's camera frames (:meth:`CapabilityOverlay.on_camera`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..exceptions import ConfigurationError
from ..validation import as_count
from .camera import ASPECT, DEFAULT_DIRECTION, FIELD_OF_VIEW, CameraPose, view_axes
from .overlays import Overlay
from .shapes import Picture, font, mg, png_bytes, translation

if TYPE_CHECKING:  # pragma: no cover
    from ..maps import CapabilityMap

COLOR_BY = ("coverage", "manipulability")
TITLES = {"coverage": "coverage index (share of approach directions reached)",
          "manipulability": "best manipulability"}
MAX_VOXELS = 30_000
LEGEND_WIDTH = 0.45  # the legend's width, as a fraction of the picture's width
CUBE = 0.6  # a voxel's cube edge, as a fraction of the voxel
# viridis at 0, 0.25, 0.5, 0.75, 1
_STOPS = np.array([[0.267, 0.005, 0.329], [0.229, 0.322, 0.546], [0.128, 0.567, 0.551], [0.369, 0.789, 0.383],
                   [0.993, 0.906, 0.144]])
# the cube's 6 faces: (axis, sign) and a brightness that makes the faces tell apart
_FACES = [(0, 1.0, 0.8), (0, -1.0, 0.7), (1, 1.0, 0.9), (1, -1.0, 0.6), (2, 1.0, 1.0), (2, -1.0, 0.5)]


def colormap(values: np.ndarray) -> np.ndarray:
    """RGB (n, 3) in [0, 1] for values (n,) in [0, 1] (clipped), viridis-like."""
    x = np.clip(np.asarray(values, dtype=float), 0.0, 1.0) * (len(_STOPS) - 1)
    i = np.minimum(x.astype(int), len(_STOPS) - 2)
    t = (x - i)[:, None]
    return (1 - t) * _STOPS[i] + t * _STOPS[i + 1]


class CubeMesh(NamedTuple):
    """Merged cubes: ``vertices`` (24n, 3) float32, ``faces`` (12n, 3) uint32 and vertex
    ``colors`` (24n, 3) float32."""

    vertices: np.ndarray
    faces: np.ndarray
    colors: np.ndarray


def cube_mesh(centers: np.ndarray, size: float, colors: np.ndarray) -> CubeMesh:
    """Merged cubes: vertices (24n, 3) float32, faces (12n, 3) uint32, vertex colours (24n, 3)."""
    corner_list: list[np.ndarray] = []
    tri_list: list[tuple[int, int, int]] = []
    shade_list: list[float] = []
    for axis, sign, shade in _FACES:
        u, v = [k for k in range(3) if k != axis]
        base = len(corner_list)
        for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            c = np.zeros(3)
            c[axis], c[u], c[v] = sign, a, b
            corner_list.append(c)
            shade_list.append(shade)
        # counter-clockwise seen from outside (three.js front faces): (u, v, axis) right-handed or not
        outward = sign * np.cross(np.eye(3)[u], np.eye(3)[v])[axis] > 0
        quad = [(base, base + 1, base + 2), (base, base + 2, base + 3)]
        tri_list += quad if outward else [(i, k, j) for i, j, k in quad]
    corners = 0.5 * size * np.array(corner_list)                           # (24, 3)
    tris, shades = np.array(tri_list, np.uint32), np.array(shade_list)     # (12, 3), (24,)
    n = len(centers)
    vertices = (centers[:, None, :] + corners[None]).reshape(-1, 3)
    faces = (tris[None] + 24 * np.arange(n, dtype=np.uint32)[:, None, None]).reshape(-1, 3)
    vertex_colors = (colors[:, None, :] * shades[None, :, None]).reshape(-1, 3)
    return CubeMesh(vertices.astype(np.float32), faces, vertex_colors.astype(np.float32))


def map_frames(cmap: Any) -> tuple[str, str]:
    """(frame a, frame b) of a capability map; ConfigurationError for anything else (a path or
    text given for a map was a bare AttributeError)."""
    metadata = getattr(cmap, "metadata", None)
    if not isinstance(metadata, dict):
        raise ConfigurationError(f"show_capability_map draws a reljac.maps.CapabilityMap (load a file with "
                                 f"reljac.maps.load_map), not {type(cmap).__name__}")
    return metadata["frame_a"], metadata["frame_b"]


def voxel_values(cmap: CapabilityMap, color_by: str) -> tuple[np.ndarray, np.ndarray, float]:
    """(flat indices of reached voxels, their values in [0, 1], the value shown as 1) for the
    colouring."""
    if color_by not in COLOR_BY:
        raise ConfigurationError(f"color_by must be one of {', '.join(COLOR_BY)}, not {color_by!r}")
    flat = cmap.reached_voxels()
    values = (cmap.coverage_index() if color_by == "coverage" else cmap.best_manipulability).ravel()[flat]
    top = float(values.max(initial=0.0))
    return flat, values / top if top > 0 else values, top


def legend_png(title: str, top: float) -> tuple[bytes, float]:
    """A PNG legend: `title`, the colour bar from 0 to `top` with 0, top / 2 and top written under
    it, on a white rounded box; and its width / height."""
    from PIL import Image, ImageDraw

    text, small = font(40), font(34)
    bar, pad = 60, 24
    width = max(1000, int(text.getbbox(title)[2]) + 2 * pad)
    height = 2 * pad + 52 + bar + 10 + 44
    image = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((0, 0, width - 1, height - 1), radius=24, fill=(255, 255, 255, 235),
                           outline=(90, 90, 90, 255), width=3)
    draw.text((pad, pad), title, font=text, fill=(20, 20, 20, 255))
    top_y, left, right = pad + 52, pad + 30, width - pad - 30
    colors = (255 * colormap(np.linspace(0.0, 1.0, right - left))).astype(np.uint8)
    strip = Image.fromarray(np.repeat(colors[None], bar, axis=0), "RGB")
    image.paste(strip, (left, top_y))
    draw.rectangle((left, top_y, right - 1, top_y + bar - 1), outline=(60, 60, 60, 255), width=2)
    for fraction in (0.0, 0.5, 1.0):
        x = left + fraction * (right - 1 - left)
        draw.line((x, top_y + bar, x, top_y + bar + 8), fill=(60, 60, 60, 255), width=3)
        draw.text((x, top_y + bar + 10), f"{fraction * top:.3g}", font=small, fill=(20, 20, 20, 255), anchor="ma")
    return png_bytes(image), width / height


class Underlay(mg.Mesh):
    """A mesh drawn before everything else (three.js render order -1)."""

    def lower(self):
        data = super().lower()
        data["object"]["renderOrder"] = -1
        return data


class CapabilityOverlay(Overlay):
    """The voxels of a capability map, placed at frame a (T_wa) on every display."""

    def __init__(self, node: Any, cmap: CapabilityMap, frame_a: int, *, color_by: str = "coverage",
                 max_voxels: int = MAX_VOXELS) -> None:
        super().__init__(node)
        max_voxels = as_count(max_voxels, "max_voxels (the most voxels drawn)", minimum=1, error=ConfigurationError)
        self.frame_a = frame_a
        self.T_wa = np.eye(4)
        flat, values, top = voxel_values(cmap, color_by)
        if flat.size > max_voxels:
            keep = np.sort(np.argsort(-values, kind="stable")[:max_voxels])
            flat, values = flat[keep], values[keep]
        self.drawn = flat.size
        self.legend_centre: np.ndarray | None = None  # (3,) in w [m], once placed
        self.box_in_a = None  # (lower, upper) corners of the drawn voxels in a [m]
        if flat.size == 0:
            return
        centers = cmap.grid.centers(flat)
        half = 0.5 * cmap.grid.voxel
        self.box_in_a = (centers.min(axis=0) - half, centers.max(axis=0) + half)
        self._cubes = (centers, CUBE * cmap.grid.voxel, colormap(values))  # drawn by place (T_wa known)
        self.legend = Picture(*legend_png(TITLES[color_by], top), 1.0)
        node["legend"].set_object(self.legend)

    def place(self, oMf: Any) -> None:
        """Draw the cubes far to near as seen from the default view direction (in frame a)."""
        if self.drawn:
            centers, size, colors = self._cubes
            toward_camera = oMf[self.frame_a].rotation.T @ np.asarray(DEFAULT_DIRECTION)  # in a's axes
            far_first = np.argsort(centers @ toward_camera, kind="stable")
            vertices, faces, vertex_colors = cube_mesh(centers[far_first], size, colors[far_first])
            self.node["voxels"].set_object(Underlay(
                mg.TriangularMeshGeometry(vertices, faces, color=vertex_colors),
                mg.MeshBasicMaterial(vertexColors=True, side=0, depthWrite=False)))  # side 0: front faces
        self.update(oMf)

    def world_box(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(lower, upper) corners in w [m] of a box holding the drawn voxels, at the last display."""
        if self.box_in_a is None:
            return None
        lo, hi = self.box_in_a
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        world = corners @ self.T_wa[:3, :3].T + self.T_wa[:3, 3]
        return world.min(axis=0), world.max(axis=0)

    def update(self, oMf: Any) -> None:
        self.T_wa = oMf[self.frame_a].homogeneous
        if self.drawn:
            self.node["voxels"].set_transform(self.T_wa)

    def on_camera(self, camera: CameraPose) -> None:
        """Put the legend in the lower right of the picture `camera` takes (in its target's plane)."""
        if not self.drawn:
            return
        right, up, _ = view_axes(camera.direction)
        half_h = camera.distance * np.tan(np.radians(FIELD_OF_VIEW) / 2.0)
        half_w = ASPECT * half_h
        k = LEGEND_WIDTH * 2 * half_w / self.legend.width  # the sprite is legend.width x legend.height [m]
        width, height = k * self.legend.width, k * self.legend.height
        centre = camera.target + (0.96 * half_w - width / 2) * right + (-0.94 * half_h + height / 2) * up
        self.node["legend"].set_transform(translation(centre) @ np.diag([k, k, 1.0, 1.0]))
        self.legend_centre = centre

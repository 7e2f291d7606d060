"""A capability map (:mod:`reljac.maps`) drawn as coloured voxels in frame a, following a.

The voxels are one merged mesh (24 vertices and 12 triangles per voxel, unlit, each face's colour
shaded by its direction so the cubes read as 3-D); colours run from dark blue (0) through green
to yellow (the map's largest value) over the coverage index (the fraction of approach directions
reached) or the best manipulability. At most ``max_voxels`` are drawn: the highest-valued ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..exceptions import ConfigurationError
from .overlays import Overlay
from .shapes import mg

if TYPE_CHECKING:  # pragma: no cover
    from ..maps import CapabilityMap

COLOR_BY = ("coverage", "manipulability")
MAX_VOXELS = 30_000
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
        tri_list += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    corners = 0.5 * size * np.array(corner_list)                           # (24, 3)
    tris, shades = np.array(tri_list, np.uint32), np.array(shade_list)     # (12, 3), (24,)
    n = len(centers)
    vertices = (centers[:, None, :] + corners[None]).reshape(-1, 3)
    faces = (tris[None] + 24 * np.arange(n, dtype=np.uint32)[:, None, None]).reshape(-1, 3)
    vertex_colors = (colors[:, None, :] * shades[None, :, None]).reshape(-1, 3)
    return CubeMesh(vertices.astype(np.float32), faces, vertex_colors.astype(np.float32))


def voxel_values(cmap: CapabilityMap, color_by: str) -> tuple[np.ndarray, np.ndarray]:
    """(flat indices of reached voxels, their values in [0, 1]) for the colouring."""
    if color_by not in COLOR_BY:
        raise ConfigurationError(f"color_by must be one of {', '.join(COLOR_BY)}, not {color_by!r}")
    flat = cmap.reached_voxels()
    values = (cmap.coverage_index() if color_by == "coverage" else cmap.best_manipulability).ravel()[flat]
    top = values.max(initial=0.0)
    return flat, values / top if top > 0 else values


class CapabilityOverlay(Overlay):
    """The voxels of a capability map, placed at frame a (T_wa) on every display."""

    def __init__(self, node: Any, cmap: CapabilityMap, frame_a: int, *, color_by: str = "coverage",
                 max_voxels: int = MAX_VOXELS, opacity: float = 0.4) -> None:
        super().__init__(node)
        self.frame_a = frame_a
        self.T_wa = np.eye(4)
        flat, values = voxel_values(cmap, color_by)
        if flat.size > max_voxels:
            keep = np.sort(np.argsort(-values, kind="stable")[:max_voxels])
            flat, values = flat[keep], values[keep]
        self.drawn = flat.size
        self.box_in_a = None  # (lower, upper) corners of the drawn voxels in a [m]
        if flat.size == 0:
            return
        centers = cmap.grid.centers(flat)
        half = 0.5 * cmap.grid.voxel
        self.box_in_a = (centers.min(axis=0) - half, centers.max(axis=0) + half)
        vertices, faces, colors = cube_mesh(centers, 0.9 * cmap.grid.voxel, colormap(values))
        node["voxels"].set_object(mg.Mesh(
            mg.TriangularMeshGeometry(vertices, faces, color=colors),
            mg.MeshBasicMaterial(vertexColors=True, transparent=opacity < 1, opacity=opacity)))

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
        self.node.set_transform(self.T_wa)

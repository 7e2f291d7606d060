"""Simplified meshes for the viewer: a robot whole in the browser within seconds.

meshcat draws a mesh file as it is: a Collada (.dae) file travels as XML text and is parsed by
the page. Baxter's 28 visual meshes are 30 MB of Collada (409k triangles): headless Chromium
drew the pedestal, torso and head, and the arms a minute later. A :class:`Viewer` sends instead
each mesh of more than :data:`MESH_KEEP` triangles simplified to at most :data:`MESH_TRIANGLES`
(vertex clustering: the vertices in one cell of a regular grid merge into their mean; triangles
left with fewer than three corners go, those turned over are turned back) as binary arrays, each
triangle with its own corners (drawn flat-shaded: the smooth normals of merged shells are
noise), in the geometry's own colour (its URDF material); smaller meshes are sent whole, as
arrays too. Baxter: 4.5 MB instead of 30, its debug page whole 7 s after it opened instead of
60 (headless Chromium, load average 9.5). ``Viewer(..., meshes="full")`` (``--full-meshes``)
sends the files as they are (their own materials and textures).

The triangles are read from the geometry Pinocchio loaded (coal's BVH model, in the file's units
times the URDF's scale; the viewer's transforms apply the scale, so it is divided out here).
Reading them costs about 1 s per 100k triangles, so each simplified mesh is kept in a cache
folder (``RELJAC_CACHE_DIR``, else ``$XDG_CACHE_HOME/reljac``, else ``~/.cache/reljac``;
``meshes/``), keyed by the file's path, size, modification time, the scale and this module's
:data:`VERSION`: made once per file. A folder that cannot be written is not an error (the mesh
is then made again next time).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

with warnings.catch_warnings():  # meshcat imports pyzmq's deprecated zmq.eventloop.ioloop
    warnings.simplefilter("ignore", DeprecationWarning)
    import meshcat.geometry as mg
    from pinocchio.visualize import MeshcatVisualizer

MESH_KEEP = 1_000  # a mesh of at most this many triangles is sent whole
MESH_TRIANGLES = 4_000  # a larger one is simplified to at most this many
VERSION = 1  # of the simplification: part of the cache key
_memory: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def cache_dir() -> Path:
    """Where simplified meshes are kept (see the module docstring)."""
    base = os.environ.get("RELJAC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "reljac")
    return Path(base) / "meshes"


def mesh_arrays(geometry: Any) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, 3) float64, faces (m, 3) int64) of a coal BVH model or convex polytope, as
    loaded (scale included)."""
    if hasattr(geometry, "tri_indices"):
        count, triangle, vertices = geometry.num_tris, geometry.tri_indices, geometry.vertices()
    else:  # coal.Convex
        count, triangle, vertices = geometry.num_polygons, geometry.polygons, geometry.points()
    faces = np.empty((count, 3), dtype=np.int64)
    for k in range(count):
        t = triangle(k)
        faces[k] = (t[0], t[1], t[2])
    return np.asarray(vertices, dtype=float).reshape(-1, 3), faces


def cluster(vertices: np.ndarray, faces: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Vertex clustering on a grid of `cells` cells along the mesh's longest side: the vertices of
    one cell merge into their mean; degenerate and repeated triangles go. (vertices (k, 3),
    faces (l, 3)), only vertices some face uses."""
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    size = float((hi - lo).max()) or 1.0
    index = np.minimum(np.floor((vertices - lo) / (size / cells)).astype(np.int64), cells)
    key = (index[:, 0] * (cells + 1) + index[:, 1]) * (cells + 1) + index[:, 2]
    cells_used, of = np.unique(key, return_inverse=True)
    counts = np.bincount(of, minlength=len(cells_used)).astype(float)
    means = np.stack([np.bincount(of, weights=vertices[:, i], minlength=len(cells_used)) for i in range(3)],
                     axis=1) / counts[:, None]
    f = of[faces]
    keep = (f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])
    f, original = f[keep], faces[keep]
    # a merged triangle facing away from the one it comes from is turned over (meshes are drawn
    # from their front side: a turned triangle would be a hole)
    turned = np.einsum("ij,ij->i", _normals(vertices, original), _normals(means, f)) < 0
    f[turned] = f[turned][:, ::-1]
    _, first = np.unique(np.sort(f, axis=1), axis=0, return_index=True)  # one of each triangle
    f = f[np.sort(first)]
    used, f = np.unique(f, return_inverse=True)
    return means[used], f.reshape(-1, 3)


def _normals(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(m, 3) each triangle's normal times twice its area."""
    a, b, c = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
    return np.cross(b - a, c - a)


def simplify(vertices: np.ndarray, faces: np.ndarray, budget: int = MESH_TRIANGLES) -> tuple[np.ndarray, np.ndarray]:
    """The mesh with at most `budget` triangles: as it is if it has no more, else vertex clustering
    on the finest grid (down from 256 cells along its longest side) that leaves no more."""
    if len(faces) <= budget:
        return vertices, faces
    cells = 256
    while True:
        v, f = cluster(vertices, faces, cells)
        if len(f) <= budget or cells <= 2:
            return v, f
        cells = max(2, int(cells * 0.8))


def viewer_mesh(geometry_object: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(vertices (n, 3) float32 in the mesh file's units, faces (m, 3) uint32) of a geometry object
    loaded from a mesh file, simplified when it has more than MESH_KEEP triangles; None for one
    that is not a mesh. Cached (see the module docstring)."""
    geometry, path = geometry_object.geometry, str(getattr(geometry_object, "meshPath", "") or "")
    if not path or not (hasattr(geometry, "tri_indices") or hasattr(geometry, "polygons")):
        return None
    scale = np.asarray(geometry_object.meshScale, dtype=float).reshape(3)
    if not np.all(np.isfinite(scale)) or np.any(scale == 0):
        return None
    try:
        stat = os.stat(path)
        stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
    except OSError:
        stamp = "no file"
    key = hashlib.sha256(f"{VERSION}|{os.path.abspath(path)}|{stamp}|{scale.tolist()}|{MESH_KEEP}|{MESH_TRIANGLES}"
                         .encode()).hexdigest()[:32]
    if key in _memory:
        return _memory[key]
    found = _read(key)
    if found is None:
        vertices, faces = mesh_arrays(geometry)
        if len(faces) == 0:
            return None
        if len(faces) > MESH_KEEP:
            vertices, faces = simplify(vertices, faces)
        found = ((vertices / scale).astype(np.float32), faces.astype(np.uint32))
        _write(key, found)
    _memory[key] = found
    return found


def _read(key: str) -> tuple[np.ndarray, np.ndarray] | None:
    path = cache_dir() / f"{key}.npz"
    try:
        with np.load(path) as data:
            vertices, faces = data["vertices"], data["faces"]
    except Exception:  # none yet, or unreadable: made again
        return None
    if vertices.ndim != 2 or vertices.shape[1] != 3 or faces.ndim != 2 or faces.shape[1] != 3 or \
            (faces.size and int(faces.max()) >= len(vertices)):
        return None
    return vertices.astype(np.float32), faces.astype(np.uint32)


def _write(key: str, mesh: tuple[np.ndarray, np.ndarray]) -> None:
    folder = cache_dir()
    written = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".tmp", delete=False) as file:
            written = file.name
            np.savez(file, vertices=mesh[0], faces=mesh[1])
        os.replace(written, folder / f"{key}.npz")  # whole or not at all, for a reader at the same time
    except OSError:
        if written is not None:
            with contextlib.suppress(OSError):
                os.unlink(written)


class RobotVisualizer(MeshcatVisualizer):
    """Pinocchio's ``MeshcatVisualizer``, whose mesh files are sent as arrays, simplified above
    MESH_KEEP triangles (:func:`viewer_mesh`), unless `full_meshes` (then as the files are)."""

    def __init__(self, *args: Any, full_meshes: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.full_meshes = bool(full_meshes)

    def loadMeshFromFile(self, geometry_object: Any) -> Any:
        if not self.full_meshes:
            mesh = viewer_mesh(geometry_object)
            if mesh is not None:
                vertices, faces = mesh  # each triangle its own corners: drawn flat-shaded (the
                corners = vertices[faces].reshape(-1, 3)  # smooth normals of merged shells are noise)
                return mg.TriangularMeshGeometry(corners, np.arange(len(corners), dtype=np.uint32).reshape(-1, 3))
        return super().loadMeshFromFile(geometry_object)


def scene_objects(viewer: Any) -> list[dict]:
    """The robot's visual geometries in a :class:`~reljac.viz.Viewer`'s scene, in order: their
    node ``path`` (as meshcat names it in its commands), ``name`` and the ``bytes`` of their
    drawing sent to the server (what a page has to load; 0 if unknown)."""
    visualizer = viewer.visualizer
    sizes = getattr(viewer.viewer.window, "sizes", {})
    out = []
    for g in visualizer.visual_model.geometryObjects:
        path = viewer.viewer[visualizer.getViewerNodeName(g, pin.GeometryType.VISUAL)].path.lower()
        out.append({"path": path, "name": g.name, "bytes": int(sizes.get(path, 0))})
    return out

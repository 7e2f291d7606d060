"""The viewer's simplified meshes (issue 43: Baxter's 30 MB of Collada left a page without arms
for a minute and a half): the surface kept, its triangles facing out, a cache made once per file,
and a robot's meshes reaching the page as arrays where Pinocchio puts its geometry.

Oracles: a sphere's own radius and outward normals; coal's bounding box of each geometry it
loaded; umsgpack decoding of what the meshcat server holds.
"""

from __future__ import annotations

import base64
import re
from types import SimpleNamespace

import coal
import numpy as np
import pytest
import umsgpack

from reljac import Robot
from reljac.robots import example_robots
from reljac.viz import Viewer, meshes
from reljac.viz.meshes import MESH_TRIANGLES, simplify, viewer_mesh


def sphere(rings: int = 120, segments: int = 240) -> tuple[np.ndarray, np.ndarray]:
    """A unit UV sphere: vertices (n, 3), faces (m, 3) counter-clockwise seen from outside."""
    theta = np.linspace(0.0, np.pi, rings + 1)
    phi = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    vertices = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1).reshape(-1, 3)
    faces = []
    for i in range(rings):
        for j in range(segments):
            a, b = i * segments + j, i * segments + (j + 1) % segments
            c, d = a + segments, b + segments
            faces += [[a, c, b], [b, c, d]]
    return vertices, np.array(faces)


def test_simplify_keeps_the_surface_its_sides_and_its_budget():
    vertices, faces = sphere()
    assert len(faces) > 50_000
    v, f = simplify(vertices, faces, budget=4_000)
    assert 1_000 < len(f) <= 4_000 and f.max() < len(v)
    radius = np.linalg.norm(v, axis=1)
    assert np.abs(radius - 1.0).max() < 0.05  # the merged vertices stay on the surface
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    normals = np.cross(b - a, c - a)
    outward = np.einsum("ij,ij->i", normals, (a + b + c) / 3) > 0
    assert outward.mean() > 0.99, outward.mean()  # drawn from their front side: no holes
    nearest = np.min(np.linalg.norm(vertices[::37, None, :] - v[None, :, :], axis=2), axis=1)
    assert nearest.max() < 0.1  # every part of the surface is still there
    assert simplify(v, f, budget=4_000)[1] is f  # a mesh within the budget is kept as it is


def bvh(vertices: np.ndarray, faces: np.ndarray) -> coal.BVHModelOBBRSS:
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(faces), len(vertices))
    model.addVertices(np.asarray(vertices, dtype=float))
    model.addTriangles(np.asarray(faces, dtype=np.int32))
    model.endModel()
    return model


def test_viewer_mesh_divides_out_the_scale_and_is_made_once(tmp_path, monkeypatch):
    monkeypatch.setenv("RELJAC_CACHE_DIR", str(tmp_path / "cache"))
    meshes._memory.clear()
    vertices, faces = sphere()
    mesh_file = tmp_path / "ball.stl"
    mesh_file.write_text("a mesh file (only its path, size and time are read)")
    scale = np.array([2.0, 2.0, 0.5])
    geometry = SimpleNamespace(geometry=bvh(vertices * scale, faces), meshPath=str(mesh_file), meshScale=scale)
    v, f = viewer_mesh(geometry)
    assert v.dtype == np.float32 and f.dtype == np.uint32 and len(f) <= MESH_TRIANGLES
    assert np.abs(np.linalg.norm(v, axis=1) - 1.0).max() < 0.05  # in the file's units: the unit sphere
    cached = list((tmp_path / "cache" / "meshes").glob("*.npz"))
    assert len(cached) == 1
    meshes._memory.clear()
    geometry.geometry = bvh(np.eye(3), np.array([[0, 1, 2]]))  # another mesh: not read, the cache answers
    again = viewer_mesh(geometry)
    np.testing.assert_array_equal(again[0], v)
    np.testing.assert_array_equal(again[1], f)


def test_a_cache_folder_that_cannot_be_written_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("RELJAC_CACHE_DIR", str(blocker))  # a file: no folder can be made there
    meshes._memory.clear()
    vertices, faces = sphere(40, 80)
    geometry = SimpleNamespace(geometry=bvh(vertices, faces), meshPath=str(blocker), meshScale=np.ones(3))
    v, f = viewer_mesh(geometry)
    assert 0 < len(f) <= MESH_TRIANGLES and np.abs(np.linalg.norm(v, axis=1) - 1.0).max() < 0.05


def sent_visuals(viewer: Viewer) -> dict[str, dict]:
    """The set_object messages of the robot's visuals the meshcat server holds, by node name."""
    html = viewer.viewer.static_html()
    out = {}
    for blob in re.findall(r"data:application/octet-binary;base64,([A-Za-z0-9+/=]+)", html):
        message = umsgpack.unpackb(base64.b64decode(blob))
        if message.get("type") == "set_object" and "/visuals/" in message["path"]:
            out[message["path"].rsplit("/", 1)[1]] = message
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["panda", "baxter"])
def test_a_robots_meshes_reach_the_page_as_arrays_within_their_geometrys_box(name, tmp_path, monkeypatch):
    if name not in example_robots():
        pytest.skip(f"needs example-robot-data's {name}")
    monkeypatch.setenv("RELJAC_CACHE_DIR", str(tmp_path))
    robot = Robot.load(name)
    with Viewer(robot, announce=False) as viewer:
        sent = sent_visuals(viewer)
    checked = 0
    for g in robot.visual_model.geometryObjects:
        if not g.meshPath or not hasattr(g.geometry, "tri_indices"):
            continue
        geometry = sent[g.name]["object"]["geometries"][0]
        assert geometry["type"] == "BufferGeometry", g.name  # arrays, not the file
        points = np.frombuffer(geometry["data"]["attributes"]["position"]["array"].data, dtype=np.float32)
        points = points.reshape(-1, 3) * g.meshScale  # meshcat packs (3, n) column-major: vertex by vertex
        triangles = len(points) // 3  # each triangle its own corners
        assert triangles <= MESH_TRIANGLES
        g.geometry.computeLocalAABB()
        lo, hi = np.asarray(g.geometry.aabb_local.min_), np.asarray(g.geometry.aabb_local.max_)
        tolerance = 0.02 * np.linalg.norm(hi - lo) + 1e-6  # merged vertices move by less than a cell
        assert np.all(points.min(axis=0) >= lo - tolerance) and np.all(points.max(axis=0) <= hi + tolerance), g.name
        assert np.all(points.min(axis=0) <= lo + 0.25 * (hi - lo) + tolerance), g.name  # it spans the box
        checked += 1
    assert checked >= 5
    with Viewer(robot, announce=False, meshes="full") as viewer:  # the files as they are
        sent = sent_visuals(viewer)
    files = [m for m in sent.values() if not any(g.get("type") == "BufferGeometry" for g in m["object"].get("geometries", []))]
    assert files, "meshes='full' sent no mesh file"

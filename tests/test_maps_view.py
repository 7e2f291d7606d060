"""Capability maps on the command line and in the browser: `reljac map` writes the map the API
computes, `reljac view --map` draws its voxels where frame a is, in the map's colours."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from test_viz import Browser, needs_chromium, read_png, scene_messages

import reljac
from reljac.apps.cli import main
from reljac.apps.view import view
from reljac.exceptions import MapError
from reljac.maps import capability_map, load_map
from reljac.viz.capability import colormap, cube_mesh, voxel_values

pytestmark = pytest.mark.slow

ARGS = dict(samples=30_000, voxel=0.1, seed=2, part=("vy",))


@pytest.fixture(scope="module")
def map_file(planar, tmp_path_factory):
    path = tmp_path_factory.mktemp("maps") / "planar.npz"
    assert main(["map", "planar_2link", "link1", "tip", "--samples", "30000", "--voxel", "0.1", "--seed", "2",
                 "--part", "vy", "--out", str(path), "--no-progress"]) == 0
    return path


def test_the_cli_writes_the_map_the_api_computes(planar, tmp_path, capsys):
    path = tmp_path / "cli.npz"
    assert main(["map", "planar_2link", "link1", "tip", "--samples", "30000", "--voxel", "0.1", "--seed", "2",
                 "--part", "vy", "--out", str(path), "--no-progress"]) == 0
    assert load_map(path) == capability_map(planar, "link1", "tip", **ARGS)
    out = capsys.readouterr().out
    assert "30,000 samples" in out and f"saved to {path}" in out


def test_the_cli_progress_bar_shows_samples_per_second_in_a_terminal(tmp_path):
    """Run `reljac map` in a pseudo-terminal, as a person would, and read what it shows."""
    pytest.importorskip("tqdm")
    import os
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: stdout and stderr are the terminal
        os.execv(sys.executable, [sys.executable, "-c", "import sys; from reljac.apps.cli import main; sys.exit(main())",
                                  "map", "planar_2link", "base_link", "tip", "--samples", "400000", "--voxel",
                                  "0.2", "--chunk", "20000", "--workers", "1", "--out", str(tmp_path / "m.npz")])
    shown = b""
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        shown += data
    _, status = os.waitpid(pid, 0)
    text = shown.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "samples/s" in text and "400k/400k" in text, text
    assert f"saved to {tmp_path / 'm.npz'}" in text


@pytest.mark.parametrize("argv, message", [
    (["--voxel", "0"], "voxel must be a positive number"),
    (["--voxel", "0.1", "--directions", "65"], "1..64"),
    (["--voxel", "0.1", "--scheduler", "42"], "SchedulerAddressError"),  # not an address: a wrong value
])
def test_cli_bad_input_is_one_line(argv, message, tmp_path, capsys):
    if "--scheduler" in argv:
        pytest.importorskip("distributed")
    code = main(["map", "planar_2link", "base_link", "tip", "--samples", "100", "--out", str(tmp_path / "x"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1 and err.startswith("reljac: error:")


def test_cli_unknown_frame_is_one_line(tmp_path, capsys):
    code = main(["map", "planar_2link", "base_link", "tipp", "--samples", "10", "--voxel", "0.1", "--out",
                 str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2 and "FrameNotFound" in err and "did you mean 'tip'" in err


def pin_rotation_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# ------------------------------------------------------------------------------------ drawing
def test_cubes_fill_their_voxels_and_colours_run_low_to_high():
    centers = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    vertices, faces, colours = cube_mesh(centers, 0.5, colormap(np.array([0.0, 1.0])))
    assert vertices.shape == (48, 3) and faces.shape == (24, 3) and colours.shape == (48, 3)
    for k, c in enumerate(centers):
        v = vertices[24 * k: 24 * (k + 1)]
        np.testing.assert_allclose(v.min(axis=0), c - 0.25, atol=1e-6)
        np.testing.assert_allclose(v.max(axis=0), c + 0.25, atol=1e-6)
    assert faces.max() == 47 and faces.min() == 0
    low, high = colormap(np.array([0.0, 1.0, 2.0, -1.0]))[[0, 1]]
    assert high.sum() > 2 * low.sum()
    np.testing.assert_array_equal(colormap(np.array([2.0, -1.0])), colormap(np.array([1.0, 0.0])))


def test_voxel_values_are_the_coverage_index_or_the_relative_manipulability(map_file):
    cmap = load_map(map_file)
    flat, values, _ = voxel_values(cmap, "manipulability")
    assert values.max() == 1.0 and values.min() >= 0.0
    np.testing.assert_array_equal(flat, cmap.reached_voxels())
    flat, values, _ = voxel_values(cmap, "coverage")
    np.testing.assert_allclose(values, 1.0)  # a planar tip: one direction everywhere, the largest
    with pytest.raises(reljac.ReljacError, match="color_by"):
        voxel_values(cmap, "speed")


def test_view_draws_the_map_at_frame_a_and_refuses_another_robots_map(planar, map_file, tmp_path):
    q = np.array([0.7, -0.3])
    viewer = view(planar, [], q, hold=False, capability_map=map_file, color_by="manipulability")
    try:
        name = "capability map tip in link1"
        assert viewer.overlays == ["link1", "tip", "link1--tip", name]
        overlay = viewer._overlays[name]
        np.testing.assert_allclose(overlay.T_wa, reljac.Kinematics(planar, q).placement("link1").homogeneous)
        assert overlay.drawn == load_map(map_file).reached.sum()
        q2 = np.array([-0.2, 0.4])
        viewer.display(q2)
        np.testing.assert_allclose(overlay.T_wa[:3, :3], pin_rotation_z(-0.2), atol=1e-12)  # link1 turns by q1
    finally:
        viewer.close()
    other = capability_map(reljac.Robot.bundled("hand"), "index_tip", "thumb_tip", samples=100, voxel=0.05)
    other.save(tmp_path / "hand.npz")
    with pytest.raises(MapError, match="robot 'hand'"):
        view(planar, [], hold=False, capability_map=tmp_path / "hand.npz")


def test_the_camera_frames_the_voxels_and_the_robot(planar, tmp_path):
    from reljac.viz.camera import project

    map_file = capability_map(planar, "base_link", "tip", samples=20_000, voxel=0.1).save(tmp_path / "ring.npz")
    viewer = view(planar, [], np.array([0.7, -0.3]), hold=False, capability_map=map_file)
    try:
        overlay = viewer._overlays["capability map tip in base_link"]
        lo, hi = overlay.world_box()
        cmap = load_map(map_file)
        centers = cmap.grid.centers(cmap.reached_voxels())
        T = overlay.T_wa
        world = centers @ T[:3, :3].T + T[:3, 3]
        assert np.all(world >= lo - 1e-9) and np.all(world <= hi + 1e-9)
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        robot_lo, robot_hi = viewer.bounding_box()
        robot = np.array([[x, y, z] for x in (robot_lo[0], robot_hi[0]) for y in (robot_lo[1], robot_hi[1])
                          for z in (robot_lo[2], robot_hi[2])])
        xy = project(np.vstack([corners, robot]), viewer.camera)
        assert np.all(np.abs(xy) <= 1.0 + 1e-9), "voxels or robot outside the picture"
        viewer.frame_camera(box=viewer.bounding_box())  # the robot alone: the ring of voxels does not fit
        assert np.any(np.abs(project(corners, viewer.camera)) > 1.0)
    finally:
        viewer.close()


@needs_chromium
def test_browser_shows_the_voxels_in_their_colours(planar, chromium, tmp_path):
    """Voxels coloured by manipulability: the ring of largest manipulability is viridis yellow."""
    map_file = capability_map(planar, "base_link", "tip", samples=100_000, voxel=0.1, part=("vx", "vy")).save(
        tmp_path / "ring.npz")

    def yellow_pixels(browser: Browser, with_map: bool) -> int:
        viewer = view(planar, ["base_link", "tip"], np.zeros(2), hold=False,
                      capability_map=map_file if with_map else None, color_by="manipulability")
        try:
            browser.load(viewer.url, scene_messages(viewer))
            img = read_png(browser.screenshot()).astype(int)
        finally:
            viewer.close()
        r, g, b = img[..., 0], img[..., 1], img[..., 2]
        return int(((r > 150) & (g > 130) & (b < 90) & (r - b > 100)).sum())

    assert yellow_pixels(chromium, True) > 300  # each view is a page of its own
    assert yellow_pixels(chromium, False) < 30

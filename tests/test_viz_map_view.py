"""The viewer keeps the robot in the picture, and a capability map reads well (issue 18 item 6):
the camera follows a robot that leaves the picture; the map has a colour legend, the robot is
drawn whole through the voxels, labels stay readable when the camera frames the whole map."""

from __future__ import annotations

import numpy as np
import pytest
from test_viz import arm_colours, colour_mask, needs_chromium, read_png, scene_messages

from reljac.maps import capability_map
from reljac.viz import Viewer
from reljac.viz.camera import (
    ASPECT,
    FIELD_OF_VIEW,
    box_corners,
    frame_box,
    frame_points,
    leaves_picture,
    points_leave_picture,
    project,
    view_axes,
)
from reljac.viz.capability import colormap, legend_png

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dual_map(dual_arm):
    return capability_map(dual_arm, "torso", "left_tool", samples=20_000, voxel=0.1, seed=1)


def fist(hand):
    return hand.q_from_joint_values({f"{f}_{j}": 1.5 for f in ("index", "middle", "ring") for j in ("mcp", "pip")})


# ---------------------------------------------------------------------------- leaving the picture
@pytest.mark.parametrize("direction", [(1.0, 0.3, 0.4), (0.0, -1.0, 0.2), (-0.3, 0.2, -1.0)])
def test_a_box_leaves_the_picture_when_a_corner_projects_out_of_it(direction):
    lo, hi = np.array([-0.2, -0.1, 0.0]), np.array([0.3, 0.2, 0.5])
    camera = frame_box(lo, hi, direction)
    assert not leaves_picture(lo, hi, camera)  # framed: every corner at most FILL = 0.9 from the centre
    grown = 0.5 * (lo + hi) + 1.5 * (np.array([lo, hi]) - 0.5 * (lo + hi))
    assert leaves_picture(grown[0], grown[1], camera)
    right, up, _ = view_axes(camera.direction)
    half_h = camera.distance * np.tan(np.radians(FIELD_OF_VIEW) / 2)  # the picture's half-height at the target
    for x, y, out in [(0.95, 0.0, False), (1.05, 0.0, True), (0.0, -0.97, False), (0.0, 1.03, True)]:
        point = camera.target + x * ASPECT * half_h * right + y * half_h * up
        assert leaves_picture(point - 1e-4, point + 1e-4, camera) is out, (x, y)
    behind = camera.position + 0.5 * camera.direction  # behind the camera: out
    assert leaves_picture(behind - 0.01, behind + 0.01, camera)


def test_the_camera_follows_a_hand_whose_fingers_straighten_out_of_the_picture(hand):
    with Viewer(hand, q=fist(hand)) as viewer:
        first = viewer.camera
        viewer.display(hand.neutral())  # the straight fingers reach out of the first picture
        assert points_leave_picture(viewer.robot_points(), first)
        expected = frame_points(viewer.robot_points(), first.direction)
        np.testing.assert_allclose(viewer.camera.position, expected.position, atol=1e-12)
        assert not points_leave_picture(viewer.robot_points(), viewer.camera)
        bent = hand.q_from_joint_values({"index_mcp": 0.1})  # still inside the picture: the camera stays
        viewer.display(bent)
        assert not points_leave_picture(viewer.robot_points(), expected)
        np.testing.assert_allclose(viewer.camera.position, expected.position, atol=1e-12)
        viewer.display(fist(hand))  # the fist's fingers curl below the straight hand's picture: framed again
        assert points_leave_picture(viewer.robot_points(), expected)
        np.testing.assert_allclose(viewer.camera.position,
                                   frame_points(viewer.robot_points(), first.direction).position, atol=1e-12)
    with Viewer(hand, q=fist(hand), follow=False) as viewer:
        first = viewer.camera
        viewer.display(hand.neutral())
        assert viewer.camera is first


# ---------------------------------------------------------------------------- the map view
def test_the_legend_is_a_colour_bar_from_zero_to_the_largest_value():
    import io

    from PIL import Image

    png, aspect = legend_png("coverage index", 0.25)
    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    assert image.shape[1] / image.shape[0] == pytest.approx(aspect)
    row = image[int(0.55 * image.shape[0])]  # through the bar
    expected = (255 * colormap(np.array([0.0, 0.5, 1.0]))).astype(int)
    for colour in expected:
        assert np.min(np.abs(row - colour).sum(axis=1)) <= 6, colour


def test_the_map_view_frames_voxels_and_robot_with_a_legend_and_readable_labels(dual_arm, dual_map):
    with Viewer(dual_arm) as viewer:
        viewer.show_frame("left_tool", label="left_tool")
        robot_only_label = viewer._overlays["left_tool"].label.height
        name = viewer.show_capability_map(dual_map)
        overlay = viewer._overlays[name]
        lower, upper = overlay.world_box()
        assert not points_leave_picture(np.vstack([box_corners(lower, upper), viewer.robot_points()]), viewer.camera)
        picture = 2 * viewer.camera.distance * np.tan(np.radians(FIELD_OF_VIEW) / 2)
        label = viewer._overlays["left_tool"].label.height
        assert label >= 0.03 * picture - 1e-12 and label > robot_only_label  # the camera is farther: bigger
        centre = overlay.legend_centre  # the legend lies in the lower right of the picture
        xy = project(centre[None], viewer.camera)[0]
        assert 0.0 < xy[0] < 1.0 and -1.0 < xy[1] < 0.0


@needs_chromium
def test_the_robot_is_drawn_whole_through_the_voxels_and_the_legend_shows(dual_arm, dual_map, chromium, tmp_path):
    """Screenshots: the arms' colours cover as many pixels with the voxels as without them."""
    browser = chromium  # 800 x 600
    with Viewer(dual_arm) as viewer:
        name = viewer.show_capability_map(dual_map)
        browser.load(viewer.url, scene_messages(viewer))
        browser.wait_textures()  # the legend's texture is a PNG decoded after its message

        def shot():
            browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))",
                             await_promise=True)
            data = browser.screenshot()
            return read_png(data), data

        with_voxels, png = shot()
        (tmp_path / "map_view.png").write_bytes(png)
        seen = browser.messages()
        viewer.viewer[viewer.root]["overlays"][name]["voxels"].set_property("visible", False)
        browser.wait_messages(seen + 1)
        without, _ = shot()
    for side, rgba in arm_colours(dual_arm).items():
        bare = int(colour_mask(without, rgba).sum())
        assert bare > 300, side
        assert int(colour_mask(with_voxels, rgba).sum()) >= 0.95 * bare, side
    h, w = with_voxels.shape[:2]
    corner = with_voxels[h // 2:, w // 2:].reshape(-1, 3).astype(int)  # the legend's yellow end
    yellow = (255 * colormap(np.array([1.0]))[0]).astype(int)
    assert (np.abs(corner - yellow).sum(axis=1) <= 30).sum() > 100


def test_the_box_the_camera_follows_moves_the_local_boxes_computed_once(dual_arm):
    """follow measures the robot's box on every display: the mesh boxes are computed once, then
    moved; the result equals a fresh computation."""
    from reljac.viz.bounds import geometry_corners

    with Viewer(dual_arm) as viewer:
        for seed in range(3):
            viewer.display(dual_arm.random_configuration(seed))
            fresh = geometry_corners(viewer.visualizer.visual_model, viewer.visualizer.visual_data)
            lower, upper = viewer.bounding_box()
            np.testing.assert_allclose(lower, fresh.min(axis=0), atol=1e-12)
            np.testing.assert_allclose(upper, fresh.max(axis=0), atol=1e-12)


def test_cube_faces_turn_counter_clockwise_seen_from_outside():
    """Only front faces are drawn (three.js: counter-clockwise): each triangle's normal by the
    right-hand rule points away from its cube's centre."""
    from reljac.viz.capability import cube_mesh

    centers = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]])
    vertices, faces, _ = cube_mesh(centers, 0.3, colormap(np.array([0.2, 0.8])))
    for k, (i, j, m) in enumerate(faces):
        a, b, c = vertices[[i, j, m]].astype(float)
        normal = np.cross(b - a, c - a)
        outward = (a + b + c) / 3 - centers[k // 12]
        assert normal @ outward > 0, k

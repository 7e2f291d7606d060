"""Camera framing, overlay sizes and label layout: pure functions, no server, no browser.

The closed-form camera distance of ``frame_box`` is checked against a bisection on an
angle-based visibility test written here from scratch, and the label layout against plain
rectangle-intersection checks.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from reljac import ReljacError
from reljac.viz.camera import (
    FIELD_OF_VIEW,
    FILL,
    box_corners,
    frame_box,
    frame_points,
    grid_cell,
    overlay_scale,
    points_leave_picture,
    project,
    view_axes,
)
from reljac.viz.labels import place_labels

BOXES = [  # (lower, upper) [m]: a hand, a humanoid, an arm spread sideways, a thin plate
    ([-0.03, -0.07, -0.10], [0.012, 0.18, 0.15]),
    ([-0.21, -0.38, -1.08], [0.12, 0.38, 0.67]),
    ([-0.3, -1.305, 0.0], [0.3, 1.305, 1.5]),
    ([-0.5, -0.5, 0.0], [0.5, 0.5, 0.01]),
]
DIRECTIONS = [(1.0, 0.3, 0.4), (3.0, 0.0, 1.0), (-1.0, 2.0, 0.5), (0.0, 0.0, 1.0), (0.2, -1.0, -0.3)]


def visible(camera_position, target, corners, half_v, half_h) -> bool:
    """Every corner inside the view cone, by angles measured from the optical axis (z up)."""
    forward = (target - camera_position) / np.linalg.norm(target - camera_position)
    up_hint = np.array([0.0, 0.0, 1.0]) if abs(forward[2]) < 0.999 else np.array([0.0, 1.0, 0.0])
    side = np.cross(forward, up_hint)
    side /= np.linalg.norm(side)
    up = np.cross(side, forward)
    for c in corners:
        d = c - camera_position
        ahead = d @ forward
        if ahead <= 0:
            return False
        if np.arctan2(abs(d @ up), ahead) > half_v + 1e-12 or np.arctan2(abs(d @ side), ahead) > half_h + 1e-12:
            return False
    return True


@pytest.mark.parametrize("box", BOXES)
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_frame_box_is_the_closest_camera_that_sees_the_whole_box(box, direction):
    aspect = 4.0 / 3.0
    camera = frame_box(*box, direction, aspect=aspect)
    lo, hi = np.array(box[0]), np.array(box[1])
    np.testing.assert_allclose(camera.target, 0.5 * (lo + hi), atol=1e-12)
    u = np.array(direction) / np.linalg.norm(direction)
    np.testing.assert_allclose(camera.direction, u, atol=1e-12)
    tan_v = FILL * np.tan(np.radians(FIELD_OF_VIEW / 2))
    half_v, half_h = np.arctan(tan_v), np.arctan(aspect * tan_v)
    corners = box_corners(lo, hi)
    near, far = 0.0, 100.0  # bisection on the distance with the angle test
    for _ in range(80):
        mid = 0.5 * (near + far)
        if visible(camera.target + mid * u, camera.target, corners, half_v, half_h):
            far = mid
        else:
            near = mid
    assert camera.distance == pytest.approx(far, rel=1e-9, abs=1e-9)
    # and in the picture: every corner inside the filled part, one on its edge
    xy = project(corners, camera, aspect=aspect)
    assert np.all(np.abs(xy) <= FILL + 1e-9)
    assert np.max(np.abs(xy)) == pytest.approx(FILL, rel=1e-9)


def scattered(seed: int, n: int = 40) -> np.ndarray:
    """n points (n, 3) [m]: a cloud stretched along one random axis (an arm held out)."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)) * rng.uniform(0.05, 1.0, size=3) + rng.normal(size=3)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_frame_points_is_the_closest_camera_that_sees_every_point(seed, direction):
    """Oracle: scipy's linear programme over the camera's lateral offset (a, b) and distance D
    (minimize D; every point's lateral coordinates within fill tan(fov/2) of its depth ahead),
    and the angle test written here."""
    from scipy.optimize import linprog

    points, aspect = scattered(seed), 4.0 / 3.0
    camera = frame_points(points, direction, aspect=aspect)
    u = np.array(direction) / np.linalg.norm(direction)
    np.testing.assert_allclose(camera.direction, u, atol=1e-12)
    right, up, back = view_axes(direction)
    tan_v = FILL * np.tan(np.radians(FIELD_OF_VIEW / 2))
    x, y, z = points @ right, points @ up, points @ back
    rows, bounds = [], []  # (a, b, D): +-(x - a) <= t (D - z), the same for y with b
    for lateral, column, t in ((x, 0, aspect * tan_v), (y, 1, tan_v)):
        for sign in (1.0, -1.0):
            for value, depth in zip(lateral, z, strict=True):
                row = np.zeros(3)
                row[column], row[2] = -sign, -t
                rows.append(row)
                bounds.append(-sign * value - t * depth)
    best = linprog([0.0, 0.0, 1.0], A_ub=np.array(rows), b_ub=np.array(bounds), bounds=[(None, None)] * 3)
    assert best.status == 0
    assert camera.position @ back == pytest.approx(best.x[2], rel=1e-9, abs=1e-9)  # the least distance
    half_v, half_h = np.arctan(tan_v), np.arctan(aspect * tan_v)
    assert visible(camera.position, camera.target, points, half_v, half_h)
    xy = project(points, camera, aspect=aspect)
    assert np.all(np.abs(xy) <= FILL + 1e-9)
    span = np.ptp(xy, axis=0)  # on one axis the picture's filled part, from edge to edge: centred
    assert np.max(span) == pytest.approx(2 * FILL, rel=1e-9)
    axis = int(np.argmax(span))
    assert xy[:, axis].max() == pytest.approx(FILL, rel=1e-9) and xy[:, axis].min() == pytest.approx(-FILL, rel=1e-9)
    assert not points_leave_picture(points, camera, aspect=aspect)
    assert points_leave_picture(np.vstack([points, camera.position + 0.1 * u]), camera, aspect=aspect)


def test_frame_points_frames_a_point_as_its_padded_box_and_refuses_bad_points():
    p = np.array([1.0, 2.0, 3.0])
    one = frame_points([p])  # a millimetre cube around it (MIN_SIZE), seen whole from a few mm
    assert 0.0 < one.distance < 0.01 and np.all(np.isfinite(one.position))
    assert not points_leave_picture(box_corners(p - 5e-4, p + 5e-4), one)
    assert points_leave_picture(box_corners(p - 2e-3, p + 2e-3), one)
    for bad in ([], [[0.0, 0.0]], [[0.0, np.nan, 0.0]], "points", [[0.0, 0.0, 1e400]]):
        with pytest.raises(ReljacError, match="points must be"):
            frame_points(bad)


def test_frame_box_moves_with_the_box_and_scales_with_it():
    lo, hi = np.array(BOXES[1][0]), np.array(BOXES[1][1])
    base = frame_box(lo, hi)
    shift = np.array([1.0, -2.0, 0.5])
    moved = frame_box(lo + shift, hi + shift)
    np.testing.assert_allclose(moved.position, base.position + shift, atol=1e-12)
    big = frame_box(3 * lo, 3 * hi)
    assert big.distance == pytest.approx(3 * base.distance, rel=1e-12)
    # a wider picture never needs a farther camera
    assert frame_box(lo, hi, aspect=2.0).distance <= frame_box(lo, hi, aspect=1.0).distance


def test_view_axes_are_right_handed_with_up_toward_z():
    for direction in DIRECTIONS:
        right, up, back = view_axes(direction)
        np.testing.assert_allclose(np.stack([right, up, back]) @ np.stack([right, up, back]).T, np.eye(3), atol=1e-12)
        np.testing.assert_allclose(np.cross(right, up), back, atol=1e-12)
        assert up[2] >= 0.0
    # from the front (+x), the robot's left (+y) is on the right of the picture
    assert view_axes((1.0, 0.0, 0.0))[0] @ np.array([0.0, 1.0, 0.0]) == pytest.approx(1.0)


def test_sizes_follow_the_robot():
    hand, humanoid = BOXES[0], BOXES[1]
    for lo, hi in (hand, humanoid):
        assert overlay_scale(lo, hi) == pytest.approx(0.06 * np.linalg.norm(np.subtract(hi, lo)))
    assert overlay_scale(*hand) < 0.03 < 0.1 < overlay_scale(*humanoid)  # a triad smaller than a finger
    assert grid_cell(*hand) == pytest.approx(0.05) and grid_cell(*humanoid) == pytest.approx(0.5)
    assert overlay_scale([1, 1, 1], [1, 1, 1]) > 0  # a point robot still gets a size
    assert np.isfinite(frame_box([1, 1, 1], [1, 1, 1]).position).all()


@pytest.mark.parametrize("call, message", [
    (lambda: frame_box([0, 0, 0], [1, 1, 1], (0, 0, 0)), "zero vector"),
    (lambda: frame_box([0, 0, 0], [1, 1], (1, 0, 0)), "3 finite numbers"),
    (lambda: frame_box([0, 0, 0], [1, np.nan, 1]), "3 finite numbers"),
    (lambda: frame_box([1, 0, 0], [0, 1, 1]), "exceeds"),
    (lambda: frame_box([0, 0, 0], [1, 1, 1], fov=180.0), "fov"),
    (lambda: place_labels([[0, 0]], [[1, -1]], gap=0.1), "positive sizes"),
])
def test_bad_arguments_raise_reljac_errors(call, message):
    with pytest.raises(ReljacError, match=message):
        call()


# ---------------------------------------------------------------------------- labels
def rectangles_overlap(c1, s1, c2, s2) -> bool:
    return bool(np.all(np.abs(np.subtract(c1, c2)) < 0.5 * (np.add(s1, s2)) - 1e-12))


def test_crowded_labels_are_laid_out_apart_and_off_every_anchor():
    rng = np.random.default_rng(3)
    anchors = np.vstack([np.zeros((4, 2)), rng.uniform(-0.05, 0.05, size=(6, 2))])  # 4 on one point
    sizes = np.column_stack([rng.uniform(0.1, 0.3, 10), np.full(10, 0.05)])
    gap = 0.01
    centres = place_labels(anchors, sizes, gap=gap)
    for i, j in itertools.combinations(range(10), 2):
        assert not rectangles_overlap(centres[i], sizes[i], centres[j], sizes[j]), (i, j)
    for i in range(10):
        for a in anchors:  # no label covers a frame's origin
            assert not rectangles_overlap(centres[i], sizes[i], a, (2 * gap, 2 * gap))


def test_labels_stay_put_while_their_spot_is_free_and_move_when_it_is_not():
    anchors = np.array([[0.0, 0.0], [1.0, 0.0]])
    sizes = np.array([[0.2, 0.05], [0.2, 0.05]])
    first = place_labels(anchors, sizes, gap=0.01)
    np.testing.assert_allclose(first[0] - anchors[0], [0.11, 0.035])  # upper right, a gap away
    previous = first - anchors
    moved = anchors + [[0.02, -0.01], [0.0, 0.0]]
    again = place_labels(moved, sizes, gap=0.01, previous=previous)
    np.testing.assert_allclose(again - moved, previous)  # same offsets: no jumping around
    close = np.array([[0.0, 0.0], [0.05, 0.05]])  # the second anchor now sits on the first label
    third = place_labels(close, sizes, gap=0.01, previous=previous)
    assert not rectangles_overlap(third[0], sizes[0], third[1], sizes[1])
    assert not rectangles_overlap(third[0], sizes[0], close[1], (0.02, 0.02))


def test_anchors_out_of_sight_keep_their_label_in_place():
    anchors = np.array([[np.nan, np.nan], [0.0, 0.0]])
    centres = place_labels(anchors, [[0.1, 0.05], [0.1, 0.05]], gap=0.01)
    assert np.isnan(centres[0]).all() and np.isfinite(centres[1]).all()

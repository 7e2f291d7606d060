"""The placement view (reljac.viz.placement): the floor's colours follow the result (grey where the
base is blocked, greens where every pose is reached, the share of poses elsewhere), arrows point
along the yaw, and in a browser the floor's squares are drawn."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from test_viz import colour_mask, needs_chromium, read_png, scene_messages

from reljac import Robot
from reljac.placement import FloorRegion, PlacementTask, mobile_base, place, placement_maps
from reljac.placement.inverse import Reach
from reljac.viz.capability import colormap
from reljac.viz.placement import BLOCKED, arrow_points, floor_colors, show_placement, view_direction


def _result(reached: np.ndarray, free: np.ndarray, worst: float = 0.1):
    P = np.array([[x, y, yaw] for x in (0.0, 0.1) for y in (0.0,) for yaw in (0.0, 1.0)])
    n, k = reached.shape
    found = Reach(reached, reached.copy(), np.where(reached, worst, 0.0), np.zeros((n, k), np.int64), {})
    return SimpleNamespace(placements=P, found=found, free=free, candidates=[])


def test_the_floor_is_coloured_by_the_best_yaw():
    reached = np.array([[True, False], [True, True], [False, False], [False, False]])
    free = np.array([True, True, False, False])
    xy, colors, feasible = floor_colors(_result(reached, free))
    np.testing.assert_allclose(xy, [[0.0, 0.0], [0.1, 0.0]])
    assert feasible.tolist() == [True, False]  # the second yaw of (0, 0) reaches both poses
    assert colors[0][1] > colors[0][0] and colors[0][1] > colors[0][2]  # green
    np.testing.assert_allclose(colors[1], BLOCKED)  # (0.1, 0): the base hits at every yaw
    half = _result(np.array([[True, False], [False, False], [False, False], [False, False]]),
                   np.ones(4, bool))
    np.testing.assert_allclose(floor_colors(half)[1][0], colormap(np.array([0.5]))[0])


def test_an_arrow_points_along_the_yaw():
    points = arrow_points(np.array([1.0, 2.0, math.pi / 2]), 0.5)
    np.testing.assert_allclose(points[:2, 0], [1.0, 2.0])
    np.testing.assert_allclose(points[:2, 1], [1.0, 2.5], atol=1e-12)


def test_the_camera_looks_from_beside_the_base_never_across_the_task():
    """The object's poses 1 m ahead of the base along +y: the camera stands to the side (along
    -x, the base's right looking at them), a little behind the base, above: the table the task
    reaches over is never between it and the robot."""
    poses = np.array([pin.SE3(np.eye(3), np.array([2.0 + 0.1 * k, 4.0, 1.0])).homogeneous for k in (-1, 0, 1)])
    d = view_direction(np.array([2.0, 3.0, 0.3]), poses)
    np.testing.assert_allclose(d, [-0.8, -0.4, 0.7])
    d = view_direction(np.array([2.0, 4.0, math.pi]), poses)  # the poses right above it: ahead along the yaw
    np.testing.assert_allclose(d, [0.4, -0.8, 0.7], atol=1e-12)


@needs_chromium
@pytest.mark.slow
def test_the_browser_draws_the_floor(chromium):
    mobile = mobile_base(Robot.bundled("dual_arm"))
    maps = placement_maps(mobile, ["left_tool"], samples=100_000, seed=1)  # a hand pointing down: its polar chart needs them
    T = pin.SE3(pin.rpy.rpyToMatrix(math.pi, 0, 0), np.array([0.55, 0.2, 1.0]))
    task = PlacementTask([T], ["left_tool"])
    region = FloorRegion(x=(-0.3, 0.3), y=(-0.3, 0.3), yaw=(-0.6, 0.6), step=0.1, yaw_step=0.3)
    result = place(maps, task, region, candidates=1, check_timeout=0.2)
    assert result.best is not None
    viewer = show_placement(mobile, task, result)
    try:
        chromium.load(viewer.url, scene_messages(viewer))
        image = read_png(chromium.screenshot())
    finally:
        viewer.close()
    none = np.array([*colormap(np.array([0.0]))[0], 1.0])  # squares from which no pose is reached
    assert colour_mask(image, none).sum() > 1000  # the floor's squares are drawn, coloured


@pytest.mark.parametrize("period, rounds", [(math.nan, 1), (-1.0, 1), (1e9, 1), ("1", 1), (0.0, -1), (0.0, 1.5)])
def test_play_refuses_a_period_or_rounds_it_cannot_keep(period, rounds):
    """Before: NaN and -1 raised time.sleep's ValueError after the first display."""
    from reljac.exceptions import ConfigurationError
    from reljac.viz.placement import play

    shown = []
    viewer = SimpleNamespace(display=shown.append)
    with pytest.raises(ConfigurationError, match="period|rounds"):
        play(viewer, np.zeros((2, 3)), period=period, rounds=rounds)
    assert shown == []
    play(viewer, np.zeros((2, 3)), period=0.0, rounds=2)
    assert len(shown) == 4

"""Arguments of the wrong kind get a reljac error that says what is valid, not Python's own
AttributeError or TypeError from deep inside (an adversarial pass found each of these raising
one): base placement's mobile base, hands, maps, margin and min_distance; the viewer's root,
its overlays' make and the capability map's max_voxels; the debugger's messages to its pages."""

from __future__ import annotations

import numpy as np
import pytest

from reljac import Robot
from reljac.exceptions import ConfigurationError, MapError, TaskError
from reljac.maps import capability_map
from reljac.placement import FloorRegion, PlacementTask, mobile_base, place, placement_maps, reach, with_maps
from reljac.viz import Viewer
from reljac.viz.overlays import Overlay

HANDS = ["left_tool", "right_tool"]


@pytest.fixture(scope="module")
def dual_arm_base(dual_arm):
    return mobile_base(dual_arm)


@pytest.fixture(scope="module")
def small_maps(dual_arm_base):
    """Coarse maps (300 samples a hand): enough to be asked, not to answer well."""
    return placement_maps(dual_arm_base, HANDS, samples=300, seed=3, workers=1)


@pytest.fixture(scope="module")
def task():
    grasp = np.eye(4)
    return PlacementTask([np.eye(4)], {"left_tool": grasp, "right_tool": grasp})


@pytest.mark.parametrize("mobile", [Robot.bundled("dual_arm"), None, "dual_arm"])
def test_a_robot_where_a_mobile_base_is_asked_is_a_map_error(mobile, small_maps):
    with pytest.raises(MapError, match="mobile must be a MobileBase"):
        placement_maps(mobile, HANDS, samples=10)
    with pytest.raises(MapError, match="mobile must be a MobileBase"):
        with_maps(mobile, HANDS, small_maps.maps)


@pytest.mark.parametrize("hands", ["left_tool", [], [3], ["left_tool", "left_tool"], None])
def test_hands_must_be_distinct_frame_names(dual_arm_base, hands):
    with pytest.raises(MapError, match="hands must be a non-empty list of distinct frame names"):
        placement_maps(dual_arm_base, hands, samples=10)


def test_hands_may_be_any_iterable_of_names(dual_arm_base, small_maps):
    """An array of names and a dict's keys are hands too (the maps keyed by str)."""
    for hands in (np.array(HANDS), small_maps.maps.keys(), tuple(HANDS)):
        again = with_maps(dual_arm_base, hands, small_maps.maps)
        assert again.hands == HANDS and all(type(h) is str for h in again.hands)


@pytest.mark.parametrize("maps", [None, [1, 2], {"left_tool": 3}])
def test_maps_must_be_pose_maps_by_hand(dual_arm_base, maps):
    with pytest.raises(MapError, match="maps must be a dict"):
        with_maps(dual_arm_base, HANDS, maps)


@pytest.mark.parametrize("margin", [(0.5,), (0.5,) * 7, (np.nan,) * 6, (-0.1,) * 6, (1e300,) * 6, "abcdef",
                                    [(0.5,) * 6]])
def test_a_margin_that_is_not_six_fractions_of_a_bin_is_a_map_error(small_maps, task, margin):
    with pytest.raises(MapError, match="margin must be None or 6 fractions of a bin"):
        reach(small_maps, task, [[0.0, 0.0, 0.0]], margin=margin)
    with pytest.raises(MapError, match="margin must be None or 6 fractions of a bin"):
        place(small_maps, task, FloorRegion(x=(0.0, 0.1), y=(0.0, 0.1)), margin=margin)


def test_a_margin_of_zeros_and_one_of_large_fractions_are_answered(small_maps, task):
    """Zeros test nothing (sure is reached); 100 bins away is in no map (nothing sure)."""
    zero = reach(small_maps, task, [[0.0, 0.0, 0.0]], margin=(0.0,) * 6)
    np.testing.assert_array_equal(zero.sure, zero.reached)
    wide = reach(small_maps, task, [[0.0, 0.0, 0.0]], margin=(100.0,) * 6)
    assert not (wide.sure & ~wide.reached).any()


@pytest.mark.parametrize("min_distance", [-0.01, np.nan, np.inf, 1e7, 1e6 + 1, "0.01", None])
def test_min_distance_is_checked_without_obstacles_too(small_maps, task, min_distance):
    with pytest.raises(TaskError, match="min_distance must be"):
        place(small_maps, task, FloorRegion(x=(0.0, 0.1), y=(0.0, 0.1)), min_distance=min_distance)


def test_the_viewer_root_must_be_a_name(planar):
    with pytest.raises(ConfigurationError, match="root must be a name"):
        Viewer(planar, root=5)


@pytest.fixture(scope="module")
def viewer(planar):
    with Viewer(planar) as v:
        yield v


@pytest.mark.parametrize("make, match", [(lambda node: None, "must return an Overlay"),
                                         (lambda node: 3.0, "must return an Overlay"),
                                         (5, "make must be a callable")])
def test_an_overlay_maker_that_makes_no_overlay_is_a_configuration_error(viewer, make, match):
    with pytest.raises(ConfigurationError, match=match):
        viewer.add_overlay("mine", make)
    assert "mine" not in viewer._overlays  # nothing half-added

    class Dot(Overlay):
        def update(self, oMf):
            pass

    assert viewer.add_overlay("mine", Dot) == "mine"  # (a class is a maker too)
    if not callable(make):  # refused before anything is touched: the one shown stays
        with pytest.raises(ConfigurationError, match=match):
            viewer.add_overlay("mine", make)
        assert "mine" in viewer.overlays
    viewer.remove("mine")


@pytest.mark.parametrize("max_voxels", [0, -1, 2.5, "10"])
def test_max_voxels_must_be_a_count_of_at_least_one(viewer, planar, max_voxels):
    cmap = capability_map(planar, "universe", planar.model.frames[-1].name, samples=200, voxel=0.2, seed=1)
    name = viewer.show_capability_map(cmap)
    with pytest.raises(ConfigurationError, match="max_voxels"):
        viewer.show_capability_map(cmap, max_voxels=max_voxels)
    assert name in viewer.overlays  # refused before the one shown is replaced
    viewer.remove(name)


def test_the_debugger_tells_the_pages_dicts_only(planar):
    from reljac.ik import Controller, PostureTask
    from reljac.viz import Debugger

    posture = PostureTask(planar)
    posture.set_target(planar.neutral())
    controller = Controller(planar, [[posture]], dt=0.01)
    with Debugger(controller, planar.neutral(), paused=True) as debugger:
        with pytest.raises(ConfigurationError, match="a message to the pages must be a dict"):
            debugger.tell(None)
        debugger.tell({"type": "error", "message": "fine"})

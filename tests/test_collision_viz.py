"""The collision overlay: obstacles drawn, closest-point bars of near pairs coloured by distance."""

from __future__ import annotations

import numpy as np
import pytest
from test_viz import colour_mask, needs_chromium, read_png, scene_messages

import reljac
from reljac.collision import CollisionModel, box, sphere
from reljac.viz import Viewer
from reljac.viz.collisions import FAR_COLOR, MIDDLE_COLOR, NEAR_COLOR, OBSTACLE_COLOR, distance_color

pytestmark = pytest.mark.slow

MEETING = np.array([0.0, 0.8808, 0.9651, -0.4571, -2.0366, 1.1162, 2.7259, 1.8842,
                    -1.2333, 1.2035, 0.8092, -2.0059, -1.4909, 2.3970, -0.1965])


def rgb(color: int) -> tuple[int, int, int]:
    return (color >> 16) & 0xFF, (color >> 8) & 0xFF, color & 0xFF


def test_distance_colours_run_from_red_through_yellow_to_green():
    assert rgb(distance_color(-0.01, 0.05)) == NEAR_COLOR == rgb(distance_color(0.0, 0.05))
    assert rgb(distance_color(0.025, 0.05)) == MIDDLE_COLOR
    assert rgb(distance_color(0.05, 0.05)) == FAR_COLOR == rgb(distance_color(0.2, 0.05))
    greens = [rgb(distance_color(d, 0.05))[1] for d in np.linspace(0, 0.025, 9)]
    assert greens == sorted(greens) and greens[0] < greens[-1]  # red -> yellow: green rises
    reds = [rgb(distance_color(d, 0.05))[0] for d in np.linspace(0.025, 0.05, 9)]
    assert reds == sorted(reds, reverse=True) and reds[0] > reds[-1]  # yellow -> green: red falls


@pytest.fixture(scope="module")
def viewer(dual_arm):
    with Viewer(dual_arm, q=MEETING) as v:
        yield v


def test_bars_follow_the_near_pairs_and_obstacles_follow_the_model(viewer, dual_arm):
    cm = CollisionModel(dual_arm)
    cm.add_obstacle("ball", sphere(0.05), frame="left_tool", links=["right_link8", "right_link7"])
    viewer.display(MEETING)
    name = viewer.show_collisions(cm, within=0.3)
    overlay = viewer._overlays[name]
    assert list(overlay.obstacles) == ["ball"]
    for q in (MEETING, dual_arm.random_configuration(7)):
        viewer.display(q)
        expected = cm.distances(q, within=0.3, jacobians=False)
        assert overlay.rows.pairs == expected.pairs and len(expected) > 0
        np.testing.assert_allclose(overlay.rows.distance, expected.distance, atol=1e-9)
        assert overlay.shown == {f"{a}--{b}": distance_color(d, 0.3) for (a, b), d in zip(expected.pairs, expected.distance, strict=True)}
    cm.remove_obstacle("ball")
    cm.add_obstacle("table", box((0.6, 1.0, 0.04)), [0.6, 0.0, 0.7])
    viewer.display(MEETING)
    assert list(overlay.obstacles) == ["table"]
    near = viewer.show_collisions(cm, within=1e-3, name="near only")  # nothing that close at the meeting pose
    assert viewer._overlays[near].shown == {}
    viewer.remove(name)
    viewer.remove(near)


def test_show_collisions_checks_its_arguments(viewer, dual_arm):
    with pytest.raises(reljac.ReljacError, match="needs a reljac.collision.CollisionModel of robot 'dual_arm'"):
        viewer.show_collisions(dual_arm)
    with pytest.raises(reljac.ReljacError, match="needs a reljac.collision.CollisionModel of robot 'dual_arm'"):
        viewer.show_collisions(CollisionModel(reljac.Robot.bundled("hand")))
    with pytest.raises(reljac.ReljacError, match="within must be a positive number"):
        viewer.show_collisions(CollisionModel(dual_arm), within=0.0)


@needs_chromium
def test_browser_draws_the_obstacles(dual_arm, chromium):
    """A teal box in front of the torso: teal pixels appear once the overlay is shown."""
    cm = CollisionModel(dual_arm, pairs=[])
    cm.add_obstacle("crate", box((0.3, 0.3, 0.3)), [0.5, 0.0, 1.1])
    teal = np.array([*rgb(OBSTACLE_COLOR), 255]) / 255.0
    browser = chromium
    with Viewer(dual_arm, q=MEETING) as viewer:
        browser.load(viewer.url, scene_messages(viewer))
        before = int(colour_mask(read_png(browser.screenshot()), teal).sum())
        seen = browser.messages()
        viewer.show_collisions(cm)
        browser.wait_messages(seen + 2)  # the box and its placement
        after = int(colour_mask(read_png(browser.screenshot()), teal).sum())
    assert before < 50 and after > 2000, (before, after)

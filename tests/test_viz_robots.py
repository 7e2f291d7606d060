"""A real browser draws a locked robot and a robot from another loader as their full / named twins.

Oracle: the same scene drawn from the robot reljac loaded itself, at the configuration holding
the same joint values. Both viewers frame the camera on the same geometry, so the two pictures
must agree pixel for pixel (up to antialiasing noise), and differ from the empty scene.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from pinocchio.robot_wrapper import RobotWrapper
from test_viz import Browser, needs_chromium, read_png, scene_messages

from reljac import Robot, robots
from reljac.viz import Viewer

pytestmark = pytest.mark.slow

needs_erd = pytest.mark.skipif(robots.example_robot_data_dir() is None, reason="example-robot-data is not installed")


def settled(browser: Browser, timeout: float = 10.0) -> np.ndarray:
    """A screenshot once two in a row are the same (meshcat decodes Collada meshes after their
    message: a mesh can appear, or reappear after a delete, a little later)."""
    last = read_png(browser.screenshot())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.3)
        shot = read_png(browser.screenshot())
        if np.array_equal(shot, last):
            return shot
        last = shot
    return last


def picture(browser: Browser, robot, q, *, empty: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """(the robot at q, the same scene with the robot hidden, or None with empty=False) as (H, W, 3)
    images."""
    with Viewer(robot, q=q) as viewer:
        browser.load(viewer.url, scene_messages(viewer))
        drawn = settled(browser)
        if not empty:
            return drawn, None
        seen = browser.messages()
        viewer.viewer[viewer.root].set_property("visible", False)
        browser.wait_messages(seen + 1)
        empty = settled(browser)
    return drawn, empty


def framing_problems(drawn: np.ndarray, empty: np.ndarray, half: float = 0.5) -> list[str]:
    """What is wrong with a robot's framing by the Viewer's default camera (tests/test_viz_framing.py:
    its larger extent at least `half` of the picture's, unclipped, centred within 0.1): the robot's
    pixels are those that differ from the empty scene's."""
    rows, cols = np.nonzero(np.abs(drawn.astype(int) - empty.astype(int)).sum(axis=2) > 30)
    if rows.size == 0:
        return ["not drawn"]
    h, w = drawn.shape[:2]
    top, bottom, left, right = rows.min(), rows.max(), cols.min(), cols.max()
    spans = ((right - left + 1) / w, (bottom - top + 1) / h)
    centre = ((left + right) / 2 / w, (top + bottom) / 2 / h)
    return ([f"spans {spans} of the picture"] if max(spans) < half else []) + \
        ([f"clipped: rows {top}-{bottom}, columns {left}-{right}"]
         if not (top > 0 and left > 0 and bottom < h - 1 and right < w - 1) else []) + \
        ([f"off centre: {centre}"] if not np.all(np.abs(np.array(centre) - 0.5) < 0.1) else [])


def changed(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of the pixels that differ between two pictures."""
    return float((np.abs(a.astype(int) - b.astype(int)).sum(axis=2) > 30).mean())


@pytest.fixture
def browser(chromium):
    return chromium


@needs_chromium
@needs_erd
def test_a_locked_tiago_is_drawn_as_the_full_robot(browser, tmp_path):
    tiago = Robot.load("tiago_dual")
    arms = tiago.locked(["caster_*", "suspension_*", "wheel_*", "hand_*"], tiago.random_configuration(3))
    q = arms.random_configuration(7)
    q_full = tiago.q_from_joint_values({**arms.joint_values(q), **arms.locked_joints})
    mine, empty = picture(browser, arms, q)
    theirs, _ = picture(browser, tiago, q_full, empty=False)
    for name, image in (("locked", mine), ("full", theirs), ("empty", empty)):
        np.save(tmp_path / f"{name}.npy", image)
    assert changed(mine, empty) > 0.03, f"the locked robot is not drawn (pictures in {tmp_path})"
    assert changed(mine, theirs) < 0.002, f"the locked and full robots differ (pictures in {tmp_path})"
    # the full TIAGo framed by the default camera (tests/test_viz_framing.py's rules; the locked
    # robot's camera is framed on the same geometry, so its empty scene is the full robot's)
    assert not framing_problems(theirs, empty), f"tiago_dual: {framing_problems(theirs, empty)} ({tmp_path})"


@needs_chromium
def test_a_robot_wrapper_is_drawn_as_the_bundled_robot(browser, tmp_path):
    """Pinocchio's own loader (RobotWrapper) of the bundled hand, given to the Viewer as it is."""
    hand = Robot.bundled("hand")
    wrapper = RobotWrapper.BuildFromURDF(str(hand.urdf_path), [str(hand.urdf_path.parent)], mimic=True)
    q = hand.random_configuration(11)
    mine, empty = picture(browser, wrapper, q)
    theirs, _ = picture(browser, hand, q, empty=False)
    assert changed(mine, empty) > 0.02, f"the wrapped robot is not drawn (pictures in {tmp_path})"
    assert changed(mine, theirs) < 0.002


@needs_chromium
def test_a_model_without_geometry_shows_its_frames(browser):
    bare = Robot.from_pinocchio(Robot.bundled("planar_2link").model)
    q = np.array([0.4, 0.8])
    with Viewer(bare, q=q) as viewer:
        viewer.show_frame("tip", label="tip")
        browser.load(viewer.url, scene_messages(viewer))
        with_frame = settled(browser)
        seen = browser.messages()
        viewer.viewer[viewer.root].set_property("visible", False)
        browser.wait_messages(seen + 1)
        empty = settled(browser)
    assert changed(with_frame, empty) > 0.001  # the triad and label of 'tip' are drawn

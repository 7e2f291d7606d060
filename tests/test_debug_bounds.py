"""The debug page's inequality rows: per level, each row of a task with bounds, active or slack,
and the distance of its error to the bound (reljac/viz/debug_state.py, debug_panel.js), the
bounds drawn at the task's handle and moving with its target.

The distances are checked against the relative pose's log6 computed here from Pinocchio's
forward kinematics; active and slack against those distances at rest (a row held on its bound
is at distance 0, a row with margin is slack)."""

from __future__ import annotations

import os
import shutil
import warnings

import numpy as np
import pinocchio as pin
import pytest
from helpers import wait_for
from test_debug_browser import Browser, drag, open_page
from test_viz import DUAL_ARM_MEETING, needs_chromium, read_png

from reljac.ik import BallTask, Controller, FrameTask, PostureTask, RelativeFrameTask, RelativePositionTask
from reljac.relative import Kinematics
from reljac.viz.debug_overlays import region_lines
from reljac.viz.debug_state import bounds_region, draggable, handle_pose, levels_panel, set_handle_target
from reljac.viz.debugger import Debugger

A, B = "left_tool", "right_tool"
BOX = np.array([0.03, 0.03, 0.03, 0.1, 0.1, 0.1])  # [m, m, m, rad, rad, rad]
PULL = 0.06  # [m] the level below pulls b this far along the box's x


def relative(robot, q) -> pin.SE3:
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return data.oMf[robot.frame_id(A)].actInv(data.oMf[robot.frame_id(B)])


def bounded_stack(robot, q):
    """Level 0: b in a within BOX of its start ("box"); level 1: b pulled PULL along the box's x;
    level 2: the left tool held; level 3: the posture."""
    box = RelativeFrameTask(A, B, gain=20.0, name="box")
    T0 = relative(robot, q)
    box.set_target(T0)
    box.set_bounds(-BOX, BOX)
    pull = RelativePositionTask(A, B, gain=10.0, name="pull")
    pull.set_target(T0.translation + T0.rotation @ np.array([PULL, 0.0, 0.0]))
    hold = FrameTask(A, gain=10.0, name="hold")
    hold.set_target(Kinematics(robot, q).placement(A))
    return Controller(robot, [[box], [pull], [hold], [PostureTask(robot, weight=0.1, name="posture")]], dt=0.01)


@pytest.fixture(scope="module")
def at_rest(dual_arm):
    q = DUAL_ARM_MEETING  # the tools 25 cm apart in front of the torso, facing each other
    controller = bounded_stack(dual_arm, q)
    for _ in range(300):
        q_last, q = q, controller.step(q)
    return controller, q_last


@pytest.mark.slow
def test_the_panel_lists_each_row_active_on_its_bound_and_slack_with_its_distance(dual_arm, at_rest):
    controller, q = at_rest  # q: where the last step started (the panel's configuration)
    box = controller.levels[0][0]
    panel = levels_panel(controller, controller.errors())
    rows = panel[0]["rows"]
    assert [r["name"] for r in rows] == [f"box[{i}]" for i in range(6)]
    assert [r["unit"] for r in rows] == ["m"] * 3 + ["rad"] * 3
    e = pin.log6(box.target.actInv(relative(dual_arm, q))).vector  # independent of the controller's rows
    np.testing.assert_allclose([r["distance"] for r in rows], BOX - np.abs(e), atol=1e-12)
    # the pull holds x on its bound: active, at distance ~0; the rows with margin are slack
    assert e[0] == pytest.approx(BOX[0], abs=1e-4) and rows[0]["active"]
    for r, d in zip(rows, BOX - np.abs(e), strict=True):
        if d > 1e-3:
            assert not r["active"], rows
        if r["active"]:
            assert d < 1e-4, rows
    assert any(not r["active"] for r in rows)
    assert all(level["rows"] == [] for level in panel[1:])  # no bounds below


def test_the_handle_of_a_bounded_task_draws_its_box_and_a_ball_its_sphere(dual_arm):
    box = RelativeFrameTask(A, B)
    box.set_bounds([-0.01, -0.02, -np.inf, -1, -1, -1], [0.03, 0.02, 0.05, 1, 1, 1])
    kind, low, high = bounds_region(box, 0.5)
    assert kind == "box"
    np.testing.assert_array_equal(low, [-0.01, -0.02, -0.5])  # an open side drawn `size` out
    np.testing.assert_array_equal(high, [0.03, 0.02, 0.05])
    edges = region_lines(("box", low, high)).T.reshape(12, 2, 3)
    for lo_hi in (low, high):  # every corner is on 3 edges
        corners = [tuple(np.where(np.arange(3) == k, lo_hi, c)) for k in range(3) for c in (low, high)]
        assert all(np.isclose(edges, corner).all(axis=2).any() for corner in corners)
    assert bounds_region(RelativeFrameTask(A, B), 0.5) is None  # no bounds: nothing drawn
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ball of radius 1e300: no overflow warning, finite points
        huge = region_lines(("ball", 1e300))
    assert np.isfinite(huge).all() and np.abs(huge).max() > 1e37
    inner = RelativePositionTask(A, B)
    inner.set_target(np.array([0.1, 0.2, 0.3]))
    ball = BallTask(inner, 0.04)
    assert bounds_region(ball, 0.5) == ("ball", 0.04)
    # a ball's handle is its inner task's target: dragging it moves the ball's centre
    assert draggable(ball)
    np.testing.assert_array_equal(handle_pose(ball).translation, [0.1, 0.2, 0.3])
    set_handle_target(ball, pin.SE3(np.eye(3), np.array([0.0, 0.0, 1.0])))
    np.testing.assert_array_equal(inner.target, [0.0, 0.0, 1.0])


@pytest.mark.slow
@needs_chromium
def test_the_page_shows_the_rows_and_a_dragged_target_moves_the_box(dual_arm, tmp_path):
    """RELJAC_INEQ_SCREENSHOT=PATH also copies the page's screenshot there."""
    q0 = DUAL_ARM_MEETING
    controller = bounded_stack(dual_arm, q0)
    box = controller.levels[0][0]
    browser = Browser(size=(1400, 900))
    try:
        with Debugger(controller, q0) as debugger:
            open_page(browser, debugger)
            wait_for(lambda: debugger.steps > 150, "the stack to come to rest")
            # the level panel's text: each row, active or slack, and its distance to the bound
            wait_for(lambda: "box[0]active0.0 mm" in browser.evaluate(
                "document.querySelector('#levels .level').textContent"), "the x row shown active on its bound")
            text = browser.evaluate("[...document.querySelectorAll('#levels .level')[0].querySelectorAll("
                                    "'table.bounds tr')].map(r => [...r.children].map(c => c.textContent))")
            assert text[0] == ["inequality row", "state", "to bound"]
            assert [row[0] for row in text[1:]] == [f"box[{i}]" for i in range(6)]
            assert text[1][1] == "active"
            slack = [row for row in text[1:] if row[1] == "slack"]
            assert slack and all(float(row[2].split()[0]) > 1.0 for row in slack if row[2].endswith("mm"))
            png = browser.screenshot()
            assert read_png(png).shape[:2] == (900, 1400)
            (tmp_path / "ineq-page.png").write_bytes(png)
            # the box is drawn at the handle: a child of the handle's node
            handle = next(h for h in browser.evaluate("reljacDebug.init.handles") if h["task"] == "box")
            assert browser.evaluate(f"viewer.scene_tree.find(({handle['path']!r} + '/bounds/<object>').split('/')"
                                    ".filter(x => x)).object.type") == "LineSegments"
            # drag the box's handle along its y (its x arrow points at the pull's handle): the
            # target moves, and the box with it: b follows into the moved box
            T_before = box.target
            screen = browser.evaluate(f"reljacDebug.handleScreen({handle['name']!r})")
            center, tip = np.array(screen["center"][:2]), np.array(screen["axes"][1][:2])
            grab = center + 0.7 * (tip - center)
            drag(browser, grab, grab + 70.0 * (tip - center) / np.linalg.norm(tip - center))
            wait_for(lambda: debugger.run_state.grab is None and not np.allclose(box.target.translation,
                                                                        T_before.translation), "the drag")
            steps = debugger.steps
            wait_for(lambda: debugger.steps > steps + 150, "the stack to come to rest again")
            debugger.pause()
            wait_for(lambda: debugger.state()["paused"], "the pause")
            T_ab = relative(dual_arm, np.asarray(debugger.state()["q"]))
            e = pin.log6(box.target.actInv(T_ab)).vector
            assert (np.abs(e) <= BOX + 1e-3).all(), e
            assert T_before.actInv(box.target).translation[1] > 0.0  # along the y arrow
            assert abs(pin.log6(T_before.actInv(T_ab)).vector[1]) > BOX[1]  # out of the box where it was
    finally:
        browser.close()
    if os.environ.get("RELJAC_INEQ_SCREENSHOT"):
        shutil.copy(tmp_path / "ineq-page.png", os.environ["RELJAC_INEQ_SCREENSHOT"])

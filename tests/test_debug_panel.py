"""The debug page's panel and drags through real websocket messages (issue 43): a level lists
the saturated joints that limit it, not those it does not move (the bounded solver reports a
joint held on its bound under every level: Baxter's fingers were red under all of them); a drag
is refused by the length of its whole displacement (139 m made of three coordinates under the
100 m bound was accepted when only each coordinate was checked).

Truth for "a level moves a joint": finite differences of the level's task errors in that joint.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from debug_pages import ControlPage

from reljac import Kinematics, Robot
from reljac.apps.demo import DUAL_ARM_MEETING
from reljac.apps.hierarchy_file import DEMO_FILE, load_hierarchy
from reljac.ik import Controller, FrameTask, PostureTask, RelativeFrameTask
from reljac.viz.debug_state import levels_panel
from reljac.viz.debugger import Debugger

BACKENDS = ["compiled", "python"]


@pytest.fixture(scope="module")
def dual_arm():
    return Robot.bundled("dual_arm")


def stack(robot: Robot, backend: str | None = None):
    """dual_arm with its torso on its lower limit, a bounded relative level (which the torso does
    not move), the left tool pulled sideways (which the right arm does not move), a posture: the
    bounded solver reports the torso and right arm joints saturated under levels they do not move."""
    values = dict(DUAL_ARM_MEETING, torso_yaw=float(robot.model.lowerPositionLimit[0]))
    q0 = robot.q_from_joint_values(values)
    kin = Kinematics(robot, q0)
    relative = RelativeFrameTask("left_tool", "right_tool", gain=15.0, name="relative")
    relative.set_target(kin.relative_placement("left_tool", "right_tool"))
    relative.set_bounds(np.full(6, -0.01), np.full(6, 0.01))
    left = FrameTask("left_tool", gain=15.0, name="left")
    left.set_target(pin.SE3(np.eye(3), np.array([0.0, -0.3, 0.0])) * kin.placement("left_tool"))
    posture = PostureTask(robot, gain=2.0, weight=0.1)
    posture.set_target(q0)
    return Controller(robot, [[relative], [left], [posture]], dt=0.01, backend=backend), q0


def level_moves(robot: Robot, tasks, q: np.ndarray, joint: str, h: float = 1e-6) -> bool:
    """Whether the level's task errors change when `joint` moves (central differences)."""
    j = robot.model.joints[robot.model.getJointId(joint)].idx_v
    dv = np.zeros(robot.nv)
    dv[j] = h
    errors = []
    for sign in (1.0, -1.0):
        kin = Kinematics(robot, pin.integrate(robot.model, q, sign * dv))
        errors.append(np.concatenate([np.atleast_1d(task.compute(kin)[0]) for task in tasks]))
    return bool(np.abs(errors[0] - errors[1]).max() / (2 * h) > 1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_level_lists_only_the_saturated_joints_it_moves(dual_arm, backend):
    controller, q0 = stack(dual_arm, backend)
    controller.step(q0)
    reports, panel = controller.last_reports, levels_panel(controller, controller.errors())
    left_out = 0
    for level, report, shown in zip(controller.levels, reports, panel, strict=True):
        for joint in report.saturated_joints:
            moved = level_moves(dual_arm, level, q0, joint)
            assert (joint in shown["saturated_joints"]) == moved, (shown["level"], joint, moved)
            left_out += not moved
    assert "torso_yaw" in reports[0].saturated_joints and "torso_yaw" not in panel[0]["saturated_joints"]
    assert left_out >= 2  # the situation this test is about did arise


def test_the_page_gets_the_levels_limiting_joints(dual_arm):
    controller, q0 = stack(dual_arm)
    with Debugger(controller, q0, paused=True) as debugger, ControlPage(debugger.url) as page:
        page.until(lambda m: m["type"] == "init", "the hello")
        page.send({"type": "step"})
        state = page.until(lambda m: m["type"] == "state" and m["steps"] == 1 and m["levels"], "the step")
        reports = controller.last_reports
        assert "torso_yaw" in reports[0].saturated_joints
        assert "torso_yaw" not in state["levels"][0]["saturated_joints"]
        for level, report, shown in zip(controller.levels, reports, state["levels"], strict=True):
            for joint in shown["saturated_joints"]:
                assert joint in report.saturated_joints and level_moves(dual_arm, level, q0, joint), joint


@pytest.mark.parametrize("offset", [[80.0, 80.0, 80.0], [0.0, 70.8, 70.8], [100.0, 1.0, 0.0], [101.0, 0.0, 0.0],
                                    [0.0, 1e90, 1e90]])
def test_a_drag_is_refused_by_the_length_of_its_whole_displacement(dual_arm, offset):
    """Each coordinate is under the 100 m bound; the displacement is not (138.6, 100.1 and 100.005
    m): refused with a message naming its length, and the target does not move. A coordinate
    beyond the bound has its length named too (it was 'inf m'), however large."""
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    left = controller.levels[1][0]
    with Debugger(controller, q0, paused=True) as debugger, ControlPage(debugger.url) as page:
        page.until(lambda m: m["type"] == "init", "the hello")
        T0 = left.target
        delta = np.eye(4)
        delta[:3, 3] = offset
        page.send({"type": "grab", "handle": "handle left"})
        page.send({"type": "drag", "handle": "handle left", "delta": delta.ravel().tolist()})
        message = page.until(lambda m: m["type"] == "error", "the refusal")["message"]
        length = float(np.hypot.reduce(offset))  # (no square to overflow)
        assert message == (f"a drag's translation must be at most 100 m long, got {length:.4g} m "
                           f"({', '.join(f'{x:.4g}' for x in offset)})"), message
        np.testing.assert_array_equal(left.target.homogeneous, T0.homogeneous)
        # 99.9 m along one diagonal is a drag
        delta[:3, 3] = 99.9 * np.ones(3) / np.sqrt(3)
        page.send({"type": "drag", "handle": "handle left", "delta": delta.ravel().tolist()})
        page.send({"type": "pause"})
        page.until(lambda m: m["type"] == "state" and m["paused"] and not np.allclose(
            left.target.translation, T0.translation), "the drag")
        np.testing.assert_allclose(left.target.translation - T0.translation,
                                   T0.rotation @ delta[:3, 3], atol=1e-9)

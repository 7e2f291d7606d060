"""Optimisation-based IK: it reaches the targets the controller reaches, within the limits, on
fixed and floating bases; errors are measured independently at the returned q."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac import ConfigurationError, TaskError
from reljac.apps.bench_solvers import nlp_bench_rows
from reljac.costs import OrientationCost, PositionCost, pose_cost
from reljac.ik import FrameTask, PostureTask, RelativePositionTask, solve
from reljac.ik.nlp import NLPResult, solve_nlp

TOL = 1e-4


def middle(robot):
    return robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))


def within_limits(robot, q):
    lo, hi = robot.lower_limits, robot.upper_limits
    return np.all((q >= lo - 1e-12) | ~np.isfinite(lo)) and np.all((q <= hi + 1e-12) | ~np.isfinite(hi))


@pytest.mark.slow
def test_dual_arm_pose_targets_reached_by_both_solvers(dual_arm):
    rng = np.random.default_rng(7)
    for _ in range(3):
        T = reljac.Kinematics(dual_arm, dual_arm.random_configuration(rng)).placement("left_tool")
        q0 = middle(dual_arm)
        nlp = solve_nlp(dual_arm, q0, pose_cost("left_tool", T), tol=TOL)
        task = FrameTask("left_tool", gain=20.0)
        task.set_target(T)
        controller = solve(dual_arm, q0, [[task], [PostureTask(dual_arm, weight=0.01)]], tol=TOL, max_iters=1500)
        assert isinstance(nlp, NLPResult)
        assert nlp.converged, nlp.errors
        assert controller.converged, controller.errors
        for q in (nlp.q, controller.q):
            T_now = reljac.Kinematics(dual_arm, q).placement("left_tool")
            assert np.linalg.norm(T_now.translation - T.translation) < TOL
            assert np.linalg.norm(pin.log3(T.rotation.T @ T_now.rotation)) < TOL
        assert within_limits(dual_arm, nlp.q)
        assert set(nlp.errors) == {"position of left_tool", "orientation of left_tool"}
        assert 0 < nlp.iterations <= 500 and nlp.cost < TOL**2


@pytest.mark.slow
def test_dual_arm_relative_pose_target(dual_arm, rng):
    T = reljac.Kinematics(dual_arm, dual_arm.random_configuration(rng)).relative_placement("left_tool", "right_tool")
    result = solve_nlp(dual_arm, middle(dual_arm), pose_cost("right_tool", T, relative_to="left_tool"))
    assert result.converged, result.errors
    T_now = reljac.relative_placement(dual_arm, result.q, "left_tool", "right_tool")
    assert np.linalg.norm(T_now.translation - T.translation) < TOL
    assert np.linalg.norm(pin.log3(T.rotation.T @ T_now.rotation)) < TOL


@pytest.mark.slow
def test_hand_fingertip_positions_reached_by_both_solvers(rng):
    hand = reljac.Robot.bundled("hand")
    kin = reljac.Kinematics(hand, hand.random_configuration(rng))
    tips = ("thumb_tip", "index_tip", "middle_tip", "ring_tip")
    targets = {tip: kin.relative_placement("palm", tip).translation for tip in tips}
    nlp = solve_nlp(hand, middle(hand), [PositionCost(t, p, relative_to="palm") for t, p in targets.items()], tol=1e-5)
    tasks = []
    for tip, p in targets.items():
        task = RelativePositionTask("palm", tip, gain=20.0)
        task.set_target(p)
        tasks.append(task)
    controller = solve(hand, middle(hand), [tasks, [PostureTask(hand, weight=0.01)]], tol=1e-5, max_iters=2000)
    assert nlp.converged, nlp.errors
    assert controller.converged, controller.errors
    for q in (nlp.q, controller.q):
        for tip, p in targets.items():
            assert np.linalg.norm(reljac.relative_placement(hand, q, "palm", tip).translation - p) < 1e-5
    assert within_limits(hand, nlp.q)


@pytest.mark.slow
def test_floating_base_with_continuous_joints_in_the_tangent_space(rng):
    robot = reljac.Robot.bundled("tree30")
    q_target = robot.random_configuration(rng)
    kin = reljac.Kinematics(robot, q_target)
    costs = [PositionCost(f, kin.placement(f).translation) for f in ("left_hand_site", "right_foot_site", "head_site")]
    costs.append(OrientationCost("left_foot_site", kin.placement("left_foot_site").rotation))
    result = solve_nlp(robot, robot.random_configuration(rng), costs)
    assert result.converged, result.errors
    robot.validate_q(result.q)  # unit quaternion and (cos, sin) pairs
    assert within_limits(robot, result.q)
    for f in ("left_hand_site", "right_foot_site", "head_site"):
        p = reljac.Kinematics(robot, result.q).placement(f).translation
        assert np.linalg.norm(p - kin.placement(f).translation) < TOL


def test_one_dof_limits_hold_on_a_floating_base(rng):
    """A target outside a hip's range: the tangent-space bounds keep every 1-DoF joint in its limits."""
    robot = reljac.Robot.bundled("tree30")
    far = PositionCost("left_foot_site", [0.0, 0.0, 5.0], relative_to="pelvis")  # 5 m above the pelvis
    result = solve_nlp(robot, robot.random_configuration(rng), far, max_iters=100)
    assert not result.converged
    assert within_limits(robot, result.q)


@pytest.mark.slow
def test_unreachable_target_returns_the_closest_configuration(dual_arm):
    far = PositionCost("left_tool", [5.0, 0.0, 1.0])
    start = far.errors(reljac.Kinematics(dual_arm, middle(dual_arm)))["position"]
    result = solve_nlp(dual_arm, middle(dual_arm), far, max_iters=200)
    assert not result.converged
    assert np.isfinite(result.q).all() and within_limits(dual_arm, result.q)
    assert result.errors[far.name]["position"] < start


@pytest.mark.slow
def test_without_bounds_the_limits_may_be_left(dual_arm):
    q0 = middle(dual_arm)
    T = reljac.Kinematics(dual_arm, dual_arm.random_configuration(0)).placement("left_tool")
    result = solve_nlp(dual_arm, q0, pose_cost("left_tool", T), bounds=None)
    assert result.converged, result.errors


@pytest.mark.slow
def test_bench_rows_compare_both_solvers():
    rows = nlp_bench_rows(n_targets=2, seed=1)
    names = [name for name, _, _ in rows]
    assert len(rows) == 4 and sum("solve_nlp" in n for n in names) == 2 and sum("controller" in n for n in names) == 2
    for _, rate, seconds in rows:
        assert 0.0 <= rate <= 1.0 and seconds > 0.0


def test_bad_inputs_raise(dual_arm):
    cost = PositionCost("left_tool", [0.3, 0.3, 1.0])
    with pytest.raises(TaskError, match="bounds"):
        solve_nlp(dual_arm, middle(dual_arm), cost, bounds="box")
    with pytest.raises(TaskError, match="tol"):
        solve_nlp(dual_arm, middle(dual_arm), cost, tol=0.0)
    with pytest.raises(TaskError, match="max_iters"):
        solve_nlp(dual_arm, middle(dual_arm), cost, max_iters=-1)
    with pytest.raises(TaskError, match="objectives"):
        solve_nlp(dual_arm, middle(dual_arm), "left_tool")
    with pytest.raises(ConfigurationError, match="q0"):
        solve_nlp(dual_arm, np.zeros(3), cost)

"""Frame costs: values against independent formulas, gradients against finite differences in
the tangent space (pin.integrate) and in the coordinates of q, on every bundled robot."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import placements

import reljac
from reljac import FrameNotFound, TaskError
from reljac.costs import (
    CostSum,
    OrientationCost,
    PositionCost,
    as_cost,
    as_unit_quaternion,
    pose_cost,
    q_gradient,
    quaternion_rate_matrix,
)

CASES = [  # robot, frame b, frame a for relative costs
    ("planar_2link", "tip", "link1"),
    ("dual_arm", "right_tool", "left_tool"),
    ("hand", "thumb_tip", "index_tip"),
    ("tree30", "right_foot_site", "left_hand_site"),
]


@pytest.fixture(scope="module")
def robots():
    return {name: reljac.Robot.bundled(name) for name, _, _ in CASES}


def _costs(robot, b, a, q_target):
    """Every cost kind at once, toward the poses of q_target, with distinct weights."""
    kin = reljac.Kinematics(robot, q_target)
    T_wb, T_ab = kin.placement(b), kin.relative_placement(a, b)
    return CostSum([
        PositionCost(b, T_wb.translation, weight=0.7),
        OrientationCost(b, T_wb.rotation, weight=1.3),
        PositionCost(b, T_ab.translation, relative_to=a, weight=2.0),
        OrientationCost(b, pin.Quaternion(T_ab.rotation), relative_to=a, weight=0.4),
    ])


def _fd_tangent(cost, robot, q, eps=1e-6):
    g = np.zeros(robot.nv)
    for k in range(robot.nv):
        dv = np.zeros(robot.nv)
        dv[k] = eps
        g[k] = (cost.value(robot, pin.integrate(robot.model, q, dv))
                - cost.value(robot, pin.integrate(robot.model, q, -dv))) / (2 * eps)
    return g


def _fd_coordinates(cost, robot, q, eps=1e-7):
    """Plain central differences in the nq coordinates of q (off the unit sphere included)."""
    g = np.zeros(robot.nq)
    for k in range(robot.nq):
        dq = np.zeros(robot.nq)
        dq[k] = eps
        g[k] = (cost.value(robot, q + dq) - cost.value(robot, q - dq)) / (2 * eps)
    return g


@pytest.mark.parametrize("name, b, a", CASES)
@pytest.mark.slow
def test_tangent_gradient_matches_finite_differences(robots, name, b, a, rng):
    robot = robots[name]
    for _ in range(3):
        cost = _costs(robot, b, a, robot.random_configuration(rng))
        q = robot.random_configuration(rng)
        g = cost.tangent_gradient(robot, q)
        assert g.shape == (robot.nv,)
        np.testing.assert_allclose(g, _fd_tangent(cost, robot, q), atol=1e-6)
        for term in cost.terms():  # each term alone, too
            np.testing.assert_allclose(term.tangent_gradient(robot, q), _fd_tangent(term, robot, q),
                                       atol=1e-6, err_msg=term.name)


@pytest.mark.parametrize("name, b, a", CASES)
def test_q_gradient_matches_finite_differences_in_q_coordinates(robots, name, b, a, rng):
    robot = robots[name]
    for _ in range(2):
        cost = _costs(robot, b, a, robot.random_configuration(rng))
        q = robot.random_configuration(rng)
        g_q = cost.gradient(robot, q)
        assert g_q.shape == (robot.nq,)
        np.testing.assert_allclose(g_q, _fd_coordinates(cost, robot, q), atol=2e-6)
        # chain rule: along q' = N v the q-gradient gives back the tangent gradient
        N = pin.lieGroup(robot.model).tangentMap(q)
        np.testing.assert_allclose(N.T @ g_q, cost.tangent_gradient(robot, q), atol=1e-10)


def test_q_gradient_has_no_radial_part_on_unit_blocks(robots, rng):
    robot = robots["tree30"]  # free flyer quaternion q[3:7] and continuous (cos, sin) pairs
    q = robot.random_configuration(rng)
    g_q = _costs(robot, "right_foot_site", "left_hand_site", robot.random_configuration(rng)).gradient(robot, q)
    assert abs(g_q[3:7] @ q[3:7]) < 1e-10
    for j in range(1, robot.model.njoints):
        joint = robot.model.joints[j]
        if joint.shortname().startswith("JointModelRUB"):
            block = slice(joint.idx_q, joint.idx_q + 2)
            assert abs(g_q[block] @ q[block]) < 1e-10


def test_q_gradient_equals_tangent_gradient_with_one_dof_joints(robots, rng):
    robot = robots["dual_arm"]
    cost = _costs(robot, "right_tool", "left_tool", robot.random_configuration(rng))
    q = robot.random_configuration(rng)
    np.testing.assert_array_equal(cost.gradient(robot, q), cost.tangent_gradient(robot, q))
    np.testing.assert_array_equal(q_gradient(robot, q, np.arange(robot.nv)), np.arange(robot.nv))


@pytest.mark.parametrize("name, b, a", CASES)
def test_values_match_independent_formulas(robots, name, b, a, rng):
    robot = robots[name]
    q, q_target = robot.random_configuration(rng), robot.random_configuration(rng)
    fa, fb = robot.frame_id(a), robot.frame_id(b)
    target, now = placements(robot, q_target), placements(robot, q)
    T_hat = target[fa].inverse() * target[fb]
    T_ab = now[fa].inverse() * now[fb]
    position = PositionCost(b, T_hat.translation, relative_to=a, weight=3.0)
    orientation = OrientationCost(b, T_hat.rotation, relative_to=a, weight=2.0)
    np.testing.assert_allclose(position.value(robot, q), 3.0 * np.sum((T_ab.translation - T_hat.translation) ** 2))
    # 1 - (e . e_hat)^2 = sin^2(theta / 2) = (3 - tr(R_hat^T R)) / 4
    R_err = T_hat.rotation.T @ T_ab.rotation
    theta = np.linalg.norm(pin.log3(R_err))
    np.testing.assert_allclose(orientation.value(robot, q), 2.0 * np.sin(theta / 2) ** 2, atol=1e-12)
    np.testing.assert_allclose(orientation.value(robot, q), 2.0 * (3 - np.trace(R_err)) / 4, atol=1e-12)
    kin = reljac.Kinematics(robot, q)
    np.testing.assert_allclose(orientation.errors(kin)["orientation"], theta, atol=1e-10)
    np.testing.assert_allclose(position.errors(kin)["position"], np.linalg.norm(T_ab.translation - T_hat.translation))


def test_zero_value_and_gradient_at_the_target(robots, rng):
    robot = robots["tree30"]
    q = robot.random_configuration(rng)
    cost = _costs(robot, "right_foot_site", "left_hand_site", q)
    assert cost.value(robot, q) < 1e-20
    assert np.abs(cost.tangent_gradient(robot, q)).max() < 1e-9


def test_quaternion_rate_matrix_matches_finite_differences(rng):
    for _ in range(5):
        R = pin.exp3(rng.normal(size=3))
        w = rng.normal(size=3)
        e = pin.Quaternion(R).coeffs().copy()
        h = 1e-6

        def quat(t):
            c = pin.Quaternion(pin.exp3(w * t) @ R).coeffs().copy()  # d/dt R = [w]x R
            return c if c @ e > 0 else -c  # the same sign as e

        np.testing.assert_allclose(quaternion_rate_matrix(e) @ w, (quat(h) - quat(-h)) / (2 * h), atol=1e-8)


def test_relative_cost_rooted_at_the_world_equals_the_absolute_cost(robots, rng):
    robot = robots["dual_arm"]
    q, q_target = robot.random_configuration(rng), robot.random_configuration(rng)
    T = reljac.Kinematics(robot, q_target).placement("left_tool")
    for absolute, relative in [
        (PositionCost("left_tool", T.translation), PositionCost("left_tool", T.translation, relative_to="universe")),
        (OrientationCost("left_tool", T), OrientationCost("left_tool", T, relative_to="universe")),
    ]:
        np.testing.assert_allclose(absolute.value(robot, q), relative.value(robot, q), atol=1e-14)
        np.testing.assert_allclose(absolute.gradient(robot, q), relative.gradient(robot, q), atol=1e-12)


def test_target_quaternion_sign_does_not_matter(robots, rng):
    robot = robots["hand"]
    q = robot.random_configuration(rng)
    e = pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs().copy()
    plus, minus = OrientationCost("thumb_tip", e), OrientationCost("thumb_tip", -e)
    np.testing.assert_allclose(plus.value(robot, q), minus.value(robot, q), atol=1e-14)
    np.testing.assert_allclose(plus.tangent_gradient(robot, q), minus.tangent_gradient(robot, q), atol=1e-14)


def test_weights_scale_value_and_gradient(robots, rng):
    robot = robots["dual_arm"]
    q = robot.random_configuration(rng)
    one, five = PositionCost("left_tool", [0.3, 0.2, 1.0]), PositionCost("left_tool", [0.3, 0.2, 1.0], weight=5.0)
    np.testing.assert_allclose(five.value(robot, q), 5 * one.value(robot, q))
    np.testing.assert_allclose(five.gradient(robot, q), 5 * one.gradient(robot, q))
    total = one + OrientationCost("left_tool", np.eye(3))
    assert isinstance(total, CostSum) and len(total.terms()) == 2


def test_target_quaternion_conventions():
    R = pin.exp3(np.array([0.1, -0.4, 0.7]))
    xyzw = pin.Quaternion(R).coeffs().copy()
    for target in (R, pin.SE3(R, np.zeros(3)), pin.Quaternion(R), xyzw):
        e = as_unit_quaternion(target)
        assert abs(abs(e @ xyzw) - 1.0) < 1e-12
    np.testing.assert_allclose(pose_cost("tip", pin.SE3(R, np.ones(3))).terms()[1].target, xyzw)


def test_bad_targets_and_options_raise_clear_errors(robots):
    with pytest.raises(TaskError, match="norm 2"):
        OrientationCost("tip", [0.0, 0.0, 0.0, 2.0])  # non-unit quaternions are rejected
    with pytest.raises(TaskError, match="norm 0"):
        OrientationCost("tip", [0.0, 0.0, 0.0, 0.0])
    with pytest.raises(TaskError, match="not a rotation"):
        OrientationCost("tip", np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(TaskError, match="shape"):
        OrientationCost("tip", np.zeros(5))
    with pytest.raises(TaskError, match="3 finite numbers"):
        PositionCost("tip", [0.0, np.nan, 1.0])
    with pytest.raises(TaskError, match="weight"):
        PositionCost("tip", np.zeros(3), weight=-1.0)
    with pytest.raises(TaskError, match="frame"):
        PositionCost(3.5, np.zeros(3))
    with pytest.raises(TaskError, match="unique"):
        CostSum([PositionCost("tip", np.zeros(3)), PositionCost("tip", np.ones(3))])
    with pytest.raises(TaskError, match="Cost"):
        as_cost("tip")
    with pytest.raises(FrameNotFound, match="did you mean 'tip'"):
        PositionCost("tipp", np.zeros(3)).value(robots["planar_2link"], np.zeros(2))

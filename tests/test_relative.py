"""Relative Jacobians against closed forms, identities, Pinocchio's own frame Jacobians and
finite differences on the configuration manifold, for every bundled robot."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from helpers import (
    assert_jacobian_rates_match_finite_differences,
    interesting_frames,
    numeric_relative_jacobians,
    placements,
    random_pairs,
)

import reljac
from reljac.relative import Kinematics

BUNDLED = reljac.bundled_robots()
NAMED_PAIRS = [
    ("left_tool", "right_tool"),
    ("universe", "left_tool"),
    ("palm", "thumb_tip"),
    ("index_tip", "thumb_tip"),
    ("middle_tip", "ring_tip"),
    ("link1", "tip"),
]


@pytest.fixture(scope="module", params=BUNDLED)
def robot(request):
    return reljac.Robot.bundled(request.param)


def test_bundled_robots_are_all_there():
    assert {"planar_2link", "dual_arm", "hand", "tree30"} <= set(BUNDLED)


def test_planar_2link_closed_form(rng):
    robot = reljac.Robot.bundled("planar_2link")
    l1, l2 = 1.0, 0.8
    for _ in range(20):
        q1, q2 = q = robot.random_configuration(rng)
        s1, c1 = math.sin(q1), math.cos(q1)
        s12, c12 = math.sin(q1 + q2), math.cos(q1 + q2)
        T = reljac.relative_placement(robot, q, "base_link", "tip")
        np.testing.assert_allclose(T.translation, [l1 * c1 + l2 * c12, l1 * s1 + l2 * s12, 0], atol=1e-12)
        expected = np.zeros((6, 2))
        expected[0] = [-l1 * s1 - l2 * s12, -l2 * s12]
        expected[1] = [l1 * c1 + l2 * c12, l2 * c12]
        expected[5] = [1.0, 1.0]
        J = reljac.relative_jacobian(robot, q, "base_link", "tip")
        np.testing.assert_allclose(J, expected, atol=1e-12)
        # measured in link1, only joint2 moves the tip: d/dt p = l2 (-sin q2, cos q2) dq2
        expected_in_link1 = np.zeros((6, 2))
        expected_in_link1[:2, 1] = [-l2 * math.sin(q2), l2 * math.cos(q2)]
        expected_in_link1[5, 1] = 1.0
        J1 = reljac.relative_jacobian(robot, q, "link1", "tip")
        np.testing.assert_allclose(J1, expected_in_link1, atol=1e-12)


def test_jacobian_of_a_frame_relative_to_itself_is_zero(robot, rng):
    q = robot.random_configuration(rng)
    kin = Kinematics(robot, q)
    for f in interesting_frames(robot):
        for where in ("a", "b", "world"):
            assert np.abs(kin.relative_jacobian(f, f, expressed_in=where)).max() < 1e-12


def test_world_rooted_jacobian_is_pinocchios_frame_jacobian(robot, rng):
    q = robot.random_configuration(rng)
    kin = Kinematics(robot, q)
    data = robot.model.createData()
    for f in interesting_frames(robot):
        lwa = pin.computeFrameJacobian(robot.model, data, q, f, pin.LOCAL_WORLD_ALIGNED)
        local = pin.computeFrameJacobian(robot.model, data, q, f, pin.LOCAL)
        np.testing.assert_allclose(kin.relative_jacobian("universe", f), lwa, atol=1e-12)
        np.testing.assert_allclose(kin.relative_jacobian("universe", f, expressed_in="b"), local, atol=1e-12)


def test_jab_and_jba_are_related(robot, rng):
    """J_ba = -blockdiag(R_ba) [[I, [p_ab]x], [0, I]] J_ab (from p_ba = -R_ba p_ab)."""
    for _ in range(5):
        q = robot.random_configuration(rng)
        kin = Kinematics(robot, q)
        for a, b in random_pairs(robot, rng, 10):
            T_ab = kin.relative_placement(a, b)
            J_ab, J_ba = kin.relative_jacobian(a, b), kin.relative_jacobian(b, a)
            M = np.eye(6)
            M[:3, 3:] = pin.skew(T_ab.translation)
            R_ba = T_ab.rotation.T
            expected = -np.vstack((R_ba @ (M @ J_ab)[:3], R_ba @ (M @ J_ab)[3:]))
            np.testing.assert_allclose(J_ba, expected, atol=1e-10)


def test_every_expressed_in_is_a_rotation_of_the_same_motion(robot, rng):
    q = robot.random_configuration(rng)
    kin = Kinematics(robot, q)
    frames = interesting_frames(robot)
    for a, b in random_pairs(robot, rng, 10):
        c = int(rng.choice(frames))
        J = kin.relative_jacobian(a, b)
        T_wa, T_wb, T_wc = kin.placement(a), kin.placement(b), kin.placement(c)
        for where, R_xa in (
            ("a", np.eye(3)),
            ("world", T_wa.rotation),
            ("b", T_wb.rotation.T @ T_wa.rotation),
            (c, T_wc.rotation.T @ T_wa.rotation),
            (robot.model.frames[c].name, T_wc.rotation.T @ T_wa.rotation),
        ):
            got = kin.relative_jacobian(a, b, expressed_in=where)
            np.testing.assert_allclose(got[:3], R_xa @ J[:3], atol=1e-12)
            np.testing.assert_allclose(got[3:], R_xa @ J[3:], atol=1e-12)


@pytest.mark.slow
def test_matches_finite_differences_on_the_manifold(robot):
    """>= 20 random configurations, many frame pairs, central differences through pin.integrate."""
    rng = np.random.default_rng(7)
    names = [pair for pair in NAMED_PAIRS if all(f in robot.frame_names for f in pair)]
    for _ in range(20):
        q = robot.random_configuration(rng)
        pairs = random_pairs(robot, rng, 12) + [tuple(robot.frame_id(f) for f in p) for p in names]
        numeric = numeric_relative_jacobians(robot, q, pairs)
        kin = Kinematics(robot, q)
        for (a, b), J_fd in numeric.items():
            J = kin.relative_jacobian(a, b)
            scale = max(1.0, np.abs(J_fd).max())
            np.testing.assert_allclose(J, J_fd, atol=2e-7 * scale, err_msg=f"pair {a}->{b}")


def test_relative_twist_is_the_derivative_of_the_relative_pose(robot, rng):
    eps = 1e-6
    for _ in range(5):
        q = robot.random_configuration(rng)
        v = rng.normal(size=robot.nv)
        kin = Kinematics(robot, q, v)
        plus = placements(robot, pin.integrate(robot.model, q, eps * v))
        minus = placements(robot, pin.integrate(robot.model, q, -eps * v))
        for a, b in random_pairs(robot, rng, 8):
            Tp, Tm = plus[a].inverse() * plus[b], minus[a].inverse() * minus[b]
            twist = kin.relative_twist(a, b)
            np.testing.assert_allclose(twist[:3], (Tp.translation - Tm.translation) / (2 * eps), atol=1e-6)
            np.testing.assert_allclose(twist[3:], pin.log3(Tp.rotation @ Tm.rotation.T) / (2 * eps), atol=1e-6)
            one_shot = reljac.relative_twist(robot, q, v, a, b, expressed_in="b")
            np.testing.assert_allclose(one_shot, kin.relative_twist(a, b, expressed_in="b"), atol=1e-12)


def test_jacobian_time_variation_matches_finite_differences_along_v(robot, rng):
    frames = interesting_frames(robot)
    for _ in range(5):
        q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
        triples = [(a, b, int(rng.choice(frames))) for a, b in random_pairs(robot, rng, 6)]
        assert_jacobian_rates_match_finite_differences(robot, q, v, triples)


def test_one_shot_functions_equal_the_shared_object(rng):
    robot = reljac.Robot.bundled("dual_arm")
    q = robot.random_configuration(rng)
    v = rng.normal(size=robot.nv)
    kin = Kinematics(robot, q, v)
    np.testing.assert_allclose(
        reljac.relative_jacobian(robot, q, "left_tool", "right_tool"),
        kin.relative_jacobian("left_tool", "right_tool"),
        rtol=0, atol=1e-14,  # the one-shot path runs the kinematics of the two frames' chains only
    )
    for axes in ("b", "world", "left_tool", "right_tool", robot.model.frames[4].name, 4):
        np.testing.assert_allclose(reljac.relative_jacobian(robot, q, "left_tool", "right_tool", expressed_in=axes),
                                   kin.relative_jacobian("left_tool", "right_tool", expressed_in=axes),
                                   rtol=0, atol=1e-14)
    assert reljac.relative_placement(robot, q, "left_tool", "right_tool").isApprox(
        kin.relative_placement("left_tool", "right_tool"), 1e-14
    )
    np.testing.assert_allclose(
        reljac.relative_jacobian_time_variation(robot, q, v, "left_tool", "right_tool"),
        kin.relative_jacobian_time_variation("left_tool", "right_tool"),
        atol=0,
    )


def test_world_is_an_alias_of_the_universe_frame(rng):
    robot = reljac.Robot.bundled("dual_arm")
    q = robot.random_configuration(rng)
    np.testing.assert_array_equal(reljac.relative_jacobian(robot, q, "world", "left_tool"),
                                  reljac.relative_jacobian(robot, q, "universe", "left_tool"))

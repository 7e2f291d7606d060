"""Constraint residuals and Jacobians against Pinocchio's forward kinematics and finite
differences on every bundled robot; effective inverse mass against a direct computation."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import interesting_frames, placements

import reljac
from reljac import ConfigurationError, ReljacError, TaskError
from reljac.constraints import (
    BallJoint,
    Contact,
    Distance,
    contact_basis,
    effective_inverse_mass,
    mass_matrix,
)

ROBOTS = ["planar_2link", "dual_arm", "hand", "tree30"]


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request):
    return reljac.Robot.bundled(request.param)


def _point(robot, q, frame, point):
    """World position of a point given in a frame's axes, from Pinocchio's forward kinematics."""
    T = placements(robot, q)[robot.frame_id(frame)]
    return T.translation + T.rotation @ point


def _numeric_jacobian(g, robot, q, eps=1e-6):
    cols = []
    for k in range(robot.nv):
        dv = np.zeros(robot.nv)
        dv[k] = eps
        cols.append((g(pin.integrate(robot.model, q, dv)) - g(pin.integrate(robot.model, q, -dv))) / (2 * eps))
    return np.array(cols).T


def _random_setup(robot, rng):
    frames = interesting_frames(robot)
    a, b = (int(f) for f in rng.choice(frames, size=2, replace=False))
    return a, b, rng.normal(scale=0.2, size=3), rng.normal(scale=0.2, size=3)


@pytest.mark.slow
def test_ball_joint_and_distance_match_forward_kinematics_and_finite_differences(robot, rng):
    for _ in range(4):
        a, b, pa, pb = _random_setup(robot, rng)
        q = robot.random_configuration(rng)

        def r(q_):
            return _point(robot, q_, b, pb) - _point(robot, q_, a, pa)

        ball = BallJoint(a, b, point_a=pa, point_b=pb)
        np.testing.assert_allclose(ball.residual(robot, q), r(q), atol=1e-12)
        np.testing.assert_allclose(ball.jacobian(robot, q), _numeric_jacobian(r, robot, q), atol=1e-6)

        length = 0.3
        dist = Distance(a, b, length, point_a=pa, point_b=pb)

        def g(q_):
            return np.array([np.linalg.norm(r(q_)) - length])

        np.testing.assert_allclose(dist.residual(robot, q), g(q), atol=1e-12)
        G = dist.jacobian(robot, q)
        assert G.shape == (1, robot.nv)
        np.testing.assert_allclose(G, _numeric_jacobian(g, robot, q), atol=1e-6)


@pytest.mark.parametrize("normal_in", ["world", "a"])
@pytest.mark.slow
def test_contact_jacobian_matches_finite_differences_with_the_basis_frozen(robot, normal_in, rng):
    for _ in range(3):
        a, b, pa, pb = _random_setup(robot, rng)
        q = robot.random_configuration(rng)
        n = rng.normal(size=3)
        contact = Contact(a, b, n, normal_in=normal_in, point_a=pa, point_b=pb)
        kin = reljac.Kinematics(robot, q)
        B = contact.basis(kin)
        n_world = n if normal_in == "world" else placements(robot, q)[a].rotation @ n
        np.testing.assert_allclose(B[0], n_world / np.linalg.norm(n_world), atol=1e-12)

        def g(q_):
            return B @ (_point(robot, q_, b, pb) - _point(robot, q_, a, pa))

        np.testing.assert_allclose(contact.residual(robot, q), g(q), atol=1e-12)
        np.testing.assert_allclose(contact.jacobian(robot, q), _numeric_jacobian(g, robot, q), atol=1e-6)


def test_distance_jacobian_is_the_normal_row_of_the_ball_joint(rng):
    robot = reljac.Robot.bundled("dual_arm")
    q = robot.random_configuration(rng)
    ball = BallJoint("left_tool", "right_tool")
    r = ball.residual(robot, q)
    contact = Contact("left_tool", "right_tool", r)
    np.testing.assert_allclose(Distance("left_tool", "right_tool", 0.0).jacobian(robot, q)[0],
                               contact.jacobian(robot, q)[0], atol=1e-12)
    # a separating normal: moving along +G[0] increases the distance
    v = contact.jacobian(robot, q)[0]
    before = np.linalg.norm(r)
    after = np.linalg.norm(ball.residual(robot, pin.integrate(robot.model, q, 1e-4 * v)))
    assert after > before


@pytest.mark.parametrize("normal", [[0, 0, 1], [1, 0, 0], [0, -3, 0], [1, 1, 1], [1e-9, 0, -1], [0.3, -2.0, 0.7]])
def test_contact_basis_is_orthonormal_right_handed_and_keeps_the_normal(normal):
    B = contact_basis(normal)
    np.testing.assert_allclose(B @ B.T, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(B[0], np.asarray(normal, float) / np.linalg.norm(normal), atol=1e-15)
    np.testing.assert_allclose(np.cross(B[1], B[2]), B[0], atol=1e-14)  # (t1, t2, n) right-handed


def test_coincident_points_make_distance_raise_not_divide_by_zero():
    robot = reljac.Robot.bundled("planar_2link")
    dist = Distance("tip", "tip", 0.0)
    with pytest.raises(ConfigurationError, match="coincide"):
        dist.jacobian(robot, np.zeros(2))
    with pytest.raises(ReljacError):
        dist.residual(robot, np.zeros(2))


def test_bad_constraint_parameters_raise():
    with pytest.raises(TaskError, match="zero length"):
        contact_basis([0.0, 0.0, 0.0])
    with pytest.raises(TaskError, match="3 finite numbers"):
        BallJoint("tip", "link1", point_a=[0.0, 1.0])
    with pytest.raises(TaskError, match="length"):
        Distance("tip", "link1", -0.1)
    with pytest.raises(TaskError, match="normal_in"):
        Contact("tip", "link1", [0, 0, 1], normal_in="b")
    robot = reljac.Robot.bundled("planar_2link")
    with pytest.raises(reljac.FrameNotFound, match="tip"):
        BallJoint("tipp", "link1").jacobian(robot, np.zeros(2))


def test_effective_inverse_mass_matches_a_direct_computation(robot, rng):
    q = robot.random_configuration(rng)
    a, b, pa, pb = _random_setup(robot, rng)
    G = np.vstack([BallJoint(a, b, point_a=pa, point_b=pb).jacobian(robot, q),
                   Contact(a, b, [0, 0, 1], point_a=pa, point_b=pb).jacobian(robot, q)])
    M = pin.crba(robot.model, robot.model.createData(), q)
    M = np.triu(M) + np.triu(M, 1).T
    W = effective_inverse_mass(robot, q, G)
    assert W.shape == (6, 6)
    np.testing.assert_allclose(W, W.T, atol=0)
    np.testing.assert_allclose(W, G @ np.linalg.inv(M) @ G.T, rtol=1e-8, atol=1e-10)
    if not robot.model.mimicking_joints:  # Pinocchio's ABA-based inverse does not take mimic joints
        Minv = pin.computeMinverse(robot.model, robot.model.createData(), q)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        np.testing.assert_allclose(W, G @ Minv @ G.T, rtol=1e-8, atol=1e-10)
    one_row = effective_inverse_mass(robot, q, G[0])
    np.testing.assert_allclose(one_row, W[:1, :1], rtol=1e-12)


def test_mass_matrix_of_a_mimic_robot_matches_the_model_without_mimic(rng):
    hand = reljac.Robot.bundled("hand")
    full, G, S, o = hand.without_mimic()  # v_full = G v, q_full = S q + o
    q = hand.random_configuration(rng)
    M_full = pin.crba(full, full.createData(), S @ q + o)
    M_full = np.triu(M_full) + np.triu(M_full, 1).T
    np.testing.assert_allclose(mass_matrix(hand, q), G.T @ M_full @ G, rtol=1e-10, atol=1e-14)


def test_effective_inverse_mass_of_one_joint_row_is_the_2x2_closed_form():
    """planar_2link: G = [0, 1] picks (M^-1)_22 = M_11 / det(M)."""
    robot = reljac.Robot.bundled("planar_2link")
    q = np.zeros(2)
    M = mass_matrix(robot, q)
    W = effective_inverse_mass(robot, q, np.array([[0.0, 1.0]]))
    np.testing.assert_allclose(W[0, 0], M[0, 0] / (M[0, 0] * M[1, 1] - M[0, 1] ** 2), rtol=1e-12)


def test_effective_inverse_mass_rejects_bad_shapes():
    robot = reljac.Robot.bundled("planar_2link")
    with pytest.raises(ConfigurationError, match=r"expected \(k, 2\)"):
        effective_inverse_mass(robot, np.zeros(2), np.ones((3, 5)))
    with pytest.raises(ConfigurationError, match="non-finite"):
        effective_inverse_mass(robot, np.zeros(2), np.array([[np.nan, 1.0]]))


MIMIC_WITH_CHILD = """<robot name="mimic_child">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l3"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="a0" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0.5 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.5 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/><mimic joint="j1" multiplier="1.5" offset="0.1"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.5 0 0"/><axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def test_the_mass_matrix_of_a_mimic_joint_with_a_moving_child_is_the_same_every_call(tmp_path):
    """Pinocchio 4.1's crba accumulates in reused data where a mimic joint has a moving joint below
    it: each call added the leader/child entry again (M lost definiteness by the 4th call). M is
    G^T M_full G of the model without mimic joints (G: v -> v_full), on every call, and the
    effective inverse mass repeats too."""
    path = tmp_path / "mimic.urdf"
    path.write_text(MIMIC_WITH_CHILD)
    robot = reljac.Robot.from_urdf(path)
    full = reljac.Robot.from_urdf(path, mimic=False)
    q = robot.q_from_joint_values({"a0": 0.3, "j1": 0.2, "j3": 0.1})
    q_full = full.q_from_joint_values({"a0": 0.3, "j1": 0.2, "j2": 1.5 * 0.2 + 0.1, "j3": 0.1})
    M_full = pin.crba(full.model, full.model.createData(), q_full)
    M_full = np.triu(M_full) + np.triu(M_full, 1).T
    G = np.zeros((full.nv, robot.nv))
    for i, name in enumerate(full.joint_names):
        G[i, robot.joint_names.index("j1")] = 1.5 if name == "j2" else 0.0
        if name != "j2":
            G[i, robot.joint_names.index(name)] = 1.0
    inverse = [reljac.effective_inverse_mass(robot, q, [[0.0, 1.0, 0.0]]) for _ in range(4)]
    for _ in range(4):
        np.testing.assert_allclose(mass_matrix(robot, q), G.T @ M_full @ G, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array(inverse), np.array(inverse[:1] * 4), rtol=0, atol=0)

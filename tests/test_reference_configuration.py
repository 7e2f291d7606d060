"""Configurations of the reference: checks with helpful errors, sampling, integration, lookups."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from reljac.exceptions import ConfigurationError, FrameNotFound, JointNotFound
from reljac.reference import ReferenceRobot

URDF_DIR = Path(__file__).parent / "reference_urdfs"


@pytest.fixture(scope="module")
def arm() -> ReferenceRobot:
    return ReferenceRobot.from_urdf(URDF_DIR / "rotated_origins.urdf")


@pytest.fixture(scope="module")
def floating() -> ReferenceRobot:
    return ReferenceRobot.from_urdf(URDF_DIR / "floating_joint.urdf")


@pytest.mark.parametrize("shape", [(5,), (7,), (2, 5), (1, 2, 6), ()])
def test_wrong_shape(arm, shape):
    with pytest.raises(ConfigurationError, match=r"q has shape .* expected \(6,\) or \(N, 6\) for robot 'rotated_origins'"):
        arm.frame_placement(np.zeros(shape), "tool")


def test_not_numbers(arm):
    with pytest.raises(ConfigurationError, match="not an array of numbers"):
        arm.frame_placement(["a"] * 6, "tool")


def test_nan_names_the_entry_and_its_joint(arm):
    q = np.zeros(6)
    q[3] = np.nan
    with pytest.raises(ConfigurationError, match=r"^q\[3\] is NaN \(joint 'j4'\)$"):
        arm.frame_jacobian(q, "tool")
    batch = np.zeros((4, 6))
    batch[2, 1] = -np.inf
    with pytest.raises(ConfigurationError, match=r"^q\[2, 1\] is -inf \(joint 'j2'\)$"):
        arm.relative_jacobian(batch, "l1", "tool")


def test_free_joint_quaternion_must_be_unit(floating):
    q = floating.neutral_configuration()
    q[3:7] = [0.0, 0.0, 0.0, 2.0]
    with pytest.raises(ConfigurationError, match=r"q\[3:7\].*joint 'base_free'.*norm 2"):
        floating.frame_placement(q, "forearm")
    q[3:7] = [0.0, 0.0, 0.0, 1.0 + 1e-9]  # within tolerance: accepted and normalized
    np.testing.assert_allclose(floating.frame_placement(q, "base")[:3, :3] @ floating.frame_placement(q, "base")[:3, :3].T, np.eye(3), atol=1e-15)


def test_random_configuration_is_finite_and_inside_limits():
    for name in ("rotated_origins", "mimic", "deep_tree", "floating_joint"):
        robot = ReferenceRobot.from_urdf(URDF_DIR / f"{name}.urdf")
        q = robot.random_configuration(np.random.default_rng(0), n=500)
        assert q.shape == (500, robot.nq) and np.isfinite(q).all()
        assert (q >= robot.lower_limits).all() and (q <= robot.upper_limits).all()
        assert robot.random_configuration(1).shape == (robot.nq,)
        np.testing.assert_array_equal(robot.random_configuration(7, 3), robot.random_configuration(7, 3))
        for _joint, q_slice in robot.q_slices.items():
            if q_slice.stop - q_slice.start == 7:
                np.testing.assert_allclose(np.linalg.norm(q[:, q_slice.start + 3 : q_slice.stop], axis=1), 1.0)
            elif not math.isfinite(robot.lower_limits[q_slice.start]):
                assert np.abs(q[:, q_slice.start]).max() <= math.pi  # continuous / unbounded revolute


def test_neutral_configuration(floating):
    q = floating.neutral_configuration()
    np.testing.assert_array_equal(q[:7], [0, 0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(q[7:9], 0)


def twist_hat(twist: np.ndarray) -> np.ndarray:
    v, w = twist[:3], twist[3:]
    out = np.zeros((4, 4))
    out[:3, :3] = [[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]
    out[:3, 3] = v
    return out


def pose_of(q7: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = Rotation.from_quat(q7[3:]).as_matrix()  # scipy quaternions are [x, y, z, w] too
    out[:3, 3] = q7[:3]
    return out


def test_integrate_moves_free_joints_by_the_exponential_of_their_local_twist(floating):
    rng = np.random.default_rng(4)
    q = floating.random_configuration(rng)
    v = rng.normal(size=floating.nv)
    dt = 0.3
    q_next = floating.integrate(q, v, dt)
    for joint in ("base_free", "object_free"):
        q_slice, v_slice = floating.q_slices[joint], floating.v_slices[joint]
        expected = pose_of(q[q_slice]) @ expm(twist_hat(v[v_slice] * dt))
        np.testing.assert_allclose(pose_of(q_next[q_slice]), expected, atol=1e-12)
        assert np.linalg.norm(q_next[q_slice][3:]) == pytest.approx(1.0)
    for joint in ("shoulder", "elbow"):
        assert q_next[floating.idx_q(joint)] == pytest.approx(q[floating.idx_q(joint)] + dt * v[floating.idx_v(joint)])


def test_integrate_batches(floating):
    rng = np.random.default_rng(5)
    q = floating.random_configuration(rng, 6)
    v = rng.normal(size=(6, floating.nv))
    batched = floating.integrate(q, v, 0.1)
    for i in range(6):
        np.testing.assert_allclose(batched[i], floating.integrate(q[i], v[i], 0.1), atol=1e-15)
    assert floating.integrate(q[0], v, 0.1).shape == (6, floating.nq)  # one q, several velocities
    with pytest.raises(ConfigurationError, match=r"v has shape \(3,\)"):
        floating.integrate(q[0], np.zeros(3))


def test_joint_lookup(arm):
    assert arm.idx_q("j3") == 2 and arm.idx_v("j3") == 2
    with pytest.raises(JointNotFound, match="did you mean 'j3'"):
        arm.idx_q("j33")
    mimic = ReferenceRobot.from_urdf(URDF_DIR / "mimic.urdf")
    with pytest.raises(JointNotFound, match="mimics 'finger_left_joint'"):
        mimic.idx_v("finger_right_joint")


def test_frame_lookup_suggests_near_matches(arm):
    q = arm.neutral_configuration()
    with pytest.raises(FrameNotFound, match=r"frame 'tol' is not in robot 'rotated_origins'; did you mean 'tool'"):
        arm.frame_placement(q, "tol")
    with pytest.raises(FrameNotFound, match="frames: 'universe', 'base'"):
        arm.frame_jacobian(q, "zzzzzz")
    with pytest.raises(FrameNotFound, match="expressed_in='tooll'.*did you mean 'tool'"):
        arm.relative_jacobian(q, "l1", "tool", expressed_in="tooll")


def test_unknown_method(arm):
    with pytest.raises(ValueError, match="method 'fast'"):
        arm.frame_jacobian(arm.neutral_configuration(), "tool", method="fast")


def test_empty_batches_and_robots_without_degrees_of_freedom(floating):
    empty = np.zeros((0, floating.nq))
    assert floating.relative_jacobian(empty, "object_tip", "forearm", "base").shape == (0, 6, floating.nv)
    assert floating.frame_placement(empty, "forearm").shape == (0, 4, 4)
    assert floating.integrate(floating.neutral_configuration(), np.zeros((0, floating.nv))).shape == (0, floating.nq)
    rigid = ReferenceRobot.from_urdf_string(
        '<robot name="rigid"><link name="a"/><link name="b"/><joint name="j" type="fixed">'
        '<parent link="a"/><child link="b"/><origin xyz="1 2 3"/></joint></robot>'
    )
    assert (rigid.nq, rigid.nv, rigid.joint_names) == (0, 0, ())
    np.testing.assert_array_equal(rigid.frame_placement([], "b")[:3, 3], [1, 2, 3])
    assert rigid.relative_jacobian(np.zeros((2, 0)), "a", "b").shape == (2, 6, 0)
    assert rigid.integrate([], np.zeros((4, 0))).shape == (4, 0)

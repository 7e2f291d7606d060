"""The reference's rotation and rigid-transform helpers against scipy, batched."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from reljac.reference import lie
from reljac.reference.kinematics import axis_aligned_rotation


def hat(twist: np.ndarray) -> np.ndarray:
    out = np.zeros((4, 4))
    out[:3, :3] = lie.skew(twist[3:])
    out[:3, 3] = twist[:3]
    return out


@pytest.fixture
def twists() -> np.ndarray:
    rng = np.random.default_rng(31)
    out = rng.normal(size=(40, 6))
    out[:5, 3:] *= 1e-9  # near the small-angle series switch, on purpose
    out[5:8, 3:] = 0.0
    out[8:10, 3:] *= 3.0  # large angles
    return out


def test_skew_is_the_cross_product():
    rng = np.random.default_rng(30)
    a, b = rng.normal(size=(2, 10, 3))
    np.testing.assert_allclose(np.einsum("nij,nj->ni", lie.skew(a), b), np.cross(a, b), atol=1e-15)
    np.testing.assert_allclose(lie.cross(a, b), np.cross(a, b), atol=1e-15)
    out = np.zeros((3, 10))
    lie.add_cross(out, a.T, b.T)
    np.testing.assert_allclose(out.T, np.cross(a, b), atol=1e-15)


@pytest.mark.slow
def test_exponentials_match_scipy(twists):
    np.testing.assert_allclose(lie.exp_se3(twists), np.stack([expm(hat(t)) for t in twists]), atol=1e-13)
    np.testing.assert_allclose(lie.exp_so3(twists[:, 3:]), Rotation.from_rotvec(twists[:, 3:]).as_matrix(), atol=1e-14)
    quaternions = lie.quaternion_exp(twists[:, 3:])
    np.testing.assert_allclose(lie.quaternion_to_rotation(quaternions), lie.exp_so3(twists[:, 3:]), atol=1e-14)


def test_quaternions(twists):
    first, second = lie.quaternion_exp(twists[:20, 3:]), lie.quaternion_exp(twists[20:, 3:])
    product = lie.quaternion_to_rotation(lie.quaternion_multiply(first, second))
    np.testing.assert_allclose(product, lie.quaternion_to_rotation(first) @ lie.quaternion_to_rotation(second), atol=1e-14)
    np.testing.assert_allclose(lie.quaternion_to_rotation(first), Rotation.from_quat(first).as_matrix(), atol=1e-14)


def test_rpy_is_extrinsic_xyz():
    rpy = np.random.default_rng(32).uniform(-np.pi, np.pi, (20, 3))
    np.testing.assert_allclose(lie.rpy_to_rotation(rpy), Rotation.from_euler("xyz", rpy).as_matrix(), atol=1e-14)


def test_inverse_and_adjoint(twists):
    poses = lie.exp_se3(twists)
    np.testing.assert_allclose(lie.inverse_transform(poses) @ poses, np.broadcast_to(np.eye(4), poses.shape), atol=1e-13)
    # Ad_T maps a twist xi to the twist whose hat is T xi^ T^-1.
    xi = np.random.default_rng(33).normal(size=6)
    for pose in poses[:10]:
        expected = pose @ hat(xi) @ np.linalg.inv(pose)
        np.testing.assert_allclose(hat(lie.adjoint(pose) @ xi), expected, atol=1e-12)


@pytest.mark.parametrize("axis", [[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, -1], [0.6, 0.0, 0.8], [0.95, 0.1, -0.2958]])
def test_axis_aligned_rotation_maps_z_onto_the_axis(axis):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    rotation = axis_aligned_rotation(axis)
    np.testing.assert_allclose(rotation @ [0, 0, 1], axis, atol=1e-15)
    np.testing.assert_allclose(rotation.T @ rotation, np.eye(3), atol=1e-15)
    assert np.linalg.det(rotation) == pytest.approx(1.0)

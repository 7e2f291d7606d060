"""Identities of relative placements and Jacobians (their finite-difference checks are in
test_reference_jacobians)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reljac.reference import ReferenceRobot

TESTS = Path(__file__).parent
ROBOTS = [
    pytest.param(TESTS / "reference_urdfs" / "deep_tree.urdf", id="deep_tree"),
    pytest.param(TESTS / "reference_urdfs" / "floating_joint.urdf", id="floating_joint"),
    pytest.param(TESTS / "reference_urdfs" / "mimic.urdf", id="mimic"),
    pytest.param(TESTS.parent / "urdf" / "dual_arm.urdf", id="bundled-dual_arm"),
]


@pytest.fixture(params=ROBOTS)
def robot(request) -> ReferenceRobot:
    if not request.param.exists():
        pytest.skip(f"{request.param} not written yet")
    return ReferenceRobot.from_urdf(request.param, floating_base=True)


@pytest.fixture
def q(robot) -> np.ndarray:
    return robot.random_configuration(np.random.default_rng(21), 5)


def skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def test_relative_to_the_world_is_the_frame_jacobian(robot, q):
    for frame in robot.frame_names[-4:]:
        np.testing.assert_allclose(robot.relative_placement(q, "universe", frame), robot.frame_placement(q, frame), atol=1e-14)
        for expressed_in in ("a", "world", "universe"):
            np.testing.assert_allclose(
                robot.relative_jacobian(q, "universe", frame, expressed_in), robot.frame_jacobian(q, frame), atol=1e-14
            )
        np.testing.assert_allclose(robot.relative_jacobian(q, "universe", frame, "b"), robot.body_jacobian(q, frame), atol=1e-14)


def test_a_frame_does_not_move_relative_to_itself(robot, q):
    frame = robot.frame_names[-1]
    np.testing.assert_allclose(robot.relative_placement(q, frame, frame), np.broadcast_to(np.eye(4), (len(q), 4, 4)), atol=1e-14)
    np.testing.assert_allclose(robot.relative_jacobian(q, frame, frame), 0, atol=1e-14)


def test_swapping_the_frames_reverses_the_angular_velocity(robot, q):
    a, b = robot.frame_names[-1], robot.frame_names[len(robot.frame_names) // 2]
    # w_ba = -w_ab as vectors; expressed in the same frame c the angular blocks are opposite.
    for c in ("world", a, b):
        ab = robot.relative_jacobian(q, a, b, c)
        ba = robot.relative_jacobian(q, b, a, c)
        np.testing.assert_allclose(ab[:, 3:], -ba[:, 3:], atol=1e-13)


def test_matches_the_reference_documents_formula_written_out(robot, q):
    """The relative-Jacobian document's formula with its typo fixed (no cross-product bracket on the
    difference term): J^v_ab = [p_ab]x R_wa^T J^w_a + R_wa^T (J^v_b - J^v_a) and
    J^w_ab = R_wa^T (J^w_b - J^w_a), one configuration at a time with plain matrices."""
    a, b = robot.frame_names[-1], robot.frame_names[len(robot.frame_names) // 2]
    for qi in q:
        pose_ab = robot.relative_placement(qi, a, b)
        rotation_aw = robot.frame_placement(qi, a)[:3, :3].T
        jacobian_a, jacobian_b = robot.frame_jacobian(qi, a), robot.frame_jacobian(qi, b)
        linear = skew(pose_ab[:3, 3]) @ rotation_aw @ jacobian_a[3:] + rotation_aw @ (jacobian_b[:3] - jacobian_a[:3])
        angular = rotation_aw @ (jacobian_b[3:] - jacobian_a[3:])
        np.testing.assert_allclose(robot.relative_jacobian(qi, a, b), np.vstack((linear, angular)), atol=1e-13)


def test_expressed_in_any_frame_rotates_both_blocks(robot, q):
    a, b, c = robot.frame_names[-1], robot.frame_names[-5], robot.frame_names[3]
    in_a = robot.relative_jacobian(q, a, b)
    in_c = robot.relative_jacobian(q, a, b, expressed_in=c)
    rotation_ca = np.swapaxes(robot.frame_placement(q, c)[:, :3, :3], 1, 2) @ robot.frame_placement(q, a)[:, :3, :3]
    np.testing.assert_allclose(in_c[:, :3], rotation_ca @ in_a[:, :3], atol=1e-13)
    np.testing.assert_allclose(in_c[:, 3:], rotation_ca @ in_a[:, 3:], atol=1e-13)
    np.testing.assert_allclose(robot.relative_jacobian(q, a, b, expressed_in=a), in_a, atol=0)
    np.testing.assert_allclose(robot.relative_jacobian(q, a, b, expressed_in=b), robot.relative_jacobian(q, a, b, "b"), atol=0)


def test_results_are_fresh_arrays(robot, q):
    kinematics = robot.kinematics(q)
    frame = robot.frame_names[-1]
    for method in ("cross", "poe"):
        first = kinematics.jacobian(frame, method=method)
        first[:] = np.nan  # must not corrupt what the object answers next
        assert np.isfinite(kinematics.jacobian(frame, method=method)).all()
        assert np.isfinite(kinematics.body_jacobian(frame, method=method)).all()
    placement = kinematics.placement(frame)
    placement[:] = np.nan
    assert np.isfinite(kinematics.placement(frame)).all()

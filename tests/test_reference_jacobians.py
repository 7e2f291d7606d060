"""Frame and relative Jacobians of the reference against finite differences of its own placements.

Configurations are perturbed on the manifold, ``q (+) (+-eps e_k)`` (a free joint moves by the
exponential of a local twist, checked against scipy's expm in test_reference_configuration), and the
angular velocity is read from the SO(3) log of ``R(q - dq)^T R(q + dq)``, the body angular velocity.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reljac.reference import ReferenceRobot

TESTS = Path(__file__).parent
HAND_MADE = ["planar_2link", "rotated_origins", "mimic", "deep_tree", "floating_joint", "planar_joint"]
BUNDLED = ["planar_2link", "dual_arm", "hand", "tree30"]  # written by another engineer; tested if present
ROBOTS = [pytest.param(TESTS / "reference_urdfs" / f"{name}.urdf", id=name) for name in HAND_MADE] + [
    pytest.param(TESTS.parent / "urdf" / f"{name}.urdf", id=f"bundled-{name}") for name in BUNDLED
]
EPS = 1e-6


@pytest.fixture(params=ROBOTS)
def path(request) -> Path:
    if not request.param.exists():
        pytest.skip(f"{request.param} not written yet")
    return request.param


@pytest.fixture(params=[False, True], ids=["fixed-base", "floating-base"])
def robot(request, path) -> ReferenceRobot:
    return ReferenceRobot.from_urdf(path, floating_base=request.param)


def so3_log(rotation: np.ndarray) -> np.ndarray:
    """Rotation vector of rotation matrices (..., 3, 3) -> (..., 3), for angles below pi."""
    cos = np.clip((np.trace(rotation, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos)
    # The antisymmetric part of R is sin(angle) [axis]x.
    sin_axis = 0.5 * np.stack(
        (rotation[..., 2, 1] - rotation[..., 1, 2], rotation[..., 0, 2] - rotation[..., 2, 0], rotation[..., 1, 0] - rotation[..., 0, 1]),
        axis=-1,
    )
    small = angle < 1e-4
    factor = np.where(small, 1.0 + angle**2 / 6.0, angle / np.sin(np.where(small, 1.0, angle)))
    return factor[..., None] * sin_axis


def test_so3_log_inverts_rotations():
    from scipy.spatial.transform import Rotation

    vectors = np.random.default_rng(0).normal(size=(50, 3))
    vectors *= np.random.default_rng(1).uniform(1e-9, 3.0, size=(50, 1)) / np.linalg.norm(vectors, axis=1, keepdims=True)
    np.testing.assert_allclose(so3_log(Rotation.from_rotvec(vectors).as_matrix()), vectors, atol=1e-12)


def perturbed(robot: ReferenceRobot, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Configurations q (+) eps e_k and q (+) -eps e_k for every velocity direction k: two (nv, nq)."""
    steps = EPS * np.eye(robot.nv)
    return robot.integrate(q, steps), robot.integrate(q, -steps)


def numeric_frame_jacobian(robot: ReferenceRobot, q: np.ndarray, frame: str) -> np.ndarray:
    """World-aligned Jacobian by central differences: [d/dt p_wf; w_wf in world], (6, nv)."""
    plus, minus = (robot.frame_placement(qs, frame) for qs in perturbed(robot, q))
    linear = (plus[:, :3, 3] - minus[:, :3, 3]) / (2 * EPS)
    body_angular = so3_log(np.swapaxes(minus[:, :3, :3], 1, 2) @ plus[:, :3, :3]) / (2 * EPS)
    world_angular = body_angular @ robot.frame_placement(q, frame)[:3, :3].T
    return np.concatenate((linear.T, world_angular.T))


def numeric_relative_jacobian(robot: ReferenceRobot, q: np.ndarray, a: str, b: str, expressed_in: str) -> np.ndarray:
    """J_ab by central differences of T_ab, expressed in a, b, world or a frame: (6, nv)."""
    plus, minus = (robot.relative_placement(qs, a, b) for qs in perturbed(robot, q))
    linear_in_a = (plus[:, :3, 3] - minus[:, :3, 3]) / (2 * EPS)  # d/dt p_ab, coordinates in a
    angular_in_b = so3_log(np.swapaxes(minus[:, :3, :3], 1, 2) @ plus[:, :3, :3]) / (2 * EPS)
    rotation_wa, rotation_wb = (robot.frame_placement(q, f)[:3, :3] for f in (a, b))
    rotation_wc = {"a": rotation_wa, "b": rotation_wb, "world": np.eye(3)}.get(expressed_in)
    if rotation_wc is None:
        rotation_wc = robot.frame_placement(q, expressed_in)[:3, :3]
    linear = linear_in_a @ (rotation_wc.T @ rotation_wa).T
    angular = angular_in_b @ (rotation_wc.T @ rotation_wb).T
    return np.concatenate((linear.T, angular.T))


METHODS = ("cross", "poe")  # both of the reference's Jacobian methods, each against the same differences


@pytest.mark.slow
def test_frame_jacobians_match_finite_differences(robot):
    rng = np.random.default_rng(11)
    for q in robot.random_configuration(rng, 2):
        for frame in robot.frame_names:
            numeric = numeric_frame_jacobian(robot, q, frame)
            for method in METHODS:
                np.testing.assert_allclose(
                    robot.frame_jacobian(q, frame, method=method),
                    numeric,
                    rtol=0,
                    atol=1e-8,
                    err_msg=f"{frame} ({method})",
                )


def frame_pairs(robot: ReferenceRobot, count: int, seed: int) -> list[tuple[str, str, str]]:
    """(a, b, c) triples: the world and leaves on purpose, then random frames."""
    rng = np.random.default_rng(seed)
    names = robot.frame_names
    pairs = [("universe", names[-1], names[-2]), (names[-1], "universe", names[1]), (names[-1], names[-1], names[2])]
    while len(pairs) < count:
        pairs.append(tuple(names[i] for i in rng.integers(0, len(names), 3)))
    return pairs


@pytest.mark.slow
def test_relative_jacobians_match_finite_differences(robot):
    rng = np.random.default_rng(12)
    q = robot.random_configuration(rng)
    for a, b, c in frame_pairs(robot, 10, seed=13):
        for expressed_in in ("a", "b", "world", c):
            numeric = numeric_relative_jacobian(robot, q, a, b, expressed_in)
            for method in METHODS:
                np.testing.assert_allclose(
                    robot.relative_jacobian(q, a, b, expressed_in, method=method),
                    numeric,
                    rtol=0,
                    atol=1e-8,
                    err_msg=f"J_ab for a={a}, b={b}, expressed in {expressed_in} ({method})",
                )

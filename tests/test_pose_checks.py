"""The pose checks of reljac.poses / reljac.validation against numpy's own tests: a matrix is
refused exactly when np.allclose refuses its last row, or numpy says R^T R is not I within
ROTATION_TOLERANCE, or np.linalg.det(R) < 0."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from reljac.exceptions import TaskError
from reljac.poses import as_rotation, as_se3
from reljac.validation import ROTATION_TOLERANCE


def numpy_says_pose(M: np.ndarray) -> bool:
    R = M[:3, :3]
    return bool(np.allclose(M[3], [0.0, 0.0, 0.0, 1.0]) and np.abs(R.T @ R - np.eye(3)).max() <= ROTATION_TOLERANCE
                and np.linalg.det(R) >= 0)


def candidates(rng: np.random.Generator):
    for _ in range(300):
        M = pin.SE3.Random().homogeneous
        kind = rng.integers(6)
        if kind == 1:  # a reflection
            M[:3, 0] *= -1
        elif kind == 2:  # a rotation off by about the tolerance
            M[:3, :3] += rng.normal(scale=ROTATION_TOLERANCE * rng.uniform(0.1, 3.0), size=(3, 3))
        elif kind == 3:  # a last row off by about np.allclose's tolerance (atol 1e-8, rtol 1e-5)
            M[3] += rng.normal(scale=rng.choice([1e-9, 1e-8, 1e-5]), size=4)
        elif kind == 4:  # a scaled rotation
            M[:3, :3] *= 1 + rng.normal(scale=1e-6)
        yield M


def test_a_pose_is_refused_exactly_when_numpy_refuses_it():
    rng = np.random.default_rng(5)
    seen = set()
    for M in candidates(rng):
        expected = numpy_says_pose(M)
        seen.add(expected)
        if expected:
            T = as_se3(M, "target")
            np.testing.assert_array_equal(T.homogeneous[:3], M[:3])
        else:
            with pytest.raises(TaskError, match="target"):
                as_se3(M, "target")
    assert seen == {True, False}  # both kinds reached


def test_a_rotation_is_refused_exactly_when_numpy_refuses_it():
    rng = np.random.default_rng(6)
    for M in candidates(rng):
        R = M[:3, :3]
        if np.abs(R.T @ R - np.eye(3)).max() <= ROTATION_TOLERANCE and np.linalg.det(R) >= 0:
            np.testing.assert_array_equal(as_rotation(R, "R"), R)
        else:
            with pytest.raises(TaskError, match="not a rotation matrix"):
                as_rotation(R, "R")

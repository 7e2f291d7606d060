"""Property tests on random URDF trees (hypothesis): random shapes, joint types, origins, oblique
axes and mimic joints; the two Jacobian constructions must agree, and the relative Jacobian must
match finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import urdf_trees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reljac.reference import ReferenceRobot

EPS = 1e-6


def so3_log_small(rotation: np.ndarray) -> np.ndarray:
    """Rotation vectors of small rotations (..., 3, 3) (the angle is about 2 eps here)."""
    angle = np.arccos(np.clip((np.trace(rotation, axis1=-2, axis2=-1) - 1) / 2, -1, 1))
    vee = np.stack((rotation[..., 2, 1] - rotation[..., 1, 2], rotation[..., 0, 2] - rotation[..., 2, 0],
                    rotation[..., 1, 0] - rotation[..., 0, 1]), axis=-1)
    return 0.5 * (1 + angle**2 / 6)[..., None] * vee


@pytest.mark.slow
@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=urdf_trees(pinocchio_compatible=False), floating_base=st.booleans(), seed=st.integers(0, 1000))
def test_random_trees(text, floating_base, seed):
    robot = ReferenceRobot.from_urdf_string(text, floating_base=floating_base)
    rng = np.random.default_rng(seed)
    q = robot.random_configuration(rng)
    kinematics = robot.kinematics(q)
    for frame in robot.frame_names:
        np.testing.assert_allclose(
            kinematics.jacobian(frame, method="cross"), kinematics.jacobian(frame, method="poe"), rtol=0, atol=1e-10
        )

    a, b = (robot.frame_names[i] for i in rng.integers(0, len(robot.frame_names), 2))
    steps = EPS * np.eye(robot.nv)
    plus = robot.relative_placement(robot.integrate(q, steps), a, b)
    minus = robot.relative_placement(robot.integrate(q, -steps), a, b)
    linear = (plus[:, :3, 3] - minus[:, :3, 3]).T / (2 * EPS)  # d/dt p_ab in a
    angular_in_b = so3_log_small(np.swapaxes(minus[:, :3, :3], 1, 2) @ plus[:, :3, :3]).T / (2 * EPS)
    rotation_ab = kinematics.relative_placement(a, b)[:3, :3]
    expected = np.vstack((linear, rotation_ab @ angular_in_b))
    np.testing.assert_allclose(kinematics.relative_jacobian(a, b), expected, rtol=0, atol=1e-7)

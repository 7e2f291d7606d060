"""Robots nobody here wrote: URDFs from PyPI's example-robot-data (skipped when not installed)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    EXAMPLE_ROBOTS,
    assert_jacobian_rates_match_finite_differences,
    example_robot_data_dir,
    numeric_relative_jacobians,
    random_pairs,
)

import reljac
from reljac.relative import Kinematics

ROBOTS_DIR = example_robot_data_dir()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    ROBOTS_DIR is None, reason="example-robot-data is not installed (pip install '.[test]' installs it)"
)]


@pytest.fixture(scope="module", params=sorted(EXAMPLE_ROBOTS))
def robot(request):
    path, floating = EXAMPLE_ROBOTS[request.param]
    return reljac.Robot.from_urdf(ROBOTS_DIR / path, floating_base=floating, package_dirs=[ROBOTS_DIR.parent])


def test_relative_jacobians_match_finite_differences(robot):
    rng = np.random.default_rng(11)
    for _ in range(5):
        q = robot.random_configuration(rng)
        pairs = random_pairs(robot, rng, 10)
        kin = Kinematics(robot, q)
        for (a, b), J_fd in numeric_relative_jacobians(robot, q, pairs).items():
            J = kin.relative_jacobian(a, b)
            np.testing.assert_allclose(J, J_fd, atol=2e-7 * max(1.0, np.abs(J_fd).max()), err_msg=f"{a}->{b}")


def test_jacobian_time_variation_matches_finite_differences(robot):
    rng = np.random.default_rng(12)
    q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
    triples = [(a, b, a) for a, b in random_pairs(robot, rng, 6)]
    assert_jacobian_rates_match_finite_differences(robot, q, v, triples)


def test_meshes_resolve_through_package_dirs():
    path, _ = EXAMPLE_ROBOTS["panda"]
    robot = reljac.Robot.from_urdf(ROBOTS_DIR / path, package_dirs=[ROBOTS_DIR.parent.parent])
    assert robot.visual_model.ngeoms > 0
    assert all(g.meshPath.endswith((".dae", ".stl", ".obj")) for g in robot.visual_model.geometryObjects)

"""Any URDF, not just ours: random trees (hypothesis) loaded by both layers, the Pinocchio-backed
relative Jacobians and placements must agree with the in-house reference everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_jacobian_rates_match_finite_differences, load_random_tree, urdf_trees
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import reljac
from reljac.apps.check import check_robot
from reljac.reference import ReferenceRobot

pytestmark = pytest.mark.slow


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=urdf_trees(), floating_base=st.booleans(), seed=st.integers(0, 1000))
def test_random_trees_agree_with_the_reference(tmp_path_factory, text, floating_base, seed):
    robot = load_random_tree(tmp_path_factory.mktemp("tree"), text, floating_base=floating_base)
    assume(robot is not None)
    ref = ReferenceRobot.from_urdf(robot.urdf_path, floating_base=floating_base)
    report = check_robot(robot, ref, samples=5, seed=seed, max_pairs=40, tolerance=1e-9)
    assert report.ok, report.format() + "\n" + text


@pytest.mark.parametrize("name", ["dual_arm", "tree30"])
def test_relative_jacobians_for_every_expressed_in_frame_agree(name):
    """Beyond a, b and world: a third frame c, against the reference."""
    robot = reljac.Robot.bundled(name)
    ref = ReferenceRobot.from_urdf(robot.urdf_path)
    from reljac.reference_map import LayerMap

    layers = LayerMap(robot, ref)
    rng = np.random.default_rng(3)
    frames = layers.frames
    for _ in range(10):
        q_ref = ref.random_configuration(rng)
        kin = reljac.Kinematics(robot, layers.q_to_pinocchio(q_ref))
        a, b, c = (frames[i] for i in rng.choice(len(frames), 3, replace=False))
        J = layers.columns(kin.relative_jacobian(a, b, expressed_in=c))
        np.testing.assert_allclose(J, ref.relative_jacobian(q_ref, a, b, c), atol=1e-12)


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=urdf_trees(), floating_base=st.booleans(), seed=st.integers(0, 1000))
def test_random_trees_jacobian_time_variation_matches_finite_differences(tmp_path_factory, text, floating_base, seed):
    """dJ_ab/dt (including the mimic workaround) against central differences of J_ab along v."""
    robot = load_random_tree(tmp_path_factory.mktemp("tree"), text, floating_base=floating_base)
    assume(robot is not None and robot.nv > 0)
    rng = np.random.default_rng(seed)
    q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
    frames = robot.frame_names
    triples = [tuple(frames[i] for i in rng.choice(len(frames), 3)) for _ in range(3)]
    assert_jacobian_rates_match_finite_differences(robot, q, v, triples, note="\n" + text)

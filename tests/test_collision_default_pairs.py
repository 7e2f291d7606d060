"""Default collision pairs are pairs the robot can keep: touching and always-near pairs are dropped."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from helpers import example_robot_data_dir

import reljac
from reljac.collision import CollisionModel
from reljac.exceptions import CollisionError

needs_robots = pytest.mark.skipif(example_robot_data_dir() is None, reason="needs example-robot-data")
RADIUS = 0.05  # [m] both spheres of the slider below


def slider(tmp_path, lower: float, upper: float) -> reljac.Robot:
    """Two spheres of RADIUS: one on the base, one on a slider along x two joints away (a
    revolute joint about x, which leaves the distance alone, then the prismatic joint), whose
    limits [lower, upper] are the centre distance: the pair's distance is x - 2 RADIUS."""
    sphere = f'<collision><geometry><sphere radius="{RADIUS}"/></geometry></collision>'
    path = tmp_path / "slider.urdf"
    path.write_text(textwrap.dedent(f"""\
        <robot name="slider">
          <link name="base">{sphere}</link>
          <link name="spinner"/>
          <link name="slide">{sphere}</link>
          <joint name="spin" type="revolute"><parent link="base"/><child link="spinner"/>
            <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
          <joint name="x" type="prismatic"><parent link="spinner"/><child link="slide"/>
            <axis xyz="1 0 0"/><limit lower="{lower}" upper="{upper}" effort="1" velocity="1"/></joint>
        </robot>"""))
    return reljac.Robot.from_urdf(path)


def test_a_pair_near_in_every_sample_is_dropped_even_when_apart_at_the_reference(tmp_path):
    """Limits [0.095, 0.105]: d = x - 0.1 is within 5 mm in every configuration."""
    robot = slider(tmp_path, 0.095, 0.105)
    far = np.array([0.0, 0.5])  # 0.4 m apart: the touching rule keeps the pair
    cm = CollisionModel(robot, reference_q=far)
    assert cm.pairs == []
    assert cm.dropped == [("base", "slide", "near in most configurations: within 10 mm in 100 of 100 random ones")]
    kept = CollisionModel(robot, reference_q=far, samples=0)
    assert kept.pairs == [("base", "slide")]


@pytest.mark.parametrize("always_near, dropped", [(0.95, False), (0.9, False), (0.75, True), (0.5, True)])
def test_the_always_near_fraction_decides(tmp_path, always_near, dropped):
    """Limits [0.1, 0.112]: x uniform, d = x - 0.1 <= 10 mm in 10/12 = 83 % of the samples."""
    robot = slider(tmp_path, 0.1, 0.112)
    cm = CollisionModel(robot, reference_q=np.array([0.0, 0.5]), always_near=always_near)
    assert (cm.pairs == []) is dropped
    if dropped:
        count = int(cm.dropped[0][2].split(" mm in ")[1].split(" of ")[0])
        assert abs(count - 100 * 10 / 12) < 4 * np.sqrt(100 * (10 / 12) * (2 / 12))  # 4 sigma of a binomial


def test_a_pair_within_the_touching_distance_at_the_reference_is_dropped(tmp_path):
    robot = slider(tmp_path, 0.1, 0.5)
    q = np.array([0.0, 0.106])  # 6 mm apart
    assert CollisionModel(robot, reference_q=q).dropped == [
        ("base", "slide", "touching at the reference configuration (d = 6.00 mm, within 10 mm)")]
    assert CollisionModel(robot, reference_q=q, touching_distance=0.005).pairs == [("base", "slide")]


def test_the_default_reference_is_the_robot_reference_configuration_inside_the_limits(tmp_path):
    """Neutral (x = 0) puts the spheres 0.1 m into each other; the reference is the middle, 0.3 m."""
    robot = slider(tmp_path, 0.1, 0.5)
    cm = CollisionModel(robot)
    assert cm.pairs == [("base", "slide")]
    assert cm.pairs_below(robot.reference_configuration(), 0.2) == []
    assert cm.pairs_below(np.array([0.0, 0.25]), 0.2) == [("base", "slide", pytest.approx(0.15, abs=1e-9))]


def test_pairs_below_lists_the_active_pairs_nearer_than_a_distance_nearest_first():
    dual = reljac.Robot.bundled("dual_arm")
    cm = dual.collisions
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = dual.random_configuration(rng)
        rows = cm.distances(q, jacobians=False)  # every active pair
        expected = sorted((d, a, b) for (a, b), d in zip(rows.pairs, rows.distance, strict=True) if d < 0.05)
        assert [(d, a, b) for a, b, d in cm.pairs_below(q, 0.05)] == expected


@pytest.mark.parametrize("bad, match", [({"samples": -1}, "samples must be >= 0"),
                                        ({"samples": 1.5}, "samples must be an integer"),
                                        ({"always_near": 0.0}, "always_near must be a fraction in"),
                                        ({"always_near": 1.5}, "always_near must be a fraction in")])
@pytest.mark.slow
def test_bad_rule_parameters_are_refused(bad, match):
    with pytest.raises(CollisionError, match=match):
        CollisionModel(reljac.Robot.bundled("hand"), **bad)


@needs_robots
@pytest.mark.slow
def test_tiago_dual_locked_starts_with_no_pair_below_collision_avoidance_minimum():
    """Issue 18: the wrist pairs 5.9 mm apart weakened the carry's top level."""
    from reljac.ik import CollisionAvoidance

    tiago = reljac.Robot.load("tiago_dual")
    robot = tiago.locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])
    avoidance = CollisionAvoidance(robot, min_distance=0.01)
    q = robot.reference_configuration()
    assert avoidance.model.pairs_below(q, 0.01) == []
    reasons = {d[:2]: d[2] for d in avoidance.model.dropped}
    for side in ("left", "right"):
        assert reasons[f"arm_{side}_5_link", f"arm_{side}_tool_link"].startswith(
            "touching at the reference configuration (d = 5.85 mm")
    everything = CollisionModel(robot, pairs=[d[:2] for d in avoidance.model.dropped if d[2].startswith("touch")])
    assert {p[:2] for p in everything.pairs_below(q, 0.01)} == set(everything.pairs)

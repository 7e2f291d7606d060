"""The compiled collision rows' broad phase (joint spheres, geometry spheres, oriented boxes) only
skips pairs that are farther apart than the influence distance: at random configurations of real
robots with meshes and boxes, the compiled step keeps exactly the pairs, distances and rows of the
Python kernel, which measures every pair the sphere test lets through."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import reljac
from reljac.ik import CollisionAvoidance, Controller, PostureTask, compiled_available

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")


@pytest.mark.parametrize(("name", "locked"), [("tiago_dual", ["caster_*", "suspension_*", "wheel_*", "hand_*"]),
                                              ("baxter", [])])
@pytest.mark.slow
def test_compiled_rows_keep_every_pair_within_reach(name, locked, rng):
    robot = reljac.Robot.load(name)
    robot = robot.locked(locked) if locked else robot
    lasts = {}
    for backend in ("compiled", "python"):
        avoid = CollisionAvoidance(robot, min_distance=0.005, influence_distance=0.08)
        lasts[backend] = (Controller(robot, [[PostureTask(robot)]], dt=0.01, backend=backend,
                                     constraints=[avoid]), avoid)
    rows = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pairs starting below their minimum distance
        for _ in range(8):
            q = robot.random_configuration(rng)
            for controller, _ in lasts.values():
                controller.reset()
                controller.velocity(q)
            a, b = lasts["compiled"][1].last, lasts["python"][1].last
            assert a.pairs == b.pairs and a.geometries == b.geometries
            np.testing.assert_allclose(a.distance, b.distance, atol=1e-8)
            np.testing.assert_allclose(a.jacobian, b.jacobian, atol=1e-7)
            rows += len(a)
    assert rows > 20  # pairs within reach were there to keep

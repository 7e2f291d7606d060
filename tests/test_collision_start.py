"""Collision avoidance that starts with pairs below its minimum says so, naming them."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import reljac
from reljac.collision import CollisionModel
from reljac.exceptions import ReljacWarning
from reljac.ik import CollisionAvoidance, Controller, PostureTask


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_a_start_below_the_minimum_is_named_once_per_motion(backend):
    robot = reljac.Robot.bundled("dual_arm")
    model = CollisionModel(robot)
    q = robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))
    pairs = model.pairs_below(q, 0.2)  # pairs nearer than 20 cm at q
    assert pairs
    a, b, d = pairs[0]
    avoid = CollisionAvoidance(robot, model=model, min_distance=d + 0.01, influence_distance=d + 0.05)
    controller = Controller(robot, [[PostureTask(robot)]], dt=0.01, constraints=[avoid], backend=backend)
    with pytest.warns(ReljacWarning, match=re.escape(f"{a}/{b} ({d * 1e3:.1f} mm)")):
        q = controller.step(q)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        controller.step(q)  # once per motion
    controller.reset()
    with pytest.warns(ReljacWarning, match="nearer than its minimum"):
        controller.step(q)


def test_no_warning_when_every_pair_starts_apart():
    robot = reljac.Robot.bundled("dual_arm")
    q = robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))
    avoid = CollisionAvoidance(robot, min_distance=0.001, influence_distance=0.01)
    assert not avoid.model.pairs_below(q, 0.001)
    controller = Controller(robot, [[PostureTask(robot)]], dt=0.01, constraints=[avoid])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(controller.step(q)).all()

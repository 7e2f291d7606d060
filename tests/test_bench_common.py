"""The benches' shared start: the middle of the limits, a configuration on any robot."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import example_robot

from reljac import Robot
from reljac.apps.bench_common import middle


@pytest.mark.parametrize("name", ["dual_arm", "tiago_dual", "talos"])
def test_the_middle_of_the_limits_is_a_configuration_of_any_robot(name):
    """One-DoF joints with finite limits at their middle; continuous joints (TIAGo's wheels: a
    (cos, sin) pair bounded by +-1) and floating bases (Talos) as in the neutral configuration:
    the plain middle of their bounds is (0, 0) or not finite, no configuration (it raised)."""
    robot = Robot.bundled(name) if name == "dual_arm" else example_robot(name)
    if robot is None:
        pytest.skip(f"needs example-robot-data's {name}")
    q = middle(robot)
    robot.validate_q(q)
    model, neutral = robot.model, robot.neutral()
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    bounded = [j.idx_q for j in model.joints[1:] if j.nq == 1 and np.isfinite(lo[j.idx_q]) and np.isfinite(hi[j.idx_q])]
    assert bounded
    np.testing.assert_array_equal(q[bounded], 0.5 * (lo[bounded] + hi[bounded]))
    others = np.setdiff1d(np.arange(model.nq), bounded)
    np.testing.assert_array_equal(q[others], neutral[others])
    if name != "dual_arm":
        assert others.size > 0

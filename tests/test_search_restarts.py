"""Where a search's restarts start on a robot with continuous joints (reljac/ik/search/restarts.py and
its twin src/core/search_restarts.hpp): a joint without limits is drawn as a uniform angle in
[-pi, pi), its (cos, sin) a unit vector, in the stream's order; both backends restart alike, so
they return the same configuration from the same seed (issue 43: a mutation drawing the angle in
[0, 2 pi) in Python, or leaving (cos, sin) not a unit vector in C++, went unseen)."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.ik import RelativeFrameTask, compiled_available, solve
from reljac.ik.limits.joints import JointPositionLimit
from reljac.ik.search.restarts import FRESH_EVERY, SplitMix64, random_configuration, restart_configuration, sampling
from reljac.relative import Kinematics

BASE, TIP = "j2s6s200_link_base", "j2s6s200_end_effector"


@pytest.fixture(scope="module")
def kinova():
    """example-robot-data's Kinova (j2s6s200): joints 1, 4 and 6 continuous, (cos, sin) in q."""
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data (the test extra)")
    robot = reljac.Robot.load("kinova")
    assert sum(j.nq == 2 for j in robot.model.joints[1:]) == 3
    return robot


def test_a_random_configuration_draws_each_continuous_joint_as_an_angle_in_minus_pi_pi(kinova):
    """The draws against the stream read here: a bounded coordinate lower + u (upper - lower), a
    continuous joint's angle -pi + 2 pi u, as (cos, sin), in q's order."""
    kind, lower, upper = sampling(kinova, JointPositionLimit(kinova))
    seed = kinova.neutral()
    angles = []
    for s in range(20):
        q = random_configuration(SplitMix64(s), seed, kind, lower, upper)
        stream = SplitMix64(s)
        i = 0
        while i < kinova.nq:
            if kind[i] == 0:
                assert q[i] == lower[i] + stream.uniform() * (upper[i] - lower[i])
            elif kind[i] == 2:
                angle = -math.pi + 2.0 * math.pi * stream.uniform()
                assert (q[i], q[i + 1]) == (math.cos(angle), math.sin(angle))
                assert math.hypot(q[i], q[i + 1]) == pytest.approx(1.0, abs=1e-15)
                angles.append(math.atan2(q[i + 1], q[i]))
                i += 1
            else:
                assert q[i] == seed[i]
            i += 1
    assert min(angles) < -1.0 and max(angles) > 1.0  # both halves of the circle drawn


def test_a_restart_redraws_the_bounded_coordinates_at_a_limit_and_every_third_draws_all(kinova):
    kind, lower, upper = sampling(kinova, JointPositionLimit(kinova))
    ended = 0.5 * (lower + upper)
    ended[kind != 0] = kinova.neutral()[kind != 0]
    at = int(np.flatnonzero(kind == 0)[0])
    ended[at] = upper[at]  # one bounded joint at its limit
    partial = restart_configuration(SplitMix64(3), kinova.neutral(), ended, 1, kind, lower, upper)
    assert partial[at] != ended[at] and lower[at] <= partial[at] <= upper[at]
    np.testing.assert_array_equal(np.delete(partial, at), np.delete(ended, at))  # the others kept
    fresh = restart_configuration(SplitMix64(3), kinova.neutral(), ended, FRESH_EVERY, kind, lower, upper)
    np.testing.assert_array_equal(fresh, random_configuration(SplitMix64(3), kinova.neutral(), kind, lower, upper))


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_both_backends_restart_alike_on_continuous_joints(kinova):
    """A target out of reach (its tip 3 m away) and short local searches: every restart is used,
    fresh ones included; the compiled search returns the Python one's configuration, whose
    (cos, sin) pairs are unit vectors."""
    T = Kinematics(kinova, kinova.random_configuration(np.random.default_rng(1))).relative_placement(BASE, TIP)
    task = RelativeFrameTask(BASE, TIP, name="tip")
    task.set_target(pin.SE3(T.rotation, T.translation + np.array([3.0, 0.0, 0.0])))
    found = [solve(kinova, None, [[task]], tol=1e-5, restarts=2 * FRESH_EVERY + 1, max_iters=4, seed=s, backend=b)
             for s in (0, 1) for b in ("python", "compiled")]
    for python, compiled in (found[0:2], found[2:4]):
        assert python.restarts == compiled.restarts == 2 * FRESH_EVERY + 1
        assert (python.iterations, python.reason) == (compiled.iterations, compiled.reason)
        np.testing.assert_allclose(compiled.q, python.q, atol=1e-12)
        for j in kinova.model.joints[1:]:
            if j.nq == 2:
                assert math.hypot(*compiled.q[j.idx_q:j.idx_q + 2]) == pytest.approx(1.0, abs=1e-12)

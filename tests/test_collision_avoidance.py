"""Collision avoidance in the strict-priority controller: arms and fingers driven into each other.

Every step checks all the active pairs (not only the constrained ones) with the collision model's
own distances, both solvers run the scenarios, and the compiled solver replays the Python one's
systems with collision rows.
"""

from __future__ import annotations

import itertools

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac import ConfigurationError
from reljac.collision import CollisionError, CollisionModel
from reljac.ik import (
    CollisionAvoidance,
    Controller,
    FrameTask,
    PostureTask,
    RelativePositionTask,
    compiled_available,
)
from reljac.ik.solvers import hierarchy as H
from reljac.ik.solvers.backend import _compiled, _python
from reljac.relative import Kinematics

BACKENDS = ["python"] + (["compiled"] if compiled_available() else [])


def _middle(robot):
    return robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))


def _crossing_levels(robot, q_start, gain):
    """The left tool sent to where the right tool is and the right tool to where the left is:
    the arms must pass each other."""
    kin = Kinematics(robot, q_start)
    left, right = kin.placement("left_tool"), kin.placement("right_tool")
    lead = FrameTask("left_tool", gain=gain)
    lead.set_target(pin.SE3(left.rotation, right.translation))
    follow = FrameTask("right_tool", gain=gain)
    follow.set_target(pin.SE3(right.rotation, left.translation))
    posture = PostureTask(robot, gain=1.0, weight=0.1)
    posture.set_target(_middle(robot))
    return [[lead], [follow], [posture]]


def _run(robot, levels, q, steps, backend, model, **options):
    """Steps the controller; returns the smallest distance of any active pair seen after a step,
    the final configuration and the controller. Checks limits and finiteness on the way."""
    ca = CollisionAvoidance(robot, model=model, **options)
    ctrl = Controller(robot, levels, dt=0.01, constraints=[ca], backend=backend)
    lowest = np.inf
    for _ in range(steps):
        q_next = ctrl.step(q)
        assert np.isfinite(q_next).all()
        v = pin.difference(robot.model, q, q_next) / 0.01
        assert np.all(np.abs(v) <= robot.velocity_limits * (1 + 1e-9) + 1e-12)
        assert np.all(q_next >= robot.lower_limits - 1e-12) and np.all(q_next <= robot.upper_limits + 1e-12)
        lowest = min(lowest, float(model.distances(q_next, jacobians=False).distance.min()))
        q = q_next
    return lowest, q, ctrl


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.slow
def test_arms_sent_through_each_other_keep_the_minimum_distance(dual_arm, backend):
    """1,000 steps (500 on the Python solver, the slower: the same first episodes), one-step and
    moderate gains, from the middle and from random starts."""
    model = CollisionModel(dual_arm)
    rng = np.random.default_rng(3)
    q0, steps, k = _middle(dual_arm), 0, 0
    while steps < (500 if backend == "python" else 1000):
        if model.distances(q0, jacobians=False).distance.min() >= 0.012:  # touching starts: see push-out
            levels = _crossing_levels(dual_arm, q0, (100.0, 20.0)[k % 2])
            lowest, _q, _ctrl = _run(dual_arm, levels, q0, 250, backend, model)
            steps, k = steps + 250, k + 1
            assert lowest >= 0.01 - 1e-4, lowest
        q0 = dual_arm.random_configuration(rng)


@pytest.mark.slow
def test_without_avoidance_the_crossing_targets_drive_the_arms_through_each_other(dual_arm):
    """What makes the test above a test: the same targets, no collision limit (one backend: the
    backends' steps are the same, tests/test_compiled_step.py)."""
    model = CollisionModel(dual_arm)
    free = Controller(dual_arm, _crossing_levels(dual_arm, _middle(dual_arm), 100.0), dt=0.01, backend=BACKENDS[-1])
    q, lowest = _middle(dual_arm), np.inf
    for _ in range(250):
        q = free.step(q)
        lowest = min(lowest, float(model.distances(q, jacobians=False).distance.min()))
    assert lowest < 0.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.slow
def test_top_task_compatible_with_the_constraints_is_met(dual_arm, backend):
    """The lead tool's target (the other tool's place) is reachable once the other arm gives way:
    the top level converges while the pair distances hold."""
    model = CollisionModel(dual_arm)
    q0 = _middle(dual_arm)
    levels = _crossing_levels(dual_arm, q0, 100.0)
    lowest, q, _ctrl = _run(dual_arm, levels, q0, 300, backend, model)
    errors = levels[0][0].error_norms(Kinematics(dual_arm, q))
    assert errors["position"] < 1e-4 and errors["orientation"] < 1e-4
    assert lowest >= 0.01 - 1e-4


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.slow
def test_fingers_folded_onto_each_other_stay_apart(backend):
    """Thumb tip sent onto the index tip: the pinch conflicts with the fingers' capsules, which win."""
    hand = reljac.Robot.bundled("hand")
    model = CollisionModel(hand)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q0 = hand.random_configuration(rng)
        if model.distances(q0, jacobians=False).distance.min() < 0.0012:
            continue
        pinch = RelativePositionTask("index_tip", "thumb_tip", gain=100.0)
        pinch.set_target(np.zeros(3))
        posture = PostureTask(hand, gain=1.0, weight=0.01)
        lowest, _, _ = _run(hand, [[pinch], [posture]], q0, 200, backend, model,
                            min_distance=0.001, influence_distance=0.005, margin=0.0005)
        assert lowest >= 0.001 - 1e-4, lowest


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.slow
def test_a_pair_closer_than_the_minimum_is_pushed_out(dual_arm, backend):
    model = CollisionModel(dual_arm)
    q0 = _middle(dual_arm)
    levels = _crossing_levels(dual_arm, q0, 100.0)
    # drive the arms into each other without avoidance first
    free = Controller(dual_arm, levels, dt=0.01, backend=backend)
    q = q0
    for _ in range(300):
        q = free.step(q)
        if model.distances(q, jacobians=False).distance.min() < 0.004:
            break
    start = model.distances(q, jacobians=False).distance.min()
    assert start < 0.004
    posture = PostureTask(dual_arm, gain=1.0)
    posture.set_target(q)  # a posture that wants to stay put
    ctrl = Controller(dual_arm, [[posture]], dt=0.01, constraints=[CollisionAvoidance(dual_arm, model=model)],
                      backend=backend)
    distances = []
    for _ in range(60):
        q = ctrl.step(q)
        distances.append(model.distances(q, jacobians=False).distance.min())
    assert distances[-1] >= 0.01 - 1e-4
    assert all(b >= a - 1e-6 for a, b in itertools.pairwise(distances[:21]))  # out, not back and forth


@pytest.mark.slow
def test_compiled_solver_equals_the_python_solver_with_collision_rows(dual_arm):
    """Systems recorded along crossing runs (rows C v <= d, some violated at the start) replayed
    through both solvers: equal to 1e-9 where every level is well conditioned (collision rows
    make rank-deficient levels common: elsewhere rounding may pick another saturation)."""
    if not compiled_available():
        pytest.skip("compiled core not built")
    model = CollisionModel(dual_arm)
    records = []

    def recording(levels, lo, hi, C, d, policy):
        records.append(([H.Level(None if L.A is None else L.A.copy(), L.b.copy(), L.identity_scale,
                                 None if L.mask is None else L.mask.copy(), L.extra_damping) for L in levels],
                        lo.copy(), hi.copy(), None if C is None else C.copy(), None if d is None else d.copy(), policy))
        return _python(levels, lo, hi, C, d, policy)

    q = _middle(dual_arm)
    ctrl = Controller(dual_arm, _crossing_levels(dual_arm, q, 100.0), dt=0.01, backend="python",
                      constraints=[CollisionAvoidance(dual_arm, model=model)])
    ctrl._solve = recording
    for _ in range(200):
        q = ctrl.step(q)
    with_rows = [r for r in records if r[3] is not None]
    assert len(with_rows) > 50
    agree = 0
    for levels, lo, hi, C, d, policy in with_rows:
        v_py, r_py = _python(levels, lo, hi, C, d, policy)
        v_c, _ = _compiled(levels, lo, hi, C, d, policy)
        violated = C @ np.clip(0, lo, hi) > d + 1e-9
        for v in (v_py, v_c):  # rows that held at the start still hold
            assert np.all((C @ v)[~violated] <= d[~violated] + 1e-9 * (1 + np.abs(d[~violated])))
        if all(r.smallest_singular_value >= policy.threshold for r in r_py):
            np.testing.assert_allclose(v_c, v_py, atol=1e-9)
        agree += np.abs(v_c - v_py).max() <= 1e-9
    assert agree >= 0.8 * len(with_rows)


def test_bad_collision_avoidance_arguments(dual_arm, tmp_path):
    with pytest.raises(ConfigurationError, match="must be < influence_distance"):
        CollisionAvoidance(dual_arm, min_distance=0.05, influence_distance=0.05)
    with pytest.raises(ConfigurationError, match="min_distance"):
        CollisionAvoidance(dual_arm, min_distance=-0.01)
    with pytest.raises(ConfigurationError, match="gain"):
        CollisionAvoidance(dual_arm, gain=1.5)
    with pytest.raises(CollisionError, match="left_tol"):
        CollisionAvoidance(dual_arm, pairs=[("left_tol", "right_link8")])
    with pytest.raises(ConfigurationError, match="not both"):
        CollisionAvoidance(dual_arm, pairs=[("left_link8", "right_link8")], model=CollisionModel(dual_arm))
    bare = tmp_path / "bare.urdf"
    bare.write_text('<robot name="bare"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
                    '<parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
                    '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    with pytest.raises(CollisionError):
        CollisionAvoidance(reljac.Robot.from_urdf(bare))

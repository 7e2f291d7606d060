"""Levels with no rows at some configuration (issue 42): a collision-avoidance level with no pair
near, a task whose rows are all weighted 0. Such a level asks nothing: both solvers give the
velocity and the reports of the same hierarchy without it (its own report: met, residual 0, scale
1), bounded or not, alone, at the top, between others and last; it has no bounds, so it does not
choose the solver on either backend. The compiled solver crashed the process on them (SIGSEGV in
solve_hierarchy: an empty level's buffers sized as a level's, an empty matrix's null data read
as an identity level's)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import BACKENDS

import reljac
from reljac import Kinematics
from reljac.collision import CollisionModel
from reljac.ik import (
    CollisionAvoidance,
    ConeTask,
    Controller,
    FrameTask,
    HalfSpaceTask,
    PostureTask,
    Solver,
    compiled_available,
    solve,
)
from reljac.ik.solvers.backend import solver
from reljac.ik.solvers.hierarchy import DampingPolicy, Level

NV = 5


def _levels(rng):
    """A bounded level, an equality level that the box stops, a posture, and two empty levels (one
    with bounds, one without)."""
    bounded = Level(rng.normal(size=(2, NV)), np.zeros(2), lower=np.array([-np.inf, 0.4]), upper=np.array([0.2, 0.9]))
    equality = Level(rng.normal(size=(2, NV)), 3.0 * rng.normal(size=2))
    posture = Level(None, rng.normal(size=NV), identity_scale=1.0)
    empty = Level(np.zeros((0, NV)), np.zeros(0))
    empty_bounded = Level(np.zeros((0, NV)), np.zeros(0), lower=np.zeros(0), upper=np.zeros(0))
    return bounded, equality, posture, empty, empty_bounded


def _cases(rng):
    bounded, equality, posture, empty, empty_bounded = _levels(rng)
    return {
        "alone": [empty],
        "alone bounded": [empty_bounded],
        "top": [empty, equality, posture],
        "top bounded": [empty_bounded, bounded, posture],
        "between": [equality, empty, posture],
        "between bounded": [bounded, empty_bounded, posture],
        "bounded between equality levels": [equality, empty_bounded, posture],
        "last": [equality, empty_bounded],
        "both": [empty, bounded, empty_bounded, equality, posture],
    }


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("damped", [False, True], ids=["undamped", "damped"])
def test_an_empty_level_is_the_hierarchy_without_it(backend, damped):
    rng = np.random.default_rng(42)
    policy = DampingPolicy() if damped else DampingPolicy(threshold=0.0, max_damping=0.0)
    solve_with = solver(backend)
    lo, hi = -rng.uniform(0.2, 0.6, NV), rng.uniform(0.2, 0.6, NV)  # tight: the box stops the levels
    for name, levels in _cases(rng).items():
        v, reports = solve_with(levels, lo, hi, None, None, policy)
        kept = [k for k, level in enumerate(levels) if level.rows]
        v_without, without = solve_with([levels[k] for k in kept], lo, hi, None, None, policy)
        np.testing.assert_array_equal(v, v_without, err_msg=name)
        assert len(reports) == len(levels)
        for k, report in enumerate(reports):
            if k in kept:
                other = without[kept.index(k)]
                assert (report.residual, report.met, report.scale) == (other.residual, other.met, other.scale), name
            else:
                assert (report.residual, report.met, report.scale, report.limit_kind) == (0.0, True, 1.0, -1), name
        assert (v >= lo - 1e-12).all() and (v <= hi + 1e-12).all(), name


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_both_backends_agree_on_hierarchies_with_empty_levels():
    rng = np.random.default_rng(7)
    lo, hi = -rng.uniform(0.2, 0.6, NV), rng.uniform(0.2, 0.6, NV)
    for name, levels in _cases(rng).items():
        v_py, r_py = solver("python")(levels, lo, hi, None, None, DampingPolicy())
        v_c, r_c = solver("compiled")(levels, lo, hi, None, None, DampingPolicy())
        np.testing.assert_allclose(v_c, v_py, rtol=0, atol=1e-12, err_msg=name)
        for a, b in zip(r_py, r_c, strict=True):
            assert b.met == a.met and b.residual == pytest.approx(a.residual, rel=1e-9, abs=1e-12), name


@pytest.fixture(scope="module")
def dual_arm():
    robot = reljac.Robot.bundled("dual_arm")
    return robot, robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_collision_level_with_no_pair_near_steps_as_without_it(dual_arm, backend):
    """Collision avoidance as level 0 with an influence distance no pair is within: its level has
    no rows; a plane below it (a bounded level) and a reach the box stops go on as they would
    without it, on both backends."""
    robot, q0 = dual_arm
    kin = Kinematics(robot, q0)
    trajectories = []
    for with_avoidance in (True, False):
        lead = FrameTask("left_tool", gain=50.0)
        lead.set_target(kin.placement("right_tool"))
        below = HalfSpaceTask("universe", "left_tool", normal=(0, 0, 1),
                              offset=float(kin.placement("left_tool").translation[2]) + 0.01, gain=5.0)
        posture = PostureTask(robot, gain=1.0)
        posture.set_target(q0)
        levels = [[below], [lead], [posture]]
        if with_avoidance:
            avoidance = CollisionAvoidance(robot, model=CollisionModel(robot), min_distance=1e-4,
                                           influence_distance=2e-4, margin=0.0)
            levels.insert(0, avoidance)
        controller = Controller(robot, levels, dt=0.01, backend=backend)
        q, path = q0.copy(), []
        for _ in range(20):
            q = controller.step(q)
            path.append(q.copy())
        if with_avoidance:
            assert controller.last_reports[0].met and controller.last_reports[0].residual == 0.0
        trajectories.append(np.array(path))
    np.testing.assert_allclose(trajectories[0], trajectories[1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_solve_with_a_lone_cone_of_weight_zero(dual_arm, backend):
    """A cone of weight 0 alone in its level (no rows) above a reach: solve and a reused Solver
    find the reach as without the cone. (The cone is met wherever the search goes: whether a task
    of weight 0 should count for convergence is not this test's question.)"""
    robot, q0 = dual_arm
    target = Kinematics(robot, robot.random_configuration(3)).placement("left_tool")
    results = []
    for with_cone in (True, False):
        reach = FrameTask("left_tool")
        reach.set_target(target)
        levels = [[reach]]
        if with_cone:
            cone = ConeTask("torso", "left_tool", np.radians(179), axis_b=(0, 0, 1), axis_a=(1, 0, 0), weight=0.0)
            levels.insert(0, [cone])
        result = solve(robot, q0, levels, backend=backend, seed=1)
        again = Solver(robot, levels, backend=backend).solve(q0, seed=1)
        assert result.converged and again.converged
        np.testing.assert_array_equal(again.q, result.q)
        results.append(result.q)
    np.testing.assert_allclose(results[0], results[1], rtol=0, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_search_through_a_bounded_hierarchy_with_an_empty_level(dual_arm, backend):
    """A cone of weight 0 (no rows, but a bounded task: its level's empty matrix has a null data
    pointer in the compiled step) above a posture: the compiled search read that level as an
    identity level and crashed the process. solve and a Solver give the same answer."""
    robot, q0 = dual_arm
    cone = ConeTask("torso", "left_tool", np.radians(30), axis_b=(0, 0, 1), axis_a=(0, 0, 1), weight=0.0)
    posture = PostureTask(robot, gain=1.0)
    posture.set_target(q0)
    start = q0
    result = solve(robot, start, [[cone], [posture]], backend=backend, seed=1)
    again = Solver(robot, [[cone], [posture]], backend=backend).solve(start, seed=1)
    assert np.isfinite(result.q).all()
    np.testing.assert_array_equal(again.q, result.q)

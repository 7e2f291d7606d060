"""DistanceTask: a compiled task kind added in its own files (src/core/task_distance.cpp: its
description, class and binding; reljac/ik/tasks/distance.py: its Python specification; this test). Its
Jacobian against finite differences, the compiled step against the Python one step by step, a
target reached, and a search on it."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.apps.bench_common import middle
from reljac.exceptions import TaskError
from reljac.ik import Controller, DistanceTask, PostureTask, compiled_available, solve

needs_core = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")


def _distance(robot, q, a="left_tool", b="right_tool") -> float:
    return float(np.linalg.norm(reljac.Kinematics(robot, q).relative_placement(a, b).translation))


def test_its_jacobian_matches_finite_differences(dual_arm, rng) -> None:
    task = DistanceTask("left_tool", "right_tool")
    task.set_target(0.2)
    for _ in range(5):
        q = pin.randomConfiguration(dual_arm.model)
        e, J, ff = task.compute(reljac.Kinematics(dual_arm, q))
        assert e.shape == (1,) and J.shape == (1, dual_arm.nv) and ff.shape == (1,)
        assert e[0] == pytest.approx(_distance(dual_arm, q) - 0.2, abs=1e-12)
        eps = 1e-7
        J_fd = np.array([(_distance(dual_arm, pin.integrate(dual_arm.model, q, eps * dv))
                          - _distance(dual_arm, pin.integrate(dual_arm.model, q, -eps * dv))) / (2 * eps)
                         for dv in np.eye(dual_arm.nv)])
        np.testing.assert_allclose(J[0], J_fd, atol=1e-6)


def test_a_negative_target_is_refused(dual_arm) -> None:
    task = DistanceTask("left_tool", "right_tool")
    with pytest.raises(TaskError, match="target distance"):
        task.set_target(-0.1)


def _controller(robot, backend: str, target: float) -> tuple[Controller, DistanceTask]:
    task = DistanceTask("left_tool", "right_tool", gain=20.0, max_speed=0.5)
    task.set_target(target)
    return Controller(robot, [[task], [PostureTask(robot, gain=1.0, weight=0.1)]], dt=0.01, backend=backend), task


@needs_core
def test_the_compiled_step_holds_it_and_steps_as_python_does(dual_arm) -> None:
    q0 = middle(dual_arm)
    target = _distance(dual_arm, q0) + 0.1
    compiled, task = _controller(dual_arm, "compiled", target)
    python, python_task = _controller(dual_arm, "python", target)
    assert compiled.compiled_step and not compiled._step.has_python_parts  # C++ computes its rows
    q_c = q_p = q0
    for i in range(130):
        if i == 30:  # a new target reaches the core
            task.set_target(target - 0.15)
            python_task.set_target(target - 0.15)
        q_c, q_p = compiled.step(q_c), python.step(q_p)
        np.testing.assert_allclose(q_c, q_p, atol=1e-9)
    assert _distance(dual_arm, q_c) == pytest.approx(target - 0.15, abs=1e-3)


@needs_core
def test_a_search_reaches_a_distance(dual_arm) -> None:
    task = DistanceTask("left_tool", "right_tool")
    task.set_target(0.25)
    result = solve(dual_arm, dual_arm.neutral(), [[task], [PostureTask(dual_arm, weight=0.01)]], seed=1)
    assert result.converged
    assert _distance(dual_arm, result.q) == pytest.approx(0.25, abs=1e-4)


@pytest.mark.parametrize("backend", ["python", pytest.param("compiled", marks=needs_core)])
def test_solve_many_sets_each_distance_and_its_own_target_is_taken_back(dual_arm, backend) -> None:
    task = DistanceTask("left_tool", "right_tool")
    task.set_target(0.25)
    task.set_target(task.target)  # an array of one, as the task gives it
    assert task.target.tolist() == [0.25]
    with pytest.raises(TaskError, match="target distance"):
        task.set_target(np.array([0.2, 0.3]))
    levels = [[task], [PostureTask(dual_arm, weight=0.01)]]
    results = reljac.ik.solve_many(dual_arm, dual_arm.neutral(), levels, [0.2, 0.3], seed=1, backend=backend,
                                   workers=1)
    for result, distance in zip(results, [0.2, 0.3], strict=True):
        assert result.converged and _distance(dual_arm, result.q) == pytest.approx(distance, abs=1e-4)

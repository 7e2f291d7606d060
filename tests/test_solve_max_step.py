"""solve(..., max_step=...): a cap on each Newton step's largest joint displacement [rad or m]
(reljac/ik/search/local_search.py, src/core/search.cpp); none unless asked.

Values are pinned by the steps themselves (recorded on the Python specification: no coordinate
moves more than max_step in one step), by a bound that needs no access to the steps (without
restarts the path from q0 is made of steps: iterations >= |q - q0|_inf / max_step), by the
closed-form answer of the planar two-link arm, and by the two backends against each other."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import BACKENDS

from reljac.exceptions import TaskError
from reljac.ik import FrameTask, RelativePositionTask, compiled_available, solve
from reljac.ik.search.python_search import PythonSearch
from reljac.relative import Kinematics

START = np.array([0.3, 0.5])


def tip_task(x: float, y: float) -> RelativePositionTask:
    task = RelativePositionTask("base_link", "tip")
    task.set_target(np.array([x, y, 0.0]))
    return task


def test_no_newton_step_moves_a_joint_further_than_max_step(planar, monkeypatch):
    """Every step the Python specification takes, kept or not, moves each joint (revolute: q_new -
    q is the displacement) by at most max_step; without the cap the first step moves more."""
    steps: list[float] = []
    original = PythonSearch.newton_step

    def recorded(self, kin, mu, constraints):
        q_new = original(self, kin, mu, constraints)
        if q_new is not None:
            steps.append(float(np.max(np.abs(q_new - kin.q))))
        return q_new

    monkeypatch.setattr(PythonSearch, "newton_step", recorded)
    result = solve(planar, START, [[tip_task(-0.3, 1.5)]], tol=1e-9, restarts=0, max_step=0.05, backend="python")
    assert result.converged and len(steps) == result.iterations
    assert max(steps) <= 0.05 * (1 + 1e-12)
    steps.clear()
    solve(planar, START, [[tip_task(-0.3, 1.5)]], tol=1e-9, restarts=0, backend="python")
    assert steps[0] > 0.05  # (so the cap above did something)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("max_step", [0.02, 0.1])
def test_a_capped_search_reaches_the_closed_form_answer_in_at_least_distance_over_cap_steps(planar, backend,
                                                                                           max_step):
    """(-0.3, 1.5) from (0.3, 0.5): the answer is one of the arm's two closed-form solutions, and
    a path of steps each moving a joint by at most max_step needs |q - q0|_inf / max_step of them."""
    x, y = -0.3, 1.5
    result = solve(planar, START, [[tip_task(x, y)]], tol=1e-9, restarts=0, max_step=max_step, backend=backend)
    assert result.converged and result.restarts == 0
    c2 = (x * x + y * y - 1.0 - 0.64) / (2 * 0.8)  # L1 = 1, L2 = 0.8
    answers = []
    for s2 in (math.sqrt(1 - c2 * c2), -math.sqrt(1 - c2 * c2)):
        q2 = math.atan2(s2, c2)
        answers.append(np.array([math.atan2(y, x) - math.atan2(0.8 * s2, 1.0 + 0.8 * c2), q2]))
    assert min(np.linalg.norm(result.q - a) for a in answers) < 1e-6
    assert result.iterations >= math.floor(np.max(np.abs(result.q - START)) / max_step)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cap_no_step_reaches_changes_nothing(planar, backend):
    """max_step above every step's displacement: the same search as without a cap."""
    levels = [[tip_task(1.2, 0.7)]]
    free = solve(planar, START, levels, tol=1e-9, backend=backend)
    capped = solve(planar, START, levels, tol=1e-9, max_step=1e3, backend=backend)
    assert (free.iterations, free.restarts) == (capped.iterations, capped.restarts)
    np.testing.assert_array_equal(free.q, capped.q)


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_both_backends_take_the_same_capped_steps(dual_arm, rng):
    """Seeded, no timeout: the same iterations, restarts and q with the cap on both backends."""
    right = FrameTask("right_tool", name="right")
    for trial in range(2):
        right.set_target(Kinematics(dual_arm, dual_arm.random_configuration(rng)).placement("right_tool"))
        q0 = dual_arm.random_configuration(rng)
        a, b = (solve(dual_arm, q0, [[right]], tol=1e-8, seed=trial, max_step=0.1, backend=x)
                for x in ("python", "compiled"))
        assert a.converged and b.converged and (a.iterations, a.restarts) == (b.iterations, b.restarts)
        np.testing.assert_allclose(a.q, b.q, atol=1e-9)
        assert np.all(b.q >= dual_arm.lower_limits) and np.all(b.q <= dual_arm.upper_limits)


@pytest.mark.parametrize("bad", [0, 0.0, -0.1, float("nan"), float("inf"), "0.1", True])
def test_a_bad_max_step_is_refused_with_what_is_valid(planar, bad):
    with pytest.raises(TaskError, match=r"max_step must be a positive number \[rad or m\]"):
        solve(planar, None, [[tip_task(1.0, 0.5)]], max_step=bad)

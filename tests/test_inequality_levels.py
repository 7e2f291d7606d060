"""Inequality rows at any level (reljac.ik.solvers.inequality), pinned on cases solved by hand (2-3
joints), and what stays as it was: the equality solver refuses bounded levels, the backends
dispatch, bad bounds are named."""

from __future__ import annotations

import numpy as np
import pytest

from reljac.exceptions import TaskError
from reljac.ik.solvers import active_set
from reljac.ik.solvers.backend import _compiled, _python
from reljac.ik.solvers.hierarchy import DampingPolicy, Level, solve_hierarchy
from reljac.ik.solvers.inequality import solve_lexicographic

UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)
INF = np.inf


def solve(levels, lo, hi, **kwargs):
    return solve_lexicographic(levels, np.asarray(lo, float), np.asarray(hi, float), policy=UNDAMPED, **kwargs)


def bounded(A, lower, upper):
    A = np.atleast_2d(np.asarray(A, float))
    return Level(A, np.zeros(A.shape[0]), lower=np.asarray(lower, float), upper=np.asarray(upper, float))


def test_rows_inside_with_margin_cost_nothing():
    """Level 1: -1 <= v0 + v1 <= 1 holds at v = 0 with margin 1 (reports are at the level's own
    solution, as the residual): nothing moves for it; level 2 v0 = 0.4 is then met exactly,
    and v0 + v1 = 0.4 stays inside level 1's band."""
    v, (r1, r2) = solve([bounded([1, 1], [-1], [1]), Level(np.array([[1.0, 0.0]]), np.array([0.4]))], [-2, -2], [2, 2])
    np.testing.assert_allclose(v, [0.4, 0.0], atol=1e-15)
    assert r1.met and r1.active == [] and r1.margins[0] == 1.0
    assert r2.met and r2.residual < 1e-15


def test_a_satisfied_inequality_is_never_violated_below():
    """Level 1: v0 <= 0.5 (met at v = 0). Level 2: v0 + v1 = 3, v1 = 0 (asks v0 = 3): the
    least-squares point inside v0 <= 0.5 is v0 = 0.5, v1 = (3 - 0.5) / 2 = 1.25 (minimizing
    (v0 + v1 - 3)^2 + v1^2 at v0 = 0.5); the inequality ends active, held for level 2."""
    level2 = Level(np.array([[1.0, 1.0], [0.0, 1.0]]), np.array([3.0, 0.0]))
    v, (r1, r2) = solve([bounded([1, 0], [-INF], [0.5]), level2], [-5, -5], [5, 5])
    np.testing.assert_allclose(v, [0.5, 1.25], atol=1e-14)
    assert r1.met and r2.held == [(0, 0)]
    assert r2.residual == pytest.approx(np.hypot(1.25, 1.25), abs=1e-14) and not r2.met
    assert r2.limit_kind == 3 and (r2.limit_level, r2.limit_index) == (0, 0)


def test_a_level_that_cannot_meet_its_inequalities_is_met_in_least_violation_and_kept():
    """Level 1: v0 >= 3 and v1 >= 3 with |v| <= 1: least violation v = (1, 1) (2 each, the box
    corner); level 2 (v0 = -1) cannot undo it."""
    v, (r1, r2) = solve([bounded(np.eye(2), [3, 3], [INF, INF]), Level(np.array([[1.0, 0.0]]), np.array([-1.0]))],
                        [-1, -1], [1, 1])
    np.testing.assert_allclose(v, [1.0, 1.0], atol=1e-15)
    assert r1.residual == pytest.approx(np.sqrt(8.0), abs=1e-14) and r1.active == [0, 1]
    assert sorted(r1.saturated) == [0, 1] and r1.limit_kind == 0
    assert r2.residual == pytest.approx(2.0, abs=1e-14)


def test_a_row_on_its_bound_above_is_left_for_the_inside_by_a_level_below():
    """Level 1: v0 + v1 = 3 and v0 <= 1: met at (1, 2) with the inequality on its bound (not
    beyond it). Level 2: v0 = -5 may move v0 inside the bound along v0 + v1 = 3: v = (-5, 8);
    the release counts as one change of the active set."""
    v, (r1, r2) = solve([bounded([[1, 1], [1, 0]], [3, -INF], [3, 1]), Level(np.array([[1.0, 0.0]]), np.array([-5.0]))],
                        [-100, -100], [100, 100])
    np.testing.assert_allclose(v, [-5.0, 8.0], atol=1e-13)
    assert r1.active == [1] and r1.met and r2.met and r2.changes == 1 and r2.held == []


def test_a_violated_row_keeps_its_violation_below():
    """Level 1: v0 >= 2 with v0 <= 1 (box): left at 1, violated by 1. Level 2: v0 - v1 = 0 must
    keep v0 = 1: v1 = 1. Level 3: v1 = -1 has no freedom left (residual 2)."""
    levels = [bounded([1, 0], [2], [INF]), Level(np.array([[1.0, -1.0]]), np.array([0.0])),
              Level(np.array([[0.0, 1.0]]), np.array([-1.0]))]
    v, (r1, r2, r3) = solve(levels, [-1, -1], [1, 3])
    np.testing.assert_allclose(v, [1.0, 1.0], atol=1e-15)
    assert r1.residual == pytest.approx(1.0, abs=1e-15) and r1.margins[0] == pytest.approx(-1.0, abs=1e-15)
    assert r2.met and r3.residual == pytest.approx(2.0, abs=1e-14)


def test_three_joints_two_sided_band_and_a_rank_deficient_level():
    """Level 1 (rank 1, two rows): 0.5 <= v0 + v1 + v2 <= 1 and 1 <= 2 (v0 + v1 + v2) <= 2:
    the same band, met at its nearest point to 0, sum = 0.5, minimum norm: v = (1/6, 1/6, 1/6)
    (both rows on their lower bound). Level 2: v2 = 1 with the sum kept in [0.5, 1]: the level
    meets it. The least-norm velocity of the two (the fill below the last level) is then v0 =
    v1 = 0: v = (0, 0, 1), the sum on the band's upper bound (before the fill the level's own
    step from (1/6, 1/6, 1/6) kept the sum at 0.5: (-0.25, -0.25, 1), of norm 1.06)."""
    levels = [bounded([[1, 1, 1], [2, 2, 2]], [0.5, 1.0], [1.0, 2.0]), Level(np.array([[0.0, 0.0, 1.0]]), np.array([1.0]))]
    v, (r1, r2) = solve(levels, [-3] * 3, [3] * 3)
    np.testing.assert_allclose(v, [0.0, 0.0, 1.0], atol=1e-14)
    assert r1.met and r2.met and r1.active == [0, 1]


def test_damping_shrinks_the_step_back_to_the_bound():
    """One row v0 <= -1 at damping lambda^2: the least-squares step (v0 - (-1))^2 + lambda^2 v0^2
    is v0 = -1 / (1 + lambda^2), as the equality solver's damped step."""
    policy = DampingPolicy(threshold=0.02, max_damping=0.05, error_damping=0.0)
    level = Level(np.array([[1.0, 0.0]]), np.zeros(1), lower=np.array([-INF]), upper=np.array([-1.0]), extra_damping=0.01)
    v, (report,) = solve_lexicographic([level], np.full(2, -5.0), np.full(2, 5.0), policy=policy)
    assert report.damping == pytest.approx(0.01, abs=1e-18)
    assert v[0] == pytest.approx(-1.0 / 1.01, rel=1e-14) and v[1] == 0.0


def test_rows_of_c_violated_at_the_start_are_recovered_first():
    """C: v0 + v1 <= -1 violated at v = 0: met first (minimum norm: (-0.5, -0.5)), then held
    as C; level: v0 >= 0 is met as far as C allows, v0 + v1 <= -1 with v1 >= -2: v0 = 1."""
    C, d = np.array([[1.0, 1.0]]), np.array([-1.0])
    v, (report,) = solve([bounded([1, 0], [2], [INF])], [-2, -2], [2, 2], C=C, d=d)
    np.testing.assert_allclose(v, [1.0, -2.0], atol=1e-14)
    assert report.saturated == [1] and report.saturated_rows == [0]


def test_the_cap_on_active_set_changes_is_reported(monkeypatch):
    """Two changes needed (both joints onto the box corner); with a cap of one the level stops
    after one, feasible, and says so."""
    monkeypatch.setattr("reljac.ik.solvers.inequality.change_cap", lambda nv, hard, rows: 1)
    v, (report,) = solve([bounded(np.eye(2), [3, 3], [INF, INF])], [-1, -1], [1, 1])
    assert report.capped and report.changes == 1
    assert (np.abs(v) <= 1.0 + 1e-15).all()


def test_the_equality_solver_refuses_bounded_levels_and_the_backends_dispatch():
    level = bounded([1, 0], [-INF], [0.5])
    with pytest.raises(TaskError, match="level 0 has bounds"):
        solve_hierarchy([level], -np.ones(2), np.ones(2))
    lo, hi = -np.ones(2), np.ones(2)
    expected, _ = solve_lexicographic([level], lo, hi)
    for solver in (_python, _compiled):
        v, _ = solver([level], lo, hi, None, None, DampingPolicy())
        np.testing.assert_array_equal(v, expected)


@pytest.mark.parametrize("lower, upper, match", [
    ([1.0], [0.0], "lower bound 1.0 above its upper bound 0.0"),
    ([np.nan], [1.0], "lower must be"),
    ([0.0, 1.0], [1.0], "lower must be"),
])
def test_bad_bounds_are_named(lower, upper, match):
    level = Level(np.array([[1.0, 0.0]]), np.zeros(1), lower=np.array(lower), upper=np.array(upper))
    with pytest.raises(TaskError, match=match):
        solve_lexicographic([level], -np.ones(2), np.ones(2))


def test_change_cap_grows_with_the_problem():
    assert active_set.change_cap(2, 4, 1) == active_set.CAP_BASE + 14


@pytest.mark.slow
def test_damped_random_hierarchies_keep_the_constraints_and_what_each_level_met():
    """With the damping on (singular part and extra damping), on random problems (those of the
    oracle test): v keeps the box and the rows of C the start met, no level reaches the cap,
    and every inequality row a level left inside its interval is still inside at the end."""
    qp_cascade = pytest.importorskip("qp_cascade")
    rng = np.random.default_rng(5)
    policy = DampingPolicy(threshold=0.5, max_damping=0.1)
    for n in range(200):
        problem = qp_cascade.random_problem(rng)
        levels = [Level(A, np.zeros(A.shape[0]), lower=low, upper=high, extra_damping=float(rng.uniform(0.0, 0.01)))
                  for A, low, high in problem.levels]
        v, reports = solve_lexicographic(levels, problem.lo, problem.hi, policy=policy, C=problem.C, d=problem.d)
        assert (v <= problem.hi + 1e-12).all() and (v >= problem.lo - 1e-12).all(), n
        met_at_start = problem.C @ np.clip(np.zeros_like(v), problem.lo, problem.hi) <= problem.d + 1e-12
        assert (problem.C[met_at_start] @ v <= problem.d[met_at_start] + 1e-12).all(), n
        for (A, low, high), report in zip(problem.levels, reports, strict=True):
            assert not report.capped, n
            inside = (report.margins >= 0.0) & (low < high)
            x = A[inside] @ v
            assert (x >= low[inside] - 1e-9).all() and (x <= high[inside] + 1e-9).all(), n


def test_a_hierarchy_without_bounds_never_reaches_the_inequality_solver(monkeypatch, planar):
    """The equality path stays the SNS solver: the inequality solver is not called."""
    from reljac.ik import Controller, PostureTask

    def refuse(*args, **kwargs):
        raise AssertionError("the inequality solver was called for equality levels")

    monkeypatch.setattr("reljac.ik.solvers.backend.solve_lexicographic", refuse)
    posture = PostureTask(planar)
    posture.set_target(np.array([0.1, -0.2]))
    controller = Controller(planar, [[posture]], dt=0.01, backend="python")
    v = controller.velocity(np.zeros(2))
    np.testing.assert_allclose(v, [0.1, -0.2], atol=1e-15)  # gain 1: v = q_target - q
    assert controller.last_reports[0].active == [] and controller.last_reports[0].margins is None

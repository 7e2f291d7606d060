"""The inequality hierarchy (reljac.ik.solvers.inequality) against its oracle, a cascade of QPs solved by
daqp (tests/qp_cascade.py): on random problems (2-6 levels, equality and inequality rows mixed,
feasible and infeasible, rank-deficient, a joint box, rows of C), every level's violation equals
the oracle's, level by level in lexicographic order, and the solution keeps the box and C."""

from __future__ import annotations

import numpy as np
import pytest

qp_cascade = pytest.importorskip("qp_cascade", reason="needs daqp (the test extra)")

from reljac.ik.solvers.hierarchy import DampingPolicy, Level  # noqa: E402
from reljac.ik.solvers.inequality import solve_lexicographic  # noqa: E402

UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)  # exact least violation
TOLERANCE = 1e-6  # on |violation - oracle's| / (1 + oracle's); the oracle is polished to ~1e-8


def agreement(seed: int, problems: int) -> tuple[float, int, int]:
    """(worst relative difference, problems compared, the oracle's failures) over random problems."""
    rng = np.random.default_rng(seed)
    worst, compared, failed = 0.0, 0, 0
    for n in range(problems):
        problem = qp_cascade.random_problem(rng)
        levels = [Level(A, np.zeros(A.shape[0]), lower=low, upper=high) for A, low, high in problem.levels]
        v, reports = solve_lexicographic(levels, problem.lo, problem.hi, policy=UNDAMPED, C=problem.C, d=problem.d)
        assert (v >= problem.lo - 1e-9).all() and (v <= problem.hi + 1e-9).all(), f"problem {n}: v leaves the box"
        differences = qp_cascade.differences(problem, v)
        if differences is None:  # daqp fails on a few degenerate QPs: counted, bounded below
            failed += 1
            continue
        compared += 1
        assert not any(r.capped for r in reports), f"problem {n}: a level reached the cap on active-set changes"
        worst = max(worst, *differences)
        assert max(differences) <= TOLERANCE, f"problem {n} (seed {seed}): level violations off the oracle's by {differences}"
    return worst, compared, failed


def test_agrees_with_the_qp_cascade_on_random_problems():
    _worst, compared, failed = agreement(seed=7, problems=30)
    assert compared >= 28 and failed <= 2


@pytest.mark.slow
def test_agrees_with_the_qp_cascade_on_a_thousand_random_problems():
    """Without the compiled core only: with it, tests/test_inequality_compiled.py runs these 1,030
    problems through both solvers and the cascade once (the compiled solver within 1e-6 of the
    cascade, the specification within 1e-9 of the compiled one, level by level, neither capped)."""
    from reljac.ik.solvers.backend import compiled_available

    if compiled_available():
        pytest.skip("run with both solvers by test_inequality_compiled.py::test_agrees_on_a_thousand_random_problems")
    worst, compared, failed = agreement(seed=2026, problems=1030)
    assert compared >= 1000, f"only {compared} problems compared ({failed} oracle failures)"
    print(f"{compared} problems, worst relative violation difference {worst:.2e}, {failed} oracle failures")

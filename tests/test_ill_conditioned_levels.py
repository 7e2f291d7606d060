"""Ill-conditioned levels of the bounded hierarchy (issue 43): a level with more rows than the
freedom left, its rows scaled by 1e3, singular values spread down to 1e-10 of the largest. The
rank rule on its Gram matrix (eigenvalues below 1e-12 of the largest cut: singular values below
1e-6) dropped directions that count: undamped, a level asking for rates a velocity in the box
meets ended 2.2e-5 (relative) above its least violation, on both backends. The directions G
cannot resolve are now found in the rows less their kept part (active_set_algebra.fine_directions,
down to 1e-10 of the largest singular value, the QP oracle's own cut), and the step and the row
space a level leaves below take them.

The oracle: the cascade of QPs (tests/qp_cascade.py) solved by two unrelated solvers, daqp (dual
active set) and Clarabel (interior point); a problem counts only where the two agree (within 1e-7
per level): on such levels daqp alone is off in about 7 % of the problems."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import BACKENDS, compiled_available

from reljac.ik.solvers.backend import solver
from reljac.ik.solvers.hierarchy import DampingPolicy, Level

qp_cascade = pytest.importorskip("qp_cascade", reason="needs daqp (the test extra)")
pytest.importorskip("clarabel", reason="needs Clarabel (the test extra): the second QP solver")

UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)
TOLERANCE = 1e-6  # |violation - the oracle's| / (1 + the oracle's), as tests/test_inequality_oracle.py
# (seed, index) of ill_conditioned_problem's stream where a level ended above the agreed least
# violation before (2.2e-5, 3.8e-6; 4.0e-5, 2.8e-6, 7.9e-5, 9.6e-6; 3.7e-5, 1.7e-5, 2.3e-4; then
# 1.6e-5 and 3.1e-6, the last two found by a scan of seeds 1-5). In those two a row held at level 0
# stayed held: its release gains only along a fine direction, and its multiplier (-7e-10 at |P g|
# 7e-10; -3e-11 at 7.5e-11) was within the release test's floor MULTIPLIER_TOLERANCE x max(1, |P g|),
# read as 0. Such a release is now tried once and kept only where the level's objective drops
# beyond rounding (active_set.TRIAL_GAIN). Tried and left before (2026-12-02): a floor of
# max(1e-3, |P g|) and a release below -0.1 |P g| met both, but left the backends apart where the
# multiplier's sign is rounding's (3 and 2 of 600 problems).
FOUND = [(1, 45), (1, 174), (2, 72), (2, 112), (2, 129), (2, 130), (3, 128), (3, 182), (3, 196), (1, 115), (4, 173)]


def violations(problem, v) -> list[float]:
    return [float(np.linalg.norm(qp_cascade.distances(A, low, high, v))) for A, low, high in problem.levels]


def solved(problem, backend: str) -> np.ndarray:
    levels = [Level(A, np.zeros(A.shape[0]), lower=low, upper=high) for A, low, high in problem.levels]
    v, _ = solver(backend)(levels, problem.lo, problem.hi, problem.C, problem.d, UNDAMPED)
    assert (v >= problem.lo - 1e-9).all() and (v <= problem.hi + 1e-9).all()
    return v


def first_difference(mine: list[float], oracle: list[float]) -> float:
    """The first level's relative difference beyond TOLERANCE, in order (strict priority: a level
    above met a little better or worse changes what the levels below can reach), else 0."""
    for x, y in zip(mine, oracle, strict=True):
        difference = (x - y) / (1.0 + y)
        if abs(difference) > TOLERANCE:
            return difference
    return 0.0


def problem_at(seed: int, index: int):
    rng = np.random.default_rng(seed)
    for _ in range(index + 1):
        problem = qp_cascade.ill_conditioned_problem(rng)
    return problem


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_direction_below_the_old_rank_cut_is_kept(backend):
    """One level of 9 rows on 6 joints, rows x 1e3, singular values 1 ... 1e-7 of the largest,
    asking for rates a velocity inside the box meets: its least violation is 0 (the rates are met
    exactly by that velocity); without the direction at 1e-7 it stayed at 2e-5."""
    rng = np.random.default_rng(4)
    nv, m = 6, 9
    lo, hi = -np.ones(nv), np.ones(nv)
    for _ in range(5):
        U, _ = np.linalg.qr(rng.normal(size=(m, m)))
        V, _ = np.linalg.qr(rng.normal(size=(nv, nv)))
        A = 1e3 * (U[:, :nv] * np.logspace(0, -7, nv)) @ V.T
        target = A @ rng.uniform(-0.5, 0.5, nv)
        problem = qp_cascade.Problem([(A, target, target)], lo, hi, np.zeros((0, nv)), np.zeros(0))
        v = solved(problem, backend)
        assert violations(problem, v)[0] <= 1e-9 * (1.0 + np.abs(target).max())


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_problems_a_scan_found_meet_the_agreed_least_violations(backend):
    for seed, index in FOUND:
        problem = problem_at(seed, index)
        oracle = qp_cascade.agreed_cascade(problem)
        assert oracle is not None, (seed, index)
        mine = violations(problem, solved(problem, backend))
        assert first_difference(mine, oracle) <= 0.0, f"seed {seed} #{index}: {mine} vs the agreed {oracle}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_backends_agree_where_the_sign_of_a_release_is_rounding(backend):
    """Seed 12 #51: at the level's minimum with a row held, the multiplier is -3e-12 at |P g| 1.6e-11
    in Python and +4.9e-12 at 3.6e-11 compiled (the points differ by rounding amplified by the
    ill-conditioning); releasing the row takes the violation from 2.0e-7 to 2e-14. A release tried
    only on a negative multiplier left the backends 2e-7 apart: both try it (the band about 0)."""
    problem = problem_at(12, 51)
    assert violations(problem, solved(problem, backend))[0] <= 1e-12


def test_a_tried_release_that_gains_nothing_is_undone(monkeypatch):
    """With no gain enough to keep a tried release (TRIAL_GAIN 1: the objective would have to drop
    below 0), the Python specification ends exactly where it ends without trying it, on the
    problems where a release is tried."""
    from reljac.ik.solvers import active_set

    tried = [problem_at(seed, index) for seed, index in ((1, 115), (4, 173), (12, 51))]
    monkeypatch.setattr(active_set, "TRIAL_GAIN", 1.0)
    undone = [solved(problem, "python") for problem in tried]
    monkeypatch.setattr(active_set, "_doubtful", lambda *args: -1)
    untried = [solved(problem, "python") for problem in tried]
    for a, b in zip(undone, untried, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_scan_of_ill_conditioned_hierarchies(backend):
    """300 problems of a fresh stream: on every one the two cascades agree on, no level is above
    its least violation before a level above it is below (strictly better, a lexicographic gain);
    most problems count."""
    rng = np.random.default_rng(11)
    counted = 0
    for n in range(300):
        problem = qp_cascade.ill_conditioned_problem(rng)
        oracle = qp_cascade.agreed_cascade(problem)
        if oracle is None:
            continue
        counted += 1
        mine = violations(problem, solved(problem, backend))
        assert first_difference(mine, oracle) <= 0.0, f"problem {n}: {mine} vs the agreed {oracle}"
    assert counted >= 240


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fine_direction_of_a_rank_deficient_level_stays_in_its_row_space(backend):
    """Level 0: equal rows on four joints, rows x 1e3, singular values 1e3, 1e3 and 5e-5, and a
    fourth row the sum of the first two, so its Gram matrix is rank deficient (eigenvalues 2.1e6,
    1e6, 3.6e-9, 0). The compiled core's pivoted Cholesky factor certifies rank 2 there (3.6e-9 is
    below its pivot floor); the rank rule keeps two eigenvalues and the fine directions the third
    (above their cut 1e-12), so the row space level 0 leaves out of the levels below holds all
    three. Level 1 asks every joint for 100: along the third direction that moves level 0's rows by
    5e-5 per unit. Level 0 stays met to its rounding (condition 2e7) and the backends agree; a row
    space built on the pivot rows alone, without the fine directions' test, let level 1 move level
    0 by 1e-3."""
    rng = np.random.default_rng(7)
    nv = 4
    U, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    V, _ = np.linalg.qr(rng.normal(size=(nv, nv)))
    A = (U * np.array([1e3, 1e3, 5e-5])) @ V[:, :3].T
    A = np.vstack([A, A[0] + A[1]])
    target = A @ rng.uniform(-0.5, 0.5, nv)
    hundred = 100 * np.ones(nv)
    levels = [Level(A, np.zeros(4), lower=target, upper=target),
              Level(np.eye(nv), np.zeros(nv), lower=hundred, upper=hundred)]
    lo, hi = -1e3 * np.ones(nv), 1e3 * np.ones(nv)
    v, _ = solver(backend)(levels, lo, hi, np.zeros((0, nv)), np.zeros(0), UNDAMPED)
    assert np.abs(A @ v - target).max() <= 1e-7 * (1.0 + np.abs(target).max())
    reference, _ = solver("python")(levels, lo, hi, np.zeros((0, nv)), np.zeros(0), UNDAMPED)
    np.testing.assert_allclose(v, reference, atol=1e-6)


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
@pytest.mark.parametrize(("rows", "push"), [
    ([[1, 0, 0, 0], [1, 1e-3, 0, 0], [1, 1e-3, 5e-8, 0]], 100.0),
    ([[2e-4, 0, 0], [2e-4, 0, 7e-8]], 1000.0),
])
def test_a_dropped_direction_that_is_not_rounding_leaves_the_same_row_space(rows, push):
    """Level 0's rows with a singular value below the rank cut that is not rounding (3.5e-8 beside
    8.2e-4; 5e-8 beside 2.8e-4), level 1 pushing joint 2. The pivot rows' span is then turned from
    the eigen path's (the specification's) by about their ratio: a row space built on them moved
    joint 1 by 2.5e-3 instead of 1.25e-3 at level 1 (joint 0 by 0.35 instead of 0.175: found by an
    adversarial pass). The backends agree to rounding."""
    A = np.array(rows, dtype=float)
    m, nv = A.shape
    zero, aim = np.zeros(m), np.array([push])
    pushed = np.zeros((1, nv))
    pushed[0, 2] = 1.0
    levels = [Level(A, zero, lower=zero, upper=zero), Level(pushed, np.zeros(1), lower=aim, upper=aim)]
    lo, hi = -1e3 * np.ones(nv), 1e3 * np.ones(nv)
    v = {backend: solver(backend)(levels, lo, hi, np.zeros((0, nv)), np.zeros(0), UNDAMPED)[0]
         for backend in ("python", "compiled")}
    np.testing.assert_allclose(v["compiled"], v["python"], rtol=0, atol=1e-9 * push)

"""The compiled SNS solver's pivoted-Cholesky path for a rank-deficient level.

A level whose Gram matrix G = M M^T has rank k < m is solved by the compiled solver through a
Cholesky factorization with diagonal pivoting, its rank certified by Weyl's and Cauchy's
inequalities (src/core/hierarchy_rank.hpp, pivoted_rank), and its row space from the pivot rows;
the Python solver, its specification, takes an eigen-decomposition of G. Both must give the same
velocity, damping (the policy's at sigma_min = 0), smallest singular value (0) and, through the
projector the level leaves, the same result for the levels below. Rank deficiency comes from
dependent rows, from a level above taking directions (the structural case of a level with more
rows than the freedom left), and from saturated joints; near the rank cut and with an
ill-conditioned kept part the compiled solver falls back to the eigen-decomposition.
"""

from __future__ import annotations

import numpy as np
import pytest

from reljac.ik import compiled_available
from reljac.ik.solvers.backend import _compiled, _python
from reljac.ik.solvers.hierarchy import DampingPolicy, Level

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")

POLICIES = {"damped": DampingPolicy(), "undamped": DampingPolicy(max_damping=0.0)}


def _rank_k(rng, m, nv, singular_values):
    """(m, nv) A of rank len(singular_values) < m with those nonzero singular values."""
    k = len(singular_values)
    U, _ = np.linalg.qr(rng.standard_normal((m, m)))
    V, _ = np.linalg.qr(rng.standard_normal((nv, max(k, 1))))
    return U[:, :k] @ np.diag(singular_values) @ V[:, :k].T


def _both(levels, lo, hi, policy):
    return _python(levels, lo, hi, None, None, policy), _compiled(levels, lo, hi, None, None, policy)


def _free(nv):
    return np.full(nv, -1e6), np.full(nv, 1e6)


def _check(levels, lo, hi, policy, atol):
    (v_py, r_py), (v_c, r_c) = _both(levels, lo, hi, policy)
    scale = 1 + np.abs(v_py).max()
    np.testing.assert_allclose(v_c, v_py, rtol=0, atol=atol * scale)
    for a, b, level in zip(r_py, r_c, levels, strict=True):
        assert b.damping == pytest.approx(a.damping, rel=1e-12, abs=1e-15)
        assert b.smallest_singular_value == pytest.approx(a.smallest_singular_value, rel=1e-6, abs=1e-9)
        assert b.met == a.met and b.limit_kind == a.limit_kind
        np.testing.assert_allclose(level.times(v_c), level.times(v_py), rtol=0, atol=atol * scale * (1 + np.abs(level.b).max()))
    return r_py, r_c


@pytest.mark.parametrize("policy", POLICIES.values(), ids=POLICIES.keys())
@pytest.mark.parametrize("m", [3, 6, 8, 12, 14])
def test_dependent_rows_equal_the_specification(m, policy):
    """A level of rank k (0 <= k < m) from dependent rows, a full-rank level and a posture below:
    the level's least squares, its damping (sigma_min 0) and the projector it leaves. m = 14 is
    above the compiled solver's small levels: the eigen-decomposition there, as a control."""
    rng = np.random.default_rng(100 + m)
    nv = 16
    for k in range(m):
        for _ in range(3):
            sigma = rng.uniform(0.05, 2.0, k)
            top = Level(_rank_k(rng, m, nv, sigma), rng.standard_normal(m))
            second = Level(rng.standard_normal((3, nv)), rng.standard_normal(3))
            posture = Level(None, rng.standard_normal(nv), identity_scale=1.0)
            # rounding: eps x G's condition on its range (and its damped one), carried below by the projector
            condition = (sigma.max() / sigma.min()) ** 2 if k else 1.0
            _, r_c = _check([top, second, posture], *_free(nv), policy, 1e-13 * condition)
            assert r_c[0].smallest_singular_value == 0.0
            assert r_c[0].damping == pytest.approx(policy.damping(0.0), abs=1e-15)  # closed form


@pytest.mark.parametrize("policy", POLICIES.values(), ids=POLICIES.keys())
def test_more_rows_than_the_freedom_left(policy):
    """A 6-row level below one of 8 rows in 12 joints: at most 4 directions left, so rank <= 4
    (G = A P A^T rank deficient by structure, as a second arm's pose below a relative pose)."""
    rng = np.random.default_rng(5)
    nv = 12
    for _ in range(30):
        top = Level(rng.standard_normal((8, nv)), rng.standard_normal(8))
        second = Level(rng.standard_normal((6, nv)), rng.standard_normal(6))
        posture = Level(None, rng.standard_normal(nv), identity_scale=1.0)
        r_py, _ = _check([top, second, posture], *_free(nv), policy, 1e-11)
        assert r_py[1].smallest_singular_value == 0.0  # the structural rank deficiency is reached


@pytest.mark.parametrize("policy", POLICIES.values(), ids=POLICIES.keys())
def test_saturated_joints_take_the_rank(policy):
    """Tight joint bounds: each saturated joint leaves the level's freedom, until its rows are
    dependent; the candidates and their choice as the specification's."""
    rng = np.random.default_rng(9)
    nv = 9
    for _ in range(40):
        top = Level(rng.standard_normal((3, nv)), rng.standard_normal(3))
        second = Level(rng.standard_normal((6, nv)), 5 * rng.standard_normal(6))
        posture = Level(None, rng.standard_normal(nv), identity_scale=1.0)
        lo, hi = -rng.uniform(0.05, 0.5, nv), rng.uniform(0.05, 0.5, nv)
        _check([top, second, posture], lo, hi, policy, 1e-10)


@pytest.mark.parametrize("smallest", [1e-2, 1e-3, 1e-4, 3e-5])
def test_ill_conditioned_kept_part(smallest):
    """Rank 4 of 6, undamped (the pseudo-inverse), a kept singular value down to the
    well-conditioned bound (sigma^2 >= 1e-8 tr G: pivoted) and below it (the eigen-decomposition):
    both backends within the rounding of a Gram-based solve, eps (sigma_max / sigma_min)^2, of the
    pseudo-inverse from an SVD of A itself (numpy's lstsq: eps sigma_max / sigma_min)."""
    rng = np.random.default_rng(int(1e7 * smallest))
    nv, policy = 14, DampingPolicy(max_damping=0.0)
    for _ in range(20):
        sigma = np.r_[rng.uniform(0.5, 1.5, 3), smallest]
        top = Level(_rank_k(rng, 6, nv, sigma), rng.standard_normal(6))
        (v_py, _), (v_c, _) = _both([top], *_free(nv), policy)
        reference = np.linalg.lstsq(top.A, top.b, rcond=1e-9)[0]
        tolerance = 1e-14 * (sigma.max() / smallest) ** 2 * np.abs(reference).max()
        np.testing.assert_allclose(v_c, reference, rtol=0, atol=tolerance)
        np.testing.assert_allclose(v_py, reference, rtol=0, atol=tolerance)


@pytest.mark.parametrize("tiny", [1e-9, 1e-7, 1e-6, 1e-5])
def test_near_the_rank_cut(tiny):
    """A dropped direction with sigma^2 near the cut (1e-12 max(1, largest)): above it a kept
    direction (the eigen path), below it a dropped one; the level's own result agrees either way."""
    rng = np.random.default_rng(3)
    nv, policy = 10, DampingPolicy()
    for _ in range(20):
        U, _ = np.linalg.qr(rng.standard_normal((6, 6)))
        V, _ = np.linalg.qr(rng.standard_normal((nv, 6)))
        top = Level(U @ np.diag(np.r_[rng.uniform(0.5, 1.5, 4), tiny, 0.0]) @ V.T, rng.standard_normal(6))
        (v_py, r_py), (v_c, r_c) = _both([top], *_free(nv), policy)
        assert r_c[0].damping == pytest.approx(r_py[0].damping, rel=1e-12)
        np.testing.assert_allclose(top.times(v_c), top.times(v_py), rtol=0, atol=1e-9 * (1 + np.abs(top.b).max()))


@pytest.mark.parametrize("units", [1e-4, 1e3])
def test_the_certificates_scale_with_the_level(units):
    """The same rank-deficient levels in other units (rows x units: G x units^2): the certificates
    are relative to max(1, max diag G) and max(1, tr G), so small levels (below 1 there) and large
    ones keep the specification's answers."""
    rng = np.random.default_rng(17)
    nv, policy = 12, DampingPolicy(max_damping=0.0)
    for k in range(6):
        sigma = units * rng.uniform(0.2, 2.0, k)
        top = Level(_rank_k(rng, 6, nv, sigma), units * rng.standard_normal(6))
        posture = Level(None, rng.standard_normal(nv), identity_scale=1.0)
        condition = (sigma.max() / sigma.min()) ** 2 if k else 1.0
        _check([top, posture], *_free(nv), policy, 1e-13 * condition)


def test_the_certified_rank_reads_only_the_lower_triangle():
    """The solver forms only the lower triangle of a level's Gram matrix (small_dense.hpp's gram):
    the certificate of a rank deficiency (pivoted_rank) must read its pivot rows' Gram matrix
    there, also for pivots out of order (a later row with the larger diagonal). With the upper
    triangle holding something else (here far off: an indefinite matrix if read), the certified
    rank and pivots are those of the symmetric matrix, and the rank is the eigenvalues' count."""
    from reljac.ik.solvers.backend import core

    rng = np.random.default_rng(23)
    out_of_order = 0
    for m in range(3, 13):
        for k in range(1, m):
            B = rng.standard_normal((m, k)) * np.linspace(0.5, 2.0, m)[:, None]  # larger rows last
            G = B @ B.T
            stale = np.tril(G) + np.triu(np.full((m, m), -10.0 * np.abs(G).max()), 1)
            rank, pivots = core().certified_rank(G)
            assert rank == int(np.count_nonzero(np.linalg.eigvalsh(G) > 1e-12 * max(1.0, np.abs(G).max())))
            assert core().certified_rank(stale) == (rank, pivots), (m, k)
            out_of_order += pivots != sorted(pivots)
    assert out_of_order > 20  # (the case the certificate's indexing matters for)

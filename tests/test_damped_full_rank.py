"""The compiled SNS solver's Cholesky path for a full-rank level below the damping threshold.

A level whose smallest singular value lies below DampingPolicy.threshold but that has full rank
is solved by the compiled solver through Cholesky factors, its smallest eigenvalue found by
inverse iteration and certified by a shifted Cholesky factor (src/core/hierarchy_rank.hpp,
certified_smallest_eigenvalue); the Python solver, its specification, takes an eigen-decomposition.
Both must give the same velocity, damping and smallest singular value, on levels whose singular
values are chosen (closed form: the damping is the policy's formula at the chosen sigma_min), with
clustered small singular values (slow inverse iteration), and near the rank cut (where the
compiled solver falls back to the eigen-decomposition).
"""

from __future__ import annotations

import numpy as np
import pytest

from reljac.ik import compiled_available
from reljac.ik.solvers.backend import _compiled, _python
from reljac.ik.solvers.hierarchy import DampingPolicy, Level

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")


def _level(rng, singular_values, nv):
    """(m, nv) A with the given singular values (random orthonormal factors) and a random b."""
    m = len(singular_values)
    U, _ = np.linalg.qr(rng.standard_normal((m, m)))
    V, _ = np.linalg.qr(rng.standard_normal((nv, m)))
    return Level(U @ np.diag(singular_values) @ V.T, rng.standard_normal(m))


def _both(levels, nv, policy):
    lo, hi = np.full(nv, -1e6), np.full(nv, 1e6)  # no joint saturates
    return _python(levels, lo, hi, None, None, policy), _compiled(levels, lo, hi, None, None, policy)


@pytest.mark.parametrize("m", [3, 6, 8])
@pytest.mark.parametrize("smallest", [0.019, 1e-2, 1e-3, 3e-5])
def test_damped_full_rank_level_equals_the_specification(m, smallest):
    rng = np.random.default_rng(int(1e6 * smallest) + m)
    nv, policy = 14, DampingPolicy()
    for _ in range(20):
        sigma = np.r_[rng.uniform(0.3, 2.0, m - 1), smallest]
        top = _level(rng, sigma, nv)
        (v_alone, _), (v_c_alone, _) = _both([top], nv, policy)  # v: the level's damped least squares alone
        lam2 = policy.damping(smallest)  # closed form: the policy's damping at the chosen sigma_min
        # rounding: relative eps x the condition number of G + lambda^2 I; sigma_min from G to eps |G|
        condition = sigma.max() ** 2 / (smallest**2 + lam2)
        sigma_rel = 1e-15 * np.sum(sigma**2) / smallest**2
        np.testing.assert_allclose(v_c_alone, v_alone, rtol=0, atol=1e-14 * condition * (1 + np.abs(v_alone).max()))
        posture = Level(None, rng.standard_normal(nv), identity_scale=1.0)
        (v_py, r_py), (v_c, r_c) = _both([top, posture], nv, policy)
        # below it, the projector I - W W^T carries W's rounding over sigma_min^2 (as the
        # eigen-decomposition's does): eps |A|^2 / sigma_min^2, besides the level's own
        np.testing.assert_allclose(v_c, v_py, rtol=0,
                                   atol=(1e-14 * condition + 1e-15 / smallest**2) * (1 + np.abs(v_py).max()))
        damping_abs = policy.max_damping**2 * 1e-15 * np.sum(sigma**2) / policy.threshold**2  # from sigma_min^2's
        assert r_py[0].damping == pytest.approx(lam2, rel=0, abs=damping_abs)
        assert r_c[0].damping == pytest.approx(r_py[0].damping, rel=0, abs=damping_abs)
        assert r_c[0].smallest_singular_value == pytest.approx(smallest, rel=sigma_rel)
        assert r_c[0].smallest_singular_value == pytest.approx(r_py[0].smallest_singular_value, rel=sigma_rel)


@pytest.mark.parametrize("gap", [1.0 + 1e-9, 1.001, 1.5])
def test_clustered_small_singular_values(gap):
    """Two singular values below the threshold, as close as `gap`: inverse iteration converges
    slowly or to a mix of both; the answer still equals the specification's."""
    rng = np.random.default_rng(7)
    nv, policy = 12, DampingPolicy()
    for _ in range(20):
        small = 5e-3
        top = _level(rng, np.r_[rng.uniform(0.5, 1.5, 4), small * gap, small], nv)
        second = _level(rng, rng.uniform(0.1, 1.0, 3), nv)
        (v_py, r_py), (v_c, r_c) = _both([top, second], nv, policy)
        np.testing.assert_allclose(v_c, v_py, rtol=0, atol=1e-9 * (1 + np.abs(v_py).max()))
        assert r_c[0].damping == pytest.approx(r_py[0].damping, rel=1e-9)
        assert r_c[0].smallest_singular_value == pytest.approx(small, rel=1e-6)


@pytest.mark.parametrize("smallest", [1e-5, 1e-7, 1e-9, 0.0])
def test_near_the_rank_cut(smallest):
    """sigma_min^2 near or below the rank tolerance (1e-12 max(1, largest)) or exactly 0: the
    level's rank and damping as the specification's, and the velocity inside its rounding."""
    rng = np.random.default_rng(11)
    nv, policy = 10, DampingPolicy()
    for _ in range(20):
        top = _level(rng, np.r_[rng.uniform(0.5, 1.5, 5), smallest], nv)
        posture = Level(None, rng.standard_normal(nv), identity_scale=1.0)
        (v_py, r_py), (v_c, r_c) = _both([top, posture], nv, policy)
        assert r_c[0].damping == pytest.approx(r_py[0].damping, rel=1e-9)
        np.testing.assert_allclose(r_c[0].smallest_singular_value, r_py[0].smallest_singular_value,
                                   rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(top.times(v_c), top.times(v_py), rtol=0, atol=1e-9 * (1 + np.abs(top.b).max()))
        if smallest >= 1e-5:  # (the posture below: the projector's rounding, eps / sigma_min^2)
            np.testing.assert_allclose(v_c, v_py, rtol=0, atol=1e-15 / smallest**2 * (1 + np.abs(v_py).max()))

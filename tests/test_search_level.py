"""A search's levels (reljac.ik.solvers.hierarchy.Level.search): with a Levenberg-Marquardt mu not too
small, a candidate's correction is M^T (G + mu I)^-1 r, every direction damped by mu, none cut;
the controller's levels keep the eigen-decomposition's cut. Both solvers, against the closed form
of damped least squares, (A^T A + mu I)^-1 A^T b (the same vector: push-through identity)."""

from __future__ import annotations

import numpy as np
import pytest

from reljac.ik import compiled_available
from reljac.ik.solvers.backend import _compiled, _python
from reljac.ik.solvers.hierarchy import SEARCH_CHOLESKY, DampingPolicy, Level

SOLVERS = [_python, pytest.param(_compiled, marks=pytest.mark.skipif(not compiled_available(),
                                                                     reason="the compiled core is not built"))]
UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)  # the search's policy
# Two rows 1e-7 apart: G = A A^T has an eigenvalue of 5e-15, below the rank tolerance (1e-12 x 2)
A = np.array([[1.0, 0.0], [1.0, 1e-7]])
B = np.array([1.0, 0.5])
FREE = np.full(2, np.inf)


def damped_least_squares(mu: float) -> np.ndarray:
    return np.linalg.solve(A.T @ A + mu * np.eye(2), A.T @ B)


def cut(mu: float) -> np.ndarray:
    """The eigen path: the direction of G's tiny eigenvalue cut, the other damped by mu."""
    values, U = np.linalg.eigh(A @ A.T)
    u = U[:, -1]
    return A.T @ u * (u @ B) / (values[-1] + mu)


@pytest.mark.parametrize("solve", SOLVERS)
def test_a_search_level_damps_a_nearly_singular_direction_instead_of_cutting_it(solve):
    mu = 1e-3
    v, reports = solve([Level(A.copy(), B.copy(), extra_damping=mu, search=True)], -FREE, FREE, None, None,
                       UNDAMPED)
    np.testing.assert_allclose(v, damped_least_squares(mu), rtol=1e-6)
    assert abs(v[1]) > 1e-5  # (the damped direction moves joint 2, which the cut leaves nearly still)
    assert reports[0].damping == mu


@pytest.mark.parametrize("solve", SOLVERS)
def test_a_controller_level_and_a_search_level_with_a_tiny_mu_cut_it(solve):
    for level in (Level(A.copy(), B.copy(), extra_damping=1e-3),
                  Level(A.copy(), B.copy(), extra_damping=0.5 * SEARCH_CHOLESKY, search=True)):
        v, _ = solve([level], -FREE, FREE, None, None, UNDAMPED)
        np.testing.assert_allclose(v, cut(level.extra_damping), rtol=1e-6, atol=1e-12)
        assert abs(v[1]) < 1e-6


@pytest.mark.parametrize("solve", SOLVERS)
def test_a_saturated_search_level_leaves_the_same_row_space_below_it(solve):
    """Three joints, a 2-row level whose joint 0 is driven past its bound (saturated): the level
    then has joints 1 and 2 only, [1, 1] on both rows (rank 1); the posture below moves in what is
    left, joint 1 - joint 2, with or without the search's Cholesky path."""
    A3 = np.array([[1.0, 1.0, 1.0], [2.0, 1.0, 1.0]])
    b3 = np.array([3.0, 5.0])
    lo, hi = np.array([-0.5, -10, -10]), np.array([0.5, 10, 10])
    posture = np.array([0.0, 1.0, 0.0])
    out = []
    for search in (False, True):
        levels = [Level(A3.copy(), b3.copy(), extra_damping=1e-2, search=search),
                  Level(None, posture.copy(), identity_scale=1.0, extra_damping=1e-2, search=search)]
        v, reports = solve(levels, lo, hi, None, None, UNDAMPED)
        assert reports[0].saturated == [0] and v[0] == 0.5
        out.append(v)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-9, atol=1e-12)
    # below the level: joint 1 - joint 2 moves by the posture's damped share, (1 - 0) / 2 / (1 + 1e-2)
    assert out[1][1] - out[1][2] == pytest.approx(1.0 / (1.0 + 1e-2), rel=1e-9)

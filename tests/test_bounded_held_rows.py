"""A level of the bounded hierarchy whose rows move along a joint held on its bound. The compiled
step forms the Gram matrix of M = A P_W (the level's rows in the face) by downdating the level's
kept A P_in A^T by the face's restrictions, where each row keeps at least 1/16 of its squared
norm in the face; a row nearly along the held joint takes the product M M^T instead, since its
downdated entries would be differences of nearly equal numbers. Both backends agree to rounding
either way, damped or not (the specification: reljac.ik.solvers.active_set, in Python)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import compiled_available

from reljac.ik.solvers.backend import solver
from reljac.ik.solvers.hierarchy import DampingPolicy, Level

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)


def both(levels, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    nv = lo.size
    return tuple(solver(b)(levels, lo, hi, np.zeros((0, nv)), np.zeros(0), UNDAMPED)[0]
                 for b in ("python", "compiled"))


@pytest.mark.parametrize("along", [1e-3, 1e-4, 1e-5])
@pytest.mark.parametrize("damping", [0.0, 1e-12, 1e-9])
def test_a_row_nearly_along_a_held_joint_gives_the_specifications_step(along, damping):
    """Row 0 is e_0 + `along` e_1 and joint 0 is held on its lower bound: in the face the row keeps
    along^2 of its squared norm. Downdated, its Gram entry 1 + along^2 - 1 kept 8e-8 (relative) of
    rounding at along = 1e-5, damped 1e-12 (undamped, the refinement on M took it out): v_1 was
    8e-8 off the specification's."""
    A = np.array([[1.0, along, 0.0], [0.0, 0.0, 1.0]])
    lo, hi = np.array([0.5, -np.inf, -np.inf]), np.array([1.0, np.inf, np.inf])
    aims = np.array([0.0, 0.3])  # row 0 pushes joint 0 onto its lower bound: held there
    levels = [Level(A, np.zeros(2), lower=aims, upper=aims, extra_damping=damping)]
    python, compiled = both(levels, lo, hi)
    assert python[0] == pytest.approx(0.5, abs=1e-12) and abs(python[1]) > 100  # held; joint 1 does the rest
    assert np.abs(compiled - python).max() <= 1e-13 * np.abs(python).max(), (python, compiled)


@pytest.mark.parametrize("seed", range(6))
def test_levels_of_random_rows_with_held_joints_agree_on_both_backends(seed):
    """Random rows over 8 joints, three of which start beyond what the rows ask (the box's lower
    bounds above 0: held there), two levels, damped or not: both backends' v agree to rounding,
    where the rows keep most of their norm in the face (the downdated Gram matrix) and where some
    row is nearly along a held joint (its Gram matrix formed)."""
    rng = np.random.default_rng(seed)
    nv = 8
    lo, hi = np.full(nv, -5.0), np.full(nv, 5.0)
    held = rng.choice(nv, 3, replace=False)
    lo[held], hi[held] = 0.5, 1.0
    A0 = rng.normal(size=(3, nv))
    if seed % 2:  # one row nearly along a held joint
        A0[0] = 1e-4 * rng.normal(size=nv)
        A0[0, held[0]] = 1.0
    A1 = rng.normal(size=(2, nv))
    aims0, aims1 = -rng.uniform(1.0, 2.0, 3), rng.normal(size=2)
    damping = 0.0 if seed < 3 else 1e-6
    levels = [Level(A0, np.zeros(3), lower=aims0 - 0.1, upper=aims0, extra_damping=damping),
              Level(A1, np.zeros(2), lower=aims1, upper=aims1, extra_damping=damping)]
    python, compiled = both(levels, lo, hi)
    assert np.abs(compiled - python).max() <= 1e-10 * max(1.0, np.abs(python).max()), (python, compiled)


@pytest.mark.parametrize("seed", range(8))
def test_a_level_nearly_along_the_rows_fixed_above_keeps_them_to_rounding(seed):
    """Level 0 fixes two rows (of a random orthonormal basis: its projector has rounding); level 1's
    first row is level 0's first plus 1e-4 to 3e-7 of a third direction. Its step M^T y has
    |y| ~ 1 / eps^2 against rows of norm 1: the rounding of M = A P_in off the face, times y, moves
    level 0 unless the step is projected once more onto the face (the compiled step skips that
    projection only where sum |y_i| |A_i| is within 1e3 |step|: skipping it here left level 0
    2.6e-10 off)."""
    nv = 8
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(nv, nv)))
    lo, hi = np.full(nv, -1e9), np.full(nv, 1e9)
    for eps in (1e-4, 1e-5, 2e-6, 3e-7):  # (not 1e-6: sigma^2 = 1e-12 ties the rank cut, each backend its side)
        A0, A1 = Q[:2], np.vstack([Q[0] + eps * Q[2], Q[3]])
        b0, b1 = np.array([0.3, -0.2]), np.array([0.3 + eps, 0.5])
        levels = [Level(A0, b0, lower=b0, upper=b0), Level(A1, b1, lower=b1, upper=b1 + 1e-3)]
        python, compiled = both(levels, lo, hi)
        for v in (python, compiled):
            assert np.abs(A0 @ v - b0).max() <= 1e-13, (eps, np.abs(A0 @ v - b0).max())
        assert np.abs(compiled - python).max() <= 1e-9 * max(1.0, np.abs(python).max())


@pytest.mark.parametrize("seed", range(6))
def test_a_rank_deficient_level_on_pivot_rows_near_or_far_from_parallel(seed):
    """Level 0's equality rows a1, a2 = a1 + eps b, a1 + a2 (rank 2 of 3: the compiled core takes
    their row space from the pivot rows, orthonormalized again only where the pivot rows' Gram
    matrix has an eigenvalue below 1e-4 of its trace, as its full-rank Cholesky path): level 1's
    step keeps level 0 to rounding and both backends agree, eps from 0.5 (no orthonormalization)
    to 1e-3 (orthonormalized)."""
    nv = 8
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(nv, nv)))
    lo, hi = np.full(nv, -1e9), np.full(nv, 1e9)
    for eps in (0.5, 0.1, 1e-2, 1e-3):
        a1, a2 = Q[0], Q[0] + eps * Q[1]
        A0 = np.vstack([a1, a2, a1 + a2, Q[2]])
        b0 = A0 @ rng.normal(size=nv)  # consistent; the last row an interval
        upper = b0 + np.array([0.0, 0.0, 0.0, 1.0])
        target = rng.normal(size=nv)
        levels = [Level(A0, b0, lower=b0, upper=upper), Level(np.eye(nv), target, lower=target, upper=target)]
        python, compiled = both(levels, lo, hi)
        for v in (python, compiled):
            assert np.abs(A0[:3] @ v - b0[:3]).max() <= 1e-12, eps
        assert np.abs(compiled - python).max() <= 1e-10 * max(1.0, np.abs(python).max()), eps

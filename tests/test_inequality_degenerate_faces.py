"""The bounded hierarchy's faces on nearly dependent held rows (issue 29): random problems of
tests/qp_cascade.py on which a level held a row with a tiny pivot (|P n|^2 ~ 1e-9 |n|^2) and its
face, formed with the pivot n^T P n, divided the projector's rounding (~1e-14) by it: a face
with an eigenvalue of -6e-6, a step leaving range(P_in) (the first level off by 2e-6) and
crossing a joint's bound it took for fixed (v out of the box by 0.098). Each problem, on both
backends, cold and warm-started: v keeps the box and the rows of C, every level meets the
first-order conditions of its least-violation problem (a certificate computed here with SciPy's
NNLS, independent of the solver and of the cascade), and the cascade's violations where daqp is
trusted there; the face itself is a projector inside range(P_in). (Likewise what a level leaves
below it: P - W W^T, W from the Gram matrix's eigenvectors, orthonormalized again where they
are not: seed 30 #33.)"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import BACKENDS
from scipy.optimize import nnls

from reljac.ik.solvers import active_set, active_set_algebra, inequality
from reljac.ik.solvers.backend import core
from reljac.ik.solvers.hierarchy import DampingPolicy, Level
from reljac.ik.solvers.inequality import WarmStart, solve_lexicographic

qp_cascade = pytest.importorskip("qp_cascade", reason="needs daqp (the test extra)")
from test_inequality_warm_start import perturbed  # noqa: E402  (the warm-start test's next-step problems)

UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)
ORACLE = 1e-6  # tests/test_inequality_oracle.py's tolerance
KKT = 1e-8  # the certificate's residual, relative to 1 + the level's projected gradient


def problem_of(seed: int, index: int, moved: bool):
    """Problem `index` of the random stream `seed` (the oracle test's; `moved`: the warm-start test's
    stream, each problem followed by its perturbed copy): (the problem solved, the one before it)."""
    rng = np.random.default_rng(seed)
    for _ in range(index + 1):
        problem = qp_cascade.random_problem(rng)
        after = perturbed(problem, rng) if moved else problem
    return after, problem


# (seed, index, perturbed, the cascade trusted): found by scans of 300 problems per seed. Seed 30
# #85 and seed 29 #127 (perturbed) left the box; seed 30 #33 (perturbed) by 4.7, through the
# projector a level of two rows 7e-6 from parallel left (row_basis's eigenvectors, unorthogonal); on seed 29 #214 and #288 (perturbed) and seed 46
# #262 the cascade is the one off: daqp's level 1 above the violation the solution here reaches
# with the levels above met (#214), its v 9e-9 out of the box and 2e-8 past C (#288), its level 0
# 1e-6 short of the exact least squares (#262, rows 0 and 1 parallel: checked in 50 digits).
CASES = [(30, 85, False, True), (29, 127, True, False), (30, 33, True, True), (29, 214, True, False), (29, 288, True, False),
         (46, 262, False, False)]


def levels_of(problem) -> list[Level]:
    return [Level(A, np.zeros(A.shape[0]), lower=low, upper=high) for A, low, high in problem.levels]


def kkt_residuals(problem, v: np.ndarray) -> list[tuple[float, float]]:
    """Per level, the first-order conditions of the cascade's level at v: min sum dist(A v,
    [lower, upper])^2 with the equality rows above kept, the inequality rows above within their
    intervals widened to their values at v, the box and C (rows C violates at clip(0, lo, hi):
    first a level of their own). Returns (|Z^T (g + N_a^T mu)| at the best mu >= 0, |Z^T g|):
    g the gradient, Z a null-space basis of the equality rows above, N_a the rows on their bound."""
    nv = problem.lo.shape[0]
    broken, levels = qp_cascade.with_recovery(problem)
    eye, finite_hi, finite_lo = np.eye(nv), np.isfinite(problem.hi), np.isfinite(problem.lo)
    N = np.vstack([eye[finite_hi], -eye[finite_lo], problem.C[~broken]])
    h = np.concatenate([problem.hi[finite_hi], -problem.lo[finite_lo], problem.d[~broken]])
    fixed = np.zeros((0, nv))
    out = []
    for A, low, high in levels:
        x = A @ v
        Z = qp_cascade.null_basis(fixed, nv)
        projected = Z.T @ (2.0 * A.T @ (x - np.clip(x, low, high)))
        on_bound = N @ v >= h - 1e-9 * (1.0 + np.abs(h))
        residual = float(np.linalg.norm(projected))
        if on_bound.any() and Z.shape[1]:
            residual = float(nnls(Z.T @ N[on_bound].T, -projected, maxiter=2000)[1])
        out.append((residual, float(np.linalg.norm(projected))))
        equal = low == high
        fixed = np.vstack([fixed, A[equal]])
        for sign, bound in ((1.0, np.maximum(high[~equal], x[~equal])), (-1.0, -np.minimum(low[~equal], x[~equal]))):
            kept = np.isfinite(bound)
            N, h = np.vstack([N, sign * A[~equal][kept]]), np.concatenate([h, bound[kept]])
    return out[1:] if broken.any() else out


def solutions(problem, before, backend: str) -> dict[str, np.ndarray]:
    """v cold and warm-started: the specification warm from the sets of the problem before (a
    controller's previous step), the compiled solver from the problem's own (solved twice)."""
    levels = levels_of(problem)
    if backend == "python":
        state = WarmStart()
        solve_lexicographic(levels_of(before), before.lo, before.hi, policy=UNDAMPED, C=before.C, d=before.d,
                            warm=state)
        out = {}
        for name, warm in (("cold", None), ("warm", state)):
            v, reports = solve_lexicographic(levels, problem.lo, problem.hi, policy=UNDAMPED, C=problem.C,
                                             d=problem.d, warm=warm)
            assert not any(r.capped for r in reports), name
            out[name] = v
        return out
    out = {}
    for name, warm in (("cold", False), ("warm", True)):
        v, raw = core().solve_hierarchy(
            [lv.A for lv in levels], [lv.b for lv in levels], [0.0] * len(levels), [None] * len(levels),
            [0.0] * len(levels), problem.lo, problem.hi, problem.C, problem.d, 0.0, 0.0,
            lowers=[lv.lower for lv in levels], uppers=[lv.upper for lv in levels], repeat=2 if warm else 1, warm=warm)
        assert not any(r.capped for r in raw), name
        out[name] = np.asarray(v)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed, index, moved, trusted", CASES)
def test_the_box_and_each_levels_optimum_hold(seed, index, moved, trusted, backend):
    problem, before = problem_of(seed, index, moved)
    where = f"seed {seed}, problem {index}{' (perturbed)' if moved else ''}, {backend}"
    oracle = qp_cascade.differences(problem, solutions(problem, before, "python")["cold"]) if trusted else None
    for name, v in solutions(problem, before, backend).items():
        assert (v >= problem.lo - 1e-9).all() and (v <= problem.hi + 1e-9).all(), f"{where}, {name}: v leaves the box"
        kept = ~qp_cascade.with_recovery(problem)[0]  # (the others are a level: met as far as the box allows)
        assert (problem.C[kept] @ v <= problem.d[kept] + 1e-9).all(), f"{where}, {name}: v leaves C"
        for k, (residual, gradient) in enumerate(kkt_residuals(problem, v)):
            assert residual <= KKT * (1.0 + gradient), f"{where}, {name}, level {k}: not optimal ({residual:.1e})"
        if trusted:
            assert oracle is not None and max(oracle) <= ORACLE, f"{where}: off the cascade by {oracle}"
            differences = qp_cascade.differences(problem, v)
            assert differences is not None and max(differences) <= ORACLE, f"{where}, {name}: {differences}"


def test_a_face_on_a_nearly_dependent_row_is_a_projector_in_range_of_p_in(monkeypatch):
    """Seed 30 #85's third level starts from the working set [15, 7, 2, 3] in a range(P_in) of
    dimension 3 where rows 15, 7 and 2 are dependent to 1e-5 (their smallest singular value
    there): the face keeps 15, 7 and 2 and drops 3, and stays a projector (eigenvalues in [0, 1]
    to 1e-12, idempotent) inside range(P_in); with the pivot n^T P n it had an eigenvalue of
    -5.7e-6."""
    calls = []
    solve_level = active_set.solve_level
    monkeypatch.setattr(inequality, "solve_level", lambda *args: calls.append(args) or solve_level(*args))
    problem, _ = problem_of(30, 85, False)
    solve_lexicographic(levels_of(problem), problem.lo, problem.hi, policy=UNDAMPED, C=problem.C, d=problem.d)
    _rows, _v, P_in, hard, *_ = calls[2]
    values, vectors = np.linalg.eigh(P_in)
    basis = vectors[:, values > 0.5]
    assert basis.shape[1] == 3
    assert np.linalg.svd(hard.N[[15, 7, 2]] @ basis, compute_uv=False)[-1] < 1e-4  # (nearly dependent)
    P_W, kept = active_set_algebra.face(P_in, hard.N, [15, 7, 2, 3])
    assert kept == [15, 7, 2]
    eigenvalues = np.linalg.eigvalsh(0.5 * (P_W + P_W.T))
    assert eigenvalues.min() >= -1e-12 and eigenvalues.max() <= 1.0 + 1e-12
    assert np.abs(P_W @ P_W - P_W).max() <= 1e-12
    assert np.abs(P_in @ P_W - P_W).max() <= 1e-12
    assert np.abs(P_W @ hard.N[[15, 7, 2, 3]].T).max() <= 1e-9  # every row held, the dropped one too

"""The oracle of the inequality hierarchy: a cascade of QPs, one per level, solved by daqp (a dual
active-set method) or by Clarabel (an interior-point method: a second, unrelated solver, for the
problems where daqp alone is not trusted; both test dependencies only), and the random problems it
is run on.

Level k's QP (Kanoun et al.'s cascade, as OpenSoT's iHQP): minimize |s|^2 over (v, s) with
``lower <= A v - s <= upper`` for the level's rows (s: each row's distance to its interval at the
optimum), the box and C, and what the levels above reached: their equality rows keep their
values (v = v_above + N z, N a null-space basis of those rows from numpy's SVD, so no
redundant equality reaches the QP solver), and each of their inequality rows stays within its
interval widened to the violation the level above was left with, [min(lower, A v*), max(upper,
A v*)] (rows a level above met stay met, rows it could not meet get no worse). Rows of C that
v = clip(0, lo, hi) violates are met first, as a level of their own (the recovery of the solver).
Nothing in here shares code with reljac's solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import daqp
import numpy as np

REGULARIZATION = 0.0  # on the null-space coordinates z (the slacks' weight is 1)
# daqp's settings, tried in turn: automatic proximal regularization of the singular Hessian, then
# a stronger one (daqp calls some of these degenerate QPs infeasible with the first)
SETTINGS = ({"primal_tol": 1e-10, "eps_prox": -1e-6}, {"primal_tol": 1e-10, "eps_prox": 1e-3})
BIG = 1e30  # daqp's infinity
RELAX = 1e-12  # widening of the constraints at each level (the QP solver is on a bound within its tolerance); larger ones let the levels below gain visibly


@dataclass
class Problem:
    """Levels of rows ``lower <= A v <= upper`` (equality rows: lower = upper), a box, rows C v <= d."""

    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    lo: np.ndarray
    hi: np.ndarray
    C: np.ndarray
    d: np.ndarray


def distances(A: np.ndarray, lower: np.ndarray, upper: np.ndarray, v: np.ndarray) -> np.ndarray:
    x = A @ v
    return np.maximum(x - upper, 0.0) + np.maximum(lower - x, 0.0)


def null_basis(A: np.ndarray, nv: int) -> np.ndarray:
    """An orthonormal basis (nv, r) of A's null space (SVD, relative rank tolerance 1e-10)."""
    if A.shape[0] == 0:
        return np.eye(nv)
    _, s, Vt = np.linalg.svd(A)
    rank = int(np.count_nonzero(s > 1e-10 * max(1.0, s[0])))
    return Vt[rank:].T


def _qp(H: np.ndarray, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
        f: np.ndarray | None = None) -> np.ndarray:
    """argmin x^T H x / 2 (+ f^T x) subject to low <= M x <= high for each block (M, low, high), by daqp:
    two-sided rows as they are (an equality row is one row with low = high, never a pair of
    opposite inequalities), rows of zeros dropped (every block holds at x = 0)."""
    M = np.vstack([b[0] for b in blocks])
    low = np.concatenate([b[1] for b in blocks])
    high = np.concatenate([b[2] for b in blocks])
    keep = np.abs(M).max(axis=1, initial=0.0) > 1e-14
    M, low, high = M[keep], np.maximum(low[keep], -BIG), np.minimum(high[keep], BIG)
    sense = np.where(low == high, 5, 0).astype(np.intc)
    for settings in SETTINGS:
        x, _, flag, info = daqp.solve(H, np.zeros(H.shape[0]) if f is None else f, M, high, low, sense, **settings)
        if flag > 0:
            break
    assert flag > 0, f"the oracle's QP failed (daqp exit flag {flag})"
    if f is not None:
        return np.asarray(x)
    return _polished(H, M, low, high, np.asarray(x), np.asarray(info["lam"]))


def _polished(H: np.ndarray, M: np.ndarray, low: np.ndarray, high: np.ndarray, x: np.ndarray,
              lam: np.ndarray) -> np.ndarray:
    """x made exact on daqp's active set (the rows with a nonzero multiplier, on the bound its
    sign names): the KKT system of min x^T H x / 2 with those rows as equalities, solved by least
    squares; kept only when it is feasible and no worse (the proximal iterations of daqp stop
    short of the exact optimum on a singular Hessian)."""
    active = lam != 0.0
    bound = np.where(lam > 0.0, high, low)[active]
    A = M[active]
    n, k = H.shape[0], A.shape[0]
    K = np.block([[H, A.T], [A, np.zeros((k, k))]])
    y = np.linalg.lstsq(K, np.concatenate([np.zeros(n), bound]), rcond=None)[0][:n]
    slack = 1e-12 * (1.0 + np.abs(M @ y))
    if (M @ y <= high + slack).all() and (M @ y >= low - slack).all() and y @ H @ y <= x @ H @ x + 1e-15:
        return y
    return x


def _widened(M: np.ndarray, low: np.ndarray, high: np.ndarray, x_now: np.ndarray) -> tuple[np.ndarray, ...]:
    """low <= M z + x_now <= high, widened to hold at z = 0 (x_now is the QP solver's: on a bound
    within its tolerance), and by RELAX more: a drift of RELAX per level at most."""
    return M, np.minimum(low - x_now, 0.0) - RELAX, np.maximum(high - x_now, 0.0) + RELAX


def with_recovery(problem: Problem) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """The rows of C that v = clip(0, lo, hi) violates (a mask), and the levels, those rows first
    as a level of their own when there are any (the recovery)."""
    v = np.clip(np.zeros(problem.lo.shape[0]), problem.lo, problem.hi)
    broken = problem.C @ v > problem.d + 1e-12
    levels = list(problem.levels)
    if broken.any():
        levels.insert(0, (problem.C[broken], np.full(int(broken.sum()), -np.inf), problem.d[broken]))
    return broken, levels


def _qp_clarabel(H: np.ndarray, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
    """_qp's problem by Clarabel: equality rows in its zero cone, each finite side of the others
    as a row of its nonnegative cone, tolerances at 1e-13 (its default 1e-8 is the scan's own
    tolerance); an AssertionError where it does not solve it."""
    import clarabel
    from scipy import sparse

    M = np.vstack([b[0] for b in blocks])
    low = np.concatenate([b[1] for b in blocks])
    high = np.concatenate([b[2] for b in blocks])
    keep = np.abs(M).max(axis=1, initial=0.0) > 1e-14
    M, low, high = M[keep], low[keep], high[keep]
    equal = low == high
    up, down = ~equal & np.isfinite(high), ~equal & np.isfinite(low)
    A = np.vstack([M[equal], M[up], -M[down]])
    b = np.concatenate([high[equal], high[up], -low[down]])
    cones = [clarabel.ZeroConeT(int(equal.sum()))] if equal.any() else []
    if up.any() or down.any():
        cones.append(clarabel.NonnegativeConeT(int(up.sum() + down.sum())))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-13
    settings.tol_ktratio = 1e-10
    settings.static_regularization_constant = 1e-13
    settings.max_iter = 400
    solution = clarabel.DefaultSolver(sparse.csc_matrix(H), np.zeros(H.shape[0]), sparse.csc_matrix(A), b, cones,
                                      settings).solve()
    assert str(solution.status) in ("Solved", "AlmostSolved"), f"the oracle's QP failed (Clarabel: {solution.status})"
    return np.asarray(solution.x)


def cascade(problem: Problem, solver: str = "daqp") -> list[float]:
    """Each level's least violation (|distances|), in order (the recovery level not included), each
    level's QP solved by `solver`, "daqp" or "clarabel"."""
    return _cascade(problem, _qp if solver == "daqp" else _qp_clarabel)[0]


def least_norm_velocity(problem: Problem) -> np.ndarray:
    """The velocity of least norm among those that keep every level's least violation (daqp's
    cascade, then one QP more: minimize |v + N z|^2 over the null space N of the equality rows,
    inside the box, C and every inequality row's interval as the levels left it): the one solution
    of a hierarchy that leaves directions free (HQP's last level)."""
    _, v, fixed, hard = _cascade(problem, _qp)
    nv = problem.lo.shape[0]
    N = null_basis(fixed, nv)
    if N.shape[1] == 0:
        return v
    blocks = [_widened(B @ N, low, high, B @ v) for B, low, high in hard]
    return v + N @ _qp(np.eye(N.shape[1]), blocks, f=N.T @ v)


def _cascade(problem: Problem, qp) -> tuple[list[float], np.ndarray, np.ndarray, list]:
    """cascade's violations, and its v, equality rows and hard rows at the end."""
    nv = problem.lo.shape[0]
    v = np.clip(np.zeros(nv), problem.lo, problem.hi)
    broken, levels = with_recovery(problem)
    hard = [(np.eye(nv), problem.lo, problem.hi), (problem.C[~broken], np.full(int((~broken).sum()), -np.inf),
                                                   problem.d[~broken])]
    fixed = np.zeros((0, nv))
    out = []
    for A, lower, upper in levels:
        N = null_basis(fixed, nv)
        r, m = N.shape[1], A.shape[0]
        blocks = [(np.hstack([A @ N, -np.eye(m)]), lower - A @ v, upper - A @ v)]
        for B, low, high in hard:  # the box, C and the inequality rows above
            blocks.append(_widened(np.hstack([B @ N, np.zeros((B.shape[0], m))]), low, high, B @ v))
        H = np.diag(np.concatenate([np.full(r, REGULARIZATION), np.ones(m)]))
        v = v + N @ qp(H, blocks)[:r]
        out.append(float(np.linalg.norm(distances(A, lower, upper, v))))
        equal = lower == upper
        fixed = np.vstack([fixed, A[equal]])
        x_now = A[~equal] @ v
        hard.append((A[~equal], np.minimum(lower[~equal], x_now), np.maximum(upper[~equal], x_now)))
    return (out[1:] if broken.any() else out), v, fixed, hard


def differences(problem: Problem, v: np.ndarray) -> list[float] | None:
    """Per level, |the violation at v - the cascade's| / (1 + the cascade's); None where daqp fails
    on one of the cascade's QPs (a few degenerate ones: the callers count them)."""
    try:
        oracle = cascade(problem)
    except AssertionError:
        return None
    return [abs(float(np.linalg.norm(distances(A, low, high, v))) - expected) / (1.0 + expected)
            for (A, low, high), expected in zip(problem.levels, oracle, strict=True)]


def random_problem(rng: np.random.Generator) -> Problem:
    """2-6 levels of 1-4 rows on 2-7 joints: equality and inequality rows mixed (one- and
    two-sided), rank-deficient levels (repeated and combined rows, rows of zeros), targets
    beyond reach and conflicting levels, a box (sometimes one-sided, sometimes not containing
    0) and 0-2 rows of C, sometimes violated at the start."""
    nv = int(rng.integers(2, 8))
    lo, hi = -rng.uniform(0.1, 2.0, nv), rng.uniform(0.1, 2.0, nv)
    if rng.random() < 0.2:
        lo[rng.integers(nv)] = -np.inf
    if rng.random() < 0.15:
        j = rng.integers(nv)
        lo[j], hi[j] = 0.2, 1.0
    levels = []
    for _ in range(int(rng.integers(2, 7))):
        m = int(rng.integers(1, 5))
        A = rng.normal(size=(m, nv))
        if m > 1 and rng.random() < 0.3:  # rank-deficient: a row repeated or combined
            A[-1] = A[0] * rng.normal() if rng.random() < 0.5 else A[0] + A[1 % (m - 1)]
        if rng.random() < 0.05:
            A[0] = 0.0
        centre = rng.normal(scale=2.0, size=m)
        kind = rng.integers(0, 4, size=m)  # 0 equality, 1 upper, 2 lower, 3 two-sided
        half = rng.uniform(0.0, 1.5, size=m)
        lower = np.where(kind == 0, centre, np.where(kind == 1, -np.inf, centre - half))
        upper = np.where(kind == 0, centre, np.where(kind == 2, np.inf, centre + half))
        levels.append((A, lower, upper))
    k = int(rng.integers(0, 3))
    C = rng.normal(size=(k, nv))
    d = rng.normal(scale=1.0, size=k) + 0.3
    return Problem(levels, lo, hi, C, d)


def agreed_cascade(problem: Problem, agreement: float = 1e-7) -> list[float] | None:
    """The least violations two unrelated QP solvers agree on (daqp's and Clarabel's cascades, each
    level within `agreement` x (1 + the smaller)): the smaller of the two per level, or None where
    either fails or they disagree (then neither is trusted: in a scan of ill-conditioned levels
    daqp's alone was wrong in 13 cases)."""
    try:
        first, second = cascade(problem), cascade(problem, "clarabel")
    except AssertionError:
        return None
    if any(abs(a - b) > agreement * (1.0 + min(a, b)) for a, b in zip(first, second, strict=True)):
        return None
    return [min(a, b) for a, b in zip(first, second, strict=True)]


def ill_conditioned_problem(rng: np.random.Generator, scale: float = 1e3) -> Problem:
    """1-4 levels on 3-8 joints, one of them (the top one half of the time) with more rows than the
    freedom the levels above can leave, its rows x `scale` and ill-conditioned (singular values
    spread from 1 down to 1e-4 - 1e-10 of the largest), asking half of the time for rates a
    velocity inside the box meets (its least violation 0: a dropped direction shows); the other
    levels as random_problem's; equality and inequality rows mixed; a box and 0-2 rows of C."""
    nv = int(rng.integers(3, 9))
    lo, hi = -rng.uniform(0.1, 2.0, nv), rng.uniform(0.1, 2.0, nv)
    count = int(rng.integers(1, 5))
    special = int(rng.integers(0, count)) if rng.random() < 0.5 else 0
    levels, used = [], 0
    for k in range(count):
        if k == special:
            m = max(nv - used, 1) + int(rng.integers(1, 4))
            r = min(m, nv)
            U, _ = np.linalg.qr(rng.normal(size=(m, m)))
            V, _ = np.linalg.qr(rng.normal(size=(nv, nv)))
            sigma = np.logspace(0, -rng.uniform(4, 10), r)
            rng.shuffle(sigma)
            A = scale * (U[:, :r] * sigma) @ V[:, :r].T
            centre = scale * rng.normal(scale=2.0, size=m)
            if rng.random() < 0.5:
                centre = A @ rng.uniform(lo, hi)
        else:
            m = int(rng.integers(1, 4))
            A = rng.normal(size=(m, nv))
            centre = rng.normal(scale=2.0, size=m)
        kind = rng.integers(0, 4, size=m) if rng.random() < 0.6 else np.zeros(m, dtype=int)
        half = np.abs(centre) * rng.uniform(0, 0.5, size=m) + rng.uniform(0, 1.5, size=m) * (scale if k == special else 1)
        lower = np.where(kind == 0, centre, np.where(kind == 1, -np.inf, centre - half))
        upper = np.where(kind == 0, centre, np.where(kind == 2, np.inf, centre + half))
        levels.append((A, lower, upper))
        used += int((kind == 0).sum())
    k = int(rng.integers(0, 3))
    return Problem(levels, lo, hi, rng.normal(size=(k, nv)), rng.normal(size=k) + 0.3)

"""Strict task hierarchy under velocity constraints, in plain linear algebra (no QP solver).

This is the readable Python solver: the specification and oracle of the compiled one
(``reljac.ik._core``, same algorithm, same constants), and the fallback where it is not built.

Given priority levels ``(A_k, b_k)`` (A_k: (m_k, nv) task rows, b_k: (m_k,) desired task
velocities) and constraints ``lo <= v <= hi`` (a box, (nv,) each) and ``C v <= d`` (one-sided
rows, C: (k, nv), d: (k,)), find the joint velocity v (nv,) that

1. meets level 1 as well as possible, then level 2 in the null space of level 1, and so on
   (recursive null-space projection, Siciliano and Slotine), with singularity-robust damped
   least squares (damping grows as the smallest singular value falls below a threshold);
2. satisfies every constraint, with Saturation in the Null Space (Flacco, De Luca and Khatib): a
   joint (or row) that would cross its bound is saturated at it and taken out of the null space
   left for that level; a level that still does not fit is scaled by the largest s in [0, 1]
   that fits (its direction kept, its magnitude shrunk) and lower levels go on in what remains.

The null space left for a level is kept as an orthogonal projector P (nv, nv), so that
saturating joint j is a rank-one update of P (and of M = A P) with row and column j set exactly
to zero: a saturated joint can never move again, not even by rounding. Each level is factored in
task space, through the eigen-decomposition of its (m, m) Gram matrix G = M M^T (sigma_i^2 are
its eigenvalues); a saturation costs O(m nv + nv^2) updates and one (m, m) decomposition, never a
factorization of an (m, nv) matrix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...exceptions import TaskError
from .damping import DampingPolicy
from .identity_level import identity_correction
from .saturation import (
    REACHED_AT_ONCE,
    TIE_PATH_GAIN,
    Constraints,
    Saturations,
    crossing_is_rounding,
    max_scale,
    replay,
    saturate,
    violated_rows,
)

RANK_TOLERANCE = 1e-12  # eigenvalues of G below this x max(1, largest) count as zero (sigma < 1e-6)
MAX_STALE_SATURATIONS = 2  # stop saturating a level after this many saturations that did not help
MET_TOLERANCE = 1e-9  # a level is met when |A v - b| <= this x (1 + |b|)
AMPLIFIED = 1e4  # [rad or m] |A|_F |y| above this: the correction delta = M^T y is projected on range(P) (amplified)
SEARCH_CHOLESKY = 1e-8  # a search's mu at least this x max(1, tr G): its candidates solved with G + mu I (Level.search)
OVERFLOW = "the levels' velocities overflow (huge gains or weights): no finite solution"  # the compiled step's words


@dataclass
class Level:
    """One priority level: A v = b is wanted.

    ``identity_scale`` c marks A = c diag(mask) (mask: 1 kept, 0 masked rows; None: all kept),
    and then A may be None and b has zeros on masked rows: the level's correction is its damped
    least squares without forming A P (:func:`identity_correction`); such a level leaves no null
    space below it. ``extra_damping`` [same units as sigma^2] is added
    to the damping the policy gives (the controller's error-dependent damping, a search's
    Levenberg-Marquardt damping); an identity level takes it alone: c P r / (c^2 + extra_damping).
    ``search`` marks a search's level (:mod:`reljac.ik.search.local_search`: extra_damping is its mu): with no
    singular damping from the policy and mu >= SEARCH_CHOLESKY max(1, tr G), its correction is
    ``M^T (G + mu I)^-1 r``, every direction damped by mu and none cut (see :func:`_correction`).
    """

    A: np.ndarray | None
    b: np.ndarray
    identity_scale: float | None = None
    mask: np.ndarray | None = None
    extra_damping: float = 0.0
    search: bool = False
    # Inequality rows (issue 29), None on an equality level, else (m,) each: lower_i <= A_i v <=
    # upper_i (+-inf: one-sided; lower_i = upper_i: an equality row; b is not read). Solved by
    # reljac.ik.solvers.inequality.solve_lexicographic (the backends dispatch), never by solve_hierarchy.
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None

    @property
    def bounded(self) -> bool:
        """True when the level has bounds (inequality rows), see ``lower`` / ``upper``. A level of
        no rows (b empty: a collision level with no pair near, a task whose rows are all weighted
        0) asks nothing and has no bounds, on both backends: it does not choose the solver."""
        return (self.lower is not None or self.upper is not None) and self.rows > 0

    def times(self, x: np.ndarray) -> np.ndarray:
        """A @ x."""
        if self.A is not None:
            return self.A @ x
        y = self.identity_scale * x
        return y if self.mask is None else self.mask * y

    @property
    def rows(self) -> int:
        return self.b.shape[0]


@dataclass
class LevelReport:
    """What happened to one level.

    scale: the factor s in [0, 1] applied to its correction (1: not scaled).
    saturated: velocity indices of the joints saturated for it; saturated_rows: indices of the
        constraint rows C saturated for it.
    damping: lambda^2 used; smallest_singular_value: of the level inside the null space it got.
    residual: |A v - b| at the solution [the level's units]; met: residual <= 1e-9 (1 + |b|).
    limit_kind, limit_index: what stopped the level short when it is scaled (s < 1) or left
    without freedom: 0 a joint's bound (index: its velocity index), 1 a constraint row (index:
    its row of C), 2 no freedom left by the levels above, -1 nothing. A level can be scaled to 0
    with nothing saturated (the joint it needs sits on its bound): this says which.
    exact: no damping at this level nor at any level above it (nor at the recovery of violated
        rows of C): its residual is the least the levels above leave it (strict priority, as
        undamped) where no bound binds; a level scaled (scale < 1) or with joints saturated keeps
        its direction, which can be above the least violation the bounds allow (a task with
        bounds gets that from the bounded solver). False: damping traded exactness, here or
        above (a damped level's velocity is not its least-squares one, and the levels below are
        solved from it): see the guide's "What damping trades" (docs/guide/controller.md).
    The controller fills in ``tasks`` (names), ``saturated_joints`` (joint names of
    ``saturated``), ``saturated_constraints`` (names of the rows) and ``limited_by`` (the name
    of what limit_kind / limit_index point at, '' for nothing).
    """

    scale: float
    saturated: list[int] = field(default_factory=list)
    saturated_rows: list[int] = field(default_factory=list)
    damping: float = 0.0
    smallest_singular_value: float = float("inf")
    residual: float = 0.0
    met: bool = True
    limit_kind: int = -1
    limit_index: int = -1
    exact: bool = True
    tasks: list[str] = field(default_factory=list)
    saturated_joints: list[str] = field(default_factory=list)
    saturated_constraints: list[str] = field(default_factory=list)
    limited_by: str = ""
    # Filled in on levels with bounds (reljac.ik.solvers.inequality, whose docstring says what they mean):
    # active rows, margins (m,), active-set changes, capped, held (level, row) rows of levels
    # above, limit_level (of limit_kind 3, a row of a level above); active_rows (the controller's names).
    active: list[int] = field(default_factory=list)
    margins: np.ndarray | None = None
    changes: int = 0
    capped: bool = False
    held: list[tuple[int, int]] = field(default_factory=list)
    limit_level: int = -1
    active_rows: list[str] = field(default_factory=list)
    # Filled in by the controller: the level's inequality rows on a bound or beyond it once every
    # level was solved (active at its own solution, or held on the bound by a level below: in a
    # lower level's held), indices in its stacked rows, sorted, and their names.
    on_bound: list[int] = field(default_factory=list)
    on_bound_rows: list[str] = field(default_factory=list)


@dataclass
class _Step:
    """A level's correction inside the free null space: v = base + s delta."""

    delta: np.ndarray
    A_delta: np.ndarray
    rank_basis: np.ndarray | None  # W (nv, r): orthonormal basis of the level's rows in P's range
    damping: float
    smallest: float


def amplified(level: Level, y: np.ndarray) -> bool:
    """Whether a correction delta = M^T y is projected on range(P) (P delta): M = A P is rounded at
    eps |A|, so M^T y leaves range(P) by about eps |A|_F |y| [rad or m] and moves the levels above
    by that; where the level lies nearly in their span (|M| << |A|, y large: an undamped level) it
    is no longer negligible. Projected when |A|_F |y| > AMPLIFIED (that rounding above ~1e-12); the
    check costs O(m nv), the projection O(nv^2) only then."""
    assert level.A is not None
    return float(np.linalg.norm(level.A)) * float(np.linalg.norm(y)) > AMPLIFIED


def _correction(level: Level, M: np.ndarray | None, P: np.ndarray, residual: np.ndarray,
                policy: DampingPolicy) -> _Step:
    """Damped least-squares correction delta (in range(P)) of A delta = residual.

    Through the eigen-decomposition of G = M M^T: eigenvalues below RANK_TOLERANCE max(1, largest)
    are cut, the others damped by lambda^2. A search's level (``level.search``) with no singular
    damping and mu = extra_damping >= SEARCH_CHOLESKY max(1, tr G) takes ``M^T (G + mu I)^-1 r``
    instead (the compiled solver: one Cholesky factorization per candidate, and the
    eigen-decomposition only for the row space of the candidate chosen): the same where G's small
    eigenvalues are exact zeros (joints saturated out of M: M^T u = 0 there), and where they are
    merely small, those directions damped by mu rather than cut. Below that mu, the rounding of
    (G + mu I)^-1 along G's null directions would no longer be negligible (relative eps tr G / mu).
    The row space W is G's eigen-decomposition's either way. delta = M^T y is projected on
    range(P) where its rounding outside it may matter (:func:`amplified`).
    The compiled solver computes the same matrix functions without the eigen-decomposition where it
    can certify what that would find (src/core/hierarchy_rank.hpp): by Cholesky factors at full
    rank, and, at a rank k < m, on k pivot rows of M from a Cholesky factorization of G with
    diagonal pivoting (W from those rows, delta = W (B^T B + lambda^2 I)^-1 B^T r with G = B B^T).
    """
    if level.identity_scale is not None:  # A = c diag(mask)
        delta = identity_correction(level.identity_scale, level.mask, level.extra_damping, P, residual,
                                    rank_tolerance=RANK_TOLERANCE, amplified=AMPLIFIED)
        return _Step(delta, level.times(delta), None, level.extra_damping, float("inf"))
    assert M is not None  # a level without identity_scale has its rows
    G = M @ M.T
    eigenvalues, U = np.linalg.eigh(G)  # ascending
    eigenvalues, U = eigenvalues[::-1], U[:, ::-1]
    largest = eigenvalues[0] if eigenvalues.size else 0.0
    rank = int(np.count_nonzero(eigenvalues > RANK_TOLERANCE * max(1.0, largest)))
    smallest = float(np.sqrt(eigenvalues[rank - 1])) if rank == level.rows else 0.0
    lam2 = policy.damping(smallest) + level.extra_damping
    e, U_r = eigenvalues[:rank], U[:, :rank]
    mu = level.extra_damping
    if level.search and policy.damping(0.0) == 0.0 and mu >= SEARCH_CHOLESKY * max(1.0, float(np.trace(G))):
        y = np.linalg.solve(G + mu * np.eye(level.rows), residual)
    else:
        y = U_r @ ((U_r.T @ residual) / (e + lam2))
    delta = M.T @ y
    if amplified(level, y):
        delta = P @ delta
    W = M.T @ (U_r / np.sqrt(e))  # M^T U_r Sigma_r^-1: the level's row space inside range(P)
    return _Step(delta, level.times(delta), W, lam2, smallest)


@dataclass
class _Candidate:
    remaining: float
    scale: float
    v: np.ndarray
    P: np.ndarray
    dim: int
    step: _Step
    saturated: list[int]
    saturated_rows: list[int]
    limit: tuple[int, int]  # (kind, index) of what limited the scale, (-1, -1) at s = 1


def _solve_level(level: Level, v_prev: np.ndarray, P: np.ndarray, dim: int, held: list[int], cons: Constraints,
                 policy: DampingPolicy) -> tuple[np.ndarray, np.ndarray, int, LevelReport]:
    """One SNS level: (v, projector and dimension left for the levels below, report).

    `held`: rows of C saturated above (extended in place by this level's saturated rows).

    v = base + s delta: base moves the saturated joints (rows) onto their bounds inside range(P),
    so the levels above are untouched; delta is the damped least-squares correction of this
    level in what is left once they are frozen. The most critical constraint is saturated
    first; of the candidates seen, the one whose residual |A v - b| is smallest wins (for a
    level that fits, the first one, met exactly). Ties reached at once (two rows; a joint, then a
    row) are then explored as paths of their own, unless the level is met (saturation.Saturations: at most
    MAX_TIE_PATHS + 1 per level, a path's candidate taken if it lowers the residual by
    TIE_PATH_GAIN of it).
    """
    best: _Candidate | None = None
    saturations = Saturations()  # made, and the ties SNS's path broke by order, explored after it
    base, P_free, M, free, saturated, saturated_rows = replay(level.A, v_prev, P, dim, cons, saturations.done)
    met = MET_TOLERANCE * (1.0 + float(np.linalg.norm(level.b)))  # a residual this small meets the level
    gain = 1e-9  # the fraction of the best residual a candidate must lower it by (a tie path's: TIE_PATH_GAIN)
    while True:
        stale = 0  # saturations in a row that did not lower the residual
        pinned: list[int] = []  # joints saturate refused: they cannot move in what is left
        for _ in range(v_prev.shape[0] + cons.C.shape[0] + 1):
            residual = level.b - level.times(base)
            step = _correction(level, M, P_free, residual, policy)
            s, kind, j = max_scale(base, step.delta, cons, held + saturated_rows, pinned)
            if s < 0:  # freezing the last one pushed another out: keep the best so far
                if kind == 1:
                    saturations.pushed_out(j)
                break
            remaining = float(np.linalg.norm(s * step.A_delta - residual))
            if best is None or remaining < best.remaining * (1.0 - gain) - 1e-15:
                best = _Candidate(remaining, s, base + s * step.delta, P_free.copy(), free, step,
                                  list(saturated), list(saturated_rows), (kind, j) if s < 1.0 else (-1, -1))
                stale = 0
            elif s > REACHED_AT_ONCE:  # s ~ 0: a joint sits on its bound; freezing it is free, keep going
                stale += 1
            if s >= 1.0 or stale >= MAX_STALE_SATURATIONS or free == 0:
                break
            if kind == 0:  # the joint goes onto the bound it was about to cross
                target = cons.hi[j] if step.delta[j] > 0 else cons.lo[j]
                if not saturate(P_free, M, base, None, j, target):  # cannot move in what is left
                    if not crossing_is_rounding(base, step.delta, cons, j):
                        break
                    pinned.append(j)  # its crossing is rounding (as a refused row's): skipped from here on
                    continue
                saturated.append(j)
                saturations.add(0, j, float(target), s)
            else:
                saturations.tie(j, s)
                moved = saturate(P_free, M, base, cons.C[j], j, float(cons.d[j]))
                saturated_rows.append(j)  # refused: in the span saturated (crossed by rounding only): held
                saturations.add(1, j, float(cons.d[j]), s)
                if not moved:
                    continue
            free -= 1
        row = saturations.next_path()  # a tie's path: the row or joint held first let go, this row held where it is
        if row < 0 or (best is not None and best.remaining <= met):  # (met: nothing to gain but rounding)
            break
        gain = TIE_PATH_GAIN
        base, P_free, M, free, saturated, saturated_rows = replay(level.A, v_prev, P, dim, cons, saturations.done)
        target = min(float(cons.C[row] @ base), float(cons.d[row]))
        saturated_rows.append(row)
        saturations.add(1, row, target, 0.0)
        free -= saturate(P_free, M, base, cons.C[row], row, target)
    if best is None:  # cannot happen while v_prev satisfies the constraints; stay safe anyway
        v = np.minimum(np.maximum(v_prev, cons.lo), cons.hi)
        residual = float(np.linalg.norm(level.times(v) - level.b))
        return v, P, dim, LevelReport(0.0, residual=residual, met=False)
    v = np.minimum(np.maximum(best.v, cons.lo), cons.hi)  # rounding only
    held.extend(best.saturated_rows)
    step = best.step
    if step.rank_basis is None:  # an identity level uses every direction it can
        P_next, dim_next = np.zeros_like(P), 0
    else:
        W = step.rank_basis
        P_next, dim_next = best.P - W @ W.T, best.dim - W.shape[1]  # saturated rows of W are exactly 0
    residual = float(np.linalg.norm(level.times(v) - level.b))
    met = residual <= MET_TOLERANCE * (1.0 + float(np.linalg.norm(level.b)))
    return v, P_next, dim_next, LevelReport(best.scale, best.saturated, best.saturated_rows, step.damping,
                                            step.smallest, residual, met, *best.limit)


def solve_hierarchy(
    levels: list[Level],
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    policy: DampingPolicy | None = None,
    C: np.ndarray | None = None,
    d: np.ndarray | None = None,
) -> tuple[np.ndarray, list[LevelReport]]:
    """Joint velocity v (nv,) for prioritized levels inside ``lo <= v <= hi`` and ``C v <= d``.

    ``lo <= hi`` must hold element-wise (callers clip their bounds). Rows of C that v = clip(0,
    lo, hi) violates (a pair already too close) are first met as a level of their own, above
    every task level, within the box and the other rows (recovery): then held, lower levels
    cannot undo them. The result satisfies the constraints: when a level cannot be met it is
    scaled down, never the constraints relaxed.

    Raises:
        TaskError: the levels' rows overflow float64 (huge gains, weights or targets), as the
            compiled solver says; a level has bounds (inequality rows: solved by
            ``reljac.ik.solvers.inequality.solve_lexicographic``, which the backends call for them).
    """
    bounded = next((k for k, level in enumerate(levels) if level.bounded), None)
    if bounded is not None:
        raise TaskError(f"level {bounded} has bounds (inequality rows): solve_hierarchy takes equality levels only; "
                        "use reljac.ik.solvers.inequality.solve_lexicographic")
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is the TaskError below
            v, reports = _solve_hierarchy(levels, lo, hi, policy or DampingPolicy(), C, d)
    except np.linalg.LinAlgError:  # eigh of a Gram matrix with inf or NaN entries
        raise TaskError(OVERFLOW) from None
    if not np.isfinite(v).all():
        raise TaskError(OVERFLOW)
    return v, reports


def _solve_hierarchy(levels: list[Level], lo: np.ndarray, hi: np.ndarray, policy: DampingPolicy,
                     C: np.ndarray | None, d: np.ndarray | None) -> tuple[np.ndarray, list[LevelReport]]:
    """solve_hierarchy's work (its docstring)."""
    nv = lo.shape[0]
    cons = Constraints.box(lo, hi) if C is None or d is None else Constraints(lo, hi, C, d)
    v = np.minimum(np.maximum(0.0, lo), hi)  # zero if feasible, else the nearest point of the box
    P, dim = np.eye(nv), nv
    held: list[int] = []  # rows of C saturated so far: their direction is out of P
    violated = violated_rows(cons, v)
    damped = False  # a level so far (the recovery included) was damped: the ones below are not exact
    if violated:  # recovery: C_j v = d_j for the violated rows, as the first level
        held.extend(violated)
        recovery = Level(cons.C[violated], cons.d[violated])
        v, P, dim, report = _solve_level(recovery, v, P, dim, held, cons, policy)
        damped = report.damping > 0.0
    reports = []
    for level in levels:
        if level.rows == 0:  # every row masked out: nothing asked
            reports.append(LevelReport(scale=1.0, exact=not damped))
            continue
        if dim == 0:  # nothing left for lower levels
            residual = float(np.linalg.norm(level.times(v) - level.b))
            met = residual <= MET_TOLERANCE * (1.0 + float(np.linalg.norm(level.b)))
            reports.append(LevelReport(scale=0.0, residual=residual, met=met, limit_kind=-1 if met else 2,
                                       exact=not damped))
            continue
        v, P, dim, report = _solve_level(level, v, P, dim, held, cons, policy)
        damped = damped or report.damping > 0.0
        report.exact = not damped
        reports.append(report)
    return v, reports

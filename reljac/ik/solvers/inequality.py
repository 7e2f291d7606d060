"""Strict task hierarchy with inequality rows at any level (issue 29), in plain linear algebra.

The readable specification of the hierarchy whose levels hold bounds: each level's rows ask
``lower_i <= A_i v <= upper_i`` (one-sided with -inf / +inf; an equality row has lower_i =
upper_i), under the constraints ``lo <= v <= hi`` and ``C v <= d`` held above every level. The
levels are met in strict (lexicographic) order of least violation, the meaning of the cascade of
QPs of Kanoun et al. and OpenSoT's iHQP, with no QP solver at run time:

1. level k minimizes the squared distance of its rows to their intervals (rows inside with
   margin cost nothing) plus the damping term, among the velocities that keep what the levels
   above reached (:func:`reljac.ik.solvers.active_set.solve_level`, an active-set search in the SNS
   structure: projector, saturations, damped least squares in task space);
2. what level k leaves to the levels below: its equality rows and its rows left beyond a bound
   keep their values (their directions leave the null-space projector, as in the equality
   solver), and its rows inside their interval or on a bound become one-sided rows the levels
   below must keep (an inequality a level satisfies is never violated below it); a joint or row
   of C held on its bound at level k is not frozen: a level below may leave it if it can;
3. rows of C that the start violates are first met, as far as the box allows, by a level of
   their own above every task level (recovery), as in the equality solver;
4. what the levels leave free is filled by the velocity of least norm that keeps what every
   level reached (:func:`_least_norm`: an undamped level of identity rows aiming at 0 below the
   last one, HQP's regularization): the one solution, whatever path the levels' searches took.

Where the box or C stops a level, the level is met in the least-squares sense (the closest the
constraints allow), not scaled along its direction as the equality solver's SNS does: the two
differ on equality levels that do not fit. :func:`solve_lexicographic` is used for a hierarchy
with at least one bounded level (:mod:`reljac.ik.solvers.backend` dispatches); hierarchies of equality
levels keep :func:`reljac.ik.solvers.hierarchy.solve_hierarchy`.

**Reports** (:class:`reljac.ik.solvers.hierarchy.LevelReport`, at the level's own solution as for the
equality solver): ``residual`` is the level's violation (the norm of its rows' distances to
their intervals) and ``met`` says it is within 1e-9 (1 + |the nearest rates inside the
bounds|); ``scale`` is 1 (levels are never scaled here); ``saturated`` / ``saturated_rows`` are
the joints and rows of C held on their bound when the level ends; ``active`` lists the level's
inequality rows (indices in its stacked rows) at a bound or beyond it, ``margins`` (m,) how far
each row is inside its interval (an equality row's is one point; negative: violated by that
much); ``changes`` counts the level's active-set changes, ``capped`` says it stopped at the cap
on them at the best feasible point
reached; ``held`` names the inequality rows of levels above, (level, row), held on their bound;
``limit_kind`` / ``limit_index`` / ``limit_level`` point at the held row with the largest
multiplier when the level is not met (0 a joint, 1 a row of C, 3 row limit_index of level
limit_level), else 2 when the levels above took directions it needs. The controller names the
active rows in ``active_rows`` ("task name[component]").
"""

from __future__ import annotations

import numpy as np

from ...exceptions import TaskError
from .active_set import HardRows, LevelResult, LevelRows, change_cap, solve_level
from .active_set_algebra import rank, row_basis, smallest_singular_value
from .damping import DampingPolicy
from .hierarchy import MET_TOLERANCE, OVERFLOW, Level, LevelReport
from .saturation import Constraints, violated_rows

JOINT, ROW, NO_FREEDOM, LEVEL_ROW = 0, 1, 2, 3  # LevelReport.limit_kind


def has_bounds(levels: list[Level]) -> bool:
    """True when a level holds inequality rows (then :func:`solve_lexicographic` solves them)."""
    return any(level.bounded for level in levels)


def level_rows(level: Level, nv: int, index: int) -> LevelRows:
    """A level's rows made explicit: an identity level's kept rows as c times rows of the
    identity, an equality level's rows as lower = upper = b.

    Raises:
        TaskError: bounds of the wrong shape, NaN, or a lower bound above its upper bound.
    """
    m = level.rows
    if m == 0:  # nothing asked (whatever A is)
        return LevelRows(np.zeros((0, nv)), np.zeros(0), np.zeros(0), level.extra_damping)
    if level.A is None:
        kept = np.ones(nv, dtype=bool) if level.mask is None else level.mask > 0
        scale = 1.0 if level.identity_scale is None else level.identity_scale
        A = scale * np.eye(nv)[kept]
    else:
        kept, A = np.ones(m, dtype=bool), np.asarray(level.A, dtype=float)
    bounds = []
    for name, given, default in (("lower", level.lower, -np.inf), ("upper", level.upper, np.inf)):
        if level.lower is None and level.upper is None:  # an equality level
            bounds.append(np.asarray(level.b, dtype=float))
            continue
        x = np.full(m, default) if given is None else np.asarray(given, dtype=float)
        if x.shape != (m,) or np.isnan(x).any():
            raise TaskError(f"level {index}: {name} must be ({m},) numbers (+-inf allowed), got {given!r}")
        bounds.append(x)
    lower, upper = bounds[0][kept], bounds[1][kept]
    if (lower > upper).any():
        i = int(np.flatnonzero(lower > upper)[0])
        raise TaskError(f"level {index}: row {i} has lower bound {lower[i]} above its upper bound {upper[i]}")
    return LevelRows(A, lower, upper, level.extra_damping)


def _distances(rows: LevelRows, v: np.ndarray) -> np.ndarray:
    """How far each row's A_i v is outside its interval (0 inside)."""
    x = rows.A @ v
    return np.maximum(x - rows.upper, 0.0) + np.maximum(rows.lower - x, 0.0)


def violation(rows: LevelRows, v: np.ndarray) -> float:
    """The level's violation at v: the norm of its rows' distances to their intervals."""
    return float(np.linalg.norm(_distances(rows, v)))


def solve_lexicographic(
    levels: list[Level],
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    policy: DampingPolicy | None = None,
    C: np.ndarray | None = None,
    d: np.ndarray | None = None,
    warm: WarmStart | None = None,
) -> tuple[np.ndarray, list[LevelReport]]:
    """Joint velocity v (nv,) for prioritized levels with inequality rows, inside ``lo <= v <=
    hi`` (lo <= hi) and ``C v <= d``: see the module docstring. Levels without bounds are
    equality levels (``A v = b``). The result keeps the box and the rows of C (up to rounding).
    `warm`: the sets of a controller's previous step (:class:`WarmStart`, updated), tried first
    by each level; not used for a search's levels (``Level.search``: each search step is cold).
    It changes the path of the search, not what it ends at: the same violations, level by level.

    Raises:
        TaskError: bad bounds on a level (:func:`level_rows`), or the levels' rows overflow
            float64 (huge gains, weights or targets).
    """
    nv = lo.shape[0]
    rows = [level_rows(level, nv, k) for k, level in enumerate(levels)]
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is the TaskError below
            warm = None if any(level.search for level in levels) else warm
            v, reports = _solve(rows, lo, hi, policy or DampingPolicy(), C, d, warm)
    except np.linalg.LinAlgError:  # a Gram matrix with inf or NaN entries
        raise TaskError(OVERFLOW) from None
    if not np.isfinite(v).all():
        raise TaskError(OVERFLOW)
    # inside the box: rounding, or levels of huge magnitudes (a posture of gain 1e20 or weight 1e10
    # below bounded levels: steps of 1e20 rad/s whose ratio tests cancel left a joint 0.9-172 rad/s
    # beyond its velocity limit), as the equality solver's step
    return np.minimum(np.maximum(v, lo), hi), reports


def _hard_rows(lo: np.ndarray, hi: np.ndarray, C: np.ndarray, d: np.ndarray, skip: list[int]) -> HardRows:
    """The box (finite bounds: v_j <= hi_j as e_j, -v_j <= -lo_j as -e_j) and the rows of C not in `skip`."""
    nv = lo.shape[0]
    eye = np.eye(nv)
    up, down = np.flatnonzero(np.isfinite(hi)), np.flatnonzero(np.isfinite(lo))
    kept = [j for j in range(C.shape[0]) if j not in skip]
    return HardRows(np.vstack([eye[up], -eye[down], C[kept].reshape(len(kept), nv)]),
                    np.concatenate([hi[up], -lo[down], d[kept]]),
                    [(JOINT, int(j), -1) for j in up] + [(JOINT, int(j), -1) for j in down] +
                    [(ROW, j, -1) for j in kept], [1] * len(up) + [-1] * len(down) + [1] * len(kept))


class WarmStart:
    """The sets each level ended with at the last solve, kept between the control steps of one
    controller (a warm start: each level first tries them, :func:`reljac.ik.solvers.active_set.solve_level`).
    Per level index: (its row count, its working set by hard-row name (kind, index, level, side),
    its soft set: row -> +1 aiming at its upper bound, -1 at its lower one). A level whose guess
    failed waits before trying again, one solve more after each failure in a row (at most
    MAX_WAIT): a level whose sets are not optimal from step to step costs little (its result is
    the search's either way)."""

    MAX_WAIT = 8

    def __init__(self) -> None:
        self.levels: dict[int, tuple[int, list[tuple[int, int, int, int]], dict[int, int]]] = {}
        self.misses: dict[int, int] = {}  # failed guesses in a row
        self.wait: dict[int, int] = {}  # solves left before the next guess

    def guess(self, k: int, rows: LevelRows, hard: HardRows) -> tuple[list[int], dict[int, float]] | None:
        """Level k's sets of the last solve in this solve's indices: None (a cold start) for a level
        not solved then, whose row count changed, or waiting after a failed guess; hard rows no
        longer there, and soft rows now equality rows or whose bound is now infinite, dropped (the
        guess is checked anyway)."""
        kept = self.levels.get(k)
        if kept is None or kept[0] != rows.A.shape[0]:
            return None
        if self.wait.get(k, 0) > 0:
            self.wait[k] -= 1
            return None
        index = {hard.key(j): j for j in range(len(hard.tags))}
        working = [index[key] for key in kept[1] if key in index]
        soft = {}
        for i, side in kept[2].items():
            bound = rows.upper[i] if side > 0 else rows.lower[i]
            if not rows.equal[i] and np.isfinite(bound):
                soft[i] = float(bound)
        return working, soft

    def keep(self, k: int, rows: LevelRows, hard: HardRows, result: LevelResult, guessed: bool) -> None:
        """Level k's sets at the end of its solve; `guessed`: a guess was tried (result.guessed: taken)."""
        if guessed:
            self.misses[k] = 0 if result.guessed else self.misses.get(k, 0) + 1
            self.wait[k] = min(self.misses[k], self.MAX_WAIT)
        self.levels[k] = (rows.A.shape[0], [hard.key(j) for j in result.working],
                          {i: 1 if aim == rows.upper[i] else -1 for i, aim in result.soft.items()})


def _solve(rows: list[LevelRows], lo: np.ndarray, hi: np.ndarray, policy: DampingPolicy,
           C: np.ndarray | None, d: np.ndarray | None, warm: WarmStart | None) -> tuple[np.ndarray, list[LevelReport]]:
    nv = lo.shape[0]
    C = np.zeros((0, nv)) if C is None or d is None else C
    d = np.zeros(0) if C.shape[0] == 0 or d is None else d
    v = np.minimum(np.maximum(0.0, lo), hi)  # zero if feasible, else the nearest point of the box
    P = np.eye(nv)
    violated = violated_rows(Constraints(lo, hi, C, d), v)
    hard = _hard_rows(lo, hi, C, d, violated)
    working: list[int] = []  # the working set a level ends with: the next one starts from it
    damped = False  # a level so far (the recovery included) was damped: the ones below are not exact
    if violated:  # recovery: C_j v <= d_j for the rows the start violates, as a level above all
        recovery = LevelRows(C[violated], np.full(len(violated), -np.inf), d[violated])
        tags = [(ROW, j, -1) for j in violated]
        v, P, hard, report, working = _level(recovery, tags, v, P, hard, policy, -1, working, None)
        damped = report.damping > 0.0
    reports = []
    for k, level in enumerate(rows):
        if level.A.shape[0] == 0:  # every row masked out: nothing asked
            reports.append(LevelReport(scale=1.0, exact=not damped))
            continue
        tags = [(LEVEL_ROW, i, k) for i in range(level.A.shape[0])]
        v, P, hard, report, working = _level(level, tags, v, P, hard, policy, k, working, warm)
        damped = damped or report.damping > 0.0
        report.exact = not damped
        reports.append(report)
    if round(float(np.trace(P))) > 0:  # freedom no level took
        v = _least_norm(v, P, hard, working)
    return v, reports


def _least_norm(v: np.ndarray, P: np.ndarray, hard: HardRows, start: list[int]) -> np.ndarray:
    """The velocity nearest 0 among those that keep what every level reached, ``v + P s`` inside
    the hard rows (the box, C, the levels' rows left inside their bounds): an undamped level of
    identity rows aiming at 0 below the last one, HQP's regularization. Where the levels leave
    directions free this is the one solution the levels do not choose between, so that both
    solvers give it, wherever their searches went (and v is the equality solver's where no bound
    is reached: its steps are least norm)."""
    nv = v.shape[0]
    fill = LevelRows(np.eye(nv), np.zeros(nv), np.zeros(nv), identity=True)
    return solve_level(fill, v, P, hard, 0.0, change_cap(nv, hard.N.shape[0], nv), start, None).v


def _level(rows: LevelRows, tags: list[tuple[int, int, int]], v: np.ndarray, P: np.ndarray, hard: HardRows,
           policy: DampingPolicy, index: int, start: list[int], warm: WarmStart | None,
           ) -> tuple[np.ndarray, np.ndarray, HardRows, LevelReport, list[int]]:
    """One level, first from the sets `warm` kept for it (then they are updated), else its search
    started from the working set `start`: (v, the projector and hard rows left for the levels
    below (after the last level: for the least-norm fill), its report, its working set at the
    end). A level of more rows than the dimension P leaves (its trace, rounded) is
    rank-deficient: its smallest singular value is 0."""
    smallest = 0.0 if rows.A.shape[0] > round(float(np.trace(P))) else smallest_singular_value(rows.A @ P)
    lam2 = policy.damping(smallest) + rows.extra_damping
    cap = change_cap(v.shape[0], hard.N.shape[0], rows.A.shape[0])
    guess = warm.guess(index, rows, hard) if warm is not None else None
    result = solve_level(rows, v, P, hard, lam2, cap, start, guess)
    if warm is not None:
        warm.keep(index, rows, hard, result, guess is not None)
    v = result.v
    distance = _distances(rows, v)
    scale = float(np.linalg.norm(np.clip(rows.A @ v, rows.lower, rows.upper)))
    tol = MET_TOLERANCE * (1.0 + scale)
    report = _report(rows, result, hard, P, v, distance, tol, lam2, smallest, index)
    fixed = rows.equal | (distance > tol)  # their values stay: out of the null space below
    P_next = P - (W := row_basis(rows.A[fixed] @ P)) @ W.T
    inside = ~fixed  # inequality rows inside or on their bounds: kept by the levels below
    new_N, new_h, new_tags, new_sides = [], [], [], []
    for i in np.flatnonzero(inside).tolist():
        if np.isfinite(rows.upper[i]):
            new_N.append(rows.A[i])
            new_h.append(rows.upper[i])
            new_tags.append(tags[i])
            new_sides.append(1)
        if np.isfinite(rows.lower[i]):
            new_N.append(-rows.A[i])
            new_h.append(-rows.lower[i])
            new_tags.append(tags[i])
            new_sides.append(-1)
    hard_next = hard.extended(np.array(new_N), np.array(new_h), new_tags, new_sides) if new_N else hard
    return v, P_next, hard_next, report, result.working


def _report(rows: LevelRows, result: LevelResult, hard: HardRows, P: np.ndarray, v: np.ndarray,
            distance: np.ndarray, tol: float, lam2: float, smallest: float, index: int) -> LevelReport:
    residual = float(np.linalg.norm(distance))
    met = residual <= tol
    x = rows.A @ v
    margins = np.minimum(x - rows.lower, rows.upper - x)
    tags = [hard.tags[j] for j in result.working]
    report = LevelReport(
        scale=1.0, damping=lam2, smallest_singular_value=smallest, residual=residual, met=met,
        saturated=sorted({i for kind, i, _ in tags if kind == JOINT}),
        saturated_rows=sorted({i for kind, i, _ in tags if kind == ROW}),
        active=[int(i) for i in np.flatnonzero(~rows.equal & (margins <= tol))],
        margins=margins, changes=result.changes, capped=result.capped,
        held=sorted({(level, i) for kind, i, level in tags if kind == LEVEL_ROW}))
    if not met:
        if tags:
            mu = result.multipliers
            kind, i, level = tags[int(np.argmax(mu))] if mu is not None and mu.size == len(tags) else tags[0]
            report.limit_kind, report.limit_index, report.limit_level = kind, i, level
        elif rank(rows.A @ P) < rank(rows.A):
            report.limit_kind = NO_FREEDOM
    return report

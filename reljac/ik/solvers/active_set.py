"""One level of the inequality hierarchy (:mod:`reljac.ik.solvers.inequality`): a primal active-set
search expressed in the structure of Saturation in the Null Space, without a QP solver.

A level has rows ``lower_i <= A_i v <= upper_i`` (an equality row has ``lower_i = upper_i``) and
must keep the one-sided *hard rows* ``n_j^T v <= h_j`` (the joint box, the rows of C, the
inequality rows the levels above left inside their bounds), moving only in the affine space
``v_prev + range(P_in)`` the levels above left (P_in: (nv, nv) orthogonal projector). It finds

    min  sum_i dist(A_i v, [lower_i, upper_i])^2 + lambda^2 |v - v_prev|^2   (lambda^2 >= 0)

over that set: rows inside their interval cost nothing, rows outside cost their squared
distance (least violation). Two sets steer the search:

* the *working set* W of hard rows held on their bound: each one is a saturation, a rank-one
  restriction of the projector (as SNS saturates a joint); a hard row is added when the step
  would cross it (the step stops there), and released when its Lagrange multiplier says the
  level gains by leaving it (the release SNS lacks);
* the *soft set* S of the level's own inequality rows beyond a bound: they are least-squares rows
  aiming at that bound.

Each iteration takes the damped least-squares step of the equality and S rows inside range(P_W)
(the task-space Gram matrix's eigen-decomposition, as the equality solver), projected once more
onto the face. Along it the step goes to the first hard row it would cross, or else to the
minimum of the level's true objective along the step (its rows' distances are piecewise
quadratic there: a row crossing a bound changes the slope, it does not stop the step), at most
the full step; S is then read anew at the point reached (rows beyond a bound by more than the
rounding allowance aim at it, S rows on their aim stay). The objective falls at every step that
moves, so the soft set cannot cycle (stopping at each crossing did: a row on its bound entered
and left S at zero step, undamped, on Talos's band level). Where S did not change the point is
the model's minimum in the face, and it is optimal when every multiplier has the right sign (the
objective is convex and C^1); a least multiplier whose sign is rounding's (within the release
test's band about 0) on a level not met has its release tried once, kept only where the level's
objective drops beyond rounding (TRIAL_GAIN). With lambda = 0 the step is the minimum-norm one from the current
point; with lambda > 0 the objective is anchored at v_prev and strictly convex. The number of
changes of W and S per level is capped (a bounded worst case); at the cap the search stops at
the best feasible point reached. A hard row with no freedom left in the face (fixed by the
levels above and the rows held) is never reached by a step in it: its rate is rounding, not an
event.

Tolerances are each row's own (a bound of 1.8e308 on a floating base does not widen another
row's), and a level starts from the working set the level above ended with.

A controller's level may first try a guess (a warm start: the sets it ended with at the previous
control step, :class:`reljac.ik.solvers.inequality.WarmStart`): v moved onto the guessed hard rows'
bounds, the model's minimum there, kept only when it is optimal (the conditions the search ends
on) and where the search from v_prev would have gone too (no row moved onto or pulled onto its
bound that the level does not push against): else the search above, from v_prev.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .active_set_algebra import damped_step, face
from .hierarchy import MET_TOLERANCE
from .saturation import BOUND_TOLERANCE, PIVOT_TOLERANCE

MULTIPLIER_TOLERANCE = 1e-9  # a multiplier below -this x max(1, |P g|) (per unit normal) releases its row
# A least multiplier within the release test's band about 0 (|mu| below MULTIPLIER_TOLERANCE x
# max(1, |P g|): its sign is rounding's) on a level not met: its release is tried once and kept when
# the level's objective then drops by more than TRIAL_GAIN (relative), else the search ends where it
# was (issue 43: a held row whose release gains only along a fine direction has a multiplier of the
# size of |P g|, below 1e-9, of either sign on ill-conditioned levels)
TRIAL_GAIN = 1e-7
CAP_BASE = 10  # changes of the active sets allowed per level: CAP_BASE + 2 (nv + hard rows + own rows)


def change_cap(nv: int, hard_rows: int, rows: int) -> int:
    """The cap on active-set changes of one level (the worst case stays bounded)."""
    return CAP_BASE + 2 * (nv + hard_rows + rows)


@dataclass
class HardRows:
    """One-sided rows every level keeps: ``N v <= h``, N (k, nv), h (k,). ``tags[j]`` says what
    row j is, (kind, index, level): kind 0 a joint's bound (index: its velocity index), 1 a row
    of C, 3 row `index` of level `level`; ``sides[j]`` which bound, +1 an upper one (N_j = +a),
    -1 a lower one (N_j = -a). (tag, side) names a row across control steps (a warm start)."""

    N: np.ndarray
    h: np.ndarray
    tags: list[tuple[int, int, int]]
    sides: list[int]

    def extended(self, N: np.ndarray, h: np.ndarray, tags: list[tuple[int, int, int]], sides: list[int]) -> HardRows:
        return HardRows(np.vstack([self.N, N]), np.concatenate([self.h, h]), self.tags + tags, self.sides + sides)

    def key(self, j: int) -> tuple[int, int, int, int]:
        """Hard row j's name across steps: (kind, index, level, side)."""
        return (*self.tags[j], self.sides[j])


@dataclass
class LevelRows:
    """A level's rows: ``lower <= A v <= upper``, A (m, nv); ``equal`` marks the equality rows.
    ``identity``: A is the identity (nv, nv) and every row an equality row (the least-norm fill):
    an undamped step is then the face's projection of the aims less v, with no factorization."""

    A: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    extra_damping: float = 0.0
    identity: bool = False

    @property
    def equal(self) -> np.ndarray:
        return self.lower == self.upper


@dataclass
class LevelResult:
    """What the search of one level ended with: v (nv,), the working set (indices of hard
    rows), the soft active set (row -> the bound it aims at), the multipliers of the working set
    at the end (None: not computed there), the changes made, whether it stopped early, and
    whether a warm start's guess was taken."""

    v: np.ndarray
    working: list[int]
    soft: dict[int, float]
    multipliers: np.ndarray | None
    changes: int
    capped: bool = False
    guessed: bool = False  # a warm start's guess was optimal: taken


def _tolerance(*arrays: np.ndarray) -> float:
    """Rounding allowance on a crossing, grown with the sizes involved (as the equality solver's)."""
    return BOUND_TOLERANCE * max(1.0, *(float(np.abs(a[np.isfinite(a)]).max(initial=0.0)) for a in arrays))


def _first_hard(hard: HardRows, hard_value: np.ndarray, hard_rate: np.ndarray, working: list[int],
                P_W: np.ndarray, tol: float) -> tuple[float, int]:
    """The first hard row reached along v + alpha delta, alpha in [0, 1]: (alpha, row), row -1 for
    none (alpha 1). A hard row with no freedom in the face (|P_W n|^2 below PIVOT_TOLERANCE |n|^2:
    fixed by the levels above and the rows held) is not reached: its rate is rounding."""
    alpha, which = 1.0, -1
    held = set(working)
    for j in np.flatnonzero((hard_rate > tol) & (hard_value + hard_rate > hard.h + tol)).tolist():
        a = max(0.0, (hard.h[j] - hard_value[j]) / hard_rate[j])
        n = hard.N[j]
        if a < alpha and j not in held and float((Pn := P_W @ n) @ Pn) >= PIVOT_TOLERANCE * max(1.0, float(n @ n)):
            alpha, which = a, j
    return alpha, which


def _line_minimum(rows: LevelRows, value: np.ndarray, rate: np.ndarray, soft: dict[int, float], slope: float,
                  curvature: float) -> float:
    """The least alpha in [0, 1] where the level's true objective along v + alpha delta stops
    falling (1 if it falls all the way). Its derivative is the model's, slope + 2 curvature
    alpha, plus, for each inequality row, its distance term's derivative less the model's term
    for it (soft rows: (x - aim)^2; others: none); continuous and nondecreasing (convex), linear
    between the rows' breakpoints (where they cross a bound)."""
    free = np.flatnonzero(~rows.equal & (rate != 0.0))
    x, dx = value[free], rate[free]
    low, high = rows.lower[free], rows.upper[free]
    aim = np.array([soft.get(int(i), np.nan) for i in free])

    def derivative(alpha: float) -> float:
        y = x + alpha * dx
        true = np.maximum(y - high, 0.0) - np.maximum(low - y, 0.0)
        model = np.where(np.isnan(aim), 0.0, y - aim)
        return slope + 2.0 * curvature * alpha + 2.0 * float(dx @ (true - model))

    with np.errstate(divide="ignore", invalid="ignore"):
        crossings = np.concatenate([(high - x) / dx, (low - x) / dx])
    points = np.unique(crossings[(crossings > 0.0) & (crossings < 1.0)]).tolist() + [1.0]
    start, before = 0.0, derivative(0.0)
    if before >= 0.0:
        return 0.0
    for point in points:
        after = derivative(point)
        if after >= 0.0:  # the derivative is linear on [start, point]: its zero
            return start + (point - start) * (-before / (after - before))
        start, before = point, after
    return 1.0


def _update_soft(rows: LevelRows, value: np.ndarray, soft: dict[int, float], tol: float) -> int:
    """The soft set at a new point (in place): rows beyond a bound by more than tol aim at it, soft
    rows within tol of their aim stay, the others leave; returns how many rows changed."""
    changed = 0
    for i in np.flatnonzero(~rows.equal).tolist():
        y, aim = value[i], soft.get(i)
        if y > rows.upper[i] + tol:
            want: float | None = float(rows.upper[i])
        elif y < rows.lower[i] - tol:
            want = float(rows.lower[i])
        else:
            want = aim if aim is not None and abs(y - aim) <= tol else None
        if want != aim:
            changed += 1
            if want is None:
                del soft[i]
            else:
                soft[i] = want
    return changed


def _multipliers(P_in: np.ndarray, N: np.ndarray, gradient: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Multipliers mu of the held rows (P_in (g + N^T mu) = 0) per unit normal, and the normals' norms."""
    normals = P_in @ N.T
    mu = np.linalg.lstsq(normals, -(P_in @ gradient), rcond=None)[0]
    norms = np.linalg.norm(normals, axis=0)
    return mu * norms, norms


def _model_step(rows: LevelRows, soft: dict[int, float], v: np.ndarray, v_prev: np.ndarray, P_W: np.ndarray,
                lam2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The model's rows J (equality rows, then the soft ones, each in order), their aims t and the
    damped least-squares step delta (nv,) from v in the face range(P_W) (anchored at v_prev when
    lam2 > 0)."""
    chosen = np.concatenate([np.flatnonzero(rows.equal), np.array(sorted(soft), dtype=int)]).astype(int)
    J = rows.A[chosen]
    t = np.array([rows.lower[i] if rows.equal[i] else soft[int(i)] for i in chosen])
    if rows.identity and lam2 == 0.0:  # M = P_W, an orthogonal projector: damped_step's u is P_W c
        return J, t, P_W @ (t - v)
    offset = P_W @ (v - v_prev) if lam2 > 0.0 else np.zeros_like(v)
    M = J @ P_W
    # projected once more onto the face: M^T y rounds off it by |J^T y| x the face's rounding, and
    # |J^T y| grows as 1 / sigma^2 on M's smallest kept singular values (sigma down to 1e-6)
    return J, t, P_W @ (damped_step(M, t - J @ v + M @ offset, lam2) - offset)


def _released(mu: np.ndarray, P_in: np.ndarray, gradient: np.ndarray) -> int:
    """The working row to release (the most negative multiplier), -1 when every sign is right."""
    worst = int(np.argmin(mu))
    return worst if mu[worst] < -MULTIPLIER_TOLERANCE * max(1.0, float(np.linalg.norm(P_in @ gradient))) else -1


def _doubtful(rows: LevelRows, v: np.ndarray, mu: np.ndarray, P_in: np.ndarray, gradient: np.ndarray) -> int:
    """The working row whose release is to be tried (see TRIAL_GAIN), -1 when none: the least
    multiplier, of a sign the release test cannot tell from its floor, on a level not met."""
    worst = int(np.argmin(mu))
    if not mu[worst] < MULTIPLIER_TOLERANCE * max(1.0, float(np.linalg.norm(P_in @ gradient))):
        return -1
    x = rows.A @ v
    inside = np.clip(x, rows.lower, rows.upper)
    met = float(np.linalg.norm(x - inside)) <= MET_TOLERANCE * (1.0 + float(np.linalg.norm(inside)))
    return -1 if met else worst


def _objective(rows: LevelRows, v: np.ndarray, v_prev: np.ndarray, lam2: float) -> float:
    """The level's objective at v: its rows' squared distances to their intervals + lam2 |v - v_prev|^2."""
    x = rows.A @ v
    distance = np.maximum(x - rows.upper, 0.0) + np.maximum(rows.lower - x, 0.0)
    return float(distance @ distance) + lam2 * float((v - v_prev) @ (v - v_prev))


def _guessed(rows: LevelRows, v_prev: np.ndarray, P_in: np.ndarray, hard: HardRows, lam2: float,
             working: list[int], soft: dict[int, float]) -> LevelResult | None:
    """The level's answer if the guessed sets (a warm start) are its sets at the optimum, else
    None: v on the working rows' bounds (the least change from v_prev in range(P_in)), then the
    model's minimum there (the rows held, the soft rows aiming at their bounds); kept when it is
    optimal: every other hard row kept (each within its own rounding allowance), the soft set
    the same read anew at that point, and every multiplier of the held rows of the right sign
    (the conditions the search ends on: the objective is convex), v - v_prev in range(P_in) (up
    to MET_TOLERANCE: the levels above keep their values). Not kept either where the search from
    v_prev would not have gone (among the optima of a level that has several): a hard row v was
    moved onto that the level does not push against (multiplier 0), a soft row inside its
    interval at v_prev that ends on its bound."""
    v = v_prev.copy()
    P_W, kept = face(P_in, hard.N, working, v, hard.h)
    J, t, delta = _model_step(rows, soft, v, v_prev, P_W, lam2)
    v += delta
    # the move stays in range(P_in) (what the levels above reached kept): a row nearly dependent on
    # the rows they fixed (a pivot near the threshold) moves v far, its rounding with it
    moved = v - v_prev
    if np.linalg.norm(moved - P_in @ moved) > MET_TOLERANCE * max(1.0, float(np.linalg.norm(moved))):
        return None
    hard_value = hard.N @ v
    outside = hard_value > hard.h + _allowance(hard_value, hard.h)
    outside[kept] = False
    value, start = rows.A @ v, rows.A @ v_prev
    tol = _tolerance(value, rows.lower, rows.upper)
    if outside.any() or _update_soft(rows, value, dict(soft), tol):
        return None
    for i, aim in soft.items():  # a soft row pulled onto its bound from inside: the level does not need it there
        if abs(value[i] - aim) <= tol and rows.lower[i] - tol <= start[i] <= rows.upper[i] + tol:
            return None
    mu = None
    if kept:
        gradient = J.T @ (J @ v - t) + lam2 * (v - v_prev)
        mu, _ = _multipliers(P_in, hard.N[kept], gradient)
        least = MULTIPLIER_TOLERANCE * max(1.0, float(np.linalg.norm(P_in @ gradient)))
        start = hard.N[kept] @ v_prev
        moved = start < hard.h[kept] - _allowance(start, hard.h[kept])
        # every multiplier of the right sign, and a row v was moved onto pushed against (else the
        # search from v_prev would not have gone there: the level does not need it)
        if (mu < -least).any() or (moved & (mu <= least)).any():
            return None
    return LevelResult(v, kept, soft, mu, 0, guessed=True)


def _allowance(value: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Each hard row's own rounding allowance on its bound (a huge bound elsewhere does not widen it)."""
    return BOUND_TOLERANCE * np.maximum(1.0, np.maximum(np.abs(value), np.abs(h)))


def solve_level(rows: LevelRows, v_prev: np.ndarray, P_in: np.ndarray, hard: HardRows, lam2: float,
                cap: int, start: list[int] | None = None,
                guess: tuple[list[int], dict[int, float]] | None = None) -> LevelResult:
    """The least-violation point of one level (see the module docstring); v_prev (nv,) keeps the
    hard rows (up to rounding) and is in the affine space the levels above left. A `guess`
    (working set, soft set: a warm start, the sets this level ended with at the previous control
    step) is tried first (:func:`_guessed`): kept when optimal, with 0 changes. Else the search
    starts from the working set `start` (the one the level above ended with, in its order: its
    rows are on their bound up to the rounding of its steps), then the other hard rows on their
    bound within their own rounding allowance, by index."""
    if guess is not None:
        result = _guessed(rows, v_prev, P_in, hard, lam2, *guess)
        if result is not None:
            return result
    v = v_prev.copy()
    value = rows.A @ v
    tol = _tolerance(value, rows.lower, rows.upper)
    soft = {i: float(rows.upper[i] if value[i] > rows.upper[i] else rows.lower[i])
            for i in np.flatnonzero(~rows.equal & ((value > rows.upper + tol) | (value < rows.lower - tol))).tolist()}
    hard_value = hard.N @ v
    on_bound = np.flatnonzero(hard_value >= hard.h - _allowance(hard_value, hard.h))
    working = list(start or [])
    working += [int(j) for j in on_bound if j not in working]
    changes, capped, mu = 0, False, None
    trial = None  # before a doubtful release (TRIAL_GAIN): (v, working, soft, mu, objective)
    while True:
        P_W, working = face(P_in, hard.N, working)
        J, t, delta = _model_step(rows, soft, v, v_prev, P_W, lam2)
        value, rate = rows.A @ v, rows.A @ delta
        hard_value, hard_rate = hard.N @ v, hard.N @ delta
        tol = _tolerance(value, rate, hard_value, hard_rate)
        alpha, which = _first_hard(hard, hard_value, hard_rate, working, P_W, tol)
        residual, Jd, w = J @ v - t, J @ delta, v - v_prev
        slope = 2.0 * float(Jd @ residual + lam2 * (delta @ w))
        alpha_f = _line_minimum(rows, value, rate, soft, slope, float(Jd @ Jd + lam2 * (delta @ delta)))
        if which >= 0 and alpha <= alpha_f:  # a hard row reached first: held from here
            v += alpha * delta
            working.append(which)
            changes += 1 + _update_soft(rows, rows.A @ v, soft, tol)
        else:
            v += alpha_f * delta
            changed = _update_soft(rows, rows.A @ v, soft, tol)
            changes += changed
            if changed == 0:  # at the model's minimum (up to rounding): the multipliers decide
                mu = None
                if not working:
                    break
                gradient = J.T @ (J @ v - t) + lam2 * (v - v_prev)
                mu, _ = _multipliers(P_in, hard.N[working], gradient)
                worst = _released(mu, P_in, gradient)
                if worst < 0 and trial is None:
                    worst = _doubtful(rows, v, mu, P_in, gradient)
                    if worst >= 0:
                        trial = (v.copy(), list(working), dict(soft), mu, _objective(rows, v, v_prev, lam2))
                if worst < 0:
                    break
                if changes >= cap:
                    capped = True
                    break
                working.pop(worst)
                changes += 1
                continue
        if changes >= cap:
            capped = True
            break
    if trial is not None and (capped or not _objective(rows, v, v_prev, lam2) < trial[4] * (1.0 - TRIAL_GAIN)):
        v, working, soft, mu, _ = trial  # the release gained nothing beyond rounding: undone (its changes counted)
        capped = False
    return LevelResult(v, working, soft, mu, changes, capped)

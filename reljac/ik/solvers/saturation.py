"""The constraints of the SNS hierarchy solver (reljac.ik.solvers.hierarchy) and their geometry: the box
and rows ``lo <= v <= hi``, ``C v <= d``; how far a level's step can go before it crosses one
(``max_scale``), saturating a joint or a row inside the null-space projector (``saturate``), the
rows a velocity violates (``violated_rows``), and a level's record of its saturations with the
ties it explores as paths of their own (``Saturations``, ``replay``). Part of the readable
specification of the compiled solver (src/core/hierarchy_saturation.hpp: ``max_scale``,
``saturate``, ``Saturations``; src/core/hierarchy.cpp: ``violated_rows``, ``replay``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REACHED_AT_ONCE = 1e-6  # a scale at most this: the level's start sits on the constraint (a bound, a vertex)
MAX_TIE_PATHS = 6  # paths explored per level from ties reached at once (Saturations: two rows, a joint and a row)
TIE_PATH_GAIN = 1e-6  # a tie path's candidate replaces the best if it lowers the residual by this fraction
BOUND_TOLERANCE = 1e-12  # slack on a bound, relative to max(1, |v|, |delta|), before it counts as crossed
PIVOT_TOLERANCE = 1e-12  # a joint (row) with P_jj (c^T P c) below this cannot move in what is left
PIVOT_REPROJECT = 1e-6  # a pivot c^T P c (P_jj) below this x c^T c (1): P c taken twice (see saturate)
PIN_TOLERANCE = 1e-9  # a refused joint is pinned if delta crosses its bound by at most this x max(1, |v|, |delta|)


@dataclass
class Constraints:
    """lo <= v <= hi and C v <= d: lo, hi (nv,) with lo <= hi; C (k, nv), d (k,) (k may be 0)."""

    lo: np.ndarray
    hi: np.ndarray
    C: np.ndarray
    d: np.ndarray

    @classmethod
    def box(cls, lo: np.ndarray, hi: np.ndarray) -> Constraints:
        return cls(lo, hi, np.zeros((0, lo.shape[0])), np.zeros(0))



def rounding_scale(x: np.ndarray, dx: np.ndarray) -> float:
    """max(1, |x|, |dx|) (max norms): rounding in x and dx grows with their size, and a crossing
    smaller than a tolerance of this scale does not count."""
    return max(1.0, float(np.abs(x).max(initial=0.0)), float(np.abs(dx).max(initial=0.0)))


def max_scale(base: np.ndarray, delta: np.ndarray, cons: Constraints, held: list[int],
              pinned: list[int] | None = None) -> tuple[float, int, int]:
    """Largest s in [0, 1] keeping base + s delta inside the constraints, and what limits it.

    Rows of C in `held` are skipped: they are saturated (their direction is out of the null
    space, so c^T delta is 0 up to rounding that must not count as a crossing). So are the joints
    in `pinned`: joints that cannot move in what is left (saturate refused them), whose delta_j
    is rounding too.
    Returns (s, kind, index): kind 0 a joint (index: its velocity index), 1 a row of C, -1
    nothing (s = 1). s = -1 when base itself violates a constraint (index: the worst one).
    """
    s, kind, limiting, worst, worst_kind, worst_violation = 1.0, -1, -1, -1, -1, 0.0
    lo, hi = cons.lo, cons.hi
    if pinned:
        lo, hi = lo.copy(), hi.copy()
        lo[pinned], hi[pinned] = -np.inf, np.inf
    items = [(0, base, delta, lo, hi)]
    if cons.C.shape[0]:
        free_d = cons.d.copy()
        free_d[held] = np.inf
        items.append((1, cons.C @ base, cons.C @ delta, np.full(cons.d.shape, -np.inf), free_d))
    for which, x, dx, low, high in items:
        tol = BOUND_TOLERANCE * rounding_scale(x, dx)
        for j, (b, d, lj, hj) in enumerate(zip(x.tolist(), dx.tolist(), low.tolist(), high.tolist(), strict=True)):
            violation = b - hj if b > hj else lj - b
            if violation > tol:
                if violation - tol > worst_violation:
                    worst, worst_kind, worst_violation = j, which, violation - tol
                continue
            end = b + d
            if end > hj + tol:
                ratio = (hj - b) / d
            elif end < lj - tol:
                ratio = (lj - b) / d
            else:
                continue
            ratio = max(ratio, 0.0)  # (a bound met to rounding: a tie at 0 goes to the first, not to the sign)
            if ratio < s:
                s, kind, limiting = ratio, which, j
    if worst >= 0:
        return -1.0, worst_kind, worst
    return (1.0, -1, -1) if kind < 0 else (max(s, 0.0), kind, limiting)


def crossing_is_rounding(base: np.ndarray, delta: np.ndarray, cons: Constraints, j: int) -> bool:
    """Joint j, which saturate refused (it cannot move in what is left: P_jj below PIVOT_TOLERANCE),
    crosses its bound by rounding only: base + delta within PIN_TOLERANCE x max(1, |base|, |delta|)
    of its box. Then it is pinned (max_scale skips it; the final clip takes the rounding away);
    else the level ends there, as the crossing is a real direction (|delta_j| up to 1e-6 |delta|)
    that the clip would take from the levels above."""
    end = float(base[j] + delta[j])
    return max(end - float(cons.hi[j]), float(cons.lo[j]) - end, 0.0) <= PIN_TOLERANCE * rounding_scale(base, delta)


def saturate(P: np.ndarray, M: np.ndarray | None, base: np.ndarray, c: np.ndarray | None, j: int,
              target: float) -> bool:
    """Fix c^T v = target (c None: v_j = target) inside range(P); in place. False if it cannot move.

    base moves along P c onto the bound (levels above are untouched: P c is in their null
    space); P becomes the projector onto {x in range(P): c^T x = 0}, M = A P with it.
    """
    Pc = P[:, j].copy() if c is None else P @ c
    pivot = float(Pc[j]) if c is None else float(c @ Pc)
    if pivot < PIVOT_REPROJECT * (1.0 if c is None else float(c @ c)):
        # c (or the joint's e_j) nearly in the span already saturated: the pivot is a cancellation that
        # lost most of its digits (rounding eps |c|^2); dividing by it left P and M = A P at noise level,
        # M's row space not in range(P) (a projector with an eigenvalue -1 for the levels below). P (P c)
        # is in range(P) to rounding, its squared norm the pivot to relative eps |c| / |P c| (twice is
        # enough).
        Pc = P @ Pc
        pivot = float(Pc @ Pc)
    if pivot < PIVOT_TOLERANCE:
        return False
    value = base[j] if c is None else float(c @ base)
    base += Pc * ((target - value) / pivot)
    P -= np.outer(Pc, Pc / pivot)
    if M is not None:
        M -= np.outer(M[:, j] if c is None else M @ c, Pc / pivot)
    if c is None:  # exactly: a saturated joint never moves again
        base[j] = target
        P[j, :] = 0.0
        P[:, j] = 0.0
        if M is not None:
            M[:, j] = 0.0
    return True


def violated_rows(cons: Constraints, v: np.ndarray) -> list[int]:
    """Rows j of C with C_j v > d_j (beyond rounding)."""
    if cons.C.shape[0] == 0:
        return []
    Cv = cons.C @ v
    tol = BOUND_TOLERANCE * max(1.0, float(np.abs(Cv).max()))
    return [int(j) for j in np.flatnonzero(Cv - cons.d > tol)]


@dataclass
class Saturation:
    """One saturation of a level, as made: a joint (kind 0) or a row of C (kind 1) held at
    `target`, found at `scale` (the scale at which it stopped the level's correction)."""

    kind: int
    index: int
    target: float
    scale: float


class Saturations:
    """A level's saturations in order (`done`), and the ties of two rows that SNS's own path broke by
    order, to be explored after it as paths of their own (`tie`, `next_path`).

    Two rows of C reached at once (scale <= REACHED_AT_ONCE: the level starts on a vertex of them, a
    support region's corner), or a joint on its bound and then a row, are a tie that SNS breaks by
    order: it holds the first, whose slide
    crosses the second, and holding both pins the level, though sliding along the second alone
    may leave the first inside (its multiplier pulls inward: an active-set method would release
    it; Talos' centre of mass stopped for good at a corner 36.5 mm from the region's nearest point
    to its target). SNS's own path is kept as it is; each such tie (at most MAX_TIE_PATHS per level,
    one per pair of rows; and one row pushed beyond its bound by the saturation of a row held at
    once, see `pushed_out`) is then a path of its own: the saturations made before it without the
    row held first, the second row held where it is (on its bound up to the tie; at its bound it
    would push base across the first), and SNS from there. Every path's candidates compete with
    SNS's own by residual, so the level's result is never worse than SNS's (a path whose slide
    the first row stops again, or that another tie pins, changes nothing). A path's candidate must
    lower the residual by TIE_PATH_GAIN of it to be taken, and no path is explored once the level
    is met: otherwise rounding chose between paths that hold different rows, leaving the levels
    below different projectors (the backends then took different ones, 0.1-3.6 apart in v). A
    path's saturations that do not lower the best residual so far (all paths') count as stale, as
    in SNS's own path: a path is given MAX_STALE_SATURATIONS of them to overtake it.
    """

    def __init__(self) -> None:
        self.done: list[Saturation] = []
        self.tried: set[tuple[int, int]] = set()  # (row, or -1 - joint, held first; row reached at once)
        self.paths: list[tuple[list[Saturation], int]] = []  # (saturations to make again, row to hold)
        self.ties = 0  # ties kept as paths (at most MAX_TIE_PATHS)
        self.pushed: tuple[list[Saturation], int] | None = None  # the path of a row pushed out (pushed_out)
        self.pushed_taken = False

    def add(self, kind: int, index: int, target: float, scale: float) -> None:
        self.done.append(Saturation(kind, index, target, scale))

    def tie(self, row: int, scale: float) -> None:
        """`row` reached at `scale`, about to be held on top of the others: when at once, the latest
        row or joint held at once (with which it was not tried) is let go in a path kept for later."""
        if scale > REACHED_AT_ONCE or self.ties >= MAX_TIE_PATHS:
            return
        for a in range(len(self.done) - 1, -1, -1):
            first = self.done[a]
            held = first.index if first.kind == 1 else -1 - first.index  # (a joint j: -1 - j)
            if first.scale <= REACHED_AT_ONCE and (held, row) not in self.tried:
                self.tried.add((held, row))
                self.paths.append((self.done[:a] + self.done[a + 1:], row))
                self.ties += 1
                return

    def pushed_out(self, row: int) -> None:
        """`row` pushed beyond its bound by the last saturation (a row held at once, its bound a hair
        past the other's at their vertex: a tie too, which ended the path): that row let go in a path
        kept for later, explored before the others (one per level)."""
        if not self.done or self.pushed is not None:
            return
        last = self.done[-1]
        if last.kind == 1 and last.scale <= REACHED_AT_ONCE and (last.index, row) not in self.tried:
            self.tried.add((last.index, row))
            self.pushed = (self.done[:-1], row)

    def next_path(self) -> int:
        """The row to hold in the next path kept (-1: none left); `done` becomes the saturations to
        make again before it (by replay)."""
        if self.pushed is not None and not self.pushed_taken:
            self.pushed_taken = True
            self.done, row = self.pushed
            return row
        if not self.paths:
            return -1
        self.done, row = self.paths.pop(0)
        return row


def replay(A: np.ndarray | None, v_prev: np.ndarray, P: np.ndarray, dim: int, cons: Constraints,
           done: list[Saturation]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, list[int], list[int]]:
    """A level's state after the saturations `done`, made again from its start (v_prev, P, dim):
    (base, P_free, M = A P_free, free dimension, saturated joints, saturated rows). A joint that can
    no longer move is dropped from `done`."""
    base, P_free, free = v_prev.copy(), P.copy(), dim
    M = None if A is None else A @ P_free
    saturated: list[int] = []
    saturated_rows: list[int] = []
    kept: list[Saturation] = []
    for op in done:
        if op.kind == 0:
            if not saturate(P_free, M, base, None, op.index, op.target):
                continue
            saturated.append(op.index)
        else:
            moved = saturate(P_free, M, base, cons.C[op.index], op.index, op.target)
            saturated_rows.append(op.index)
            if not moved:
                kept.append(op)
                continue
        kept.append(op)
        free -= 1
    done[:] = kept
    return base, P_free, M, free, saturated, saturated_rows

"""The linear algebra of one inequality level (:mod:`reljac.ik.solvers.active_set`): the face of a working
set (the projector with hard rows held, v moved onto their bounds), the damped least-squares step
and an orthonormal row basis from the task-space Gram matrix's eigen-decomposition (the equality
solver's rank rule), and a level's smallest singular value. Shapes: M (m, nv) rows already
projected, P (nv, nv) an orthogonal projector, N (rows, nv) hard rows' normals [the units of v].
The compiled twins are src/core/active_set_gram.cpp (Gram matrices, rank, smallest singular value),
active_set_pivoted.cpp, active_set_step.cpp, active_set_identity.cpp (damped identity rows:
the same step in joint space) and active_set_row_space.cpp.
"""

from __future__ import annotations

import numpy as np

from .hierarchy import RANK_TOLERANCE
from .saturation import PIVOT_TOLERANCE

REORTHOGONALIZE = 0.1  # a face's row with |P n|^2 below this x |n|^2 is projected twice (see face)
ORTHONORMALIZE = 1e-4  # row_basis: a basis from eigenvalues spread wider than this is orthonormalized again
FINE_RANK = 1e-10  # fine_directions: singular values below this x the largest never count (the QP oracle's cut)


def face(P_in: np.ndarray, N: np.ndarray, working: list[int], v: np.ndarray | None = None,
         h: np.ndarray | None = None) -> tuple[np.ndarray, list[int]]:
    """The projector of range(P_in) with the working set's rows held, and the rows kept (a row
    dependent on those before it is dropped: it is held already). Given v and h, v moves (in
    place) onto the kept rows' bounds, N_j v = h_j, by the least change in range(P_in): row j
    along P n_j, P the face of the rows before it (which that leaves on their bounds).

    Each row is one Gram-Schmidt step, P -= u u^T (u = P n / |P n|): the pivot is |P n|^2, not
    n^T P n (the two differ by P's rounding, ~1e-14, which n^T P n would divide by a small pivot:
    a P with eigenvalues of -1e-6 and a step leaving range(P_in)), and P n is projected twice
    where the pivot is small (|P n|^2 < REORTHOGONALIZE |n|^2: twice is enough, u's part outside
    range(P) is then P's rounding, not that over |P n|)."""
    P = P_in.copy()
    kept = []
    for j in working:
        n = N[j]
        Pn = P @ n
        pivot = float(Pn @ Pn)
        size = float(n @ n)
        if pivot < PIVOT_TOLERANCE * max(1.0, size):
            continue
        if pivot < REORTHOGONALIZE * size:
            Pn = P @ Pn
            pivot = float(Pn @ Pn)
        if v is not None and h is not None:
            v += Pn * ((h[j] - float(n @ v)) / float(n @ Pn))
        P -= np.outer(Pn, Pn / pivot)
        kept.append(j)
    return P, kept


def eigen(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Eigenvalues (descending) and vectors of G = M M^T and its rank (the equality solver's rule)."""
    values, U = np.linalg.eigh(M @ M.T)
    values, U = values[::-1], U[:, ::-1]
    largest = values[0] if values.size else 0.0
    return values, U, int(np.count_nonzero(values > RANK_TOLERANCE * max(1.0, largest)))


def rank(M: np.ndarray) -> int:
    """The rank of M (m, nv) by the rank rule (:func:`eigen`'s), from the smaller of its two Gram
    matrices (the same nonzero eigenvalues): a level of many rows spanning few directions (2,000
    planes on a frame's position) costs a factorization of size nv, not m."""
    if M.shape[0] <= M.shape[1]:
        return eigen(M)[2]
    values = np.linalg.eigvalsh(M.T @ M)
    return int(np.count_nonzero(values > RANK_TOLERANCE * max(1.0, float(values[-1]))))


def damped_step(M: np.ndarray, c: np.ndarray, lam2: float) -> np.ndarray:
    """u = argmin |M u - c|^2 + lambda^2 |u|^2, the minimum-norm one when lambda = 0 (nv,), on the
    eigenvalues of M M^T above the rank rule (the others are the rounding of the projector).
    Undamped, the step is refined once from what it leaves of c (G squares M's condition: a level
    of singular values over 4e-6 of the largest met its consistent rows to 1.5e-8 [1e3 units] in
    one step, its velocity 4e-6 off), and then takes the fine directions the rule drops
    (:func:`fine_directions`) on what is still left."""
    if M.shape[0] == 0:
        return np.zeros(M.shape[1])
    if M.shape[0] > M.shape[1] and np.isfinite(M).all():
        # more rows than joints (many planes beyond their bounds): the same step from M = Q R, R
        # (nv x nv), and Q^T c: |M u - c|^2 = |R u - Q^T c|^2 + what no u changes, so the minimizer
        # and the minimum-norm one are R's, with no m x m Gram matrix (one of 2,000 rows at every change)
        Q, R = np.linalg.qr(M)
        return damped_step(R, Q.T @ c, lam2)
    values, U, rank = eigen(M)
    U_r = U[:, :rank]

    def kept_part(x: np.ndarray) -> np.ndarray:
        return M.T @ (U_r @ ((U_r.T @ x) / (values[:rank] + lam2)))

    u = kept_part(c)
    if lam2 != 0.0 or rank == 0:
        return u
    fine = fine_directions(M, values, U, rank)
    u = u + kept_part(c - M @ u)
    if fine is not None:
        W, M2, values2, U2 = fine  # (M2's rounding, eps |M|, would carry its step along W: taken out)
        u2 = M2.T @ (U2 @ ((U2.T @ (c - M @ u)) / values2))
        u = u + (u2 - W @ (W.T @ u2))
    return u


def _orthonormalized(W: np.ndarray, start: int = 0) -> np.ndarray:
    """W's columns from `start` on made orthonormal to those before them and to one another, in
    place, by modified Gram-Schmidt twice, in order."""
    for k in range(start, W.shape[1]):
        w = W[:, k]
        for _ in range(2):
            for j in range(k):
                w -= float(W[:, j] @ w) * W[:, j]
        w /= float(np.linalg.norm(w))
    return W


def fine_directions(M: np.ndarray, values: np.ndarray, U: np.ndarray,
                    rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The directions of M's rows that G = M M^T cannot resolve: the rank rule cuts sigma^2 below
    RANK_TOLERANCE x max(1, the largest), so on a level larger than 1 (its units) a direction of
    sigma above 1e-6 but below 1e-6 x the largest is cut (G squares M's condition: its rounding is
    eps x the largest). Such directions count: a level of rows scaled by 1e3 with a singular value
    9.4e-5 (1e-7 of the largest), asked for rates it can meet, ended 2.2e-5 above its least
    violation without them (issue 43). Kept here: sigma^2 above max(RANK_TOLERANCE, FINE_RANK^2 x
    the largest), the rule's own floor in the level's units (a level smaller than 1 keeps what it
    kept: there G resolves the cut) and, on large levels, 1e-10 of the largest (above M2's rounding,
    the QP oracle's cut). Found in M2 = M (I - W W^T), W the rows' basis on the kept
    eigenvalues (orthonormalized): M2 holds just them (their sigma, not sigma^2) and rounding
    (eps |M|), so M2 M2^T resolves them. Returns (M2 (m, nv), its Gram matrix's eigenvalues
    above the cut (r2,), their eigenvectors (m, r2)), or None: no eigenvalue was dropped beyond the
    rank M can have (min(m, nv)), or M2 holds none (the rows are dependent, or the level has more
    rows than the freedom left)."""
    m, nv = M.shape
    if rank >= min(m, nv) or rank == 0:
        return None
    W = _orthonormalized(M.T @ (U[:, :rank] / np.sqrt(values[:rank])))
    M2 = M - (M @ W) @ W.T
    cut = max(RANK_TOLERANCE, FINE_RANK * FINE_RANK * float(values[0]))
    if float(np.sum(M2 * M2)) <= cut:
        return None
    values2, U2 = np.linalg.eigh(M2 @ M2.T)
    keep = values2 > cut
    if not keep.any():
        return None
    return W, M2, values2[keep], U2[:, keep]


def row_basis(M: np.ndarray) -> np.ndarray:
    """An orthonormal basis (nv, r) of M's row space: M^T U / sqrt(values) from G = M M^T, then the
    fine directions (:func:`fine_directions`) the rank rule drops. Its columns are orthogonal to
    rounding x values[0] / values[k] only (G squares M's condition): where the smallest kept
    eigenvalue is below ORTHONORMALIZE x the largest they are made orthonormal again, by modified
    Gram-Schmidt twice, in the eigenvalues' order (on two nearly parallel rows fixed by a level, 7e-6
    apart, P - W W^T was off a projector by 1e-5, and the level below stepped out of the box by
    4.7); so are the fine directions, after them."""
    if M.shape[0] == 0:
        return np.zeros((M.shape[1], 0))
    if M.shape[0] > M.shape[1]:  # more rows than joints (many planes beyond their bounds): the same row
        M = np.asarray(np.linalg.qr(M, mode="r"))  # space from R (nv x nv), M = Q R, not an m x m Gram matrix
    values, U, rank = eigen(M)
    fine = fine_directions(M, values, U, rank)
    if fine is not None:  # (its W orthonormalized already)
        W, M2, values2, U2 = fine
        return _orthonormalized(np.hstack([W, M2.T @ (U2 / np.sqrt(values2))]), rank)
    W = M.T @ (U[:, :rank] / np.sqrt(values[:rank]))
    if rank and values[rank - 1] < ORTHONORMALIZE * values[0]:
        _orthonormalized(W)
    return W


def smallest_singular_value(M: np.ndarray) -> float:
    """The smallest singular value of M (m, nv), 0 when M has fewer independent rows than rows."""
    if M.shape[0] == 0:
        return float("inf")
    values, _, rank = eigen(M)
    return float(np.sqrt(values[rank - 1])) if rank == M.shape[0] else 0.0

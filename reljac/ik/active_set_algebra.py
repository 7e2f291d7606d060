"""The linear algebra of one inequality level (:mod:`reljac.ik.active_set`): the face of a working
set (the projector with hard rows held, v moved onto their bounds), the damped least-squares step
and an orthonormal row basis from the task-space Gram matrix's eigen-decomposition (the equality
solver's rank rule), and a level's smallest singular value. Shapes: M (m, nv) rows already
projected, P (nv, nv) an orthogonal projector, N (rows, nv) hard rows' normals [the units of v].
The compiled twin is src/core/active_set_gram.cpp.
"""

from __future__ import annotations

import numpy as np

from .hierarchy import RANK_TOLERANCE
from .saturation import PIVOT_TOLERANCE

REORTHOGONALIZE = 0.1  # a face's row with |P n|^2 below this x |n|^2 is projected twice (see face)
ORTHONORMALIZE = 1e-4  # row_basis: a basis from eigenvalues spread wider than this is orthonormalized again


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


def damped_step(M: np.ndarray, c: np.ndarray, lam2: float) -> np.ndarray:
    """u = argmin |M u - c|^2 + lambda^2 |u|^2, the minimum-norm one when lambda = 0 (nv,), on the
    eigenvalues of M M^T above the rank rule (the others are the rounding of the projector)."""
    if M.shape[0] == 0:
        return np.zeros(M.shape[1])
    values, U, rank = eigen(M)
    U_r = U[:, :rank]
    return M.T @ (U_r @ ((U_r.T @ c) / (values[:rank] + lam2)))


def row_basis(M: np.ndarray) -> np.ndarray:
    """An orthonormal basis (nv, r) of M's row space: M^T U / sqrt(values) from G = M M^T. Its
    columns are orthogonal to rounding x values[0] / values[k] only (G squares M's condition):
    where the smallest kept eigenvalue is below ORTHONORMALIZE x the largest they are made
    orthonormal again, by modified Gram-Schmidt twice, in the eigenvalues' order (on two nearly
    parallel rows fixed by a level, 7e-6 apart, P - W W^T was off a projector by 1e-5, and the
    level below stepped out of the box by 4.7)."""
    if M.shape[0] == 0:
        return np.zeros((M.shape[1], 0))
    values, U, rank = eigen(M)
    W = M.T @ (U[:, :rank] / np.sqrt(values[:rank]))
    if rank and values[rank - 1] < ORTHONORMALIZE * values[0]:
        for k in range(rank):
            w = W[:, k]
            for _ in range(2):
                for j in range(k):
                    w -= float(W[:, j] @ w) * W[:, j]
            w /= float(np.linalg.norm(w))
    return W


def smallest_singular_value(M: np.ndarray) -> float:
    """The smallest singular value of M (m, nv), 0 when M has fewer independent rows than rows."""
    if M.shape[0] == 0:
        return float("inf")
    values, _, rank = eigen(M)
    return float(np.sqrt(values[rank - 1])) if rank == M.shape[0] else 0.0

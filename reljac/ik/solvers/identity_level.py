"""The correction of a level of identity rows (a posture: A = c diag(mask)) without forming A P:
the hierarchy's eigen path on it (:mod:`reljac.ik.solvers.hierarchy`), in joint space. The compiled
twin is ``identity_correction`` in src/core/hierarchy_identity.hpp."""

from __future__ import annotations

import numpy as np


def identity_correction(c: float, mask: np.ndarray | None, lam2: float, P: np.ndarray, residual: np.ndarray, *,
                        rank_tolerance: float, amplified: float) -> np.ndarray:
    """delta (nv,), in range(P), of the level c diag(mask) delta = residual (P (nv, nv) an
    orthogonal projector; residual (nv,) zero on the masked rows; mask None: every row kept):
    the eigen path's M^T (G + lam2 I)^+ residual on M = c diag(mask) P, G = M M^T, whose
    eigenvalues below rank_tolerance x their largest are cut. Every row kept: c P r / (c^2 + lam2)
    (P r / c undamped). Rows masked (F, their joints: a floating base a posture leaves free), by
    the Woodbury identity on them, with a = c^2 + lam2 and the eigenvalues t (eigenvectors V) of
    T = P[F, F], whose directions have G's eigenvalues c^2 (1 - t):

        delta = (c / a) (P r + P[:, F] V phi(t) V^T (P r)[F]),

    phi(t) = c^2 / (a - c^2 t) where c^2 (1 - t) passes the cut, rank_tolerance max(1, c^2) (the
    largest eigenvalue taken as c^2, as it is wherever range(P) has a direction that moves no
    masked joint), and -1 / t where it is cut (that direction dropped, as the eigen path drops
    it); where c^2 itself is under the cut (a weight of 1e-6 or less), every direction is: no
    correction. Where no direction is cut (the shifted Cholesky test c^2 (I - T) - cut I, as the
    compiled core's), V phi V^T = c^2 (a I - c^2 T)^-1, solved by a Cholesky factor without the
    eigen-decomposition. P r / c is not least squares under a partial mask: a masked posture below a task whose
    rows couple masked and kept joints was left at a residual of 0.5087 against 0.5048. The
    columns P[:, F] are in range(P) to rounding, eps |x| for x = V phi V^T (P r)[F]: where
    (c / a) |x| exceeds `amplified` [rad or m] (1 - t near the cut), delta is projected on
    range(P) again, as the eigen path's amplified corrections are."""
    Pr = P @ residual
    if not c * c > rank_tolerance * max(1.0, c * c):  # every eigenvalue c^2 (1 - t) <= c^2 is cut: none moves
        return np.zeros_like(Pr)
    masked = np.flatnonzero(mask == 0.0) if mask is not None else np.zeros(0, dtype=int)
    if masked.size == 0:
        return Pr / c if lam2 == 0.0 else Pr * (c / (c * c + lam2))
    c2, f = c * c, masked.size
    a, cut = c2 + lam2, rank_tolerance * max(1.0, c2)
    T = P[np.ix_(masked, masked)]
    try:  # every c^2 (1 - t) above the cut (a shifted Cholesky factor exists): V phi V^T = c^2 (a I - c^2 T)^-1
        np.linalg.cholesky(c2 * (np.eye(f) - T) - cut * np.eye(f))
        import scipy.linalg  # here: importing reljac.ik stays light (scipy.linalg takes a quarter second)

        factor = scipy.linalg.cho_factor(a * np.eye(f) - c2 * T, lower=True, check_finite=False)
        x = c2 * scipy.linalg.cho_solve(factor, Pr[masked], check_finite=False)
    except np.linalg.LinAlgError:  # a direction at the cut: dropped
        t, V = np.linalg.eigh(T)
        kept = c2 * (1.0 - t) > cut
        with np.errstate(divide="ignore", invalid="ignore"):
            phi = np.where(kept, c2 / (a - c2 * t), -1.0 / t)
        x = V @ (phi * (V.T @ Pr[masked]))
    delta = (c / a) * (Pr + P[:, masked] @ x)
    return P @ delta if (c / a) * float(np.linalg.norm(x)) > amplified else delta

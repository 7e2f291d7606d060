"""Strict task hierarchy with joint-velocity bounds, in plain linear algebra (no QP solver).

Given priority levels ``(A_k, b_k)`` (A_k: (m_k, nv) task Jacobians, b_k: (m_k,) desired task
velocities) and bounds ``lo <= v <= hi``, find v that

1. meets level 1 as well as possible, then level 2 in the null space of level 1, and so on
   (recursive null-space projection, Siciliano and Slotine), with singularity-robust damped
   pseudo-inverses (damping grows as the smallest singular value falls below a threshold);
2. stays inside the bounds, with Saturation in the Null Space (Flacco, De Luca and Khatib): a
   joint that would cross a bound is saturated at it and taken out of that level's null space; if
   a level cannot be met inside the bounds even then, it is scaled by the largest factor
   s in [0, 1] that fits (its direction is kept, its magnitude shrinks) and lower levels go on in
   what remains.

Notation: the null space left for the current level is kept as an orthonormal basis Z (nv, k)
(its projector is Z Z^T); saturating joint j restricts Z to the vectors with zero j-th entry, a
Householder update. v_prev is the solution of the levels above.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import lapack

from ..exceptions import ConfigurationError

RANK_TOLERANCE = 1e-9  # singular values below this (relative to 1) count as zero
BOUND_TOLERANCE = 1e-12
MAX_STALE_SATURATIONS = 2  # stop saturating a level after this many joints that did not help


@dataclass
class Level:
    """One priority level: A v = b is wanted.

    ``identity_scale`` c marks A = c diag(mask) (mask: 1 kept, 0 masked rows; default all kept),
    and then A may be None and b has zeros on masked rows: the level's correction is the
    null-space projection of its residual (exact least squares when the mask keeps every row).
    """

    A: np.ndarray | None
    b: np.ndarray
    identity_scale: float | None = None
    mask: np.ndarray | None = None


@dataclass
class LevelReport:
    """What happened to one level: its scale factor s and the joints saturated for it."""

    scale: float
    saturated: list[int] = field(default_factory=list)
    damping: float = 0.0
    smallest_singular_value: float = float("inf")


@dataclass
class DampingPolicy:
    """Adaptive damping: lambda^2 = lambda_max^2 (1 - (sigma_min / threshold)^2) below threshold.

    Far from singularities (sigma_min >= threshold) there is no damping, so feasible tasks are
    met exactly; at a singularity the gain of the inverse is bounded by 1 / (2 lambda_max).
    """

    threshold: float = 0.02
    max_damping: float = 0.05

    def __post_init__(self) -> None:
        for name in ("threshold", "max_damping"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and np.isfinite(value) and value >= 0):
                raise ConfigurationError(f"DampingPolicy.{name} must be a finite number >= 0, got {value!r}")

    def damping(self, smallest: float) -> float:
        if smallest >= self.threshold:
            return 0.0
        return self.max_damping**2 * (1.0 - (smallest / self.threshold) ** 2)


def _damped_svd(A: np.ndarray, policy: DampingPolicy):
    """SVD of A (m, k) with adaptive damping: (U_r, inv_sigma, V (k, k), rank, damping^2, sigma_min).

    The damped pseudo-inverse is ``V[:, :rank] @ diag(inv_sigma) @ U_r.T``; ``V[:, rank:]`` spans
    the null space of A.
    """
    if A.size == 0:
        raise ValueError("empty task matrix")  # callers never get here: they stop at an empty basis
    U, sigma, Vt, info = lapack.dgesdd(A, compute_uv=1, full_matrices=1)  # numpy's svd, less overhead
    if info != 0:
        U, sigma, Vt = np.linalg.svd(A, full_matrices=True)
    scale = max(1.0, sigma[0]) if sigma.size else 1.0
    threshold = RANK_TOLERANCE * scale
    rank = sigma.size if sigma[-1] > threshold else int(np.count_nonzero(sigma > threshold))
    smallest = float(sigma[rank - 1]) if rank else 0.0
    if rank < A.shape[0]:
        smallest = 0.0  # a rank-deficient task is singular whatever its non-zero values say
    lam2 = policy.damping(smallest)
    sig = sigma[:rank]
    return U[:, :rank], sig / (sig * sig + lam2), Vt.T, rank, lam2, smallest


def _without_row_direction(Z: np.ndarray, j: int) -> np.ndarray | None:
    """Basis of {Z y : (Z y)_j = 0}: Z times an orthonormal basis of z^perp, z = Z[j] (Householder).

    None when joint j cannot move in span(Z) anyway.
    """
    z = Z[j]
    norm = float(np.sqrt(z @ z))
    if norm < 1e-12:
        return None
    u = z.copy()
    u[0] += norm if z[0] >= 0 else -norm
    u /= np.sqrt(u @ u)
    # Z H with H = I - 2 u u^T (H z = -+ norm e_1); dropping H's first column drops z's direction
    return (Z - np.outer(2.0 * (Z @ u), u))[:, 1:]


def _max_scale(base: np.ndarray, delta: np.ndarray, lo: list[float], hi: list[float]) -> tuple[float, int]:
    """Largest s in [0, 1] with lo <= base + s delta <= hi, and the joint that limits it.

    Returns (1, -1) when nothing limits s below 1, and (-1, j) when base itself is outside the
    bounds (j: the worst joint). A plain loop over lists: for a few dozen joints it beats
    numpy's per-call overhead several times over.
    """
    tol = BOUND_TOLERANCE
    s, limiting, worst, worst_violation = 1.0, -1, -1, tol
    for j, (b, d, low, high) in enumerate(zip(base.tolist(), delta.tolist(), lo, hi)):
        violation = b - high if b > high else low - b
        if violation > worst_violation:
            worst, worst_violation = j, violation
        end = b + d
        if end > high + tol:
            ratio = (high - b) / d
        elif end < low - tol:
            ratio = (low - b) / d
        else:
            continue
        if ratio < s:
            s, limiting = ratio, j
    if worst >= 0:
        return -1.0, worst
    return (1.0, -1) if limiting < 0 else (max(s, 0.0), limiting)


def solve_hierarchy(
    levels: list[Level],
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    policy: DampingPolicy | None = None,
) -> tuple[np.ndarray, list[LevelReport]]:
    """Joint velocity v (nv,) for prioritized levels inside ``lo <= v <= hi``.

    ``lo <= hi`` must hold element-wise (callers clip their bounds first). The result always
    satisfies the bounds: when a level cannot be met it is scaled down, never the bounds relaxed.
    """
    policy = policy or DampingPolicy()
    v = np.minimum(np.maximum(0.0, lo), hi)  # zero if feasible, else the nearest point of the box
    Z = np.eye(lo.shape[0])
    reports = []
    lo_list, hi_list = lo.tolist(), hi.tolist()
    for level in levels:
        if level.A is not None and level.A.shape[0] == 0:  # every row masked out: nothing asked
            reports.append(LevelReport(scale=1.0))
            continue
        if Z.shape[1] == 0:  # nothing left for lower levels
            reports.append(LevelReport(scale=0.0))
            continue
        v, Z, report = _solve_level(level, v, Z, lo, hi, lo_list, hi_list, policy)
        reports.append(report)
    return v, reports


def _solve_level(level: Level, v_prev, Z, lo, hi, lo_list, hi_list, policy):
    """One SNS level: returns (v, null-space basis left for the levels below, report).

    v = base + s * delta: base moves the saturated joints onto their bounds inside span(Z) (so
    the levels above are untouched); delta is the damped least-squares correction of this
    level inside what is left of span(Z) once those joints are frozen. Joints are saturated one
    at a time, the most critical first; of the candidates seen, the one whose task residual
    |A v - b| is smallest wins (for a level that fits, the first one, met exactly).
    """
    saturated: list[int] = []
    base, Z_free = v_prev, Z
    best = None  # (residual norm, -s, v, Z_next, saturated, damping, sigma_min)
    stale = 0  # saturations in a row that did not lower the residual
    for _ in range(v_prev.shape[0] + 1):
        if level.A is None:  # A = c diag(mask)
            scaled = level.identity_scale * base
            residual = level.b - (scaled if level.mask is None else level.mask * scaled)
        else:
            residual = level.b - level.A @ base
        if level.identity_scale is not None:  # A = c I: (c Z)^+ = Z^T / c, nothing left below
            delta = Z_free @ (Z_free.T @ residual) / level.identity_scale
            Z_next, lam2, smallest = Z_free[:, :0], 0.0, float("inf")
            A_delta = level.identity_scale * (delta if level.mask is None else level.mask * delta)
        else:
            Ur, inv_sigma, V, rank, lam2, smallest = _damped_svd(level.A @ Z_free, policy)
            delta = Z_free @ (V[:, :rank] @ (inv_sigma * (Ur.T @ residual)))
            Z_next = Z_free @ V[:, rank:]
            A_delta = level.A @ delta
        s, joint = _max_scale(base, delta, lo_list, hi_list)
        if s < 0:  # freezing the last joint pushed another one out: keep the best so far
            break
        remaining = float(np.linalg.norm(s * A_delta - residual))  # |A v - b| at v = base + s delta
        if best is None or remaining < best[0] * (1.0 - 1e-9) - 1e-15:
            best = (remaining, -s, base + s * delta, Z_next, list(saturated), lam2, smallest)
            stale = 0
        elif s > 1e-6:  # s ~ 0: a joint sits on its bound; freezing it is free, keep going
            stale += 1
        if s >= 1.0 or level.identity_scale is not None or stale >= MAX_STALE_SATURATIONS:
            break  # met; an identity (posture) level is only scaled, it has no null space to use
        reduced = _without_row_direction(Z_free, joint)
        if reduced is None or reduced.shape[1] == 0:
            break
        # saturate the joint that limits s: move it onto its bound within span(Z_free), freeze it
        z = Z_free[joint]
        target = hi[joint] if delta[joint] > 0 else lo[joint]
        base = base + Z_free @ (z * ((target - base[joint]) / float(z @ z)))
        Z_free = reduced
        saturated.append(joint)
    if best is None:  # cannot happen while v_prev is inside the bounds; stay safe anyway
        return np.clip(v_prev, lo, hi), Z, LevelReport(scale=0.0)
    _, minus_s, v, Z_next, S, lam2, smallest = best
    return np.minimum(np.maximum(v, lo), hi), Z_next, LevelReport(-minus_s, S, lam2, smallest)

"""How much each level of the hierarchy solvers is damped (:class:`DampingPolicy`): the
singular part near a singularity and the Levenberg-Marquardt part on large steps. Read by both
hierarchy solvers (reljac.ik.solvers.hierarchy, reljac.ik.solvers.inequality) and their
compiled twins (src/core/hierarchy.cpp: Policy)."""

from __future__ import annotations

from dataclasses import dataclass

from ...exceptions import ConfigurationError
from ...validation import as_float

MAX_DAMPING = 1e150  # the largest DampingPolicy.max_damping: its square stays finite


@dataclass(frozen=True)
class DampingPolicy:
    """Damping of each level's least squares: lambda^2 = singular part + error part.

    Singular part: lambda_max^2 (1 - (sigma_min / threshold)^2) below `threshold`, 0 above it,
    so far from singularities feasible tasks are met exactly, and at a singularity the gain of
    the inverse is bounded by 1 / (2 lambda_max).

    Error part (Levenberg-Marquardt): ``error_damping * (|b dt|^2 - step_threshold^2)`` when
    positive, b being the level's feedback velocity and dt the control period, so |b dt| is the
    displacement asked for in one step [m, rad]. Large steps toward far or unreachable targets
    are damped, where the linear model is poor and undamped steps overshoot; steps below
    `step_threshold` are not, so a level near its target is met exactly. 0 turns it off.
    """

    threshold: float = 0.02
    max_damping: float = 0.05
    error_damping: float = 1.0
    step_threshold: float = 0.01

    def __post_init__(self) -> None:
        for name in ("threshold", "max_damping", "error_damping", "step_threshold"):
            as_float(getattr(self, name), f"DampingPolicy.{name}", minimum=0.0, valid="a finite number >= 0",
                     error=ConfigurationError)
        if float(self.max_damping) > MAX_DAMPING:  # lambda_max^2 would overflow to inf
            raise ConfigurationError(f"DampingPolicy.max_damping must be at most {MAX_DAMPING:g} (its square is "
                                     f"lambda^2), got {float(self.max_damping):g}")

    def error_part(self, step_squared: float) -> float:
        """lambda^2 of a level asking for a displacement of squared norm `step_squared` per step."""
        return self.error_damping * max(step_squared - self.step_threshold * self.step_threshold, 0.0)

    def damping(self, smallest: float) -> float:
        """lambda^2 for a level whose smallest singular value is `smallest`."""
        if smallest >= self.threshold:
            return 0.0
        ratio = smallest / self.threshold  # products, not **: inf (as in C++), no OverflowError
        return self.max_damping * self.max_damping * (1.0 - ratio * ratio)


__all__ = ["MAX_DAMPING", "DampingPolicy"]

"""Joint limits as bounds on the velocity of one control step.

Position limits become velocity bounds so that q + v dt stays inside [q_min, q_max]: with
gain gamma in (0, 1], ``gamma (q_min - q) / dt <= v <= gamma (q_max - q) / dt`` lets a joint
approach its limit geometrically and never cross it. A joint already outside its limits gets a
bound that pushes it back (recovery), capped by the velocity limit. An optional margin shrinks
the limits the controller aims to stay in ([q_min + margin, q_max - margin], never past the
middle); the URDF limits themselves are never crossed. Velocity limits come from the URDF (or
are given) and are applied as they are.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import ConfigurationError
from ..robot import Robot
from ..validation import as_float


class JointLimits:
    """Velocity bounds (lo, hi), shapes (nv,), from position and velocity limits.

    Args:
        robot: the robot (its URDF limits are used).
        velocity_limits: (nv,) [rad/s or m/s] overriding the URDF's; inf = unlimited.
        limit_gain: gamma above, in (0, 1]: the fraction of the distance to a position limit a
            joint may cover in one step.
        position_margin: distance kept from every position limit [rad or m], >= 0.
        default_velocity_limit: used where the URDF gives none (0 or missing) [rad/s or m/s].
    """

    def __init__(
        self,
        robot: Robot,
        *,
        velocity_limits=None,
        limit_gain: float = 0.5,
        position_margin: float = 0.0,
        default_velocity_limit: float = np.inf,
    ) -> None:
        margin = as_float(position_margin, "position_margin", minimum=0.0, error=ConfigurationError)
        limit_gain = as_float(limit_gain, "limit_gain", minimum=0.0, strict=True, error=ConfigurationError)
        if limit_gain > 1:
            raise ConfigurationError(f"limit_gain must be in (0, 1], got {limit_gain}")
        model = robot.model
        if velocity_limits is None:
            vmax = model.velocityLimit.astype(float).copy()
            vmax[~(vmax > 0)] = default_velocity_limit
        else:
            try:
                vmax = np.array(velocity_limits, dtype=float)
            except (TypeError, ValueError):
                raise ConfigurationError(f"velocity_limits must be ({robot.nv},) positive numbers, got {velocity_limits!r}") from None
            if vmax.shape != (robot.nv,) or np.isnan(vmax).any() or (vmax <= 0).any():
                raise ConfigurationError(f"velocity_limits must be ({robot.nv},) positive numbers (inf allowed)")
        self.velocity_limits = vmax
        self.limit_gain = float(limit_gain)
        # 1-DoF joints with finite position limits: their q index and v index
        q_idx, v_idx = [], []
        for j in range(1, model.njoints):
            joint = model.joints[j]
            if joint.nq == 1 and joint.nv == 1:
                lo, hi = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
                if np.isfinite(lo) and np.isfinite(hi) and lo <= hi:  # lo == hi: a locked joint
                    q_idx.append(joint.idx_q)
                    v_idx.append(joint.idx_v)
        self.q_index = np.array(q_idx, dtype=int)
        self.v_index = np.array(v_idx, dtype=int)
        self._vmax_limited = vmax[self.v_index]
        self.urdf_q_min = model.lowerPositionLimit[self.q_index].copy()
        self.urdf_q_max = model.upperPositionLimit[self.q_index].copy()
        middle = 0.5 * (self.urdf_q_min + self.urdf_q_max)
        self.q_min = np.minimum(self.urdf_q_min + margin, middle)  # the limits the controller keeps
        self.q_max = np.maximum(self.urdf_q_max - margin, middle)

    def bounds(self, q: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) with lo <= hi: velocity bounds for one step of length dt [s] from q."""
        hi = self.velocity_limits.copy()
        lo = -hi
        vi, vmax = self.v_index, self._vmax_limited
        to_min = (self.q_min - q[self.q_index]) / dt  # < 0 inside the limits
        to_max = (self.q_max - q[self.q_index]) / dt  # > 0 inside the limits
        # inside: a fraction gamma of the way to the limit; outside: straight back, at most vmax
        lo[vi] = np.minimum(np.maximum(-vmax, np.where(to_min > 0, to_min, self.limit_gain * to_min)), vmax)
        hi[vi] = np.maximum(np.minimum(vmax, np.where(to_max < 0, to_max, self.limit_gain * to_max)), -vmax)
        return lo, hi

    def clamp(self, q_next: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Guard against rounding: a joint inside its (margin-shrunk) limits at q stays inside at
        q_next, and no joint inside its URDF limits leaves them."""
        for low, high in ((self.q_min, self.q_max), (self.urdf_q_min, self.urdf_q_max)):
            qn, qj = q_next[self.q_index], q[self.q_index]
            inside = (qj >= low) & (qj <= high)
            q_next[self.q_index] = np.where(inside, np.clip(qn, low, high), qn)
        return q_next

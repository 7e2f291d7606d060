"""The joint limits: speed limits as a box (:class:`JointVelocityLimit`), position limits as
velocity bounds and a guard (:class:`JointPositionLimit`), and reversal damping
(:class:`ReversalDamping`); see :mod:`reljac.ik.limits.base` for what a limit gives the controller.

Joint position limits become velocity bounds so that q + v dt stays inside [q_min, q_max]: with
gain gamma in (0, 1], ``gamma (q_min - q) / dt <= v <= gamma (q_max - q) / dt`` lets a joint
approach its limit geometrically and never cross it. A joint outside its limits is driven back
(recovery): it must move toward them and may not overshoot them. An optional margin shrinks the
limits the controller aims to stay in ([q_min + margin, q_max - margin], never past the middle);
the URDF limits themselves are never crossed.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...exceptions import ConfigurationError
from ...relative import Kinematics
from ...robot import Robot
from ...validation import as_float, real_array, short_repr
from ..description import Description, FixedAttributes, frozen
from .base import Limit, VelocityConstraint, step_fraction


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def one_dof_joints(robot: Robot) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(q index, v index, lower, upper) of the 1-DoF joints with finite position limits."""
    model = robot.model
    q_idx, v_idx = [], []
    for j in range(1, model.njoints):
        joint = model.joints[j]
        if joint.nq == 1 and joint.nv == 1:
            lo, hi = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
            if np.isfinite(lo) and np.isfinite(hi) and lo <= hi:  # lo == hi: a locked joint
                q_idx.append(joint.idx_q)
                v_idx.append(joint.idx_v)
    q_index = np.array(q_idx, dtype=int)
    return (q_index, np.array(v_idx, dtype=int), model.lowerPositionLimit[q_index].astype(float),
            model.upperPositionLimit[q_index].astype(float))


class JointVelocityLimit(Limit, kind="joint_velocity_limit"):
    """|v| <= v_max per velocity index.

    Args:
        robot: the robot; its URDF velocity limits are used unless `velocity_limits` is given.
        velocity_limits: (nv,) [rad/s or m/s], positive; inf = unlimited.
        default_velocity_limit: where the URDF gives none (0 or missing) [rad/s or m/s].
    """

    name = "joint velocity"

    def __init__(self, robot: Robot, velocity_limits: ArrayLike | None = None, *,
                 default_velocity_limit: float = np.inf) -> None:
        self.robot = robot
        if velocity_limits is None:
            vmax = robot.model.velocityLimit.astype(float).copy()
            vmax[~(vmax > 0)] = default_velocity_limit
        else:
            vmax = real_array(velocity_limits)
            if vmax is None:
                raise ConfigurationError(
                    f"velocity_limits must be ({robot.nv},) positive numbers, got {short_repr(velocity_limits)}")
            if vmax.shape != (robot.nv,) or np.isnan(vmax).any() or (vmax <= 0).any():
                raise ConfigurationError(f"velocity_limits must be ({robot.nv},) positive numbers (inf allowed)")
        self._velocity_limits = frozen(vmax)
        self._bounds = VelocityConstraint(lo=frozen(-vmax), hi=self._velocity_limits)

    @property
    def velocity_limits(self) -> np.ndarray:
        """(nv,) [rad/s or m/s] (read-only: make a new limit for others)."""
        return self._velocity_limits

    def constraint(self, kin: Kinematics, dt: float) -> VelocityConstraint:
        return self._bounds

    def description(self, robot: Robot) -> Description:
        return Description("VelocityBoxDescription", lo=self._bounds.lo, hi=self._bounds.hi)

class JointPositionLimit(FixedAttributes, Limit, kind="joint_position_limit"):
    """Position limits of the 1-DoF joints as velocity bounds (see the module docstring).

    Args:
        robot: the robot (its URDF limits are used).
        limit_gain: gamma, in (0, 1]: the fraction of the distance to a position limit a joint
            may cover in one step.
        position_margin: distance kept from every position limit [rad or m], >= 0; a joint whose
            range is narrower than twice the margin is kept at the middle of its range.
    """

    name = "joint position"
    fixed_attributes = frozenset({"robot", "nv", "q_index", "v_index", "urdf_q_min", "urdf_q_max", "q_min", "q_max"})

    def __init__(self, robot: Robot, *, limit_gain: float = 0.5, position_margin: float = 0.0) -> None:
        self.robot = robot
        margin = as_float(position_margin, "position_margin", minimum=0.0, error=ConfigurationError)
        self._limit_gain = step_fraction(limit_gain, "limit_gain")
        self.nv = robot.nv
        # read-only arrays: the joints limited, their URDF limits and the limits kept
        self.q_index, self.v_index, self.urdf_q_min, self.urdf_q_max = (
            _read_only(a) for a in one_dof_joints(robot))
        middle = 0.5 * (self.urdf_q_min + self.urdf_q_max)
        self.q_min = frozen(np.minimum(self.urdf_q_min + margin, middle))  # the limits the controller keeps
        self.q_max = frozen(np.maximum(self.urdf_q_max - margin, middle))

    @property
    def limit_gain(self) -> float:
        """gamma in (0, 1]: the fraction of the distance to a limit a joint may cover in one step."""
        return self._limit_gain

    @limit_gain.setter
    def limit_gain(self, value: float) -> None:
        self._limit_gain = step_fraction(value, "limit_gain")
        self._changed()

    def description(self, robot: Robot) -> Description:
        return Description("PositionLimitDescription", q_index=self.q_index, v_index=self.v_index, q_min=self.q_min,
                           q_max=self.q_max, urdf_min=self.urdf_q_min, urdf_max=self.urdf_q_max,
                           limit_gain=self._limit_gain)

    def constraint(self, kin: Kinematics, dt: float) -> VelocityConstraint:
        lo, hi = np.full(self.nv, -np.inf), np.full(self.nv, np.inf)
        lo[self.v_index], hi[self.v_index] = self.joint_bounds(kin.q[self.q_index], dt)
        return VelocityConstraint(lo=lo, hi=hi)

    def joint_bounds(self, q: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) [rad/s, m/s] of the limited joints at their positions q, lo <= hi always.

        Inside: a fraction gamma of the way to each limit. Below q_min: at least straight back
        to q_min, at most gamma of the way to q_max (never past it); above q_max likewise.
        """
        to_min = (self.q_min - q) / dt  # < 0 inside the limits
        to_max = (self.q_max - q) / dt  # > 0 inside the limits
        g = self._limit_gain
        below, above = to_min > 0, to_max < 0
        lo = np.where(below, to_min, np.where(above, np.minimum(g * to_min, to_max), g * to_min))
        hi = np.where(above, to_max, np.where(below, np.maximum(g * to_max, to_min), g * to_max))
        return lo, hi

    def guard(self, q_next: np.ndarray, q: np.ndarray) -> np.ndarray:
        """A joint inside its (margin-shrunk) limits at q stays inside at q_next, and no joint
        inside its URDF limits leaves them (rounding)."""
        for low, high in ((self.q_min, self.q_max), (self.urdf_q_min, self.urdf_q_max)):
            qn, qj = q_next[self.q_index], q[self.q_index]
            inside = (qj >= low) & (qj <= high)
            q_next[self.q_index] = np.where(inside, np.clip(qn, low, high), qn)
        return q_next


class ReversalDamping(FixedAttributes, Limit, kind="reversal_damping"):
    """Per-joint step-size control against chatter (Rprop's rule: Riedmiller and Braun, 1993).

    A joint whose commanded velocity reversed between the last two steps, both times faster
    than `threshold` of its velocity limit, overshot: its speed is capped at `shrink` times its
    last speed for the next step. The cap grows back by `grow` per step without a reversal, until
    it no longer binds, but only while the joint goes somewhere: while the mean of its velocity
    over the last ~`window` steps (a running mean) is at least `progress` times its mean speed.
    A bang-bang limit cycle (an unreachable target with one-step gains) thus decays geometrically
    to rest instead of chattering at full speed, and so does a slower cycle (reversals some steps
    apart, or some of them below the threshold: a stretched, singular level, issue 43), whose cap
    would otherwise grow back between its reversals. Smooth motions never reverse at speed from
    one step to the next and are not affected. Stateful: it sees the velocities the controller
    commands (:meth:`observe`); :meth:`reset` forgets them.

    Args:
        robot: the robot (its velocity limits scale `threshold`; unlimited joints use 1 rad/s).
        velocity_limits: (nv,) override [rad/s or m/s], as the controller's.
        shrink: factor in (0, 1) applied to the last speed after a reversal.
        grow: factor > 1 by which the cap grows back per step without reversal.
        threshold: fraction of the velocity limit below which a reversal does not count.
        window: the running means' horizon [steps], >= 1 (their weight on the newest step: 1 / window).
        progress: in [0, 1]: the fraction of its mean speed that a joint's mean velocity must
            reach for its cap to grow (0: it always grows, as Rprop's rule alone).
    """

    name = "reversal damping"
    fixed_attributes = frozenset({"robot", "nv", "velocity_limits", "floor"})

    def __init__(self, robot: Robot, velocity_limits: ArrayLike | None = None, *, shrink: float = 0.5,
                 grow: float = 1.2, threshold: float = 0.05, window: float = 10.0, progress: float = 0.25) -> None:
        self.robot = robot
        self._shrink = as_float(shrink, "shrink", minimum=0.0, strict=True, error=ConfigurationError)
        self._grow = as_float(grow, "grow", minimum=1.0, strict=True, error=ConfigurationError)
        threshold = as_float(threshold, "threshold", minimum=0.0, error=ConfigurationError)
        if self.shrink >= 1:
            raise ConfigurationError(f"shrink must be in (0, 1), got {self.shrink}")
        self._window = as_float(window, "window [steps]", minimum=1.0, error=ConfigurationError)
        self._progress = as_float(progress, "progress", minimum=0.0, error=ConfigurationError)
        if self._progress > 1:
            raise ConfigurationError(f"progress must be in [0, 1], got {self._progress}")
        self.nv = robot.nv
        self.velocity_limits = JointVelocityLimit(robot, velocity_limits).velocity_limits  # read-only
        self.floor = frozen(threshold * np.where(np.isfinite(self.velocity_limits), self.velocity_limits, 1.0))
        self.reset()

    @property
    def shrink(self) -> float:
        """Factor in (0, 1) applied to the last speed after a reversal (read-only)."""
        return self._shrink

    @property
    def grow(self) -> float:
        """Factor > 1 by which a cap grows back per step (read-only)."""
        return self._grow

    @property
    def window(self) -> float:
        """The running means' horizon [steps] (read-only)."""
        return self._window

    @property
    def progress(self) -> float:
        """Fraction of its mean speed a joint's mean velocity must reach for its cap to grow (read-only)."""
        return self._progress

    def description(self, robot: Robot) -> Description:
        return Description("ReversalDampingDescription", velocity_limits=self.velocity_limits, floor=self.floor,
                           shrink=self.shrink, grow=self.grow, window=self.window, progress=self.progress)

    @property
    def cap(self) -> np.ndarray:
        """(nv,) the speed caps for the next step [rad/s, m/s] (inf: none); a copy."""
        if self.held_by is not None:
            step, index = self.held_by
            return np.array(step.reversal_cap(index))
        return self._cap.copy()

    def reset(self) -> None:
        """Forget the velocities seen so far."""
        self._last: np.ndarray | None = None
        self._cap = np.full(self.nv, np.inf)
        self._mean = np.zeros(self.nv)  # running mean of v [rad/s, m/s]
        self._speed = np.zeros(self.nv)  # running mean of |v|

    def constraint(self, kin: Kinematics, dt: float) -> VelocityConstraint:
        self.held_by = None
        return VelocityConstraint(lo=-self._cap, hi=self._cap.copy())

    def observe(self, v: np.ndarray) -> None:
        """Record the velocity v (nv,) commanded this step and update the caps for the next."""
        rate = 1.0 / self.window
        self._mean += rate * (v - self._mean)
        self._speed += rate * (np.abs(v) - self._speed)
        last = self._last
        if last is not None:
            reversed_ = (np.abs(v) > self.floor) & (np.abs(last) > self.floor) & (v * last < 0)
            going = np.abs(self._mean) >= self.progress * self._speed  # (at rest: 0 >= 0, it grows)
            self._cap = np.where(reversed_, self.shrink * np.abs(v), np.where(going, self._cap * self.grow, self._cap))
            self._cap[self._cap > self.velocity_limits] = np.inf
        self._last = v.copy()

"""The task-priority controller (one call per control tick) and the iterative IK ``solve``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pinocchio as pin

from ..exceptions import ConfigurationError, TaskError
from ..relative import Kinematics
from ..robot import Robot
from .hierarchy import DampingPolicy, Level, LevelReport, solve_hierarchy
from .limits import JointLimits
from ..validation import as_count, as_float
from .tasks import PostureTask, Task


def _as_levels(levels) -> list[list[Task]]:
    """Normalize ``levels``: a list of levels, each a task or a list of tasks."""
    if isinstance(levels, Task):
        levels = [[levels]]
    if not isinstance(levels, (list, tuple)):
        raise TaskError(f"levels must be a list of levels (lists of tasks), got {type(levels).__name__}")
    out = []
    for i, level in enumerate(levels):
        tasks = [level] if isinstance(level, Task) else list(level)
        if not tasks or not all(isinstance(t, Task) for t in tasks):
            raise TaskError(f"level {i} must be a Task or a non-empty list of Tasks, got {level!r}")
        out.append(tasks)
    if not out:
        raise TaskError("the controller needs at least one level of tasks")
    return out


class Controller:
    """Strict-priority differential IK with joint limits, without a QP solver.

    Args:
        robot: the robot.
        levels: list of levels, highest priority first; each a list of tasks stacked with their
            weights (a single Task is accepted as a one-task level).
        dt: control period [s].
        velocity_limits: (nv,) override of the URDF's velocity limits [rad/s or m/s].
        limit_gain: fraction of the distance to a position limit allowed in one step, (0, 1].
        position_margin: distance kept from every position limit [rad or m] (default 0).
        damping: the singularity-robust damping policy (threshold on the smallest singular
            value and the maximum damping).

    ``velocity(q)`` returns v (nv,) within the limits; ``step(q)`` integrates it over dt on the
    configuration manifold (``pin.integrate``). ``last_reports`` tells, per level, the scale
    factor applied (1 = met) and the joints saturated for it.
    """

    def __init__(
        self,
        robot: Robot,
        levels,
        *,
        dt: float,
        velocity_limits=None,
        limit_gain: float = 0.5,
        position_margin: float = 0.0,
        damping: DampingPolicy | None = None,
    ) -> None:
        dt = as_float(dt, "dt [s]", minimum=0.0, strict=True, error=ConfigurationError)
        if robot.nv == 0:
            raise ConfigurationError(f"robot '{robot.name}' has no degree of freedom: nothing to control")
        self.robot = robot
        self.levels = _as_levels(levels)
        for task in (t for level in self.levels for t in level):
            other = getattr(task, "robot", None)
            if other is not None and (other.nq, other.nv, other.name) != (robot.nq, robot.nv, robot.name):
                raise TaskError(f"task '{task.name}' was made for robot '{other.name}', not '{robot.name}'")
        self.dt = float(dt)
        self.limits = JointLimits(robot, velocity_limits=velocity_limits, limit_gain=limit_gain,
                                  position_margin=position_margin)
        self.damping = damping or DampingPolicy()
        self.data = robot.model.createData()
        self.last_reports: list[LevelReport] = []
        self.last_kinematics: Kinematics | None = None

    @property
    def tasks(self) -> list[Task]:
        return [t for level in self.levels for t in level]

    def _level(self, tasks: Sequence[Task], kin: Kinematics) -> Level:
        if len(tasks) == 1 and isinstance(tasks[0], PostureTask) and tasks[0].identity_scale is not None:
            task = tasks[0]
            c, mask = task.identity_scale, task.row_mask
            return Level(A=None, b=mask * (c * (-task.gain * task.error(kin))), identity_scale=c, mask=mask)
        rows = [task.weighted(kin) for task in tasks]
        for task, (A, b) in zip(tasks, rows):
            if not (np.isfinite(b).all() and np.isfinite(A).all()):
                raise TaskError(
                    f"task '{task.name}' asks for a non-finite velocity: its gain, weights or target "
                    "velocity overflow (gain * weight * error must stay finite)"
                )
        if len(rows) == 1:
            return Level(*rows[0])
        return Level(np.vstack([A for A, _ in rows]), np.concatenate([b for _, b in rows]))

    def velocity(self, q) -> np.ndarray:
        """Joint velocity v (nv,) [rad/s, m/s] for configuration q (nq,), inside all limits."""
        kin = Kinematics(self.robot, q, data=self.data)
        self.last_kinematics = kin
        levels = [self._level(tasks, kin) for tasks in self.levels]
        lo, hi = self.limits.bounds(kin.q, self.dt)
        v, self.last_reports = solve_hierarchy(levels, lo, hi, policy=self.damping)
        if not np.isfinite(v).all():
            raise TaskError("the levels' velocities overflow (huge gains or weights): no finite solution")
        return v

    def step(self, q) -> np.ndarray:
        """q_next (nq,) = integrate(q, velocity(q) * dt); never leaves the position limits."""
        v = self.velocity(q)
        q = self.last_kinematics.q
        q_next = pin.integrate(self.robot.model, q, v * self.dt)
        return self.limits.clamp(q_next, q)

    def errors(self, q=None) -> dict[str, dict[str, float]]:
        """Per-task error norms at q (default: the q the last velocity / step was computed at)."""
        kin = self.last_kinematics if q is None else Kinematics(self.robot, q)  # own data: keep the last step's
        if kin is None:
            raise ConfigurationError("no configuration yet: pass q or call step first")
        return {task.name: task.error_norms(kin) for task in self.tasks}


@dataclass
class IKResult:
    """Outcome of :func:`solve`: the configuration, whether every task converged, how many
    iterations it took and the final error norms per task."""

    q: np.ndarray
    converged: bool
    iterations: int
    errors: dict[str, dict[str, float]] = field(default_factory=dict)


def solve(
    robot: Robot,
    q0,
    levels,
    *,
    tol: float = 1e-4,
    max_iters: int = 500,
    dt: float = 0.01,
    stall_iters: int = 200,
    **controller_options,
) -> IKResult:
    """Iterate the controller from q0 until every task's errors are below `tol` [m, rad].

    Each iteration is one controller step of length `dt`, so a task's error shrinks by about
    ``gain * dt`` per iteration where nothing saturates: choose gains with gain * dt around
    0.1-0.5 (e.g. gain 20 [1/s] with the default dt = 0.01 s); the default gain 1 needs
    thousands of iterations.

    Tasks with ``counts_for_convergence = False`` (postures) do not count. An unreachable
    target ends with the closest configuration found (smallest sum of errors above tol) and
    ``converged=False``, after `max_iters` or earlier after `stall_iters` without improvement;
    never NaN.
    """
    tol = as_float(tol, "tol", minimum=0.0, strict=True, error=ConfigurationError)
    max_iters = as_count(max_iters, "max_iters", minimum=0)
    stall_iters = as_count(stall_iters, "stall_iters", minimum=1)
    controller = Controller(robot, levels, dt=dt, **controller_options)
    q = robot.validate_q(q0)
    counted = [t for t in controller.tasks if t.counts_for_convergence]

    def score(kin) -> float:  # how far above tol the task errors are, all tasks together
        return sum(max(max(t.error_norms(kin).values()) - tol, 0.0) for t in counted)

    best_q, best_score, since_best = q, None, 0
    for iteration in range(max_iters + 1):
        kin = Kinematics(robot, q, data=controller.data)
        s = score(kin)
        if best_score is None or s < best_score * (1.0 - 1e-9):
            best_q, best_score, since_best = q, s, 0
        else:
            since_best += 1
        if s == 0.0:
            return IKResult(q, True, iteration, controller.errors(q))
        if iteration == max_iters or since_best >= stall_iters:
            break
        q = controller.step(q)
    return IKResult(best_q, False, iteration, controller.errors(best_q))

"""The task-priority controller: one call per control tick.

Per step: one kinematics pass (:class:`~reljac.relative.Kinematics`), every task's rows from it,
every limit's velocity constraint from it, and one call to the hierarchy solver (compiled or
Python, see :mod:`reljac.ik.backend`). The controller knows no task or limit class by name.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..exceptions import ConfigurationError, ReljacError, TaskError
from ..joint_space import velocity_labels
from ..relative import Kinematics
from ..robot import Robot, as_robot
from ..validation import as_float
from . import backend as _backend
from . import compiled as _compiled
from .bounds import row_labels
from .compiled import task_overflow
from .hierarchy import DampingPolicy, Level, LevelReport
from .limits import JointPositionLimit, JointVelocityLimit, Limit, ReversalDamping, intersect
from .tasks import Task


def _as_task(item: Any, i: int) -> Any:
    """A level's item: a Task as it is, a Limit that can be a level's rows (``as_task()``:
    SupportRegion, CollisionAvoidance) as its task; anything else as it is (refused by the caller)."""
    if isinstance(item, Limit):
        as_task = getattr(item, "as_task", None)
        if not callable(as_task):
            raise TaskError(f"level {i}: limit '{item.name}' cannot be a level's rows (a limit with as_task(), "
                            "e.g. SupportRegion or CollisionAvoidance, can): pass it in constraints=")
        return as_task()
    return item


def _as_levels(levels: Any) -> list[list[Task]]:
    """Normalize ``levels``: a list of levels, each a task or a list of tasks (a limit with
    ``as_task()`` in a level stands for its task: its rows at that level)."""
    if isinstance(levels, (Task, Limit)):
        levels = [[levels]]
    if not isinstance(levels, (list, tuple)):
        raise TaskError(f"levels must be a list of levels (lists of tasks), got {type(levels).__name__}")
    out: list[list[Task]] = []
    for i, level in enumerate(levels):
        items = [level] if isinstance(level, (Task, Limit)) else list(level) if isinstance(level, (list, tuple)) \
            else []
        tasks = [_as_task(item, i) for item in items]
        if not tasks or not all(isinstance(t, Task) for t in tasks):
            raise TaskError(f"level {i} must be a Task or a non-empty list of Tasks, got {level!r}")
        out.append(tasks)
    if not out:
        raise TaskError("the controller needs at least one level of tasks")
    return out


def _check_names(levels: Sequence[Sequence[Task]]) -> None:
    """Refuse two distinct tasks of one name: errors, reports and solve_many's targets are keyed by
    name (the same task in two levels is one task)."""
    seen: dict[str, tuple[Task, int]] = {}
    for i, level in enumerate(levels):
        for task in level:
            first = seen.setdefault(task.name, (task, i))
            if first[0] is not task:
                raise TaskError(f"two tasks are named {task.name!r} (levels {first[1]} and {i}): give one another "
                                "name (name=...): errors, reports and solve_many's targets are keyed by name")


SINGULAR = 1e-3  # a level whose smallest singular value is below this is called singular in reports


def _why_unmet(report: LevelReport) -> str:
    """Why a level not met at full scale is not met: the joints or rows saturated for it, else
    a singular level or its target out of reach (the closest point held), else the levels above."""
    held = report.saturated_joints + report.saturated_constraints
    if held:
        return f"{', '.join(held)} at {'its limit' if len(held) == 1 else 'their limits'}"
    sigma = report.smallest_singular_value
    if sigma < SINGULAR or report.damping > 0.0:
        return (f"out of reach or singular (smallest singular value {sigma:.2g}, damping {report.damping:.2g}): "
                "the closest point is held")
    return "the levels above (what they leave cannot meet it)"


class Controller:
    """Strict-priority differential IK with joint limits, without a QP solver.

    Args:
        robot: the robot.
        levels: list of levels, highest priority first; each a list of tasks stacked with their
            weights (a single Task is accepted as a one-task level). A SupportRegion or
            CollisionAvoidance in a level stands for its ``as_task()``: its rows at that level.
        dt: control period [s].
        velocity_limits: (nv,) override of the URDF's velocity limits [rad/s or m/s].
        limit_gain: fraction of the distance to a position limit allowed in one step, (0, 1].
        position_margin: distance kept from every position limit [rad or m] (default 0).
        damping: the damping policy (threshold on the smallest singular value, maximum
            damping, error-dependent damping).
        constraints: more :class:`~reljac.ik.limits.Limit` objects (e.g. collision avoidance),
            held together with the joint limits above every task level.
        backend: "compiled" or "python" (default: the ``RELJAC_BACKEND`` environment variable,
            else the compiled solver when it is built).

    ``velocity(q)`` returns v (nv,) within every limit; ``step(q)`` integrates it over dt on the
    configuration manifold (``pin.integrate``). ``last_reports`` tells, per level, the scale
    factor applied (1 = not scaled), its residual |A v - b|, whether it is met, and the joints
    (by name) and constraints saturated for it.

    A Controller keeps per-step state: use one per thread (sharing one between threads raises
    a ReljacError instead of answering wrongly).
    """

    def __init__(
        self,
        robot: Robot,
        levels: Any,
        *,
        dt: float,
        velocity_limits: ArrayLike | None = None,
        limit_gain: float = 0.5,
        position_margin: float = 0.0,
        damping: DampingPolicy | None = None,
        constraints: Sequence[Limit] = (),
        backend: str | None = None,
        anti_chatter: bool = True,
    ) -> None:
        dt = as_float(dt, "dt [s]", minimum=0.0, strict=True, error=ConfigurationError)
        robot = as_robot(robot)  # a Robot, or a pin.RobotWrapper / pin.Model made one
        if robot.nv == 0:
            raise ConfigurationError(f"robot '{robot.name}' has no degree of freedom: nothing to control")
        if damping is not None and not isinstance(damping, DampingPolicy):
            raise ConfigurationError(f"damping must be a reljac.ik.DampingPolicy, got {damping!r}")
        constraints = list(constraints) if isinstance(constraints, (list, tuple)) else [constraints]  # type: ignore[list-item]
        for limit in constraints:
            if not isinstance(limit, Limit):
                raise ConfigurationError(f"constraints must be reljac.ik Limit objects, got {limit!r}")
        self.robot = robot
        self._levels = tuple(tuple(level) for level in _as_levels(levels))
        _check_names(self._levels)
        for task in self.tasks:
            other = getattr(task, "robot", None)
            if other is not None and (other.nq, other.nv, other.name) != (robot.nq, robot.nv, robot.name):
                raise TaskError(f"task '{task.name}' was made for robot '{other.name}', not '{robot.name}'")
        self._dt = float(dt)
        limits_ = [
            JointVelocityLimit(robot, velocity_limits),
            JointPositionLimit(robot, limit_gain=limit_gain, position_margin=position_margin),
            *constraints,
        ]
        if anti_chatter:
            limits_.append(ReversalDamping(robot, velocity_limits))
        self._limits = tuple(limits_)
        self._damping = damping or DampingPolicy()
        self.backend = _backend.resolve(backend)
        self.backend_note = ""  # why the backend is not the one asked for ("" when it is)
        self._solve = _backend.solver(self.backend, warm=True)  # bounded levels: warm-started
        self.data = robot.new_data()
        self._last_q: np.ndarray | None = None  # the q of the last velocity / step (see _stepped_q)
        self._q_in_core = False  # the last step's q is the compiled step's copy, fetched when asked for
        self._last_kinematics: Kinematics | None = None
        self._kinematics_data: pin.Data | None = None  # last_kinematics' after a compiled step (made once)
        self._last_velocity: np.ndarray | None = None
        self._reports: list[LevelReport] = []
        self._compiled_reports = False  # the last step's reports are the compiled step's, not named yet
        self._labels = velocity_labels(robot)
        self._lock = threading.Lock()
        self._step = _compiled.build(self, _backend.core()) if self.backend == "compiled" else None

    @property
    def levels(self) -> tuple[tuple[Task, ...], ...]:
        """The levels, highest priority first (read-only: build a new Controller for others;
        the tasks themselves can be changed)."""
        return self._levels

    @property
    def limits(self) -> tuple[Limit, ...]:
        """The limits held above every level: joint velocity, joint position, the constraints
        given, reversal damping (read-only: build a new Controller for others)."""
        return self._limits

    @property
    def dt(self) -> float:
        """Control period [s] (> 0)."""
        return self._dt

    @dt.setter
    def dt(self, value: float) -> None:
        self._dt = as_float(value, "dt [s]", minimum=0.0, strict=True, error=ConfigurationError)
        if self._step is not None:
            self._step.set_parameters()

    @property
    def damping(self) -> DampingPolicy:
        """The damping policy (a frozen DampingPolicy: assign a new one to change it)."""
        return self._damping

    @damping.setter
    def damping(self, value: DampingPolicy) -> None:
        if not isinstance(value, DampingPolicy):
            raise ConfigurationError(f"damping must be a reljac.ik.DampingPolicy, got {value!r}")
        self._damping = value
        if self._step is not None:
            self._step.set_parameters()

    @property
    def last_velocity(self) -> np.ndarray | None:
        """v (nv,) of the last velocity / step (None before the first); a copy."""
        with self._held():
            if self._last_velocity is None and self._stepped_q() is not None and self._step is not None:
                self._last_velocity = self._step.last_velocity()
            return None if self._last_velocity is None else self._last_velocity.copy()

    @property
    def last_kinematics(self) -> Kinematics | None:
        """The kinematics at the q of the last velocity / step (None before the first), in the
        controller's own data: valid until the next step, as on either backend."""
        with self._held():
            q = self._stepped_q()
            if self._last_kinematics is None and q is not None:  # after a compiled step: made on demand
                if self._kinematics_data is None:
                    self._kinematics_data = self.robot.new_data()
                self._last_kinematics = Kinematics(self.robot, q, data=self._kinematics_data)
            return self._last_kinematics

    @property
    def compiled_step(self) -> bool:
        """True when steps run as one compiled call (``reljac.ik._core.Step``)."""
        return self._step is not None

    @property
    def last_reports(self) -> list[LevelReport]:
        """Per level, what the last velocity / step did (see :class:`LevelReport`)."""
        with self._held():
            if self._compiled_reports and self._step is not None:
                self._reports = self._named(self._step.reports(),
                                            self._step.constraint_names())
                self._compiled_reports = False
            return list(self._reports)  # (a copy: the caller may change it)

    def _named(self, reports: list[LevelReport], row_names: list[str]) -> list[LevelReport]:
        for k, (report, tasks) in enumerate(zip(reports, self._levels, strict=True)):
            report.scale += 0.0  # -0.0 (a level scaled to nothing from below) reads as 0.0
            report.tasks = [t.name for t in tasks]
            report.saturated_joints = [self._labels[j] for j in report.saturated]
            report.saturated_constraints = [row_names[i] for i in report.saturated_rows]
            report.limited_by = (self._labels[report.limit_index] if report.limit_kind == 0 else
                                 row_names[report.limit_index] if report.limit_kind == 1 else
                                 "the levels above (no freedom left)" if report.limit_kind == 2 else
                                 row_labels(self._levels[report.limit_level])[report.limit_index]
                                 if report.limit_kind == 3 else
                                 _why_unmet(report) if not report.met else "")
            report.on_bound = sorted(set(report.active) | {i for r in reports[k + 1:] for j, i in r.held if j == k})
            if report.on_bound:  # a level with bounds: its rows at or beyond a bound, by name
                labels = row_labels(tasks)
                report.active_rows = [labels[i] for i in report.active]
                report.on_bound_rows = [labels[i] for i in report.on_bound]
        return reports

    @property
    def tasks(self) -> list[Task]:
        return [t for level in self._levels for t in level]

    def _level(self, tasks: Sequence[Task], kin: Kinematics) -> Level:
        rows = [task.rows(kin) for task in tasks]
        if len(rows) == 1 and rows[0].A is None:
            r = rows[0]
            level = Level(None, r.b, identity_scale=r.identity_scale, mask=r.mask, lower=r.lower, upper=r.upper)
        else:
            for task, r in zip(tasks, rows, strict=True):
                if not (np.isfinite(r.b).all() and (r.A is None or np.isfinite(r.A).all())):
                    raise task_overflow(task)
            dense = [r.dense(self.robot.nv) for r in rows]
            if len(dense) == 1:
                level = Level(*dense[0])
            else:
                level = Level(np.vstack([A for A, _ in dense]), np.concatenate([b for _, b in dense]))
            if any(r.lower is not None for r in rows):  # bounds: inequality rows (equality rows: lower = upper = b)
                bounds = [r.dense_bounds(self.robot.nv) for r in rows]
                level.lower = np.concatenate([lo for lo, _ in bounds])
                level.upper = np.concatenate([hi for _, hi in bounds])
        if self._damping.error_damping and level.identity_scale is None:  # (an identity level: undamped)
            # |b dt|^2 (dt * dt: ** raises on overflow where a product gives inf)
            with np.errstate(over="ignore"):
                parts = [float(r.feedback @ r.feedback) for r in rows]
            for task, part in zip(tasks, parts, strict=True):
                if not np.isfinite(part):  # |gain e|^2 overflows: lambda^2 = inf would stop the level and call it met
                    raise task_overflow(task)
            asked = sum(parts) * (self._dt * self._dt)
            level.extra_damping = self._damping.error_part(asked)
        return level

    def _velocity(self, q: ArrayLike) -> np.ndarray:
        if self._step is not None:
            q = self.robot.validate_q(q)
            v = self._step.velocity(q)
            self._after_compiled(q)
            return np.array(v)
        kin = Kinematics(self.robot, q, data=self.data)
        levels = [self._level(tasks, kin) for tasks in self._levels]
        lo, hi, C, d, row_names = intersect([limit.constraint(kin, self._dt) for limit in self._limits],
                                            self.robot.nv)
        v, reports = self._solve(levels, lo, hi, C, d, self._damping)
        if not np.isfinite(v).all():
            raise TaskError("the levels' velocities overflow (huge gains or weights): no finite solution")
        for limit in self._limits:
            limit.observe(v)
        self._reports, self._compiled_reports = self._named(reports, row_names), False
        self._last_q, self._last_kinematics, self._last_velocity = kin.q, kin, v
        self._q_in_core = False
        return v

    def _after_compiled(self, q: np.ndarray | None) -> None:
        """After a compiled step from q (None: the core keeps the step's q, see _stepped_q)."""
        self._compiled_reports = True
        self._last_q, self._last_kinematics, self._last_velocity = q, None, None
        self._q_in_core = q is None

    def _stepped_q(self) -> np.ndarray | None:
        """The q of the last velocity / step (None before the first)."""
        if self._q_in_core and self._step is not None:
            self._last_q, self._q_in_core = self._step.last_q(), False
        return self._last_q

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """The controller held for the block (another thread's step or read raises, as _acquire).
        For the reads; step and velocity acquire and release inline (this generator costs ~0.9 us,
        the inline pattern ~0.15 us: a sixth of a compiled step)."""
        self._acquire()
        try:
            yield
        finally:
            self._lock.release()

    def _acquire(self) -> None:
        """Hold the controller for one call (release it after); another thread's call raises."""
        if not self._lock.acquire(blocking=False):
            raise ReljacError("this Controller is in use by another thread: create one Controller per thread")

    def velocity(self, q: ArrayLike) -> np.ndarray:
        """Joint velocity v (nv,) [rad/s, m/s] for configuration q (nq,), inside all limits."""
        self._acquire()
        try:
            return self._velocity(q).copy()
        finally:
            self._lock.release()

    def step(self, q: ArrayLike) -> np.ndarray:
        """q_next (nq,) = integrate(q, velocity(q) * dt); never leaves the position limits."""
        if not self._lock.acquire(False):  # (_acquire, inline: the compiled step's path is short)
            self._acquire()
        try:
            step = self._step
            if step is not None:
                if step.whole:  # the whole step in one compiled call, q checked there (the core keeps a copy)
                    q_next = step.step(q)
                    # _after_compiled(None), inline
                    self._compiled_reports = self._q_in_core = True
                    self._last_q = self._last_kinematics = self._last_velocity = None
                    return q_next
                q = self.robot.validate_q(q)
                step.velocity(q)
                q_next = step.integrate(q)
                self._after_compiled(q)
                return q_next
            v = self._velocity(q)
            q_now = self._last_q
            assert q_now is not None  # set by _velocity
            q_next = pin.integrate(self.robot.model, q_now, v * self._dt)
            for limit in self._limits:
                q_next = limit.guard(q_next, q_now)
            return q_next
        finally:
            self._lock.release()

    def reset(self) -> None:
        """Forget the state kept between steps (start of a new motion)."""
        for limit in self._limits:
            limit.reset()
        if self._step is not None:
            self._step.reset()
        self._solve = _backend.solver(self.backend, warm=True)  # (cold again)
        self._reports, self._compiled_reports = [], False
        self._last_q, self._last_kinematics, self._last_velocity = None, None, None
        self._q_in_core = False

    def errors(self, q: ArrayLike | None = None) -> dict[str, dict[str, float]]:
        """Per-task error norms at q (default: the q the last velocity / step was computed at)."""
        kin = self.last_kinematics if q is None else Kinematics(self.robot, q)  # own data: keep the last step's
        if kin is None:
            raise ConfigurationError("no configuration yet: pass q or call step first")
        return {task.name: task.error_norms(kin) for task in self.tasks}

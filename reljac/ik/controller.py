"""The task-priority controller: one call per control tick.

Per step: one kinematics pass (:class:`~reljac.relative.Kinematics`), every task's rows from it,
every limit's velocity constraint from it, and one call to the hierarchy solver (compiled or
Python, see :mod:`reljac.ik.solvers.backend`). The controller knows no task or limit class by name.
A level's system is built by :mod:`reljac.ik.level_system`, the reports are named by
:mod:`reljac.ik.level_names`.
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
from ..validation import as_bool, as_float
from . import compiled_step as _compiled
from .gain_check import GainCheck, warn_of_unstable_gains
from .level_names import check_names, name_reports
from .level_system import level_system
from .levels import as_levels
from .limits.base import Limit, intersect
from .limits.joints import JointPositionLimit, JointVelocityLimit, ReversalDamping
from .solvers import backend as _backend
from .solvers.damping import DampingPolicy
from .solvers.hierarchy import Level, LevelReport
from .tasks import Task


def as_constraints(constraints: Limit | Sequence[Limit]) -> list[Limit]:
    """The `constraints` argument of a Controller or Solver as a list: a Limit alone is a list of
    one. Raises ConfigurationError for anything that is not a Limit."""
    given: list[Any] = list(constraints) if isinstance(constraints, (list, tuple)) else [constraints]
    for limit in given:
        if not isinstance(limit, Limit):
            raise ConfigurationError(f"constraints must be reljac.ik Limit objects, got {limit!r}")
    return given


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
        position_margin: distance kept from every position limit [rad or m] (default 0); a joint
            whose range is narrower than twice the margin is kept at its middle.
        damping: the damping policy (threshold on the smallest singular value, maximum
            damping, error-dependent damping).
        constraints: more :class:`~reljac.ik.limits.base.Limit` objects (e.g. collision avoidance),
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
        constraints = as_constraints(constraints)
        self.robot = robot
        self._levels = tuple(tuple(level) for level in as_levels(levels))
        check_names(self._levels)
        for part in (*self.tasks, *constraints):
            other = getattr(part, "robot", None)
            if other is not None and (other.nq, other.nv, other.name) != (robot.nq, robot.nv, robot.name):
                name = getattr(part, "name", "")
                what = f"task '{name}'" if isinstance(part, Task) else f"limit '{name}' ({type(part).__name__})"
                raise (TaskError if isinstance(part, Task) else ConfigurationError)(
                    f"{what} was made for robot '{other.name}', not '{robot.name}'")
        self._dt = float(dt)
        limits_ = [
            JointVelocityLimit(robot, velocity_limits),
            JointPositionLimit(robot, limit_gain=limit_gain, position_margin=position_margin),
            *constraints,
        ]
        if as_bool(anti_chatter, "anti_chatter", error=ConfigurationError):
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
        self._last_problem: tuple | None = None  # last_problem
        self._compiled_reports = False  # the last step's reports are the compiled step's, not named yet
        self._labels = velocity_labels(robot)
        self._lock = threading.Lock()
        self._stepper: int | None = None  # the thread stepping it (threading.get_ident; None: none yet)
        self._stepper_thread: threading.Thread | None = None  # that thread (an ended one's ident is reused)
        self._gain_check = GainCheck(self.tasks, lambda: self._dt)  # a gain set during a motion: checked too
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
        warn_of_unstable_gains(self.tasks, self._dt, stacklevel=3)
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
    def core_step(self) -> _compiled.CompiledStep | None:
        """The :class:`~reljac.ik.compiled_step.CompiledStep` this controller steps with on the
        compiled backend (what :func:`~reljac.ik.solve`'s search runs in C++), else None."""
        return self._step

    @property
    def last_problem(self) -> tuple | None:
        """What the last step or velocity on the Python backend solved: ``(levels, lo, hi, C, d,
        damping)``, the arguments of a solver of :mod:`reljac.ik.solvers.backend`
        (``solver(name)(*problem)``); None before one and on the compiled backend."""
        return self._last_problem

    def solve_levels(self, levels: list[Level], lo: np.ndarray, hi: np.ndarray, C: np.ndarray | None,
                     d: np.ndarray | None) -> tuple[np.ndarray, list[LevelReport]]:
        """v (nv,) and the levels' reports: the hierarchy `levels` solved by this controller's
        solver (warm-started on bounded levels, as its steps are) within the box lo <= v <= hi
        (nv,) and the rows C v <= d (or None), with its damping policy."""
        return self._solve(levels, lo, hi, C, d, self._damping)

    @property
    def python_parts(self) -> list[Any]:
        """The tasks and limits whose rows are computed in Python at each step: on the compiled
        backend those without a compiled description (a custom task, a subclass that changes how
        its rows are computed), on the Python backend all of them."""
        if self._step is None:
            return [task for level in self._levels for task in level] + list(self._limits)
        return [*self._step.python_tasks, *self._step.python_limits]

    @property
    def last_reports(self) -> list[LevelReport]:
        """Per level, what the last velocity / step did (see :class:`LevelReport`)."""
        with self._held():
            if self._compiled_reports and self._step is not None:
                self._reports = name_reports(self._step.reports(), self._levels, self._labels,
                                             self._step.constraint_names())
                self._compiled_reports = False
            return list(self._reports)  # (a copy: the caller may change it)

    @property
    def tasks(self) -> list[Task]:
        return [t for level in self._levels for t in level]

    def _level(self, tasks: Sequence[Task], kin: Kinematics) -> Level:
        """The level of `tasks` at `kin` as this controller solves it (:func:`level_system`)."""
        return level_system(tasks, kin, self.robot.nv, self._damping, self._dt)

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
        self._last_problem = (levels, lo, hi, C, d, self._damping)
        v, reports = self._solve(levels, lo, hi, C, d, self._damping)
        if not np.isfinite(v).all():
            raise TaskError("the levels' velocities overflow (huge gains or weights): no finite solution")
        for limit in self._limits:
            limit.observe(v)
        self._reports, self._compiled_reports = name_reports(reports, self._levels, self._labels, row_names), False
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

    def _adopt(self, me: int) -> None:
        """The calling thread (ident `me`) steps this controller from now on, if no other does: the
        first to step it since it was made or reset, or after that thread ended. Else ReljacError:
        steps that take turns from two threads never overlap (a compiled step holds the GIL
        throughout) but mix their per-step state (warm starts, reversal damping, the last q), and
        each thread's motion would be answered wrongly."""
        owner = self._stepper_thread  # (not its ident: a thread started after it ended may have it)
        if owner is not None and owner.ident != me and owner.is_alive():
            raise ReljacError(f"this Controller is stepped by thread '{owner.name}': create one Controller per "
                              "thread, or call reset() before another thread steps it (a new motion)")
        if owner is None:  # a motion starts: its gains checked against dt (the search's own never steps)
            warn_of_unstable_gains(self.tasks, self._dt, stacklevel=4)
        self._stepper, self._stepper_thread = me, threading.current_thread()

    def velocity(self, q: ArrayLike) -> np.ndarray:
        """Joint velocity v (nv,) [rad/s, m/s] for configuration q (nq,), inside all limits. The
        thread that first calls it or :meth:`step` (since the controller was made or reset) is the
        one that steps it: another thread's call raises ReljacError while that thread lives."""
        self._acquire()
        try:
            if self._stepper != threading.get_ident():
                self._adopt(threading.get_ident())
            return self._velocity(q).copy()
        finally:
            self._lock.release()

    def step(self, q: ArrayLike) -> np.ndarray:
        """q_next (nq,) = integrate(q, velocity(q) * dt); never leaves the position limits. One
        thread steps a controller (see :meth:`velocity`)."""
        if not self._lock.acquire(False):  # (_acquire, inline: the compiled step's path is short)
            self._acquire()
        try:
            if self._stepper != threading.get_ident():
                self._adopt(threading.get_ident())
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
        """Forget the state kept between steps (start of a new motion); the next thread to step
        it steps it from then on."""
        self._stepper, self._stepper_thread = None, None
        for limit in self._limits:
            limit.reset()
        if self._step is not None:
            self._step.reset()
        self._solve = _backend.solver(self.backend, warm=True)  # (cold again)
        self._reports, self._compiled_reports, self._last_problem = [], False, None
        self._last_q, self._last_kinematics, self._last_velocity = None, None, None
        self._q_in_core = False

    def errors(self, q: ArrayLike | None = None) -> dict[str, dict[str, float]]:
        """Per-task error norms at q (default: the q the last velocity / step was computed at)."""
        kin = self.last_kinematics if q is None else Kinematics(self.robot, q)  # own data: keep the last step's
        if kin is None:
            raise ConfigurationError("no configuration yet: pass q or call step first")
        check_names(self._levels)  # (a task renamed since: two of one name would share one entry)
        return {task.name: task.error_norms(kin) for task in self.tasks}

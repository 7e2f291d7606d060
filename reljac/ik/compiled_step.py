"""The controller step as one compiled call (``reljac.ik._core.Step``, C++ on Pinocchio and coal).

A :class:`CompiledStep` is built from the descriptions the controller's tasks and limits give
(:mod:`reljac.ik.description`): the C++ step then runs the kinematics pass on the robot's own
``pin.Model``, every described task's rows, the joint limits, reversal damping, collision
distances and their Jacobians, the strict-priority solve, the integration and the position
guard. Python hands q in and gets q out. A task or limit without a description (a custom one)
runs in Python beside it: the C++ step computes the kinematics, Python reads them and passes
its rows in. Changes made through public setters reach the step before the next call (the
tasks and limits announce them, :class:`~reljac.ik.description.Observable`).

The Python classes remain the specification: the tests replay runs through both backends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..collision.distances import Distances
from ..exceptions import CollisionError, ConfigurationError, SupportError, TaskError
from ..relative import Kinematics
from .description import Description
from .limits.base import Limit
from .solvers.backend import core_report
from .solvers.hierarchy import LevelReport
from .tasks import Task

if TYPE_CHECKING:  # pragma: no cover
    from .stepped import SteppedController as Controller  # the controller imports this module

def core_description(core: Any, description: Description) -> Any:
    """The core's object for a description (:class:`~reljac.ik.description.Description`): its kind
    filled in by keyword (``core.describe``), a description within converted first."""
    fields = description.fields
    if any(isinstance(v, Description) for v in fields.values()):
        fields = {k: core_description(core, v) if isinstance(v, Description) else v for k, v in fields.items()}
    try:
        return core.describe(description.kind, **fields)
    except (TypeError, ValueError) as error:
        raise ConfigurationError(f"the compiled core refused a {description.kind}: {error}") from None


class TaskRowsView:
    """What a region task's rows (:class:`~reljac.ik.tasks.regions.RegionRowsTask`, ``held_by``)
    and a collision limit put in a level (its ``last``) read of the compiled step's last step."""

    def __init__(self, core: Any) -> None:
        self.core = core

    def task_row_sources(self, index: int) -> list[int]:
        return self.core.task_row_sources(index) or []

    def task_collision_distances(self, index: int, model: Any) -> Distances:
        r = self.core.task_collision_rows(index)
        return model.distances_of_pairs(r.pair, r.distance, r.point1, r.point2, r.normal, r.jacobian)

    def collision_distances(self, index: int, model: Any) -> Distances:  # a CollisionAvoidance's `last`
        return self.task_collision_distances(index, model)


def _overrides(limit: Limit, *methods: str) -> bool:
    return any(getattr(type(limit), m) is not getattr(Limit, m) for m in methods)


class CompiledStep:
    """A controller's step as one ``_core.Step``."""

    def __init__(self, controller: Controller, core: Any) -> None:
        self.controller = controller
        self.robot = robot = controller.robot
        self.core_module = core
        self.core = core.Step(robot.model, controller.data)
        self._failures = (core.StepFailure, core.SupportFailure, RuntimeError)
        self.python_tasks: list[Task] = []
        self.python_limits: list[Limit] = []
        self._tasks: list[tuple[Task, int]] = []  # (task, index in the core)
        self._limits: list[tuple[Limit, int]] = []
        self._dirty: dict[int, Any] = {}  # objects changed since the last step, by id
        self.refreshed: list[Any] = []  # described tasks told before each step (refresh: a change no setter saw)
        levels = []
        for level in controller.levels:
            indices = []
            for task in level:
                index = self._add_task(task)
                self._tasks.append((task, index))
                indices.append(index)
                task.listen(self)
            levels.append(indices)
        self.core.set_levels(levels)
        self.watched: list[tuple[Limit, int]] = []  # described limits told before and after each step
        for limit in controller.limits:
            index = self._add_limit(limit)
            self._limits.append((limit, index))
            limit.listen(self)
            if limit not in self.python_limits:
                limit.held_by = (self, index)
                if _overrides(limit, "refresh", "stepped"):
                    self.watched.append((limit, index))
        self.row_names: list[str] = []
        self._python_row_names: list[tuple[str, ...]] = []
        self.set_parameters()
        # built-in parts only: a step is one call of the core (step); read per step, so kept as attributes
        self.whole = not (self.python_tasks or self.python_limits)
        self._model = robot.model  # the model the core was built on
        self._step_checked = self.core.step_checked

    # ------------------------------------------------------------------ building
    def _add_task(self, task: Task) -> int:
        core = self.core_module
        try:
            d = task.description(self.robot)
        except TaskError:  # no target yet: described again (or the error raised) at the first step
            self.heard(task)
            return self.core.add(core.describe("PendingTaskDescription", size=task.size))
        if d is None:
            self.python_tasks.append(task)
            return self.core.add(core.describe("ExternalTaskDescription", size=task.size))
        index = self.core.add(core_description(core, d))
        self._hold(task, index)
        return index

    def _hold(self, task: Task, index: int) -> None:
        """A task whose rows change in number reads them from this step (``held_by``); a collision
        limit put in a level too (its ``last``)."""
        if hasattr(task, "refresh"):
            self.refreshed.append(task)
        if hasattr(task, "held_by"):
            view = TaskRowsView(self.core)
            task.held_by = (view, index)
            limit = getattr(task, "limit", None)
            if isinstance(limit, Limit) and hasattr(limit, "held_by"):
                limit.held_by = (view, index)

    def _add_limit(self, limit: Limit) -> int:
        d = limit.description(self.robot)
        if d is None:
            self.python_limits.append(limit)
            return self.core.add(self.core_module.describe("ExternalLimitDescription"))
        return self.core.add(core_description(self.core_module, d))

    def set_parameters(self) -> None:
        """The controller's dt and damping policy, into the core."""
        c, p = self.controller, self.controller.damping
        self.core.set_dt(c.dt)
        self.core.set_policy(p.threshold, p.max_damping, p.error_damping, p.step_threshold)

    # ------------------------------------------------------------------ changes
    def heard(self, obj: Any) -> None:
        """A task or limit of the controller changed: its description is pushed before the next step."""
        self._dirty[id(obj)] = obj

    def _sync(self) -> None:
        """Push the descriptions of the tasks and limits changed since the last step."""
        changed, self._dirty = self._dirty, {}
        core, robot = self.core_module, self.robot
        for part, index in self._tasks:
            if id(part) in changed and part not in self.python_tasks:
                self.core.update(index, core_description(core, _described(part, robot)))
        for limit, index in self._limits:
            if id(limit) in changed and limit not in self.python_limits:
                self.core.update(index, core_description(core, _described(limit, robot)))

    # ------------------------------------------------------------------ the step
    def velocity(self, q: np.ndarray) -> np.ndarray:
        """v (nv,) at q, a validated configuration (nq,)."""
        self._prepare()
        if not (self.python_tasks or self.python_limits):
            v = self._run(lambda: self.core.velocity(q, False, [], []))
            self._stepped()
            return v
        tasks, limits = self.python_rows(q)
        v = self._run(lambda: self.core.velocity(q, True, tasks, limits))
        for limit in self.python_limits:
            limit.observe(v)
        self._stepped()
        return v

    def python_rows(self, q: np.ndarray) -> tuple[list[tuple], list[tuple]]:
        """The rows of the Python tasks, (A, b, feedback) (with bounds: (A, b, feedback, lower,
        upper)), and limits, (lo, hi, C, d), at q (nq,), after the core's kinematics pass at q: the
        arguments of the core's velocity and run."""
        self.core.kinematics(q)
        kin = Kinematics.from_data(self.robot, q, self.controller.data)
        tasks: list[tuple] = []
        for task in self.python_tasks:
            r = task.rows(kin)
            A, b = r.dense(self.robot.nv)
            if not (np.isfinite(b).all() and np.isfinite(A).all()):
                raise task_overflow(task)
            feedback = r.feedback if r.A is not None else r.feedback[(r.mask if r.mask is not None else
                                                                       np.ones(len(r.b))) > 0]
            if r.lower is not None:  # a task with bounds: its rows' intervals too
                tasks.append((A, b, feedback, *r.dense_bounds(self.robot.nv)))
            else:
                tasks.append((A, b, feedback))
        limits = []
        self._python_row_names = []
        for limit in self.python_limits:
            c = limit.constraint(kin, self.controller.dt)
            nv = self.robot.nv
            C = np.zeros((0, nv)) if c.C is None else np.asarray(c.C, dtype=float)
            d = np.zeros(0) if c.d is None else np.asarray(c.d, dtype=float)
            limits.append((c.lo, c.hi, C, d))
            self._python_row_names.append(tuple(c.row_names) if c.C is not None else ())
        return tasks, limits

    def step(self, q: ArrayLike) -> np.ndarray:
        """q_next (nq,) from q (nq,): the whole step in one call (built-in parts only). q is
        checked in C++ when it is a float64 (nq,) array (ConfigurationSpace.validate_q's checks),
        else by validate_q, which names what is wrong; the core keeps a copy (:meth:`last_q`)."""
        if self.watched or self._dirty:
            self._prepare()
        try:
            q_next = self._step_checked(self._model, q)
            if q_next is None:  # not a plain float64 array, or refused: validate_q says why or converts it
                q = self.robot.validate_q(q)
                q_next = self._step_checked(self._model, q)
                if q_next is None:  # (C++'s unit-norm tolerance is a hair tighter than Python's)
                    q_next = self.core.step(q)
        except self._failures as error:
            raise self._translated(error) from None
        if self.watched:
            self._stepped()
        return q_next

    def _prepare(self) -> None:
        for task in self.refreshed:
            task.refresh()
        for limit, _ in self.watched:
            limit.refresh()
        if self._dirty:
            self._sync()
        for limit, index in self.watched:
            limit.held_by = (self, index)

    def _stepped(self) -> None:
        for limit, _ in self.watched:
            limit.stepped()

    def _run(self, call: Any) -> Any:
        try:
            return call()
        except self._failures as error:
            raise self._translated(error) from None

    def _translated(self, error: Exception) -> Exception:
        """The reljac error for a failure of the core: a task's rows or the solution overflow
        (StepFailure), a support region cannot be formed (SupportFailure), or coal could not compute
        a distance (RuntimeError)."""
        if isinstance(error, self.core_module.SupportFailure):
            return SupportError(str(error))
        if not isinstance(error, self.core_module.StepFailure):
            return CollisionError(str(error))
        index = int(str(error))
        if index == -2:
            return TaskError("the levels' velocities overflow (huge gains or weights): no finite solution")
        return task_overflow(next(task for task, i in self._tasks if i == index))

    def prepared_core(self) -> Any:
        """The core's Step with every change pushed (for a search: reljac.ik.solve)."""
        self._prepare()
        return self.core

    def search(self, q0: np.ndarray, options: Any, timeout: Callable[[], float] | None = None) -> Any:
        """A whole search from q0 (reljac.ik.search.local_search) in one call; built-in parts only.
        timeout: called once every change is pushed, just before the core's call, for the
        search's budget [s] (options.timeout's; None: options as they are)."""
        self._prepare()
        if timeout is not None:
            options.timeout = timeout()
        return self._run(lambda: self.core.search(q0, options))

    @property
    def has_python_parts(self) -> bool:
        return not self.whole

    def integrate(self, q: np.ndarray) -> np.ndarray:
        """q_next = integrate(q, v dt) with the last velocity, guarded by the position limits."""
        return self.core.integrate(q)

    def guard(self, q_next: np.ndarray, q: np.ndarray) -> np.ndarray:
        """q_next corrected by the position limits' guard (JointPositionLimit.guard)."""
        return self.core.guard(q_next, q)

    def system(self, q: np.ndarray) -> tuple[list[tuple], np.ndarray, np.ndarray]:
        """(levels, lo, hi) the step would solve at q: per level (A or None, b, identity scale,
        mask or None, extra damping, lower or None, upper or None: the bounds of a level with
        bounds). Built-in parts only; for tests against the Python oracle."""
        self._prepare()
        levels, lo, hi, failing = self.core.system(q)
        if failing != -1:
            raise task_overflow(next(task for task, i in self._tasks if i == failing))
        return levels, lo, hi

    def last_q(self) -> np.ndarray:
        """The q (nq,) of the last :meth:`step` (a copy)."""
        return np.array(self.core.last_q)

    def last_velocity(self) -> np.ndarray:
        return np.array(self.core.last_velocity)

    def reports(self) -> list[LevelReport]:
        """A :class:`~reljac.ik.solvers.hierarchy.LevelReport` per level of the last step, from the core's
        (its fields by name, those of a bounded hierarchy's levels included)."""
        return [core_report(r) for r in self.core.reports()]

    def constraint_names(self) -> list[str]:
        """The names of the rows of C of the last step (collision pairs 'link/link', ...)."""
        python = {index: k for k, index in enumerate(
            index for limit, index in self._limits if limit in self.python_limits)}
        sources = self.core.row_sources()
        counts: dict[int, int] = {}
        for source in sources:
            counts[source.limit] = counts.get(source.limit, 0) + 1
        held = {index: self._limits[index][0].held_row_names(count) for index, count in counts.items()
                if index not in python}
        return [self._python_row_names[python[s.limit]][s.index] if s.limit in python else held[s.limit][s.index]
                for s in sources]

    def collision_distances(self, index: int, model: Any) -> Distances:
        """The last rows of collision limit `index` as :class:`~reljac.collision.Distances`
        (`model`: its :class:`~reljac.collision.CollisionModel`)."""
        r = self.core.collision_rows(index)
        return model.distances_of_pairs(r.pair, r.distance, r.point1, r.point2, r.normal, r.jacobian)

    def reversal_cap(self, index: int) -> np.ndarray:
        return self.core.reversal_cap(index)

    def reset(self) -> None:
        """Forget the limits' state of earlier steps (the controller resets the limits too)."""
        self.core.reset()


def _described(part: Task | Limit, robot: Any) -> Description:
    """The description of a part the core computes (it had one when added: it keeps one)."""
    d = part.description(robot)
    if d is None:
        raise ConfigurationError(f"'{part.name}' described itself to the compiled step, then stopped: a part "
                                 "cannot change from compiled to Python between steps; build a new controller")
    return d


def task_overflow(task: Task) -> TaskError:
    """The error of a task whose rows, or the step they ask for, are not finite (both backends')."""
    return TaskError(f"task '{task.name}' asks for a non-finite velocity: its gain, weights or target "
                     "velocity overflow (gain * weight * error must stay finite)")


def build(controller: Controller, core: Any) -> CompiledStep | None:
    """The compiled step of `controller` (None without the compiled core)."""
    if core is None:
        return None
    return CompiledStep(controller, core)


__all__ = ["CompiledStep", "build", "core_description"]

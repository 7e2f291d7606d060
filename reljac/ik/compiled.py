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

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..collision.distances import Distances
from ..exceptions import CollisionError, ConfigurationError, SupportError, TaskError
from ..relative import Kinematics
from .balance import CoMTask
from .description import (
    CollisionAvoidanceDescription,
    CoMTaskDescription,
    FrameTaskDescription,
    PositionLimitDescription,
    PostureDescription,
    ReversalDampingDescription,
    SupportRegionDescription,
    VelocityBoxDescription,
)
from .limits import Limit
from .tasks import Task

if TYPE_CHECKING:  # pragma: no cover
    from .stepped import SteppedController as Controller  # the controller imports this module

FRAME_KINDS = {"pose": 0, "position": 1, "orientation": 2}


class CompiledStep:
    """A controller's step as one ``_core.Step``."""

    def __init__(self, controller: Controller, core: Any) -> None:
        self.controller = controller
        self.robot = robot = controller.robot
        self.core = core.Step(robot.model, controller.data)
        self.failure = core.StepFailure
        self.support_failure = getattr(core, "SupportFailure", self.failure)
        self._failures = (self.failure, self.support_failure, RuntimeError)
        self.python_tasks: list[Task] = []
        self.python_limits: list[Limit] = []
        self._tasks: list[tuple[Task, int]] = []  # (task, index in the core)
        self._limits: list[tuple[Limit, int]] = []
        self._dirty: dict[int, Any] = {}  # objects changed since the last step, by id
        levels = []
        for level in controller.levels:
            indices = []
            for task in level:
                index = self._add_task(task)
                self._tasks.append((task, index))
                indices.append(index)
                task._listen(self)
            levels.append(indices)
        self.core.set_levels(levels)
        self.collisions: list[tuple[Any, int]] = []  # (CollisionAvoidance, index)
        self._geometry_in_use: dict[int, Any] = {}  # index -> the pin.GeometryModel the core holds
        self.supports: set[int] = set()  # indices of the support regions
        for limit in controller.limits:
            self._limits.append((limit, self._add_limit(limit)))
            limit._listen(self)
        self.row_names: list[str] = []
        self._python_row_names: list[tuple[str, ...]] = []
        self.set_parameters()

    # ------------------------------------------------------------------ building
    def _add_task(self, task: Task) -> int:
        try:
            d = task.description(self.robot)
        except TaskError:  # no target yet: described again (or the error raised) at the first step
            self._heard(task)
            if isinstance(task, CoMTask):
                if not hasattr(self.core, "add_com_task"):
                    self.python_tasks.append(task)
                    return self.core.add_external_task(task.size)
                return self.core.add_com_task(0, np.arange(task.size, dtype=np.int32), 1.0, np.ones(task.size),
                                              None, np.zeros(task.size), np.zeros(task.size))
            fa, fb = self.robot.frame_id(task.frame_a), self.robot.frame_id(task.frame_b)  # type: ignore[attr-defined]
            size = task.size
            return self.core.add_frame_task(FRAME_KINDS[task.kind], fa, fb, 1.0, np.ones(size), None,  # type: ignore[attr-defined]
                                            np.eye(4), np.zeros(size))
        if isinstance(d, FrameTaskDescription):
            return self.core.add_frame_task(FRAME_KINDS[d.kind], *self._frame_arguments(d))
        if isinstance(d, PostureDescription):
            return self.core.add_posture(d.gain, d.weight, d.max_speed, d.target)
        if isinstance(d, CoMTaskDescription) and hasattr(self.core, "add_com_task"):
            return self.core.add_com_task(*_com_arguments(d))
        if d is not None and not isinstance(d, CoMTaskDescription):
            raise ConfigurationError(f"task '{task.name}' gave an unknown description {type(d).__name__}")
        self.python_tasks.append(task)
        return self.core.add_external_task(task.size)

    @staticmethod
    def _frame_arguments(d: FrameTaskDescription) -> tuple:
        return d.frame_a, d.frame_b, d.gain, d.weight, d.max_speed, d.target, d.target_velocity

    def _add_limit(self, limit: Limit) -> int:
        d = limit.description(self.robot)
        core = self.core
        if isinstance(d, VelocityBoxDescription):
            return core.add_velocity_box(d.lo, d.hi)
        if isinstance(d, PositionLimitDescription):
            return core.add_position_limit(*_position_arguments(d))
        if isinstance(d, ReversalDampingDescription):
            index = core.add_reversal(d.velocity_limits, d.floor, d.shrink, d.grow)
            limit._source = (self, index)  # type: ignore[attr-defined]
            return index
        if isinstance(d, CollisionAvoidanceDescription):
            index = core.add_collision(d.geometry, d.min_distance, d.influence_distance, d.gain, d.margin)
            self.collisions.append((limit, index))
            self._geometry_in_use[index] = d.geometry
            return index
        if isinstance(d, SupportRegionDescription) and hasattr(core, "add_support_region"):
            index = core.add_support_region(*_support_arguments(d))
            self.supports.add(index)
            return index
        if d is not None and not isinstance(d, SupportRegionDescription):
            raise ConfigurationError(f"limit {limit!r} gave an unknown description {type(d).__name__}")
        self.python_limits.append(limit)
        return core.add_external_limit()

    def set_parameters(self) -> None:
        """The controller's dt and damping policy, into the core."""
        c, p = self.controller, self.controller.damping
        self.core.set_dt(c.dt)
        self.core.set_policy(p.threshold, p.max_damping, p.error_damping, p.step_threshold)

    # ------------------------------------------------------------------ changes
    def _heard(self, obj: Any) -> None:
        self._dirty[id(obj)] = obj

    def _sync(self) -> None:
        """Push the descriptions of the tasks and limits changed since the last step."""
        changed, self._dirty = self._dirty, {}
        core, robot = self.core, self.robot
        for task, index in self._tasks:
            if id(task) not in changed or task in self.python_tasks:
                continue
            d = task.description(robot)
            if isinstance(d, FrameTaskDescription):
                core.set_frame_task(index, FRAME_KINDS[d.kind], *self._frame_arguments(d))
            elif isinstance(d, PostureDescription):
                core.set_posture(index, d.gain, d.weight, d.max_speed, d.target)
            elif isinstance(d, CoMTaskDescription):
                core.set_com_task(index, *_com_arguments(d))
        for limit, index in self._limits:
            if id(limit) not in changed or limit in self.python_limits:
                continue
            limit_d = limit.description(robot)
            if isinstance(limit_d, VelocityBoxDescription):
                core.set_velocity_box(index, limit_d.lo, limit_d.hi)
            elif isinstance(limit_d, PositionLimitDescription):
                core.set_position_limit(index, *_position_arguments(limit_d))
            elif isinstance(limit_d, ReversalDampingDescription):
                core.set_reversal(index, limit_d.velocity_limits, limit_d.floor, limit_d.shrink, limit_d.grow)
            elif isinstance(limit_d, CollisionAvoidanceDescription):
                core.set_collision(index, limit_d.geometry, limit_d.min_distance, limit_d.influence_distance,
                                   limit_d.gain, limit_d.margin)
            elif isinstance(limit_d, SupportRegionDescription):
                core.set_support_region(index, *_support_arguments(limit_d))

    def _check_geometry(self) -> None:
        for limit, index in self.collisions:  # pairs or obstacles edited: a new geometry model
            if limit.model.geometry_model is not self._geometry_in_use.get(index):
                self._heard(limit)
                self._geometry_in_use[index] = limit.model.geometry_model

    # ------------------------------------------------------------------ the step
    def velocity(self, q: np.ndarray) -> np.ndarray:
        """v (nv,) at q, a validated configuration (nq,)."""
        self._prepare()
        if not (self.python_tasks or self.python_limits):
            v = self._run(lambda: self.core.velocity(q, False, [], []))
            self._started()
            return v
        tasks, limits = self.python_rows(q)
        v = self._run(lambda: self.core.velocity(q, True, tasks, limits))
        for limit in self.python_limits:
            limit.observe(v)
        self._started()
        return v

    def python_rows(self, q: np.ndarray) -> tuple[list[tuple], list[tuple]]:
        """The rows of the Python tasks, (A, b, feedback), and limits, (lo, hi, C, d), at q (nq,),
        after the core's kinematics pass at q: the arguments of the core's velocity and run."""
        self.core.kinematics(q)
        kin = Kinematics._from_data(self.robot, q, self.controller.data)
        tasks = []
        for task in self.python_tasks:
            r = task.rows(kin)
            A, b = r.dense(self.robot.nv)
            if not (np.isfinite(b).all() and np.isfinite(A).all()):
                raise _overflow(task)
            feedback = r.feedback if r.A is not None else r.feedback[(r.mask if r.mask is not None else
                                                                       np.ones(len(r.b))) > 0]
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
        if self.collisions or self._dirty:
            self._prepare()
        try:
            q_next = self.core.step_checked(self.robot.model, q)
            if q_next is None:  # not a plain float64 array, or refused: validate_q says why or converts it
                q = self.robot.validate_q(q)
                q_next = self.core.step_checked(self.robot.model, q)
                if q_next is None:  # (C++'s unit-norm tolerance is a hair tighter than Python's)
                    q_next = self.core.step(q)
        except self._failures as error:
            raise self._translated(error) from None
        if self.collisions:
            self._started()
        return q_next

    def _prepare(self) -> None:
        if self.collisions:
            self._check_geometry()
        if self._dirty:
            self._sync()
        for limit, index in self.collisions:
            limit._source = (self, index)

    def _started(self) -> None:
        for limit, index in self.collisions:
            if not limit._started:
                limit._check_start(self.collision_distances(index, limit.model))

    def _run(self, call: Any) -> Any:
        try:
            return call()
        except self._failures as error:
            raise self._translated(error) from None

    def _translated(self, error: Exception) -> Exception:
        """The reljac error for a failure of the core: a task's rows or the solution overflow
        (StepFailure), a support region cannot be formed (SupportFailure), or coal could not compute
        a distance (RuntimeError)."""
        if isinstance(error, self.support_failure) and self.support_failure is not self.failure:
            return SupportError(str(error))
        if not isinstance(error, self.failure):
            return CollisionError(str(error))
        index = int(str(error))
        if index == -2:
            return TaskError("the levels' velocities overflow (huge gains or weights): no finite solution")
        return _overflow(next(task for task, i in self._tasks if i == index))

    def prepared_core(self) -> Any:
        """The core's Step with every change pushed (for a search: reljac.ik.solve)."""
        self._prepare()
        return self.core

    def search(self, q0: np.ndarray, options: Any) -> Any:
        """A whole search from q0 (reljac.ik.search) in one call; built-in parts only."""
        self._prepare()
        return self._run(lambda: self.core.search(q0, options))

    @property
    def has_python_parts(self) -> bool:
        return bool(self.python_tasks or self.python_limits)

    def integrate(self, q: np.ndarray) -> np.ndarray:
        """q_next = integrate(q, v dt) with the last velocity, guarded by the position limits."""
        return self.core.integrate(q)

    def guard(self, q_next: np.ndarray, q: np.ndarray) -> np.ndarray:
        """q_next corrected by the position limits' guard (JointPositionLimit.guard)."""
        return self.core.guard(q_next, q)

    def system(self, q: np.ndarray) -> tuple[list[tuple], np.ndarray, np.ndarray]:
        """(levels, lo, hi) the step would solve at q: per level (A or None, b, identity scale,
        mask or None, extra damping). Built-in parts only; for tests against the Python oracle."""
        self._prepare()
        levels, lo, hi, failing = self.core.system(q)
        if failing != -1:
            raise _overflow(next(task for task, i in self._tasks if i == failing))
        return levels, lo, hi

    def last_q(self) -> np.ndarray:
        """The q (nq,) of the last :meth:`step` (a copy)."""
        return np.array(self.core.last_q)

    def last_velocity(self) -> np.ndarray:
        return np.array(self.core.last_velocity)

    def reports(self) -> list[tuple]:
        return self.core.reports()

    def constraint_names(self) -> list[str]:
        """The names of the rows of C of the last step (collision pairs 'link/link', ...)."""
        python = {index: k for k, index in enumerate(
            index for limit, index in self._limits if limit in self.python_limits)}
        collision_pairs: dict[int, list[str]] = {}  # limit index -> its rows' body pairs, fetched once
        sources = self.core.row_sources()
        rows_of: dict[int, int] = {}  # support region index -> its rows this step
        names = []
        for limit_index, row in sources:
            if limit_index in python:
                names.append(self._python_row_names[python[limit_index]][row])
                continue
            if limit_index in self.supports:  # SupportRegion.constraint's names
                edges = rows_of.get(limit_index)
                if edges is None:  # counted once per report
                    edges = rows_of[limit_index] = sum(1 for i, _ in sources if i == limit_index)
                names.append(f"{self._limits[limit_index][0].name} (edge {row + 1} of {edges})")
                continue
            pairs = collision_pairs.get(limit_index)
            if pairs is None:
                kernel = self._limits[limit_index][0].model._kernel
                pairs = collision_pairs[limit_index] = [
                    "/".join(kernel.body_pairs[kernel.rows_of[k][0]]) for k in self.core.collision_rows(limit_index)[0]]
            names.append(pairs[row])
        return names

    def collision_distances(self, index: int, model: Any) -> Distances:
        """The last rows of collision limit `index` as :class:`~reljac.collision.Distances`."""
        pairs, distance, p1, p2, n, J = self.core.collision_rows(index)
        kernel = model._kernel
        return Distances(
            pairs=tuple(kernel.body_pairs[kernel.rows_of[k][0]] for k in pairs),
            geometries=tuple((kernel.names[kernel.rows_of[k][1]], kernel.names[kernel.rows_of[k][2]]) for k in pairs),
            distance=np.array(distance), point1=np.array(p1).reshape(-1, 3), point2=np.array(p2).reshape(-1, 3),
            normal=np.array(n).reshape(-1, 3), jacobian=np.array(J).reshape(len(pairs), self.robot.nv))

    def reversal_cap(self, index: int) -> np.ndarray:
        return self.core.reversal_cap(index)

    def reset(self) -> None:
        self.core.reset()
        for limit, _ in self.collisions:
            limit._started = False


def _position_arguments(d: PositionLimitDescription) -> tuple:
    return (np.asarray(d.q_index, dtype=np.int32), np.asarray(d.v_index, dtype=np.int32), d.q_min, d.q_max,
            d.urdf_min, d.urdf_max, d.limit_gain)


def _com_arguments(d: CoMTaskDescription) -> tuple:
    return (d.frame, np.asarray(d.axes, dtype=np.int32), d.gain, d.weight, d.max_speed, d.target,
            d.target_velocity)


def _support_arguments(d: SupportRegionDescription) -> tuple:
    return (d.frame, np.asarray(d.contact_frames, dtype=np.int32), list(d.contact_points), d.margin, d.gain)


def _overflow(task: Task) -> TaskError:
    return TaskError(f"task '{task.name}' asks for a non-finite velocity: its gain, weights or target "
                     "velocity overflow (gain * weight * error must stay finite)")


def build(controller: Controller, core: Any) -> CompiledStep | None:
    """The compiled step of `controller` (None without the compiled core)."""
    if core is None or not hasattr(core, "Step"):
        return None
    return CompiledStep(controller, core)


__all__ = ["CompiledStep", "build"]

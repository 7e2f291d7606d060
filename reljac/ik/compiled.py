"""The controller step in compiled code, for the built-in tasks and limits.

When every task and limit of a :class:`~reljac.ik.Controller` is one of reljac's own (their
``compute``/``rows``/``constraint`` not overridden) and the compiled core is built, a step runs
as: one Pinocchio kinematics pass and the placements and WORLD Jacobians of the frames the
tasks use (Python), then the tasks' rows, the limits' velocity box and the hierarchy solve in one
compiled call (``reljac.ik._core.Program``). The Python classes remain the specification: the
tests replay controller runs through both and compare. Anything else (a custom task or limit)
runs on the Python rows with the compiled solver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..exceptions import TaskError
from ..relative import Kinematics, _frame_jacobian
from .limits import JointPositionLimit, JointVelocityLimit, Limit, ReversalDamping
from .tasks import (
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    Task,
    _FramePairTask,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..robot import Robot
    from .controller import Controller

WORLD = pin.ReferenceFrame.WORLD
_FRAME_KINDS = {RelativeFrameTask: 0, RelativePositionTask: 1, RelativeOrientationTask: 2}
_METHODS = ("compute", "rows", "weighted", "_feedback", "error")


def _behaves_as(obj: Any, base: type) -> bool:
    """obj is an instance of `base` whose subclass (if any) overrides none of its behaviour."""
    cls = type(obj)
    if not isinstance(obj, base):
        return False
    return all(getattr(cls, m, None) is getattr(base, m, None) for m in (*_METHODS, "constraint", "guard", "observe"))


def _frame_kind(task: Task) -> int | None:
    for base, kind in _FRAME_KINDS.items():
        if _behaves_as(task, base):
            return kind
    return None


def _target_matrix(task: _FramePairTask) -> np.ndarray:
    """The target as a (4, 4) homogeneous matrix (identity parts where the task has none)."""
    target = task._require_target()
    T = np.eye(4)
    if isinstance(target, pin.SE3):
        T[:3, :3], T[:3, 3] = target.rotation, target.translation
    elif target.shape == (3,):
        T[:3, 3] = target
    else:
        T[:3, :3] = target
    return T


class CompiledStep:
    """A controller's step as one ``_core.Program`` (build with :func:`build`)."""

    def __init__(self, controller: Controller, core: Any) -> None:
        robot = controller.robot
        damping = controller.damping
        self.model = robot.model
        self.program = core.Program(robot.nq, robot.nv, controller.dt, damping.threshold, damping.max_damping,
                                    damping.error_damping, damping.step_threshold)
        self.frames: list[int] = []  # frame id of each slot
        self.tasks: list[tuple[Task, int, Callable[[Task, int], None]]] = []
        self.versions: list[int] = []
        self.postures: list[PostureTask] = []
        levels = []
        for level in controller.levels:
            indices = []
            for task in level:
                index, sync = self._add(task, robot)
                self.tasks.append((task, index, sync))
                self.versions.append(-1)
                indices.append(index)
            levels.append(indices)
        self.program.set_levels(levels)
        self.row_limits: list[Limit] = []
        self.dt = controller.dt
        self.row_names: list[str] = []
        for limit in controller.limits:
            self._add_limit(limit)
        self.slots_T = self.slots_J = None

    def _slot(self, frame_id: int) -> int:
        if frame_id == 0:  # the universe: identity placement, zero Jacobian
            return -1
        if frame_id not in self.frames:
            self.frames.append(frame_id)
        return self.frames.index(frame_id)

    def _add(self, task: Any, robot: Robot) -> tuple[int, Callable[[Any, int], None]]:
        kind = _frame_kind(task)
        if kind is not None:
            a, b = self._slot(robot.frame_id(task.frame_a)), self._slot(robot.frame_id(task.frame_b))
            return self.program.add_frame_task(kind, a, b), self._sync_frame_task
        self.postures.append(task)
        return self.program.add_posture(), self._sync_posture

    def _sync_frame_task(self, task: Any, index: int) -> None:  # a frame task (duck-typed: _frame_kind)
        self.program.set_frame_task(index, task.gain, task.weight, task._max_speed, _target_matrix(task),
                                    task._target_velocity)

    def _sync_posture(self, task: Any, index: int) -> None:  # a PostureTask
        if task.identity_scale is None:
            raise NotCompilable
        self.program.set_posture(index, task.gain, task.weight, task._max_speed, task.identity_scale, task.row_mask)

    def _add_limit(self, limit: Any) -> None:  # a joint limit, duck-typed by _behaves_as
        p = self.program
        if getattr(limit, "rows_only", False):  # evaluated in Python each step, its rows passed on
            self.row_limits.append(limit)
        elif _behaves_as(limit, JointVelocityLimit):
            box = limit.constraint(None, 1.0)
            p.add_velocity_box(box.lo, box.hi)
        elif _behaves_as(limit, JointPositionLimit):
            p.add_position_limit(limit.q_index, limit.v_index, limit.q_min, limit.q_max, limit.urdf_q_min,
                                 limit.urdf_q_max, limit.limit_gain)
        elif _behaves_as(limit, ReversalDamping):
            p.add_reversal_damping(limit.velocity_limits, limit.floor, limit.shrink, limit.grow)
        else:  # pragma: no cover - build() checks first
            raise NotCompilable

    def sync(self) -> None:
        """Push the tasks' parameters that changed since the last step into the program."""
        for k, (task, index, sync) in enumerate(self.tasks):
            if task._version != self.versions[k]:
                sync(task, index)
                self.versions[k] = task._version

    def velocity(self, kin: Kinematics) -> np.ndarray:
        """v (nv,) at kin's configuration; raises TaskError for a task whose rows overflow."""
        self.sync()
        model, data = self.model, kin.data
        Ts = [data.oMf[f].homogeneous for f in self.frames]
        Js = [_frame_jacobian(model, data, f, WORLD) for f in self.frames]
        errors = [pin.difference(model, task._target, kin.q) for task in self.postures]
        C = d = None
        if self.row_limits:
            constraints = [limit.constraint(kin, self.dt) for limit in self.row_limits]
            C_rows, d_rows, self.row_names = [], [], []
            for c in constraints:
                if c.C is not None and c.C.shape[0]:
                    C_rows.append(c.C)
                    d_rows.append(np.asarray(c.d, dtype=float))
                    self.row_names.extend(c.row_names)
            if C_rows:
                C, d = np.vstack(C_rows), np.concatenate(d_rows)
        v, failing = self.program.velocity(kin.q, Ts, Js, errors, C, d)
        if failing >= 0:
            task = self.tasks[failing][0]
            raise TaskError(f"task '{task.name}' asks for a non-finite velocity: its gain, weights or target "
                            "velocity overflow (gain * weight * error must stay finite)")
        if failing == -2:
            raise TaskError("the levels' velocities overflow (huge gains or weights): no finite solution")
        return v

    def guard(self, q_next: np.ndarray, q: np.ndarray) -> np.ndarray:
        return self.program.guard(q_next, q)

    def reports(self) -> list[tuple]:
        return self.program.reports()

    def reset(self) -> None:
        self.program.reset()


class NotCompilable(Exception):
    """A task or limit the compiled step does not know: the Python rows are used."""


def build(controller: Controller, core: Any) -> CompiledStep | None:
    """The compiled step of `controller`, or None when one of its tasks or limits is not built in."""
    if core is None:
        return None
    for task in controller.tasks:
        if _frame_kind(task) is None and not _behaves_as(task, PostureTask):
            return None
    for limit in controller.limits:
        built_in = any(_behaves_as(limit, cls) for cls in (JointVelocityLimit, JointPositionLimit, ReversalDamping))
        if not (built_in or getattr(limit, "rows_only", False)):
            return None
    return CompiledStep(controller, core)

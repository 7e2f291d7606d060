"""One ``[[task]]`` table of a hierarchy file (:mod:`reljac.apps.hierarchy_file`) -> (level, Task).

Each task type takes the keys every task has (level, type, name, gain, weight, max_speed) and its
own (:data:`TASK_KEYS` for the types read here; every other registered kind's constructor
parameters: :func:`task_keys`); a key another type uses is refused as not used by this one, never
dropped. Default targets are the poses at the start configuration.

Bounds: ``lower`` / ``upper`` (every type but ball) bound the task's error e per component
(``Task.set_bounds``: e is measured from the target, so the box is centred on the target, or
offset from it, and follows it when the target moves); a ball task keeps b's origin within
``radius`` of its ``position`` in a (``BallTask`` on a ``RelativePositionTask``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from ..exceptions import ConfigurationError
from ..ik import (
    BallTask,
    CoMTask,
    ContactTask,
    FrameTask,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    Task,
)
from ..relative import Kinematics
from ..robot import Robot
from .hierarchy_kinds import file_kinds, keys, limits_no_level_holds, read_kind
from .hierarchy_values import bound, number, number_or_numbers, numbers, table, text, texts, unknown_keys, within

WORLD = "universe"
COMMON_KEYS = ("level", "type", "name", "gain", "weight", "max_speed")
BOUNDS = ("lower", "upper")
TASK_KEYS: dict[str, tuple[str, ...]] = {
    "relative": ("frame_a", "frame_b", "position", "rpy", *BOUNDS),
    "frame": ("frame", "position", "rpy", *BOUNDS),
    "position": ("frame_a", "frame_b", "position", *BOUNDS),
    "orientation": ("frame_a", "frame_b", "rpy", *BOUNDS),
    "posture": ("masked_joints", *BOUNDS),
    "com": ("frame", "axes", "position", *BOUNDS),
    "contact": ("frame", *BOUNDS),
    "ball": ("frame_a", "frame_b", "position", "radius"),
}
POSE_UNITS = "[m, m, m, rad, rad, rad]"
ERROR_UNITS = {"relative": POSE_UNITS, "frame": POSE_UNITS, "contact": POSE_UNITS, "position": "[m]",
               "orientation": "[rad]", "com": "[m]", "posture": "[rad or m]"}  # of each type's error e
#: every other registered kind a level can hold (reljac.ik.kinds), its keys its constructor's (hierarchy_kinds)
READERS = tuple(TASK_KEYS)  # the types read by this module's own code; the others by the registry


def kind_classes() -> dict[str, type]:
    """{type: class} of the registered kinds read from their constructor's parameters (read from
    the registry at each file: a kind defined after this module was imported is a type too)."""
    return file_kinds(dict.fromkeys(READERS))


def task_keys() -> dict[str, tuple[str, ...]]:
    """{type: its keys, but the common ones} of every type a ``[[task]]`` table may have."""
    return {**{key: TASK_KEYS[key] for key in READERS}, **{key: keys(cls) for key, cls in kind_classes().items()}}
_PAIRS: dict[str, Any] = {"relative": RelativeFrameTask, "position": RelativePositionTask,
                          "orientation": RelativeOrientationTask}


def _check_keys(spec: dict, kind: str, where: str) -> None:
    every = task_keys()
    valid = COMMON_KEYS + every[kind]
    for key in spec:
        users = [t for t, keys in every.items() if key in keys]
        if key not in valid and users:
            raise ConfigurationError(f"{where}: key {key!r} is not used by a {kind} task (it is for "
                                     f"{', '.join(users)} tasks); a {kind} task takes {', '.join(valid)}")
    unknown_keys(spec, valid, where)


def _options(spec: dict, where: str, size: int | None) -> dict[str, Any]:
    """gain, weight, max_speed and name, checked, as Task's keyword arguments (size None: a weight
    list of any length, which the task checks)."""
    options: dict[str, Any] = {}
    if "name" in spec:
        options["name"] = text(spec["name"], where, "name")
    if "gain" in spec:
        options["gain"] = number(spec["gain"], where, "gain [1/s]", minimum=0.0)
    if "weight" in spec:
        weight = spec["weight"]
        count = len(weight) if size is None and isinstance(weight, list) else size or 1
        options["weight"] = number_or_numbers(weight, where, "weight", count)
    if "max_speed" in spec:
        value = spec["max_speed"]
        what = "max_speed [m/s or rad/s] (one number or [linear, angular])"
        options["max_speed"] = numbers(value, where, what, (2,)) if isinstance(value, list) else \
            number(value, where, what, minimum=0.0, strict=True)
        if isinstance(value, list) and not (options["max_speed"] > 0).all():
            raise ConfigurationError(f"{where}: {what} must be > 0, got {value!r}")
    return options


def _frame(robot: Robot, spec: dict, key: str, where: str, kind: str, default: str | None = None) -> str:
    if key not in spec and default is not None:
        return default
    if key not in spec:
        raise ConfigurationError(f"{where}: a {kind} task needs {key} = \"FRAME NAME\"")
    name = text(spec[key], where, key)
    within(where, lambda: robot.frame_id(name))  # FrameNotFound with suggestions
    return name


def _posture(robot: Robot, spec: dict, where: str, options: dict, kin: Kinematics) -> PostureTask:
    weight = np.broadcast_to(options.pop("weight", 1.0), (robot.nv,)).copy()
    for name in texts(spec.get("masked_joints", []), where, "masked_joints") if "masked_joints" in spec else []:
        joint = robot.model.joints[within(where, lambda n=name: robot.joint_id(n))]  # type: ignore[misc]
        weight[joint.idx_v : joint.idx_v + joint.nv] = 0.0
    task = within(where, lambda: PostureTask(robot, weight=weight, **options))
    task.set_target(kin.q)
    return task


def _com(robot: Robot, spec: dict, where: str, options: dict, kin: Kinematics) -> CoMTask:
    frame = _frame(robot, spec, "frame", where, "com", default=WORLD)
    axes = text(spec.get("axes", "xyz"), where, "axes")
    task = within(where, lambda: CoMTask(robot, frame, axes=axes, **options))
    if "position" in spec:
        sizes = (3,) if task.size == 3 else (3, task.size)
        task.set_target(numbers(spec["position"], where, f"position [m] (in {frame}; all 3 axes or the {axes} ones)",
                                sizes))
    else:
        task.set_target_from_configuration(kin.q)
    return task


def _pose_target(spec: dict, where: str, kind: str, start: pin.SE3) -> Any:
    p = numbers(spec["position"], where, "position [m]", (3,)) if "position" in spec else start.translation
    R = pin.rpy.rpyToMatrix(*numbers(spec["rpy"], where, "rpy [rad]", (3,))) if "rpy" in spec else start.rotation
    return {"position": p, "orientation": R}.get(kind, pin.SE3(R, p))


def _bounds(task: Task, spec: dict, where: str, kind: str) -> None:
    """The task's ``lower`` / ``upper`` bounds on its error (an omitted side is open, or the
    kind's own: a half-space's upper bound 0 stays under a ``lower`` the file gives)."""
    if not any(key in spec for key in BOUNDS):
        return
    what = f"{ERROR_UNITS.get(kind, '[units of e]')} (on the task's error, from its target)"
    count = f"{task.size} (one per velocity)" if kind == "posture" else str(task.size)
    own = task.bounds
    lower, upper = (bound(spec[side], where, what, task.size, side, count) if side in spec else
                    None if own is None else own[k] for k, side in enumerate(BOUNDS))
    within(where, lambda: task.set_bounds(lower, upper))


def _ball(robot: Robot, spec: dict, where: str, kin: Kinematics) -> BallTask:
    """b's origin within `radius` [m] of `position` in a (default: where it is at the start)."""
    if "radius" not in spec:
        raise ConfigurationError(f"{where}: a ball task needs radius = [m] (b's origin is kept within it "
                                 "of position in a)")
    radius = number(spec["radius"], where, "radius [m]", minimum=0.0)
    a, b = (_frame(robot, spec, key, where, "ball") for key in ("frame_a", "frame_b"))
    centre = numbers(spec["position"], where, "position [m]", (3,)) if "position" in spec else \
        kin.relative_placement(a, b).translation
    inner = within(where, lambda: RelativePositionTask(a, b))
    inner.set_target(centre)
    return within(where, lambda: BallTask(inner, radius, **_options(spec, where, 1)))


#: what the controller does instead of a level, for the registered kinds no level holds
INSTEAD = {
    "joint_position_limit": "the controller always keeps the joints within their position limits",
    "joint_velocity_limit": "the controller always keeps the joints' speeds within their limits; "
                            "[velocity_limits] sets them",
    "reversal_damping": "the controller damps velocity reversals by default (ReversalDamping)",
}


def read_task(robot: Robot, spec: Any, where: str, kin: Kinematics) -> tuple[int, Task]:
    """(level, task) from one ``[[task]]`` table; `where` names the file and the task, `kin`
    is the start configuration's kinematics (default targets).

    Raises:
        ConfigurationError, FrameNotFound, JointNotFound, TaskError, SupportError: a mistake,
        in one line starting with `where`.
    """
    spec = table(spec, where, "a task ([[task]])")
    if isinstance(spec.get("name"), str) and spec["name"].strip():
        where = f"{where} ({spec['name']!r})"
    kind = spec.get("type")
    types = task_keys()
    if isinstance(kind, str) and kind in limits_no_level_holds():
        instead = INSTEAD.get(kind, "the controller holds it above every level (Controller(constraints=...))")
        raise ConfigurationError(f"{where}: type {kind!r} is not a task a level can hold: {instead}")
    if not isinstance(kind, str) or kind not in types:
        raise ConfigurationError(f"{where}: type must be one of {', '.join(types)}, got {kind!r}")
    _check_keys(spec, kind, where)
    level = spec.get("level", 0)
    if not isinstance(level, int) or isinstance(level, bool) or level < 0:
        raise ConfigurationError(f"{where}: level must be an integer >= 0 (0 is the highest), got {level!r}")
    if kind == "ball":
        return level, _ball(robot, spec, where, kin)
    if kind not in READERS:
        task = read_kind(robot, kind_classes()[kind], spec, where, _options(spec, where, None), kin)
        if "lower" in spec or "upper" in spec:
            _bounds(task, spec, where, kind)
        return level, task
    task = _task(robot, spec, where, kind, kin)
    _bounds(task, spec, where, kind)
    return level, task


def _task(robot: Robot, spec: dict, where: str, kind: str, kin: Kinematics) -> Task:
    """The task of a [[task]] table of any type but ball (its keys checked), with its target."""
    if kind == "posture":
        return _posture(robot, spec, where, _options(spec, where, robot.nv), kin)
    if kind == "com":
        axes = spec.get("axes", "xyz")
        return _com(robot, spec, where, _options(spec, where, len(axes) if isinstance(axes, str) else 3), kin)
    options = _options(spec, where, 3 if kind in ("position", "orientation") else 6)
    if kind == "contact":
        frame = _frame(robot, spec, "frame", where, kind)
        return within(where, lambda: ContactTask(robot, frame, kin.q, **options))
    task: Any
    if kind == "frame":
        frame = _frame(robot, spec, "frame", where, kind)
        task, start = within(where, lambda: FrameTask(frame, **options)), kin.placement(frame)
    else:
        a, b = (_frame(robot, spec, key, where, kind) for key in ("frame_a", "frame_b"))
        task, start = within(where, lambda: _PAIRS[kind](a, b, **options)), kin.relative_placement(a, b)
    target = _pose_target(spec, where, kind, start)
    within(where, lambda: task.set_target(target))
    return task

"""A task hierarchy described in a small TOML file, for ``reljac debug ROBOT FILE``.

The format (``reljac/apps/dual_arm_debug.toml`` is a complete example)::

    dt = 0.01                     # [s] control period (default 0.01)

    [start]                       # the first configuration: joint values [rad or m]
    left_joint1 = 0.88            # (joints not named: the robot's reference configuration)

    [[task]]
    level = 0                     # priority: 0 is the highest; tasks of one level are stacked
    type = "relative"             # relative | frame | position | orientation | posture
    frame_a = "left_tool"         # relative, position, orientation: frames a and b
    frame_b = "right_tool"        # frame: `frame` (its pose in the world)
    name = "relative"             # optional, as the tasks' own defaults otherwise
    gain = 15.0                   # optional: gain [1/s], weight (a number or one per row)
    position = [0.0, 0.25, 0.0]   # optional target: position [m] of b in a (world for frame)
    rpy = [0.0, 0.0, 3.14]        # and roll-pitch-yaw [rad]; default: the pose at the start

    [collision]                   # optional: collision avoidance between the robot's links
    min_distance = 0.01           # [m], and influence_distance, gain, margin as in
                                  # reljac.ik.CollisionAvoidance

A posture task's target is the start configuration. Every mistake raises ConfigurationError
naming the file, the task and what is valid.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from ..exceptions import ConfigurationError, ReljacError, suggest
from ..ik import (
    CollisionAvoidance,
    Controller,
    FrameTask,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    Task,
)
from ..relative import Kinematics
from ..robot import Robot

DEMO_FILE = Path(__file__).resolve().parent / "dual_arm_debug.toml"
TASK_TYPES = ("relative", "frame", "position", "orientation", "posture")
TASK_KEYS = {"level", "type", "frame_a", "frame_b", "frame", "name", "gain", "weight", "position", "rpy"}
TOP_KEYS = {"dt", "start", "task", "collision"}
COLLISION_KEYS = {"min_distance", "influence_distance", "gain", "margin"}


def _toml(path: Path) -> dict:
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:
            raise ReljacError("reading a hierarchy file needs Python >= 3.11 (tomllib) "
                              "or `pip install tomli`") from None
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"hierarchy file {str(path)!r} cannot be read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"hierarchy file {str(path)!r} is not valid TOML: {exc}") from None


def _unknown(keys: Any, valid: set[str], where: str) -> None:
    for key in keys:
        if key not in valid:
            raise ConfigurationError(f"{where}: unknown key {key!r}{suggest(str(key), valid)} "
                                     f"(valid: {', '.join(sorted(valid))})")


def _vector(value: Any, n: int, what: str) -> np.ndarray:
    x = np.asarray(value, dtype=float) if isinstance(value, list) else None
    if x is None or x.shape != (n,) or not np.isfinite(x).all():
        raise ConfigurationError(f"{what} must be a list of {n} finite numbers, got {value!r}")
    return x


def _task(robot: Robot, spec: Any, where: str, kin: Kinematics) -> tuple[int, Task]:
    if not isinstance(spec, dict):
        raise ConfigurationError(f"{where} must be a table ([[task]]), got {spec!r}")
    _unknown(spec, TASK_KEYS, where)
    kind = spec.get("type")
    if kind not in TASK_TYPES:
        raise ConfigurationError(f"{where}: type must be one of {', '.join(TASK_TYPES)}, got {kind!r}")
    level = spec.get("level", 0)
    if not isinstance(level, int) or isinstance(level, bool) or level < 0:
        raise ConfigurationError(f"{where}: level must be an integer >= 0 (0 is the highest), got {level!r}")
    options = {k: spec[k] for k in ("name", "gain") if k in spec}
    if "weight" in spec:
        options["weight"] = spec["weight"]
    frames = {"frame": ("frame",), "posture": ()}.get(kind, ("frame_a", "frame_b"))
    for key in frames:
        if not isinstance(spec.get(key), str):
            raise ConfigurationError(f"{where}: a {kind} task needs {key} = \"FRAME NAME\"")
        robot.frame_id(spec[key])  # FrameNotFound with suggestions
    task: Task
    if kind == "posture":
        task = PostureTask(robot, **options)
        task.set_target(kin.q)
        return level, task
    pair: Any  # a task with frames a and b and a target
    if kind == "frame":
        pair = FrameTask(spec["frame"], **options)
        start = kin.placement(spec["frame"])
    else:
        cls: dict[str, Any] = {"relative": RelativeFrameTask, "position": RelativePositionTask,
                               "orientation": RelativeOrientationTask}
        pair = cls[kind](spec["frame_a"], spec["frame_b"], **options)
        start = kin.relative_placement(spec["frame_a"], spec["frame_b"])
    p = _vector(spec["position"], 3, f"{where}: position [m]") if "position" in spec else start.translation
    R = pin.rpy.rpyToMatrix(*_vector(spec["rpy"], 3, f"{where}: rpy [rad]")) if "rpy" in spec else start.rotation
    target = {"position": p, "orientation": R}.get(kind, pin.SE3(R, p))
    pair.set_target(target)
    return level, pair


def load_hierarchy(robot: Robot, path: str | Path, q: np.ndarray | None = None) -> tuple[Controller | None, np.ndarray]:
    """The controller a hierarchy file describes (None when it has no task: joint sliders) and
    its start configuration (nq,): `q` if given (the file's [start] is then ignored), else the
    file's. Default targets are the poses at that configuration.

    Raises:
        ConfigurationError: a mistake in the file (its message names the file and the task).
        FrameNotFound, JointNotFound: an unknown frame or joint name.
    """
    path = Path(path)
    doc = _toml(path)
    where = f"hierarchy file {path.name!r}"
    _unknown(doc, TOP_KEYS, where)
    dt = doc.get("dt", 0.01)
    if not isinstance(dt, (int, float)) or isinstance(dt, bool) or not (1e-4 <= dt <= 0.1) or math.isnan(dt):
        raise ConfigurationError(f"{where}: dt must be a number of seconds in [1e-4, 0.1], got {dt!r}")
    start = doc.get("start", {})
    if not isinstance(start, dict):
        raise ConfigurationError(f"{where}: [start] must be a table of joint values, got {start!r}")
    if q is not None:
        q = robot.validate_q(q)
    elif start:
        q = robot.q_from_joint_values({**robot.joint_values(robot.reference_configuration()), **start})
    else:
        q = robot.reference_configuration()
    specs = doc.get("task", [])
    if not isinstance(specs, list):
        raise ConfigurationError(f"{where}: tasks are [[task]] tables, got {specs!r}")
    kin = Kinematics(robot, q)
    tasks = [_task(robot, spec, f"{where}, task {i + 1}", kin) for i, spec in enumerate(specs)]
    constraints = []
    collision = doc.get("collision")
    if collision is not None:
        if not isinstance(collision, dict):
            raise ConfigurationError(f"{where}: [collision] must be a table, got {collision!r}")
        _unknown(collision, COLLISION_KEYS, f"{where}, [collision]")
        constraints.append(CollisionAvoidance(robot, **collision))
    if not tasks:
        return None, q
    numbers = sorted({level for level, _ in tasks})
    levels = [[task for level, task in tasks if level == n] for n in numbers]
    return Controller(robot, levels, dt=float(dt), constraints=constraints), q

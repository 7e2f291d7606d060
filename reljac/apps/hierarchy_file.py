"""A task hierarchy described in a small TOML file, for ``reljac debug ROBOT FILE``.

The format (``reljac/apps/dual_arm_debug.toml`` and ``examples/talos_balance_debug.toml`` are
complete examples; docs/cli.md is the reference)::

    dt = 0.01                     # [s] control period, 1e-4..0.1 (default 0.01)
    lock = ["hand_*"]             # optional: joints fixed (names or shell patterns), or a table
                                  # {joint = value}; unnamed values from the start configuration

    [start]                       # the first configuration: joint values [rad or m]
    left_joint1 = 0.88            # (joints not named: the robot's reference configuration)

    [velocity_limits]             # optional: joint = [rad/s or m/s] (others: the URDF's)
    left_joint1 = 1.0

    [[task]]
    level = 0                     # priority: 0 is the highest; tasks of one level are stacked
    type = "relative"             # relative | frame | position | orientation | posture | com | contact | ball
    frame_a = "left_tool"         # relative, position, orientation: frames a and b
    frame_b = "right_tool"        # frame, contact: `frame`; com: `frame` it is measured in (world)
    name = "relative"             # optional (the tasks' own defaults otherwise); names are unique
    gain = 15.0                   # optional: gain [1/s], weight (a number or one per row),
    max_speed = 0.2               # max_speed [m/s or rad/s] (a number or [linear, angular])
    position = [0.0, 0.25, 0.0]   # optional target: position [m] of b in a (world for frame; com)
    rpy = [0.0, 0.0, 3.14]        # and roll-pitch-yaw [rad]; default: the pose at the start
                                  # com: axes = "xy"; posture: masked_joints = ["root_joint"]
    lower = [-0.05, -0.05, -inf, -0.1, -0.1, -0.1]  # optional bounds on the error e (from the
    upper = 0.05                  # target): lower <= e <= upper; ball: radius [m] about position

    [collision]                   # optional: collision avoidance between the robot's links
    min_distance = 0.01           # [m], and influence_distance, gain, margin as in
                                  # reljac.ik.CollisionAvoidance

    [[obstacle]]                  # optional (with [collision]): a shape the links keep away from
    name = "table"
    shape = "box"                 # box (size = [x, y, z]) | sphere (radius) | capsule, cylinder
    size = [1.0, 1.6, 0.04]       # (radius, length) [m]
    position = [0.6, 0.0, 0.7]    # [m] and rpy [rad] in the world, or in `frame` (it moves with it)

    [support]                     # optional: the centre of mass kept over the contacts
    contacts = ["left_sole_link", "right_sole_link"]   # frames whose soles make the region
    sole = [0.2, 0.1]             # optional (length, width) [m]; default: read from the geometry
    margin = 0.02                 # [m], and gain, frame as in reljac.ik.SupportRegion

A posture task's target is the start configuration, a contact holds its frame where it is at the
start. Every mistake raises a reljac error (ConfigurationError unless a name is unknown) in one
line naming the file, the task and what is valid.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from ..exceptions import ConfigurationError, ReljacWarning
from ..files import shown
from ..footprint import sole_contact
from ..ik import CollisionAvoidance, Controller, SupportRegion, Task
from ..relative import Kinematics
from ..robot import Robot
from ..support import SupportContact
from .hierarchy_tasks import read_task
from .hierarchy_values import joint_value, number, numbers, table, text, texts, unknown_keys, within
from .obstacle_table import add_obstacles, check_count, obstacle_shape
from .toml_file import read_toml

DEMO_FILE = Path(__file__).resolve().parent / "dual_arm_debug.toml"
TOP_KEYS = {"dt", "lock", "start", "velocity_limits", "task", "collision", "obstacle", "support"}
COLLISION_KEYS = {"min_distance", "influence_distance", "gain", "margin"}
OBSTACLE_KEYS = {"name", "shape", "position", "rpy", "frame", "size", "radius", "length"}
SUPPORT_KEYS = {"contacts", "sole", "margin", "gain", "frame"}
MAX_BYTES = 1 << 20  # a hierarchy file is a few hundred lines
MAX_DEPTH = 32  # brackets and braces nested deeper than any hierarchy needs
# [[task]] tables: each control step solves them all, and a level's solve grows with the cube of its
# rows (1,000 frame tasks in one level, a 52 KB file, took minutes to start; 100 about a second)
MAX_TASKS = 100


@dataclass
class Hierarchy:
    """What a hierarchy file describes: the robot (with the file's locked joints), the controller
    (None without tasks: joint sliders) and the start configuration q (robot.nq,)."""

    robot: Robot
    controller: Controller | None
    q: np.ndarray


def _start_values(robot: Robot, start: Any, where: str) -> dict[str, Any]:
    start = table(start, where, "[start] (joint = value [rad or m])")
    return {name: joint_value(value, f"{where}, [start]", name) for name, value in start.items()}


def _locked(robot: Robot, lock: Any, q: np.ndarray, where: str) -> tuple[Robot, np.ndarray]:
    """The robot with the file's `lock` joints fixed, and q reduced to it."""
    what = "lock (a list of joint names or patterns, or a table {joint = value})"
    if isinstance(lock, dict):
        joints: Any = {name: joint_value(value, f"{where}, lock", name) for name, value in lock.items()}
    else:
        joints = texts(lock, where, what)
    reduced = within(f"{where}, lock", lambda: robot.locked(joints, q))
    kept = reduced.joint_values(reduced.neutral())
    values = {name: value for name, value in robot.joint_values(q).items() if name in kept}
    return reduced, reduced.q_from_joint_values(values)


def _velocity_limits(robot: Robot, limits: Any, where: str) -> np.ndarray:
    where = f"{where}, [velocity_limits]"
    out = robot.velocity_limits.copy()
    for name, value in table(limits, where, "[velocity_limits] (joint = [rad/s or m/s])").items():
        joint = robot.model.joints[within(where, lambda n=name: robot.joint_id(n))]  # type: ignore[misc]
        out[joint.idx_v : joint.idx_v + joint.nv] = number(value, where, f"joint {name!r} [rad/s or m/s]",
                                                           minimum=0.0, strict=True)
    return out


def _obstacle(spec: Any, where: str) -> dict[str, Any]:
    """One [[obstacle]] table as CollisionModel.add_obstacles takes it."""
    spec, name, where, shape = obstacle_shape(spec, where, OBSTACLE_KEYS)
    p = numbers(spec["position"], where, "position [m]", (3,)) if "position" in spec else np.zeros(3)
    R = pin.rpy.rpyToMatrix(*numbers(spec["rpy"], where, "rpy [rad]", (3,))) if "rpy" in spec else np.eye(3)
    frame = text(spec["frame"], where, "frame") if "frame" in spec else None
    return {"name": name, "shape": shape, "placement": pin.SE3(R, p), "frame": frame}


def _collision(robot: Robot, collision: Any, obstacles: Any, where: str) -> CollisionAvoidance:
    here = f"{where}, [collision]"
    options = table(collision, here, "[collision]")
    unknown_keys(options, COLLISION_KEYS, here)
    values = {key: number(value, here, f"{key} [m]" if key != "gain" else key) for key, value in options.items()}
    avoidance = within(here, lambda: CollisionAvoidance(robot, **values))
    if not isinstance(obstacles, list):
        raise ConfigurationError(f"{where}: obstacles are [[obstacle]] tables, got {obstacles!r}")
    check_count(obstacles, where)
    add_obstacles(avoidance.model, [_obstacle(spec, f"{where}, obstacle {i + 1}") for i, spec in enumerate(obstacles)],
                  where)  # (each checked in file order; two of one name refused)
    return avoidance  # (the controller, built after, takes the obstacles in)


def _support(robot: Robot, support: Any, kin: Kinematics, where: str) -> SupportRegion:
    where = f"{where}, [support]"
    options = dict(table(support, where, "[support]"))
    unknown_keys(options, SUPPORT_KEYS, where)
    if "contacts" not in options:
        raise ConfigurationError(f"{where}: contacts = [\"FRAME\", ...] is needed (the frames whose soles "
                                 f"make the support region)")
    frames = texts(options.pop("contacts"), where, "contacts")
    contacts: list[SupportContact]
    if "sole" in options:
        length, width = numbers(options.pop("sole"), where, "sole (length, width) [m]", (2,))
        contacts = within(where, lambda: [SupportContact.rectangle(f, length, width) for f in frames])
    else:
        contacts = within(where, lambda: [sole_contact(robot, f) for f in frames])
    kwargs: dict[str, Any] = {key: number(options[key], where, key) for key in ("margin", "gain") if key in options}
    if "frame" in options:
        kwargs["frame"] = text(options["frame"], where, "frame")
    region = within(where, lambda: SupportRegion(robot, contacts, **kwargs))
    within(where, lambda: region.polygon(kin).shrunk(region.margin))  # at the start, not at the first step
    return region


def _unique_names(tasks: list[tuple[int, Task]], where: str) -> None:
    seen: dict[str, int] = {}
    for i, (_, task) in enumerate(tasks):
        if task.name in seen:
            raise ConfigurationError(f"{where}: tasks {seen[task.name] + 1} and {i + 1} are both named {task.name!r}; "
                                     f"give each task its own name = \"...\" (names label handles and exports)")
        seen[task.name] = i


def read_hierarchy(robot: Robot, path: str | Path, q: np.ndarray | None = None) -> Hierarchy:
    """The :class:`Hierarchy` a file describes (module docstring). `q` (robot.nq,), if given,
    replaces the file's [start]; default targets are the poses at the start configuration.

    Raises:
        ConfigurationError: a mistake in the file (its message names the file and the task).
        FrameNotFound, JointNotFound: an unknown frame or joint name (named likewise).
    """
    where = f"hierarchy file '{shown(path)}'"
    doc = read_toml(Path(path), where, "hierarchy file", max_bytes=MAX_BYTES, max_depth=MAX_DEPTH,
                    depth_note="; the format needs at most 2")
    unknown_keys(doc, TOP_KEYS, where)
    dt = doc.get("dt", 0.01)
    if isinstance(dt, bool) or not isinstance(dt, (int, float)) or math.isnan(dt) or not (1e-4 <= dt <= 0.1):
        raise ConfigurationError(f"{where}: dt must be a number of seconds in [1e-4, 0.1], got {dt!r}")
    start = _start_values(robot, doc.get("start", {}), where)
    if q is not None:
        q = robot.validate_q(q)
    else:
        base = robot.joint_values(robot.reference_configuration())
        q = within(f"{where}, [start]", lambda: robot.q_from_joint_values({**base, **start}))
    if "lock" in doc:
        robot, q = _locked(robot, doc["lock"], q, where)
    specs = doc.get("task", [])
    if not isinstance(specs, list):
        raise ConfigurationError(f"{where}: tasks are [[task]] tables, got {specs!r}")
    if len(specs) > MAX_TASKS:
        raise ConfigurationError(f"{where}: {len(specs):,} [[task]] tables; at most {MAX_TASKS} (every control step "
                                 f"solves them all): build larger hierarchies in Python (reljac.ik.Controller)")
    kin = Kinematics(robot, q)
    tasks = [read_task(robot, spec, f"{where}, task {i + 1}", kin) for i, spec in enumerate(specs)]
    _unique_names(tasks, where)
    constraints: list[Any] = []
    if "obstacle" in doc and "collision" not in doc:
        raise ConfigurationError(f"{where}: [[obstacle]] needs a [collision] table (min_distance = ...): "
                                 f"obstacles are kept away by collision avoidance")
    if "collision" in doc:
        constraints.append(_collision(robot, doc["collision"], doc.get("obstacle", []), where))
    if "support" in doc:
        constraints.append(_support(robot, doc["support"], kin, where))
    limits = _velocity_limits(robot, doc["velocity_limits"], where) if "velocity_limits" in doc else None
    if not tasks:
        return Hierarchy(robot, None, q)
    numbers_ = sorted({level for level, _ in tasks})
    levels = [[task for level, task in tasks if level == n] for n in numbers_]
    controller = within(where, lambda: Controller(robot, levels, dt=float(dt), constraints=constraints,
                                                  velocity_limits=limits))
    # one velocity at the start, forgotten after: a value the tasks refuse only when they compute (a
    # support region of collinear points, a gain of 1e308) is the file's error, not a paused page's;
    # its warnings (a gain x dt of 2 or more) are given when the motion starts (after the reset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReljacWarning)
        within(where, lambda: controller.velocity(q))
    controller.reset()
    return Hierarchy(robot, controller, q)


def load_hierarchy(robot: Robot, path: str | Path, q: np.ndarray | None = None) -> tuple[Controller | None, np.ndarray]:
    """(controller, q) of :func:`read_hierarchy` (its robot is ``controller.robot``; a file with
    ``lock`` and no task gives sliders of the robot it passed: use read_hierarchy then)."""
    hierarchy = read_hierarchy(robot, path, q)
    return hierarchy.controller, hierarchy.q

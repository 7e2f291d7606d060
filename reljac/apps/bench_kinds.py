"""``reljac bench ik``'s kinds table (issue 41): what one more task kind costs a whole-body step.

Talos by name, floating base, legs free (example-robot-data): feet held > the box between the
grippers > the lead gripper and the horizontal centre of mass > posture, the support region of
both soles as a limit. The controller's step median with that stack alone and with one kind more
each: a cone on the lead gripper's axis (level 2), a half-space on the lead gripper (level 2), a
ball about the box task (level 1), the support region as a level (level 1) instead of as a limit,
and collision avoidance as a level beside the same pairs as a limit. Every stack is timed in the
same run, steps of the stacks interleaved, and its ratio taken to the bare stack's (to the limit's
for the collision level). On the compiled backend each stack must run no Python rows
(``Controller.python_parts``): the table says so per row.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from ..exceptions import URDFError
from ..ik import (
    BallTask,
    CollisionAvoidance,
    ConeTask,
    Controller,
    HalfSpaceTask,
)
from ..relative import Kinematics
from ..robot import Robot
from .bench_common import Progress, done
from .bench_inequality import HANDS, talos_whole_body
from .report import format_table

#: the collision pairs of the avoidance rows: each gripper against the torso and the other arm's links
PAIR_LINKS = (("gripper_left_base_link", "torso_2_link"), ("gripper_right_base_link", "torso_2_link"),
              ("arm_left_5_link", "arm_right_5_link"), ("gripper_left_base_link", "gripper_right_base_link"))


def _stack(robot: Robot, q0: np.ndarray, extra: str) -> tuple[list[list[Any]], list[Any]]:
    """The whole-body levels and limits, with `extra` added ("" for none)."""
    feet, box, lead, com, posture, region = talos_whole_body(robot, q0)
    left = HANDS[0]
    levels: list[list[Any]] = [feet, [box], [lead, com], [posture]]
    limits: list[Any] = [region]
    if extra == "cone":
        levels[2].append(ConeTask("universe", left, np.radians(30), axis_b=[1, 0, 0], axis_a=[1, 0, 0], gain=10.0))
    elif extra == "half-space":
        p = Kinematics(robot, q0).placement(left).translation
        levels[2].append(HalfSpaceTask("universe", left, [[1, 0, 0], [0, 0, 1]], [p[0] + 0.05, p[2] + 0.2], gain=10.0))
    elif extra == "ball":
        levels[1].append(BallTask(box, 0.01, gain=10.0, name="box ball"))
    elif extra == "region level":
        levels.insert(1, [region])
        limits = []
    elif extra in ("collision limit", "collision level"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pairs that start near each other
            avoidance = CollisionAvoidance(robot, list(PAIR_LINKS))
        if extra == "collision limit":
            limits.append(avoidance)
        else:
            levels.insert(1, [avoidance])
    return levels, limits


#: (row label, the stack's extra, the extra of the row it is compared with: "" the bare stack)
ROWS = (("nothing", "", ""), ("ConeTask on the lead gripper's axis, level 2", "cone", ""),
        ("HalfSpaceTask on the lead gripper (2 planes), level 2", "half-space", ""),
        ("BallTask around the box task, level 1", "ball", ""),
        ("the support region as a level (region.as_task()), level 1", "region level", ""),
        ("collision avoidance (4 pairs) as a limit", "collision limit", ""),
        ("the same pairs as a level, level 1", "collision level", "collision limit"))


def _step(controller: Controller, state: dict[str, np.ndarray]) -> None:
    state["q"] = controller.step(state["q"])


def kinds_units(quick: bool = False) -> int:
    return len(ROWS)


def kinds_results(*, quick: bool = False, progress: Progress = None, backend: str = "compiled") -> dict[str, Any]:
    """{``robot``, ``nv``, ``steps``, ``backend``, ``rows``: [{``row``, ``step_s`` (median [s]),
    ``ratio`` (to the row it is compared with), ``python_parts`` (names of the parts whose rows
    ran in Python)}]}; without example-robot-data (Talos): ``robot`` None and no rows."""
    try:
        robot = Robot.load("talos")
    except URDFError:
        return {"robot": None, "nv": None, "steps": 0, "backend": backend, "rows": []}
    q0 = robot.reference_configuration()
    steps = 40 if quick else 200
    controllers: dict[str, tuple[Controller, Callable[[], None]]] = {}
    for _, extra, _ in ROWS:
        levels, limits = _stack(robot, q0, extra)
        controller = Controller(robot, levels, dt=0.01, constraints=limits, backend=backend)
        controllers[extra] = (controller, partial(_step, controller, {"q": q0.copy()}))
    times: dict[str, list[float]] = {extra: [] for extra in controllers}
    for i in range(steps):  # interleaved: every stack sees the same machine
        for extra, (_, step) in controllers.items():
            t = time.perf_counter()
            step()
            if i >= steps // 10:  # the first steps warm the buffers up
                times[extra].append(time.perf_counter() - t)
    medians = {extra: float(np.median(t)) for extra, t in times.items()}
    rows = []
    for label, extra, base in ROWS:
        parts = controllers[extra][0].python_parts
        rows.append({"row": label, "step_s": medians[extra], "ratio": medians[extra] / medians[base],
                     "python_parts": [getattr(p, "name", type(p).__name__) for p in parts]})
        done(progress)
    return {"robot": robot.name, "nv": robot.nv, "steps": steps, "backend": backend, "rows": rows}


def kinds_text(r: dict[str, Any]) -> str:
    if r["robot"] is None:
        return "one more task kind on the Talos whole-body step: skipped (Talos needs example-robot-data)"
    head = (f"one more task kind on the {r['robot']} whole-body step (nv {r['nv']}; feet > box > lead and CoM > "
            f"posture, support region as a limit), {r['backend']} backend: median over {r['steps']} interleaved "
            "steps, ratio to the stack without it (the collision level: to the same pairs as a limit)")
    table = [(row["row"], f"{row['step_s'] * 1e6:.1f}", f"{row['ratio']:.2f}",
              ", ".join(row["python_parts"]) or "none") for row in r["rows"]]
    return head + "\n" + format_table(("added to the stack", "step [us]", "ratio", "Python rows"), table)


__all__ = ["kinds_results", "kinds_text", "kinds_units"]

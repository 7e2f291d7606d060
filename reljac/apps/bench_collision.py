"""``reljac bench ik``, its collision table: controller steps with collision avoidance on against the
same runs without it (dual_arm's capsules; example-robot-data's Panda with its meshes when installed)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..collision import CollisionModel
from ..exceptions import URDFError
from ..ik import CollisionAvoidance, Controller, FrameTask, PostureTask, Task
from ..relative import Kinematics
from ..robot import Robot
from ..robots import RobotSource, resolve
from .bench_common import Progress, done, dual_arm_levels, middle
from .report import format_table


def panda_files() -> RobotSource | None:
    """example-robot-data's Panda (URDF, SRDF, folders of package:// meshes), or None when it is
    not installed."""
    try:
        return resolve("panda")
    except URDFError:
        return None


def _example_panda() -> tuple[Robot | None, Path | None]:
    """example-robot-data's Panda and its SRDF, or (None, None) when it is not installed."""
    source = panda_files()
    if source is None:
        return None, None
    return Robot.from_urdf(source.urdf, package_dirs=source.package_dirs), source.srdf


Episode = tuple[list[list[Task]], np.ndarray]  # levels and the start q (nq,)


def _step_times(robot: Robot, episodes: list[Episode], constraints_for: Callable[[], list], *, dt: float,
                steps: int, progress: Progress = None) -> np.ndarray:
    times = []
    for levels, q in episodes:
        controller = Controller(robot, levels, dt=dt, constraints=constraints_for())
        for _ in range(steps):
            start = time.perf_counter()
            q = controller.step(q)
            times.append(time.perf_counter() - start)
        done(progress)
    return np.array(times)


def collision_episodes(quick: bool) -> int:
    return 5 if quick else 30


def collision_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """Step time with collision avoidance on against the same runs without it: {``dt`` [s],
    ``episodes``, ``steps``, ``cases``: [{``case``, ``active_pairs``, ``without_s`` and ``with_s``
    (median step [s]), ``added`` (with / without - 1)}]} (panda only when example-robot-data is
    installed)."""
    dt, n, steps = 0.01, collision_episodes(quick), 100
    robot = Robot.bundled("dual_arm")
    rng = np.random.default_rng(2026)
    model = CollisionModel(robot)
    episodes = [(dual_arm_levels(robot, robot.random_configuration(rng), 1.0 / dt, middle(robot)), middle(robot))
                for _ in range(n)]
    cases = [("dual_arm (capsules), protocol targets", robot, episodes, model)]
    panda, srdf = _example_panda()
    if panda is not None:
        hand = "panda_hand" if "panda_hand" in panda.frame_names else panda.frame_names[-1]
        panda_model = CollisionModel(panda, srdf=srdf)
        panda_episodes: list[Episode] = []
        for _ in range(n):
            task = FrameTask(hand, gain=1.0 / dt)
            task.set_target(Kinematics(panda, panda.random_configuration(rng)).placement(hand))
            panda_episodes.append(([[task], [PostureTask(panda, gain=1.0, weight=0.1)]], middle(panda)))
        cases.append(("panda (meshes, its SRDF), random targets", panda, panda_episodes, panda_model))
    rows = []
    for name, robot_, eps, cm in cases:
        off = float(np.median(_step_times(robot_, eps, list, dt=dt, steps=steps, progress=progress)))
        on = float(np.median(_step_times(robot_, eps, _avoidance(robot_, cm), dt=dt, steps=steps, progress=progress)))
        rows.append({"case": name, "active_pairs": len(cm.pairs), "without_s": off, "with_s": on,
                     "added": on / off - 1})
    return {"dt": dt, "episodes": n, "steps": steps, "cases": rows}


def _avoidance(robot: Robot, model: CollisionModel) -> Callable[[], list]:
    """What makes the constraints of one episode: collision avoidance on `model`."""
    return lambda: [CollisionAvoidance(robot, model=model)]


def collision_text(r: dict[str, Any]) -> str:
    rows = [(c["case"], f"{c['active_pairs']}", f"{1e6 * c['without_s']:.0f}", f"{1e6 * c['with_s']:.0f}",
             f"{100 * c['added']:+.0f} %") for c in r["cases"]]
    return ("controller step with collision avoidance (min 1 cm, influence 5 cm) against the same runs without "
            f"it, gain = 1/dt, {r['episodes']} episodes x {r['steps']} steps, medians\n"
            + format_table(["robot / runs", "active pairs", "without [us]", "with [us]", "added"], rows))

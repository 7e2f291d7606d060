"""Talos with inequality levels between its tasks: feet > support region > collision avoidance >
a reach > posture (issue 29).

``Robot.load("talos")`` at its SRDF posture ``half_sitting``. The levels, highest first:

0. both soles held (``ContactTask``, equality rows);
1. the support region of the soles, shrunk by 2 cm (the ``SupportRegion`` object put in the level:
   one-sided rows, one per edge, that keep the centre of mass inside): below the feet, so it never
   moves them, above the arms;
2. collision avoidance (the ``CollisionAvoidance`` object put in the level: one row per pair
   nearer than 5 cm, kept at least 5 mm apart);
3. the left gripper sent 0.5 m forward, 0.45 m to the right and 0.45 m down, across the body and
   out of reach, 3 s: the reach carries the centre of mass to the front edge of the region, where
   level 1 stops it (without level 1 it goes past), and the bending brings the thighs near each
   other, where level 2 holds them apart;
4. the reference posture.

Rows of levels 1 and 2 inside their bounds cost nothing and leave the levels below free; on a
bound they hold. Each report says whether its level is met and names its active rows (a level of
many rows that span few directions, as the region's edges, is damped: on a bound it is met to
within ~1e-6, and its report says so).

    python examples/talos_bounded_levels.py              # with a meshcat viewer, in real time
    python examples/talos_bounded_levels.py --headless   # no viewer (or RELJAC_HEADLESS=1)

Needs example-robot-data: pip install example-robot-data (or ".[robots]" in the reljac folder).
"""

import os
import sys
import time
from typing import Any

import numpy as np
import pinocchio as pin

from reljac import Kinematics, Robot
from reljac.ik import CollisionAvoidance, Controller, FrameTask, LevelReport, humanoid_stack
from reljac.ik.tasks.ball import row_labels

DT, STEPS, MARGIN = 0.02, 150, 0.02  # [s], -, [m]
GRIPPER, FEET = "gripper_left_base_link", ("left_sole_link", "right_sole_link")
REACH = np.array([0.5, -0.45, -0.45])  # [m], in the world, from where the gripper starts


def build(talos: Robot, q: np.ndarray, *, support_level: bool = True) -> tuple[Controller, Any, CollisionAvoidance,
                                                                                FrameTask]:
    """The controller (levels above; without level 1 when `support_level` is False), the support
    region, the collision avoidance and the reach."""
    stack = humanoid_stack(talos, q, feet=FEET, margin=MARGIN, com_priority="none",  # its feet, region, posture
                           contact_gain=1.0 / DT)  # (a foot's error of one step removed at the next)
    avoidance = CollisionAvoidance(talos, min_distance=0.005, influence_distance=0.05)
    reach = FrameTask(GRIPPER, gain=5.0, weight=[1, 1, 1, 0, 0, 0], max_speed=0.15)
    reach.set_target(pin.SE3(np.eye(3), Kinematics(talos, q).placement(GRIPPER).translation + REACH))
    levels = [list(stack.feet), stack.support, avoidance, reach, stack.posture]
    if not support_level:
        del levels[1]
    return Controller(talos, levels, dt=DT), stack.support, avoidance, reach


def row_name(controller: Controller, level: int, row: int) -> str:
    """Row `row` of level `level` by name: a region's rows by what they are (an edge, a pair)."""
    return row_labels(controller.levels[level])[row]


def summary(controller: Controller, k: int, report: LevelReport) -> tuple[bool, float, list[str]]:
    """(met, residual, the inequality rows at a bound: the level's own and those above it holds)."""
    own = [row_name(controller, k, i) for i in report.active]
    return report.met, report.residual, own + [row_name(controller, level, i) for level, i in report.held]


def run(steps: int = STEPS, *, support_level: bool = True, viewer: Any = None) -> dict[str, Any]:
    """Run the reach; what happened, in numbers (lengths [m])."""
    talos = Robot.load("talos")
    q = talos.reference_configuration()  # half_sitting
    controller, region, avoidance, _ = build(talos, q, support_level=support_level)
    kin = Kinematics(talos, q)
    feet = [kin.placement(f) for f in FEET]
    start = kin.placement(GRIPPER).translation.copy()
    com_inside, pair_distance, foot_error, log = np.inf, np.inf, 0.0, []
    start_time = time.perf_counter()
    for k in range(steps):
        q = controller.step(q)
        kin = Kinematics(talos, q)
        com_inside = min(com_inside, region.com_distance(kin))  # [m] to the region's edge, > 0 inside
        pair_distance = min(pair_distance, avoidance.minimum_distance)  # every pair nearer than 5 cm
        foot_error = max(foot_error, *(np.linalg.norm(pin.log6(T.actInv(kin.placement(f))).vector)
                                       for T, f in zip(feet, FEET, strict=True)))
        if k % 25 == 24 or k == steps - 1:
            log.append((k + 1, [summary(controller, i, report) for i, report in enumerate(controller.last_reports)]))
        if viewer is not None and k % 3 == 0:
            viewer.display(q)
            time.sleep(max(0.0, start_time + (k + 1) * DT - time.perf_counter()))
    reports = controller.last_reports
    return {
        "levels": [" + ".join(t.name for t in level) for level in controller.levels],
        "log": log,
        "com_inside": com_inside,  # the centre of mass's least distance inside the region (not shrunk)
        "pair_distance": pair_distance,
        "foot_error": foot_error,  # largest pose error of a sole [m, rad]
        "moved": float(np.linalg.norm(kin.placement(GRIPPER).translation - start)),
        "asked": float(np.linalg.norm(REACH)),
        "reach_met": reports[-2].met,
        "reach_held_by": summary(controller, len(reports) - 2, reports[-2])[2],
        "backend": controller.backend,
    }


def main() -> None:
    headless = "--headless" in sys.argv or os.environ.get("RELJAC_HEADLESS") == "1"
    viewer = None
    if not headless:
        from reljac.viz import Viewer

        talos = Robot.load("talos")
        viewer = Viewer(talos, q=talos.reference_configuration())
        viewer.frame_camera((0.35, 1.0, 0.9))
    out = run(viewer=viewer)
    if viewer is not None:
        viewer.close()
    print("levels: " + " > ".join(out["levels"]))
    for step, levels in out["log"]:
        states = [f"{i}: {'met' if met else f'residual {residual:.1g}'}" + (f" (at a bound: {', '.join(rows)})"
                                                                         if rows else "")
                  for i, (met, residual, rows) in enumerate(levels)]
        print(f"after {step * DT:.1f} s: " + "; ".join(states))
    print(f"centre of mass at least {out['com_inside'] * 1e3:.2f} mm inside the support region (kept: "
          f"{MARGIN * 1e3:.0f} mm)")
    print(f"closest collision pair {out['pair_distance'] * 1e3:.2f} mm apart (kept: 5 mm)")
    print(f"feet held: largest pose error {out['foot_error']:.1e} m/rad")
    print(f"the gripper moved {out['moved'] * 1e3:.0f} mm of {out['asked'] * 1e3:.0f} mm asked; at the end the "
          f"reach is held by: {', '.join(out['reach_held_by']) or 'nothing'}")


if __name__ == "__main__":
    main()

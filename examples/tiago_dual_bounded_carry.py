"""TIAGo dual carries a box whose grip may give a little: the hands' relative pose kept in a box,
not fixed, while a lower level pulls the right hand out of it.

The wheels, casters, suspension and fingers are locked as in examples/tiago_dual_carry.py (17
joints left: the torso lift, two 7-DoF arms, the head). The hands start 50 cm apart, facing
each other (the start of examples/tiago_dual_debug.toml). The levels, highest first:

0. the grip: the pose of the right hand *in the left hand's frame* within +-5 cm and +-0.1 rad
   of the grasp, per component of its error e = log6(T_grasp^-1 T_lr) (position in the grasp's
   axes [m], rotation vector [rad]): ``Task.set_bounds``. Inside the box this level asks nothing;
1. the left hand carries the box along a 10 cm circle in the x-z plane (feed-forward velocity);
2. the right hand reaches for a point 8 cm farther out than the grasp (fixed in the world): it
   goes as far as the grip allows, so some of the grip's rows sit on their bounds (active) while
   the others stay inside with margin (slack);
3. the posture.

After the circle (6 s) the box rests for 1 s. Per level the example prints met or not and the
grip's rows on a bound; the rows' errors and their distances to the bounds at the end.

    python examples/tiago_dual_bounded_carry.py              # with a meshcat viewer, in real time
    python examples/tiago_dual_bounded_carry.py --headless   # no viewer (or RELJAC_HEADLESS=1)

Needs example-robot-data: pip install example-robot-data (or ".[robots]" in the reljac folder).
Tasks with bounds run on the Python hierarchy solver until the compiled step takes them (reljac
says so once on stderr); the example runs the same on either.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from reljac import Kinematics, Robot
from reljac.ik import Controller, FrameTask, PostureTask, RelativeFrameTask

L, R = "hand_left_tool_link", "hand_right_tool_link"
DT, CIRCLE, REST, RADIUS = 0.01, 6.0, 1.0, 0.10  # [s], [s], [s], [m]
BOX = np.array([0.05, 0.05, 0.05, 0.1, 0.1, 0.1])  # the grip's half-widths [m, m, m, rad, rad, rad]
REACH = 0.08  # [m] how far beyond the grasp the right hand reaches
START = {  # the hands 50 cm apart in front of the robot, facing each other [rad, m]
    "torso_lift_joint": 0.105, "arm_left_1_joint": 0.929, "arm_left_2_joint": 0.308, "arm_left_3_joint": 0.970,
    "arm_left_4_joint": 1.404, "arm_left_5_joint": 0.827, "arm_left_6_joint": -1.097, "arm_left_7_joint": 0.571,
    "arm_right_1_joint": 0.860, "arm_right_2_joint": -0.373, "arm_right_3_joint": 1.860, "arm_right_4_joint": 1.362,
    "arm_right_5_joint": -1.025, "arm_right_6_joint": 1.026, "arm_right_7_joint": -0.218,
}


@dataclass
class Carry:
    """What a run recorded: per step, the grip's error e (6,) [m, rad] after the step and the
    left hand's position error [m] before it (at the target of its time); the controller (its
    last reports are the last step's)."""

    robot: Robot
    controller: Controller
    grip: RelativeFrameTask
    lead: FrameTask
    q: np.ndarray
    grip_errors: list[np.ndarray] = field(default_factory=list)
    lead_errors: list[float] = field(default_factory=list)


def on_bound(controller: Controller, level: int) -> list[int]:
    """The inequality rows of `level` (indices in its stacked rows) on a bound or beyond it at
    the last step: active at their own level's solution, or held on their bound by a level
    below (``LevelReport.on_bound``)."""
    return controller.last_reports[level].on_bound


def setup() -> Carry:
    """The robot at the grasp and the four levels."""
    robot = Robot.load("tiago_dual").locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])
    q = robot.q_from_joint_values({**robot.joint_values(robot.reference_configuration()), **START})
    kin = Kinematics(robot, q)
    grip = RelativeFrameTask(L, R, gain=20.0, name="grip")
    grip.set_target(kin.relative_placement(L, R))  # the grasp: the box's centre
    grip.set_bounds(-BOX, BOX)
    lead = FrameTask(L, gain=20.0, name="left hand")
    lead.set_target(kin.placement(L))
    T_wl, T_wr = kin.placement(L), kin.placement(R)
    out = T_wr.translation - T_wl.translation  # from the left hand to the right one
    reach = FrameTask(R, gain=5.0, weight=[1, 1, 1, 0, 0, 0], name="right hand reach")
    reach.set_target(pin.SE3(T_wr.rotation, T_wr.translation + REACH * out / np.linalg.norm(out)))
    posture = PostureTask(robot, gain=1.0, weight=0.1)
    posture.set_target(q)
    controller = Controller(robot, [[grip], [lead], [reach], [posture]], dt=DT)
    return Carry(robot, controller, grip, lead, q)


def lead_target(T_wl0: pin.SE3, t: float) -> tuple[pin.SE3, np.ndarray]:
    """T_wl(t) on the circle (still after CIRCLE s), and its twist [linear; angular] in the left
    tool's axes (6,)."""
    omega = 2 * math.pi / CIRCLE
    a = omega * min(t, CIRCLE)
    p = T_wl0.translation + RADIUS * np.array([math.sin(a), 0.0, 1.0 - math.cos(a)])
    v_world = RADIUS * omega * np.array([math.cos(a), 0.0, math.sin(a)]) if t < CIRCLE else np.zeros(3)
    return pin.SE3(T_wl0.rotation, p), np.concatenate([T_wl0.rotation.T @ v_world, np.zeros(3)])


def carry(run: Carry, viewer: object | None = None) -> Carry:
    """Run the circle and the rest from :func:`setup`'s `run`; `viewer` (a reljac.viz.Viewer)
    shows it in real time."""
    T_wl0, grasp = run.lead.target, run.grip.target
    start = time.perf_counter()
    for k in range(round((CIRCLE + REST) / DT)):
        T, twist = lead_target(T_wl0, k * DT)
        run.lead.set_target(T, velocity=twist)
        kin = Kinematics(run.robot, run.q)  # the errors at t, before the step
        run.lead_errors.append(float(np.linalg.norm(kin.placement(L).translation - T.translation)))
        run.q = run.controller.step(run.q)
        kin = Kinematics(run.robot, run.q)
        run.grip_errors.append(pin.log6(grasp.actInv(kin.relative_placement(L, R))).vector)
        if viewer is not None and k % 3 == 0:
            viewer.display(run.q)  # type: ignore[attr-defined]
            time.sleep(max(0.0, start + (k + 1) * DT - time.perf_counter()))  # real time
    return run


def main() -> None:
    headless = "--headless" in sys.argv or os.environ.get("RELJAC_HEADLESS") == "1"
    run, viewer = setup(), None
    if not headless:
        from reljac.viz import Viewer

        viewer = Viewer(run.robot, q=run.q)
        viewer.show_frame(L, label="left hand")
        viewer.show_frame(R, label="right hand")
        viewer.show_segment(L, R)
    carry(run, viewer)
    if viewer is not None:
        viewer.close()
    controller = run.controller
    print(f"{controller.robot.name}: nv = {controller.robot.nv}, backend: {controller.backend}")
    errors = np.array(run.grip_errors)
    beyond = np.maximum(np.abs(errors) - BOX, 0.0).max(axis=0)
    print(f"grip kept in its box (+-{BOX[0] * 1e3:.0f} mm, +-{BOX[3]:.2f} rad): at most "
          f"{beyond[:3].max() * 1e3:.3f} mm and {beyond[3:].max() * 1e3:.3f} mrad beyond it")
    print(f"max error of 'left hand' along its circle: {max(run.lead_errors) * 1e3:.3f} mm")
    labels = [f"grip[{i}]" for i in range(6)]
    for k, report in enumerate(controller.last_reports):
        rows = ", ".join(labels[i] for i in on_bound(controller, k)) if k == 0 else ""
        print(f"level {k} ({', '.join(report.tasks)}): {'met' if report.met else 'not met'}"
              + (f"; rows on a bound: {rows or 'none'}" if k == 0 else ""))
    e = errors[-1]
    for i, label in enumerate(labels):
        unit, k = ("mm", 1e3) if i < 3 else ("mrad", 1e3)
        print(f"  {label}: e = {e[i] * k:+8.2f} {unit}, distance to its bound {(BOX[i] - abs(e[i])) * k:7.2f} {unit}")


if __name__ == "__main__":
    main()

"""The Allegro hand's thumb pinches the index, middle and ring finger tips in turn (3 s each).

example-robot-data's right Allegro hand (16 joints, 4 per finger; ``Robot.load`` by name). One
RelativePositionTask per pinch: the thumb tip's position in the finger tip's frame, driven to
zero along a smooth approach with feed-forward, above a posture task. The joint limits hold
throughout (the thumb's rotation joint starts at its lower limit, 0.26 rad). Prints the tip-to-tip
distance at the end of each pinch and the joints the limits stopped.

    python examples/allegro_pinch.py              # with a meshcat viewer, in real time
    python examples/allegro_pinch.py --headless   # no viewer (or RELJAC_HEADLESS=1)

Needs example-robot-data: pip install example-robot-data (or ".[robots]" in the reljac folder).
"""

import os
import sys
import time

import numpy as np

from reljac import Kinematics, Robot
from reljac.ik import Controller, PostureTask, RelativePositionTask

headless = "--headless" in sys.argv or os.environ.get("RELJAC_HEADLESS") == "1"
dt, approach, hold = 0.01, 2.0, 1.0  # [s]
THUMB = "link_15.0_tip"
FINGERS = {"index": "link_3.0_tip", "middle": "link_7.0_tip", "ring": "link_11.0_tip"}

robot = Robot.load("allegro_right_hand")
q = robot.q_from_joint_values({"joint_12.0": 0.26, "joint_13.0": 0.3, "joint_1.0": 0.3, "joint_5.0": 0.3,
                               "joint_9.0": 0.3})
lower, upper = robot.lower_limits, robot.upper_limits

viewer = None
if not headless:
    from reljac.viz import Viewer

    viewer = Viewer(robot, q=q)
    viewer.show_trail(THUMB)

for finger, tip in FINGERS.items():
    pinch = RelativePositionTask(tip, THUMB, gain=15.0)
    posture = PostureTask(robot, gain=1.0, weight=0.1)
    posture.set_target(q)  # stay near where this pinch starts
    controller = Controller(robot, [[pinch], [posture]], dt=dt)
    p0 = Kinematics(robot, q).relative_placement(tip, THUMB).translation  # thumb tip in the finger tip frame
    print(f"{finger}: thumb tip starts {np.linalg.norm(p0) * 1e3:.1f} mm away")
    stopped = set()
    start = time.perf_counter()
    for k in range(int((approach + hold) / dt)):
        s = min(k * dt / approach, 1.0)  # smoothstep 3s^2 - 2s^3 from p0 to 0
        pinch.set_target(p0 * (1 - (3 * s**2 - 2 * s**3)), velocity=-p0 * 6 * s * (1 - s) / approach)
        q = controller.step(q)
        for report in controller.last_reports:
            stopped.update(report.saturated_joints)
        if viewer is not None and k % 3 == 0:
            viewer.display(q)
            time.sleep(max(0.0, start + (k + 1) * dt - time.perf_counter()))
    assert np.all(q >= lower - 1e-9) and np.all(q <= upper + 1e-9)
    gap = np.linalg.norm(Kinematics(robot, q).relative_placement(tip, THUMB).translation)
    held = f"; joints held at a limit: {', '.join(sorted(stopped))}" if stopped else ""
    print(f"{finger}: pinched, tip-to-tip distance {gap * 1e3:.3f} mm{held}")

if viewer is not None:
    viewer.close()

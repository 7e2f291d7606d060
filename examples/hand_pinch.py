"""The thumb tip pinches the index tip, then the middle tip (3 s each).

One RelativePositionTask per pinch: the position of thumb_tip in the finger tip frame, driven to
zero along a smooth approach with feed-forward; a posture task below it. Prints the tip-to-tip
distance at the end of each pinch.

    python examples/hand_pinch.py              # with a meshcat viewer, in real time
    python examples/hand_pinch.py --headless   # no viewer (or RELJAC_HEADLESS=1)
"""

import os
import sys
import time

import numpy as np

from reljac import Kinematics, Robot
from reljac.ik import Controller, PostureTask, RelativePositionTask

headless = "--headless" in sys.argv or os.environ.get("RELJAC_HEADLESS") == "1"
dt, approach, hold = 0.01, 2.0, 1.0  # [s]

robot = Robot.bundled("hand")
q = robot.q_from_joint_values({"index_mcp": 0.2, "middle_mcp": 0.2, "thumb_cmc_abduction": 0.3})

viewer = None
if not headless:
    from reljac.viz import Viewer

    viewer = Viewer(robot)
    viewer.show_trail("thumb_tip")

for finger in ("index_tip", "middle_tip"):
    pinch = RelativePositionTask(finger, "thumb_tip", gain=15.0)
    posture = PostureTask(robot, gain=1.0, weight=0.1)
    posture.set_target(q)  # stay near where this pinch starts
    controller = Controller(robot, [[pinch], [posture]], dt=dt)
    p0 = Kinematics(robot, q).relative_placement(finger, "thumb_tip").translation  # p_ft at start
    print(f"{finger}: thumb starts {np.linalg.norm(p0) * 1e3:.1f} mm away")
    start = time.perf_counter()
    for k in range(int((approach + hold) / dt)):
        s = min(k * dt / approach, 1.0)  # smoothstep 3s^2 - 2s^3 from p0 to 0
        pinch.set_target(p0 * (1 - (3 * s**2 - 2 * s**3)), velocity=-p0 * 6 * s * (1 - s) / approach)
        q = controller.step(q)
        if viewer is not None and k % 3 == 0:
            viewer.display(q)
            time.sleep(max(0.0, start + (k + 1) * dt - time.perf_counter()))
    gap = np.linalg.norm(Kinematics(robot, q).relative_placement(finger, "thumb_tip").translation)
    print(f"{finger}: pinched, tip-to-tip distance {gap * 1e3:.3f} mm")

if viewer is not None:
    viewer.close()

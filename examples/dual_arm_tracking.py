"""Two arms hold an imaginary box while the left hand draws a circle.

Levels, highest priority first: the pose of right_tool in left_tool (the box stays rigid), the pose
of left_tool in the world (a 5 cm circle, with feed-forward velocity), a posture. Runs for 5 s.

    python examples/dual_arm_tracking.py              # with a meshcat viewer, in real time
    python examples/dual_arm_tracking.py --headless   # no viewer (or RELJAC_HEADLESS=1)

The full demo (the box also pivots, statistics table) is ``reljac demo dual-arm``.
"""

import math
import os
import sys
import time

import numpy as np
import pinocchio as pin

from reljac import Kinematics, Robot
from reljac.apps.demo import DUAL_ARM_MEETING  # tools 0.25 m apart, facing each other
from reljac.ik import Controller, FrameTask, PostureTask, RelativeFrameTask

headless = "--headless" in sys.argv or os.environ.get("RELJAC_HEADLESS") == "1"
dt, duration, radius, omega = 0.01, 5.0, 0.05, 2 * math.pi / 5.0  # [s], [s], [m], [rad/s]

robot = Robot.bundled("dual_arm")
q = robot.q_from_joint_values(DUAL_ARM_MEETING)
kin = Kinematics(robot, q)

box = RelativeFrameTask("left_tool", "right_tool", gain=15.0)
box.set_target(kin.relative_placement("left_tool", "right_tool"))  # keep the initial T_lr
left = FrameTask("left_tool", gain=15.0)
posture = PostureTask(robot, gain=2.0, weight=0.1)
posture.set_target(q)
controller = Controller(robot, [[box], [left], [posture]], dt=dt)

T_wl0 = kin.placement("left_tool")
R_lw = T_wl0.rotation.T  # the feed-forward twist is in the target's (left tool's) axes


def left_target(t):
    """T_wl(t) on a circle in the world x-z plane, and its body twist [linear; angular] (6,)."""
    a = omega * t
    p = T_wl0.translation + radius * np.array([math.sin(a), 0.0, 1.0 - math.cos(a)])
    v_world = radius * omega * np.array([math.cos(a), 0.0, math.sin(a)])
    return pin.SE3(T_wl0.rotation, p), np.concatenate([R_lw @ v_world, np.zeros(3)])


viewer = None
if not headless:
    from reljac.viz import Viewer

    viewer = Viewer(robot)
    viewer.show_frame("left_tool")
    viewer.show_frame("right_tool")
    viewer.show_segment("left_tool", "right_tool")
    viewer.show_trail("left_tool")

worst = {box.name: 0.0, left.name: 0.0}  # largest position errors [m]
start = time.perf_counter()
for k in range(int(duration / dt)):
    t = k * dt
    T, twist = left_target(t)
    left.set_target(T, velocity=twist)
    q = controller.step(q)
    for task in (box, left):  # errors at t, measured before the step
        worst[task.name] = max(worst[task.name], task.error_norms(controller.last_kinematics)["position"])
    if viewer is not None and k % 3 == 0:
        viewer.display(q)
        time.sleep(max(0.0, start + (k + 1) * dt - time.perf_counter()))  # real time
if viewer is not None:
    viewer.close()

for name, err in worst.items():
    print(f"max position error of '{name}': {err * 1e3:.3f} mm")

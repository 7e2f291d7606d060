"""TIAGo dual carries a box with both hands, its wheels, casters and fingers locked.

example-robot-data's TIAGo dual has 101 velocities, 84 of them in its base wheels, casters,
suspension and two five-finger hands. Locking those (``robot.locked``, Pinocchio's reduced model
with geometry) leaves the torso lift, the two 7-DoF arms and the head: 17 joints.

1. Grasp: the hand tool frames reach 0.3 m apart in front of the robot, then face each other
   (two `solve` calls: positions first, then the box's relative pose and the left hand's pose).
2. Carry, 6 s: the left hand draws a 10 cm circle (with feed-forward velocity) while the pose of
   the right hand *in the left hand's frame* is held at the highest priority: the box stays rigid.

    python examples/tiago_dual_carry.py              # with a meshcat viewer, in real time
    python examples/tiago_dual_carry.py --headless   # no viewer (or RELJAC_HEADLESS=1)

Needs example-robot-data: pip install example-robot-data (or ".[robots]" in the reljac folder).
"""

import math
import os
import sys
import time

import numpy as np
import pinocchio as pin

from reljac import Kinematics, Robot
from reljac.ik import Controller, FrameTask, PostureTask, RelativeFrameTask, solve

headless = "--headless" in sys.argv or os.environ.get("RELJAC_HEADLESS") == "1"
dt, duration, radius, width = 0.01, 6.0, 0.10, 0.30  # [s], [s], [m], [m]
L, R = "hand_left_tool_link", "hand_right_tool_link"

tiago = Robot.load("tiago_dual")
robot = tiago.locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])
print(f"{tiago.name}: nv = {tiago.nv}; with {len(robot.locked_joints)} joints locked: nv = {robot.nv} "
      f"({', '.join(n for n in robot.joint_names if not n.startswith('arm_'))} and two arms)")

# 1. Grasp. The tool frames' x axes point out of the palms: left's along -y, right's along +y.
center = np.array([0.55, 0.0, 0.85])  # [m] the box's centre, in front of the robot
position_only = [1, 1, 1, 0, 0, 0]
left = FrameTask(L, gain=20.0, weight=position_only)
right = FrameTask(R, gain=20.0, weight=position_only)
left.set_target(pin.SE3(np.eye(3), center + [0, width / 2, 0]))
right.set_target(pin.SE3(np.eye(3), center - [0, width / 2, 0]))
posture = PostureTask(robot, gain=1.0, weight=0.1)
reach = solve(robot, robot.reference_configuration(), [[left, right], [posture]])
box = RelativeFrameTask(L, R, gain=20.0)  # T_lr: right hand 0.3 m along left's x, turned to face it
box.set_target(pin.SE3(pin.utils.rpyToMatrix(0.0, 0.0, math.pi), np.array([width, 0.0, 0.0])))
lead = FrameTask(L, gain=20.0)
R_wl = np.column_stack([(0.0, -1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)])
lead.set_target(pin.SE3(R_wl, center + [0, width / 2, 0]))
posture.set_target(reach.q)
grasp = solve(robot, reach.q, [[box], [lead], [posture]])
print(f"grasp: {grasp.message if not grasp.converged else 'converged'} after {reach.iterations} + "
      f"{grasp.iterations} iterations")
q = grasp.q

# 2. Carry: the box held at the top level, the left hand on a circle in the x-z plane below it.
controller = Controller(robot, [[box], [lead], [posture]], dt=dt)
T_wl0 = Kinematics(robot, q).placement(L)
omega = 2 * math.pi / duration


def lead_target(t):
    """T_wl(t) on the circle, and its twist [linear; angular] in the left tool's axes (6,)."""
    a = omega * t
    p = T_wl0.translation + radius * np.array([math.sin(a), 0.0, 1.0 - math.cos(a)])
    v_world = radius * omega * np.array([math.cos(a), 0.0, math.sin(a)])
    return pin.SE3(T_wl0.rotation, p), np.concatenate([T_wl0.rotation.T @ v_world, np.zeros(3)])


viewer = None
if not headless:
    from reljac.viz import Viewer

    viewer = Viewer(robot, q=q)  # the locked robot keeps its meshes
    viewer.show_frame(L, label="left hand")
    viewer.show_frame(R, label="right hand")
    viewer.show_segment(L, R)
    viewer.show_trail(L)

worst = {box.name: [0.0, 0.0], lead.name: [0.0, 0.0]}  # largest position [m], orientation [rad] errors
start = time.perf_counter()
for k in range(int(duration / dt)):
    T, twist = lead_target(k * dt)
    lead.set_target(T, velocity=twist)
    q = controller.step(q)
    for task in (box, lead):  # errors at t, measured before the step
        errors = task.error_norms(controller.last_kinematics)
        worst[task.name] = [max(worst[task.name][0], errors["position"]),
                            max(worst[task.name][1], errors["orientation"])]
    if viewer is not None and k % 3 == 0:
        viewer.display(q)
        time.sleep(max(0.0, start + (k + 1) * dt - time.perf_counter()))  # real time
if viewer is not None:
    viewer.close()

for name, (position, orientation) in worst.items():
    print(f"max error of '{name}' while carrying: {position * 1e3:.3f} mm, {math.degrees(orientation):.3f} deg")
print("torso lift at the end:", f"{robot.joint_values(q)['torso_lift_joint'] * 1e3:.1f} mm")

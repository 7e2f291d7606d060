"""Talos carries a box with its upper body, from its SRDF posture ``half_sitting``.

``Robot.load("talos")`` gives example-robot-data's Talos as its loader does: a floating base,
``talos.srdf`` (disabled collision pairs, the named configuration ``half_sitting``) and
``half_sitting`` as its reference posture. The legs, the floating base and the grippers are
locked there (``robot.locked``): the torso, the arms and the head are left (18 joints).

1. Reach: both grippers in front of the chest, 0.35 m apart (one `solve`).
2. Carry, 6 s: the pose of the right gripper in the left gripper's frame is held at the highest
   priority (the box stays rigid) while the left gripper lifts the box by 15 cm and lowers it
   again; the posture task keeps the arms near the reach.

    python examples/talos_carry.py              # with a meshcat viewer, in real time
    python examples/talos_carry.py --headless   # no viewer (or RELJAC_HEADLESS=1)

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
dt, duration, lift = 0.01, 6.0, 0.15  # [s], [s], [m]
L, R = "gripper_left_base_link", "gripper_right_base_link"

talos = Robot.load("talos")
print(f"{talos.name}: reference posture '{talos.reference_posture}' from {talos.srdf.path.name}, "
      f"{len(talos.collision_pairs)} collision pairs after the SRDF's")
robot = talos.locked(["root_joint", "leg_*", "gripper_*"])  # at half_sitting, the reference posture
q = robot.reference_configuration()  # half_sitting's values of the joints left
print(f"locked {len(robot.locked_joints)} joints; left: {robot.nv} "
      f"(torso {robot.joint_values(q)['torso_2_joint']:.3f} rad, knees locked at "
      f"{robot.locked_joints['leg_left_4_joint']:.3f} rad)")

# 1. Reach, positions only: the grippers keep the orientation the posture task prefers.
position_only = [1, 1, 1, 0, 0, 0]
left = FrameTask(L, gain=20.0, weight=position_only)
right = FrameTask(R, gain=20.0, weight=position_only)
left.set_target(pin.SE3(np.eye(3), np.array([0.40, 0.175, 1.05])))
right.set_target(pin.SE3(np.eye(3), np.array([0.40, -0.175, 1.05])))
posture = PostureTask(robot, gain=1.0, weight=0.1)
posture.set_target(q)
reach = solve(robot, q, [[left, right], [posture]])
print(f"reach: {'converged' if reach.converged else reach.message} after {reach.iterations} iterations")
q = reach.q

# 2. Carry: T_lr kept as grasped; the left gripper's pose follows a lift of `lift` and back.
kin = Kinematics(robot, q)
box = RelativeFrameTask(L, R, gain=20.0)
box.set_target(kin.relative_placement(L, R))
lead = FrameTask(L, gain=20.0)
posture.set_target(q)
controller = Controller(robot, [[box], [lead], [posture]], dt=dt)
T_wl0 = kin.placement(L)


def lead_target(t):
    """T_wl(t): up by lift (1 - cos) / 2 and back; its twist in the left gripper's axes (6,)."""
    a = 2 * math.pi * t / duration
    height = lift * (1 - math.cos(a)) / 2
    speed = lift * math.sin(a) * math.pi / duration  # d height / dt
    linear = T_wl0.rotation.T @ np.array([0.0, 0.0, speed])
    return pin.SE3(T_wl0.rotation, T_wl0.translation + [0.0, 0.0, height]), np.concatenate([linear, np.zeros(3)])


viewer = None
if not headless:
    from reljac.viz import Viewer

    viewer = Viewer(robot, q=q)
    viewer.show_frame(L, label="left gripper")
    viewer.show_frame(R, label="right gripper")
    viewer.show_segment(L, R)
    viewer.show_trail(R)

worst = {box.name: 0.0, lead.name: 0.0}  # largest position errors [m]
highest = 0.0  # [m] of the right gripper above its start
z0 = kin.placement(R).translation[2]
start = time.perf_counter()
for k in range(int(duration / dt)):
    T, twist = lead_target(k * dt)
    lead.set_target(T, velocity=twist)
    q = controller.step(q)
    for task in (box, lead):
        worst[task.name] = max(worst[task.name], task.error_norms(controller.last_kinematics)["position"])
    highest = max(highest, Kinematics(robot, q).placement(R).translation[2] - z0)
    if viewer is not None and k % 3 == 0:
        viewer.display(q)
        time.sleep(max(0.0, start + (k + 1) * dt - time.perf_counter()))
if viewer is not None:
    viewer.close()

print(f"the box rose by {highest * 1e3:.1f} mm (target {lift * 1e3:.0f} mm)")
for name, err in worst.items():
    print(f"max position error of '{name}': {err * 1e3:.3f} mm")

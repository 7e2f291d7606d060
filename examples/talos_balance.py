"""Talos carries a box and reaches forward until its balance stops it (legs free, floating base).

``Robot.load("talos")`` gives example-robot-data's Talos with its floating base and its SRDF
posture ``half_sitting``. ``humanoid_stack`` builds the whole-body levels: both soles held
(contacts) > the pose of the right gripper in the left one (the box stays rigid) > our own levels
(the pelvis kept over the feet, then the left gripper sent 1 m forward, out of reach) > the
reference posture, under the support region of the soles (read from their collision meshes),
shrunk by 2 cm. The reach stops where the centre of mass meets the shrunk region's edge.

    python examples/talos_balance.py              # with a meshcat viewer, in real time
    python examples/talos_balance.py --headless   # no viewer (or RELJAC_HEADLESS=1)

Needs example-robot-data: pip install example-robot-data (or ".[robots]" in the reljac folder).
"""

import os
import sys
import time

import numpy as np
import pinocchio as pin

from reljac import Kinematics, Robot
from reljac.ik import FrameTask, humanoid_stack, solve

headless = "--headless" in sys.argv or os.environ.get("RELJAC_HEADLESS") == "1"
dt, steps, margin = 0.01, 400, 0.02  # [s], -, [m]
L, R, feet = "gripper_left_base_link", "gripper_right_base_link", ("left_sole_link", "right_sole_link")
position_only = [1, 1, 1, 0, 0, 0]

talos = Robot.load("talos")
q = talos.reference_configuration()  # half_sitting

# 1. Grasp: the grippers 0.4 m apart in front of the chest, feet held, balance kept.
standing = humanoid_stack(talos, q, feet=feet, margin=margin, com_priority="none")
grasp = []
for frame, y in ((L, 0.2), (R, -0.2)):
    task = FrameTask(frame, gain=20.0, weight=position_only)
    task.set_target(pin.SE3(np.eye(3), np.array([0.35, y, 0.95])))
    grasp.append(task)
q = solve(talos, q, [standing.levels[0], grasp, *standing.levels[1:]], tol=1e-3,
          constraints=standing.constraints).q

# 2. Carry and reach: the box held in the grippers, the left one sent 1 m forward.
kin = Kinematics(talos, q)
start = kin.placement(L).translation.copy()
pelvis = FrameTask("base_link", gain=10.0, weight=[1, 1, 0, 0, 0, 0])  # x-y over the feet
pelvis.set_target(kin.placement("base_link"))
reach = FrameTask(L, gain=5.0, weight=position_only, max_speed=0.15)
reach.set_target(pin.SE3(np.eye(3), start + [1.0, 0.0, 0.0]))
stack = humanoid_stack(talos, q, feet=feet, hands=(L, R), margin=margin, tasks=[[pelvis], [reach]],
                       com_priority="none")
controller = stack.controller(dt)
print(f"levels: {' > '.join('+'.join(t.name for t in level) for level in stack.levels)}")

viewer = None
if not headless:
    from reljac.viz import Viewer
    from reljac.viz.balance import show_balance

    viewer = Viewer(talos, q=q)
    viewer.frame_camera((0.35, 1.0, 0.9))  # from Talos' left, above
    show_balance(viewer, stack.support)
    viewer.show_segment(L, R, name="box")
    viewer.show_target("reach target", reach.target)

T_lr = kin.relative_placement(L, R)
T_feet = [kin.placement(foot) for foot in feet]
box_error, feet_error, closest, fastest, limits = 0.0, 0.0, np.inf, 0.0, []
start_time = time.perf_counter()
for k in range(steps):
    q_before, q = q, controller.step(q)
    fastest = max(fastest, np.abs(pin.difference(talos.model, q_before, q)[6:]).max() / dt)  # [rad/s], base aside
    kin = Kinematics(talos, q)
    box_error = max(box_error, np.linalg.norm(pin.log6(T_lr.actInv(kin.relative_placement(L, R))).vector))
    feet_error = max(feet_error, *(np.linalg.norm(pin.log6(T.actInv(kin.placement(foot))).vector)
                                   for T, foot in zip(T_feet, feet, strict=True)))
    closest = min(closest, stack.support.com_distance(kin))  # [m] to the region's edge, > 0 inside
    limits = [name for report in controller.last_reports for name in report.saturated_constraints] or limits
    if viewer is not None and k % 3 == 0:
        viewer.display(q)
        time.sleep(max(0.0, start_time + (k + 1) * dt - time.perf_counter()))
if viewer is not None:
    viewer.close()

moved = np.linalg.norm(kin.placement(L).translation - start)
print(f"the left gripper reached {moved * 1e3:.0f} mm forward of 1000 mm asked ({1e3 - moved * 1e3:.0f} mm short)")
print(f"centre of mass {closest * 1e3:.4f} mm from the support region's edge at its closest "
      f"(kept: 20 mm; {(margin - closest) * 1e6:.1f} um nearer)")
print(f"feet held: largest pose error {feet_error * 1e3:.3f} mm/mrad")
print(f"box held: largest relative pose error {box_error * 1e3:.4f} mm/mrad")
print(f"fastest joint: {fastest:.2f} rad/s")
level = next(r for r in controller.last_reports if reach.name in r.tasks)
print(f"the reach's level at the end: scaled by {level.scale:.3f}, {'met' if level.met else 'not met'}")
print(f"reach limited by: {', '.join(sorted(set(limits))) or 'nothing named'} (named in the levels' reports)")

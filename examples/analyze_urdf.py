"""Relative Jacobians of a URDF robot and their singular values along a straight joint motion.

    python examples/analyze_urdf.py                       # the bundled dual_arm
    python examples/analyze_urdf.py my_robot.urdf [frame_a frame_b]

Without frame names it picks the first two frames named *tool* or *tip* (else the first and last
frames). The motion goes from the neutral configuration (clipped into the limits) to the middle of
the limits in 5 samples; a small smallest singular value means that frame pair is close to a
relative singularity (the relative motion loses a direction). It draws nothing: ``--headless``
(which every example takes) changes nothing.
"""

import sys

import numpy as np

from reljac import Kinematics, Robot

args = [arg for arg in sys.argv[1:] if arg != "--headless"]  # no viewer here: the flag is accepted
robot = Robot.load(args[0]) if args else Robot.bundled("dual_arm")
if len(args) > 2:
    frame_a, frame_b = args[1], args[2]
else:
    ends = [f for f in robot.frame_names if f.endswith(("tool", "tip"))]
    frame_a, frame_b = ends[:2] if len(ends) >= 2 else (robot.frame_names[1], robot.frame_names[-1])
print(f"robot '{robot.name}': nq = {robot.nq}, nv = {robot.nv}; frames a = '{frame_a}', b = '{frame_b}'")

# A straight line in q between two configurations inside the limits (finite ones only).
lo, hi = robot.lower_limits, robot.upper_limits
q_start = np.clip(robot.neutral(), lo, hi)
q_end = np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi), q_start)
np.set_printoptions(precision=3, suppress=True, linewidth=150)

for s in np.linspace(0.0, 1.0, 5):
    q = robot.normalize((1 - s) * q_start + s * q_end)
    kin = Kinematics(robot, q)
    J_ab = kin.relative_jacobian(frame_a, frame_b)  # [d/dt p_ab; w_ab] = J_ab @ v, in a's axes
    sigma = np.linalg.svd(J_ab, compute_uv=False)
    distance = np.linalg.norm(kin.relative_placement(frame_a, frame_b).translation)
    print(f"\ns = {s:.2f}: |p_ab| = {distance:.3f} m, singular values of J_ab: {sigma}")
    if s in (0.0, 1.0):
        print("J_ab (rows: vx vy vz wx wy wz; columns: v entries):")
        print(J_ab)
print("\nsingular values: linear rows in m/rad, angular rows in rad/rad (revolute joints)")

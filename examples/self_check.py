"""Check reljac's relative Jacobians against finite differences and the in-house reference.

For random configurations of the bundled robots and a few frame pairs:
  1. J_ab against central differences of T_ab along each velocity direction, through
     pin.integrate (valid on any configuration manifold): column i of J_ab_in_b is
     log6(T_ab(q - eps e_i)^-1 T_ab(q + eps e_i)) / (2 eps), and J_ab = blockdiag(R_ab, R_ab) J_ab_in_b.
  2. J_ab against reljac.reference.ReferenceRobot (pure numpy, no Pinocchio).
Exits with status 1 if any check fails.
"""

import sys

import numpy as np
import pinocchio as pin

from reljac import Kinematics, Robot
from reljac.reference import ReferenceRobot
from reljac.reference_map import LayerMap  # maps the reference's q and v layouts onto the robot's

PAIRS = {"dual_arm": [("left_tool", "right_tool"), ("torso", "right_tool")],
         "hand": [("index_tip", "thumb_tip"), ("palm", "middle_tip")]}
EPS, TOL = 1e-6, 1e-6
rng = np.random.default_rng(0)
failures = 0


def finite_difference_jacobian(robot, q, frame_a, frame_b):
    """J_ab (6, nv) in a's axes from T_ab at q (+) eps e_i, by pin.integrate."""
    T_ab = Kinematics(robot, q).relative_placement(frame_a, frame_b)
    J = np.zeros((6, robot.nv))
    for i in range(robot.nv):
        dv = np.zeros(robot.nv)
        dv[i] = EPS
        T_plus = Kinematics(robot, pin.integrate(robot.model, q, dv)).relative_placement(frame_a, frame_b)
        T_minus = Kinematics(robot, pin.integrate(robot.model, q, -dv)).relative_placement(frame_a, frame_b)
        J[:, i] = pin.log6(T_minus.actInv(T_plus)).vector / (2 * EPS)  # in b's axes
    R = T_ab.rotation
    return np.vstack([R @ J[:3], R @ J[3:]])


def report(what, error):
    global failures
    ok = error < TOL
    failures += not ok
    print(f"  {what:<45} max |difference| = {error:.1e}  {'ok' if ok else 'FAIL'}")


for name, pairs in PAIRS.items():
    robot = Robot.bundled(name)
    reference = ReferenceRobot.from_urdf(robot.urdf_path)
    layers = LayerMap(robot, reference)
    print(f"robot '{name}'")
    for _ in range(3):
        q_ref = reference.random_configuration(rng)  # in the reference's own layout
        q = layers.q_to_pinocchio(q_ref)
        kin = Kinematics(robot, q)
        for a, b in pairs:
            J = kin.relative_jacobian(a, b)
            report(f"J_{a}_{b} vs finite differences", np.abs(J - finite_difference_jacobian(robot, q, a, b)).max())
            J_ref = reference.relative_jacobian(q_ref, a, b)
            report(f"J_{a}_{b} vs reljac.reference", np.abs(layers.columns(J) - J_ref).max())

print("all checks passed" if failures == 0 else f"{failures} checks FAILED")
sys.exit(1 if failures else 0)

"""In-house reference kinematics: pure numpy + the standard library, never Pinocchio.

It exists to check the Pinocchio layer against an independent implementation: its own URDF reader,
forward kinematics, frame Jacobians by two constructions (cross products and products of
exponentials, tested against each other) and relative Jacobians, all batched over configurations.

Notation (as in the rest of reljac):

| symbol | meaning |
| --- | --- |
| `T_ab` | pose of frame b in frame a, (4, 4), `R_ab`, `p_ab` its parts; `T_ac = T_ab @ T_bc`; w is `universe` |
| `J` | rows [linear; angular], shape (6, nv) |
| frame Jacobian | world-aligned (Pinocchio's LOCAL_WORLD_ALIGNED): `[d/dt p_wf; w_wf] = J @ v` |
| `J_ab` | motion of b measured in a, expressed in a: `[d/dt p_ab; w_ab] = J_ab @ v` |

Configuration layout (its own; see :mod:`reljac.reference.model`): ``joint_names`` are the joints
with their own degrees of freedom in depth-first URDF order; revolute, continuous (an angle) and
prismatic joints take 1 entry of q and v; free joints take 7 of q ``[x, y, z, qx, qy, qz, qw]`` and
6 of v ``[v; w]``, the child frame's twist in the child frame (``q (+) v = T(q) exp(v)``); planar
joints take 3 of q ``[x, y, theta]`` and 3 of v ``[vx, vy, w]``, likewise a twist of the child frame.

Every query takes one q, shape (nq,), or a batch, shape (N, nq), vectorized over N. Usage::

    robot = ReferenceRobot.from_urdf("urdf/dual_arm.urdf")
    q = robot.random_configuration(rng, n=1000)                      # (1000, nq)
    J_ab = robot.relative_jacobian(q, "left_tool", "right_tool")     # (1000, 6, nv)
    kinematics = robot.kinematics(q)                                 # several questions, one pass
    T_ab = kinematics.relative_placement("left_tool", "right_tool")  # (1000, 4, 4)
    J_b = kinematics.jacobian("right_tool", method="poe")            # (1000, 6, nv)
"""

from reljac.reference.model import ROOT_JOINT, UNIVERSE, KinematicTree
from reljac.reference.robot import METHODS, ReferenceKinematics, ReferenceRobot

__all__ = ["METHODS", "ROOT_JOINT", "UNIVERSE", "KinematicTree", "ReferenceKinematics", "ReferenceRobot"]

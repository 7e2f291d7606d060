"""Manipulability of the UR5 and the Panda: at their reference posture and over their workspace.

For each arm (by name: example-robot-data's ``ur5`` and ``panda``, or the names given on the
command line): the singular values of the tool's Jacobian in the base at the reference posture
(the Panda's SRDF ``default``; the UR5 has none: neutral), then the distribution of the
manipulability index over random configurations within the joint limits, with the configurations
closest to singular printed by joint name. The Panda's finger joint is locked (it does not move
the hand's tool frame).

    python examples/arm_analysis.py              # ur5 and panda
    python examples/arm_analysis.py ur10 z1      # other arms: base and tool = first and last link

It draws nothing: ``--headless`` (which every example takes) changes nothing.

Needs example-robot-data: pip install example-robot-data (or ".[robots]" in the reljac folder).
"""

import sys

import numpy as np

from reljac import Robot, relative_manipulability, workspace_summary
from reljac.workspace import format_workspace_summary

ARMS = {  # name: (base frame, tool frame, joints to lock)
    "ur5": ("base_link", "tool0", []),
    "panda": ("panda_link0", "panda_hand_tcp", ["panda_finger_joint1"]),
}
SAMPLES = 2000
names = [arg for arg in sys.argv[1:] if arg != "--headless"]  # no viewer here: the flag is accepted

for name in names or list(ARMS):
    robot = Robot.load(name)
    base, tool, lock = ARMS.get(name, (robot.link_names[0], robot.link_names[-1], []))
    if lock:
        robot = robot.locked(lock)
    q = robot.reference_configuration()
    m = relative_manipulability(robot, q, base, tool, part="full")
    where = f"'{robot.reference_posture}'" if robot.reference_posture else "neutral"
    print(f"== {name}: {robot.nv} joints, tool '{tool}' in '{base}'")
    sigma = np.array2string(m.singular_values, precision=4)
    print(f"at the reference posture ({where}): singular values of J_ab {sigma}"
          f", index {m.index:.4g}, condition number {m.condition_number:.4g}")
    summary = workspace_summary(robot, base, tool, samples=SAMPLES, seed=0, part="full", worst=2)
    print(format_workspace_summary(summary))
    print()

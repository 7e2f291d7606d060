"""The robot's mass, split between the bodies that move and the bodies fixed to the world.

Pinocchio's ``computeTotalMass``, ``centerOfMass`` and ``jacobianCenterOfMass`` sum over joints
1..njoints-1: the inertia of joint 0, the world, is left out. Pinocchio puts there every body
fixed to the world: the root link of a fixed-base URDF (TIAGo's 42.6 kg mobile base, dual_arm's
35 kg torso) and, when a floating base is locked (``robot.locked(["root_joint", "leg_*"])``),
the base and every body locked with it (41.6 kg of Talos' 90.3 kg with its legs and root
locked). A floating-base robot has none there. reljac's centre of mass counts them
(:meth:`reljac.Kinematics.center_of_mass`, whose formula is in ``Kinematics._com_world``):
this module gives the split it uses. Units: [kg], [m].
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin


def mass_split(model: pin.Model) -> tuple[float, float, np.ndarray]:
    """(m, m0, c0): the moving bodies' mass [kg] (Pinocchio's total mass), the mass [kg] of the
    bodies fixed to the world and their centre of mass c0 (3,) [m] in the world."""
    welded = model.inertias[0]
    return float(pin.computeTotalMass(model)), float(welded.mass), np.array(welded.lever)


def total_mass(model: pin.Model) -> float:
    """The robot's mass [kg], the bodies fixed to the world included."""
    m, m0, _ = mass_split(model)
    return m + m0


__all__ = ["mass_split", "total_mass"]

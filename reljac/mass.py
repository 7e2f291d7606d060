"""The whole robot's mass and centre of mass, bodies fixed to the world included.

Pinocchio's ``computeTotalMass``, ``centerOfMass`` and ``jacobianCenterOfMass`` sum over joints
1..njoints-1: the inertia of joint 0, the world, is left out. Pinocchio puts there every body
fixed to the world: the root link of a fixed-base URDF (TIAGo's 42.6 kg mobile base, dual_arm's
35 kg torso) and, when a floating base is locked (``robot.locked(["root_joint", "leg_*"])``),
the base and every body locked with it (48.7 kg of Talos' 90.3 kg with its legs and root
locked). A floating-base robot has none there. For balance these bodies count, so these
functions add them back. With m and c_m the moving bodies' mass and centre of mass
(Pinocchio's), m0 and c0 the fixed bodies' (c0 fixed in the world), M = m + m0:

    c = (m c_m + m0 c0) / M                       J_c = (m / M) J_cm              (world)
    p_ac = R_wa^T (c - p_wa)                      J_ac = (m / M) J_acm + (m0 / M) J_ac0

in a frame a, where J_ac0 = R_wa^T (-J_va + [c0 - p_wa]x J_wa) is the velocity of the fixed point
c0 seen from a (J_va, J_wa: a's LOCAL_WORLD_ALIGNED Jacobian rows). Units: [kg], [m]; J (3, nv).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from .exceptions import SupportError
from .relative import Kinematics
from .robot import FrameRef

WORLD = "universe"


def mass_split(model: pin.Model) -> tuple[float, float, np.ndarray]:
    """(m, m0, c0): the moving bodies' mass [kg] (Pinocchio's total mass), the mass [kg] of the
    bodies fixed to the world and their centre of mass c0 (3,) [m] in the world."""
    welded = model.inertias[0]
    return float(pin.computeTotalMass(model)), float(welded.mass), np.array(welded.lever)


def total_mass(model: pin.Model) -> float:
    """The robot's mass [kg], the bodies fixed to the world included."""
    m, m0, _ = mass_split(model)
    return m + m0


def _require_mass(kin: Kinematics) -> tuple[float, float, np.ndarray]:
    m, m0, c0 = mass_split(kin.model)
    if not m + m0 > 0:
        raise SupportError(f"robot '{kin.robot.name}' has no mass: its centre of mass is undefined")
    return m, m0, c0


def center_of_mass(kin: Kinematics, frame: FrameRef = WORLD) -> np.ndarray:
    """p_ac (3,) [m]: the whole robot's centre of mass c in frame a = `frame` (a's axes).

    Raises:
        SupportError: the robot has no mass. FrameNotFound: an unknown frame.
    """
    m, m0, c0 = _require_mass(kin)
    c = c0.copy() if m == 0 else (m * kin.center_of_mass() + m0 * c0) / (m + m0)
    T_a = kin.placement(frame)
    return T_a.rotation.T @ (c - T_a.translation)


def center_of_mass_jacobian(kin: Kinematics, frame: FrameRef = WORLD) -> np.ndarray:
    """J_ac (3, nv): d/dt p_ac = J_ac v, the whole robot's centre of mass measured and expressed in
    frame a = `frame` (module docstring).

    Raises:
        SupportError: the robot has no mass. FrameNotFound: an unknown frame.
    """
    m, m0, c0 = _require_mass(kin)
    J = np.zeros((3, kin.model.nv)) if m == 0 else (m / (m + m0)) * kin.center_of_mass_jacobian(frame)
    if m0 > 0:
        T_a, J_a = kin.placement(frame), kin.frame_jacobian(frame)
        J += (m0 / (m + m0)) * T_a.rotation.T @ (-J_a[:3] + pin.skew(c0 - T_a.translation) @ J_a[3:])
    return J


__all__ = ["center_of_mass", "center_of_mass_jacobian", "mass_split", "total_mass"]

"""``reljac analyze --com``: the centre of mass and its Jacobian at one configuration, as text or JSON.

The numbers come from :meth:`reljac.Kinematics.center_of_mass` (Pinocchio's ``centerOfMass`` and
``jacobianCenterOfMass`` through :class:`reljac.Kinematics`, carried into a frame when one is
given, plus the bodies fixed to the world, which Pinocchio leaves out: a fixed-base robot's root
link, and what a locked floating base welds to the world): on a robot with locked joints the
centre of mass is the full robot's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..joint_space import velocity_labels
from ..mass import mass_split, total_mass
from ..relative import Kinematics
from ..robot import Robot
from .report import format_matrix

WORLD = "universe"


def com_dict(robot: Robot, q: np.ndarray, frame: str = WORLD) -> dict[str, Any]:
    """What ``reljac analyze --com --json`` prints under ``"com"``.

    Keys: ``frame`` (the frame a the centre of mass c is measured and expressed in; "universe":
    the world), ``mass`` [kg] (the whole robot's, locked bodies included), ``fixed_mass`` [kg]
    (of the bodies fixed to the world, which Pinocchio's ``centerOfMass`` leaves out), ``q`` (nq,),
    ``locked_joints`` ({name: value}), ``position`` p_ac (3,) [m], ``jacobian`` J_ac (3, nv)
    with d/dt p_ac = J_ac v (rows ``rows``: x, y, z; columns ``columns``: one label per velocity
    index).
    """
    kin = Kinematics(robot, q)
    return {"frame": frame, "mass": total_mass(robot.model), "fixed_mass": mass_split(robot.model)[1], "q": q,
            "locked_joints": dict(robot.locked_joints), "position": kin.center_of_mass(frame),
            "jacobian": kin.center_of_mass_jacobian(frame), "rows": ["x", "y", "z"],
            "columns": velocity_labels(robot)}


def format_com(report: dict[str, Any], precision: int = 4) -> str:
    """The text of ``reljac analyze --com``: mass, position, and the Jacobian printed transposed
    (one line per velocity index)."""
    where = "the world" if report["frame"] == WORLD else f"frame '{report['frame']}'"
    locked = report["locked_joints"]
    fixed = f", of which {report['fixed_mass']:.4g} kg fixed to the world" if report["fixed_mass"] else ""
    lines = [f"centre of mass in {where} (mass {report['mass']:.4g} kg{fixed}"
             + (f"; {len(locked)} locked joints" if locked else "") + "):",
             f"  p [m]: {np.array2string(np.asarray(report['position']), precision=precision, suppress_small=True)}",
             "J: d/dt p = J v (printed transposed: one line per velocity index)",
             format_matrix(np.asarray(report["jacobian"]), report["rows"], report["columns"], precision)]
    return "\n".join(lines)

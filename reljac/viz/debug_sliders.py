"""Joint sliders of the debug page when there is no controller: one per joint with one value.

Names and limits come from the robot: a revolute or prismatic joint slides between its position
limits [rad or m] (a limit beyond +-2 pi, e.g. none given, is shown as +-pi), a continuous joint
over its angle [-pi, pi]. Locked joints (``Robot.locked``) are listed, locked at their value;
joints with several values (a floating base) get no slider.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..exceptions import ConfigurationError
from ..robot import Robot
from ..validation import as_float

WIDE = 2.0 * math.pi  # a limit beyond this is shown as +-pi


def joint_sliders(robot: Robot, q: np.ndarray) -> list[dict[str, Any]]:
    """``{"name", "lower", "upper", "value", "locked"}`` per joint with one value, then per
    locked joint (``locked`` True, lower = upper = value)."""
    model = robot.model
    values = robot.joint_values(q)
    sliders = []
    for j in range(1, model.njoints):
        name, joint = model.names[j], model.joints[j]
        value = values.get(name)
        if not isinstance(value, (int, float)):
            continue
        if joint.nq == 1:
            lower, upper = float(model.lowerPositionLimit[joint.idx_q]), float(model.upperPositionLimit[joint.idx_q])
            if not (math.isfinite(lower) and abs(lower) <= WIDE):
                lower = -math.pi
            if not (math.isfinite(upper) and abs(upper) <= WIDE):
                upper = math.pi
        else:  # continuous: (cos, sin)
            lower, upper = -math.pi, math.pi
        sliders.append({"name": name, "lower": lower, "upper": upper, "value": float(value), "locked": False})
    for name, value in robot.locked_joints.items():
        v = float(np.ravel(value)[0]) if np.size(value) == 1 else None
        if v is not None:
            sliders.append({"name": name, "lower": v, "upper": v, "value": v, "locked": True})
    return sliders


def q_from_slider(robot: Robot, q: np.ndarray, name: str, value: Any) -> np.ndarray:
    """q (nq,) with joint `name` set to `value` (clipped to its slider's range), others as in q.

    Raises:
        JointNotFound: no such joint, or a locked, fixed or mimic one.
        ConfigurationError: a value that is not a finite number.
    """
    x = as_float(value, f"joint '{name}': a slider value", valid="a number, not NaN nor infinite",
                 error=ConfigurationError)  # (not text, not true / false, as the page's other messages)
    ranges = {s["name"]: (s["lower"], s["upper"]) for s in joint_sliders(robot, q) if not s["locked"]}
    values = {k: v for k, v in robot.joint_values(q).items()}
    if name in ranges:
        x = float(np.clip(x, *ranges[name]))
    values[name] = x  # an unknown or locked name: JointNotFound from the robot
    return robot.q_from_joint_values(values)

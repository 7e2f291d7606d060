"""A mimic follower's own URDF limits, held through its leader.

Pinocchio's mimic joint has no coordinate of its own (its leader's, scaled: ``q_f = s q_l + o``),
so the follower's ``<limit>`` is not in the model: a leader could take its follower beyond them.
:func:`hold_follower_limits` narrows each leader's position limits to where every follower stays
within its own, and its velocity limit to ``velocity_f / |s|``. Follower limits that leave their
leader one position or none contradict the file's other limits (PR2's grippers: a follower of
multiplier -1 with its leader's limits [0, 0.548], so that only 0 is left): those position limits
are not held, as Pinocchio and MoveIt hold no follower's limits, with a :class:`ReljacWarning`
naming them (the follower's velocity limit still is).
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET

import pinocchio as pin

from .exceptions import ReljacWarning

BOUNDED = ("revolute", "prismatic")  # (a continuous follower has no position limits, a velocity limit yes)


def _limit(element: ET.Element | None, key: str) -> float | None:
    value = None if element is None else element.get(key)
    try:
        return None if value is None else float(value)
    except ValueError:
        return None  # (urdf_checks refused a bad number before)


def hold_follower_limits(model: pin.Model, robot: ET.Element, source: str) -> None:
    """Narrow, in `model` (built with mimic joints from the URDF `robot`), each leader's position
    limits [rad or m] to where each revolute or prismatic follower stays within its own URDF limits,
    and its velocity limit [rad/s or m/s] to the follower's divided by |s|. A follower whose limits
    would leave its leader one position or none is not held (a ReljacWarning names both ranges).
    """
    joints = {element.get("name"): element for element in robot.findall("joint")}
    lower_limits, upper_limits = model.lowerPositionLimit.copy(), model.upperPositionLimit.copy()
    own = lower_limits.copy(), upper_limits.copy()  # (the leaders' own, for messages)
    velocity_limits = model.velocityLimit.copy()  # (Pinocchio 4: upperVelocityLimit; its lowerVelocityLimit too)
    lower_velocity = getattr(model, "lowerVelocityLimit", None)
    lower_velocity = None if lower_velocity is None else lower_velocity.copy()
    for follower, leader in zip(model.mimicking_joints, model.mimicked_joints, strict=True):
        element = joints.get(model.names[follower])
        lead = model.joints[leader]
        if element is None or lead.nv != 1:
            continue
        mimic = model.joints[follower].extract()
        s, o = float(mimic.scaling), float(mimic.offset)
        limit = element.find("limit")
        lower, upper, speed = (_limit(limit, key) for key in ("lower", "upper", "velocity"))
        i, k = lead.idx_q, lead.idx_v
        # position: a revolute or prismatic follower of a one-coordinate leader, its limits given (a
        # missing lower or upper, or both 0, the URDF default, is no limit: Pinocchio's mimic ignores them)
        if (element.get("type") in BOUNDED and lead.nq == 1 and lower is not None and upper is not None
                and lower <= upper and not lower == upper == 0.0 and s != 0.0):
            a, b = sorted(((lower - o) / s + 0.0, (upper - o) / s + 0.0))  # (+ 0.0: no -0.0)
            low, high = max(lower_limits[i], a), min(upper_limits[i], b)
            if (low, high) == (lower_limits[i], upper_limits[i]):
                pass  # (the follower's limits hold wherever the leader's do)
            elif not high > low:
                narrowed = (lower_limits[i], upper_limits[i]) != (own[0][i], own[1][i])
                left = "leaves it no position" if low > high else f"leaves it only {low:g}"
                warnings.warn(ReljacWarning(
                    f"URDF {source}: mimic joint '{model.names[follower]}' ({o:g} + {s:g} x "
                    f"'{model.names[leader]}') within its limits [{lower:g}, {upper:g}] needs "
                    f"'{model.names[leader]}' in [{a:g}, {b:g}], which {left} of its limits "
                    f"[{own[0][i]:g}, {own[1][i]:g}]" + (f" as its other followers narrow them, [{lower_limits[i]:g}, "
                                                         f"{upper_limits[i]:g}]" if narrowed else "") +
                    ": its position limits contradict " + ("its leader's and its other followers'" if narrowed else
                                                           "its leader's") + " and are not held"), stacklevel=2)
            else:
                lower_limits[i], upper_limits[i] = low, high
        if speed is not None and speed > 0.0 and math.isfinite(speed) and s != 0.0:  # (any follower, continuous too)
            bound = speed / abs(s)
            velocity_limits[k] = min(velocity_limits[k], bound)
            if lower_velocity is not None:  # (a magnitude, as the upper one: or a negative bound)
                lower_velocity[k] = min(lower_velocity[k], bound) if lower_velocity[k] >= 0 else \
                    max(lower_velocity[k], -bound)
    model.lowerPositionLimit, model.upperPositionLimit = lower_limits, upper_limits
    model.velocityLimit = velocity_limits
    if lower_velocity is not None:
        model.lowerVelocityLimit = lower_velocity

"""Locking joints: which joints :meth:`reljac.Robot.locked` fixes (names, shell patterns, given
values), where, and the mimic joints that follow them."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .exceptions import ConfigurationError, JointNotFound
from .joint_space import JointSpace, Value, joint_values, write_values


def lock_plan(robot: JointSpace, joints: Any, q: ArrayLike) -> tuple[list[int], np.ndarray, dict[str, Value]]:
    """Which joints :meth:`Robot.locked` fixes, and where.

    Args:
        joints: a joint name, or names, or ``{name: value}``; a name with ``*``, ``?`` or ``[``
            is a shell pattern matching every joint name it fits (``"hand_*"``).
        q: (nq,) configuration giving the values of joints named without one.

    Returns:
        (joint ids to lock, including the mimic joints that follow a locked joint; q with the
        given values written in; {locked joint name: value}).

    Raises:
        JointNotFound: an unknown, fixed or mimic name, or a pattern that matches no joint.
        ConfigurationError: a bad value or q.
    """
    if isinstance(joints, Mapping):
        items = list(joints.items())
    elif isinstance(joints, str):
        items = [(joints, None)]
    elif isinstance(joints, Iterable):
        items = [(name, None) for name in joints]
    else:
        raise JointNotFound(f"joints to lock are a name, a list of names or {{name: value}}, not {joints!r}")
    q = robot.validate_q(q)
    given: dict[str, object] = {}
    names: list[str] = []
    for pattern, value in items:
        if not isinstance(pattern, str):
            raise JointNotFound(f"a joint to lock is given by its name (str), not {pattern!r}")
        if any(c in pattern for c in "*?["):
            matched = fnmatch.filter(robot.joint_names, pattern)
            if not matched:
                raise JointNotFound(f"pattern '{pattern}' matches no joint of robot '{robot.name}'")
        else:
            robot.joint_id(pattern)  # JointNotFound for unknown, fixed and mimic names
            matched = [pattern]
        for name in matched:
            if name not in names:
                names.append(name)
            if value is not None:
                given[name] = value
    write_values(robot, given, q)
    q = robot.validate_q(q, name="q of the locked joints")
    model = robot.model
    for name in given:  # a value given for a locked joint keeps to its position limits (as the joint would)
        joint = model.joints[robot.joint_id(name)]
        if joint.nq != 1:
            continue
        i = joint.idx_q
        value, lower, upper = q[i], model.lowerPositionLimit[i], model.upperPositionLimit[i]
        slack = 1e-9 * max(1.0, abs(lower), abs(upper))
        if np.isfinite(lower) and np.isfinite(upper) and lower <= upper and not lower - slack <= value <= upper + slack:
            raise ConfigurationError(f"joint '{name}' locked at {value:g} is outside its position limits "
                                     f"[{lower:g}, {upper:g}]")
    ids = [robot.joint_id(name) for name in names]
    followers = [f for f, leader in zip(model.mimicking_joints, model.mimicked_joints, strict=True) if leader in ids]
    values = joint_values(robot, q)
    return sorted(set(ids) | set(followers)), q, {name: values[name] for name in names}


__all__ = ["lock_plan"]

"""Locking joints: which joints :meth:`reljac.Robot.locked` fixes (names, shell patterns, given
values), where, and the mimic joints that follow them; the reduced model Pinocchio builds of them
(:func:`reduce_model`)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .cpp_output import cpp_message
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


def reduce_model(model: pin.Model, lock: Sequence[int], q: np.ndarray,
                 geometries: Sequence[pin.GeometryModel] = ()) -> tuple[pin.Model, list[pin.GeometryModel]]:
    """``pin.buildReducedModel``: the joints `lock` (ids, mimic followers of locked leaders
    included) fixed at their values in q (nq,); frames, names, limits of the other joints and
    geometry (re-attached to the joints that carry them now) are kept. Frames that share a name
    (a link and a fixed joint named alike: z1's gripperStator, which Pinocchio's reduction
    refuses as "several frames match") are reduced under names of their own, then named back."""
    model, shared = _unique_frame_names(model)
    try:
        if geometries:
            reduced, reduced_geometries = pin.buildReducedModel(model, list(geometries), list(lock), q)
        else:
            reduced, reduced_geometries = pin.buildReducedModel(model, list(lock), q), []
    except (ValueError, RuntimeError) as exc:
        raise ConfigurationError(f"Pinocchio cannot lock these joints of robot '{model.name}': "
                                 f"{cpp_message(exc)}") from None
    for i, frame in enumerate(reduced.frames):
        if frame.name in shared:
            frame.name = shared[frame.name]
            reduced.frames[i] = frame
    return reduced, list(reduced_geometries)


def _unique_frame_names(model: pin.Model) -> tuple[pin.Model, dict[str, str]]:
    """`model`, or a copy in which frames that share a name have names of their own (NAME#k, k the
    frame's index, made unique) but one: a joint's frame (the reduction finds a joint's frame by its
    name: ANYmal's links are named as their joints), else the first; and the map from those names
    back to the shared ones."""
    names = [frame.name for frame in model.frames]
    repeated = {name for name in names if names.count(name) > 1}
    if not repeated:
        return model, {}
    keep = {}
    for i, frame in enumerate(model.frames):
        if frame.name in repeated and (frame.name not in keep or frame.type == pin.FrameType.JOINT):
            keep[frame.name] = i
    model, shared = pin.Model(model), {}
    taken = set(names)
    for i, name in enumerate(names):
        if name in repeated and keep[name] != i:
            unique = f"{name}#{i}"
            while unique in taken:
                unique += "#"
            taken.add(unique)
            frame = model.frames[i]
            frame.name = unique
            model.frames[i] = frame
            shared[unique] = name
    return model, shared

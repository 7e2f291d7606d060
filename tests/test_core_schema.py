"""One schema across the compiled boundary, written once in C++ beside each kind (issue 41): the
core lists its kinds and their fields (``_core.kinds()``: names, types, docs), every description a
built-in task or limit gives names one of them with exactly its fields, the core fills it in by
keyword and reads it back field by field (a description within too), and a missing, unknown or
badly typed field is refused by name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import reljac
from reljac.ik import (
    BallTask,
    CollisionAvoidance,
    CoMTask,
    ConeTask,
    DistanceTask,
    HalfSpaceTask,
    JointPositionLimit,
    JointVelocityLimit,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    SupportRegion,
    compiled_available,
)
from reljac.ik.compiled_step import core_description
from reljac.ik.description import Description
from reljac.ik.limits.joints import ReversalDamping

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")


def _core():
    from reljac.ik import _core

    return _core


def _samples():
    """(robot, part) for every built-in task and limit kind, on the bundled dual_arm."""
    robot = reljac.Robot.bundled("dual_arm")
    kin = reljac.Kinematics(robot, robot.neutral())
    pose = RelativeFrameTask("left_tool", "right_tool", gain=3.0, weight=[1, 1, 1, 0.5, 0.5, 0], max_speed=[0.2, 0.4])
    pose.set_target(kin.relative_placement("left_tool", "right_tool"), velocity=np.arange(6) * 0.1)
    position = RelativePositionTask("left_tool", "right_tool")
    position.set_target([0.1, 0.2, 0.3])
    position.set_bounds(-0.1, [0.1, 0.2, np.inf])  # lower and upper read back too
    orientation = RelativeOrientationTask("universe", "left_tool")
    orientation.set_target(np.eye(3))
    distance = DistanceTask("left_tool", "right_tool", gain=2.0)
    distance.set_target(0.3, velocity=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pairs starting near each other
        avoidance = CollisionAvoidance(robot)
    limits = [JointVelocityLimit(robot), JointPositionLimit(robot), ReversalDamping(robot), avoidance]
    com = CoMTask(robot, axes="xy", gain=2.0)
    com.set_target([0.1, 0.0])
    region = SupportRegion(robot, [reljac.SupportContact.rectangle("left_tool", 0.2, 0.1)], frame="universe")
    posture = PostureTask(robot, weight=0.3)
    parts = [pose, position, orientation, distance, posture, com, BallTask(pose, 0.05, gain=2.0), BallTask(posture, 0.2),
             ConeTask("universe", "left_tool", 0.3, axis_b=[1, 0, 0]),
             HalfSpaceTask("universe", "right_tool", [[1, 0, 0], [0, 1, 1]], [0.5, 0.2], weight=[1, 2]),
             region.as_task(gain=7.0), avoidance.as_task(weight=0.5), *limits, region]
    return [(robot, p) for p in parts]


def _same(core_value, value) -> bool:
    if isinstance(value, Description):  # a description within: field by field
        return core_value.kind == value.kind and all(
            _same(core_value.field(name), v) for name, v in value.fields.items())
    if value is None or isinstance(value, str):
        return core_value == value
    if isinstance(value, tuple) and value and isinstance(value[0], np.ndarray):
        return len(core_value) == len(value) and all(
            np.array_equal(a, b) for a, b in zip(core_value, value, strict=True))
    if isinstance(value, (int, float, np.ndarray, tuple)) and not hasattr(value, "collisionPairs"):
        return np.array_equal(np.asarray(core_value), np.asarray(value))
    return core_value is value  # a pin.GeometryModel: the same object


def test_the_core_lists_every_kind_with_documented_typed_fields() -> None:
    kinds = {k["name"]: k for k in _core().kinds()}
    for robot, part in _samples():
        d = part.description(robot)
        assert d.kind in kinds, d.kind
        kind = kinds[d.kind]
        assert kind["doc"] and kind["role"] == ("limit" if isinstance(part, reljac.ik.Limit) else "task")
        names = [f[0] for f in kind["fields"]]
        assert set(d.fields) == set(names), (d.kind, sorted(d.fields), names)
        assert all(doc and type_ for _, type_, doc, _ in kind["fields"]), d.kind


def test_every_description_reads_back_from_the_core_field_by_field() -> None:
    core = _core()
    kinds = set()
    for robot, part in _samples():
        d = part.description(robot)
        kinds.add(d.kind)
        core_d = core_description(core, d)
        assert core_d.kind == d.kind
        for name, value in d.fields.items():
            assert _same(core_d.field(name), value), (d.kind, name)
        assert list(core_d.fields()) == [f[0] for f in {k["name"]: k for k in core.kinds()}[d.kind]["fields"]]
    public = {k["name"] for k in core.kinds()} - {"ExternalTaskDescription", "PendingTaskDescription",
                                                     "ExternalLimitDescription"}
    assert kinds == public  # every kind of the core is some built-in part's


def test_a_bad_field_is_refused_by_name() -> None:
    core = _core()
    pose = dict(frame_a=0, frame_b=1, gain=1.0, weight=np.ones(6), max_speed=None, target=np.eye(4),
                target_velocity=np.zeros(6))
    with pytest.raises(ValueError, match="kind must be one of 'pose', 'position', 'orientation', got 'twist'"):
        core.describe("FrameTaskDescription", kind="twist", **pose)
    with pytest.raises(TypeError, match="has no field 'high'; its fields: lo, hi"):
        core.describe("VelocityBoxDescription", lo=np.zeros(3), high=np.ones(3))
    with pytest.raises(TypeError, match="needs the field 'hi'"):
        core.describe("VelocityBoxDescription", lo=np.zeros(3))
    with pytest.raises(TypeError, match="FrameTaskDescription.frame_a must be int, got str"):
        core.describe("FrameTaskDescription", kind="pose", **{**pose, "frame_a": "left"})
    with pytest.raises(ValueError, match="no kind 'TwistDescription'"):
        core.describe("TwistDescription")
    with pytest.raises(TypeError, match="inner must be a task Description"):
        core.describe("BallTaskDescription", inner=core.describe("VelocityBoxDescription", lo=np.zeros(3),
                                                                  hi=np.ones(3)), gain=1.0, weight=np.ones(1))


def test_a_description_names_a_missing_field() -> None:
    d = Description("VelocityBoxDescription", lo=np.zeros(2))
    assert d.lo.shape == (2,)
    with pytest.raises(AttributeError, match="has no field 'hi'"):
        d.hi

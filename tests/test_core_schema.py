"""One schema across the compiled boundary: every description record a task or limit gives
(reljac/ik/description.py, and DistanceTaskDescription and BallTaskDescription beside their
tasks) has a class of the same name in the core, built from the same field names in the same
order (its __init__'s named arguments), and a record handed over by ``core_description`` reads
back field by field from the core's object (a description within one, field by field too)."""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pytest

import reljac
from reljac.ik import (
    CollisionAvoidance,
    CoMTask,
    DistanceTask,
    JointPositionLimit,
    JointVelocityLimit,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    SupportRegion,
    compiled_available,
    description,
)
from reljac.ik.bounds import BallTask, BallTaskDescription
from reljac.ik.compiled import core_description
from reljac.ik.distance import DistanceTaskDescription
from reljac.ik.limits import ReversalDamping

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")

BASES = (description.TaskDescription, description.LimitDescription)
RECORDS = [obj for obj in vars(description).values()
           if isinstance(obj, type) and issubclass(obj, BASES) and obj not in BASES] + [DistanceTaskDescription,
                                                                                BallTaskDescription]


def _init_arguments(cls) -> list[str]:
    """The named arguments of a bound class's __init__, from pybind11's signature line."""
    line = cls.__init__.__doc__.splitlines()[0]
    return re.findall(r"(\w+): ", line.split("(", 1)[1])[1:]  # after self


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_each_record_has_a_core_class_with_its_fields_by_name(record) -> None:
    from reljac.ik import _core

    cls = getattr(_core, record.__name__)
    assert _init_arguments(cls) == [f.name for f in dataclasses.fields(record)]
    assert cls.__doc__ and all(getattr(cls, f.name).__doc__ for f in dataclasses.fields(record))


def _samples():
    robot = reljac.Robot.bundled("dual_arm")
    q = robot.neutral()
    kin = reljac.Kinematics(robot, q)
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
        limits = [JointVelocityLimit(robot), JointPositionLimit(robot), ReversalDamping(robot),
                  CollisionAvoidance(robot)]
    ball = BallTask(pose, 0.05, gain=2.0)  # a description holding another (the pose's)
    parts = [(robot, p) for p in (pose, position, orientation, distance, PostureTask(robot, weight=0.3), ball,
                                  *limits)]
    com = CoMTask(robot, axes="xy", gain=2.0)
    com.set_target([0.1, 0.0])
    parts.append((robot, com))
    contact = reljac.SupportContact.rectangle("left_tool", 0.2, 0.1)
    parts.append((robot, SupportRegion(robot, [contact], frame="universe")))
    return parts


def _same(core_value, value) -> bool:
    if isinstance(value, description.TaskDescription):  # a description within: field by field
        return all(_same(getattr(core_value, f.name), getattr(value, f.name)) for f in dataclasses.fields(value))
    if value is None or isinstance(value, str):
        return core_value == value
    if isinstance(value, tuple) and value and isinstance(value[0], np.ndarray):
        return len(core_value) == len(value) and all(
            np.array_equal(a, b) for a, b in zip(core_value, value, strict=True))
    if isinstance(value, (int, float, np.ndarray, tuple)) and not hasattr(value, "collisionPairs"):
        return np.array_equal(np.asarray(core_value), np.asarray(value))
    return core_value is value  # a pin.GeometryModel: the same object


def test_every_record_reads_back_from_the_core_field_by_field() -> None:
    from reljac.ik import _core

    seen = set()
    for robot, part in _samples():
        d = part.description(robot)
        seen.add(type(d))
        core_d = core_description(_core, d)
        for f in dataclasses.fields(d):
            assert _same(getattr(core_d, f.name), getattr(d, f.name)), (type(d).__name__, f.name)
    assert seen == set(RECORDS)


def test_a_bad_field_is_refused_by_name() -> None:
    from reljac.ik import _core

    with pytest.raises(ValueError, match="kind must be 'pose', 'position' or 'orientation'"):
        _core.FrameTaskDescription(kind="twist", frame_a=0, frame_b=1, gain=1.0, weight=np.ones(6), max_speed=None,
                                   target=np.eye(4), target_velocity=np.zeros(6))
    with pytest.raises(TypeError):  # a field of another record
        _core.VelocityBoxDescription(lo=np.zeros(3), high=np.ones(3))

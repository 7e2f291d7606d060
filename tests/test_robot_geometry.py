"""A robot's geometry (reljac/robot_geometry.py): the models given and loaded on first use, the
collision model, and what a copy, a pickle or a robot with a payload keeps of them."""

from __future__ import annotations

import pickle

import pinocchio as pin

import reljac
from reljac.collision import sphere


def test_a_robot_with_a_payload_keeps_the_collision_edits_built_or_kept():
    robot = reljac.Robot.bundled("dual_arm")
    robot.collisions.add_obstacle("cup", sphere(0.04), [0.0, 0.0, 0.1], frame="left_tool", links=["right_link8"])
    robot.collisions.remove_pairs([("left_link8", "right_link8")])
    carrying = robot.with_payload(1.0, "left_tool")
    assert carrying.collisions is not robot.collisions
    assert carrying.collisions.obstacles == ["cup"] and carrying.collisions.pairs == robot.collisions.pairs
    assert carrying.collisions.dropped == robot.collisions.dropped
    clone = pickle.loads(pickle.dumps(robot))  # its collisions never built: the edits kept, passed on
    assert clone.with_payload(2.0, "right_tool").collisions.pairs == robot.collisions.pairs


def test_loaded_geometry_is_copied_to_a_payload_robot_and_not_pickled():
    robot = reljac.Robot.bundled("dual_arm")
    before = len(pickle.dumps(robot))
    visual = robot.visual_model
    assert visual.ngeoms > 0
    assert len(pickle.dumps(robot)) == before  # the loaded meshes are not kept: loaded again on first use
    carrying = robot.with_payload(1.0, "left_tool")
    assert carrying.visual_model is not visual and carrying.visual_model.ngeoms == visual.ngeoms
    assert pickle.loads(pickle.dumps(robot)).visual_model.ngeoms == visual.ngeoms


def test_the_models_given_are_kept_by_a_pickle_and_others_are_empty():
    source = reljac.Robot.bundled("dual_arm")
    given = source.collision_model
    robot = reljac.Robot.from_pinocchio(pin.Model(source.model), collision_model=given)
    assert robot.collision_model is not given and robot.collision_model.ngeoms == given.ngeoms
    assert robot.visual_model.ngeoms == 0  # none given: an empty model
    clone = pickle.loads(pickle.dumps(robot))
    assert clone.collision_model.ngeoms == given.ngeoms and clone.visual_model.ngeoms == 0

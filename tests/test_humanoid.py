"""Contacts as tasks and the humanoid stack (reljac.ik.humanoid, reljac.footprint), on Talos.

The feet are checked with Pinocchio's own placements (``pin.updateFramePlacements``), the soles
against the numbers of example-robot-data's URDFs, both backends against each other.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

import reljac
from reljac import Kinematics, Robot, SupportContact
from reljac.footprint import sole_contact
from reljac.ik import ContactTask, FrameTask, JointVelocityLimit, compiled_available, humanoid_stack

FEET = ("left_sole_link", "right_sole_link")
L, R = "gripper_left_base_link", "gripper_right_base_link"


def placements(robot, q, frames):
    """T_wf of each frame by Pinocchio alone."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return [data.oMf[robot.model.getFrameId(f)].copy() for f in frames]


def moving_hands(talos, backend, steps=60):
    """The stack with the left gripper sent 20 cm forward at 5 cm/s below the box; (q's, stack)."""
    q0 = talos.reference_configuration()
    lead = FrameTask(L, gain=5.0, weight=[1, 1, 1, 0, 0, 0], max_speed=0.05)
    lead.set_target(pin.SE3(np.eye(3), Kinematics(talos, q0).placement(L).translation + [0.2, 0.0, 0.0]))
    stack = humanoid_stack(talos, q0, feet=FEET, hands=(L, R), sole=(0.2, 0.1), tasks=[lead])
    controller = stack.controller(0.01, backend=backend)
    qs = [q0]
    for _ in range(steps):
        qs.append(controller.step(qs[-1]))
    return qs, stack


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.slow
def test_feet_stay_fixed_while_the_hands_move(talos, backend):
    qs, _ = moving_hands(talos, backend)
    feet0 = placements(talos, qs[0], FEET)
    for q in qs[1:]:
        for T0, T in zip(feet0, placements(talos, q, FEET), strict=True):
            assert np.linalg.norm(T.translation - T0.translation) < 1e-6
            assert np.linalg.norm(pin.log3(T0.rotation.T @ T.rotation)) < 1e-6
    hand0, hand = (placements(talos, q, [L])[0].translation for q in (qs[0], qs[-1]))
    assert hand[0] - hand0[0] > 0.025  # the hands did move (5 cm/s for 0.6 s)
    T_lr0, T_lr = (placements(talos, q, [L])[0].actInv(placements(talos, q, [R])[0]) for q in (qs[0], qs[-1]))
    assert np.linalg.norm(pin.log6(T_lr0.actInv(T_lr)).vector) < 1e-4  # the box held too
    # balance above the hands: the horizontal centre of mass stays where it was
    data = talos.model.createData()
    c0, c = (pin.centerOfMass(talos.model, data, q).copy() for q in (qs[0], qs[-1]))
    np.testing.assert_allclose(c[:2], c0[:2], atol=1e-5)


@pytest.mark.skipif(not compiled_available(), reason="compiled core not built")
def test_both_backends_follow_the_same_path(talos):
    python, _ = moving_hands(talos, "python", steps=20)
    compiled, _ = moving_hands(talos, "compiled", steps=20)
    np.testing.assert_allclose(compiled[-1], python[-1], atol=1e-8)


def test_levels_by_role(talos):
    lead = FrameTask(L)
    lead.set_target(pin.SE3.Identity())
    q = talos.reference_configuration()
    high = humanoid_stack(talos, feet=FEET, hands=(L, R), sole=(0.2, 0.1), tasks=[lead])
    assert high.levels == [list(high.feet), [high.com], [high.hands], [lead], [high.posture]]
    assert high.constraints == [high.support]
    extra = JointVelocityLimit(talos, np.ones(talos.nv))
    limits = high.controller(0.01, constraints=[extra], backend="python").limits
    assert high.support in limits and extra in limits
    low = humanoid_stack(talos, feet=FEET, sole=(0.2, 0.1), com_priority="low", tasks=[[lead]])
    assert low.levels == [list(low.feet), [lead], [low.com], [low.posture]] and low.hands is None
    none = humanoid_stack(talos, feet=FEET, sole=(0.2, 0.1), com_priority="none")
    assert none.levels == [list(none.feet), [none.posture]]
    # the posture: the SRDF's half_sitting, the floating base's six velocity rows masked
    np.testing.assert_array_equal(high.posture.target, talos.configuration("half_sitting"))
    np.testing.assert_array_equal(high.posture.weight, np.r_[np.zeros(6), np.ones(talos.nv - 6)])
    # targets where the robot is: feet, relative hands, horizontal centre of mass
    kin = Kinematics(talos, q)
    for task, foot in zip(high.feet, FEET, strict=True):
        assert task.target.isApprox(kin.placement(foot), 1e-12) and task.name == f"contact {foot}"
    assert high.hands.target.isApprox(kin.relative_placement(L, R), 1e-12)
    np.testing.assert_allclose(high.com.target, pin.centerOfMass(talos.model, talos.model.createData(), q)[:2])


def test_sole_rectangles_are_centred_on_the_feet(talos):
    stack = humanoid_stack(talos, feet=FEET, sole=(0.2, 0.1))
    for contact, foot in zip(stack.contacts, FEET, strict=True):
        assert contact.frame == foot
        np.testing.assert_allclose(np.sort(contact.points[:, 0]), [-0.1, -0.1, 0.1, 0.1])
        np.testing.assert_allclose(np.sort(contact.points[:, 1]), [-0.05, -0.05, 0.05, 0.05])
    given = [SupportContact.rectangle(f, 0.1, 0.05) for f in FEET]
    assert humanoid_stack(talos, feet=FEET, sole=given).contacts == tuple(given)


@pytest.mark.slow
def test_soles_are_read_from_the_collision_boxes_and_meshes(talos):
    """talos_box: leg_*_6_link carries a 0.21 x 0.13 x 0.02 box at z = -0.1, the sole frame is at
    z = -0.107 (talos_reduced_box.urdf): the sole's corners are (+-0.105, +-0.065, -0.003) in it.
    talos: the same foot as a mesh, whose lowest face is 0.211 m x 0.124 m."""
    box = sole_contact(Robot.load("talos_box"), "left_sole_link")
    expected = np.array([[x, y, -0.003] for x in (-0.105, 0.105) for y in (-0.065, 0.065)])
    np.testing.assert_allclose(box.points[np.lexsort(box.points.T[::-1])], expected, atol=1e-12)
    mesh = sole_contact(talos, "right_sole_link")
    extent = np.ptp(mesh.points, axis=0)
    np.testing.assert_allclose(extent[:2], [0.211, 0.124], atol=2e-3)
    assert abs(mesh.points[:, 2]).max() < 1e-3  # the mesh's sole is the sole frame's plane
    stack = humanoid_stack(talos, feet=FEET)  # read by default
    assert stack.contacts[1].frame == "right_sole_link"


def test_contact_task_holds_where_the_frame_is_at_q(talos):
    q1 = talos.random_configuration(3)
    task = ContactTask(talos, "left_sole_link", q1)
    assert task.target.isApprox(placements(talos, q1, ["left_sole_link"])[0], 1e-12)
    assert task.gain == 100.0 and task.description(talos) is not None  # runs inside the compiled step
    task.hold(talos.reference_configuration())
    assert task.target.isApprox(placements(talos, talos.reference_configuration(), ["left_sole_link"])[0], 1e-12)


@pytest.mark.parametrize("kwargs, error, words", [
    ({"feet": ("left_sole_link", "rigth_sole_link")}, reljac.FrameNotFound, "rigth_sole_link"),
    ({"feet": FEET, "hands": (L, "gripper_left")}, reljac.FrameNotFound, "gripper_left"),
    ({"feet": FEET, "hands": (L,)}, reljac.TaskError, "hands must be 2 frames"),
    ({"feet": (), "sole": (0.2, 0.1)}, reljac.TaskError, "feet must be one frame or more"),
    ({"feet": ("left_sole_link", "left_sole_link")}, reljac.TaskError, "twice"),
    ({"feet": FEET, "sole": (0.2, 0.0)}, reljac.SupportError, "sole width"),
    ({"feet": FEET, "sole": (-0.2, 0.1)}, reljac.SupportError, "sole length"),
    ({"feet": FEET, "sole": "big"}, reljac.SupportError, "sole must be None"),
    ({"feet": FEET, "sole": [SupportContact.rectangle("no_such_frame", 0.2, 0.1)]}, reljac.FrameNotFound,
     "no_such_frame"),
    ({"feet": FEET, "sole": (0.2, 0.1), "margin": 0.2}, reljac.SupportError, "leaves nothing"),
    ({"feet": FEET, "sole": (0.2, 0.1), "com_priority": "middle"}, reljac.TaskError, "com_priority"),
])
@pytest.mark.slow
def test_bad_input_names_what_is_wrong(talos, kwargs, error, words):
    with pytest.raises(error, match=words) as caught:
        humanoid_stack(talos, **kwargs)
    assert isinstance(caught.value, ValueError) and "\n" not in str(caught.value)


def test_a_robot_without_sole_geometry_asks_for_the_sole_size():
    arms = Robot.bundled("dual_arm")
    with pytest.raises(reljac.SupportError, match=r"'left_tool'.*sole=\(length, width\)"):
        humanoid_stack(arms, feet=("left_tool",))
    with pytest.raises(reljac.FrameNotFound, match="left_tol"):
        ContactTask(arms, "left_tol")

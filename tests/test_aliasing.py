"""Nothing reljac returns aliases its internal caches, and no input is modified.

Each test edits what a call returned (in place, where numpy lets it), then checks that later
answers equal those of a fresh, untouched computation.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import reljac
import reljac.analysis
import reljac.constraints
import reljac.costs


@pytest.fixture(scope="module", params=["dual_arm", "hand", "tree30"])
def robot(request):
    return reljac.Robot.bundled(request.param)


def _frames(robot):
    return ("left_tool", "right_tool") if "left_tool" in robot.frame_names else (robot.frame_names[3], robot.frame_names[-1])


def _vandalize(array) -> None:
    """Overwrite an array in place if numpy allows it (read-only arrays are fine too)."""
    if isinstance(array, np.ndarray) and array.flags.writeable:
        array[...] = 1e3


def _answers(kin, a, b):
    return {
        "J_ab": kin.relative_jacobian(a, b),
        "J_ab in b": kin.relative_jacobian(a, b, expressed_in="b"),
        "J_ab in world": kin.relative_jacobian(a, b, expressed_in="world"),
        "dJ_ab": kin.relative_jacobian_time_variation(a, b),
        "dJ_ab in world": kin.relative_jacobian_time_variation(a, b, expressed_in="world"),
        "twist": kin.relative_twist(a, b),
        "T_ab": kin.relative_placement(a, b).homogeneous,
        "J_a": kin.frame_jacobian(a),
        "dJ_b": kin.frame_jacobian_time_variation(b),
        "T_wa": kin.placement(a).homogeneous,
    }


def test_editing_what_kinematics_returned_changes_no_later_answer(robot, rng):
    a, b = _frames(robot)
    q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
    fresh = _answers(reljac.Kinematics(robot, q, v), a, b)
    kin = reljac.Kinematics(robot, q, v)
    for _ in range(2):  # the second round reads the caches filled (and edited) in the first
        for name, value in _answers(kin, a, b).items():
            np.testing.assert_array_equal(value, fresh[name], err_msg=name)
        for getter in (kin.frame_jacobian, kin.frame_jacobian_time_variation):
            for frame in (a, b, "universe"):
                _vandalize(getter(frame))
        T = kin.placement(a)
        T.translation = np.full(3, 7.0)
        for value in _answers(kin, a, b).values():
            _vandalize(value)


def test_kinematics_q_and_v_are_read_only_copies(robot, rng):
    a, b = _frames(robot)
    q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
    q_in, v_in = q.copy(), v.copy()
    kin = reljac.Kinematics(robot, q, v)
    twist = kin.relative_twist(a, b)
    q[:] = 0.0  # the caller's arrays are theirs: kin keeps its own
    v[:] = 0.0
    np.testing.assert_array_equal(kin.q, robot.validate_q(q_in))
    np.testing.assert_array_equal(kin.relative_twist(a, b), twist)
    for array in (kin.q, kin.v):
        with pytest.raises(ValueError):
            array[0] = 1.0
    np.testing.assert_array_equal(reljac.Kinematics(robot, q_in, v_in).relative_twist(a, b), twist)


def test_one_shot_answers_are_new_arrays_and_inputs_stay_untouched(robot, rng):
    a, b = _frames(robot)
    q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
    q_in, v_in = q.copy(), v.copy()
    calls = {
        "relative_jacobian": lambda: reljac.relative_jacobian(robot, q, a, b),
        "relative_twist": lambda: reljac.relative_twist(robot, q, v, a, b),
        "relative_jacobian_time_variation": lambda: reljac.relative_jacobian_time_variation(robot, q, v, a, b),
        "relative_placement": lambda: reljac.relative_placement(robot, q, a, b).homogeneous,
        "relative_manipulability": lambda: reljac.analysis.relative_manipulability(robot, q, a, b).singular_values,
        "mass_matrix": lambda: reljac.constraints.mass_matrix(robot, q),
        "ball": lambda: reljac.constraints.BallJoint(a, b).jacobian(robot, q),
        "cost gradient": lambda: reljac.costs.PositionCost(b, [0.1, 0.2, 0.3], relative_to=a).gradient(robot, q),
    }
    first = {name: np.array(call(), copy=True) for name, call in calls.items()}
    for name, call in calls.items():
        _vandalize(call())
        np.testing.assert_array_equal(call(), first[name], err_msg=name)
    np.testing.assert_array_equal(q, q_in)
    np.testing.assert_array_equal(v, v_in)


def test_robot_accessors_hand_out_copies(robot):
    lower, upper, velocity = robot.lower_limits, robot.upper_limits, robot.velocity_limits
    for array in (robot.lower_limits, robot.upper_limits, robot.velocity_limits, robot.neutral()):
        _vandalize(array)
    robot.frame_names.append("bogus")
    np.testing.assert_array_equal(robot.lower_limits, lower)
    np.testing.assert_array_equal(robot.upper_limits, upper)
    np.testing.assert_array_equal(robot.velocity_limits, velocity)
    assert "bogus" not in robot.frame_names
    assert np.all(robot.random_configuration(0) >= lower)


def test_editing_the_model_without_mimic_changes_no_jacobian_rate(rng):
    hand = reljac.Robot.bundled("hand")
    q, v = hand.random_configuration(rng), rng.normal(size=hand.nv)
    before = reljac.relative_jacobian_time_variation(hand, q, v, "index_tip", "thumb_tip")
    full, G, S, o = hand.without_mimic()
    for array in (G, S, o):
        array[...] = 0.0
    full.jointPlacements[1] = pin.SE3.Random()
    np.testing.assert_array_equal(reljac.relative_jacobian_time_variation(hand, q, v, "index_tip", "thumb_tip"),
                                  before)
    np.testing.assert_array_equal(hand.without_mimic()[1], reljac.Robot.bundled("hand").without_mimic()[1])


def test_manipulability_does_not_modify_or_keep_its_input(rng):
    J = rng.normal(size=(3, 7))
    J_in = J.copy()
    m = reljac.analysis.manipulability(J)
    np.testing.assert_array_equal(J, J_in)
    J[:] = 0.0
    assert m.index > 0 and np.all(m.singular_values > 0)

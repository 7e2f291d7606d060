"""Command line: --lock JOINT[=VALUE], --q-named NAME, --srdf FILE on named robots and files, and
analyze's worst configurations by joint name."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import reljac
from reljac import robots
from reljac.apps.cli import main

needs_erd = pytest.mark.skipif(robots.example_robot_data_dir() is None, reason="example-robot-data is not installed")


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def printed_jacobian(out: str, robot) -> np.ndarray:
    """The J printed by `reljac jacobian` (one line per velocity, labelled by its joint)."""
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] in robot.joint_names:
            rows[parts[0]] = [float(x) for x in parts[1:]]
    return np.array([rows[name] for name in robot.joint_names]).T


def printed_q(out: str) -> np.ndarray:
    text = out.split("q = [", 1)[1].split("]", 1)[0]
    return np.array([float(x) for x in text.split()])


def test_lock_with_values_and_patterns_on_a_bundled_robot():
    hand = reljac.Robot.bundled("hand")
    code, out, err = run("jacobian", "hand", "palm", "ring_tip", "--lock", "thumb_*", "--lock", "ring_mcp=0.4",
                         "--joint", "ring_pip=0.2", "--precision", "10")
    assert code == 0, err
    reduced = hand.locked({"thumb_*": None, "ring_mcp": 0.4})
    q = reduced.q_from_joint_values({"ring_pip": 0.2})
    np.testing.assert_allclose(printed_jacobian(out, reduced), reljac.relative_jacobian(reduced, q, "palm", "ring_tip"),
                               atol=1e-9)
    assert f"nq={reduced.nq}, nv={reduced.nv}" in out


@pytest.mark.parametrize("args, message", [
    (["--lock", "toe_*"], "pattern 'toe_*' matches no joint"),
    (["--lock", "ring_mcp="], "--lock expects JOINT or JOINT=VALUE"),
    (["--lock", "ring_mcp=abc"], "value of joint 'ring_mcp' must be a number"),
    (["--lock", "ring_mcp=0.3", "--lock", "ring_mcp=0.5"], "--lock: joint 'ring_mcp' is given twice"),  # (the last won)
    (["--q-named", "home"], "robot 'hand' has no SRDF"),
    (["--joint", "ring_pip=0.1", "--joint", "ring_pip=0.2"], "--joint: joint 'ring_pip' is given twice"),  # (as --lock)
])
def test_lock_and_named_configuration_errors_are_one_line(args, message):
    code, _, err = run("jacobian", "hand", "palm", "ring_tip", *args)
    assert code == 2 and message in err and len(err.splitlines()) == 1, err


def test_srdf_file_and_q_named_on_a_urdf_path(tmp_path):
    dual = reljac.Robot.bundled("dual_arm")
    srdf = tmp_path / "dual.srdf"
    srdf.write_text('<robot name="dual_arm"><group_state name="wave" group="all">'
                    '<joint name="torso_yaw" value="0.5"/><joint name="left_joint2" value="-0.7"/>'
                    '</group_state><group_state name="typo" group="all"><joint name="left_joint22" value="1"/>'
                    '</group_state></robot>')
    code, out, err = run("jacobian", dual.urdf_path, "left_tool", "right_tool", "--srdf", srdf, "--q-named", "wave",
                         "--precision", "10")
    assert code == 0, err
    q = dual.q_from_joint_values({"torso_yaw": 0.5, "left_joint2": -0.7})
    np.testing.assert_allclose(printed_q(out), q, atol=1e-9)
    np.testing.assert_allclose(printed_jacobian(out, dual), reljac.relative_jacobian(dual, q, "left_tool", "right_tool"),
                               atol=1e-9)
    code, _, err = run("jacobian", dual.urdf_path, "left_tool", "right_tool", "--srdf", srdf, "--lock", "torso_yaw",
                       "--q-named", "typo")
    assert code == 2 and "names joint 'left_joint22', which robot 'dual_arm' does not have; did you mean" in err


@needs_erd
@pytest.mark.slow
def test_talos_defaults_to_half_sitting_and_locks_at_it():
    talos = reljac.Robot.load("talos")
    half = talos.configuration("half_sitting")
    code, out, err = run("jacobian", "talos", "base_link", "arm_left_7_link", "--precision", "10")
    assert code == 0, err
    np.testing.assert_allclose(printed_q(out), half, atol=1e-9)
    code, out, err = run("jacobian", "talos", "base_link", "arm_left_7_link", "--lock", "leg_*", "--lock", "root_joint",
                         "--q-named", "half_sitting", "--precision", "10")
    assert code == 0, err
    upper = talos.locked(["leg_*", "root_joint"])
    q = upper.configuration("half_sitting")
    np.testing.assert_allclose(printed_q(out), q, atol=1e-9)
    np.testing.assert_allclose(printed_jacobian(out, upper),
                               reljac.relative_jacobian(upper, q, "base_link", "arm_left_7_link"), atol=1e-9)


@needs_erd
@pytest.mark.slow
def test_analyze_prints_worst_configurations_by_joint_name():
    code, out, err = run("analyze", "tiago_dual", "arm_left_7_link", "arm_right_7_link", "--samples", "30",
                         "--lock", "hand_*", "--lock", "caster_*", "--lock", "wheel_*", "--lock", "suspension_*")
    assert code == 0, err
    worst = out.split("closest to singular", 1)[1]
    assert "q = [" not in worst  # 17 numbers: by name only
    assert "arm_left_4_joint: " in worst and "hand_" not in worst
    summary = reljac.workspace_summary(
        reljac.Robot.load("tiago_dual").locked(["hand_*", "caster_*", "wheel_*", "suspension_*"]),
        "arm_left_7_link", "arm_right_7_link", samples=30, seed=0)
    first = summary.closest_to_singular[0]
    assert f"torso_lift_joint: {first.joint_values['torso_lift_joint']:.4g}" in worst


def test_a_floating_base_is_locked_by_its_seven_values():
    """--lock root_joint=x,y,z,qx,qy,qz,qw, the form --joint takes (the error said 'give its 7
    values as a sequence', which --lock could not take)."""
    code, out, err = run("jacobian", "dual_arm", "universe", "left_tool", "--floating-base",
                         "--lock", "root_joint=0.1,0.2,1,0,0,0.6,0.8", "--precision", "10")
    assert code == 0, err
    robot = reljac.Robot.bundled("dual_arm", floating_base=True)
    locked = robot.locked({"root_joint": [0.1, 0.2, 1, 0, 0, 0.6, 0.8]})
    q = locked.reference_configuration()
    expected = reljac.relative_jacobian(locked, q, "universe", "left_tool")
    np.testing.assert_allclose(printed_jacobian(out, locked), expected, atol=1e-9)
    assert not np.allclose(expected, reljac.relative_jacobian(robot.locked({"root_joint": None}),
                                                              q, "universe", "left_tool"))  # (the base turned)


def test_states_of_one_name_in_several_groups_are_one_state(tmp_path):
    """MoveIt SRDFs name a state 'home' in each arm's group. The last group's replaced the others
    (left_joint1 at 0, not 0.5); Pinocchio keeps the first. They are merged; a joint given two
    values in one state is refused."""
    from reljac.exceptions import SRDFError
    from reljac.srdf import read_srdf

    srdf = tmp_path / "groups.srdf"
    srdf.write_text('<robot name="dual_arm"><group_state name="home" group="left"><joint name="left_joint1" '
                    'value="0.5"/></group_state><group_state name="home" group="right"><joint name="right_joint1" '
                    'value="0.7"/></group_state></robot>')
    read = read_srdf(srdf)
    assert read.group_states["home"] == {"left_joint1": 0.5, "right_joint1": 0.7}
    assert read.state_groups["home"] == "left, right"
    dual = reljac.Robot.bundled("dual_arm")
    code, out, err = run("jacobian", dual.urdf_path, "left_tool", "right_tool", "--srdf", srdf, "--q-named", "home",
                         "--precision", "10")
    assert code == 0, err
    q = dual.q_from_joint_values({"left_joint1": 0.5, "right_joint1": 0.7})
    np.testing.assert_allclose(printed_jacobian(out, dual), reljac.relative_jacobian(dual, q, "left_tool", "right_tool"),
                               atol=1e-9)
    srdf.write_text('<robot name="dual_arm"><group_state name="home" group="left"><joint name="left_joint1" '
                    'value="0.5"/><joint name="left_joint1" value="0.2"/></group_state></robot>')
    with pytest.raises(SRDFError, match="group_state 'home' gives joint 'left_joint1' two values, 0.5 and 0.2"):
        read_srdf(srdf)


def test_robots_lists_the_base_each_robot_loads_with():
    """tree30's URDF has a floating root joint of its own (reljac adds none): it was listed "fixed".
    Checked against the loaded model's root joint, for every bundled robot."""
    code, out, _ = run("robots")
    assert code == 0
    listed = {line.split()[0]: line.split()[2] for line in out.splitlines() if " bundled " in line}
    for name, base in listed.items():
        model = reljac.Robot.bundled(name).model
        floating = model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer"
        assert base == ("floating" if floating else "fixed"), name
    assert listed["tree30"] == "floating"

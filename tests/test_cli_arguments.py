"""Command-line arguments as a new user writes them: --joint from the reference configuration (a
floating base's values separated by commas), analyze's sampling options refused with --com alone,
a positional after an option, errors that name the command's own help; and Pinocchio's reference
frame enum refused where a frame is asked for."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.apps.cli import build_parser, main
from reljac.decimal_text import decimal_integer, decimal_number
from reljac.exceptions import ConfigurationError, FrameNotFound


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def q_index(robot, joint: str) -> int:
    return robot.model.joints[robot.model.getJointId(joint)].idx_q


def printed_q(out: str) -> np.ndarray:
    text = out.split("q = [", 1)[1].split("]", 1)[0]
    return np.array([float(x) for x in text.split()])


def test_joint_changes_only_the_named_joint_of_the_reference_configuration():
    dual = reljac.Robot.bundled("dual_arm")
    reference = dual.reference_configuration()
    assert np.any(reference != dual.neutral())  # (else the test could not tell the two apart)
    code, out, err = run("jacobian", "dual_arm", "left_tool", "right_tool", "--joint", "torso_yaw=0.25",
                         "--precision", "10")
    assert code == 0, err
    expected = reference.copy()
    expected[q_index(dual, "torso_yaw")] = 0.25
    np.testing.assert_allclose(printed_q(out), expected, atol=1e-9)
    # the library keeps its documented default (neutral), and start= is not modified
    start = reference.copy()
    q = dual.q_from_joint_values({"torso_yaw": 0.25}, start=start)
    np.testing.assert_array_equal(q, expected)
    np.testing.assert_array_equal(start, reference)
    np.testing.assert_array_equal(dual.q_from_joint_values({"torso_yaw": 0.25}),
                                  np.where(np.arange(dual.nq) == q_index(dual, "torso_yaw"), 0.25, dual.neutral()))


def test_a_floating_base_takes_its_values_separated_by_commas():
    urdf = reljac.Robot.bundled("dual_arm").urdf_path
    robot = reljac.Robot.from_urdf(urdf, floating_base=True)
    root = robot.model.names[1]
    code, out, err = run("jacobian", urdf, "--floating-base", "left_tool", "right_tool",
                         "--joint", f"{root}=0.1, -0.2,0.3 0 0 0.6 0.8", "--precision", "10")
    assert code == 0, err
    np.testing.assert_allclose(printed_q(out)[:7], [0.1, -0.2, 0.3, 0.0, 0.0, 0.6, 0.8], atol=1e-12)
    code, _, err = run("jacobian", urdf, "--floating-base", "left_tool", "right_tool", "--joint", f"{root}=0,0,1")
    assert code == 2 and "has 7 configuration values" in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("extra", [["--seed", "3"], ["--samples", "5"], ["--part", "full"]])
def test_analyze_com_alone_refuses_the_sampling_options(extra):
    code, out, err = run("analyze", "dual_arm", "--com", *extra)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "--com alone takes none of them" in err and "'reljac analyze --help'" in err


def test_analyze_takes_the_sampling_options_with_frames():
    code, out, err = run("analyze", "dual_arm", "left_tool", "right_tool", "--samples", "20", "--seed", "4",
                         "--part", "orientation", "--no-progress")
    assert code == 0, err
    assert "20 random configurations" in out and "seed 4" in out and "orientation part" in out, out


def test_a_positional_after_an_option_is_read_and_unknown_arguments_name_the_command():
    args = build_parser().parse_args(["debug", "dual_arm", "--paused", "hierarchy.toml", "--no-hold"])
    assert args.file == "hierarchy.toml" and args.paused and args.no_hold
    args = build_parser().parse_args(["debug", "dual_arm", "hierarchy.toml", "--paused"])
    assert args.file == "hierarchy.toml" and args.paused
    code, _, err = run("jacobian", "dual_arm", "left_tool", "right_tool", "--bogus")
    assert code == 2 and err.strip() == "reljac: error: unrecognized arguments: --bogus (see 'reljac jacobian --help')"
    code, _, err = run("debug", "dual_arm", "a.toml", "b.toml")
    assert code == 2 and "unrecognized arguments: b.toml (see 'reljac debug --help')" in err, err


@pytest.mark.parametrize("enum", [pin.LOCAL, pin.WORLD, pin.LOCAL_WORLD_ALIGNED])
def test_a_pinocchio_reference_frame_is_not_taken_for_a_frame_id(enum):
    dual = reljac.Robot.bundled("dual_arm")
    q = dual.reference_configuration()
    kin = reljac.Kinematics(dual, q)
    for call in (lambda: reljac.relative_jacobian(dual, q, "left_tool", "right_tool", expressed_in=enum),
                 lambda: kin.relative_jacobian("left_tool", "right_tool", expressed_in=enum),
                 lambda: reljac.relative_jacobian(dual, q, enum, "right_tool")):
        with pytest.raises(FrameNotFound, match=f"not the Pinocchio reference frame pin.{enum.name}: .*expressed_in"):
            call()
    # ids as numpy integers stay ids: the same Jacobian as by name
    fa, fc = dual.frame_id("left_tool"), dual.frame_id("torso_yaw")
    np.testing.assert_array_equal(
        reljac.relative_jacobian(dual, q, np.int64(fa), "right_tool", expressed_in=np.int32(fc)),
        reljac.relative_jacobian(dual, q, "left_tool", "right_tool", expressed_in="torso_yaw"))


@pytest.mark.parametrize("text", ["0", "-0.5", "+2.", ".5", "1e-3", "-1.5E+2", " 7 ", "12345678901234567890"])
def test_a_decimal_number_is_read_as_float_reads_it(text):
    assert decimal_number(text) == float(text)


@pytest.mark.parametrize("text", ["1_0", "nan", "NaN", "inf", "-Infinity", "0x10", "\uff11", "\u0661", "1e", "e5", ".",
                                  "", " ", "1.2.3", "--1", "1e5.0", "1 2", "\t1\x1c"])
def test_text_that_is_not_a_decimal_number_is_refused_though_float_may_read_it(text):
    with pytest.raises(ValueError, match="not a decimal number"):
        decimal_number(text)


@pytest.mark.parametrize("text, value", [("0", 0), ("-12", -12), ("+7", 7), (" 3 ", 3), ("1" + "0" * 30, 10**30)])
def test_a_decimal_integer_is_read_as_int_reads_it(text, value):
    assert decimal_integer(text) == value


@pytest.mark.parametrize("text", ["1_0", "\uff11", "\u0661", "1.0", "1e3", "0x10", "", "+", "1 2"])
def test_text_that_is_not_a_decimal_integer_is_refused_though_int_may_read_it(text):
    with pytest.raises(ValueError, match="not a decimal integer"):
        decimal_integer(text)


@pytest.mark.parametrize("value", [np.array("1_0"), np.array(b"1_0"), np.str_("1_0")])
def test_a_joint_value_of_numpy_text_is_read_in_decimal_too(value):
    robot = reljac.Robot.bundled("planar_2link")
    with pytest.raises(ConfigurationError, match="value of joint 'joint1' must be a number"):
        robot.q_from_joint_values({"joint1": value})

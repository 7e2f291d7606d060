"""The Pinocchio layer against the in-house reference: bundled robots, example-robot-data, and a
mutation test proving the comparison catches a wrong relative-Jacobian formula."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import EXAMPLE_ROBOTS, example_robot_data_dir

import reljac
import reljac.robots
from reljac.apps.check import check_robot, check_urdf
from reljac.apps.cli import main
from reljac.reference import ReferenceRobot
from reljac.reference_map import LayerMap
from reljac.relative import Kinematics


@pytest.mark.parametrize("name", reljac.bundled_robots())
@pytest.mark.slow
def test_bundled_robots_agree_with_the_reference(name):
    report = check_urdf(name, samples=50, seed=1, max_pairs=300, tolerance=1e-10)
    assert report.ok, report.format()
    assert len(report.rows) == 6


ROBOTS_DIR = example_robot_data_dir()


@pytest.mark.skipif(ROBOTS_DIR is None, reason="example-robot-data is not installed")
@pytest.mark.parametrize("name", ["panda", "ur5", "baxter", "tiago_dual", "talos", "allegro", "double_pendulum_continuous"])
@pytest.mark.slow
def test_example_robot_data_agrees_with_the_reference(name):
    path, floating = EXAMPLE_ROBOTS[name]
    report = check_urdf(ROBOTS_DIR / path, floating_base=floating, samples=50, seed=2, max_pairs=150,
                        tolerance=1e-10)
    assert report.ok, report.format()


def _without_lever_arm(self, frame_a, frame_b, *, expressed_in="a"):
    """A wrong J_ab: R_aw (J_b - J_a), missing the [p_ab]x R_aw J^w_a term."""
    J_a, J_b = self.frame_jacobian(frame_a), self.frame_jacobian(frame_b)
    R_aw = self.placement(frame_a).rotation.T
    return np.vstack((R_aw @ (J_b - J_a)[:3], R_aw @ (J_b - J_a)[3:]))


def _stray_cross_product(self, frame_a, frame_b, *, expressed_in="a"):
    """The reference document's typo: a cross product applied to the linear difference."""
    J_a, J_b = self.frame_jacobian(frame_a), self.frame_jacobian(frame_b)
    T_wa, T_wb = self.placement(frame_a), self.placement(frame_b)
    R_aw = T_wa.rotation.T
    p_ab = R_aw @ (T_wb.translation - T_wa.translation)
    D = J_b - J_a
    lin = pin.skew(p_ab) @ R_aw @ J_a[3:] + R_aw @ np.cross(D[:3], D[3:], axis=0)
    return np.vstack((lin, R_aw @ D[3:]))


@pytest.mark.parametrize("wrong", [_without_lever_arm, _stray_cross_product])
def test_a_wrong_relative_jacobian_formula_is_detected(monkeypatch, wrong):
    robot = reljac.Robot.bundled("dual_arm")
    ref = ReferenceRobot.from_urdf(robot.urdf_path)
    pairs = [("left_tool", "right_tool")]
    assert check_robot(robot, ref, samples=10, pairs=pairs).ok
    monkeypatch.setattr(Kinematics, "relative_jacobian", wrong)
    report = check_robot(robot, ref, samples=10, pairs=pairs)
    assert not report.ok
    bad = [r for r in report.rows if r.max_error > report.tolerance]
    assert bad and all("relative Jacobians" in r.quantity for r in bad), report.format()


def test_a_wrong_joint_is_named(tmp_path):
    """Same joints, different axis in one layer: the report names the first bad frame and its joint."""
    text = (reljac.robots.BUNDLED_DIR / "planar_2link.urdf").read_text()
    robot = reljac.Robot.bundled("planar_2link")
    other = tmp_path / "tilted.urdf"
    second = text.index('<axis xyz="0 0 1"/>', text.index('<axis xyz="0 0 1"/>') + 1)  # joint2's axis
    other.write_text(text[:second] + '<axis xyz="0 1 1"/>' + text[second + len('<axis xyz="0 0 1"/>'):])
    report = check_robot(robot, ReferenceRobot.from_urdf(other), samples=5)
    assert not report.ok
    assert "joint2" in report.rows[0].where, report.format()


def test_a_joint_and_a_link_that_share_a_name_are_both_checked(tmp_path):
    """A joint named as a link that is not its child (so100's 'gripper'): both layers name the two
    frames 'joint:NAME' and 'link:NAME', and check compares both (the reference refused the file)."""
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
    path = tmp_path / "shared.urdf"
    path.write_text('<robot name="r"><link name="a"/><link name="b"/><link name="c"/><link name="j2"/>'
                    f'<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>{limit}'
                    '</joint><joint name="j2" type="revolute"><parent link="b"/><child link="c"/>'
                    f'<origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>{limit}</joint>'
                    '<joint name="f" type="fixed"><parent link="b"/><child link="j2"/><origin xyz="0 0.5 0"/></joint>'
                    '</robot>')
    robot, ref = reljac.Robot.from_urdf(path), ReferenceRobot.from_urdf(path)
    assert {"joint:j2", "link:j2"} <= set(ref.frame_names) and "j2" not in ref.frame_names
    with pytest.raises(reljac.FrameNotFound, match="say 'link:j2' or 'joint:j2'"):
        ref.kinematics(np.zeros(ref.nq)).placement("j2")
    assert {"joint:j2", "link:j2"} <= set(LayerMap(robot, ref).frames)
    report = check_robot(robot, ref, samples=5)
    assert report.ok, report.format()


@pytest.mark.slow
def test_cli_check_exit_codes(capsys):
    assert main(["check", "planar_2link", "--samples", "5"]) == 0
    assert "OK: the layers agree" in capsys.readouterr().out
    assert main(["check", "dual_arm", "--frames", "left_tool", "right_tool", "--samples", "5"]) == 0
    assert main(["check", "dual_arm", "--frames", "left_tol", "right_tool"]) == 2


@pytest.mark.parametrize("floating_base", [False, True])
def test_a_robot_with_planar_joints_is_checked(capsys, floating_base):
    """`reljac check` on planar joints (the reference said 'not supported'): both layers agree, the
    reference's [x, y, theta] read as Pinocchio's [x, y, cos, sin]."""
    from pathlib import Path

    path = Path(__file__).parent / "reference_urdfs" / "planar_joint.urdf"
    args = ["check", str(path), "--samples", "10"] + (["--floating-base"] if floating_base else [])
    assert main(args) == 0
    assert "OK: the layers agree" in capsys.readouterr().out

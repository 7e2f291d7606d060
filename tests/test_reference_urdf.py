"""The reference URDF reader and the tree it builds: conventions, defaults, layout, errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from reljac.exceptions import FrameNotFound, ReljacError, URDFError
from reljac.reference import ROOT_JOINT, UNIVERSE, ReferenceRobot

URDF_DIR = Path(__file__).parent / "reference_urdfs"


def load(name: str, **options) -> ReferenceRobot:
    return ReferenceRobot.from_urdf(URDF_DIR / f"{name}.urdf", **options)


def body_of_joint(robot: ReferenceRobot, joint: str):
    return next(body for body in robot.tree.bodies if body.joint == joint)


def test_origin_rpy_is_fixed_axis_roll_pitch_yaw():
    robot = load("rotated_origins")
    origin = body_of_joint(robot, "j1").origin
    # scipy's lowercase "xyz" = extrinsic (fixed-axis) x, then y, then z: Rz(y) Ry(p) Rx(r).
    expected = Rotation.from_euler("xyz", [0.3, -0.5, 1.2]).as_matrix()
    np.testing.assert_allclose(origin[:3, :3], expected, atol=1e-15)
    np.testing.assert_allclose(origin[:3, 3], [0.1, -0.2, 0.3])
    np.testing.assert_allclose(origin[3], [0, 0, 0, 1])


def test_axes_are_normalized_and_default_to_x():
    robot = load("rotated_origins")
    np.testing.assert_allclose(body_of_joint(robot, "j1").axis, [0, 0, 1])
    np.testing.assert_allclose(body_of_joint(robot, "j2").axis, np.array([1, 1, 0]) / math.sqrt(2))
    np.testing.assert_allclose(body_of_joint(robot, "j3").axis, np.array([0.3, -0.4, 1.2]) / 1.3)
    np.testing.assert_allclose(body_of_joint(robot, "j4").axis, [1, 0, 0])  # no <axis>
    np.testing.assert_allclose(body_of_joint(robot, "j5").origin, np.eye(4))  # no <origin>


def test_limits():
    robot = load("rotated_origins")
    lower = dict(zip(robot.joint_names, robot.lower_limits, strict=True))
    upper = dict(zip(robot.joint_names, robot.upper_limits, strict=True))
    assert (lower["j1"], upper["j1"]) == (-2.5, 2.0)
    assert (lower["j2"], upper["j2"]) == (-0.2, 0.4)
    assert (lower["j3"], upper["j3"]) == (-math.inf, math.inf)  # continuous


def test_layout_is_depth_first_and_skips_fixed_and_mimic_joints():
    robot = load("mimic")
    assert robot.joint_names == ("wrist_joint", "palm_joint", "finger_left_joint")
    assert (robot.nq, robot.nv) == (3, 3)
    assert [robot.idx_q(j) for j in robot.joint_names] == [0, 1, 2]
    deep = load("deep_tree")
    assert deep.nq == deep.nv == 25
    # Depth first, children in file order: trunk3's children are trunk4 (then trunk5, trunk6, head),
    # left1 and right1 (then its fingers); the tail hangs off the root but comes last in the file.
    expected_order = ["trunk6", "head1", "head3", "left1", "left6", "right1", "finger_a2", "finger_b1", "tail1"]
    positions = [deep.joint_names.index(f"{name}_joint") for name in expected_order]
    assert positions == sorted(positions)
    # Bodies are numbered so that every parent comes before its children.
    assert all(body.parent < body.index for body in deep.tree.bodies[1:])


def test_mimic_attributes_and_defaults():
    robot = load("mimic")
    assert robot.mimic_joints["knuckle_joint"] == ("wrist_joint", -1.5, 0.3)
    assert robot.mimic_joints["twin_joint"] == ("wrist_joint", 0.5, -0.1)
    assert robot.mimic_joints["finger_right_joint"] == ("finger_left_joint", 1.0, 0.0)


CHAINED_MIMIC = """<robot name="chain"><link name="a"/><link name="b"/><link name="c"/><link name="d"/>
<joint name="spin" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>
<joint name="first" type="revolute"><parent link="b"/><child link="c"/><origin xyz="1 0 0"/>
  <axis xyz="0 0 1"/><mimic joint="spin" multiplier="-1.5" offset="0.3"/></joint>
<joint name="second" type="revolute"><parent link="c"/><child link="d"/><origin xyz="1 0 0"/>
  <axis xyz="0 0 1"/><mimic joint="first" multiplier="0.5" offset="-0.1"/></joint></robot>"""


def test_chained_mimics_and_mimics_of_continuous_joints():
    robot = ReferenceRobot.from_urdf_string(CHAINED_MIMIC)
    assert robot.joint_names == ("spin",)
    # second = 0.5 * first - 0.1 = 0.5 * (-1.5 spin + 0.3) - 0.1 = -0.75 spin + 0.05
    leader, multiplier, offset = robot.mimic_joints["second"]
    assert leader == "spin" and multiplier == pytest.approx(-0.75) and offset == pytest.approx(0.05)
    spin = 0.7
    angles = np.cumsum([spin, -1.5 * spin + 0.3, -0.75 * spin + 0.05])  # planar: angles add up
    tip = robot.frame_placement([spin], "d")
    np.testing.assert_allclose(tip[:2, 3], [np.cos(angles[0]) + np.cos(angles[1]), np.sin(angles[0]) + np.sin(angles[1])])
    np.testing.assert_allclose(tip[:3, :3], Rotation.from_euler("z", angles[2]).as_matrix(), atol=1e-15)
    jacobian = robot.frame_jacobian([spin], "d")
    np.testing.assert_allclose(jacobian[5], [1 - 1.5 - 0.75])  # d/dt of the summed angle


def test_revolute_joint_without_limit_is_unbounded():
    robot = ReferenceRobot.from_urdf_string(
        _robot('<link name="a"/><link name="b"/><joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>')
    )
    assert (robot.lower_limits[0], robot.upper_limits[0]) == (-math.inf, math.inf)


def test_frames_name_every_link_and_joint_plus_universe():
    robot = load("planar_2link")
    assert robot.frame_names[0] == UNIVERSE
    assert set(robot.frame_names) == {
        UNIVERSE, "base_link", "joint1", "link1", "joint2", "link2", "tip_joint", "tip",
    }
    q = np.array([0.4, -1.1])
    for joint, link in (("joint1", "link1"), ("joint2", "link2"), ("tip_joint", "tip")):
        np.testing.assert_array_equal(robot.frame_placement(q, joint), robot.frame_placement(q, link))
    np.testing.assert_array_equal(robot.frame_placement(q, UNIVERSE), np.eye(4))


def test_urdf_floating_joint_layout():
    robot = load("floating_joint")
    assert robot.joint_names == ("base_free", "shoulder", "elbow", "object_free")
    assert (robot.nq, robot.nv) == (16, 14)
    assert robot.q_slices["base_free"] == slice(0, 7) and robot.v_slices["base_free"] == slice(0, 6)
    assert robot.q_slices["object_free"] == slice(9, 16) and robot.v_slices["object_free"] == slice(8, 14)
    np.testing.assert_array_equal(robot.lower_limits[3:7], -1.0)


def test_floating_base_adds_root_joint_above_the_root_link():
    fixed = load("rotated_origins")
    free = load("rotated_origins", floating_base=True)
    assert free.joint_names == (ROOT_JOINT, *fixed.joint_names)
    assert (free.nq, free.nv) == (fixed.nq + 7, fixed.nv + 6)
    assert free.frame_names[:3] == (UNIVERSE, ROOT_JOINT, "base")
    # At the identity base pose the floating robot places every frame like the fixed one.
    q_fixed = fixed.random_configuration(3)
    q_free = np.concatenate(([0, 0, 0, 0, 0, 0, 1.0], q_fixed))
    for frame in fixed.frame_names:
        np.testing.assert_allclose(free.frame_placement(q_free, frame), fixed.frame_placement(q_fixed, frame), atol=1e-14)


def test_transmission_joints_and_unknown_tags_are_ignored():
    robot = ReferenceRobot.from_urdf_string(
        """<robot name="r"><link name="a"><visual><geometry><box size="1 1 1"/></geometry></visual></link>
        <link name="b"/><joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint>
        <transmission name="t"><joint name="j_ghost"><hardwareInterface>x</hardwareInterface></joint></transmission>
        <gazebo reference="a"/></robot>"""
    )
    assert robot.joint_names == ("j",)


MALFORMED = [
    ("bad_xml", ["not well-formed"]),
    ("missing_parent", ["elbow", "upper_armm", "did you mean 'upper_arm'"]),
    ("unknown_type", ["slider", "'spherical'", "supported types", "revolute", "planar"]),
    ("mimic_unknown", ["right_finger", "left_fingr", "did you mean 'left_finger'"]),
    ("zero_axis", ["wrist", "zero"]),
    ("cycle", ["cycle", "b_to_c", "c_to_b"]),
    ("two_roots", ["base", "floating_part", "exactly one"]),
    ("two_parents", ["tool", "tool_from_base", "tool_from_left"]),
    ("bad_origin", ["elbow", "xyz", "3 finite numbers"]),
]


@pytest.mark.parametrize("name, fragments", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_files_raise_urdf_error_naming_the_element(name, fragments):
    path = URDF_DIR / "malformed" / f"{name}.urdf"
    with pytest.raises(URDFError) as info:
        ReferenceRobot.from_urdf(path)
    message = str(info.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message
    assert isinstance(info.value, ValueError) and isinstance(info.value, ReljacError)


def test_missing_file():
    with pytest.raises(URDFError, match="does not exist"):
        ReferenceRobot.from_urdf(URDF_DIR / "no_such_robot.urdf")


def _robot(body: str) -> str:
    return f'<robot name="r">{body}</robot>'


INLINE_ERRORS = [
    ('<link name="a"/><link name="a"/>', "link 'a' is defined twice"),
    ('<link name="a"/><link name="b"/><joint name="j" type="fixed"><parent link="a"/></joint>', "no <child"),
    (
        '<link name="a"/><link name="b"/><joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
        '<limit lower="1" upper="-1"/></joint>',
        "lower > upper",
    ),
    (
        '<link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><mimic joint="j2"/></joint>'
        '<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><mimic joint="j1"/></joint>',
        "cycle",
    ),
    (
        '<link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/></joint>'
        '<joint name="j2" type="floating"><parent link="b"/><child link="c"/><mimic joint="j1"/></joint>',
        "only revolute",
    ),
    ('<link name="universe"/>', "reserved for the world frame"),
    (
        '<link name="a"/><link name="b"/><joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
        '<mimic joint="j" multiplier="two"/></joint>',
        "multiplier='two'",
    ),
]


@pytest.mark.parametrize("body, fragment", INLINE_ERRORS)
def test_inline_urdf_errors(body, fragment):
    with pytest.raises(URDFError) as info:
        ReferenceRobot.from_urdf_string(_robot(body))
    assert fragment in str(info.value)


def test_a_joint_and_a_different_link_of_one_name_are_named_by_kind():
    """As the Pinocchio layer names them (so100's 'gripper'); the bare name is ambiguous."""
    robot = ReferenceRobot.from_urdf_string(_robot(
        '<link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="b" type="revolute"><parent link="a"/><child link="c"/><axis xyz="0 0 1"/>'
        '<origin xyz="1 0 0"/></joint>'
        '<joint name="j2" type="fixed"><parent link="a"/><child link="b"/><origin xyz="0 2 0"/></joint>'))
    assert "joint:b" in robot.frame_names and "link:b" in robot.frame_names and "b" not in robot.frame_names
    kin = robot.kinematics(np.zeros(robot.nq))
    assert np.allclose(kin.placement("joint:b")[:3, 3], [1, 0, 0]) and np.allclose(kin.placement("link:b")[:3, 3], [0, 2, 0])
    with pytest.raises(FrameNotFound, match="ambiguous"):
        kin.placement("b")


def test_root_element_must_be_robot():
    with pytest.raises(URDFError, match="expected <robot>"):
        ReferenceRobot.from_urdf_string("<model/>")


def test_floating_base_refuses_an_existing_root_joint():
    text = _robot(
        '<link name="a"/><link name="b"/><joint name="root_joint" type="revolute"><parent link="a"/>'
        '<child link="b"/></joint>'
    )
    ReferenceRobot.from_urdf_string(text)  # fine without a floating base
    with pytest.raises(URDFError, match="root_joint"):
        ReferenceRobot.from_urdf_string(text, floating_base=True)


def test_a_joint_may_share_its_child_links_name():
    robot = ReferenceRobot.from_urdf_string(
        _robot('<link name="a"/><link name="b"/><joint name="b" type="revolute"><parent link="a"/><child link="b"/></joint>')
    )
    assert robot.frame_names == (UNIVERSE, "a", "b")


def test_mimic_on_a_fixed_joint_is_ignored_as_urdfdom_does():
    """Real URDFs (Talos' grippers) put <mimic> on fixed joints; the joint stays fixed."""
    from reljac.reference import ReferenceRobot

    robot = ReferenceRobot.from_urdf_string(
        '<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="j1" type="continuous"><parent link="a"/><child link="b"/></joint>'
        '<joint name="j2" type="fixed"><parent link="b"/><child link="c"/><mimic joint="j1"/></joint></robot>'
    )
    assert robot.joint_names == ("j1",) and robot.nv == 1

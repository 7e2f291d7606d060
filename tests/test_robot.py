"""Loading robots, names, configurations, and the errors bad input gets."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

import reljac
import reljac.robots
from reljac import ConfigurationError, FrameNotFound, JointNotFound, URDFError

MINIMAL = """<robot name="mini">
  <link name="base"/>
  <joint name="spin" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
  <link name="l1"/>
  <joint name="lift" type="prismatic"><parent link="l1"/><child link="l2"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.5" effort="1" velocity="0.3"/></joint>
  <link name="l2"/>
</robot>"""


@pytest.fixture
def mini(tmp_path):
    path = tmp_path / "mini.urdf"
    path.write_text(MINIMAL)
    return reljac.Robot.from_urdf(path)


def test_dual_arm_sizes_and_tool_frames():
    robot = reljac.Robot.bundled("dual_arm")
    assert (robot.nq, robot.nv) == (15, 15)
    assert {"left_tool", "right_tool"} <= set(robot.frame_names)
    assert len(robot.joint_names) == 15


def test_hand_mimic_joints_follow_their_leaders():
    robot = reljac.Robot.bundled("hand")
    model = robot.model
    assert len(model.mimicking_joints) >= 4, "every distal joint mimics its middle joint"
    for follower in model.mimicking_joints:
        assert model.names[follower] not in robot.joint_names
    assert robot.nq == robot.nv == len(robot.joint_names)
    # the distal joint's motion is scaling * leader + offset: check it through forward kinematics
    follower = model.mimicking_joints[0]
    mimic = model.joints[follower].extract()
    leader = model.names[model.mimicked_joints[0]]
    data = model.createData()
    for value in (0.2, 0.9):
        q = robot.q_from_joint_values({leader: value})
        pin.forwardKinematics(model, data, q)
        angle = pin.log3(data.liMi[follower].rotation)
        assert np.linalg.norm(angle) == pytest.approx(abs(mimic.scaling * value + mimic.offset), abs=1e-9)


def test_tree30_has_a_floating_base_and_continuous_joints():
    robot = reljac.Robot.bundled("tree30")
    assert robot.nv == 30
    assert robot.model.joints[1].shortname() == "JointModelFreeFlyer"
    assert robot.nq > robot.nv
    assert any(robot.model.joints[j].shortname().startswith("JointModelRUB") for j in range(robot.model.njoints))


@pytest.mark.parametrize("name", ["tree30", "hand"])
def test_q_names_label_each_entry_of_q_with_its_joint(name, rng):
    """tree30: a free flyer (7 values) and continuous joints (cos, sin); hand: mimic followers
    (no entry). Each entry changed alone changes the value of the joint it names, no other."""
    robot = reljac.Robot.bundled(name)
    names = robot.q_names
    assert len(names) == robot.nq and set(names) == set(robot.joint_names)
    q = robot.random_configuration(rng)
    before = robot.joint_values(q)
    for k, joint in enumerate(names):
        dq = np.zeros(robot.nq)
        dq[k] = 0.1
        after = robot.joint_values(robot.normalize(q + dq))  # (unit blocks: only their own joint moves)
        changed = [j for j in before if not np.allclose(before[j], after[j], rtol=0, atol=1e-12)]
        assert changed == [joint], (k, joint, changed)


def test_floating_base_option_adds_a_free_flyer(tmp_path, mini):
    path = tmp_path / "mini.urdf"
    floating = reljac.Robot.from_urdf(path, floating_base=True)
    assert (floating.nq, floating.nv) == (mini.nq + 7, mini.nv + 6)
    assert floating.joint_names[0] == "root_joint"
    with pytest.raises(URDFError, match="already has a floating root joint"):
        reljac.Robot.from_urdf(reljac.robots.BUNDLED_DIR / "tree30.urdf", floating_base=True)


@pytest.mark.parametrize("name", reljac.bundled_robots())
def test_random_configurations_respect_limits(name, rng):
    robot = reljac.Robot.bundled(name)
    lo, hi = robot.lower_limits, robot.upper_limits
    for _ in range(50):
        q = robot.random_configuration(rng)
        assert np.isfinite(q).all()
        assert np.all(q >= lo - 1e-12) and np.all(q <= hi + 1e-12)
        robot.validate_q(q)  # unit quaternions and (cos, sin) pairs
    assert np.array_equal(robot.random_configuration(3), robot.random_configuration(3))


def test_q_from_joint_values(mini):
    q = mini.q_from_joint_values({"spin": 0.3, "lift": 0.2})
    assert mini.nq == 3 and mini.nv == 2
    np.testing.assert_allclose(q, [math.cos(0.3), math.sin(0.3), 0.2])
    np.testing.assert_allclose(mini.q_from_joint_values({}), mini.neutral())
    with pytest.raises(JointNotFound, match="did you mean 'lift'"):
        mini.q_from_joint_values({"lifft": 0.1})
    with pytest.raises(ConfigurationError, match="finite"):
        mini.q_from_joint_values({"lift": float("nan")})


def test_q_from_joint_values_rejects_mimic_and_floating_joints():
    hand = reljac.Robot.bundled("hand")
    follower = hand.model.names[hand.model.mimicking_joints[0]]
    with pytest.raises(JointNotFound, match="mimic joint"):
        hand.q_from_joint_values({follower: 0.1})
    tree = reljac.Robot.bundled("tree30")
    with pytest.raises(ConfigurationError, match="no single scalar"):
        tree.q_from_joint_values({tree.joint_names[0]: 0.1})


def test_unknown_frame_lists_near_matches():
    robot = reljac.Robot.bundled("dual_arm")
    q = robot.neutral()
    with pytest.raises(FrameNotFound, match="did you mean 'left_tool'"):
        reljac.relative_jacobian(robot, q, "left_tol", "right_tool")
    with pytest.raises(FrameNotFound, match="out of range"):
        reljac.relative_jacobian(robot, q, 10_000, "right_tool")
    with pytest.raises(FrameNotFound):
        reljac.relative_jacobian(robot, q, "left_tool", "right_tool", expressed_in="nowhere")
    assert issubclass(FrameNotFound, ValueError)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.zeros(14), r"shape \(14,\), expected \(15,\)"),
        (np.zeros((15, 1)), "shape"),
        (np.r_[np.zeros(3), np.nan, np.zeros(11)], r"q\[3\] is nan \(joint '"),
        (np.r_[np.zeros(14), np.inf], r"q\[14\] is inf"),
        ("not a vector", "numbers"),
    ],
)
def test_bad_configurations_are_rejected(bad, match):
    robot = reljac.Robot.bundled("dual_arm")
    with pytest.raises(ConfigurationError, match=match):
        reljac.relative_jacobian(robot, bad, "left_tool", "right_tool")


def test_non_unit_quaternion_is_rejected_not_silently_used(rng):
    robot = reljac.Robot.bundled("tree30")
    q = robot.random_configuration(rng)
    q[3:7] *= 1.5
    with pytest.raises(ConfigurationError, match="unit norm"):
        reljac.relative_jacobian(robot, q, "universe", robot.frame_names[-1])
    reljac.relative_jacobian(robot, robot.normalize(q), "universe", robot.frame_names[-1])


def test_bad_velocity_is_rejected():
    robot = reljac.Robot.bundled("planar_2link")
    with pytest.raises(ConfigurationError, match="velocities have nv entries"):
        reljac.relative_twist(robot, np.zeros(2), np.zeros(3), "base_link", "tip")
    with pytest.raises(ConfigurationError, match="need a velocity"):
        reljac.Kinematics(robot, np.zeros(2)).relative_twist("base_link", "tip")


def test_missing_malformed_and_rejected_urdfs(tmp_path):
    with pytest.raises(URDFError, match="does not exist"):
        reljac.Robot.from_urdf(tmp_path / "nope.urdf")
    bad_xml = tmp_path / "bad.urdf"
    bad_xml.write_text("<robot name='x'><link name='a'></robot>")
    with pytest.raises(URDFError, match="not well-formed XML"):
        reljac.Robot.from_urdf(bad_xml)
    not_robot = tmp_path / "notrobot.urdf"
    not_robot.write_text("<sdf/>")
    with pytest.raises(URDFError, match="expected <robot>"):
        reljac.Robot.from_urdf(not_robot)
    dangling = tmp_path / "dangling.urdf"
    dangling.write_text(
        "<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
        "<child link='missing'/><limit lower='0' upper='1' effort='1' velocity='1'/></joint></robot>"
    )
    with pytest.raises(URDFError, match="joint 'j' has child link 'missing', which is not a <link>"):
        reljac.Robot.from_urdf(dangling)  # reljac's own check, before Pinocchio
    with pytest.raises(URDFError, match="bundled"):
        reljac.Robot.bundled("dual_armm")
    assert issubclass(URDFError, ValueError) and issubclass(URDFError, reljac.ReljacError)


def test_missing_meshes_are_reported_when_geometry_is_needed(tmp_path):
    path = tmp_path / "meshy.urdf"
    path.write_text(
        "<robot name='m'><link name='a'><visual><geometry>"
        "<mesh filename='package://nowhere/a.stl'/></geometry></visual></link></robot>"
    )
    robot = reljac.Robot.from_urdf(path, package_dirs=[tmp_path])
    assert robot.nq == 0  # kinematics works without the meshes
    with pytest.raises(URDFError, match="package_dirs"):
        robot.visual_model


def test_bundled_visuals_are_primitive_shapes():
    for name in reljac.bundled_robots():
        visual = reljac.Robot.bundled(name).visual_model
        assert visual.ngeoms > 0
        for geom in visual.geometryObjects:
            assert not geom.meshPath or geom.meshPath in ("BOX", "CYLINDER", "SPHERE"), geom.meshPath


ONE_JOINT = """<robot name="one">
  <link name="base"/>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <origin xyz="0 0 0.1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="arm"/>
  <joint name="tip_joint" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0.5 0 0"/></joint>
  <link name="tip"/>
</robot>"""

NO_JOINT = """<robot name="rigid">
  <link name="base"/>
  <joint name="tip_joint" type="fixed"><parent link="base"/><child link="tip"/><origin xyz="0.5 0 0"/></joint>
  <link name="tip"/>
</robot>"""

# the follower's branch ('a_*') comes before its leader's ('b_*') in Pinocchio's name order
MIMIC_BEFORE_LEADER = """<robot name="order">
  <link name="base"/>
  <joint name="a_follower" type="revolute"><parent link="base"/><child link="a_link"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="b_leader" multiplier="0.5"/></joint>
  <link name="a_link"/>
  <joint name="b_leader" type="revolute"><parent link="base"/><child link="b_link"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="b_link"/>
</robot>"""


def test_a_single_joint_robot_has_6_by_1_jacobians(tmp_path):
    """Pinocchio returns (6,) frame Jacobians when nv = 1; reljac keeps (6, nv)."""
    from helpers import numeric_relative_jacobians

    path = tmp_path / "one.urdf"
    path.write_text(ONE_JOINT)
    robot = reljac.Robot.from_urdf(path)
    q, v = np.array([0.4]), np.array([0.7])
    J = reljac.relative_jacobian(robot, q, "base", "tip")
    assert J.shape == (6, 1)
    pair = (robot.frame_id("base"), robot.frame_id("tip"))
    np.testing.assert_allclose(J, numeric_relative_jacobians(robot, q, [pair])[pair], atol=1e-7)
    kin = reljac.Kinematics(robot, q, v)
    assert kin.frame_jacobian("tip").shape == (6, 1)
    assert kin.relative_jacobian_time_variation("base", "tip", expressed_in="world").shape == (6, 1)


def test_a_robot_without_joints_gives_empty_jacobians_not_a_crash(tmp_path):
    path = tmp_path / "rigid.urdf"
    path.write_text(NO_JOINT)
    robot = reljac.Robot.from_urdf(path)
    assert robot.nv == 0
    assert reljac.relative_jacobian(robot, np.zeros(0), "base", "tip").shape == (6, 0)
    # (the compiled core refused the empty q: numpy gives it a stride of 0)
    np.testing.assert_array_equal(reljac.relative_placement(robot, np.zeros(0), "base", "tip").homogeneous,
                                  reljac.Kinematics(robot, np.zeros(0)).relative_placement("base", "tip").homogeneous)
    assert reljac.Kinematics(robot, np.zeros(0), np.zeros(0)).frame_jacobian_time_variation("tip").shape == (6, 0)
    from reljac.ik import Controller, FrameTask

    with pytest.raises(ConfigurationError, match="no degree of freedom"):
        Controller(robot, [[FrameTask("tip")]], dt=0.01)


def test_a_mimic_leader_after_its_follower_is_explained(tmp_path):
    path = tmp_path / "order.urdf"
    path.write_text(MIMIC_BEFORE_LEADER)
    with pytest.raises(URDFError, match="mimic=False"):
        reljac.Robot.from_urdf(path)
    robot = reljac.Robot.from_urdf(path, mimic=False)
    assert set(robot.joint_names) == {"a_follower", "b_leader"}


def test_a_continuous_joint_about_an_oblique_axis_is_an_angle_pair(tmp_path):
    """Pinocchio makes it a RevoluteUnboundedUnaligned joint (not RUBX/Y/Z): still (cos, sin)."""
    path = tmp_path / "oblique.urdf"
    path.write_text(MINIMAL.replace('type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>',
                                    'type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 1 1"/>'))
    robot = reljac.Robot.from_urdf(path)
    assert robot.model.joints[1].shortname() == "JointModelRevoluteUnboundedUnaligned"
    q = robot.random_configuration(0)
    assert np.hypot(q[0], q[1]) == pytest.approx(1.0)
    np.testing.assert_allclose(robot.q_from_joint_values({"spin": 0.3})[:2], [math.cos(0.3), math.sin(0.3)])
    with pytest.raises(ConfigurationError, match="unit norm"):
        robot.validate_q([2.0, 0.0, 0.1])


@pytest.mark.parametrize("name", ["dual_arm", "hand"])
def test_a_robots_kinematics_state_rebuilds_its_kinematics_elsewhere(name):
    """Robot.kinematics_state, pickled, and Robot.from_kinematics_state: the same q and v and the
    same relative Jacobians, for a robot from its URDF and for one from a bare pin.Model (the
    hand's mimic joints: its model made independent and its couplings)."""
    import pickle

    loaded = reljac.Robot.bundled(name)
    for robot in (loaded, reljac.Robot(pin.Model(loaded.model))):
        again = reljac.Robot.from_kinematics_state(pickle.loads(pickle.dumps(robot.kinematics_state())))
        assert (again.nq, again.nv, again.joint_names) == (robot.nq, robot.nv, robot.joint_names)
        q = robot.random_configuration(5)
        last = robot.model.nframes - 1
        np.testing.assert_allclose(reljac.relative_jacobian(again, q, 1, last),
                                   reljac.relative_jacobian(robot, q, 1, last), rtol=0, atol=1e-12)


def test_a_robots_kinematics_state_keeps_its_payloads():
    """A robot carrying a payload, rebuilt from its kinematics state (from its URDF text, as a
    capability map's Dask worker rebuilds it), carries it still: the same centre of mass."""
    robot = reljac.Robot.bundled("dual_arm").with_payload(3.0, "left_tool", offset=[0.05, 0.0, 0.1])
    again = reljac.Robot.from_kinematics_state(robot.kinematics_state())
    q = robot.random_configuration(2)
    np.testing.assert_allclose(reljac.center_of_mass(again, q), reljac.center_of_mass(robot, q), rtol=0, atol=1e-12)

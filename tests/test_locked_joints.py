"""Locked joints (robot.locked: Pinocchio's reduced model), SRDF named configurations and joint
values by name both ways.

Oracle of a locked robot: the full robot at the configuration that holds the locked values. Its
frames, geometry placements and the Jacobian columns of the joints left must all be the same.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pinocchio as pin
import pytest
from helpers import assert_jacobian_rates_match_finite_differences

import reljac
from reljac import ConfigurationError, JointNotFound, SRDFError, robots

ERD = robots.example_robot_data_dir()
needs_erd = pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")
TIAGO_LOCKS = ["caster_*", "suspension_*", "wheel_*", "hand_*"]


def full_q(full, reduced, q):
    """The full robot's q holding the reduced robot's q and its locked values."""
    return full.q_from_joint_values({**reduced.joint_values(q), **reduced.locked_joints})


def frames_of(robot, q):
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return {f.name + str(f.type): data.oMf[i].homogeneous for i, f in enumerate(robot.model.frames)}


def assert_same_robot(full, reduced, q, pairs):
    qf = full_q(full, reduced, q)
    mine, theirs = frames_of(reduced, q), frames_of(full, qf)
    bodies = [f.name + str(f.type) for f in full.model.frames if f.type == pin.FrameType.BODY]
    for key in bodies:
        np.testing.assert_allclose(mine[key], theirs[key], atol=1e-12, err_msg=key)
    columns = [full.model.joints[full.joint_id(n)].idx_v for n in reduced.joint_names]
    assert all(full.model.joints[full.joint_id(n)].nv == 1 for n in reduced.joint_names)
    for a, b in pairs:
        np.testing.assert_allclose(reljac.relative_jacobian(reduced, q, a, b),
                                   reljac.relative_jacobian(full, qf, a, b)[:, columns], atol=1e-12)


def test_locked_hand_keeps_frames_limits_and_jacobian_columns(rng):
    hand = reljac.Robot.bundled("hand")
    reduced = hand.locked({"thumb_*": 0.3, "ring_mcp": 0.5})
    locked = {n for n in hand.joint_names if n.startswith("thumb_")} | {"ring_mcp"}
    assert set(reduced.locked_joints) == locked
    assert reduced.locked_joints["ring_mcp"] == 0.5 and reduced.locked_joints["thumb_cmc_flexion"] == 0.3
    assert reduced.joint_names == [n for n in hand.joint_names if n not in locked]
    assert reduced.frame_names == hand.frame_names
    for name in reduced.joint_names:
        lo, hi = (reduced.model.joints[reduced.joint_id(name)].idx_q,) * 2
        j = hand.model.joints[hand.joint_id(name)].idx_q
        assert (reduced.lower_limits[lo], reduced.upper_limits[hi]) == (hand.lower_limits[j], hand.upper_limits[j])
        assert reduced.velocity_limits[reduced.model.joints[reduced.joint_id(name)].idx_v] == \
            hand.velocity_limits[hand.model.joints[hand.joint_id(name)].idx_v]
    for _ in range(3):
        assert_same_robot(hand, reduced, reduced.random_configuration(rng), [("palm", "ring_tip"), ("thumb_tip", "index_tip")])
    with pytest.raises(JointNotFound, match="joint 'ring_mcp' of robot 'hand' is locked"):
        reduced.joint_id("ring_mcp")


def test_locking_a_leader_locks_its_mimic_followers_and_rates_stay_right(rng):
    hand = reljac.Robot.bundled("hand")
    follower, leader = next(iter(hand._mimic_leader.items()))
    reduced = hand.locked([leader], hand.random_configuration(rng))
    assert follower not in reduced.model.names[1:] or follower not in reduced._mimic_leader
    assert len(reduced.model.mimicking_joints) == len(hand.model.mimicking_joints) - sum(
        1 for lead in hand._mimic_leader.values() if lead == leader)
    q, v = reduced.random_configuration(rng), rng.normal(size=reduced.nv)
    assert_same_robot(hand, reduced, q, [("palm", "index_tip")])
    # the other mimic joints stay coupled: rates through the expanded model, against finite differences
    assert reduced.model.mimicking_joints.tolist()
    assert_jacobian_rates_match_finite_differences(reduced, q, v, [("palm", "index_tip", "middle_tip")])
    with pytest.raises(JointNotFound, match=f"'{follower}' of robot 'hand' is a mimic joint"):
        hand.locked([follower])


def test_lock_errors_are_one_line():
    hand = reljac.Robot.bundled("hand")
    with pytest.raises(JointNotFound, match="pattern 'toe_\\*' matches no joint of robot 'hand'"):
        hand.locked("toe_*")
    with pytest.raises(JointNotFound, match="did you mean 'ring_mcp'"):
        hand.locked(["ring_mpc"])
    with pytest.raises(ConfigurationError, match="value of joint 'ring_mcp' is nan"):
        hand.locked({"ring_mcp": float("nan")})
    with pytest.raises(ConfigurationError, match="q has shape"):
        hand.locked(["ring_mcp"], np.zeros(3))
    with pytest.raises(JointNotFound, match="joints to lock are a name"):
        hand.locked(3)


def test_a_locked_robot_pickles_and_locks_again(rng):
    hand = reljac.Robot.bundled("hand")
    once = hand.locked(["thumb_*"])
    twice = once.locked({"index_mcp": 0.2})
    assert set(twice.locked_joints) == set(once.locked_joints) | {"index_mcp"}
    q = twice.random_configuration(rng)
    clone = pickle.loads(pickle.dumps(twice))
    np.testing.assert_array_equal(reljac.relative_jacobian(clone, q, "palm", "ring_tip"),
                                  reljac.relative_jacobian(twice, q, "palm", "ring_tip"))
    assert clone.locked_joints == twice.locked_joints
    assert_same_robot(hand, twice, q, [("palm", "middle_tip")])


@needs_erd
@pytest.mark.slow
def test_tiago_dual_with_wheels_and_fingers_locked_keeps_its_geometry(rng):
    tiago = reljac.Robot.load("tiago_dual")
    arms = tiago.locked(TIAGO_LOCKS)
    assert arms.nq == arms.nv == 17 and all(not n.startswith(("hand_", "wheel_", "caster_")) for n in arms.joint_names)
    q = arms.random_configuration(rng)
    assert_same_robot(tiago, arms, q, [("arm_left_7_link", "arm_right_7_link"), ("base_footprint", "head_2_link")])
    qf = full_q(tiago, arms, q)
    for kind in ("visual", "collision"):
        mine, theirs = getattr(arms, f"{kind}_model"), getattr(tiago, f"{kind}_model")
        assert [g.name for g in mine.geometryObjects] == [g.name for g in theirs.geometryObjects]
        d1, d2 = pin.GeometryData(mine), pin.GeometryData(theirs)
        pin.updateGeometryPlacements(arms.model, arms.model.createData(), mine, d1, q)
        pin.updateGeometryPlacements(tiago.model, tiago.model.createData(), theirs, d2, qf)
        for M1, M2 in zip(d1.oMg, d2.oMg, strict=True):
            np.testing.assert_allclose(M1.homogeneous, M2.homogeneous, atol=1e-12)


@needs_erd
def test_locked_pairs_are_the_full_robots_without_those_made_rigid():
    panda = reljac.Robot.load("panda")
    arm = panda.locked(["panda_joint[2-6]", "panda_finger_joint1"])
    full_pairs = set(panda.collision_pairs)
    assert set(arm.collision_pairs) < full_pairs
    for a, b in full_pairs - set(arm.collision_pairs):
        assert arm.model.frames[arm.frame_id(a)].parentJoint == arm.model.frames[arm.frame_id(b)].parentJoint


@needs_erd
def test_talos_locks_its_legs_at_half_sitting_and_its_root():
    talos = reljac.Robot.load("talos")
    upper = talos.locked(["root_joint", "leg_*"])
    assert not upper.floating_base and upper.locked_joints["root_joint"] == pytest.approx(
        (0.0, 0.0, 1.01927, 0.0, 0.0, 0.0, 1.0))
    half = talos.configuration("half_sitting")
    assert upper.locked_joints["leg_left_4_joint"] == pytest.approx(talos.joint_values(half)["leg_left_4_joint"])
    q = upper.configuration("half_sitting")  # the SRDF state, restricted to the joints left
    assert_same_robot(talos, upper, q, [("base_link", "arm_left_7_link")])
    np.testing.assert_allclose(frames_of(upper, q)["arm_left_7_linkBODY"], frames_of(talos, half)["arm_left_7_linkBODY"],
                               atol=1e-12)


# ----------------------------------------------------------------------------- names both ways
@pytest.mark.parametrize("name", ["dual_arm", "hand", "tree30", "planar_2link"])
def test_joint_values_and_q_from_joint_values_are_inverse(name, rng):
    robot = reljac.Robot.bundled(name)
    for _ in range(5):
        q = robot.random_configuration(rng)
        values = robot.joint_values(q)
        assert list(values) == robot.joint_names
        np.testing.assert_allclose(robot.q_from_joint_values(values), q, atol=1e-12)
        v = rng.normal(size=robot.nv)
        speeds = robot.joint_velocities(v)
        assert list(speeds) == robot.joint_names
        np.testing.assert_array_equal(robot.v_from_joint_velocities(speeds), v)


def test_joint_values_of_each_kind_of_joint():
    tree = reljac.Robot.bundled("tree30")
    q = tree.random_configuration(4)
    values = tree.joint_values(q)
    for name in tree.joint_names:
        joint = tree.model.joints[tree.joint_id(name)]
        block = q[joint.idx_q: joint.idx_q + joint.nq]
        if joint.nq == 2 and joint.nv == 1:
            assert values[name] == pytest.approx(math.atan2(block[1], block[0]))
        elif joint.nq == 1:
            assert values[name] == block[0]
        else:
            assert values[name] == tuple(block)


def test_bad_joint_values_and_velocities():
    tree = reljac.Robot.bundled("tree30")
    free = tree.joint_names[0]
    with pytest.raises(ConfigurationError, match="no single scalar"):
        tree.q_from_joint_values({free: 0.1})
    with pytest.raises(ConfigurationError, match=f"joint '{free}' has 7 configuration values"):
        tree.q_from_joint_values({free: (0.0, 1.0)})
    with pytest.raises(ConfigurationError, match="must have unit norm"):
        tree.q_from_joint_values({free: (0, 0, 0, 0, 0, 0, 2)})
    with pytest.raises(ConfigurationError, match=f"joint '{free}' has 6 velocity values"):
        tree.v_from_joint_velocities({free: 1.0})
    with pytest.raises(ConfigurationError, match="takes one number"):
        tree.q_from_joint_values({tree.joint_names[-1]: [0.1, 0.2]})
    with pytest.raises(ConfigurationError, match="must be a mapping"):
        tree.v_from_joint_velocities([1.0])
    with pytest.raises(ConfigurationError, match="q has shape"):
        tree.joint_values(np.zeros(3))
    one = tree.joint_names[-1]
    for huge in (10**400, -(10**400)):  # an OverflowError before, not a reljac error
        with pytest.raises(ConfigurationError, match=f"value of joint '{one}' is -?inf; it must be finite"):
            tree.q_from_joint_values({one: huge})
        with pytest.raises(ConfigurationError, match="must be finite"):
            tree.v_from_joint_velocities({one: huge})
        with pytest.raises(ConfigurationError, match="must be finite"):
            tree.locked({one: huge})


# ----------------------------------------------------------------------------- SRDF configurations
def write_srdf(tmp_path, body: str):
    path = tmp_path / "robot.srdf"
    path.write_text(f'<robot name="tree30">{body}</robot>')
    return path


def test_named_configurations_from_an_srdf(tmp_path):
    base = reljac.Robot.bundled("tree30")
    free, last = base.joint_names[0], base.joint_names[-1]
    path = write_srdf(tmp_path, f'''<group_state name="up" group="all">
        <joint name="{free}" value="1 2 3 0 0 0 2"/><joint name="{last}" value="0.25"/></group_state>
        <group_state name="bad" group="all"><joint name="{free}" value="1 2"/></group_state>
        <group_state name="typo" group="all"><joint name="{last}x" value="1"/></group_state>''')
    robot = reljac.Robot.from_urdf(base.urdf_path, srdf=path)
    assert robot.configuration_names == ["up", "bad", "typo"]
    q = robot.configuration("up")
    values = robot.joint_values(q)
    assert values[free] == (1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0)  # the quaternion normalized
    assert values[last] == pytest.approx(0.25)
    expected = base.q_from_joint_values({free: (1, 2, 3, 0, 0, 0, 1), last: 0.25})
    np.testing.assert_allclose(q, expected, atol=1e-15)
    with pytest.raises(SRDFError, match="state 'bad'.*7 configuration values"):
        robot.configuration("bad")
    with pytest.raises(SRDFError, match=f"state 'typo' names joint '{last}x', which robot 'tree30' does not have; "
                                        f"did you mean '{last}'"):
        robot.configuration("typo")
    with pytest.raises(SRDFError, match="no named configuration 'upp'; did you mean 'up'"):
        robot.configuration("upp")
    with pytest.raises(SRDFError, match="robot 'tree30' has no SRDF"):
        base.configuration("up")
    assert base.reference_configuration().tolist() == base.neutral().tolist()
    assert robot.reference_posture is None


def test_an_srdf_naming_links_of_another_robot_is_refused(tmp_path):
    base = reljac.Robot.bundled("tree30")
    path = write_srdf(tmp_path, '<disable_collisions link1="nothing" link2="else" reason="Never"/>')
    with pytest.raises(SRDFError, match="<disable_collisions> names link '(nothing|else)', which the robot does not have"):
        reljac.Robot.from_urdf(base.urdf_path, srdf=path)


def test_a_value_outside_a_joints_position_limits_is_not_locked():
    # was: accepted (torso_yaw=100 on the CLI, -0.2 for a finger of limits [0, 1.6])
    hand = reljac.Robot.bundled("hand")
    with pytest.raises(ConfigurationError, match=r"^joint 'index_mcp' locked at -0.2 is outside its position limits "
                                                 r"\[0, 1.6\]$"):
        hand.locked({"index_mcp": -0.2})
    assert hand.locked({"index_mcp": 1.6}).locked_joints["index_mcp"] == 1.6  # on a limit: locked


@pytest.mark.parametrize("name, joint", [("z1", "joint1"), ("anymal_c", "LF_HAA")])
def test_robots_whose_frames_share_names_lock_their_joints(name, joint):
    """An adversarial pass: Pinocchio's reduction refused z1 (a link and a fixed joint both named
    gripperStator) and ANYmal (links named as their joints): "several frames match". Their frames
    now reduce under names of their own and are named back: every frame of the locked robot is
    where it is on the full one, under the same name and type."""
    if robots.example_robot_data_dir() is None:
        pytest.skip("example-robot-data is not installed")
    robot = reljac.Robot.load(name)
    q = robot.random_configuration(3)
    locked = robot.locked([joint], q)
    full_data, data = robot.model.createData(), locked.model.createData()
    pin.framesForwardKinematics(robot.model, full_data, q)
    q_locked = np.concatenate([q[robot.model.joints[j].idx_q:robot.model.joints[j].idx_q + robot.model.joints[j].nq]
                               for j in range(1, robot.model.njoints) if robot.model.names[j] != joint])
    pin.framesForwardKinematics(locked.model, data, q_locked)
    full = [(f.name, f.type) for f in robot.model.frames]
    for i, frame in enumerate(locked.model.frames):
        kind = pin.FrameType.JOINT if frame.type == pin.FrameType.FIXED_JOINT and frame.name == joint else frame.type
        same = [k for k, key in enumerate(full) if key == (frame.name, kind) or (frame.name == joint and key[0] == joint)]
        assert same, f"{frame.name} is not a frame of the full robot"
        assert any(np.allclose(full_data.oMf[k].homogeneous, data.oMf[i].homogeneous, atol=1e-12) for k in same), frame.name
    assert sorted(f.name for f in locked.model.frames) == sorted(n for n, _ in full)

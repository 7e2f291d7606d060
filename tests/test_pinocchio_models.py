"""Any Pinocchio model in: Robot.from_pinocchio, pin.RobotWrapper wherever a Robot is, and the
model without mimic joints made from a model alone (checked against the URDF loaded without them).
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pinocchio as pin
import pytest
from helpers import assert_jacobian_rates_match_finite_differences, load_random_tree, urdf_trees
from hypothesis import given, settings
from pinocchio.robot_wrapper import RobotWrapper

import reljac
import reljac.robot
import reljac.robots
from reljac import ConfigurationError, robots
from reljac.collision import CollisionModel
from reljac.ik import Controller, FrameTask, PostureTask
from reljac.loading import MimicFree, expand_mimic, mimic_couplings, restore_mimic

ERD = robots.example_robot_data_dir()
needs_erd = pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")


@pytest.fixture(scope="module")
def hand_wrapper():
    path = str(reljac.robots.BUNDLED_DIR / "hand.urdf")
    return RobotWrapper.BuildFromURDF(path, [str(reljac.robots.BUNDLED_DIR)], mimic=True)


def _frames(robot, q):
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return np.array([M.homogeneous for M in data.oMf])


def test_a_robot_wrapper_makes_a_robot_with_its_geometry(hand_wrapper):
    hand = reljac.Robot.bundled("hand")
    for robot in (reljac.Robot(hand_wrapper), reljac.Robot.from_pinocchio(hand_wrapper)):
        assert robot.joint_names == hand.joint_names and robot.frame_names == hand.frame_names
        assert robot.model is not hand_wrapper.model  # copies
        assert robot.visual_model.ngeoms == hand_wrapper.visual_model.ngeoms > 0
        assert robot.collision_model.ngeoms == hand_wrapper.collision_model.ngeoms > 0
        q = hand.random_configuration(1)
        np.testing.assert_array_equal(_frames(robot, q), _frames(hand, q))


@pytest.mark.slow
def test_a_wrapper_is_accepted_wherever_a_robot_is(hand_wrapper, rng):
    hand = reljac.Robot.bundled("hand")
    q, v = hand.random_configuration(rng), rng.normal(size=hand.nv)
    a, b = "palm", "index_tip"
    np.testing.assert_allclose(reljac.relative_jacobian(hand_wrapper, q, a, b),
                               reljac.relative_jacobian(hand, q, a, b), atol=1e-12)
    np.testing.assert_allclose(reljac.relative_jacobian_time_variation(hand_wrapper, q, v, a, b),
                               reljac.relative_jacobian_time_variation(hand, q, v, a, b), atol=1e-10)
    np.testing.assert_allclose(reljac.Kinematics(hand_wrapper, q).relative_placement(a, b).homogeneous,
                               reljac.relative_placement(hand, q, a, b).homogeneous, atol=1e-12)
    assert reljac.robot.as_robot(hand_wrapper) is reljac.robot.as_robot(hand_wrapper)  # made once
    task = FrameTask("index_tip", gain=10.0)
    task.set_target(reljac.relative_placement(hand, hand.neutral(), "universe", "index_tip"))
    posture = PostureTask(hand_wrapper, gain=1.0)
    controller = Controller(hand_wrapper, [[task], [posture]], dt=0.01)
    assert controller.robot is posture.robot
    controller.step(q)
    cm = CollisionModel(hand_wrapper)
    np.testing.assert_allclose(reljac.collision.distances(hand_wrapper, q).distance,
                               CollisionModel(hand).distances(q).distance, atol=1e-9)
    assert cm.pairs == CollisionModel(hand).pairs


@pytest.mark.parametrize("thing, match", [
    ("hand", "a robot is a reljac.Robot, a pin.Model or a pin.RobotWrapper, not str"),
    (np.zeros(3), "not ndarray"),
])
def test_other_objects_get_one_clear_error(thing, match):
    for make in (reljac.Robot, reljac.Robot.from_pinocchio, reljac.robot.as_robot):
        with pytest.raises(ConfigurationError, match=match):
            make(thing)
    with pytest.raises(ConfigurationError, match=match):
        Controller(thing, [], dt=0.01)


def test_geometry_of_another_model_is_refused():
    planar = reljac.Robot.bundled("planar_2link")
    dual = reljac.Robot.bundled("dual_arm")
    with pytest.raises(ConfigurationError, match="visual_model is not a geometry model of robot 'planar_2link'"):
        reljac.Robot.from_pinocchio(planar.model, visual_model=dual.visual_model)
    with pytest.raises(ConfigurationError, match="collision_model must be a pin.GeometryModel, not str"):
        reljac.Robot.from_pinocchio(planar.model, collision_model="meshes")


def test_a_model_without_geometry_has_empty_geometry_and_no_distances():
    planar = reljac.Robot.bundled("planar_2link")
    bare = reljac.Robot.from_pinocchio(planar.model)
    assert bare.visual_model.ngeoms == 0 and bare.collision_model.ngeoms == 0
    assert bare.urdf_path is None and bare.urdf_text is None
    with pytest.raises(reljac.CollisionError, match="not loaded from a URDF and was given no collision_model"):
        bare.collisions


@pytest.mark.parametrize("name", ["hand", "tree30", "dual_arm"])
def test_expand_mimic_is_the_urdf_without_mimic(name, rng):
    robot = reljac.Robot.bundled(name)
    expanded = expand_mimic(robot.model)
    assert isinstance(expanded, MimicFree)
    from_urdf = robot.without_mimic()
    assert isinstance(from_urdf, MimicFree)
    assert list(expanded.model.names) == list(from_urdf.model.names)
    for expected, got in zip(from_urdf[1:], expanded[1:], strict=True):
        np.testing.assert_array_equal(got, expected)
    for _ in range(3):
        q = robot.random_configuration(rng)
        q_full = expanded.S @ q + expanded.o
        d1, d2 = expanded.model.createData(), from_urdf.model.createData()
        pin.framesForwardKinematics(expanded.model, d1, q_full)
        pin.framesForwardKinematics(from_urdf.model, d2, q_full)
        for M1, M2 in zip(d1.oMf, d2.oMf, strict=True):
            np.testing.assert_allclose(M1.homogeneous, M2.homogeneous, atol=1e-12)
        np.testing.assert_allclose(pin.crba(expanded.model, d1, q_full), pin.crba(from_urdf.model, d2, q_full),
                                   atol=1e-12)
    restored = restore_mimic(expanded.model, mimic_couplings(robot.model))
    q = robot.random_configuration(rng)
    np.testing.assert_allclose(_frames(reljac.Robot(restored), q), _frames(robot, q), atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(text=urdf_trees())
@pytest.mark.slow
def test_expand_mimic_on_random_trees(tmp_path_factory, text):
    robot = load_random_tree(tmp_path_factory.mktemp("tree"), text)
    if robot is None:
        return
    expanded, G, S, o = expand_mimic(robot.model)
    full = robot.without_mimic()
    np.testing.assert_array_equal(G, full.G)
    np.testing.assert_array_equal(S, full.S)
    np.testing.assert_array_equal(o, full.o)
    q = robot.random_configuration(0)
    d1, d2 = expanded.createData(), full.model.createData()
    pin.framesForwardKinematics(expanded, d1, S @ q + o)
    pin.framesForwardKinematics(full.model, d2, S @ q + o)
    np.testing.assert_allclose(np.array([M.homogeneous for M in d1.oMf]),
                               np.array([M.homogeneous for M in d2.oMf]), atol=1e-10)


def test_jacobian_rates_of_a_given_mimic_model_match_finite_differences(rng):
    """No URDF to rebuild: the model without mimic joints comes from expand_mimic."""
    hand = reljac.Robot.from_pinocchio(reljac.Robot.bundled("hand").model)
    assert hand.model.mimicking_joints.tolist()
    q, v = hand.random_configuration(rng), rng.normal(size=hand.nv)
    assert_jacobian_rates_match_finite_differences(hand, q, v, [("palm", "index_tip", "middle_tip")])


def test_a_given_mimic_model_pickles_and_deep_copies(rng, hand_wrapper):
    robot = reljac.Robot.from_pinocchio(hand_wrapper)
    q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
    for clone in (pickle.loads(pickle.dumps(robot)), copy.deepcopy(robot)):
        assert clone.model.mimicking_joints.tolist() == robot.model.mimicking_joints.tolist()
        np.testing.assert_array_equal(reljac.relative_jacobian_time_variation(clone, q, v, "palm", "ring_tip"),
                                      reljac.relative_jacobian_time_variation(robot, q, v, "palm", "ring_tip"))
        assert clone.visual_model.ngeoms == robot.visual_model.ngeoms


@needs_erd
@pytest.mark.slow
def test_a_robot_of_another_loader_with_meshes(rng):
    """example-robot-data's URDF through Pinocchio's RobotWrapper (its meshes found by it)."""
    source = robots.resolve("ur5")
    wrapper = RobotWrapper.BuildFromURDF(str(source.urdf), [str(d) for d in source.package_dirs])
    robot = reljac.Robot.from_pinocchio(wrapper, srdf=source.srdf)
    named = reljac.Robot.load("ur5")
    assert robot.visual_model.ngeoms == named.visual_model.ngeoms
    assert robot.collision_pairs == named.collision_pairs
    q = named.random_configuration(rng)
    np.testing.assert_allclose(reljac.relative_jacobian(wrapper, q, "base_link", "tool0"),
                               reljac.relative_jacobian(named, q, "base_link", "tool0"), atol=1e-12)


CONTINUOUS_MIMIC = """<robot name="continuous_mimic"><link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/>
<joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
<joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="0.3 0 0"/><axis xyz="{axis}"/>
<mimic joint="j1" multiplier="{multiplier}" offset="{offset}"/></joint>
<joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.2 0.1 0"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""


@pytest.mark.parametrize("multiplier, offset, axis", [(1.0, 0.0, "0 1 0"), (-2.0, 0.7, "0 1 0"),
                                                     (3.0, -2.0, "0.3 -0.5 0.8")])
@pytest.mark.parametrize("source", ["urdf", "model"])
def test_a_continuous_joint_mimicking_a_continuous_one(tmp_path, rng, multiplier, offset, axis, source):
    """Its (cos, sin) pair follows the leader's angle, not a linear map of the leader's pair: the
    model without mimic joints is placed at ``configuration(q)`` (an adversarial pass: at S q + o
    the follower's pair was (s cos, 0), and dJ_ab was off its finite differences by 0.53 at
    multiplier 1, 12.6 at -2). A model given without its URDF is expanded too (a continuous
    follower was refused: revolute and prismatic only), unless the axis is oblique: then refused."""
    path = tmp_path / "continuous_mimic.urdf"
    path.write_text(CONTINUOUS_MIMIC.format(multiplier=multiplier, offset=offset, axis=axis))
    robot = reljac.Robot.from_urdf(path)
    if source == "model":
        robot = reljac.Robot.from_pinocchio(robot.model)
        if axis != "0 1 0":  # (Pinocchio's Python bindings set no axis of an oblique continuous joint)
            with pytest.raises(ConfigurationError, match="mimic joint 'j2' moves like a "
                                                         "JointModelRevoluteUnboundedUnaligned, which reljac cannot"):
                robot.without_mimic()
            return
    free = robot.without_mimic()
    for _ in range(3):
        q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
        q_full = free.configuration(q)
        mimic_data, free_data = robot.model.createData(), free.model.createData()
        pin.framesForwardKinematics(robot.model, mimic_data, q)
        pin.framesForwardKinematics(free.model, free_data, q_full)
        for name in ("l2", "l3"):
            np.testing.assert_allclose(free_data.oMf[free.model.getFrameId(name)].homogeneous,
                                       mimic_data.oMf[robot.model.getFrameId(name)].homogeneous, atol=1e-12)
        angle = multiplier * np.arctan2(q[1], q[0]) + offset
        np.testing.assert_allclose(q_full[2:4], [np.cos(angle), np.sin(angle)], atol=1e-15)
        assert_jacobian_rates_match_finite_differences(robot, q, v, [("base", "l3", "l2"), ("l1", "l3", "base")])


def test_expand_mimic_keeps_each_joints_values():
    """Damping, both dry-friction limits, armature, rotor inertia and gear ratio per velocity, the
    limit margin per configuration entry (a review: the lower friction limit and the margin were
    lost, a follower's gear ratio 0 against Pinocchio's 1)."""
    model = pin.Model(reljac.Robot.load("panda").model)
    nv, nq = model.nv, model.nq
    values = {"damping": np.linspace(0.1, 0.9, nv), "lowerDryFrictionLimit": -np.linspace(0.2, 0.5, nv),
              "upperDryFrictionLimit": np.linspace(0.2, 0.5, nv), "armature": np.linspace(1, 2, nv),
              "rotorInertia": np.linspace(3, 4, nv), "rotorGearRatio": np.linspace(5, 6, nv),
              "positionLimitMargin": np.linspace(0.01, 0.02, nq)}
    for name, value in values.items():
        setattr(model, name, value)
    full = expand_mimic(model).model
    followers = {model.names[f] for f in model.mimicking_joints}
    assert followers
    for j in range(1, full.njoints):
        mine = model.joints[model.getJointId(full.names[j])]
        for name, value in values.items():
            got = np.asarray(getattr(full, name))
            at, start, width = (full.joints[j].idx_q, mine.idx_q, mine.nq) if name == "positionLimitMargin" else \
                (full.joints[j].idx_v, mine.idx_v, mine.nv)
            expected = (1.0 if name == "rotorGearRatio" else 0.0) if full.names[j] in followers else \
                value[start:start + width]
            np.testing.assert_array_equal(got[at:at + max(width, 1)], expected, err_msg=f"{full.names[j]} {name}")

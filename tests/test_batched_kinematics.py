"""The compiled batched kinematics (reljac.maps.compiled: Pinocchio's C++ in the core) against the
Pinocchio layer and the in-house reference: T_ab and J_ab equal to 1e-12 on bundled,
example-robot-data and random robots, and on joint types of every kind Pinocchio models."""

from __future__ import annotations

import threading

import numpy as np
import pinocchio as pin
import pytest
from helpers import EXAMPLE_ROBOTS, example_robot_data_dir, load_random_tree, random_pairs, urdf_trees
from hypothesis import HealthCheck, given, settings

import reljac
from reljac.analysis import manipulability
from reljac.maps.compiled import _core, compiled_available, python_relative_kinematics, relative_kinematics

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
TOL = 1e-12


def random_configurations(robot, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if any(j.shortname() == "JointModelUniversal" for j in robot.model.joints):  # (not drawn by reljac)
        assert robot.nq == robot.nv  # no unit blocks: any vector is a configuration
        return rng.uniform(-2.0, 2.0, size=(n, robot.nq))
    return np.array([robot.random_configuration(rng) for _ in range(n)])


def assert_same_as_pinocchio_layer(robot, pairs, n: int = 20, seed: int = 0) -> None:
    Q = random_configurations(robot, n, seed)
    for a, b in pairs:
        T, J = relative_kinematics(robot, Q, a, b, backend="compiled")
        T_ref, J_ref = python_relative_kinematics(robot, Q, a, b)
        scale = max(1.0, np.abs(J_ref).max(initial=0.0))
        np.testing.assert_allclose(T, T_ref, rtol=0, atol=TOL, err_msg=f"T_ab {a}->{b}")
        np.testing.assert_allclose(J, J_ref, rtol=0, atol=TOL * scale, err_msg=f"J_ab {a}->{b}")


BUNDLED_PAIRS = {
    "planar_2link": [("base_link", "tip"), ("tip", "base_link"), ("universe", "link2")],
    "dual_arm": [("left_tool", "right_tool"), ("right_tool", "left_tool"), ("universe", "left_tool"),
                 ("torso", "right_tool"), ("left_tool", "left_link3"),
                 ("torso_yaw", "left_tool"), ("left_tool", "left_tool"), ("left_link3", "left_tool")],
    "hand": [("thumb_tip", "index_tip"), ("index_tip", "thumb_tip"), ("middle_tip", "ring_tip"),
             ("universe", "index_tip")],
}


@pytest.mark.parametrize("name", sorted(BUNDLED_PAIRS))
def test_bundled_robots_match_the_pinocchio_layer(name):
    assert_same_as_pinocchio_layer(reljac.Robot.bundled(name), BUNDLED_PAIRS[name])


def test_floating_base_and_continuous_joints_match(rng):
    robot = reljac.Robot.bundled("tree30")  # free-flyer root, revolute triples, continuous wrists
    assert_same_as_pinocchio_layer(robot, random_pairs(robot, rng, 8) + [("universe", robot.frame_names[-1])])


@pytest.mark.parametrize("name", ["panda", "ur5", "talos", "tiago_dual", "allegro"])
@pytest.mark.slow
def test_example_robots_match_the_pinocchio_layer(name, rng):
    root = example_robot_data_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    path, floating = EXAMPLE_ROBOTS[name]
    robot = reljac.Robot.from_urdf(root / path, floating_base=floating)
    assert_same_as_pinocchio_layer(robot, random_pairs(robot, rng, 6), n=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=urdf_trees())
@pytest.mark.slow
def test_random_trees_with_oblique_axes_and_mimics_match(tmp_path, text):
    """Oblique axes, prismatic and floating joints inside the tree, mimics with multipliers and offsets."""
    robot = load_random_tree(tmp_path, text)
    if robot is not None:
        assert_same_as_pinocchio_layer(robot, random_pairs(robot, np.random.default_rng(3), 4), n=4)


def _model_with(joint: pin.JointModel, name: str) -> reljac.Robot:
    """A chain: universe -> revolute 'base' -> `joint` -> revolute 'wrist', with an offset tool frame."""
    model = pin.Model()
    base = model.addJoint(0, pin.JointModelRY(), pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.2, 0.3), np.array([0.1, 0, 0.2])),
                          "base")
    middle = model.addJoint(base, joint, pin.SE3(pin.rpy.rpyToMatrix(-0.4, 0.5, 0.1), np.array([0.3, 0.1, 0])), name)
    wrist = model.addJoint(middle, pin.JointModelRX(), pin.SE3(np.eye(3), np.array([0, 0.2, 0.1])), "wrist")
    for joint_id, frame in ((base, "base_link"), (wrist, "tool")):
        model.addFrame(pin.Frame(frame, joint_id, pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.2, 0.7), np.array([0.05, 0, 0.1])),
                                 pin.FrameType.OP_FRAME))
    model.lowerPositionLimit[:] = -2.0
    model.upperPositionLimit[:] = 2.0
    return reljac.Robot(model)


@pytest.mark.parametrize("joint", [pin.JointModelSpherical(), pin.JointModelPlanar(), pin.JointModelFreeFlyer(),
                                   pin.JointModelHX(), pin.JointModelUniversal(np.array([1.0, 0, 0]),
                                                                               np.array([0, 0.6, 0.8])),
                                   pin.JointModelRevoluteUnaligned(0.0, 0.6, 0.8)],
                         ids=["spherical", "planar", "free-flyer", "helical", "universal", "oblique revolute"])
def test_every_joint_type_matches(joint):
    """Helical and universal joints too (the core's own kinematics before Pinocchio's did not model
    them and fell back to the Python loop)."""
    robot = _model_with(joint, "middle")
    assert_same_as_pinocchio_layer(robot, [("base_link", "tool"), ("tool", "base_link"), ("universe", "tool")])


def test_backend_none_is_the_compiled_core_and_bad_backends_are_refused():
    robot = _model_with(pin.JointModelHX(), "screw")
    Q = random_configurations(robot, 3, 1)
    T, J = relative_kinematics(robot, Q, "base_link", "tool")
    T_c, J_c = _core.relative_kinematics(robot.model, robot.frame_id("base_link"), robot.frame_id("tool"), Q)
    np.testing.assert_array_equal(T, T_c)
    np.testing.assert_array_equal(J, J_c)
    nframes = robot.model.nframes
    with pytest.raises(ValueError, match=f"frame ids must be in 0..{nframes - 1}"):
        _core.relative_kinematics(robot.model, 0, nframes, Q)
    with pytest.raises(ValueError, match=r"Q must have shape \(N, nq\) with nq = 3"):
        _core.relative_kinematics(robot.model, 0, 1, Q[:, :2])
    with pytest.raises(ValueError, match="expected a pin.Model"):
        _core.relative_kinematics(robot.model.createData(), 0, 1, Q)



def test_the_benchs_threaded_reference_refuses_bad_input():
    """threaded_kinematics_seconds (reljac bench solve's measure of the machine's scaling) takes
    the same checked arguments as relative_kinematics, and workers >= 1."""
    robot = _model_with(pin.JointModelRZ(), "hinge")
    Q = random_configurations(robot, 8, 2)
    fa, fb = robot.frame_id("base_link"), robot.frame_id("tool")
    assert _core.threaded_kinematics_seconds(robot.model, fa, fb, Q, 3) >= 0.0
    with pytest.raises(ValueError, match="workers must be at least 1"):
        _core.threaded_kinematics_seconds(robot.model, fa, fb, Q, 0)
    with pytest.raises(ValueError, match=r"Q must have shape \(N, nq\)"):
        _core.threaded_kinematics_seconds(robot.model, fa, fb, Q[:, :0], 1)
    with pytest.raises(ValueError, match="frame ids must be in"):
        _core.threaded_kinematics_seconds(robot.model, fa, robot.model.nframes, Q, 1)

def test_matches_the_in_house_reference():
    from reljac.reference import ReferenceRobot
    from reljac.reference_map import LayerMap

    for name, (a, b) in (("dual_arm", ("left_tool", "right_tool")), ("hand", ("index_tip", "thumb_tip"))):
        robot = reljac.Robot.bundled(name)
        ref = ReferenceRobot.from_urdf(robot.urdf_path)
        layers = LayerMap(robot, ref)
        q_ref = ref.random_configuration(np.random.default_rng(5), n=50)
        T, J = relative_kinematics(robot, layers.q_to_pinocchio(q_ref), a, b, backend="compiled")
        np.testing.assert_allclose(T, ref.relative_placement(q_ref, a, b), rtol=0, atol=TOL)
        np.testing.assert_allclose(layers.columns(J), ref.relative_jacobian(q_ref, a, b), rtol=0, atol=TOL)


@pytest.mark.parametrize("rows", [[0, 1, 2], [3, 4, 5], [0, 1, 2, 3, 4, 5], [0, 2]])
def test_manipulability_matches_the_singular_values(rows):
    robot = reljac.Robot.bundled("dual_arm")
    Q = random_configurations(robot, 30, 7)
    fa, fb = robot.frame_id("left_tool"), robot.frame_id("right_tool")
    w = _core.manipulabilities(robot.model, fa, fb, Q, rows)
    _, J = python_relative_kinematics(robot, Q, fa, fb)
    expected = np.array([manipulability(Jq[rows]).index for Jq in J])
    np.testing.assert_allclose(w, expected, rtol=1e-9)


def test_more_rows_than_joints_is_singular():
    robot = reljac.Robot.bundled("planar_2link")
    Q = random_configurations(robot, 5, 0)
    w = _core.manipulabilities(robot.model, 0, robot.frame_id("tip"), Q, [0, 1, 2])
    np.testing.assert_array_equal(w, 0.0)


def test_threads_give_the_serial_answer():
    robot = reljac.Robot.bundled("dual_arm")
    Q = random_configurations(robot, 400, 11)
    serial = relative_kinematics(robot, Q, "left_tool", "right_tool")
    results = [None] * 4

    def work(i):
        results[i] = relative_kinematics(robot, Q, "left_tool", "right_tool")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for T, J in results:
        np.testing.assert_array_equal(T, serial[0])
        np.testing.assert_array_equal(J, serial[1])


def test_bad_input_is_refused_and_the_caller_array_kept():
    robot = reljac.Robot.bundled("dual_arm")
    Q = random_configurations(robot, 2, 0)
    before = Q.copy()
    with pytest.raises(reljac.ConfigurationError, match=r"expected \(N, 15\)"):
        relative_kinematics(robot, Q[:, :14], "left_tool", "right_tool")
    with pytest.raises(reljac.FrameNotFound, match="left_tol"):
        relative_kinematics(robot, Q, "left_tol", "right_tool")
    bad = Q.copy()
    bad[1, 3] = np.nan
    with pytest.raises(reljac.ConfigurationError, match="non-finite"):
        relative_kinematics(robot, bad, "left_tool", "right_tool")
    with pytest.raises(reljac.ConfigurationError, match="backend"):
        relative_kinematics(robot, Q, "left_tool", "right_tool", backend="fast")
    tree = reljac.Robot.bundled("tree30")
    q = tree.random_configuration(0)
    q[3:7] *= 2.0  # not a unit quaternion
    with pytest.raises(reljac.ConfigurationError, match="unit norm"):
        relative_kinematics(tree, q[None], "universe", "tail_site")
    np.testing.assert_array_equal(Q, before)

"""Forward kinematics and frame Jacobians of the reference: closed forms, an independent naive
forward kinematics, the two Jacobian constructions against each other, and batching."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from reljac.exceptions import URDFError
from reljac.reference import ReferenceRobot
from reljac.reference.poe import poe_body_jacobian

TESTS = Path(__file__).parent
HAND_MADE = ["planar_2link", "rotated_origins", "mimic", "deep_tree", "floating_joint", "planar_joint"]
BUNDLED = ["planar_2link", "dual_arm", "hand", "tree30"]  # written by another engineer; tested if present
ROBOTS = [pytest.param(TESTS / "reference_urdfs" / f"{name}.urdf", id=name) for name in HAND_MADE] + [
    pytest.param(TESTS.parent / "urdf" / f"{name}.urdf", id=f"bundled-{name}") for name in BUNDLED
]


def load(path: Path, floating_base: bool = False) -> ReferenceRobot:
    if not path.exists():
        pytest.skip(f"{path} not written yet")
    return ReferenceRobot.from_urdf(path, floating_base=floating_base)


@pytest.fixture(params=ROBOTS)
def robot(request) -> ReferenceRobot:
    return load(request.param)


@pytest.fixture(params=[False, True], ids=["fixed-base", "floating-base"])
def any_base_robot(request, robot) -> ReferenceRobot:
    return ReferenceRobot(robot.tree) if not request.param else load(Path(robot.tree.source), floating_base=True)


# -- planar 2-link closed form ---------------------------------------------------------------------
L1, L2 = 1.0, 0.8


@pytest.fixture(scope="module")
def planar() -> ReferenceRobot:
    return ReferenceRobot.from_urdf(TESTS / "reference_urdfs" / "planar_2link.urdf")


@pytest.mark.parametrize("q1, q2", [(0.0, 0.0), (0.3, 0.5), (-2.0, 1.2), (np.pi / 2, -np.pi / 2)])
def test_planar_tip_closed_form(planar, q1, q2):
    q = np.array([q1, q2])
    tip = planar.frame_placement(q, "tip")
    np.testing.assert_allclose(tip[:3, 3], [L1 * np.cos(q1) + L2 * np.cos(q1 + q2), L1 * np.sin(q1) + L2 * np.sin(q1 + q2), 0], atol=1e-15)
    np.testing.assert_allclose(tip[:3, :3], Rotation.from_euler("z", q1 + q2).as_matrix(), atol=1e-15)
    expected = np.zeros((6, 2))
    expected[0] = [-L1 * np.sin(q1) - L2 * np.sin(q1 + q2), -L2 * np.sin(q1 + q2)]
    expected[1] = [L1 * np.cos(q1) + L2 * np.cos(q1 + q2), L2 * np.cos(q1 + q2)]
    expected[5] = [1, 1]
    for method in ("cross", "poe"):
        np.testing.assert_allclose(planar.frame_jacobian(q, "tip", method=method), expected, atol=1e-15)
    # Measured in link1, the tip only feels joint2: p = (L1 + L2 cos q2, L2 sin q2), w = q2'.
    relative = np.zeros((6, 2))
    relative[:, 1] = [-L2 * np.sin(q2), L2 * np.cos(q2), 0, 0, 0, 1]
    np.testing.assert_allclose(planar.relative_jacobian(q, "link1", "tip"), relative, atol=1e-15)
    np.testing.assert_allclose(planar.relative_placement(q, "link1", "tip")[:2, 3], [L1 + L2 * np.cos(q2), L2 * np.sin(q2)], atol=1e-15)


def test_planar_joint_closed_form():
    """A planar joint: the child at ``O @ [Rz(t), (x, y, 0)]``; its velocity [vx, vy, w] is the
    child frame's twist in the child frame, so the LWA columns at the child's origin are its x and
    y axes (linear) and its z axis (angular)."""
    robot = ReferenceRobot.from_urdf(TESTS / "reference_urdfs" / "planar_joint.urdf")
    assert (robot.nq, robot.nv) == (7, 7) and robot.tree.joint_types["base_joint"] == "planar"
    origin = np.eye(4)
    origin[:3, :3] = Rotation.from_euler("xyz", [0.2, -0.1, 0.4]).as_matrix()
    origin[:3, 3] = [0.1, -0.2, 0.3]
    for x, y, t in [(0.0, 0.0, 0.0), (0.7, -1.3, 2.5), (-4.0, 0.2, -3.0)]:
        q = np.zeros(robot.nq)
        q[robot.q_slices["base_joint"]] = x, y, t
        motion = np.eye(4)
        motion[:3, :3] = Rotation.from_euler("z", t).as_matrix()
        motion[:3, 3] = x, y, 0.0
        pose = origin @ motion
        np.testing.assert_allclose(robot.frame_placement(q, "base"), pose, atol=1e-15)
        expected = np.zeros((6, 3))
        expected[:3, 0], expected[:3, 1], expected[3:, 2] = pose[:3, 0], pose[:3, 1], pose[:3, 2]
        for method in ("cross", "poe"):
            jacobian = robot.frame_jacobian(q, "base", method=method)
            np.testing.assert_allclose(jacobian[:, robot.v_slices["base_joint"]], expected, atol=1e-15)


@pytest.mark.parametrize("axis", ["1 0 0", "0 0 -1", "0 0 0", "0.1 0 1"])
def test_a_planar_joint_whose_normal_is_not_z_is_refused(axis):
    """Pinocchio moves a planar joint in its frame's x-y plane whatever the axis; the reference
    refuses another normal rather than model a different joint."""
    text = (TESTS / "reference_urdfs" / "planar_joint.urdf").read_text().replace('<axis xyz="0 0 1"/>', f'<axis xyz="{axis}"/>')
    with pytest.raises(URDFError, match=r"joint 'base_joint' is planar with <axis xyz=.*\(normal \+z\): give axis 0 0 1"):
        ReferenceRobot.from_urdf_string(text)


# -- forward kinematics against a naive product ------------------------------------------------------
def naive_placement(robot: ReferenceRobot, q: np.ndarray, body: int) -> np.ndarray:
    """T_w,body as the plain product of joint origins and joint motions, one configuration, with scipy."""
    chain = []
    while body > 0:
        chain.append(robot.tree.bodies[body])
        body = robot.tree.bodies[body].parent
    pose = np.eye(4)
    for spec in reversed(chain):
        motion = np.eye(4)
        if spec.joint_type == "floating":
            q7 = q[spec.q_index : spec.q_index + 7]
            motion[:3, :3] = Rotation.from_quat(q7[3:]).as_matrix()
            motion[:3, 3] = q7[:3]
        elif spec.joint_type == "planar":  # [x, y, theta] in the joint frame's x-y plane
            x, y, theta = q[spec.q_index : spec.q_index + 3]
            motion[:3, :3] = Rotation.from_euler("z", theta).as_matrix()
            motion[:3, 3] = x, y, 0.0
        elif spec.joint_type != "fixed":
            value = spec.multiplier * q[spec.q_index] + spec.offset
            if spec.joint_type == "prismatic":
                motion[:3, 3] = value * spec.axis
            else:
                motion[:3, :3] = Rotation.from_rotvec(value * spec.axis).as_matrix()
        pose = pose @ spec.origin @ motion
    return pose


@pytest.mark.slow
def test_forward_kinematics_matches_a_naive_product(any_base_robot):
    robot = any_base_robot
    for q in robot.random_configuration(np.random.default_rng(1), 3):
        placements = robot.forward_kinematics(q)
        assert list(placements) == list(robot.frame_names)
        for name, placement in placements.items():
            expected = naive_placement(robot, q, robot.tree.frame_body(name))
            np.testing.assert_allclose(placement, expected, atol=1e-12, err_msg=name)


def test_product_of_exponentials_pass_gives_the_same_placements(robot):
    q = robot.random_configuration(np.random.default_rng(2), 5)
    kinematics = robot.kinematics(q)
    for name in robot.frame_names:
        _, pose = poe_body_jacobian(robot.tree, kinematics.q, robot.tree.frame_body(name))
        np.testing.assert_allclose(pose, kinematics.placement(name), atol=1e-12, err_msg=name)


def test_mimic_joint_follows_its_leader():
    robot = ReferenceRobot.from_urdf(TESTS / "reference_urdfs" / "mimic.urdf")
    q = robot.random_configuration(np.random.default_rng(3))
    wrist = q[robot.idx_q("wrist_joint")]
    knuckle = robot.relative_placement(q, "palm", "knuckle")
    expected = Rotation.from_euler("x", 0.2).as_matrix() @ Rotation.from_euler("x", -1.5 * wrist + 0.3).as_matrix()
    np.testing.assert_allclose(knuckle[:3, :3], expected, atol=1e-14)
    np.testing.assert_allclose(knuckle[:3, 3], [0, 0.03, 0.08], atol=1e-15)
    finger = q[robot.idx_q("finger_left_joint")]
    right = robot.relative_placement(q, "palm", "finger_right")
    np.testing.assert_allclose(right[:3, 3], [0, -0.02, 0.1] + Rotation.from_euler("z", 0.3).apply([0, -finger, 0]), atol=1e-15)


# -- the two Jacobian constructions agree --------------------------------------------------------
def test_cross_product_and_product_of_exponentials_agree(any_base_robot):
    robot = any_base_robot
    q = robot.random_configuration(np.random.default_rng(4), 8)
    kinematics = robot.kinematics(q)
    for name in robot.frame_names:
        cross = kinematics.jacobian(name, method="cross")
        poe = kinematics.jacobian(name, method="poe")
        assert cross.shape == (8, 6, robot.nv)
        np.testing.assert_allclose(cross, poe, rtol=0, atol=1e-10, err_msg=name)
        np.testing.assert_allclose(
            kinematics.body_jacobian(name, method="cross"), kinematics.body_jacobian(name, method="poe"), rtol=0, atol=1e-10
        )


def test_body_jacobian_is_the_world_aligned_one_rotated_into_the_frame(robot):
    q = robot.random_configuration(np.random.default_rng(5))
    for name in robot.frame_names[-3:]:
        rotation = robot.frame_placement(q, name)[:3, :3]
        world = robot.frame_jacobian(q, name)
        local = robot.body_jacobian(q, name)
        np.testing.assert_allclose(local[:3], rotation.T @ world[:3], atol=1e-14)
        np.testing.assert_allclose(local[3:], rotation.T @ world[3:], atol=1e-14)


def test_universe_and_root_frames_do_not_move(robot):
    q = robot.random_configuration(np.random.default_rng(6), 2)
    np.testing.assert_array_equal(robot.frame_jacobian(q, "universe"), 0)
    root = robot.tree.bodies[1].link
    np.testing.assert_array_equal(robot.frame_jacobian(q, root), 0)


# -- batching -------------------------------------------------------------------------------------
def test_batched_results_equal_per_configuration_results(any_base_robot):
    robot = any_base_robot
    q = robot.random_configuration(np.random.default_rng(7), 4)
    frames = robot.frame_names
    a, b, c = frames[-1], frames[len(frames) // 2], frames[len(frames) // 3]
    batched = robot.kinematics(q)
    for i in range(len(q)):
        single = robot.kinematics(q[i])
        np.testing.assert_allclose(batched.placement(b)[i], single.placement(b), rtol=0, atol=1e-15)
        np.testing.assert_allclose(batched.relative_placement(a, b)[i], single.relative_placement(a, b), rtol=0, atol=1e-14)
        for method in ("cross", "poe"):
            np.testing.assert_allclose(batched.jacobian(a, method=method)[i], single.jacobian(a, method=method), rtol=0, atol=1e-14)
            for expressed_in in ("a", "b", "world", c):
                np.testing.assert_allclose(
                    batched.relative_jacobian(a, b, expressed_in, method=method)[i],
                    single.relative_jacobian(a, b, expressed_in, method=method),
                    rtol=0,
                    atol=1e-14,
                )
    assert robot.relative_jacobian(q[0], a, b).shape == (6, robot.nv)
    assert robot.relative_jacobian(q, a, b).shape == (4, 6, robot.nv)
    assert robot.relative_placement(q, a, b).shape == (4, 4, 4)

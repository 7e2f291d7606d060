"""reljac.mass: the whole robot's centre of mass with the bodies a locked floating base welds to the
world, against Pinocchio's centerOfMass and jacobianCenterOfMass on the full model at the same
posture, and finite differences in a frame."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.mass import mass_split, total_mass


@pytest.fixture(scope="module")
def talos():
    full = reljac.Robot.load("talos")
    return full, full.locked(["root_joint", "leg_*"])


def full_configuration(full: reljac.Robot, reduced: reljac.Robot, q: np.ndarray) -> np.ndarray:
    """The full robot's q: its reference configuration, with the reduced robot's joints set from q."""
    q_full = full.reference_configuration()
    for name, value in reduced.joint_values(q).items():
        joint = full.model.joints[full.model.getJointId(name)]
        q_full[joint.idx_q:joint.idx_q + joint.nq] = value
    return q_full


def test_locked_bodies_keep_their_mass_in_the_centre_of_mass(talos, rng):
    full, upper = talos
    moving, welded, _ = mass_split(upper.model)
    assert welded > 40 and moving < 50  # Pinocchio alone would see only the moving part
    assert total_mass(upper.model) == pytest.approx(pin.computeTotalMass(full.model), rel=1e-12)
    for _ in range(3):
        q = upper.random_configuration(rng)
        q_full = full_configuration(full, upper, q)
        data = full.model.createData()
        c = pin.centerOfMass(full.model, data, q_full)
        J = pin.jacobianCenterOfMass(full.model, data, q_full)
        kin = reljac.Kinematics(upper, q)
        np.testing.assert_allclose(kin.center_of_mass(), c, atol=1e-12)
        columns = [full.model.joints[full.model.getJointId(name)].idx_v for name in upper.joint_names]
        np.testing.assert_allclose(kin.center_of_mass_jacobian(), J[:, columns], atol=1e-12)


def test_without_welded_bodies_it_is_pinocchios(talos, rng):
    full, _ = talos
    q = full.random_configuration(rng)
    kin = reljac.Kinematics(full, q)
    data = full.model.createData()
    c = pin.centerOfMass(full.model, data, q)
    pin.framesForwardKinematics(full.model, data, q)
    T = data.oMf[full.model.getFrameId("left_sole_link")]
    np.testing.assert_allclose(kin.center_of_mass("left_sole_link"), T.rotation.T @ (c - T.translation), atol=1e-12)
    np.testing.assert_allclose(kin.center_of_mass_jacobian(), pin.jacobianCenterOfMass(full.model, data, q),
                               atol=1e-12)


@pytest.mark.parametrize("frame", ["arm_left_7_link", "torso_2_link", "universe"])
def test_the_jacobian_in_a_frame_matches_finite_differences(talos, rng, frame):
    _, upper = talos
    q = upper.random_configuration(rng)
    J = reljac.Kinematics(upper, q).center_of_mass_jacobian(frame)
    eps, J_fd = 1e-6, np.empty_like(J)
    for i in range(upper.nv):
        dv = np.zeros(upper.nv)
        dv[i] = eps
        plus = reljac.Kinematics(upper, pin.integrate(upper.model, q, dv)).center_of_mass(frame)
        minus = reljac.Kinematics(upper, pin.integrate(upper.model, q, -dv)).center_of_mass(frame)
        J_fd[:, i] = (plus - minus) / (2 * eps)
    np.testing.assert_allclose(J, J_fd, atol=1e-7)
    T = reljac.Kinematics(upper, q).placement(frame)
    np.testing.assert_allclose(reljac.Kinematics(upper, q).center_of_mass(frame),
                               T.rotation.T @ (reljac.Kinematics(upper, q).center_of_mass() - T.translation), atol=1e-12)


def test_a_pickled_mimic_robot_keeps_the_mass_fixed_to_the_world(rng):
    """An adversarial pass: a Panda (mimic fingers) not rebuilt from its URDF (locked, or a given
    pin.Model) lost panda_link0's 0.63 kg (Pinocchio's inertias[0]) and its joints' damping when
    pickled (expand_mimic copied the bodies of joints 1.. only): the CoM moved by 1 cm."""
    import pickle

    panda = reljac.Robot.load("panda")
    for robot in (panda.locked({"panda_joint4": -0.5}), reljac.Robot.from_pinocchio(panda.model)):
        q = robot.random_configuration(rng)
        again = pickle.loads(pickle.dumps(robot))
        assert total_mass(again.model) == pytest.approx(total_mass(robot.model), rel=1e-15)
        assert total_mass(robot.without_mimic().model) == pytest.approx(total_mass(robot.model), rel=1e-15)
        np.testing.assert_array_equal(np.asarray(again.model.damping), np.asarray(robot.model.damping))
        np.testing.assert_allclose(reljac.center_of_mass(again, q), reljac.center_of_mass(robot, q), atol=1e-15)


def test_the_com_jacobian_of_a_robot_with_one_velocity(rng):
    """Pinocchio answers (3,) for nv = 1: the world Jacobian was (3,) and the one in a frame a bare
    numpy broadcasting error."""
    arm = reljac.Robot.load("ur5")
    one = arm.locked([n for n in arm.joint_names if n != "wrist_3_joint"], arm.random_configuration(rng))
    assert one.nv == 1
    q, h = one.random_configuration(rng), 1e-6
    for frame in ("universe", "tool0"):
        J = reljac.center_of_mass_jacobian(one, q, frame)
        fd = (reljac.center_of_mass(one, q + h, frame) - reljac.center_of_mass(one, q - h, frame)) / (2 * h)
        assert J.shape == (3, 1)
        np.testing.assert_allclose(J[:, 0], fd, atol=1e-8)

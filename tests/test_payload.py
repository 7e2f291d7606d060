"""Payloads (Robot.with_payload, reljac.payload): a carried mass counted in the centre of mass, its
Jacobian, the CoM task and the support region, on both backends.

Oracles: the centre of mass summed body by body from Pinocchio's forward kinematics with the
payload as a point mass at T_wf * offset (tests/balance_oracles.py, which never reads the payload
robot's model), its finite differences along pin.integrate, the closed form (M c + m p) / (M + m).
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pinocchio as pin
import pytest
from balance_helpers import L, R, bodies_com, contact_points, distance_inside, reaching_run
from helpers import BACKENDS

import reljac
from reljac import Kinematics, Robot
from reljac.ik import CoMTask, Controller, PostureTask, compiled_available
from reljac.ik.limits.support import OVERSHOOT


def frame_point(robot: Robot, q: np.ndarray, frame: str, offset) -> np.ndarray:
    """T_wf * offset (3,) [m] by pin.framesForwardKinematics."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return data.oMf[robot.model.getFrameId(frame)].act(np.asarray(offset, dtype=float))


def test_the_centre_of_mass_is_the_closed_form_with_the_payload(dual_arm, rng):
    """c' = (M c + m p) / (M + m), M and c of the robot alone (its torso, welded to the world, too)."""
    offset, m = np.array([0.05, -0.02, 0.1]), 3.5
    carrying = dual_arm.with_payload(m, "left_tool", offset=offset)
    for _ in range(3):
        q = dual_arm.random_configuration(rng)
        M, c = bodies_com(dual_arm.model, q)
        p = frame_point(dual_arm, q, "left_tool", offset)
        expected = (M * c + m * p) / (M + m)
        np.testing.assert_allclose(Kinematics(carrying, q).center_of_mass(), expected, atol=1e-12)
        np.testing.assert_allclose(reljac.center_of_mass(carrying, q), expected, atol=1e-12)
        assert np.linalg.norm(expected - c) > 1e-3  # the payload does move it
    assert reljac.mass.total_mass(carrying.model) == pytest.approx(M + m, abs=1e-12)


def test_a_payload_on_a_body_welded_to_the_world_counts_too(dual_arm, rng):
    """dual_arm's torso is joint 0's body (reljac.mass): a payload on it joins the welded mass."""
    torso = dual_arm.model.frames[1].name if dual_arm.model.frames[1].parentJoint == 0 else "universe"
    offset, m = np.array([0.3, 0.0, 0.2]), 20.0
    carrying = dual_arm.with_payload(m, torso, offset=offset)
    q = dual_arm.random_configuration(rng)
    M, c = bodies_com(dual_arm.model, q, extra=[(m, frame_point(dual_arm, q, torso, offset))])
    np.testing.assert_allclose(Kinematics(carrying, q).center_of_mass(), c, atol=1e-12)
    # fixed to the world: it adds to the mass and shrinks the Jacobian by M_robot / (M_robot + m)
    np.testing.assert_allclose(Kinematics(carrying, q).center_of_mass_jacobian(),
                               (M - m) / M * Kinematics(dual_arm, q).center_of_mass_jacobian(), atol=1e-12)


def test_the_jacobian_is_the_finite_differences_of_the_combined_centre_of_mass(talos, rng):
    offset, m = np.array([0.1, -0.2, 0.05]), 8.0
    carrying = talos.with_payload(m, L, offset=offset, inertia=np.diag([0.1, 0.2, 0.3]))
    q = talos.random_configuration(rng)
    J = Kinematics(carrying, q).center_of_mass_jacobian()
    eps = 1e-6
    J_fd = np.zeros((3, talos.nv))
    for k in range(talos.nv):
        dv = np.zeros(talos.nv)
        dv[k] = eps
        plus, minus = (pin.integrate(talos.model, q, s * dv) for s in (1.0, -1.0))
        c_plus, c_minus = (bodies_com(talos.model, x, extra=[(m, frame_point(talos, x, L, offset))])[1]
                           for x in (plus, minus))
        J_fd[:, k] = (c_plus - c_minus) / (2 * eps)
    np.testing.assert_allclose(J, J_fd, atol=1e-8)
    # and in another frame: J_ac = R_aw (J_c - [v_a + w_a x (c - p_a)]) as Kinematics documents
    c = Kinematics(carrying, q).center_of_mass("left_sole_link")
    T = Kinematics(talos, q).placement("left_sole_link")
    np.testing.assert_allclose(c, T.actInv(bodies_com(talos.model, q, extra=[(m, frame_point(talos, q, L, offset))])[1]),
                               atol=1e-12)


def test_the_original_robot_is_unchanged_and_payloads_add_up(dual_arm, rng):
    before = [pin.Inertia(i) for i in dual_arm.model.inertias]
    q = dual_arm.random_configuration(rng)
    c_before = Kinematics(dual_arm, q).center_of_mass()
    one = dual_arm.with_payload(2.0, "left_tool")
    two = one.with_payload(3.0, "right_tool", offset=[0.0, 0.0, 0.1])
    assert all(a.isApprox(b, 0.0) for a, b in zip(before, dual_arm.model.inertias, strict=True))
    np.testing.assert_array_equal(Kinematics(dual_arm, q).center_of_mass(), c_before)
    assert dual_arm.payloads == () and len(one.payloads) == 1 and len(two.payloads) == 2
    assert [p.frame for p in two.payloads] == ["left_tool", "right_tool"]
    _, c = bodies_com(dual_arm.model, q, extra=[(2.0, frame_point(dual_arm, q, "left_tool", [0, 0, 0])),
                                                (3.0, frame_point(dual_arm, q, "right_tool", [0, 0, 0.1]))])
    np.testing.assert_allclose(Kinematics(two, q).center_of_mass(), c, atol=1e-12)
    # the rest of the robot is the same: frames, joints, limits
    assert two.frame_names == dual_arm.frame_names and two.joint_names == dual_arm.joint_names
    np.testing.assert_array_equal(two.upper_limits, dual_arm.upper_limits)


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy, lambda r: pickle.loads(pickle.dumps(r))],
                         ids=["copy", "deepcopy", "pickle"])
def test_copies_and_pickles_keep_the_payload(dual_arm, copier, rng):
    carrying = dual_arm.with_payload(4.0, "right_tool", offset=[0.1, 0.0, 0.0])
    again = copier(carrying)
    q = dual_arm.random_configuration(rng)
    np.testing.assert_allclose(Kinematics(again, q).center_of_mass(), Kinematics(carrying, q).center_of_mass(),
                               atol=1e-12)
    assert again.payloads == carrying.payloads


def test_a_locked_robot_keeps_the_payload(talos):
    carrying = talos.with_payload(5.0, L, offset=[0.0, 0.0, -0.1])
    upper = carrying.locked(["root_joint", "leg_*"])
    q_full = talos.reference_configuration()
    q = upper.reference_configuration()
    _, c = bodies_com(talos.model, q_full, extra=[(5.0, frame_point(talos, q_full, L, [0.0, 0.0, -0.1]))])
    np.testing.assert_allclose(Kinematics(upper, q).center_of_mass(), c, atol=1e-10)
    assert upper.payloads[0].frame == L and upper.model.frames[upper.payloads[0].frame_id].name == L


@pytest.mark.parametrize("kwargs, error, words", [
    ({"mass": 0.0}, reljac.ConfigurationError, r"payload mass \[kg\] must be a number of kilograms in \(0"),
    ({"mass": -1.0}, reljac.ConfigurationError, "payload mass"),
    ({"mass": float("nan")}, reljac.ConfigurationError, "payload mass"),
    ({"mass": float("inf")}, reljac.ConfigurationError, "payload mass"),
    ({"mass": "5"}, reljac.ConfigurationError, "payload mass"),
    ({"mass": True}, reljac.ConfigurationError, "payload mass"),
    ({"mass": 1e12}, reljac.ConfigurationError, "payload mass"),
    ({"frame": "left_tol"}, reljac.FrameNotFound, "left_tol"),
    ({"frame": None}, reljac.ConfigurationError, "payload frame"),
    ({"offset": [0.1, 0.2]}, reljac.ConfigurationError, "payload offset"),
    ({"offset": [0.1, np.nan, 0.0]}, reljac.ConfigurationError, "payload offset"),
    ({"offset": [1e5, 0.0, 0.0]}, reljac.ConfigurationError, "payload offset"),
    ({"offset": "up"}, reljac.ConfigurationError, "payload offset"),
    ({"inertia": np.eye(2)}, reljac.ConfigurationError, "payload inertia"),
    ({"inertia": [[1, 2, 0], [0, 1, 0], [0, 0, 1]]}, reljac.ConfigurationError, "symmetric"),
    ({"inertia": -np.eye(3)}, reljac.ConfigurationError, "positive semi-definite"),
    ({"inertia": np.full((3, 3), np.inf)}, reljac.ConfigurationError, "payload inertia"),
])
def test_bad_payloads_are_refused_in_one_line(dual_arm, kwargs, error, words):
    given = {"mass": 2.0, "frame": "left_tool", **kwargs}
    with pytest.raises(error, match=words) as caught:
        dual_arm.with_payload(**given)
    assert isinstance(caught.value, ValueError) and "\n" not in str(caught.value)
    assert dual_arm.payloads == ()


def test_a_callers_arrays_are_not_kept_or_changed(dual_arm):
    offset, inertia = np.array([0.1, 0.0, 0.0]), np.diag([0.1, 0.1, 0.1])
    carrying = dual_arm.with_payload(1.0, "left_tool", offset=offset, inertia=inertia)
    offset[0], inertia[0, 0] = 5.0, 7.0
    np.testing.assert_array_equal(carrying.payloads[0].offset, [0.1, 0.0, 0.0])
    assert carrying.payloads[0].inertia[0, 0] == 0.1


@pytest.mark.skipif(not compiled_available(), reason="compiled core not built")
def test_the_compiled_step_counts_the_payload(dual_arm):
    """One step of a CoM task and a posture: the compiled core and the Python solver agree on the
    robot carrying, and differ from the step without the payload."""
    q = dual_arm.neutral() + 0.3

    def step(robot, backend):
        com = CoMTask(robot, gain=10.0)
        com.set_target(Kinematics(robot, q).center_of_mass() + [0.05, 0.02, -0.03])
        posture = PostureTask(robot, gain=1.0)
        posture.set_target(q)
        return Controller(robot, [[com], [posture]], dt=0.01, backend=backend).step(q)

    carrying = dual_arm.with_payload(6.0, "left_tool", offset=[0.0, 0.05, 0.1])
    python, compiled = step(carrying, "python"), step(carrying, "compiled")
    np.testing.assert_allclose(compiled, python, atol=1e-10)
    assert np.abs(step(dual_arm, "compiled") - compiled).max() > 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_talos_carrying_a_box_keeps_the_combined_centre_of_mass_in_the_support_region(talos, backend):
    """A 10 kg box between the grippers (attached to the left one): the reach pushes the combined
    centre of mass to the shrunk region's edge, never past it by more than the documented bound
    (reljac.ik.limits.support: OVERSHOOT and the second-order drift), while the robot's own centre of
    mass stays farther inside: the box is what the limit held."""
    q0 = talos.reference_configuration()
    kin = Kinematics(talos, q0)
    middle = 0.5 * (kin.placement(L).translation + kin.placement(R).translation)
    offset, box = kin.placement(L).actInv(middle), 10.0
    carrying = talos.with_payload(box, L, offset=offset)
    qs, stack = reaching_run(carrying, talos, backend, [1.0, 0.0, 0.0], 120, com_priority="none")
    margin = stack.support.margin
    combined, alone = [], []
    for q in qs:
        points = contact_points(talos.model, q, stack.contacts)
        _, c = bodies_com(talos.model, q, extra=[(box, frame_point(talos, q, L, offset))])
        combined.append(distance_inside(points, c) - margin)  # to the shrunk edge [m]
        alone.append(distance_inside(points, bodies_com(talos.model, q)[1]) - margin)
    combined, alone = np.array(combined), np.array(alone)
    assert combined[0] > 0.05  # started well inside
    assert combined.min() > -(OVERSHOOT + 10e-6), combined.min()
    reached = np.flatnonzero(combined < 1e-4)
    assert len(reached) > 20  # the edge was reached and held
    assert np.all(alone[reached] > combined[reached] + 5e-3)  # the box took the robot's share of the margin

"""Manipulability: the planar 2-link closed form, numpy's SVD and determinant on the same
Jacobians, samples near singularities, and the workspace summary on both backends."""

from __future__ import annotations

import numpy as np
import pytest

import reljac
from reljac import FrameNotFound, TaskError
from reljac.analysis import frame_manipulability, manipulability, relative_manipulability
from reljac.workspace import format_workspace_summary, reference_to_pinocchio_q, workspace_summary

L1, L2 = 1.0, 0.8  # planar_2link link lengths [m]


def test_planar_2link_index_is_l1_l2_abs_sin_q2(planar, rng):
    qs = [planar.random_configuration(rng) for _ in range(10)]
    qs += [np.array([0.4, 1e-9]), np.array([-1.0, np.pi - 1e-7]), np.array([2.0, 0.0])]  # at / near singularities
    for q in qs:
        expected = L1 * L2 * abs(np.sin(q[1]))
        for m in (relative_manipulability(planar, q, "base_link", "tip", part=(0, 1)),
                  frame_manipulability(planar, q, "tip", part=(0, 1))):
            np.testing.assert_allclose(m.index, expected, rtol=1e-9, atol=1e-15)


def test_planar_position_part_has_three_rows_for_two_joints_so_it_is_singular(planar):
    m = relative_manipulability(planar, np.array([0.3, 1.2]), "base_link", "tip", part="position")
    assert m.index == 0.0 and m.singular_values.shape == (3,) and m.singular_values[-1] == 0.0
    assert m.condition_number == np.inf


@pytest.mark.parametrize("part, rows", [("position", [0, 1, 2]), ("orientation", [3, 4, 5]),
                                        ("full", list(range(6))), ((0, 4), [0, 4])])
def test_singular_values_index_and_condition_match_numpy(dual_arm, part, rows, rng):
    for _ in range(3):
        q = dual_arm.random_configuration(rng)
        J = reljac.relative_jacobian(dual_arm, q, "left_tool", "right_tool")[rows]
        m = relative_manipulability(dual_arm, q, "left_tool", "right_tool", part=part)
        np.testing.assert_allclose(m.singular_values, np.linalg.svd(J, compute_uv=False), rtol=1e-12)
        np.testing.assert_allclose(m.index, np.sqrt(np.linalg.det(J @ J.T)), rtol=1e-9)
        np.testing.assert_allclose(m.condition_number, np.linalg.cond(J), rtol=1e-9)
        # the directions are the principal axes of J J^T, with eigenvalues sigma^2
        JJt = J @ J.T
        for i, s in enumerate(m.singular_values):
            np.testing.assert_allclose(JJt @ m.directions[:, i], s**2 * m.directions[:, i], atol=1e-10)


def test_index_near_a_singularity_is_accurate_where_det_is_not():
    J = np.diag([1.0, 1e-9, 3.0])  # sqrt(det(J J^T)) = 3e-9; det squares it to ~1e-17
    assert manipulability(J).index == pytest.approx(3e-9, rel=1e-12)
    tiny = np.diag([1e-120, 1e-120, 1.0])  # det(J J^T) underflows to 0; the product of sigmas does not
    assert np.linalg.det(tiny @ tiny.T) == 0.0
    assert manipulability(tiny).index == pytest.approx(1e-240, rel=1e-12)


def test_singular_values_do_not_depend_on_the_axes(dual_arm, rng):
    q = dual_arm.random_configuration(rng)
    values = [relative_manipulability(dual_arm, q, "left_tool", "right_tool", part="full", expressed_in=c)
              .singular_values for c in ("a", "b", "world", "torso")]
    for s in values[1:]:
        np.testing.assert_allclose(s, values[0], rtol=1e-10)


def test_absolute_task_is_the_relative_task_from_the_world(dual_arm, rng):
    q = dual_arm.random_configuration(rng)
    a = frame_manipulability(dual_arm, q, "left_tool", part="full")
    b = relative_manipulability(dual_arm, q, "universe", "left_tool", part="full")
    np.testing.assert_allclose(a.singular_values, b.singular_values, rtol=1e-12)


@pytest.mark.parametrize("name", ["tree30", "hand", "dual_arm"])
def test_reference_configurations_map_to_the_same_placements(name, rng):
    from reljac.reference import ReferenceRobot

    robot = reljac.Robot.bundled(name)
    ref = ReferenceRobot.from_urdf(robot.urdf_path, floating_base=robot.floating_base)
    q_ref = ref.random_configuration(rng, n=5)
    qs = reference_to_pinocchio_q(robot, ref, q_ref)
    frames = [f for f in ref.frame_names if f != "universe"][-6:]
    for q_r, q in zip(q_ref, qs, strict=True):
        robot.validate_q(q)
        kin = reljac.Kinematics(robot, q)
        for frame in frames:
            np.testing.assert_allclose(ref.frame_placement(q_r, frame), kin.placement(frame).homogeneous, atol=1e-12)


@pytest.mark.parametrize("backend", ["reference", "pinocchio"])
def test_workspace_summary_reports_consistent_samples(planar, backend):
    summary = workspace_summary(planar, "base_link", "tip", samples=300, seed=3, part=(0, 1), worst=4,
                                backend=backend)
    assert summary.backend == backend and summary.samples == 300
    for stats in (summary.index, summary.smallest_singular_value, summary.condition_number):
        values = list(stats.values())
        assert values == sorted(values)
    assert summary.index["max"] <= L1 * L2 + 1e-12
    worst = summary.closest_to_singular
    assert len(worst) == 4
    assert [w.smallest_singular_value for w in worst] == sorted(w.smallest_singular_value for w in worst)
    assert worst[0].smallest_singular_value == summary.smallest_singular_value["min"]
    for w in worst:  # each reported q reproduces its numbers, and the closed form
        m = relative_manipulability(planar, w.q, "base_link", "tip", part=(0, 1))
        np.testing.assert_allclose(m.smallest_singular_value, w.smallest_singular_value, rtol=1e-10)
        np.testing.assert_allclose(w.index, L1 * L2 * abs(np.sin(w.q[1])), rtol=1e-9)


@pytest.mark.slow
def test_workspace_summary_on_the_dual_arm_with_both_backends(dual_arm):
    results = {}
    for backend in ("reference", "pinocchio"):
        s = workspace_summary(dual_arm, "left_tool", "right_tool", samples=400, seed=0, backend=backend)
        w = s.closest_to_singular[0]
        m = relative_manipulability(dual_arm, w.q, "left_tool", "right_tool")
        np.testing.assert_allclose(m.smallest_singular_value, w.smallest_singular_value, rtol=1e-10)
        assert np.all(w.q >= dual_arm.lower_limits) and np.all(w.q <= dual_arm.upper_limits)
        results[backend] = s.index["median"]
    # independent samples of one distribution: medians within 15 % of each other
    assert results["reference"] == pytest.approx(results["pinocchio"], rel=0.15)


def test_the_reference_backend_says_why_it_cannot_analyse_a_locked_robot(dual_arm):
    """A robot whose joints the URDF's reference does not have (here one locked): a TaskError (a
    ValueError) saying what the reference needs and which backends work, not a bare ReljacError."""
    locked = dual_arm.locked(["torso_yaw"])
    with pytest.raises(TaskError, match="needs the same joints as the robot.*use backend='auto' or 'pinocchio'"):
        workspace_summary(locked, "left_tool", "right_tool", samples=10, backend="reference")
    assert workspace_summary(locked, "left_tool", "right_tool", samples=10, backend="auto").index["median"] > 0


def test_workspace_summary_on_a_floating_base_with_continuous_joints():
    robot = reljac.Robot.bundled("tree30")
    s = workspace_summary(robot, "left_hand_site", "right_hand_site", samples=100, seed=1, part="full", worst=2)
    for w in s.closest_to_singular:
        m = relative_manipulability(robot, w.q, "left_hand_site", "right_hand_site", part="full")
        np.testing.assert_allclose(m.singular_values[-1], w.smallest_singular_value, rtol=1e-10)


def test_format_workspace_summary_shows_the_numbers(planar):
    s = workspace_summary(planar, "base_link", "tip", samples=50, seed=0, part=(0, 1), worst=2)
    text = format_workspace_summary(s)
    assert "tip relative to base_link" in text and "rows vx, vy" in text and "planar_2link" in text
    assert f"{s.index['median']:.4g}" in text
    assert text.count("q = [") == 2


def test_bad_inputs_raise_clear_errors(planar):
    q = np.zeros(2)
    with pytest.raises(TaskError, match="part must be one of"):
        relative_manipulability(planar, q, "base_link", "tip", part="linear")
    with pytest.raises(TaskError, match="distinct integers"):
        relative_manipulability(planar, q, "base_link", "tip", part=(0, 0))
    with pytest.raises(TaskError, match="non-empty"):
        manipulability(np.zeros((0, 3)))
    with pytest.raises(TaskError, match="samples"):
        workspace_summary(planar, "base_link", "tip", samples=0)
    with pytest.raises(TaskError, match="backend"):
        workspace_summary(planar, "base_link", "tip", samples=5, backend="jax")
    with pytest.raises(FrameNotFound, match="did you mean 'tip'"):
        workspace_summary(planar, "base_link", "tipp", samples=5)


def test_workspace_summary_takes_any_robot_form_and_names_a_wrong_one():
    """It read robot.frame_id before as_robot: a pin.Model, a RobotWrapper or a string gave a bare
    AttributeError (the other analysis functions take the first two, and name the last)."""
    from pinocchio.robot_wrapper import RobotWrapper

    from reljac.exceptions import ConfigurationError
    from reljac.workspace import workspace_summary

    arm = reljac.Robot.bundled("dual_arm")
    wrapper = RobotWrapper.BuildFromURDF(str(arm.urdf_path), [str(arm.urdf_path.parent)])
    expected = workspace_summary(arm, "left_tool", "right_tool", samples=50, seed=2, backend="pinocchio")
    for given in (arm.model, wrapper):
        got = workspace_summary(given, "left_tool", "right_tool", samples=50, seed=2, backend="pinocchio")
        assert got.index == expected.index
    with pytest.raises(ConfigurationError, match="a robot is a reljac.Robot, a pin.Model or a pin.RobotWrapper, "
                                                 "not str"):
        workspace_summary("dual_arm", "left_tool", "right_tool")


@pytest.mark.parametrize("joint", ["SphericalZYX", "Universal"])
def test_jacobian_rates_pinocchio_gets_wrong_are_refused(joint):
    """Pinocchio 4.1's dJ of these joints (given models only: URDF has none) is off its finite
    differences by 0.6-1.2: refused in one line, the Jacobian itself still answered."""
    import pinocchio as pin

    from reljac.exceptions import ConfigurationError

    model = pin.Model()
    kind = pin.JointModelSphericalZYX() if joint == "SphericalZYX" else \
        pin.JointModelUniversal(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    j = model.addJoint(0, kind, pin.SE3.Identity(), "j")
    model.appendBodyToJoint(j, pin.Inertia.Random(), pin.SE3.Identity())
    model.addFrame(pin.Frame("tip", j, pin.SE3(np.eye(3), np.array([0.2, 0.1, 0.3])), pin.FrameType.OP_FRAME), False)
    robot = reljac.Robot(model)
    q, v = np.full(robot.nq, 0.4), np.linspace(0.5, -1.0, robot.nv)
    kin = reljac.Kinematics(robot, q, v)
    assert kin.relative_jacobian("universe", "tip").shape == (6, robot.nv)
    with pytest.raises(ConfigurationError, match=f"joint 'j' .JointModel{joint}.: Pinocchio's are wrong for it"):
        kin.relative_jacobian_time_variation("universe", "tip")

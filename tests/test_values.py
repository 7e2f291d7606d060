"""Values that numpy would silently convert (booleans, text, complex numbers) and finite values so
large that products overflow: a clear reljac error or a finite answer, never a wrong number."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import reljac
import reljac.analysis
import reljac.constraints
import reljac.maps
from reljac.exceptions import ConfigurationError, TaskError
from reljac.poses import as_se3
from reljac.validation import real_array


@pytest.mark.parametrize("q", [
    np.array([True, False]), [True, False], [True, 0.5], (np.bool_(True), 0.2), ["0.1", "0.2"],
    np.array(["0.1", "0.2"]), [0.1 + 0j, 0.2], np.array([0.1, 0.2], dtype=complex), np.array([True, 0.3], dtype=object),
], ids=["bool-array", "bool-list", "mixed-bool", "numpy-bool", "text-list", "text-array", "complex-list",
        "complex-array", "object-bool"])
def test_a_configuration_of_booleans_text_or_complex_numbers_is_refused(planar, q):
    for call in (lambda: planar.validate_q(q), lambda: reljac.relative_jacobian(planar, q, "universe", "tip"),
                 lambda: reljac.Kinematics(planar, q), lambda: reljac.relative_placement(planar, q, "universe", "tip")):
        with pytest.raises(ConfigurationError, match="real numbers"):
            call()


def test_joint_values_that_are_booleans_are_refused(planar):
    with pytest.raises(ConfigurationError, match="joint1"):
        planar.q_from_joint_values({"joint1": True})
    np.testing.assert_array_equal(planar.q_from_joint_values({"joint1": np.float32(0.5)}), [0.5, 0.0])


def test_real_array_keeps_integers_and_floats_of_any_nesting():
    np.testing.assert_array_equal(real_array([[1, 2.5], (np.int32(3), np.float32(4.0))]), [[1, 2.5], [3, 4]])
    assert real_array([[1, True]]) is None and real_array("12") is None and real_array(None) is None


@pytest.mark.parametrize("T", [
    np.eye(4, dtype=complex), np.eye(4) + 1e-3j, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1 + 0j]],
    np.eye(4, dtype=bool),
])
def test_a_complex_or_boolean_target_pose_is_refused_not_made_real(T):
    with pytest.raises(TaskError, match="real numbers"):
        as_se3(T, "target")
    task = reljac.ik.RelativeFrameTask("universe", "tip")
    with pytest.raises(TaskError):
        task.set_target(T)
    assert isinstance(as_se3(np.eye(4, dtype=int), "target"), pin.SE3)


@pytest.mark.parametrize("scale", [1e100, 1e150, 1e200, 1e300, 1e307])
def test_manipulability_of_huge_finite_jacobians_has_no_nan(scale, rng):
    J = rng.normal(size=(3, 5)) * scale
    try:
        m = reljac.analysis.manipulability(J)
    except TaskError as exc:
        assert "overflow" in str(exc)
        return
    unit = np.linalg.svd(J / scale, compute_uv=False)  # singular values of J, in units of `scale`
    np.testing.assert_allclose(m.singular_values / scale, unit, rtol=1e-12)
    log_index = np.log(unit).sum() + 3 * np.log(scale)
    if log_index < np.log(np.finfo(float).max):
        assert np.log(m.index) == pytest.approx(log_index, rel=1e-12)
    else:
        assert m.index == np.inf  # the product is beyond the float range: inf, not NaN
    assert m.condition_number == pytest.approx(unit[0] / unit[-1], rel=1e-10)


def test_manipulability_index_of_a_singular_huge_jacobian_is_zero_not_nan():
    """Partial products 1e200 * 1e200 overflow; a product computed that way would give inf * 0 = NaN."""
    m = reljac.analysis.manipulability(np.diag([1e200, 1e200, 0.0]))
    assert m.index == 0.0 and m.condition_number == np.inf
    assert reljac.analysis.manipulability(np.diag([1e200, 1e100, 1e-10])).index == pytest.approx(1e290, rel=1e-12)


@pytest.mark.parametrize("scale", [1e100, 1e150, 1e160, 1e300])
def test_effective_inverse_mass_of_a_huge_finite_g_has_no_nan(scale, rng):
    robot = reljac.Robot.bundled("dual_arm")
    q = robot.random_configuration(rng)
    G = rng.normal(size=(2, robot.nv))
    reference = reljac.constraints.effective_inverse_mass(robot, q, G)
    try:
        W = reljac.constraints.effective_inverse_mass(robot, q, G * scale)
    except ConfigurationError as exc:  # only when the true result is beyond the float range
        assert "overflows" in str(exc) and np.log(np.abs(reference).max()) + 2 * np.log(scale) > np.log(1.7e308)
        return
    np.testing.assert_allclose(W / scale / scale, reference, rtol=1e-10)


@pytest.mark.filterwarnings("ignore:overflow encountered")  # q @ q of a refused q (reljac filters it outside pytest)
def test_configurations_beyond_1e100_are_refused_naming_the_joint(tmp_path):
    path = tmp_path / "slide.urdf"
    path.write_text('<robot name="s"><link name="a"/><link name="b"/><joint name="slide" type="prismatic">'
                    '<parent link="a"/><child link="b"/><axis xyz="1 0 0"/>'
                    '<limit lower="-1e308" upper="1e308" effort="1" velocity="1"/></joint></robot>')
    robot = reljac.Robot.from_urdf(path)
    for value in (1e101, 1e300, -1.7e308):
        with pytest.raises(ConfigurationError, match=r"q\[0\].*'slide'.*1e\+100"):
            reljac.relative_jacobian(robot, np.array([value]), "a", "b")
    kin = reljac.Kinematics(robot, [1e100], [1e100])  # the bound itself: every answer finite
    for answer in (kin.relative_jacobian("universe", "b", expressed_in="world"), kin.relative_twist("a", "b"),
                   kin.relative_jacobian_time_variation("b", "a"), kin.relative_placement("b", "a").homogeneous):
        assert np.isfinite(answer).all()
    with pytest.raises(ConfigurationError, match="1e\\+100"):
        reljac.Kinematics(robot, [0.0], [1e101])


# ----------------------------------------------------------------------------- one converter, one rule
@pytest.mark.parametrize("part", [[0.5, 1.7], [True, False], ("vx", "vx"), "speed", [6], []])
def test_jacobian_rows_are_refused_alike_by_analysis_and_capability_maps(part):
    """One converter for rows: capability maps once read row 0.5 as row 0 (int(0.5)); now both refuse."""
    from reljac.exceptions import MapError
    from reljac.maps.grid import as_rows

    with pytest.raises(TaskError):
        reljac.analysis.task_rows(part)
    with pytest.raises(MapError):
        as_rows(part)


def test_jacobian_rows_by_name_or_index_are_the_same_rows():
    from reljac.maps.grid import as_rows

    assert reljac.analysis.task_rows(("vx", "wz")) == reljac.analysis.task_rows((0, 5)) == as_rows(["vx", 5]) == (0, 5)
    assert reljac.analysis.task_rows("orientation") == as_rows("orientation") == (3, 4, 5)


@pytest.mark.parametrize("tol", [0.0, -1.0, float("nan"), "1e-4", True])
def test_a_bad_tol_is_a_task_error_for_both_solvers(planar, tol):
    """The rule of reljac.validation: a parameter of a solve is what is asked of the robot."""
    from reljac.costs import PositionCost
    from reljac.ik import RelativePositionTask, solve, solve_nlp

    task = RelativePositionTask("universe", "tip", gain=10.0)
    task.set_target([1.0, 0.5, 0.0])
    with pytest.raises(TaskError, match="tol"):
        solve(planar, np.array([0.3, 0.5]), [[task]], tol=tol)
    with pytest.raises(TaskError, match="tol"):
        solve_nlp(planar, np.array([0.3, 0.5]), PositionCost("tip", [1.0, 0.5, 0.0]), tol=tol)


def test_controller_settings_are_configuration_errors_and_task_settings_task_errors(planar):
    from reljac.ik import Controller, JointPositionLimit, PostureTask

    with pytest.raises(ConfigurationError, match="limit_gain"):
        JointPositionLimit(planar, limit_gain=0.0)
    with pytest.raises(ConfigurationError, match="dt"):
        Controller(planar, [[PostureTask(planar)]], dt=-0.01)
    with pytest.raises(TaskError, match="gain"):
        PostureTask(planar, gain=-1.0)


@pytest.mark.parametrize("Q", [[[True, False]], [["0.1", "0.2"]], np.array([[0.1 + 1j, 0.2]])])
def test_batched_configurations_of_booleans_text_or_complex_numbers_are_refused(planar, Q):
    """reljac.maps read them with np.array(Q, dtype=float): True as 1.0, '0.1' as 0.1."""
    with pytest.raises(ConfigurationError, match="real numbers"):
        reljac.maps.relative_kinematics(planar, Q, "universe", "tip")
    with pytest.raises(ConfigurationError, match="real numbers"):
        reljac.constraints.effective_inverse_mass(planar, np.zeros(2), Q)


def test_directions_and_box_sizes_of_booleans_or_text_are_refused():
    """np.array(..., dtype=float) read [[True, False, False]] as the x axis and '0.1' as 0.1 m."""
    from reljac.collision import CollisionError, box
    from reljac.exceptions import MapError
    from reljac.maps.grid import as_directions

    with pytest.raises(MapError, match="directions"):
        as_directions([[True, False, False]])
    with pytest.raises(CollisionError, match="box's size"):
        box([True, True, True])
    with pytest.raises(CollisionError, match="box's size"):
        box(["0.1", "0.2", "0.3"])
    np.testing.assert_allclose(as_directions([[2.0, 0.0, 0.0]]), [[1.0, 0.0, 0.0]])

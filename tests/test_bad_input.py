"""Bad and edge inputs: each must give a reljac exception (or a finite answer), never NaN, a
foreign exception, a Python traceback on the command line or a crashed interpreter.

Tests here document problems found by a bad-input review; a failing test is an open bug.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pinocchio as pin
import pytest

import reljac
import reljac.analysis
import reljac.constraints
import reljac.costs
import reljac.ik
import reljac.workspace
from reljac import Robot
from reljac.exceptions import ConfigurationError, ReljacError, TaskError, URDFError


@pytest.fixture(scope="module")
def tree30():
    return Robot.bundled("tree30")


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def _one_joint_urdf(tmp_path, *, axis="0 0 1", limit=LIMIT, name="one.urdf"):
    return _write(tmp_path, name, f"""\
        <robot name="one">
          <link name="a"/><link name="b"/><link name="c"/>
          <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
            <axis xyz="{axis}"/>{limit}</joint>
          <joint name="f" type="fixed"><parent link="b"/><child link="c"/><origin xyz="1 0 0"/></joint>
        </robot>""")


def _no_dof_urdf(tmp_path):
    return _write(tmp_path, "onelink.urdf", '<robot name="r"><link name="base"/></robot>\n')


def _run_cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "reljac.apps.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def _assert_clean_cli_error(proc):
    assert proc.returncode != 0, f"exit 0 on bad input; stdout: {proc.stdout[-500:]}"
    assert proc.returncode > 0, f"killed by signal {-proc.returncode} (crash)"
    assert "Traceback" not in proc.stderr, proc.stderr[-1500:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("reljac") and "error:" in last, proc.stderr[-800:]


def _finite(x):
    return np.isfinite(np.asarray(x, dtype=float)).all()


# ----------------------------------------------------------------------------- IK controller
def test_fully_masked_task_does_not_break_the_controller(planar):
    """All weights 0 masks every row: hierarchy._damped_svd raised a bare ValueError('empty task matrix')."""
    task = reljac.ik.RelativePositionTask("universe", "tip", weight=0.0)
    task.set_target([0.0, 1.0, 0.0])
    posture = reljac.ik.PostureTask(planar, weight=0.1)
    controller = reljac.ik.Controller(planar, [[task], [posture]], dt=0.01)
    q = controller.step(np.array([0.3, 0.5]))
    assert _finite(q)


@pytest.mark.parametrize("options", [
    {"tol": float("nan")}, {"tol": -1.0}, {"tol": "x"},
    {"max_iters": -1}, {"max_iters": 1.5}, {"max_iters": "x"},
])
def test_solve_rejects_bad_tol_and_max_iters(planar, options):
    """solve() validates neither: tol=nan silently runs to the end, max_iters=-1 -> UnboundLocalError."""
    task = reljac.ik.RelativePositionTask("universe", "tip", gain=10.0)
    task.set_target([1.0, 0.5, 0.0])
    with pytest.raises(ReljacError):
        reljac.ik.solve(planar, np.array([0.3, 0.5]), [[task]], **options)


def test_posture_task_of_another_robot_is_a_reljac_error(planar, dual_arm):
    """A PostureTask built for dual_arm in a planar_2link controller -> Pinocchio's C++ ValueError.
    (Refused when the controller is built or at the latest on its first step.)"""
    with pytest.raises(ReljacError):
        reljac.ik.Controller(planar, [[reljac.ik.PostureTask(dual_arm)]], dt=0.01).step(np.zeros(2))


def _step_is_finite_or_reljac_error(robot, levels, q, **options):
    controller = reljac.ik.Controller(robot, levels, dt=0.01, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            q_next = controller.step(q)
        except ReljacError:
            return
    assert _finite(q_next), f"step returned {q_next}"


def test_huge_finite_posture_gain_and_weight_give_no_nan(planar):
    """gain=1e300 and weight=1e100 (the largest weight taken: 1e300 is refused, as a vector's entries
    are) pass validation; the product overflows and step returned NaN."""
    with pytest.raises(reljac.TaskError, match=r"1e\+100"):
        reljac.ik.PostureTask(planar, gain=1e300, weight=1e300)
    posture = reljac.ik.PostureTask(planar, gain=1e300, weight=1e100)
    posture.set_target([1.0, 1.0])
    _step_is_finite_or_reljac_error(planar, [[posture]], np.array([0.3, 0.5]),
                                    velocity_limits=[np.inf, np.inf])


def test_huge_finite_task_gain_and_weight_give_no_nan(planar):
    task = reljac.ik.RelativePositionTask("universe", "tip", gain=1e300, weight=1e100)
    task.set_target([0.0, 1.0, 0.0])
    _step_is_finite_or_reljac_error(planar, [[task]], np.array([0.3, 0.5]),
                                    velocity_limits=[np.inf, np.inf])


def test_huge_finite_target_velocity_gives_no_nan(planar):
    task = reljac.ik.RelativePositionTask("universe", "tip")
    with pytest.raises(reljac.TaskError, match=r"1e\+100"):  # beyond what reljac computes with: refused
        task.set_target([0.0, 1.0, 0.0], velocity=[1e308, 1e308, 0.0])
    task.set_target([0.0, 1.0, 0.0], velocity=[1e100, 1e100, 0.0])  # the largest taken
    _step_is_finite_or_reljac_error(planar, [[task]], np.array([0.3, 0.5]),
                                    velocity_limits=[np.inf, np.inf])


def test_unreachable_target_from_singular_start(planar):
    task = reljac.ik.FrameTask("tip", gain=10.0)
    task.set_target(pin.SE3(np.eye(3), np.array([5.0, 0.0, 0.0])))
    result = reljac.ik.solve(planar, np.zeros(2), [[task]], max_iters=100)
    assert not result.converged and _finite(result.q)
    assert all(np.isfinite(v) for e in result.errors.values() for v in e.values())


@pytest.mark.parametrize("make", [
    lambda r: reljac.ik.RelativePositionTask("universe", "tip", gain="x"),
    lambda r: reljac.ik.RelativePositionTask("universe", "tip", gain=None),
    lambda r: reljac.ik.RelativePositionTask("universe", "tip", weight="x"),
    lambda r: reljac.ik.RelativePositionTask("universe", "tip", max_speed=[1.0, 2.0, 3.0]),
    lambda r: reljac.ik.RelativeOrientationTask("universe", "tip").set_target("x"),
    lambda r: reljac.ik.Controller(r, None, dt=0.01),
    lambda r: reljac.ik.Controller(r, [[reljac.ik.PostureTask(r)]], dt=0.01, limit_gain="x"),
    lambda r: reljac.ik.Controller(r, [[reljac.ik.PostureTask(r)]], dt=0.01, limit_gain=None),
    lambda r: reljac.ik.Controller(r, [[reljac.ik.PostureTask(r)]], dt=0.01, velocity_limits="x"),
], ids=["gain-str", "gain-None", "weight-str", "max_speed-3", "orientation-target-str",
        "levels-None", "limit_gain-str", "limit_gain-None", "velocity_limits-str"])
def test_ik_bad_types_raise_reljac_errors(planar, make):
    """These raise builtins ValueError/TypeError instead of a TaskError/ConfigurationError."""
    with pytest.raises(ReljacError):
        make(planar)


@pytest.mark.parametrize("make", [
    lambda r: reljac.ik.Controller(r, [], dt=0.01),
    lambda r: reljac.ik.Solver(r, ()),
    lambda r: reljac.ik.solve(r, None, []),
    lambda r: reljac.ik.solve_many(r, None, [], [{}]),
], ids=["controller", "solver", "solve", "solve_many"])
def test_no_level_is_a_task_error_that_names_levels(planar, make):
    """An empty list of levels: the message names the argument and what it must hold, for a
    search as for a controller (it said "the controller needs" from Solver and solve too)."""
    with pytest.raises(TaskError, match=r"^levels must hold at least one level of tasks, got (\[\]|\(\))$"):
        make(planar)


def test_numpy_float_dt_is_accepted(planar):
    """dt=np.float32(0.01) is a valid period but Controller rejects it (isinstance(dt, float))."""
    controller = reljac.ik.Controller(planar, [[reljac.ik.PostureTask(planar)]], dt=np.float32(0.01))
    assert _finite(controller.step(np.zeros(2)))


# ----------------------------------------------------------------------------- configurations
def test_complex_q_is_rejected(planar):
    """q = [1+1j, 0] silently becomes [1, 0] (ComplexWarning only): a wrong number."""
    with pytest.raises(ConfigurationError):
        reljac.relative_jacobian(planar, np.array([1 + 1j, 0]), "universe", "tip")


def test_normalize_zero_quaternion_raises(tree30):
    """robot.normalize on a zero quaternion returns the zero quaternion (not unit) silently."""
    q = tree30.neutral()
    q[3:7] = 0.0
    with pytest.raises(ConfigurationError):
        tree30.normalize(q)


@pytest.mark.parametrize("block", [[0, 0, 0, 1e-170], [1e-160, 0, 0, 1e-160], [3e-200, 4e-200, 0, 0]])
def test_normalize_a_tiny_quaternion_gives_a_unit_one(tree30, block):
    """A quaternion of 1e-170 has a direction, but its squared norm underflows: normalize returned
    it unchanged (or of norm 1.0000056), and validate_q then rejected what normalize gave."""
    q = tree30.neutral()
    q[3:7] = block
    given = q.copy()
    n = tree30.normalize(q)
    np.testing.assert_allclose(n[3:7], np.array(block) / np.abs(block).max() / np.linalg.norm(
        np.array(block) / np.abs(block).max()), rtol=1e-15)
    tree30.validate_q(n)  # accepted
    np.testing.assert_array_equal(q, given)  # the caller's q is left as it was


@pytest.mark.parametrize("call", [
    lambda r: r.random_configuration(-1),
    lambda r: r.random_configuration("x"),
    lambda r: r.q_from_joint_values([("joint1", 1.0)]),
    lambda r: r.joint_id(1),
    lambda r: Robot.bundled(None),
    lambda r: Robot.from_urdf(None),
], ids=["seed-negative", "seed-str", "joint-values-list", "joint-id-int", "bundled-None", "from_urdf-None"])
def test_robot_bad_arguments_raise_reljac_errors(planar, call):
    with pytest.raises(ReljacError):
        call(planar)


def test_negative_seed_in_workspace_summary(planar):
    with pytest.raises(ReljacError):
        reljac.workspace.workspace_summary(planar, "universe", "tip", 5, seed=-1)


# ----------------------------------------------------------------------------- analysis
def test_workspace_summary_of_always_singular_task_has_no_nan(planar):
    """tip in tip: every sample singular, condition numbers all inf; np.quantile(inf...) gives NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        summary = reljac.workspace.workspace_summary(planar, "tip", "tip", 5)
    for stats in (summary.index, summary.smallest_singular_value, summary.condition_number):
        assert not any(np.isnan(v) for v in stats.values()), stats


def test_workspace_summary_full_part_of_planar_robot_has_no_nan(planar):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        summary = reljac.workspace.workspace_summary(planar, "universe", "tip", 5, part="full")
    assert not any(np.isnan(v) for v in summary.condition_number.values()), summary.condition_number


@pytest.mark.parametrize("part", [[0.5, 1.7], [True, False]])
def test_task_rows_rejects_non_integer_rows(part):
    """[0.5, 1.7] silently becomes rows (0, 1); [True, False] becomes (1, 0)."""
    with pytest.raises(TaskError):
        reljac.analysis.task_rows(part)


def test_manipulability_of_a_stretched_planar_arm_is_singular_not_nan(planar):
    m = reljac.analysis.relative_manipulability(planar, np.zeros(2), "universe", "tip", part=(0, 1))
    assert m.index == 0.0 and m.condition_number == np.inf
    assert _finite(m.singular_values) and _finite(m.directions)


@pytest.mark.parametrize("J", ["ab", np.array([[1 + 1j]])], ids=["str", "complex"])
def test_manipulability_rejects_non_real_input(J):
    with pytest.raises(TaskError):
        reljac.analysis.manipulability(J)


# ----------------------------------------------------------------------------- costs and constraints
def test_contact_basis_of_a_huge_normal_is_not_nan():
    """|n| overflows to inf, n / inf = 0, and the tangents become NaN."""
    try:
        B = reljac.constraints.contact_basis([1e300, 1e300, 0.0])
    except ReljacError:
        return
    assert _finite(B), B


def test_quaternion_rate_matrix_rejects_nan_and_non_unit():
    with pytest.raises(TaskError):
        reljac.costs.quaternion_rate_matrix([np.nan, 0.0, 0.0, 1.0])
    with pytest.raises(TaskError):
        reljac.costs.quaternion_rate_matrix([0.0, 0.0, 0.0, 5.0])
    with pytest.raises(TaskError):
        reljac.costs.quaternion_rate_matrix("abcd")


def test_effective_inverse_mass_rejects_a_string(planar):
    with pytest.raises(ReljacError):
        reljac.constraints.effective_inverse_mass(planar, np.zeros(2), "ab")


def test_costs_at_the_singular_configuration_are_finite(planar):
    q = np.zeros(2)
    for cost in (reljac.costs.PositionCost("tip", [1.8, 0.0, 0.0]),
                 reljac.costs.OrientationCost("tip", [0.0, 0.0, 1.0, 0.0]),
                 reljac.costs.PositionCost("tip", [0.0, 0.0, 0.0], relative_to="tip")):
        assert np.isfinite(cost.value(planar, q)) and _finite(cost.gradient(planar, q))


def test_distance_between_coincident_points_raises(planar):
    with pytest.raises(ConfigurationError):
        reljac.constraints.Distance("tip", "tip", 0.0).jacobian(planar, np.zeros(2))


# ----------------------------------------------------------------------------- URDF loading
def test_zero_joint_axis_is_rejected(tmp_path):
    """Pinocchio loads <axis xyz="0 0 0">: the joint never moves, its Jacobian column is 0.
    The in-house reference rejects the same file with a URDFError."""
    with pytest.raises(URDFError):
        Robot.from_urdf(_one_joint_urdf(tmp_path, axis="0 0 0"))


@pytest.mark.parametrize("axis", ["1e-300 0 0", "0 1e-160 1e-170"])
def test_a_joint_axis_too_small_to_normalize_is_rejected(tmp_path, axis):
    """Pinocchio normalizes an axis by its squared norm, which underflows below about 1e-154: the
    joint's placements were not rotations (|R^T R - I| 0.07) and its Jacobians wrong. 1e-20 works."""
    with pytest.raises(URDFError, match="too small to normalize"):
        Robot.from_urdf(_one_joint_urdf(tmp_path, axis=axis))
    robot = Robot.from_urdf(_one_joint_urdf(tmp_path, axis="1e-20 0 0"))
    R = reljac.Kinematics(robot, np.full(robot.nq, 0.7)).placement(robot.model.frames[-1].name).rotation
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)


def test_lower_limit_above_upper_is_rejected(tmp_path):
    """Pinocchio loads lower=1 > upper=-1; random_configuration then raises numpy's
    'high - low < 0' and `reljac analyze` prints a traceback. The reference rejects the file."""
    path = _one_joint_urdf(tmp_path, limit='<limit lower="1" upper="-1" effort="1" velocity="1"/>')
    with pytest.raises(URDFError):
        Robot.from_urdf(path)


def test_structural_urdf_error_says_what_is_wrong(tmp_path):
    """Pinocchio's message is only 'does not contain a valid URDF model'; name the joint and the problem."""
    path = _write(tmp_path, "noparent.urdf", f"""\
        <robot name="r"><link name="a"/><link name="b"/>
          <joint name="elbow" type="revolute"><child link="b"/><axis xyz="0 0 1"/>{LIMIT}</joint>
        </robot>""")
    with pytest.raises(URDFError) as info:
        Robot.from_urdf(path)
    assert "elbow" in str(info.value) and "parent" in str(info.value)


def test_duplicate_link_error_names_the_link(tmp_path):
    path = _write(tmp_path, "dup.urdf", f"""\
        <robot name="r"><link name="forearm"/><link name="forearm"/><link name="b"/>
          <joint name="j" type="revolute"><parent link="forearm"/><child link="b"/>
            <axis xyz="0 0 1"/>{LIMIT}</joint>
        </robot>""")
    with pytest.raises(URDFError, match="forearm"):
        Robot.from_urdf(path)


def test_directory_is_not_reported_as_missing(tmp_path):
    folder = tmp_path / "robot.urdf"
    folder.mkdir()
    with pytest.raises(URDFError) as info:
        Robot.from_urdf(folder)
    assert "does not exist" not in str(info.value) and "director" in str(info.value)


def test_package_dirs_as_a_single_string_is_not_split_into_characters(tmp_path):
    path = _write(tmp_path, "mesh.urdf", f"""\
        <robot name="r"><link name="a"><visual><geometry>
          <mesh filename="package://nopkg/x.stl"/></geometry></visual></link><link name="b"/>
          <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>{LIMIT}</joint>
        </robot>""")
    robot = Robot.from_urdf(path, package_dirs=str(tmp_path))
    assert robot.package_dirs == [str(tmp_path)]


# ----------------------------------------------------------------------------- robots with nv = 1 and nv = 0
def test_one_dof_robot_jacobians_have_shape_6_by_1(tmp_path):
    """Pinocchio returns (6,) Jacobians when nv = 1 (twist, dJ, solve, manipulability broke)."""
    robot = Robot.from_urdf(_one_joint_urdf(tmp_path))
    kin = reljac.Kinematics(robot, [0.3], [1.0])
    assert reljac.relative_jacobian(robot, [0.3], "universe", "c").shape == (6, 1)
    assert kin.relative_jacobian_time_variation("universe", "c").shape == (6, 1)
    assert kin.relative_twist("universe", "c").shape == (6,)
    task = reljac.ik.RelativePositionTask("universe", "c")
    task.set_target([0.0, 1.0, 0.0])
    assert _finite(reljac.ik.solve(robot, [0.3], [[task]], max_iters=50).q)


@pytest.mark.slow
def test_zero_dof_robot_does_not_crash_the_interpreter(tmp_path):
    """pin.getFrameJacobian on a model with nv = 0 segfaults: run it in a child process."""
    path = _no_dof_urdf(tmp_path)
    code = (f"import reljac, numpy as np; r = reljac.Robot.from_urdf({str(path)!r}); "
            "J = reljac.relative_jacobian(r, np.zeros(0), 'universe', 'base'); "
            "K = reljac.Kinematics(r, np.zeros(0)).relative_jacobian('universe', 'base'); "
            "assert J.shape == K.shape == (6, 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-1000:])


def test_solve_nlp_on_a_zero_dof_robot_is_a_reljac_error(tmp_path):
    """solve_nlp on nv = 0 -> 'ValueError: not enough values to unpack' from deep inside."""
    robot = Robot.from_urdf(_no_dof_urdf(tmp_path))
    try:
        result = reljac.ik.solve_nlp(robot, np.zeros(0), reljac.costs.PositionCost("base", [1.0, 0.0, 0.0]))
    except ReljacError:
        return
    assert not result.converged


# ----------------------------------------------------------------------------- reference kinematics
@pytest.fixture(scope="module")
def ref_planar():
    from reljac.reference import ReferenceRobot
    from reljac.robots import BUNDLED_DIR

    return ReferenceRobot.from_urdf(BUNDLED_DIR / "planar_2link.urdf")


def test_reference_integrate_rejects_non_finite_dt(ref_planar):
    """integrate(q, v, dt=nan) returns [nan, nan]; dt='x' raises numpy's UFuncTypeError."""
    with pytest.raises(ReljacError):
        ref_planar.integrate(np.zeros(2), [1.0, 0.0], float("nan"))
    with pytest.raises(ReljacError):
        ref_planar.integrate(np.zeros(2), [1.0, 0.0], "x")


def test_reference_integrate_huge_velocity_is_not_nan():
    from reljac.reference import ReferenceRobot
    from reljac.robots import BUNDLED_DIR

    ref = ReferenceRobot.from_urdf(BUNDLED_DIR / "tree30.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            q = ref.integrate(ref.neutral_configuration(), np.full(ref.nv, 1e300))
        except ReljacError:
            return
    assert _finite(q), q


@pytest.mark.parametrize("call", [
    lambda ref: ref.relative_jacobian(np.zeros(2), "universe", "tip", method="bad"),
    lambda ref: ref.frame_jacobian(np.zeros(2), "tip", method=None),
    lambda ref: ref.random_configuration(0, n=-1),
    lambda ref: ref.random_configuration(0, n=1.5),
    lambda ref: ref.random_configuration(-1),
    lambda ref: ref.relative_jacobian(np.array([1 + 1j, 0]), "universe", "tip"),
], ids=["method-bad", "method-None", "n-negative", "n-float", "seed-negative", "complex-q"])
def test_reference_bad_arguments_raise_reljac_errors(ref_planar, call):
    with pytest.raises(ReljacError):
        call(ref_planar)


def test_reference_from_urdf_string_none():
    from reljac.reference import ReferenceRobot

    with pytest.raises(URDFError):
        ReferenceRobot.from_urdf_string(None)


# ----------------------------------------------------------------------------- command line
@pytest.mark.parametrize("args", [
    ["jacobian", "planar_2link", "universe", "tip", "--seed", "-1"],
    ["analyze", "planar_2link", "universe", "tip", "--samples", "5", "--seed", "-1"],
    ["check", "planar_2link", "--samples", "2", "--seed", "-1"],
    ["check", "planar_2link", "--samples", "0"],
    ["check", "planar_2link", "--samples", "-5"],
    ["jacobian", "planar_2link", "universe", "tip", "--precision", "-1"],
], ids=["jacobian-seed", "analyze-seed", "check-seed", "check-samples-0", "check-samples-neg",
        "jacobian-precision"])
@pytest.mark.slow
def test_cli_bad_arguments_give_one_line_errors(args):
    _assert_clean_cli_error(_run_cli(*args))


def test_cli_view_negative_seed():
    _assert_clean_cli_error(_run_cli("view", "planar_2link", "--no-hold", "--seed", "-1"))


@pytest.mark.slow
def test_cli_analyze_bad_limits_urdf(tmp_path):
    path = _one_joint_urdf(tmp_path, limit='<limit lower="1" upper="-1" effort="1" velocity="1"/>')
    _assert_clean_cli_error(_run_cli("analyze", path, "universe", "c", "--samples", "3"))


@pytest.mark.slow
def test_cli_check_zero_dof_robot(tmp_path):
    """`reljac check` on a one-link URDF: 'zero-size array to reduction' traceback (earlier: segfault)."""
    proc = _run_cli("check", _no_dof_urdf(tmp_path), "--samples", "2")
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}"
    assert "Traceback" not in proc.stderr, proc.stderr[-1500:]


@pytest.mark.slow
def test_cli_analyze_prints_no_nan():
    proc = _run_cli("analyze", "planar_2link", "tip", "tip", "--samples", "5")
    assert "nan" not in proc.stdout.lower(), proc.stdout


@pytest.mark.slow
def test_cli_structural_urdf_error_is_one_line(tmp_path):
    """urdfdom prints 'Error: Failed to build tree ... at line 262 in .../model.cpp' to stderr
    before reljac's own error line."""
    path = _write(tmp_path, "noparent.urdf", f"""\
        <robot name="r"><link name="a"/><link name="b"/>
          <joint name="j" type="revolute"><child link="b"/><axis xyz="0 0 1"/>{LIMIT}</joint>
        </robot>""")
    proc = _run_cli("info", path)
    _assert_clean_cli_error(proc)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_masked_array_with_masked_entries_is_refused(planar):
    """numpy reads a masked array's hidden values: q = masked [0.3, --] was read as [0.3, 9.9]."""
    q = np.ma.masked_array([0.3, 9.9], mask=[False, True])
    with pytest.raises(ConfigurationError, match="q must be an array of 2 real numbers"):
        reljac.Kinematics(planar, q)
    kin = reljac.Kinematics(planar, np.ma.masked_array([0.3, 0.2]))  # nothing masked: its values
    np.testing.assert_array_equal(kin.q, [0.3, 0.2])

"""The task-priority controller: task Jacobians, strict priorities, limits, singularities, solve."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import load_random_tree, urdf_trees
from hypothesis import given, settings
from hypothesis import strategies as st

import reljac
import reljac.robots
from reljac import TaskError
from reljac.ik import (
    Controller,
    FrameTask,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    solve,
)
from reljac.ik.solvers.hierarchy import Level, solve_hierarchy
from reljac.relative import Kinematics


def middle(robot):
    return robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))


def numeric_task_jacobian(task, robot, q, eps=1e-6):
    J = np.zeros((task.size, robot.nv))
    for k in range(robot.nv):
        dv = np.zeros(robot.nv)
        dv[k] = eps
        e_plus = task.compute(Kinematics(robot, pin.integrate(robot.model, q, dv)))[0]
        e_minus = task.compute(Kinematics(robot, pin.integrate(robot.model, q, -dv)))[0]
        J[:, k] = (e_plus - e_minus) / (2 * eps)
    return J


@pytest.mark.parametrize("name, a, b", [("dual_arm", "left_tool", "right_tool"), ("hand", "palm", "thumb_tip"),
                                        ("tree30", "left_hand_site", "right_foot_site")])
def test_task_jacobians_match_finite_differences(name, a, b, rng):
    robot = reljac.Robot.bundled(name)
    for _ in range(3):
        q, q_target = robot.random_configuration(rng), robot.random_configuration(rng)
        T_target = Kinematics(robot, q_target).relative_placement(a, b)
        tasks = [RelativeFrameTask(a, b), RelativePositionTask(a, b), RelativeOrientationTask(a, b),
                 FrameTask(b), PostureTask(robot)]
        tasks[0].set_target(T_target)
        tasks[1].set_target(T_target.translation)
        tasks[2].set_target(T_target.rotation)
        tasks[3].set_target(Kinematics(robot, q_target).placement(b))
        tasks[4].set_target(q_target)
        kin = Kinematics(robot, q)
        for task in tasks:
            J = task.compute(kin)[1]
            np.testing.assert_allclose(J, numeric_task_jacobian(task, robot, q), atol=1e-6, err_msg=task.name)


def test_target_from_a_configuration_is_met_there(dual_arm, rng):
    q = dual_arm.random_configuration(rng)
    task = RelativeFrameTask("left_tool", "right_tool")
    task.set_target_from_configuration(dual_arm, q)
    assert max(task.error_norms(Kinematics(dual_arm, q)).values()) < 1e-12
    assert max(task.error_norms(Kinematics(dual_arm, dual_arm.random_configuration(rng))).values()) > 1e-3


def test_relative_task_rooted_at_the_world_equals_the_absolute_task(dual_arm, rng):
    q, q_target = dual_arm.random_configuration(rng), dual_arm.random_configuration(rng)
    T = Kinematics(dual_arm, q_target).placement("right_tool")
    absolute, relative = FrameTask("right_tool"), RelativeFrameTask("universe", "right_tool")
    absolute.set_target(T)
    relative.set_target(T)
    kin = Kinematics(dual_arm, q)
    for x, y in zip(absolute.compute(kin), relative.compute(kin), strict=True):
        np.testing.assert_allclose(x, y, atol=1e-14)


def test_the_built_in_tasks_describe_themselves_and_a_subclass_that_computes_anew_does_not(dual_arm, rng):
    """The built-in tasks live in several modules of reljac.ik (task, frame_tasks, posture): each
    still hands the compiled step its description; a subclass defined outside reljac.ik that
    overrides compute() runs in Python (description None), one that only adds a method keeps it."""
    T = Kinematics(dual_arm, dual_arm.random_configuration(rng)).relative_placement("left_tool", "right_tool")
    tasks = {"pose": RelativeFrameTask("left_tool", "right_tool"), "position": RelativePositionTask("left_tool", "right_tool"),
             "orientation": RelativeOrientationTask("left_tool", "right_tool"), "world pose": FrameTask("right_tool")}
    targets = {"pose": T, "position": T.translation, "orientation": T.rotation, "world pose": T}
    for kind, task in tasks.items():
        task.set_target(targets[kind])
        described = task.description(dual_arm)
        assert described.kind == "FrameTaskDescription", kind
        assert described.fields["kind"] == kind.split()[-1]
        assert described.frame_b == dual_arm.frame_id("right_tool")
        assert described.frame_a == dual_arm.frame_id("universe" if kind == "world pose" else "left_tool")
    np.testing.assert_allclose(tasks["pose"].description(dual_arm).target, T.homogeneous, atol=1e-15)
    posture = PostureTask(dual_arm)
    q = dual_arm.random_configuration(rng)
    posture.set_target(q)
    assert posture.description(dual_arm).kind == "PostureDescription"
    np.testing.assert_array_equal(posture.description(dual_arm).target, q)

    class Halved(RelativePositionTask):
        def compute(self, kin):
            e, J, ff = super().compute(kin)
            return 0.5 * e, 0.5 * J, 0.5 * ff

    class Named(PostureTask):
        def label(self) -> str:
            return self.name.upper()

    halved = Halved("left_tool", "right_tool")
    halved.set_target(T.translation)
    assert halved.description(dual_arm) is None
    assert Named(dual_arm).description(dual_arm).kind == "PostureDescription"


def _three_levels(robot, rng):
    qt = robot.random_configuration(rng)
    kin = Kinematics(robot, qt)
    rel = RelativeFrameTask("left_tool", "right_tool", gain=1.0)
    rel.set_target(kin.relative_placement("left_tool", "right_tool"))
    left = FrameTask("left_tool", gain=1.0)
    left.set_target(Kinematics(robot, robot.random_configuration(rng)).placement("left_tool"))  # conflicting
    posture = PostureTask(robot, gain=1.0)
    posture.set_target(robot.random_configuration(rng))
    return rel, left, posture


def test_strict_priority_top_level_met_exactly_whatever_lower_levels_ask(dual_arm, rng):
    unlimited = np.full(dual_arm.nv, np.inf)
    for _ in range(10):
        rel, left, posture = _three_levels(dual_arm, rng)
        q = dual_arm.random_configuration(rng)
        kin = Kinematics(dual_arm, q)
        A1, b1 = rel.weighted(kin)
        # a step so small that the position limits do not bind
        alone = Controller(dual_arm, [[rel]], dt=1e-4, velocity_limits=unlimited).velocity(q)
        full_ctrl = Controller(dual_arm, [[rel], [left], [posture]], dt=1e-4, velocity_limits=unlimited)
        full = full_ctrl.velocity(q)
        assert all(r.scale == 1.0 and not r.saturated for r in full_ctrl.last_reports[:1])
        np.testing.assert_allclose(A1 @ alone, b1, atol=1e-9)
        np.testing.assert_allclose(A1 @ full, b1, atol=1e-9)
        # lower levels act only in the null space of the top level
        _A2, _ = left.weighted(kin)
        delta = full - alone
        assert np.abs(A1 @ delta).max() < 1e-9
        assert np.linalg.norm(delta) > 1e-6  # and they do act


def test_second_level_is_met_when_feasible_in_the_null_space(dual_arm, rng):
    q = dual_arm.random_configuration(rng)
    kin = Kinematics(dual_arm, q)
    rel = RelativeFrameTask("left_tool", "right_tool", gain=1.0)
    rel.set_target(kin.relative_placement("left_tool", "right_tool"))  # already met: b1 = 0
    left = FrameTask("left_tool", gain=1.0)
    left.set_target(kin.placement("left_tool") * pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.01])))
    ctrl = Controller(dual_arm, [[rel], [left]], dt=1e-4, velocity_limits=np.full(dual_arm.nv, np.inf))
    v = ctrl.velocity(q)
    A2, b2 = left.weighted(kin)
    np.testing.assert_allclose(A2 @ v, b2, atol=1e-9)


def test_hierarchy_respects_bounds_and_scales_an_infeasible_level():
    A = np.array([[1.0, 1.0]])
    v, reports = solve_hierarchy([Level(A, np.array([10.0]))], np.array([-1.0, -1.0]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(v, [1.0, 1.0])  # saturated at the bounds, the best it can do
    assert reports[0].scale < 1.0
    v, reports = solve_hierarchy([Level(A, np.array([1.5]))], np.array([-1.0, -0.2]), np.array([1.0, 1.0]))
    assert np.all(v <= 1.0 + 1e-12) and np.all(v >= [-1.0, -0.2])
    np.testing.assert_allclose(A @ v, [1.5])  # met thanks to saturation in the null space
    assert reports[0].scale == 1.0


def test_hierarchy_saturates_every_joint_that_sits_on_its_bound():
    """Three joints at a limit (bound 0) block the task until all three are saturated."""
    A = np.array([[1.0, 1.0, 1.0, 1.0]])
    v, reports = solve_hierarchy([Level(A, np.array([1.0]))], np.full(4, -2.0), np.array([0.0, 0.0, 0.0, 2.0]))
    np.testing.assert_allclose(v, [0.0, 0.0, 0.0, 1.0], atol=1e-12)
    assert reports[0].scale == 1.0 and sorted(reports[0].saturated) == [0, 1, 2]


def test_hierarchy_uses_the_joints_left_when_saturation_costs_the_task_a_direction():
    """2 rows, joint 0 locked (bounds 0): the task can no longer be met exactly, but the best
    least-squares motion of the free joints is still taken (not nothing)."""
    A = np.array([[1.0, 1.0], [0.0, 1.0]])
    b = np.array([1.0, 0.5])
    v, _reports = solve_hierarchy([Level(A, b)], np.array([0.0, -2.0]), np.array([0.0, 2.0]))
    np.testing.assert_allclose(v, [0.0, 0.75], atol=2e-3)  # argmin |(v1 - 1, v1 - 0.5)|, lightly damped (rank lost)


def _solve_dual_arm(robot, q_target, q0, **kwargs):
    kin = Kinematics(robot, q_target)
    rel = RelativeFrameTask("left_tool", "right_tool", gain=20.0)
    rel.set_target(kin.relative_placement("left_tool", "right_tool"))
    left = FrameTask("left_tool", gain=20.0)
    left.set_target(kin.placement("left_tool"))
    posture = PostureTask(robot, gain=1.0, weight=0.1)
    posture.set_target(q0)
    return solve(robot, q0, [[rel], [left], [posture]], **kwargs), rel, left


@pytest.mark.slow
def test_solve_converges_on_reachable_dual_arm_targets(dual_arm, rng):
    """The top level (relative pose) converges; the second (left tool pose), which lives in the
    top level's null space and can meet local singularities there, gets at least 10x closer."""
    q0 = middle(dual_arm)
    for _ in range(4):
        result, rel, left = _solve_dual_arm(dual_arm, dual_arm.random_configuration(rng), q0,
                                            tol=1e-4, max_iters=1500)
        kin = Kinematics(dual_arm, result.q)
        assert rel.error_norms(kin)["position"] < 1e-4 and rel.error_norms(kin)["orientation"] < 1e-4
        start = max(left.error_norms(Kinematics(dual_arm, q0)).values())
        assert max(left.error_norms(kin).values()) < 0.1 * start
        assert result.converged == (max(left.error_norms(kin).values()) < 1e-4)
        assert np.all(result.q >= dual_arm.lower_limits) and np.all(result.q <= dual_arm.upper_limits)


def test_hand_two_fingertips_relative_to_the_palm_at_once(hand, rng):
    q_target = hand.random_configuration(rng)
    kin = Kinematics(hand, q_target)
    tasks = []
    for tip in ("thumb_tip", "index_tip"):
        task = RelativePositionTask("palm", tip, gain=20.0)
        task.set_target(kin.relative_placement("palm", tip).translation)
        tasks.append(task)
    result = solve(hand, middle(hand), [tasks, [PostureTask(hand, weight=0.01)]], tol=1e-5, max_iters=2000)
    assert result.converged, result.errors


def test_hand_pinch_thumb_tip_on_index_tip(hand):
    pinch = RelativePositionTask("index_tip", "thumb_tip", gain=20.0)
    pinch.set_target(np.zeros(3))
    result = solve(hand, middle(hand), [[pinch], [PostureTask(hand, weight=0.01)]], tol=1e-4, max_iters=2000)
    assert result.converged, result.errors
    T = Kinematics(hand, result.q).relative_placement("index_tip", "thumb_tip")
    assert np.linalg.norm(T.translation) < 1e-4


def test_unreachable_target_returns_closest_configuration_not_nan(dual_arm):
    far = FrameTask("left_tool", gain=20.0)
    far.set_target(pin.SE3(np.eye(3), np.array([5.0, 0.0, 1.0])))  # 5 m away: out of reach
    result = solve(dual_arm, middle(dual_arm), [[far]], tol=1e-4, max_iters=300)
    assert not result.converged
    assert np.isfinite(result.q).all()
    start = np.linalg.norm(Kinematics(dual_arm, middle(dual_arm)).placement("left_tool").translation - [5, 0, 1])
    assert result.errors[far.name]["position"] < start  # it got closer


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), gain=st.floats(0.5, 200.0), dt=st.sampled_from([0.002, 0.01, 0.05]))
@pytest.mark.slow
def test_limits_never_violated_over_long_random_runs(seed, gain, dt):
    robot = reljac.Robot.bundled("dual_arm")
    rng = np.random.default_rng(seed)
    rel = RelativeFrameTask("left_tool", "right_tool", gain=gain)
    rel.set_target(pin.SE3.Random())  # anything, reachable or not
    left = FrameTask("left_tool", gain=gain)
    left.set_target(pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3)))
    ctrl = Controller(robot, [[rel], [left], [PostureTask(robot)]], dt=dt)
    q = robot.random_configuration(rng)
    lo, hi, vmax = robot.lower_limits, robot.upper_limits, robot.velocity_limits
    for _ in range(60):
        v = ctrl.velocity(q)
        assert np.isfinite(v).all()
        assert np.all(np.abs(v) <= vmax * (1 + 1e-9))
        q = ctrl.step(q)
        assert np.all(q >= lo) and np.all(q <= hi)


def test_start_outside_the_limits_recovers(dual_arm, rng):
    q = middle(dual_arm)
    lo, hi = dual_arm.lower_limits, dual_arm.upper_limits
    q[3] = hi[3] + 0.3  # left_joint3 beyond its upper limit
    q[10] = lo[10] - 0.2
    left = FrameTask("left_tool", gain=5.0)
    left.set_target(Kinematics(dual_arm, dual_arm.random_configuration(rng)).placement("left_tool"))
    ctrl = Controller(dual_arm, [[left], [PostureTask(dual_arm)]], dt=0.01)
    outside = lambda x: np.maximum(x - hi, lo - x).clip(min=0).sum()  # noqa: E731
    previous = outside(q)
    for _ in range(100):
        v = ctrl.velocity(q)
        assert np.all(np.abs(v) <= dual_arm.velocity_limits * (1 + 1e-9))
        q = ctrl.step(q)
        assert outside(q) <= previous + 1e-12
        previous = outside(q)
    assert previous == 0.0


def test_stretched_arm_singularity_gives_bounded_velocities():
    robot = reljac.Robot.bundled("planar_2link")
    unlimited = np.full(2, np.inf)
    task = RelativePositionTask("base_link", "tip", gain=10.0)
    for target in ([2.5, 0.0, 0.0], [1.8, 0.05, 0.0], [1.8, -0.3, 0.0]):  # beyond reach, and across
        task.set_target(target)
        ctrl = Controller(robot, [[task]], dt=0.01, velocity_limits=unlimited)
        for q2 in (0.0, 1e-6, 1e-3, 1e-2):
            v = ctrl.velocity(np.array([0.0, q2]))
            assert np.isfinite(v).all()
            assert np.linalg.norm(v) < 200.0, (target, q2, v)


def test_feed_forward_tracks_a_moving_target_without_lag(dual_arm, rng):
    q = dual_arm.random_configuration(rng)
    T0 = Kinematics(dual_arm, q).placement("left_tool")
    twist = np.array([0.05, 0.0, 0.02, 0.0, 0.0, 0.2])  # target body twist
    errors = {}
    for use_ff in (False, True):
        task = FrameTask("left_tool", gain=5.0)
        ctrl = Controller(dual_arm, [[task], [PostureTask(dual_arm, weight=0.01)]], dt=0.01)
        x = q.copy()
        for k in range(100):
            T = T0 * pin.exp6(twist * k * 0.01)
            task.set_target(T, velocity=twist if use_ff else None)
            x = ctrl.step(x)
        task.set_target(T0 * pin.exp6(twist * 100 * 0.01))
        errors[use_ff] = task.error_norms(Kinematics(dual_arm, x))["position"]
    assert errors[True] < 0.2 * errors[False]


def test_bad_task_input_gets_clear_errors(dual_arm):
    task = RelativeFrameTask("left_tool", "right_tool")
    with pytest.raises(TaskError, match="no target"):
        task.compute(Kinematics(dual_arm, dual_arm.neutral()))
    with pytest.raises(TaskError, match="not a rotation"):
        task.set_target(np.diag([1.0, 2.0, 1.0, 1.0]))
    with pytest.raises(TaskError, match="4, 4"):
        task.set_target(np.eye(3))
    with pytest.raises(TaskError, match="3 finite numbers, got 2 entries"):
        RelativePositionTask("left_tool", "right_tool").set_target([1.0, 2.0])
    with pytest.raises(TaskError, match="gain"):
        FrameTask("left_tool", gain=-1.0)
    with pytest.raises(TaskError, match="level 0"):
        Controller(dual_arm, [[]], dt=0.01)
    with pytest.raises(reljac.ConfigurationError, match="dt"):
        Controller(dual_arm, [[task]], dt=0.0)
    with pytest.raises(reljac.FrameNotFound):
        bad = FrameTask("left_tol")
        bad.set_target(pin.SE3.Identity())
        Controller(dual_arm, [[bad]], dt=0.01).velocity(dual_arm.neutral())


def test_posture_fast_path_on_a_floating_base_equals_the_exact_solution(rng):
    """tree30 with its free-flyer masked: the posture level takes the identity fast path, and
    alone (nothing above it) that is the exact least-squares solution of the generic path."""
    robot = reljac.Robot.bundled("tree30")
    weight = np.ones(robot.nv)
    weight[:6] = 0.0
    posture = PostureTask(robot, gain=2.0, weight=weight)
    assert posture.identity_scale == 1.0
    assert PostureTask(robot).identity_scale is None  # the free-flyer rows are not identity rows
    posture.set_target(robot.random_configuration(rng))
    q = robot.random_configuration(rng)
    unlimited = np.full(robot.nv, np.inf)
    fast = Controller(robot, [[posture]], dt=1e-3, velocity_limits=unlimited).velocity(q)
    A, b = posture.weighted(Kinematics(robot, q))
    np.testing.assert_allclose(fast, np.linalg.lstsq(A, b, rcond=None)[0], atol=1e-10)
    assert np.all(fast[:6] == 0.0)


@settings(max_examples=30, deadline=None, database=None)
@given(text=urdf_trees(), seed=st.integers(0, 1000))
@pytest.mark.slow
def test_any_robot_stays_in_its_limits_and_finite(tmp_path_factory, text, seed):
    """Random URDF trees: a relative pose task between two random frames and a posture, for 40
    steps from a random start; v finite and within the velocity limits, q within the position
    limits."""
    robot = load_random_tree(tmp_path_factory.mktemp("tree"), text)
    if robot is None or robot.nv == 0:  # refused by Pinocchio, or nothing to control (tested elsewhere)
        return
    rng = np.random.default_rng(seed)
    frames = robot.frame_names
    a, b = (frames[i] for i in rng.choice(len(frames), 2))
    task = RelativeFrameTask(a, b, gain=50.0)
    task.set_target(pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3)))
    ctrl = Controller(robot, [[task], [PostureTask(robot, weight=0.1)]], dt=0.01,
                      velocity_limits=np.full(robot.nv, 2.0))
    q = robot.random_configuration(rng)
    lo, hi = robot.lower_limits, robot.upper_limits
    one_dof = np.isfinite(lo) & np.isfinite(hi) & (np.abs(lo) < 1.5) & (np.abs(hi) < 1.5)  # not quaternion or (cos, sin)
    for _ in range(40):
        v = ctrl.velocity(q)
        assert np.isfinite(v).all() and np.all(np.abs(v) <= 2.0 + 1e-9)
        q = ctrl.step(q)
        assert np.isfinite(q).all()
        assert np.all(q[one_dof] >= lo[one_dof] - 1e-12) and np.all(q[one_dof] <= hi[one_dof] + 1e-12)


def test_position_margin_is_kept_and_the_urdf_limits_never_crossed(dual_arm, rng):
    margin = 0.2
    lo, hi = dual_arm.lower_limits + margin, dual_arm.upper_limits - margin
    far = FrameTask("left_tool", gain=50.0)
    far.set_target(pin.SE3(np.eye(3), np.array([2.0, 1.5, 0.0])))  # pulls the arm onto its limits
    ctrl = Controller(dual_arm, [[far]], dt=0.01, position_margin=margin)
    q = np.clip(dual_arm.random_configuration(rng), lo, hi)
    for _ in range(300):
        q = ctrl.step(q)
        assert np.all(q >= lo - 1e-12) and np.all(q <= hi + 1e-12)
    assert np.min(np.minimum(q - lo, hi - q)) < 0.05  # it did push against the shrunk limits
    # starting inside the margin zone (but inside the URDF limits): pushed back, never out
    q = dual_arm.lower_limits + 0.05
    for _ in range(50):
        q = ctrl.step(q)
        assert np.all(q >= dual_arm.lower_limits) and np.all(q <= dual_arm.upper_limits)
    assert np.all(q >= lo - 1e-9)
    with pytest.raises(reljac.ConfigurationError, match="position_margin"):
        Controller(dual_arm, [[far]], dt=0.01, position_margin=-0.1)


def test_a_joint_with_equal_limits_stays_locked(tmp_path):
    text = (reljac.robots.BUNDLED_DIR / "planar_2link.urdf").read_text()
    first = text.index('lower="-3.1"')
    path = tmp_path / "locked.urdf"
    path.write_text(text[:first] + text[first:].replace('lower="-3.1" upper="3.1"', 'lower="0.3" upper="0.3"', 1))
    robot = reljac.Robot.from_urdf(path)
    assert robot.lower_limits[0] == robot.upper_limits[0] == 0.3
    task = RelativePositionTask("base_link", "tip", gain=20.0)
    task.set_target([0.0, 1.5, 0.0])
    ctrl = Controller(robot, [[task]], dt=0.01)
    q = np.array([0.3, 0.2])
    for _ in range(50):
        q = ctrl.step(q)
    assert q[0] == 0.3 and q[1] != 0.2


@pytest.mark.parametrize("bounded", [False, True])
def test_the_last_problem_is_what_the_python_step_solved(dual_arm, bounded):
    """Controller.last_problem, solved again by the Python solver, gives the step's velocity; and
    Controller.solve_levels solves it as the step does. None before a step and on the compiled
    backend."""
    from reljac.ik import compiled_available
    from reljac.ik.solvers.backend import solver

    robot = dual_arm
    q = middle(robot)
    box = RelativeFrameTask("left_tool", "right_tool", gain=20.0)
    T = Kinematics(robot, q).relative_placement("left_tool", "right_tool")
    box.set_target(pin.SE3(T.rotation, T.translation + np.array([0.05, 0.0, 0.0])))
    if bounded:
        box.set_bounds(np.r_[np.full(3, -0.01), np.full(3, -0.1)], np.r_[np.full(3, 0.01), np.full(3, 0.1)])
    levels = [[box], [PostureTask(robot, gain=1.0, weight=0.1)]]
    controller = Controller(robot, levels, dt=0.01, backend="python")
    assert controller.last_problem is None
    for _ in range(3):
        q = controller.step(q)
        problem = controller.last_problem
        assert problem is not None and len(problem) == 6
        v, _ = solver("python")(*problem)  # cold: the step's warm start holds no set yet that differs
        np.testing.assert_allclose(v, controller.last_velocity, rtol=0, atol=1e-12)
    np.testing.assert_allclose(controller.solve_levels(*problem[:5])[0], controller.last_velocity, atol=1e-12)
    if compiled_available():
        compiled = Controller(robot, levels, dt=0.01, backend="compiled")
        compiled.step(middle(robot))
        assert compiled.last_problem is None and compiled.core_step is not None

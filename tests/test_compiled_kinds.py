"""Every task kind the docs show runs in the compiled step (issue 41): a cone, a half-space (few
planes and many), a ball on every inner kind (a posture too), the support region and collision
avoidance put in a level. A stack of each runs no Python rows on the compiled backend
(``Controller.python_parts``), and its closed loop gives the velocity the Python controller (the
specification: the task classes' ``compute``) gives, step by step, with the same reports (rows
named by edge and by pair)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_bounded_compiled_step import _python_system

import reljac
from reljac.ik import (
    BallTask,
    CollisionAvoidance,
    CoMTask,
    ConeTask,
    Controller,
    HalfSpaceTask,
    JointPositionLimit,
    PostureTask,
    RelativeFrameTask,
    RelativePositionTask,
    SupportRegion,
    compiled_available,
)
from reljac.relative import Kinematics

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")

ROWS_TOL = 1e-12  # the rows of every level on both backends, relative to their largest entry
# v per step, relative to its largest component: the two solvers on the same rows agree to rounding
# amplified where the levels are near a saturation decision (up to 2e-8 seen on the collision level
# with its rows empty: the equality solvers; tests/test_inequality_compiled.py compares them)
V_TOL = 1e-7


def _pose(robot, q, a="left_tool", b="right_tool", gain=5.0):
    task = RelativeFrameTask(a, b, gain=gain)
    task.set_target(reljac.Kinematics(robot, q).relative_placement(a, b))
    return task


def cone(robot, q):
    """The left tool's z axis within 10 degrees of the world's -x (it starts outside), over the
    relative pose and a posture."""
    return [[_pose(robot, q)], [ConeTask("universe", "left_tool", np.radians(10), axis_a=[-1, 0, 0], gain=5.0)],
            [PostureTask(robot, gain=1.0, weight=0.1)]]


def half_space(robot, q, planes=3):
    """The right tool's origin in a polytope of `planes` planes of the world (it starts past some)."""
    p = reljac.Kinematics(robot, q).placement("right_tool").translation
    angles = np.linspace(0, 2 * np.pi, planes, endpoint=False)
    normals = np.c_[np.cos(angles), np.sin(angles), np.full(planes, 0.3)]
    offsets = normals @ p / np.linalg.norm(normals, axis=1) - 0.04
    return [[_pose(robot, q)], [HalfSpaceTask("universe", "right_tool", normals, offsets, gain=5.0)],
            [PostureTask(robot, gain=1.0, weight=0.1)]]


def half_space_between_tools(robot, q):
    """The right tool's origin in 3 planes of the left tool's axes (both frames moving: J_a in its
    rows), below a reach that drags the left tool away; it starts past them."""
    p = reljac.Kinematics(robot, q).relative_placement("left_tool", "right_tool").translation
    normals = np.array([[1.0, 0.2, 0.1], [-0.3, 1.0, 0.4], [0.2, -0.5, 1.0]])
    offsets = normals @ p / np.linalg.norm(normals, axis=1) - 0.03
    reach = RelativePositionTask("universe", "left_tool", gain=2.0)
    reach.set_target(reljac.Kinematics(robot, q).placement("left_tool").translation + [0.1, -0.1, 0.05])
    return [[reach], [HalfSpaceTask("left_tool", "right_tool", normals, offsets, gain=5.0)],
            [PostureTask(robot, gain=1.0, weight=0.1)]]


def ball_on_posture(robot, q):
    """The posture within 0.3 rad (norm) of a far target, over a weighted position task."""
    inner = PostureTask(robot)
    inner.set_target(q + 0.4)
    reach = RelativePositionTask("universe", "left_tool", gain=2.0)
    reach.set_target(reljac.Kinematics(robot, q).placement("left_tool").translation + [0.05, 0.0, 0.0])
    return [[BallTask(inner, 0.3, gain=5.0)], [reach], [PostureTask(robot, gain=1.0, weight=0.1)]]


def ball_on_pose(robot, q):
    inner = RelativeFrameTask("left_tool", "right_tool")
    T = reljac.Kinematics(robot, q).relative_placement("left_tool", "right_tool")
    T.translation += [0.1, -0.05, 0.0]
    inner.set_target(T)
    return [[BallTask(inner, 0.02, gain=5.0)], [PostureTask(robot, gain=1.0, weight=0.1)]]


def support_level(robot, q):
    """The support region of a 'sole' under the torso as a level below a reach that pulls the
    centre of mass out (the region's edges named in the reports)."""
    region = SupportRegion(robot, [reljac.SupportContact.rectangle("torso", 0.12, 0.12)], margin=0.01)
    reach = RelativePositionTask("universe", "left_tool", gain=2.0)
    reach.set_target(reljac.Kinematics(robot, q).placement("left_tool").translation + [0.4, 0.3, -0.2])
    return [[region], [reach], [PostureTask(robot, gain=1.0, weight=0.1)]]


def collision_level(robot, q):
    """Self-collision as a level above tools sent through each other."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pairs that start near each other
        avoidance = CollisionAvoidance(robot)
    kin = reljac.Kinematics(robot, q)
    reach = [RelativePositionTask("universe", tool, gain=3.0) for tool in ("left_tool", "right_tool")]
    reach[0].set_target(kin.placement("right_tool").translation)
    reach[1].set_target(kin.placement("left_tool").translation)
    return [[avoidance], reach, [PostureTask(robot, gain=1.0, weight=0.1)]]


STACKS = {"cone": cone, "half_space": half_space, "many_planes": lambda r, q: half_space(r, q, 60),
          "half_space_between_tools": half_space_between_tools,
          "ball_on_posture": ball_on_posture, "ball_on_pose": ball_on_pose, "support_level": support_level,
          "collision_level": collision_level}


def same_rows(compiled, oracle, q):
    """The compiled step's levels and box at q are the Python controller's (its _level: the task
    classes' compute, the specification), to rounding; a level without rows on both."""
    got, lo_c, hi_c = compiled._step.system(q)
    levels, lo, hi, _, _ = _python_system(oracle, Kinematics(oracle.robot, q))
    # (the box: reversal damping's caps follow each backend's own v, equal to V_TOL)
    np.testing.assert_allclose(lo_c, lo, rtol=V_TOL, atol=0)
    np.testing.assert_allclose(hi_c, hi, rtol=V_TOL, atol=0)
    for (A, b, _scale, _mask, _extra, lower, upper), level in zip(got, levels, strict=True):
        if len(level.b) == 0:
            assert len(b) == 0
            continue
        scale = ROWS_TOL * (1.0 + np.abs(level.b).max())
        if A is not None:
            np.testing.assert_allclose(A, level.A, rtol=0, atol=ROWS_TOL * (1 + np.abs(level.A).max()))
        np.testing.assert_allclose(b, level.b, rtol=0, atol=scale)
        assert (lower is None) == (not level.bounded)
        if lower is not None:
            np.testing.assert_allclose(lower, level.lower, rtol=0, atol=scale)
            np.testing.assert_allclose(upper, level.upper, rtol=0, atol=scale)


def follow(robot, make, q0, steps):
    """(v per step, reports per step) of each backend along the Python controller's run: each
    step made from the same q on both, whose rows are checked equal first (a closed loop of each
    would part by the solvers' rounding, amplified where a joint meets a limit)."""
    controllers = {backend: Controller(robot, make(robot, q0), dt=0.01, backend=backend)
                   for backend in ("python", "compiled")}
    parts = controllers["compiled"].python_parts
    assert parts == [], [getattr(p, "name", p) for p in parts]  # every kind compiled
    out: dict[str, tuple[list, list]] = {backend: ([], []) for backend in controllers}
    q = q0.copy()
    for _ in range(steps):
        same_rows(controllers["compiled"], controllers["python"], q)
        for backend, controller in controllers.items():
            q_next = controller.step(q)
            out[backend][0].append(controller.last_velocity)
            out[backend][1].append(controller.last_reports)
            if backend == "python":
                following = q_next
        q = following
    return {backend: (np.array(v), reports) for backend, (v, reports) in out.items()}


@pytest.mark.parametrize("name", sorted(STACKS))
def test_each_kind_runs_compiled_and_gives_the_python_controllers_velocity(dual_arm, name):
    q0 = dual_arm.neutral() + 0.2
    out = follow(dual_arm, STACKS[name], q0, 60)
    (v_py, reports_py), (v_c, reports_c) = out["python"], out["compiled"]
    assert np.abs(v_py).max() > 1e-3  # the stack asked for motion
    np.testing.assert_allclose(v_c, v_py, rtol=0, atol=V_TOL * max(1.0, np.abs(v_py).max()))
    for step_py, step_c in zip(reports_py, reports_c, strict=True):
        for py, c in zip(step_py, step_c, strict=True):
            assert c.active_rows == py.active_rows  # by name: a region's edges, a collision's pairs
            assert c.met == py.met


def _near(robot, make, q0, size_of):
    """The first q of the Python controller's run where the level's rows are some (size_of > 0)."""
    controller = Controller(robot, make(robot, q0), dt=0.01, backend="python")
    q = q0.copy()
    for _ in range(200):
        q = controller.step(q)
        if size_of(controller) > 0:
            return q
    raise AssertionError("the run never had such rows")


def test_a_region_level_names_its_rows_as_the_python_controller_does(dual_arm):
    q0 = dual_arm.neutral() + 0.2
    for make in (support_level, collision_level):
        q = _near(dual_arm, make, q0, lambda c: c.levels[0][0].size)
        names = {}
        for backend in ("python", "compiled"):
            controller = Controller(dual_arm, make(dual_arm, q0), dt=0.01, backend=backend)
            controller.step(q)
            task = controller.levels[0][0]
            names[backend] = (task.size, task.row_names)
        assert names["compiled"] == names["python"] and names["python"][0] > 0


def test_a_collision_level_reports_its_pairs_distances_through_the_limit(dual_arm):
    """The limit of a collision level reads the compiled task's rows (``last``) as the Python one
    measures them."""
    q0 = dual_arm.neutral() + 0.2
    q = _near(dual_arm, collision_level, q0, lambda c: c.levels[0][0].size)
    last = {}
    for backend in ("python", "compiled"):
        controller = Controller(dual_arm, collision_level(dual_arm, q0), dt=0.01, backend=backend)
        controller.step(q)
        last[backend] = controller.levels[0][0].limit.last
    assert last["compiled"].pairs == last["python"].pairs and len(last["python"].pairs) > 0
    np.testing.assert_allclose(last["compiled"].distance, last["python"].distance, rtol=0, atol=1e-12)
    np.testing.assert_allclose(last["compiled"].jacobian, last["python"].jacobian, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["support_level", "five_planes"])
def test_a_level_of_dependent_inequality_rows_reports_as_the_python_controller_does(dual_arm, name):
    """A region's four edges on the centre of mass's two coordinates, five planes on a position's
    three (some violated: soft rows in the level's model): rows dependent whatever P_in, which the
    compiled step (warm) certifies on A A^T without forming A P_in. Each level's velocity, smallest
    singular value, damping and met, step by step, are the Python controller's (the dependent
    level's sigma_min 0 on both)."""
    make = STACKS["support_level"] if name == "support_level" else lambda r, q: half_space(r, q, 5)
    out = follow(dual_arm, make, dual_arm.neutral() + 0.2, 40)
    (v_py, reports_py), (v_c, reports_c) = out["python"], out["compiled"]
    np.testing.assert_allclose(v_c, v_py, rtol=0, atol=V_TOL * max(1.0, np.abs(v_py).max()))
    level = 0 if name == "support_level" else 1
    assert all(step[level].smallest_singular_value == 0.0 for step in reports_py)
    for step_py, step_c in zip(reports_py, reports_c, strict=True):
        for py, c in zip(step_py, step_c, strict=True):
            assert c.met == py.met
            np.testing.assert_allclose(c.smallest_singular_value, py.smallest_singular_value, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(c.damping, py.damping, rtol=1e-9, atol=1e-15)


def test_a_region_level_hears_its_region_change(dual_arm):
    """A margin changed on the region between steps reaches the compiled level (its description
    holds the region's)."""
    q0 = dual_arm.neutral() + 0.2
    vs = {}
    for backend in ("python", "compiled"):
        controller = Controller(dual_arm, support_level(dual_arm, q0), dt=0.01, backend=backend)
        q = controller.step(q0)
        controller.levels[0][0].region.margin = 0.05
        controller.step(q)
        vs[backend] = controller.last_velocity
    np.testing.assert_allclose(vs["compiled"], vs["python"], rtol=0, atol=V_TOL * max(1.0, np.abs(vs["python"]).max()))


@pytest.mark.parametrize(("name", "level"), [("cone", 1), ("half_space", 1), ("half_space_between_tools", 1),
                                             ("ball_on_pose", 0)])
def test_frames_changed_between_steps_reach_the_compiled_step(dual_arm, name, level):
    """frame_a / frame_b set on a task between steps (a cone's, a half-space's, a relative pose's
    inside a ball) move both backends alike; a frame the robot lacks fails on both."""
    q0 = dual_arm.neutral() + 0.2
    vs = {}
    for backend in ("python", "compiled"):
        controller = Controller(dual_arm, STACKS[name](dual_arm, q0), dt=0.01, backend=backend)
        task = controller.levels[level][0]
        framed = getattr(task, "inner", task)
        q = controller.step(q0)
        framed.frame_b = "right_tool" if framed.frame_b != "right_tool" else "left_tool"
        framed.frame_a = "torso"
        controller.step(q)
        vs[backend] = controller.last_velocity
        framed.frame_b = "no_such_frame"
        with pytest.raises(reljac.FrameNotFound, match="no_such_frame"):
            controller.step(q)
    assert np.abs(vs["python"]).max() > 1e-3
    np.testing.assert_allclose(vs["compiled"], vs["python"], rtol=0, atol=V_TOL * max(1.0, np.abs(vs["python"]).max()))


def test_what_fixes_a_tasks_rows_cannot_be_set_after_construction(dual_arm):
    """A CoM task's axes, a ball's inner task, a region task's region, a position limit's limits
    and an avoidance task's limit are what the compiled step was built from: read-only (setting
    one moved the Python rows alone; a frame can change: above)."""
    com = CoMTask(dual_arm, axes="xy")
    ball = BallTask(RelativePositionTask("universe", "left_tool"), 0.1)
    region = support_level(dual_arm, dual_arm.neutral())[0][0].as_task()
    position, avoidance = JointPositionLimit(dual_arm), CollisionAvoidance(dual_arm).as_task()
    for task, name in ((com, "axes"), (ball, "inner"), (region, "region"), (position, "q_max"),
                       (position, "q_min"), (avoidance, "limit")):
        with pytest.raises(AttributeError):
            setattr(task, name, getattr(task, name))
    assert com.axes == "xy" and com.size == 2
    with pytest.raises(reljac.TaskError, match="frame name"):
        ConeTask("universe", "left_tool", 0.3).frame_b = 2.5


def test_a_cone_refuses_bounds_other_than_its_half_angle() -> None:
    task = ConeTask("universe", "left_tool", 0.3)
    with pytest.raises(reljac.TaskError, match="set half_angle"):
        task.set_bounds()
    with pytest.raises(reljac.TaskError, match="set half_angle"):
        task.set_bounds(-0.1, 0.2)
    task.set_bounds(None, 0.2)
    assert task.half_angle == 0.2
    assert task.bounds is not None and task.bounds[1][0] == 0.2

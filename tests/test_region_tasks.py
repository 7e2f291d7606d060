"""Region tasks (issue 29): an axis within a cone (ConeTask), a frame's origin in a half-space
(HalfSpaceTask), and the SupportRegion and CollisionAvoidance limits put in a level (their
as_task()). Jacobians against finite differences, the rates back into a region against closed
forms, closed loops (the region entered and kept, the level below left free inside it), the
priorities (a level below that asks for the region's outside is stopped at its edge), and the
QP-cascade oracle on a level of region rows."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pinocchio as pin
import pytest

from reljac import SupportContact
from reljac.collision import CollisionModel
from reljac.exceptions import TaskError
from reljac.ik import (
    CollisionAvoidance,
    CollisionAvoidanceTask,
    CoMTask,
    ConeTask,
    Controller,
    DampingPolicy,
    FrameTask,
    HalfSpaceTask,
    PostureTask,
    RelativePositionTask,
    SupportRegion,
    SupportRegionTask,
    solve,
)
from reljac.ik.limits.base import intersect
from reljac.ik.limits.joints import JointPositionLimit
from reljac.ik.solvers.backend import BACKENDS, compiled_available
from reljac.ik.solvers.inequality import level_rows, solve_lexicographic
from reljac.relative import Kinematics

Q = np.array([0.3, 0.5])


def _middle(robot):
    return robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))


def _directional_fd(task, robot, q, v, eps=1e-6):
    """(e(q + eps v) - e(q - eps v)) / (2 eps): de/dt along v by central differences."""
    plus = task.compute(Kinematics(robot, pin.integrate(robot.model, q, eps * v)))[0]
    minus = task.compute(Kinematics(robot, pin.integrate(robot.model, q, -eps * v)))[0]
    return (plus - minus) / (2 * eps)


def _angle(robot, q, frame_a, frame_b, axis_b, axis_a):
    """The cone's angle from the world placements of a and b (pin's data, not the task's code)."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    R_wa, R_wb = data.oMf[robot.frame_id(frame_a)].rotation, data.oMf[robot.frame_id(frame_b)].rotation
    w = R_wa.T @ R_wb @ (np.asarray(axis_b) / np.linalg.norm(axis_b))
    return math.acos(np.clip(w @ (np.asarray(axis_a) / np.linalg.norm(axis_a)), -1.0, 1.0))


# ------------------------------------------------------------------------------------- ConeTask
@pytest.mark.parametrize("axis_b, axis_a", [((0, 0, 1), (0, 0, 1)), ((1, 0, 0), (0.3, -0.2, 1.0)),
                                            ((0, 1, 1), (1, 0, 0))])
def test_cone_angle_and_jacobian_match_an_independent_angle_and_finite_differences(dual_arm, axis_b, axis_a):
    rng = np.random.default_rng(5)
    for _ in range(4):
        q = dual_arm.random_configuration(rng)
        cone = ConeTask("torso", "left_tool", 0.3, axis_b=axis_b, axis_a=axis_a)
        e, J, ff = cone.compute(Kinematics(dual_arm, q))
        assert e[0] == pytest.approx(_angle(dual_arm, q, "torso", "left_tool", axis_b, axis_a), abs=1e-12)
        assert J.shape == (1, dual_arm.nv) and ff.tolist() == [0.0]
        v = rng.normal(size=dual_arm.nv)
        assert (J @ v)[0] == pytest.approx(_directional_fd(cone, dual_arm, q, v)[0], abs=1e-6)


def test_cone_axis_opposite_gets_a_row_that_turns_it_back(dual_arm):
    """theta = pi: the gradient is undefined; the row is a rotation about a perpendicular of the
    cone's axis, and one step along it makes theta smaller."""
    q = _middle(dual_arm)
    R_ab = Kinematics(dual_arm, q).relative_placement("torso", "left_tool").rotation
    cone = ConeTask("torso", "left_tool", 0.5, axis_b=(0, 0, 1), axis_a=-(R_ab @ [0, 0, 1]), gain=2.0)
    e, J, _ = cone.compute(Kinematics(dual_arm, q))
    assert e[0] == pytest.approx(math.pi, abs=1e-7) and np.linalg.norm(J) > 0.1
    controller = Controller(dual_arm, [cone], dt=0.01, backend="python", anti_chatter=False)
    q_next = controller.step(q)
    assert cone.angle(Kinematics(dual_arm, q_next)) < math.pi - 1e-3


def test_cone_outside_comes_back_at_the_gain_and_rests_on_its_surface(dual_arm):
    """One row, 15 joints (no error-dependent damping): the first step's rate is exactly gain
    (half_angle - theta); the axis enters the cone and rests on its surface while the level
    below, which holds the orientation of the start, is left what the cone allows."""
    q = _middle(dual_arm)
    theta0 = _angle(dual_arm, q, "torso", "left_tool", (0, 0, 1), (0, 0, 1))
    half = 0.7 * theta0
    cone = ConeTask("torso", "left_tool", half, gain=2.0)
    away = FrameTask("left_tool", gain=2.0, weight=[0, 0, 0, 1, 1, 1])  # the orientation at the start
    away.set_target(Kinematics(dual_arm, q).placement("left_tool"))
    controller = Controller(dual_arm, [[cone], [away]], dt=0.01, backend="python", anti_chatter=False,
                            damping=DampingPolicy(error_damping=0.0))
    controller.velocity(q)
    J = cone.compute(Kinematics(dual_arm, q))[1]
    assert (J @ controller.last_velocity)[0] == pytest.approx(2.0 * (half - theta0), abs=1e-9)
    assert controller.last_reports[0].active_rows == ["cone of left_tool in torso[0]"]
    for _ in range(300):
        q = controller.step(q)
    # on the surface, past it by at most the second-order part of a step / (gain dt) (~1e-3 rad)
    assert half - 1e-4 <= cone.angle(Kinematics(dual_arm, q)) <= half + 2e-3
    assert cone.error_norms(Kinematics(dual_arm, q))["outside"] < 2e-3
    assert not controller.last_reports[1].met  # the level below wants the axis back out


def test_cone_inside_with_margin_costs_nothing(dual_arm):
    """Inside with margin: the posture below is met exactly, v = -gain (q - q_target)."""
    q = _middle(dual_arm)
    theta = _angle(dual_arm, q, "torso", "left_tool", (0, 0, 1), (0, 0, 1))
    cone = ConeTask("torso", "left_tool", min(theta + 0.5, math.pi))
    posture = PostureTask(dual_arm, gain=1.0)
    posture.set_target(q + 0.01)
    controller = Controller(dual_arm, [[cone], [posture]], dt=0.01, backend="python", anti_chatter=False)
    np.testing.assert_allclose(controller.velocity(q), np.full(dual_arm.nv, 0.01), atol=1e-12)
    assert controller.last_reports[0].active_rows == [] and controller.last_reports[1].met


@pytest.mark.parametrize("kwargs, match", [
    ({"half_angle": 3.5}, r"must be in \[0, pi\], got 3.5"),
    ({"half_angle": "wide"}, "must be a number of radians"),
    ({"half_angle": 0.3, "axis_b": (0, 0, 0)}, "axis_b of a ConeTask must be 3 finite numbers, not all zero"),
    ({"half_angle": 0.3, "axis_a": (1, 2)}, "axis_a of a ConeTask must be 3 finite numbers"),
])
def test_cone_bad_input_is_named(kwargs, match):
    with pytest.raises(TaskError, match=match):
        ConeTask("torso", "left_tool", **kwargs)
    if "axis" not in str(kwargs):  # the half-angle given as the upper bound: the same words (numpy's before)
        with pytest.raises(TaskError, match=match):
            ConeTask("torso", "left_tool", 0.3).set_bounds(None, kwargs["half_angle"])


# --------------------------------------------------------------------------------- HalfSpaceTask
def test_half_space_rows_and_jacobian(dual_arm):
    """e = n . p_ab - c with n normalized; J against finite differences; two planes at once."""
    rng = np.random.default_rng(6)
    q = dual_arm.random_configuration(rng)
    task = HalfSpaceTask("torso", "left_tool", [[0, 0, 2], [1, -1, 0]], [0.1, 0.0])
    p = Kinematics(dual_arm, q).relative_placement("torso", "left_tool").translation
    e, J, _ = task.compute(Kinematics(dual_arm, q))
    np.testing.assert_allclose(e, [p[2] - 0.1, (p[0] - p[1]) / math.sqrt(2)], atol=1e-12)
    v = rng.normal(size=dual_arm.nv)
    np.testing.assert_allclose(J @ v, _directional_fd(task, dual_arm, q, v), atol=1e-6)


def test_an_axis_aligned_half_space_is_a_bounded_position_task(planar):
    """n = x of a: the same rows as RelativePositionTask (target 0) with upper bound c on x."""
    kin = Kinematics(planar, Q)
    c = kin.relative_placement("base_link", "tip").translation[0] - 0.2  # the tip 0.2 m beyond the plane
    plane = HalfSpaceTask("base_link", "tip", [1, 0, 0], c, gain=3.0)
    box = RelativePositionTask("base_link", "tip", gain=3.0, weight=[1, 0, 0])
    box.set_target(np.zeros(3))
    box.set_bounds(None, [c, np.inf, np.inf])
    a, b = plane.rows(kin), box.rows(kin)
    np.testing.assert_allclose(a.A, b.A, atol=1e-15)
    np.testing.assert_allclose([a.lower, a.upper], [b.lower, b.upper], atol=1e-12)
    assert a.upper[0] == pytest.approx(3.0 * -0.2)  # back at the gain: n . d/dt p = gain (c - n . p)
    controller = Controller(planar, [plane], dt=0.01, backend="python", anti_chatter=False)
    v = controller.velocity(Q)
    assert (a.A @ v)[0] == pytest.approx(-0.6, abs=1e-9)


def test_half_space_closed_loop_enters_and_rests_on_the_plane(planar):
    """The tip sent 0.3 m inward (-x) under the half-space x >= target + 0.1 (n = -x, c = -(target
    + 0.1)): it stops on the plane."""
    kin = Kinematics(planar, Q)
    target = kin.relative_placement("base_link", "tip").translation - [0.3, 0.0, 0.0]
    plane = HalfSpaceTask("base_link", "tip", [-1, 0, 0], -(target[0] + 0.1), gain=10.0)
    reach = RelativePositionTask("base_link", "tip", gain=5.0, weight=[1, 1, 0])
    reach.set_target(target)
    controller = Controller(planar, [[plane], [reach]], dt=0.01, backend="python", anti_chatter=False)
    q = Q
    for _ in range(400):
        q = controller.step(q)
    x = Kinematics(planar, q).relative_placement("base_link", "tip").translation[0]
    assert x == pytest.approx(target[0] + 0.1, abs=1e-4)  # on the plane, the reach stopped there
    assert plane.error_norms(Kinematics(planar, q))["outside"] < 1e-4


@pytest.mark.parametrize("normal, offset, match", [
    ([0, 0, 0], 0.1, "must not be zero"),
    ([[1, 0, 0], [0, 1, 0]], [0.1], "must be 2 finite number"),
    ([1, 0], 0.1, "shape"),
    ([1, 0, 0], np.nan, "must be 1 finite number"),
    (np.zeros((0, 3)), np.zeros(0), "at least one plane's normal, got none"),  # (the core refused it at the step)
])
def test_half_space_bad_input_is_named(normal, offset, match):
    with pytest.raises(TaskError, match=match):
        HalfSpaceTask("torso", "left_tool", normal, offset)


def test_directions_of_huge_numbers_are_normalized_without_overflow(dual_arm):
    """Axes and normals of 1e308 (their squares overflow): the same unit directions as of 1, no
    numpy warning, and a step on both backends (the core refused a cone's zero axis before)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning fails the test
        cone = ConeTask("torso", "left_tool", 0.5, axis_b=[1e308, 1e308, 0], axis_a=[0, -1e308, 0])
        plane = HalfSpaceTask("torso", "left_tool", [[1e308, 0, 1e308], [0, 0, 1e-3]], [0.5, 0.2])
    np.testing.assert_allclose(cone.axis_b, [math.sqrt(0.5), math.sqrt(0.5), 0], rtol=1e-15)
    np.testing.assert_allclose(cone.axis_a, [0, -1, 0], rtol=1e-15)
    with pytest.raises(TaskError, match="must not be zero"):  # 1e-300 is below the zero threshold
        HalfSpaceTask("torso", "left_tool", [0, 0, 1e-300], 0.2)
    plane.set_planes([[1e308, 0, 1e308], [0, 0, 2]], [0.5, 0.2])
    np.testing.assert_allclose(plane.normals, [[math.sqrt(0.5), 0, math.sqrt(0.5)], [0, 0, 1]], rtol=1e-15)
    q = dual_arm.neutral()
    for backend in BACKENDS if compiled_available() else ("python",):
        v = Controller(dual_arm, [[cone, plane]], dt=0.01, backend=backend).velocity(q)
        assert np.isfinite(v).all()


def test_half_space_set_planes_keeps_the_count():
    task = HalfSpaceTask("torso", "left_tool", [0, 0, 1], 0.2)
    task.set_planes([0, 0, 3], 0.4)
    np.testing.assert_allclose(task.normals, [[0, 0, 1]]) and np.testing.assert_allclose(task.offsets, [0.4])
    with pytest.raises(TaskError, match="has 1 plane"):
        task.set_planes([[0, 0, 1], [1, 0, 0]], [0, 0])


# ------------------------------------------------------------------------ SupportRegion as a level
def _region(robot, margin=0.02):
    """An 8 cm square about the dual-arm's centre of mass at the middle of its joint ranges, (0.057,
    0) m in the base's x-y (it moves up to about +-8.7 cm with the arms)."""
    corners = np.array([[x, y, 0.0] for x in (0.017, 0.097) for y in (-0.04, 0.04)])
    return SupportRegion(robot, [SupportContact("base_link", corners)], margin=margin)


def test_support_rows_are_the_limits_edges_and_match_finite_differences(dual_arm):
    rng = np.random.default_rng(7)
    q = dual_arm.random_configuration(rng)
    region = _region(dual_arm)
    task = region.as_task(gain=7.0)
    kin = Kinematics(dual_arm, q)
    e, J, _ = task.compute(kin)
    limit = region.constraint(kin, 0.01)
    np.testing.assert_allclose(J, limit.C, atol=1e-15)
    polygon = region.polygon(kin)
    np.testing.assert_allclose(-e, polygon.offsets - 0.02 - polygon.normals @ kin.center_of_mass()[:2], atol=1e-15)
    v = rng.normal(size=dual_arm.nv)
    np.testing.assert_allclose(J @ v, _directional_fd(task, dual_arm, q, v), atol=1e-6)
    assert task.row_names == [f"support region (edge {i} of 4)" for i in range(1, 5)]
    assert task.bounds[1].tolist() == [0.0] * 4 and task.weight.tolist() == [1.0] * 4


def test_a_region_in_a_level_is_its_task_and_leaves_the_limits_alone(dual_arm):
    region = _region(dual_arm)
    posture = PostureTask(dual_arm)
    posture.set_target(_middle(dual_arm))
    controller = Controller(dual_arm, [region, posture], dt=0.01)
    task = controller.levels[0][0]
    assert isinstance(task, SupportRegionTask) and task.region is region and task.gain == 20.0
    assert region not in controller.limits  # (its rows come from Python: the compiled step takes them)
    above = Controller(dual_arm, [posture], dt=0.01, constraints=[region], backend="python")
    assert region in above.limits  # the above-all use is unchanged


def _com_pushed_out(robot, q, levels_before, region):
    """The centre of mass sent 0.5 m beyond the region's +x edge by a CoMTask below the region."""
    com = CoMTask(robot, axes="xy", gain=5.0, max_speed=0.2)
    com.set_target(Kinematics(robot, q).center_of_mass()[:2] + [0.5, 0.0])
    return [*levels_before, [com]]


def test_the_region_stops_a_centre_of_mass_task_below_it_at_the_shrunk_edge(dual_arm):
    """Level 0 the region (margin 2 cm, gain 20/s), level 1 a CoM task pushing 0.5 m out: the
    centre of mass comes to the shrunk edge and rests on it. Without the region it goes past."""
    q0 = _middle(dual_arm)
    region = _region(dual_arm)
    for with_region in (True, False):
        levels = _com_pushed_out(dual_arm, q0, [[region]] if with_region else [], region)
        controller = Controller(dual_arm, levels, dt=0.01, backend="python", anti_chatter=False)
        q, closest = q0, np.inf
        for _ in range(300):
            q = controller.step(q)
            kin = Kinematics(dual_arm, q)
            closest = min(closest, region.polygon(kin).signed_distance(kin.center_of_mass()))
        if with_region:
            assert closest >= 0.02 - 1e-4, closest
            assert closest <= 0.02 + 1e-3  # it did come to the edge
            assert controller.last_reports[0].active_rows  # an edge held
            assert not controller.last_reports[1].met
        else:
            assert closest < 0.02 - 5e-3, closest


def test_a_region_inside_with_margin_costs_nothing(dual_arm):
    q = _middle(dual_arm)
    posture = PostureTask(dual_arm, gain=1.0)
    posture.set_target(q + 0.002)
    controller = Controller(dual_arm, [_region(dual_arm, margin=0.0), posture], dt=0.01, backend="python",
                            anti_chatter=False)
    np.testing.assert_allclose(controller.velocity(q), np.full(dual_arm.nv, 0.002), atol=1e-12)
    assert controller.last_reports[0].met and controller.last_reports[0].active_rows == []


def test_a_level_of_region_rows_agrees_with_the_qp_cascade(dual_arm):
    """The levels region > CoM out > posture at configurations on the way out: each level's
    violation equals the cascade's (the oracle's levels are the controller's own rows)."""
    qp_cascade = pytest.importorskip("qp_cascade", reason="needs daqp (the test extra)")
    q = _middle(dual_arm)
    region = _region(dual_arm)
    levels = _com_pushed_out(dual_arm, q, [[region]], region)
    posture = PostureTask(dual_arm, gain=1.0, weight=0.1)
    posture.set_target(q)
    controller = Controller(dual_arm, [*levels, [posture]], dt=0.01, backend="python", anti_chatter=False)
    checked = 0
    for k in range(120):
        q = controller.step(q)
        if k % 20 != 19:
            continue
        kin = Kinematics(dual_arm, q)
        built = [controller._level(tasks, kin) for tasks in controller.levels]
        for level in built:
            level.extra_damping = 0.0
        lo, hi, C, d, _ = intersect([limit.constraint(kin, 0.01) for limit in controller.limits], dual_arm.nv)
        C = np.zeros((0, dual_arm.nv)) if C is None else C
        d = np.zeros(0) if d is None else d
        v, _ = solve_lexicographic(built, lo, hi, C=C, d=d,
                                   policy=DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0))
        rows = [level_rows(level, dual_arm.nv, i) for i, level in enumerate(built)]
        differences = qp_cascade.differences(qp_cascade.Problem([(r.A, r.lower, r.upper) for r in rows], lo, hi, C, d),
                                             v)
        assert differences is not None and max(differences) <= 1e-5, (k, differences)
        checked += 1
    assert checked == 6


# ------------------------------------------------------------------ CollisionAvoidance as a level
def _crossing(robot, q):
    """The left tool sent to where the right tool is: the arms must meet."""
    lead = FrameTask("left_tool", gain=20.0, weight=[1, 1, 1, 0, 0, 0])
    lead.set_target(Kinematics(robot, q).placement("right_tool"))
    return lead


def test_avoidance_rows_are_the_distances_above_the_minimum(dual_arm):
    q = _middle(dual_arm)
    avoidance = CollisionAvoidance(dual_arm, min_distance=0.01, influence_distance=0.3, margin=0.002)
    task = avoidance.as_task()
    kin = Kinematics(dual_arm, q)
    e, J, _ = task.compute(kin)
    rows = avoidance.last
    assert len(e) == len(rows) > 0 and task.row_names == [f"{a}/{b}" for a, b in rows.pairs]
    np.testing.assert_allclose(e, rows.distance - 0.012, atol=1e-15)
    np.testing.assert_allclose(J, rows.jacobian, atol=1e-15)
    assert task.bounds[0].tolist() == [0.0] * len(e) and np.isinf(task.bounds[1]).all()
    far = CollisionAvoidance(dual_arm, min_distance=0.001, influence_distance=0.002, margin=0.0).as_task()
    assert far.compute(kin)[0].shape == (0,) and far.compute(kin)[1].shape == (0, dual_arm.nv)


def test_avoidance_as_a_level_keeps_the_arms_apart_below_nothing_and_above_the_reaches(dual_arm):
    """Level 0 collision avoidance (2 cm apart), levels 1 and 2 the tools sent to each other's
    place (the arms must pass each other): every pair (the model's own distances, all pairs)
    stays >= 2 cm - 0.1 mm, and the levels below name the avoidance rows they were held on (pairs
    of the model). Without the level the arms go through each other."""
    model = CollisionModel(dual_arm)
    q0 = _middle(dual_arm)
    kin = Kinematics(dual_arm, q0)
    for with_level in (True, False):
        lead = FrameTask("left_tool", gain=20.0, weight=[1, 1, 1, 0, 0, 0])
        lead.set_target(kin.placement("right_tool"))
        follow = FrameTask("right_tool", gain=20.0, weight=[1, 1, 1, 0, 0, 0])
        follow.set_target(kin.placement("left_tool"))
        avoidance = CollisionAvoidance(dual_arm, model=model, min_distance=0.02, influence_distance=0.06, margin=0.0)
        levels = [[avoidance], [lead], [follow]] if with_level else [[lead], [follow]]
        controller = Controller(dual_arm, levels, dt=0.01, anti_chatter=False)
        q, lowest, held = q0, np.inf, set()
        for _ in range(250):
            q = controller.step(q)
            lowest = min(lowest, float(model.distances(q, jacobians=False).distance.min()))
            if not with_level and lowest < 0.0:
                break  # through each other: shown
            if with_level:  # rows of level 0 that held a level below, by pair
                task = controller.levels[0][0]
                held |= {task.row_names[i] for report in controller.last_reports for level, i in report.held
                         if level == 0}
        if with_level:
            assert lowest >= 0.02 - 1e-4, lowest
            assert held and held <= {"/".join(pair) for pair in model.pairs}, held
            assert avoidance.last is not None
        else:
            assert lowest < 0.0, lowest


# ------------------------------------------------------------------------- levels and bad input
def test_a_limit_without_a_task_form_is_refused_in_a_level(dual_arm):
    posture = PostureTask(dual_arm)
    posture.set_target(_middle(dual_arm))
    with pytest.raises(TaskError, match="level 0: limit 'joint position' cannot be a level's rows"):
        Controller(dual_arm, [[JointPositionLimit(dual_arm)], [posture]], dt=0.01)


def test_solve_brings_the_centre_of_mass_into_a_region_put_in_a_level(dual_arm):
    """A region in a level counts for convergence: from a seed whose centre of mass is outside
    the shrunk region, the answer's is inside (its rows recomputed there: none past its bound)."""
    rng = np.random.default_rng(3)
    task = _region(dual_arm).as_task()
    seeds = (dual_arm.random_configuration(rng) for _ in range(200))
    q0 = next(q for q in seeds if task.error_norms(Kinematics(dual_arm, q))["outside"] > 0.01)
    posture = PostureTask(dual_arm)
    posture.set_target(_middle(dual_arm))
    result = solve(dual_arm, q0, [[task], [posture]], restarts=3)
    assert result.reason == "converged"
    assert task.error_norms(Kinematics(dual_arm, result.q))["outside"] <= 1e-4
    assert result.errors[task.name]["outside"] <= 1e-4


def test_region_rows_keep_their_own_bounds_and_one_weight(dual_arm):
    task = _region(dual_arm).as_task(weight=2.0)
    with pytest.raises(TaskError, match="keeps its own bounds"):
        task.set_bounds(-1.0, 1.0)
    with pytest.raises(TaskError, match="one number for all its rows"):
        task.weight = [1.0, 2.0]
    with pytest.raises(TaskError, match="needs a reljac.ik.SupportRegion"):
        SupportRegionTask("region")
    with pytest.raises(TaskError, match="needs a reljac.ik.CollisionAvoidance"):
        CollisionAvoidanceTask(_region(dual_arm))
    kin = Kinematics(dual_arm, _middle(dual_arm))
    rows = task.rows(kin)
    np.testing.assert_allclose(rows.A, 2.0 * task.compute(kin)[1], atol=1e-15)

"""Tasks with bounds in the search (solve, Solver.solve, solve_many; issues 26 and 29): a bounded
task is met when its error is inside its bounds (its cost is the squared weighted violation, 0
inside), at its priority.

Oracles: the planar arm's closed forms (L1 = 1 m, L2 = 0.8 m, joints about z at the base and at
(1, 0, 0) of link 1: the tip is at L1 (cos q1, sin q1) + L2 (cos(q1 + q2), sin(q1 + q2)), its
distance from the base sqrt(L1^2 + L2^2 + 2 L1 L2 cos q2)), the kinematics recomputed at the
answer, and the two backends against each other (the Python search is the compiled one's
specification: the same q from the same seed).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

from reljac.ik import (
    ConeTask,
    FrameTask,
    HalfSpaceTask,
    PostureTask,
    RelativeFrameTask,
    RelativePositionTask,
    Solver,
    compiled_available,
    solve,
    solve_many,
)
from reljac.ik.tasks.ball import BallTask
from reljac.relative import Kinematics

L1, L2 = 1.0, 0.8
TOL = 1e-4  # solve's default tol [m, rad]
SAME_Q = 1e-9  # both backends, the same seeds [rad]
OPEN = np.inf


def tip(robot, q):
    return Kinematics(robot, q).relative_placement("base_link", "tip").translation


def tip_task(weight=(1, 1, 0), name=None, target=(0.0, 0.0, 0.0)):
    task = RelativePositionTask("base_link", "tip", weight=list(weight), **({"name": name} if name else {}))
    task.set_target(np.array(target, dtype=float))
    return task


def box_task(lower, upper):
    """The tip's (x, y) within [lower, upper] (target 0: e is the position itself)."""
    task = tip_task()
    task.set_bounds([lower[0], lower[1], -OPEN], [upper[0], upper[1], OPEN])
    return task


def run_both(robot, levels_of, q0, seed=0, **options):
    """The results of Solver.solve on each backend, each on levels made anew."""
    out = {}
    for backend in ["python"] + (["compiled"] if compiled_available() else []):
        solver = Solver(robot, levels_of(), backend=backend, **options)
        assert solver.backend == backend  # (compiled: every task's rows are the core's)
        out[backend] = solver.solve(q0, seed=seed)
    return out


def assert_backends_agree(results):
    if "compiled" not in results:
        pytest.skip("the compiled core is not built")
    a, b = results["python"], results["compiled"]
    assert (a.reason, a.iterations, a.restarts) == (b.reason, b.iterations, b.restarts)
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=SAME_Q)
    np.testing.assert_allclose(a.level_errors, b.level_errors, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_box_that_excludes_the_seed_is_reached_on_its_boundary(planar, backend):
    """The tip enters the box and stops there: inside up to tol, on a face (a coordinate within
    tol of a bound), not deep inside where a full Newton step would land."""
    lower, upper = np.array([1.0, 0.5]), np.array([1.2, 0.7])
    q0 = np.zeros(2)  # the tip at (1.8, 0): outside
    assert not (lower <= tip(planar, q0)[:2]).all() or not (tip(planar, q0)[:2] <= upper).all()
    result = solve(planar, q0, [[box_task(lower, upper)]], backend=backend)
    assert (result.converged, result.reason, result.message) == (True, "converged", "converged")
    p = tip(planar, result.q)[:2]
    assert np.linalg.norm(p - np.clip(p, lower, upper)) <= TOL  # inside up to tol
    assert min(np.abs(p - lower).min(), np.abs(p - upper).min()) <= TOL  # on a face
    # the error itself (the tip's position, > 1 m) is not what is reported: its violation is
    violation = np.linalg.norm(p - np.clip(p, lower, upper))
    assert result.errors["position of tip in base_link"]["position"] == pytest.approx(violation, abs=1e-9)
    assert result.level_errors[0] == pytest.approx(violation, abs=1e-9) and result.levels_met == [True]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("max_step", [None, 0.02])
def test_a_half_space_is_reached_on_its_face(planar, backend, max_step):
    """x <= 1.2 from x = 1.76: a full Newton step from there (the arm near its stretch) would end
    about 1.2 m inside; the search stops where the tip enters, |x - 1.2| <= tol."""
    half = tip_task(weight=(1, 0, 0))
    half.set_bounds(upper=[1.2, OPEN, OPEN])
    q0 = np.array([0.1, 0.2])
    assert tip(planar, q0)[0] > 1.2 + 0.5
    result = solve(planar, q0, [[half]], backend=backend, max_step=max_step)
    assert result.reason == "converged"
    assert tip(planar, result.q)[0] == pytest.approx(1.2, abs=TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ball_about_the_base_is_entered_at_its_radius(planar, backend):
    """|p| <= 1.5 depends on q2 alone: the shoulder's row is 0, so q1 stays at the seed's, and q2
    ends where the tip enters the ball: cos q2 = (1.5^2 - L1^2 - L2^2) / (2 L1 L2) (|p| within tol
    of 1.5: q2 within tol / (d|p|/dq2) = tol / 0.43 of it)."""
    ball = BallTask(tip_task(), 1.5)
    q0 = np.array([0.4, 0.3])
    solver = Solver(planar, [[ball]], backend=backend)
    assert solver.backend == backend  # a BallTask of a compiled task is compiled
    result = solver.solve(q0)
    assert result.reason == "converged"
    assert result.q[0] == pytest.approx(0.4, abs=1e-12)
    assert result.q[1] == pytest.approx(np.arccos((1.5 ** 2 - L1 ** 2 - L2 ** 2) / (2 * L1 * L2)), abs=TOL / 0.43)
    assert np.linalg.norm(tip(planar, result.q)) == pytest.approx(1.5, abs=TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unreachable_box_gives_the_closest_configuration(planar, backend):
    """The box [3, 3.2] x [0.5, 0.7] is beyond reach (1.8 m): the closest tip is at full stretch
    toward its nearest point (3, 0.5), q = (atan2(0.5, 3), 0), sqrt(3^2 + 0.5^2) - 1.8 away."""
    result = solve(planar, np.zeros(2), [[box_task([3.0, 0.5], [3.2, 0.7])]], backend=backend, restarts=3)
    assert (result.converged, result.reason) == (False, "unreachable")
    assert "level 1 (position of tip in base_link) not met" in result.message
    np.testing.assert_allclose(result.q, [np.arctan2(0.5, 3.0), 0.0], atol=1e-3)
    assert result.level_errors[0] == pytest.approx(np.hypot(3.0, 0.5) - 1.8, abs=1e-6)
    assert result.errors["position of tip in base_link"]["position"] == pytest.approx(result.level_errors[0],
                                                                                     abs=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bound_above_an_equality_level_holds_and_the_level_below_is_met(planar, backend):
    """y >= 0.5 above x = 1.2: both can be met (x = 1.2 on the circle of radius < 1.8 leaves y
    up to sqrt(...) > 0.5): converged, x = 1.2 and y >= 0.5, from a seed with y < 0.5."""
    above = tip_task(weight=(0, 1, 0), name="y")
    above.set_bounds(lower=[-OPEN, 0.5, -OPEN])
    below = tip_task(weight=(1, 0, 0), name="x", target=(1.2, 0.0, 0.0))
    q0 = np.array([0.0, 0.3])
    assert tip(planar, q0)[1] < 0.5
    result = solve(planar, q0, [[above], [below]], backend=backend)
    p = tip(planar, result.q)
    assert result.reason == "converged" and result.levels_met == [True, True]
    assert p[0] == pytest.approx(1.2, abs=TOL) and p[1] >= 0.5 - TOL


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bound_keeps_its_priority_over_a_level_it_stops(planar, backend):
    """y >= 0.5 above the tip at (1.5, 0): the closest the bound allows is (1.5, 0.5), 0.5 m from
    the target (reachable: |(1.5, 0.5)| < 1.8). The bound holds; the level below cannot come
    nearer than 0.5 without breaking it, and comes within 1 mm of that."""
    above = tip_task(weight=(0, 1, 0), name="y")
    above.set_bounds(lower=[-OPEN, 0.5, -OPEN])
    below = tip_task(name="goal", target=(1.5, 0.0, 0.0))
    result = solve(planar, np.array([0.0, 0.3]), [[above], [below]], backend=backend, restarts=2)
    p = tip(planar, result.q)
    assert result.reason == "unreachable" and result.levels_met == [True, False]
    assert "level 2 (goal) not met" in result.message
    assert p[1] >= 0.5 - TOL
    assert 0.5 - TOL <= result.level_errors[1] <= 0.5 + 1e-3
    assert result.level_errors[1] == pytest.approx(np.hypot(p[0] - 1.5, p[1]), abs=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bounds_met_at_the_seed_converge_at_once(planar, backend):
    q0 = np.array([0.2, 0.9])
    p = tip(planar, q0)[:2]
    band = PostureTask(planar)
    band.set_centring_band(0.5)  # a posture with bounds: never counted
    result = solve(planar, q0, [[box_task(p - 0.1, p + 0.1)], [band]], backend=backend)
    assert (result.reason, result.iterations, result.restarts) == ("converged", 0, 0)
    np.testing.assert_array_equal(result.q, q0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_centring_band_below_does_not_count(planar, backend):
    """A band the answer violates (joint 2 near its limit, band +-0.05 of the range about 0) at
    the lowest level: converged all the same, its violation reported."""
    target = tip_task(target=(0.3, 0.0, 0.0))  # |p| = 0.3: cos q2 = (0.09 - 1.64) / 1.6, |q2| = 2.89
    band = PostureTask(planar)
    band.set_target(np.zeros(2))
    band.set_centring_band(0.05)
    result = solve(planar, np.array([0.1, 2.0]), [[target], [band]], backend=backend)
    assert result.reason == "converged"
    assert result.levels_met == [True, None]
    half = 0.05 * 6.2 / 2
    assert result.errors["posture"]["error"] >= abs(result.q[1]) - half - 1e-9 > 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_set_bounds_after_the_solver_was_made_is_honoured(planar, backend):
    task = box_task([1.0, 0.5], [1.2, 0.7])
    solver = Solver(planar, [[task]], backend=backend)
    first = tip(planar, solver.solve(np.zeros(2)).q)[:2]
    assert (first >= [1.0 - TOL, 0.5 - TOL]).all() and (first <= [1.2 + TOL, 0.7 + TOL]).all()
    task.set_bounds([-0.7, -1.2, -OPEN], [-0.5, -1.0, OPEN])
    second = solver.solve(np.zeros(2))
    p = tip(planar, second.q)[:2]
    assert second.reason == "converged"
    assert (p >= [-0.7 - TOL, -1.2 - TOL]).all() and (p <= [-0.5 + TOL, -1.0 + TOL]).all()
    task.set_bounds()  # cleared: the target (0, 0) is out of reach (|q2| <= 3.1: |p| >= nearest)
    third = solver.solve(np.zeros(2), seed=1)
    nearest = np.sqrt(L1 ** 2 + L2 ** 2 + 2 * L1 * L2 * np.cos(3.1))
    assert third.reason == "unreachable"
    assert nearest - 1e-9 <= third.level_errors[0] <= nearest + 1e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_set_bounds_between_two_solve_many_reaches_every_worker(planar, backend):
    """Boxes about each problem's target (the centre): +-0.1 beside the target, then +-0.05."""
    task = tip_task(name="box")
    task.set_bounds([0.9, 0.4, -OPEN], [1.1, 0.6, OPEN])  # about the target 0: (1, 0.5) +- 0.1
    solver = Solver(planar, [[task]], backend=backend, restarts=3)
    centres = [np.array([0.1, 0.1, 0.0]), np.array([-1.4, 0.0, 0.0]), np.array([-0.5, -1.5, 0.0])]
    for offset, half in ((np.array([1.0, 0.5]), 0.1), (np.zeros(2), 0.05)):
        task.set_bounds([offset[0] - half, offset[1] - half, -OPEN], [offset[0] + half, offset[1] + half, OPEN])
        for centre, result in zip(centres, solver.solve_many(None, centres, workers=2), strict=True):
            p = tip(planar, result.q)[:2] - centre[:2] - offset
            assert result.reason == "converged" and (np.abs(p) <= half + TOL).all()


def test_both_backends_agree_on_the_planar_arm(planar):
    seeds = [np.zeros(2), np.array([0.1, 0.2]), np.array([-2.0, 2.5])]
    for q0 in seeds:
        assert_backends_agree(run_both(planar, lambda: [[box_task([1.0, 0.5], [1.2, 0.7])]], q0, seed=3))
        assert_backends_agree(run_both(planar, lambda: [[box_task([3.0, 0.5], [3.2, 0.7])]], q0, restarts=3))

    def prioritized():
        above = tip_task(weight=(0, 1, 0), name="y")
        above.set_bounds(lower=[-OPEN, 0.5, -OPEN])
        band = PostureTask(planar)
        band.set_centring_band(0.3)
        return [[above], [tip_task(name="goal", target=(1.5, 0.0, 0.0))], [band]]

    assert_backends_agree(run_both(planar, prioritized, np.array([0.0, 0.3]), restarts=2))
    assert_backends_agree(run_both(planar, lambda: [[BallTask(tip_task(target=(1.0, 0.8, 0.0)), 0.05)]],
                                   np.zeros(2), seed=7))


def dual_arm_levels(robot, q_target):
    """The tools' relative position in a +-2 cm box about q_target's (orientation free), above the
    left tool's pose at q_target moved 5 cm along x."""
    kin = Kinematics(robot, q_target)
    relative = RelativeFrameTask("left_tool", "right_tool", weight=[1, 1, 1, 0, 0, 0], name="relative")
    relative.set_target(kin.relative_placement("left_tool", "right_tool"))
    relative.set_bounds(np.r_[np.full(3, -0.02), np.full(3, -OPEN)], np.r_[np.full(3, 0.02), np.full(3, OPEN)])
    left = FrameTask("left_tool", name="left")
    left.set_target(kin.placement("left_tool") * pin.SE3(np.eye(3), np.array([0.05, 0.0, 0.0])))
    return [[relative], [left]]


def test_both_backends_agree_on_the_dual_arm(dual_arm, rng):
    reasons = []
    for _ in range(3):
        q_target = dual_arm.random_configuration(rng)
        q0 = dual_arm.random_configuration(rng)
        results = run_both(dual_arm, lambda q_target=q_target: dual_arm_levels(dual_arm, q_target), q0,
                           restarts=3, seed=11)
        assert_backends_agree(results)
        result = results["python"]
        reasons.append(result.reason)
        if result.converged:  # recomputed: the relative position within its box, the pose met
            kin = Kinematics(dual_arm, result.q)
            levels = dual_arm_levels(dual_arm, q_target)
            e = levels[0][0].compute(kin)[0][:3]
            assert (np.abs(e) <= 0.02 + TOL).all()
            assert max(levels[1][0].error_norms(kin).values()) <= TOL
    assert "converged" in reasons, reasons


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_cone_and_half_space_tasks_are_met_by_the_search(dual_arm, backend):
    """ConeTask and HalfSpaceTask (compiled kinds: the compiled search runs them too): the tool's
    z axis within 20 degrees of the world's, the tool 5 cm below where it starts, from a seed
    outside both."""
    q0 = dual_arm.normalize(0.5 * (dual_arm.lower_limits + dual_arm.upper_limits))
    kin0 = Kinematics(dual_arm, q0)
    z0 = kin0.placement("left_tool").translation[2]
    cone = ConeTask("universe", "left_tool", np.radians(20))
    below = HalfSpaceTask("universe", "left_tool", normal=(0, 0, 1), offset=z0 - 0.05)
    assert cone.angle(kin0) > np.radians(20)
    solver = Solver(dual_arm, [[cone, below]], restarts=5, backend=backend)
    assert solver.backend == backend
    result = solver.solve(q0)
    kin = Kinematics(dual_arm, result.q)
    assert result.reason == "converged"
    assert cone.angle(kin) <= np.radians(20) + TOL
    assert kin.placement("left_tool").translation[2] <= z0 - 0.05 + TOL
    assert set(result.errors) == {cone.name, below.name}


@pytest.mark.parametrize("backend", BACKENDS)
def test_solve_many_with_bounds_equals_one_by_one(planar, backend):
    """Boxes about four centres (targets of the bounded task): problem i equals solve(seed=i)."""
    centres = [np.array([1.1, 0.6, 0.0]), np.array([-0.4, 1.2, 0.0]), np.array([0.5, -0.5, 0.0]),
               np.array([2.5, 0.0, 0.0])]  # the last beyond reach

    def levels():
        task = tip_task(name="box")
        task.set_bounds([-0.1, -0.1, -OPEN], [0.1, 0.1, OPEN])
        return [[task]]

    many = solve_many(planar, np.array([0.3, 0.4]), levels(), centres, workers=2, restarts=3, backend=backend)
    for i, (centre, got) in enumerate(zip(centres, many, strict=True)):
        own = levels()
        own[0][0].set_target(centre)
        alone = solve(planar, np.array([0.3, 0.4]), own, restarts=3, seed=i, backend=backend)
        assert (got.reason, got.iterations, got.restarts) == (alone.reason, alone.iterations, alone.restarts)
        np.testing.assert_array_equal(got.q, alone.q)
        assert got.errors == alone.errors
        if i < 3:
            assert got.reason == "converged"
            assert (np.abs(tip(planar, got.q)[:2] - centre[:2]) <= 0.1 + TOL).all()
    assert many[3].reason == "unreachable"


@pytest.mark.slow
def test_solve_many_with_bounds_on_dask_gives_the_threaded_results(thread_client, planar):
    pytest.importorskip("distributed")
    centres = [np.array([1.1, 0.6, 0.0]), np.array([-0.4, 1.2, 0.0]), np.array([2.5, 0.0, 0.0])]
    task = tip_task(name="box")
    task.set_bounds([-0.1, -0.1, -OPEN], [0.1, 0.1, OPEN])
    threaded = solve_many(planar, None, [[task]], centres, restarts=2)
    dasked = solve_many(planar, None, [[task]], centres, restarts=2, scheduler=thread_client)
    for a, b in zip(threaded, dasked, strict=True):
        assert (a.reason, a.iterations) == (b.reason, b.iterations)
        np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12)


def test_solve_many_copies_a_balls_inner_task_and_leaves_the_callers_alone(planar):
    """solve_many works on copies of the caller's tasks, the task a BallTask bounds included: its
    copy hears its own inner task's changes, the caller's ball and inner task keep theirs."""
    from reljac.ik.search.targets import own_copy

    inner = RelativePositionTask("base_link", "tip", weight=[1, 1, 0])
    inner.set_target(np.array([1.5, 0.0, 0.0]))
    ball = BallTask(inner, 0.2)
    twin = own_copy(ball)
    assert twin.inner is not inner and isinstance(twin.inner, RelativePositionTask)
    before, seen = ball._version, twin._version
    twin.inner.set_target(np.array([0.0, 1.5, 0.0]))
    assert twin._version > seen and ball._version == before  # the copy hears its inner task, not the caller's
    np.testing.assert_array_equal(inner.target, [1.5, 0.0, 0.0])
    at_zero = Kinematics(planar, np.zeros(2))  # tip at (1.8, 0): each ball about its own centre
    assert twin.compute(at_zero)[0][0] == pytest.approx(np.hypot(1.8, 1.5)) and ball.compute(at_zero)[0][0] == pytest.approx(0.3)

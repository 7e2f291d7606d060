"""solve_many and Solver on compositions the docs allow (issue 42, part 3): one task object in two
levels, a ball about a task whose targets the problems set, tasks changed after the call, a task
without a target, bare poses, the largest seeds, a seed outside the limits, a task of weight 0.
Each answer is checked against its own problem by independent kinematics, on both backends and,
where a problem travels, on Dask."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

import reljac
from reljac.exceptions import TaskError
from reljac.ik import (
    BallTask,
    ConeTask,
    FrameTask,
    PostureTask,
    RelativePositionTask,
    Solver,
    solve,
    solve_many,
)
from reljac.relative import Kinematics

TOL = 1e-6


def tool_poses(robot, n: int, seed: int = 5) -> list[pin.SE3]:
    """The left tool's placements at n random configurations (each reachable: it was reached)."""
    rng = np.random.default_rng(seed)
    return [Kinematics(robot, robot.random_configuration(rng)).placement("left_tool") for _ in range(n)]


def tool_error(robot, q: np.ndarray, T: pin.SE3) -> float:
    """|log6(T^-1 T_tool(q))|: how far the left tool is from T (position and angle together)."""
    return float(np.linalg.norm(pin.log6(T.actInv(Kinematics(robot, q).placement("left_tool"))).vector))


def tool_distance(robot, q: np.ndarray, p: np.ndarray) -> float:
    return float(np.linalg.norm(Kinematics(robot, q).placement("left_tool").translation - p))


# ----------------------------------------------------------------------------- one task, two levels
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["module", "Solver"])
def test_one_task_object_in_two_levels_takes_each_problems_target(dual_arm, backend, how):
    """The same FrameTask at levels 1 and 2: every problem is solved for its own pose (seen on the
    compiled backend: only the second copy got the problem's target, problems 1.. 'unreachable')."""
    poses = tool_poses(dual_arm, 4)
    task = FrameTask("left_tool", name="left")
    task.set_target(poses[0])
    args = dict(tol=TOL, restarts=10, backend=backend)
    results = (solve_many(dual_arm, None, [[task], [task]], poses, workers=2, **args) if how == "module" else
               Solver(dual_arm, [[task], [task]], **args).solve_many(None, poses, workers=2))
    for T, r in zip(poses, results, strict=True):
        assert r.converged, r.message
        assert tool_error(dual_arm, r.q, T) <= 2 * TOL


# ----------------------------------------------------------------------------- a ball about a task
def ball_problem(levels_with_inner: bool):
    inner = RelativePositionTask("universe", "left_tool", name="inner", weight=1e-2)
    ball = BallTask(inner, 0.05, name="ball")
    return inner, [[ball], [inner]] if levels_with_inner else [[ball]]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["module", "Solver"])
@pytest.mark.parametrize("with_inner", [True, False], ids=["inner in a level", "inner only in the ball"])
def test_a_ball_about_a_task_the_problems_set_is_centred_on_each_problems_target(dual_arm, backend, how,
                                                                                 with_inner):
    """Seen: the module's solve_many kept the first problem's centre (its copy of the ball held a
    copy of the inner task of its own), Solver.solve_many on the compiled backend the last one
    (the core's ball never heard the problems' targets). Each answer is within the ball around its
    own centre, and its result's errors say so."""
    centres = [T.translation for T in tool_poses(dual_arm, 4, seed=8)]
    inner, levels = ball_problem(with_inner)
    inner.set_target(centres[0])
    targets = [{inner: c} for c in centres]
    args = dict(tol=TOL, restarts=10, backend=backend)
    results = (solve_many(dual_arm, None, levels, targets, workers=2, **args) if how == "module" else
               Solver(dual_arm, levels, **args).solve_many(None, targets, workers=2))
    for c, r in zip(centres, results, strict=True):
        distance = tool_distance(dual_arm, r.q, c)
        assert distance <= 0.05 + TOL, (distance, r.message)
        assert r.errors["ball"]["error"] == pytest.approx(max(distance - 0.05, 0.0), abs=1e-9)
        if with_inner:
            assert r.errors["inner"]["position"] == pytest.approx(distance, abs=1e-9)
    np.testing.assert_array_equal(inner.target, centres[0])  # the caller's task as it was


@pytest.mark.slow
def test_a_ball_and_a_task_in_two_levels_on_dask_give_the_threaded_results(thread_client, dual_arm):
    """The recipe keeps one copy per task (seen: a copy per level, which the worker refused) and
    the ball's inner task is that copy."""
    centres = [T.translation for T in tool_poses(dual_arm, 6, seed=9)]
    inner, levels = ball_problem(True)
    inner.set_target(centres[0])
    targets = [{inner: c} for c in centres]
    args = dict(tol=TOL, restarts=6, seed=4)
    threaded = solve_many(dual_arm, None, levels + [[inner]], targets, **args)
    dasked = solve_many(dual_arm, None, levels + [[inner]], targets, scheduler=thread_client, **args)
    for a, b, c in zip(threaded, dasked, centres, strict=True):
        assert (a.converged, a.iterations, a.restarts) == (b.converged, b.iterations, b.restarts)
        np.testing.assert_allclose(a.q, b.q, atol=1e-9)
        assert tool_distance(dual_arm, b.q, c) <= 0.05 + TOL


# ----------------------------------------------------------------------------- the tasks after the call
@pytest.mark.parametrize("backend", BACKENDS)
def test_bounds_set_after_solve_many_leave_its_results_as_they_were(dual_arm, backend):
    """Its results' errors and levels_met are computed when first read: against the tasks as the
    search had them (seen: bounds set afterwards on a task whose targets the problems set changed
    the results already returned)."""
    centres = [T.translation for T in tool_poses(dual_arm, 3, seed=2)]
    task = RelativePositionTask("universe", "left_tool", name="pos")
    task.set_target(centres[0])
    solver = Solver(dual_arm, [[task]], tol=TOL, restarts=0, max_iters=2, backend=backend)
    results = solver.solve_many(None, centres, workers=1)
    task.set_bounds(-np.full(3, 10.0), np.full(3, 10.0))  # every point within 10 m: all met, if read now
    for c, r in zip(centres, results, strict=True):
        assert r.errors["pos"]["position"] == pytest.approx(tool_distance(dual_arm, r.q, c), abs=1e-12)
        assert r.levels_met == [r.errors["pos"]["position"] <= TOL]
    assert not all(r.levels_met[0] for r in results)  # (two iterations from the middle: not all there)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bare", [True, False], ids=["bare poses", "dicts"])
def test_a_task_without_a_target_takes_the_problems_and_has_none_afterwards(dual_arm, backend, bare):
    """Seen: bare pin.SE3 targets for a task without a target were refused ('call set_target
    first') where dicts worked; with dicts the task kept the last problem's target."""
    poses = tool_poses(dual_arm, 3, seed=3)
    task = FrameTask("left_tool", name="left")
    solver = Solver(dual_arm, [[task]], tol=TOL, restarts=10, backend=backend)
    results = solver.solve_many(None, poses if bare else [{task: T} for T in poses], workers=2)
    for T, r in zip(poses, results, strict=True):
        assert r.converged and tool_error(dual_arm, r.q, T) <= 2 * TOL
    assert task.target is None
    with pytest.raises(TaskError, match="has no target"):
        solver.solve(None)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bare", [True, False], ids=["bare poses", "dicts"])
def test_a_bad_target_is_named_by_its_problem(dual_arm, backend, bare):
    poses: list = tool_poses(dual_arm, 5, seed=3)
    poses[4] = np.full((4, 4), np.nan)
    task = FrameTask("left_tool", name="left")
    task.set_target(poses[0])
    with pytest.raises(TaskError, match=r"^targets\[4\]: target of task 'left' has non-finite entries"):
        Solver(dual_arm, [[task]], backend=backend).solve_many(None, poses if bare else [{"left": T} for T in poses])
    assert task.target == poses[0]


# ----------------------------------------------------------------------------- seeds
@pytest.mark.slow
def test_the_largest_seeds_wrap_alike_on_threads_and_on_dask(thread_client, dual_arm):
    """Problem i's seed is seed + i modulo 2**64 (seen: 2**64 - 8 worked on threads and failed on
    Dask with a SchedulerError about the cluster)."""
    poses = tool_poses(dual_arm, 20, seed=6)
    task = FrameTask("left_tool", name="left")
    task.set_target(poses[0])
    args = dict(tol=TOL, restarts=3, seed=2**64 - 8)
    threaded = solve_many(dual_arm, None, [[task]], poses, **args)
    dasked = solve_many(dual_arm, None, [[task]], poses, scheduler=thread_client, **args)
    for a, b in zip(threaded, dasked, strict=True):
        assert (a.converged, a.iterations, a.restarts) == (b.converged, b.iterations, b.restarts)
        np.testing.assert_allclose(a.q, b.q, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_problem_i_seeds_with_seed_plus_i_modulo_two_to_the_64(dual_arm, backend):
    poses = tool_poses(dual_arm, 10, seed=6)
    task = FrameTask("left_tool", name="left")
    task.set_target(poses[0])
    many = solve_many(dual_arm, None, [[task]], poses, tol=TOL, restarts=3, seed=2**64 - 8, backend=backend,
                      workers=2)
    for i, (T, r) in enumerate(zip(poses, many, strict=True)):
        one = FrameTask("left_tool", name="left")
        one.set_target(T)
        alone = solve(dual_arm, None, [[one]], tol=TOL, restarts=3, seed=(2**64 - 8 + i) % 2**64, backend=backend)
        assert (alone.converged, alone.iterations) == (r.converged, r.iterations)
        np.testing.assert_array_equal(alone.q, r.q)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_seed_outside_the_limits_where_the_tasks_are_met_is_not_the_answer(dual_arm, backend):
    """The docs: never outside the position limits (seen: returned 'converged' after 0 iterations)."""
    q = dual_arm.random_configuration(np.random.default_rng(1))
    upper = dual_arm.model.upperPositionLimit
    q[0] = upper[0] + 0.3  # the torso's yaw 0.3 rad beyond its limit
    task = FrameTask("left_tool", name="left")
    task.set_target(Kinematics(dual_arm, q).placement("left_tool"))
    for r in (solve(dual_arm, q, [[task]], tol=TOL, restarts=10, backend=backend),
              Solver(dual_arm, [[task]], tol=TOL, restarts=10, backend=backend).solve_many(q, [task.target])[0]):
        lower = dual_arm.model.lowerPositionLimit
        assert np.all(r.q <= upper) and np.all(r.q >= lower), r.q
        assert r.iterations > 0
        if r.converged:
            assert tool_error(dual_arm, r.q, task.target) <= 2 * TOL


# ----------------------------------------------------------------------------- weight 0
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cone_of_weight_zero_does_not_decide_convergence(dual_arm, backend):
    """A cone the tool's z axis is not in at the target (of half-angle 0 about its opposite), of
    weight 0 (masked out: no rows), beside a reachable pose in its level: converged, as without the
    cone. (A level of the cone alone has no rows: the hierarchy solver's own case, not this one.)"""
    T = tool_poses(dual_arm, 1, seed=4)[0]
    task = FrameTask("left_tool", name="left")
    task.set_target(T)
    opposite = -T.rotation[:, 2]  # the tool's z axis at the target, reversed: out of the cone there
    cone = ConeTask("universe", "left_tool", 0.0, axis_a=opposite, weight=0.0, name="cone")
    r = solve(dual_arm, None, [[task, cone]], tol=TOL, restarts=10, backend=backend)
    assert r.converged and tool_error(dual_arm, r.q, T) <= 2 * TOL
    assert r.levels_met == [True]


def test_workers_beyond_the_bound_are_refused_before_any_thread_starts(dual_arm):
    """Seen: workers=3000 built 3,000 controllers and threads."""
    from reljac.exceptions import ConfigurationError
    from reljac.ik.search.solve import MAX_WORKERS

    task = FrameTask("left_tool", name="left")
    task.set_target(tool_poses(dual_arm, 1)[0])
    solver = Solver(dual_arm, [[task]])
    with pytest.raises(ConfigurationError, match=rf"workers \(threads or Dask workers\) must be at most {MAX_WORKERS}"):
        solver.solve_many(None, tool_poses(dual_arm, 2), workers=3000)
    assert len(solver.controllers) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_posture_targets_of_a_robot_with_16_joints_are_configurations(tmp_path, backend):
    """nq = 16 is also the size of a pose's homogeneous matrix: a posture's 16 values were read
    back as a 4 x 4 target ('has shape (4, 4), expected (16,)')."""
    n = 16
    links = "".join(f'<link name="l{i}"/>' for i in range(n + 1))
    joints = "".join(f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
                     f'<origin xyz="0 0 0.1"/><axis xyz="{"0 0 1" if i % 2 else "0 1 0"}"/>'
                     '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>' for i in range(1, n + 1))
    (tmp_path / "chain.urdf").write_text(f'<robot name="chain16">{links}{joints}</robot>')
    robot = reljac.Robot.from_urdf(tmp_path / "chain.urdf")
    assert robot.nq == 16
    tip, posture = FrameTask("l16"), PostureTask(robot)
    qs = [robot.random_configuration(np.random.default_rng(i)) for i in range(3)]
    targets = [{tip: Kinematics(robot, q).placement("l16"), posture: q} for q in qs]
    results = solve_many(robot, None, [[tip], [posture]], targets, seed=1, backend=backend, timeout=0.2)
    for q, result in zip(qs, results, strict=True):
        assert result.converged and result.levels_met is not None and result.message  # (these raised)
        reached = Kinematics(robot, result.q).placement("l16")
        np.testing.assert_allclose(reached.homogeneous, Kinematics(robot, q).placement("l16").homogeneous, atol=1e-4)


# ----------------------------------------------------------------------------- threads
def test_solve_many_leaves_tasks_it_shares_with_another_thread_alone(dual_arm):
    """Solver.solve_many searches on copies of its tasks: a Solver in another thread that shares the
    task solves for the task's own target meanwhile (before, 199 of 200 of its answers 'converged'
    2 m from it: they had the batch's targets), and the batch's answers are each at its own target."""
    import threading

    poses = tool_poses(dual_arm, 40, seed=11)
    home = tool_poses(dual_arm, 1, seed=12)[0]
    task = FrameTask("left_tool", name="left")
    task.set_target(home)
    batch, single = Solver(dual_arm, [[task]], tol=TOL, restarts=10), Solver(dual_arm, [[task]], tol=TOL, restarts=10)
    answers: list = []
    done = threading.Event()

    def solve_alone() -> None:
        while not done.is_set() or len(answers) < 5:
            answers.append(single.solve(None, seed=len(answers)))

    other = threading.Thread(target=solve_alone)
    other.start()
    try:
        results = [r for _ in range(3) for r in batch.solve_many(None, poses, workers=2)]
    finally:
        done.set()
        other.join()
    assert task.target == home
    assert all(r.converged and tool_error(dual_arm, r.q, home) <= 2 * TOL for r in answers)
    for T, r in zip(poses * 3, results, strict=True):
        assert r.converged and tool_error(dual_arm, r.q, T) <= 2 * TOL


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_module_solve_many_sets_up_one_solver_and_leaves_the_callers_task(dual_arm, backend, monkeypatch):
    """reljac.ik.solve_many built a Solver on the caller's tasks, then another on their copies (each
    allocates a pin.Data: 45 ms a call on TIAGo dual, 22 ms now); it builds one, on copies, and a
    target keyed by the caller's task still reaches its copy."""
    from reljac.ik.search import solve as solve_module

    made = []
    setup = solve_module.Solver.__init__

    def counted(self, *args, **kwargs):
        made.append(self)
        setup(self, *args, **kwargs)

    monkeypatch.setattr(solve_module.Solver, "__init__", counted)
    task = FrameTask("left_tool", name="tool")
    poses = [Kinematics(dual_arm, dual_arm.random_configuration(i)).placement("left_tool") for i in range(2)]
    results = solve_many(dual_arm, None, [[task]], [{task: T} for T in poses], restarts=3, backend=backend)
    assert len(made) == 1
    assert task.target is None  # the caller's task has no target afterwards, as before
    for T, result in zip(poses, results, strict=True):
        reached = Kinematics(dual_arm, result.q).placement("left_tool")
        assert result.converged and np.linalg.norm(reached.translation - T.translation) < 1e-3

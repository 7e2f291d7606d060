"""solve_many in one call to the core with its results built from arrays (reljac/ik/search/results.py,
search_many in src/core/search.cpp): the same results as one-by-one solves, results whose message,
errors and levels_met (computed when first read) are those of the targets the search had, a
progress bar fed from the core's thread, and a failure, an exception or Ctrl-C that stops every
thread. Behaviour only: nothing here is timed."""

from __future__ import annotations

import signal
import threading

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

from reljac.exceptions import TaskError
from reljac.ik import FrameTask, RelativePositionTask, Solver, compiled_available, solve, solve_many
from reljac.relative import Kinematics

compiled_only = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")


def tip_task(x: float, y: float) -> RelativePositionTask:
    task = RelativePositionTask("base_link", "tip", name="tip")
    task.set_target(np.array([x, y, 0.0]))
    return task


def planar_targets(rng, n: int, unreachable_every: int = 5) -> list[np.ndarray]:
    """Tip positions within the planar arm's reach (1.8 m), every `unreachable_every`-th 2.5 m out."""
    out = []
    for i in range(n):
        angle = rng.uniform(-np.pi, np.pi)
        radius = 2.5 if i % unreachable_every == 0 else rng.uniform(0.3, 1.7)
        out.append(np.array([radius * np.cos(angle), radius * np.sin(angle), 0.0]))
    return out


def fields(result) -> tuple:
    return (result.converged, result.reason, result.iterations, result.restarts, result.level_errors)


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_problems_in_one_call_equal_one_by_one_solves_message_and_errors_too(planar, rng, backend):
    """150 problems (more than the chunks of 64 the core used to get), a fifth out of reach: each
    result equals solve() with its target and seed + i, down to its message; its errors are its
    own target's (recomputed here with a fresh task at its q)."""
    targets = planar_targets(rng, 150 if backend == "compiled" else 40)
    task = tip_task(1.0, 0.0)
    many = solve_many(planar, None, [[task]], targets, restarts=2, seed=3, workers=2, backend=backend)
    assert sum(not r.converged for r in many) >= len(targets) // 5
    for i, (target, result) in enumerate(zip(targets, many, strict=True)):
        one = solve(planar, None, [[tip_task(*target[:2])]], restarts=2, seed=3 + i, backend=backend)
        assert fields(one) == fields(result)
        np.testing.assert_array_equal(one.q, result.q)
        assert one.message == result.message
        fresh = tip_task(*target[:2])
        expected = np.linalg.norm(Kinematics(planar, result.q).relative_placement("base_link", "tip").translation
                                  - target)
        assert result.errors["tip"]["position"] == pytest.approx(expected, abs=1e-12)
        assert result.errors["tip"] == fresh.error_norms(Kinematics(planar, result.q))
        assert result.levels_met == [result.errors["tip"]["position"] <= 1e-4]
        assert ("not met" in result.message) == (not result.converged)


@compiled_only
def test_one_worker_and_two_give_the_same_arrays(dual_arm, rng):
    task = FrameTask("right_tool", name="right")
    task.set_target(pin.SE3.Identity())
    targets = [Kinematics(dual_arm, dual_arm.random_configuration(rng)).placement("right_tool") for _ in range(90)]
    solver = Solver(dual_arm, [[task]], tol=1e-6, restarts=2)
    one, two = (solver.solve_many(None, targets, workers=w, seed=7) for w in (1, 2))
    for a, b in zip(one, two, strict=True):
        assert fields(a) == fields(b) and a.message == b.message
        np.testing.assert_array_equal(a.q, b.q)


@pytest.mark.parametrize("backend", BACKENDS)
def test_message_and_errors_read_late_are_those_of_the_targets_the_search_had(planar, backend):
    """The caller's task gets another target after solve / solve_many: a result read then still
    reports on its own search's target (the message's 1.2 m; errors from the closed form)."""
    task = tip_task(3.0, 0.0)  # 1.2 m beyond reach, the arm stretched towards it
    solver = Solver(planar, [[task]], restarts=1, backend=backend)
    late_one = solver.solve(None)
    late_many = solver.solve_many(None, [{"tip": np.array([0.0, 3.0, 0.0])}])[0]
    task.set_target(np.array([1.0, 0.5, 0.0]))
    early = Solver(planar, [[tip_task(3.0, 0.0)]], restarts=1, backend=backend).solve(None)
    assert late_one.message == early.message and "level errors 1.2" in late_one.message
    assert late_one.errors["tip"]["position"] == pytest.approx(1.2, abs=1e-6)
    assert late_many.errors["tip"]["position"] == pytest.approx(1.2, abs=1e-6)
    assert late_one.levels_met == late_many.levels_met == [False]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ball_read_late_reports_on_its_inner_target_as_the_search_had_it(planar, backend):
    """A BallTask's centre is its inner task's target: moved after the solve, the result's
    errors and message still measure the ball the search had (1.2 m out, 0.5 m of radius)."""
    from reljac.ik import BallTask

    def problem():
        inner = tip_task(3.0, 0.0)
        return inner, [[BallTask(inner, 0.5, name="ball")]]

    inner, levels = problem()
    late = Solver(planar, levels, restarts=1, backend=backend).solve(None)
    inner.set_target(np.array([1.0, 0.5, 0.0]))
    early = Solver(planar, problem()[1], restarts=1, backend=backend).solve(None)
    assert not late.converged and late.message == early.message and "level 1 (ball)" in late.message
    assert late.errors == early.errors and late.levels_met == early.levels_met == [False]
    assert max(late.errors["ball"].values()) == pytest.approx(0.7, abs=1e-6)


def test_a_result_made_by_hand_has_no_message_to_compute():
    from reljac.ik import IKResult

    made = IKResult(np.zeros(2), False, 3, "unreachable")
    assert made.message == "" and IKResult(np.zeros(2), True, 3).message == "converged"
    assert made.errors == {} and made.levels_met == []
    assert "IKResult(" in repr(made) and "unreachable" in repr(made)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_problem_whose_error_overflows_among_good_ones_is_a_task_error(planar, backend):
    targets = [np.array([1.0, 0.5, 0.0])] * 5 + [np.array([1e155, 0.0, 0.0])] + [np.array([0.5, 1.0, 0.0])] * 5
    with pytest.raises(TaskError, match=r"targets\[5\]: target of task 'tip' has an entry of 1e\+155"):
        solve_many(planar, None, [[tip_task(1.0, 0.0)]], targets, restarts=1, workers=2, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_progress_bar_reaches_every_problem(planar, rng, backend, capfd):
    targets = planar_targets(rng, 300 if backend == "compiled" else 30)
    results = solve_many(planar, None, [[tip_task(1.0, 0.0)]], targets, restarts=1, workers=2, progress=True,
                         backend=backend)
    assert len(results) == len(targets)
    assert f"{len(targets)}/{len(targets)}" in capfd.readouterr().err


def core_call(solver, targets, progress, every=0.0):
    """Solver._chunk's call to the core on two threads, every problem at once (its targets as the
    core holds them); the core's SearchBatch."""
    from reljac.ik.search.targets import target_values
    from reljac.ik.solvers.backend import core

    tasks = solver.controllers[0].tasks
    _, values = target_values(tasks, solver.robot, targets)
    while len(solver.controllers) < 2:
        solver.controllers.append(solver._make())
    steps = [c._step.prepared_core() for c in solver.controllers]
    return core().search_many(steps, [0], [0], [values.shape[1]], values, solver.middle[None, :],
                              solver._core_options, progress=progress, every=every)


@compiled_only
def test_the_core_reports_progress_from_the_calling_thread_in_order_up_to_every_problem(planar, rng):
    """Counts that rise, on the calling thread, the last one every problem: also when the other
    thread ran them all (a busy machine may leave the calling thread none: seen, no call at all)."""
    solver = Solver(planar, [[tip_task(1.0, 0.0)]], restarts=1, backend="compiled")
    targets = planar_targets(rng, 200)
    for every in (0.0, 1e9):  # after each of the calling thread's problems; only once all are done
        seen, threads = [], set()
        batch = core_call(solver, targets, lambda k: seen.append(k) or threads.add(threading.get_ident()), every)
        assert threads == {threading.get_ident()}
        assert seen == sorted(seen) and len(set(seen)) == len(seen) and seen[0] > 0 and seen[-1] == len(targets)
        assert batch.q.shape == (len(targets), planar.nq) and len(batch.reason) == len(targets)
    assert seen == [len(targets)]


@compiled_only
def test_an_exception_in_progress_stops_every_thread_and_the_solver_still_works(planar, rng):
    class Stop(Exception):
        pass

    def stop_at_ten(finished):
        if finished >= 10:
            raise Stop(finished)

    solver = Solver(planar, [[tip_task(1.0, 0.0)]], restarts=1, backend="compiled")
    targets = planar_targets(rng, 20000)
    with pytest.raises(Stop):
        core_call(solver, targets, stop_at_ten)
    again = solver.solve_many(None, targets[:20], workers=2, seed=0)
    for i, result in enumerate(again):
        one = solve(planar, None, [[tip_task(*targets[i][:2])]], restarts=1, seed=i, backend="compiled")
        np.testing.assert_array_equal(one.q, result.q)


@compiled_only
@pytest.mark.slow
def test_a_signal_handler_runs_during_the_call_and_its_exception_stops_it(planar, rng):
    """As Ctrl-C does (its handler raises KeyboardInterrupt): a handler of SIGINT raising here,
    signalled 0.3 s into a call of about a minute of work, ends it before the last problem."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run on the main thread only")

    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted

    solver = Solver(planar, [[tip_task(1.0, 0.0)]], restarts=3, backend="compiled")
    targets = planar_targets(rng, 150000, unreachable_every=2)
    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(0.3, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(Interrupted):
            core_call(solver, targets, seen.append, every=0.05)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert not seen or seen[-1] < len(targets) // 2

"""solve_many on Dask (reljac/ik/search/dask_batches.py): the same results as the threaded path for the
same seeds (no timeout), compared field by field on processes that rebuilt the Solver from its
recipe; bad schedulers, failing workers and a missing Dask are one reljac error each."""

from __future__ import annotations

import builtins
import subprocess
import sys
import textwrap

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.exceptions import ConfigurationError, SchedulerError, TaskError
from reljac.ik import (
    CollisionAvoidance,
    FrameTask,
    PostureTask,
    RelativeFrameTask,
    RelativePositionTask,
    solve_many,
)
from reljac.ik.search import dask_batches as solve_dask
from reljac.relative import Kinematics

distributed = pytest.importorskip("distributed")


def assert_same(threaded, dasked, q_atol=1e-9, error_atol=1e-12):
    """The same decisions (iterations, restarts, reason) and the same q and level errors up to
    rounding: another process may round differently (seen: 5e-13 in one q of collision avoidance,
    whose distances depend on where coal's and Eigen's buffers sit in memory)."""
    assert len(threaded) == len(dasked)
    for a, b in zip(threaded, dasked, strict=True):
        assert (a.converged, a.reason, a.iterations, a.restarts) == (b.converged, b.reason, b.iterations, b.restarts)
        np.testing.assert_allclose(a.q, b.q, rtol=0, atol=q_atol)
        np.testing.assert_allclose(a.level_errors, b.level_errors, rtol=1e-9, atol=error_atol)


def right_tool_problem(robot, rng, n):
    task = FrameTask("right_tool", name="right")
    task.set_target(pin.SE3.Identity())
    return task, [Kinematics(robot, robot.random_configuration(rng)).placement("right_tool") for _ in range(n)]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_bare_targets_on_process_workers_give_the_threaded_results(process_client, dual_arm, rng, backend):
    if backend == "compiled" and not reljac.ik.compiled_available():
        pytest.skip("the compiled core is not built")
    task, targets = right_tool_problem(dual_arm, rng, 40 if backend == "compiled" else 6)
    args = dict(tol=1e-6, restarts=2, seed=10, backend=backend)
    threaded = solve_many(dual_arm, None, [[task]], targets, **args)
    dasked = solve_many(dual_arm, None, [[task]], targets, scheduler=process_client, **args)
    assert_same(threaded, dasked)
    assert sum(r.converged for r in dasked) >= len(targets) // 2  # the comparison is not of failures only
    for T, r in zip(targets, dasked, strict=True):  # and each answer is one, by independent kinematics
        if r.converged:
            error = pin.log6(T.actInv(Kinematics(dual_arm, r.q).placement("right_tool"))).vector
            assert np.linalg.norm(error[:3]) <= 1e-6
    assert task.target.isIdentity()  # the caller's task keeps its target


@pytest.mark.slow
def test_dict_targets_on_three_levels_with_per_problem_seeds_by_address(process_client, dual_arm, rng):
    """Relative pose > left pose > posture; the targets by task name; the scheduler by its address."""
    rel = RelativeFrameTask("left_tool", "right_tool", name="relative")
    left = FrameTask("left_tool", name="left")
    posture = PostureTask(dual_arm, weight=0.1)
    posture.set_target(dual_arm.neutral())
    kins = [Kinematics(dual_arm, dual_arm.random_configuration(rng)) for _ in range(24)]
    targets = [{"relative": k.relative_placement("left_tool", "right_tool"), "left": k.placement("left_tool")}
               for k in kins]
    rel.set_target(targets[0]["relative"])
    left.set_target(targets[0]["left"])
    seeds = np.array([dual_arm.random_configuration(rng) for _ in kins])
    args = dict(tol=1e-6, restarts=2, max_iters=30, seed=3)
    levels = [[rel], [left], [posture]]
    threaded = solve_many(dual_arm, seeds, levels, targets, **args)
    dasked = solve_many(dual_arm, seeds, levels, targets, scheduler=process_client.scheduler.address, **args)
    assert_same(threaded, dasked)


@pytest.mark.slow
def test_ur5_by_name_on_process_workers_gives_the_threaded_results(process_client, rng):
    from reljac.robots import example_robots

    if "ur5" not in example_robots():
        pytest.skip("needs example-robot-data's UR5 (the test extra)")
    ur5 = reljac.Robot.load("ur5")
    task = RelativeFrameTask("base_link", "tool0", name="tip")
    targets = [{"tip": Kinematics(ur5, ur5.random_configuration(rng)).relative_placement("base_link", "tool0")}
               for _ in range(40)]
    task.set_target(targets[0]["tip"])
    args = dict(tol=1e-5, restarts=5, seed=2026)
    assert_same(solve_many(ur5, None, [[task]], targets, **args),
                solve_many(ur5, None, [[task]], targets, scheduler=process_client, **args))


@pytest.mark.slow
def test_collision_avoidance_travels_as_its_pairs_and_distances(process_client, dual_arm, rng):
    """Its CollisionModel does not pickle: the workers rebuild it from the model's state. The
    same decisions; q only up to rounding carried along the arm's redundant directions (one frame
    task on 14 joints: seen, a worker process's rounding of the distances moved a converged q by
    1e-4 along its self-motion, every level error still under tol in both)."""
    avoid = CollisionAvoidance(dual_arm, min_distance=0.02, influence_distance=0.08)
    task, targets = right_tool_problem(dual_arm, rng, 8)
    args = dict(tol=1e-5, restarts=1, seed=5, constraints=[avoid])
    assert_same(solve_many(dual_arm, None, [[task]], targets, **args),
                solve_many(dual_arm, None, [[task]], targets, scheduler=process_client, **args),
                q_atol=1e-3, error_atol=1e-5)


@pytest.mark.slow
def test_a_local_cluster_gives_the_threaded_results(dual_arm, rng):
    task, targets = right_tool_problem(dual_arm, rng, 10)
    args = dict(tol=1e-6, restarts=1, seed=1)
    assert_same(solve_many(dual_arm, None, [[task]], targets, **args),
                solve_many(dual_arm, None, [[task]], targets, scheduler="local", workers=2, **args))


@pytest.mark.parametrize("scheduler", [42, "", "  ", object()])
def test_a_bad_scheduler_is_refused_with_what_is_valid(dual_arm, rng, scheduler):
    task, targets = right_tool_problem(dual_arm, rng, 2)
    with pytest.raises(ConfigurationError, match="scheduler must be None, 'threads', 'local', a Dask address"):
        solve_many(dual_arm, None, [[task]], targets, scheduler=scheduler)


@pytest.mark.slow
def test_dask_is_imported_only_when_a_cluster_is_asked_for():
    code = textwrap.dedent("""
        import sys
        import pinocchio as pin
        import reljac
        from reljac.ik import FrameTask, solve_many
        robot = reljac.Robot.bundled("dual_arm")
        task = FrameTask("right_tool")
        task.set_target(pin.SE3.Identity())
        solve_many(robot, None, [[task]], [pin.SE3.Identity()], scheduler="threads", restarts=0)
        try:
            solve_many(robot, None, [[task]], [pin.SE3.Identity()], scheduler=7)
        except reljac.exceptions.ConfigurationError:
            pass
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_without_dask_a_scheduler_says_how_to_install_it(dual_arm, rng, monkeypatch):
    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError("No module named 'distributed'")
        return real_import(name, *args, **kwargs)

    task, targets = right_tool_problem(dual_arm, rng, 2)
    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(SchedulerError, match=r"needs Dask: pip install '\.\[scale\]'"):
        solve_many(dual_arm, None, [[task]], targets, scheduler="tcp://127.0.0.1:9", restarts=0)


@pytest.mark.slow
def test_a_task_error_is_the_threaded_paths_own(thread_client, planar):
    """A target 1e100 m away weighted 1e100: no configuration has finite rows, on the workers as here."""
    task = RelativePositionTask("base_link", "tip", weight=1e100)
    task.set_target(np.zeros(3))
    targets = [np.array([1e100, 0.0, 0.0])] * 3
    for scheduler in (None, thread_client):
        with pytest.raises(TaskError, match="not finite"):
            solve_many(planar, None, [[task]], targets, restarts=1, scheduler=scheduler)


@pytest.mark.slow
def test_a_chunk_failing_on_a_worker_is_one_scheduler_error(thread_client, dual_arm, rng, monkeypatch):
    def broken(*args):
        raise RuntimeError("worker lost its marbles")

    monkeypatch.setattr(solve_dask, "run_chunk", broken)
    task, targets = right_tool_problem(dual_arm, rng, 4)
    with pytest.raises(SchedulerError, match=r"a solve_many chunk failed on a Dask worker \(RuntimeError: worker lost"):
        solve_many(dual_arm, None, [[task]], targets, scheduler=thread_client)


@pytest.mark.slow
def test_chunks_in_flight_stay_bounded_and_progress_reaches_every_problem(thread_client, dual_arm, rng, monkeypatch,
                                                                          capfd):
    """Also: the worker builds its Solver once for the call's four chunks."""
    submitted, in_flight, built = [], [], []
    real_submit, real_build = thread_client.submit, solve_dask.Recipe.solver

    def counting(*args, **kwargs):
        in_flight.append(sum(not f.done() for f in submitted))  # an overestimate: a done future may lag
        submitted.append(real_submit(*args, **kwargs))
        return submitted[-1]

    monkeypatch.setattr(thread_client, "submit", counting)
    monkeypatch.setattr(solve_dask.Recipe, "solver", lambda made: built.append(made.key) or real_build(made))
    task, targets = right_tool_problem(dual_arm, rng, 200)
    results = solve_many(dual_arm, None, [[task]], targets, restarts=0, max_iters=5, scheduler=thread_client,
                         progress=True)
    assert len(results) == 200 and len(submitted) == -(-200 // solve_dask.chunk_size(200, 1)) > 2
    assert max(in_flight) < 2  # one worker: at most two chunks out, so one unfinished at the next submit
    assert "200/200" in capfd.readouterr().err
    assert len(built) == 1


@pytest.mark.slow
def test_a_local_cluster_from_an_unguarded_script_is_refused_before_any_worker_starts(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent("""\
        import pinocchio as pin
        import reljac
        from reljac.ik import FrameTask, solve_many
        task = FrameTask("right_tool")
        task.set_target(pin.SE3.Identity())
        try:
            solve_many(reljac.Robot.bundled("dual_arm"), None, [[task]], [pin.SE3.Identity()], scheduler="local")
        except reljac.exceptions.SchedulerError as error:
            print(error)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == (f"scheduler='local' starts worker processes that import {script} again and would run "
                                  "its line 7 (this solve_many) in each of them: put the code that runs the solve_many "
                                  'under `if __name__ == "__main__":` (see docs/guide/maps.md)')

"""IK's public API as an outside tester attacks it: bad inputs to ``solve``, ``Solver``,
``solve_many`` and ``Controller`` get one-line reljac errors on both backends (never a foreign
exception), and what is accepted gives answers checked independently (Pinocchio's own forward
kinematics, the tasks' targets as the caller set them).

Each test here was a defect when written: a failing test is an open bug.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

import reljac
from reljac.exceptions import ConfigurationError, ReljacError, TaskError
from reljac.ik import (
    BallTask,
    Controller,
    FrameTask,
    PostureTask,
    RelativePositionTask,
    Solver,
    solve,
    solve_many,
)
from reljac.ik.tasks import TaskTerms

TOOL = "left_tool"
INT32_MAX = 2**31 - 1  # the core's iteration and restart counts are C ints


@pytest.fixture(scope="module")
def poses(dual_arm):
    """Poses of the left tool the arm reaches (at random configurations 0..3)."""
    return [reljac.Kinematics(dual_arm, dual_arm.random_configuration(i)).placement(TOOL) for i in range(4)]


def tool_task(T: pin.SE3, **kwargs) -> FrameTask:
    task = FrameTask(TOOL, **kwargs)
    task.set_target(T)
    return task


def one_line_reljac_error(excinfo: pytest.ExceptionInfo) -> str:
    """The message of a reljac ValueError, checked to be one line."""
    assert isinstance(excinfo.value, ReljacError) and isinstance(excinfo.value, ValueError)
    message = str(excinfo.value)
    assert "\n" not in message
    return message


# ---------------------------------------------------------------- options out of the core's range
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("option, value", [("tol", 1e300), ("tol", 1e200), ("max_iters", INT32_MAX + 1),
                                           ("max_iters", 10**30), ("restarts", INT32_MAX + 1),
                                           ("restarts", 10**30)])
def test_options_beyond_the_cores_range_are_refused_by_name(dual_arm, poses, backend, option, value):
    # was: tol=1e300 an OverflowError (tol ** 2) and counts above 2**31 - 1 a pybind11 TypeError
    # on the compiled backend, while the Python backend accepted them
    with pytest.raises(TaskError) as excinfo:
        solve(dual_arm, None, [[tool_task(poses[0])]], backend=backend, **{option: value})
    message = one_line_reljac_error(excinfo)
    assert option in message and str(value) not in ("",) and ("at most" in message or "<=" in message)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_largest_counts_and_tol_are_accepted(dual_arm, poses, backend):
    result = solve(dual_arm, None, [[tool_task(poses[0])]], backend=backend, tol=1e100, max_iters=INT32_MAX,
                   restarts=INT32_MAX, timeout=0.05, seed=0)
    assert result.converged  # every pose meets a tol of 1e100 m


# ---------------------------------------------------------------- solve_many's targets and seeds
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("targets", [[{}], [{}, {}]])
def test_solve_many_refuses_a_problem_that_sets_no_target(dual_arm, poses, backend, targets):
    # was: numpy's "need at least one array to concatenate"
    with pytest.raises(ConfigurationError) as excinfo:
        solve_many(dual_arm, None, [[tool_task(poses[0])]], targets, backend=backend, restarts=1)
    assert "targets[0]" in one_line_reljac_error(excinfo)


@pytest.mark.parametrize("backend", BACKENDS)
def test_solve_many_refuses_ragged_seeds_by_name(dual_arm, poses, backend):
    # was: numpy's "setting an array element with a sequence ... inhomogeneous shape"
    seeds = [dual_arm.neutral(), dual_arm.neutral()[:3], dual_arm.neutral(), dual_arm.neutral()]
    with pytest.raises(ConfigurationError) as excinfo:
        solve_many(dual_arm, seeds, [[tool_task(poses[0])]], poses, backend=backend, restarts=1)
    assert one_line_reljac_error(excinfo).startswith("seeds[1] has shape (3,)")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_seed_is_named_as_the_argument_it_came_in(dual_arm, poses, backend):
    # was: "q has shape (3,) ...", "q[0] is nan": the argument is seeds, or solve's q0
    short, bad = dual_arm.neutral()[:3], np.full(dual_arm.nq, np.nan)
    levels = [[tool_task(poses[0])]]
    for seeds, start in ((short, "seeds has shape (3,)"), (bad, "seeds[0] is nan"),
                         ([dual_arm.neutral(), bad, dual_arm.neutral(), dual_arm.neutral()], "seeds[1][0] is nan")):
        with pytest.raises(ConfigurationError) as excinfo:
            solve_many(dual_arm, seeds, levels, poses, backend=backend, restarts=1)
        assert one_line_reljac_error(excinfo).startswith(start)
    with pytest.raises(ConfigurationError) as excinfo:
        Solver(dual_arm, levels, backend=backend).solve(short)
    assert one_line_reljac_error(excinfo).startswith("q0 has shape (3,)")


@pytest.mark.parametrize("backend", BACKENDS)
def test_solve_many_keyed_by_the_callers_task_object(dual_arm, poses, backend):
    # was: "targets[0] names task <FrameTask object at 0x...>, not one of the levels'": solve_many
    # copies the levels' tasks, and a dict keyed by the caller's task (as the docstring offers)
    # was refused; keyed by name it worked
    task = tool_task(poses[0])
    posture = PostureTask(dual_arm, weight=0.1)
    by_object = solve_many(dual_arm, None, [[task], [posture]], [{task: T} for T in poses[1:]], backend=backend,
                           restarts=3, tol=1e-6)
    by_name = solve_many(dual_arm, None, [[task], [posture]], [{task.name: T} for T in poses[1:]], backend=backend,
                         restarts=3, tol=1e-6)
    for a, b, T in zip(by_object, by_name, poses[1:], strict=True):
        np.testing.assert_array_equal(a.q, b.q)
        assert a.converged
        data = dual_arm.model.createData()
        pin.framesForwardKinematics(dual_arm.model, data, a.q)
        reached = data.oMf[dual_arm.model.getFrameId(TOOL)]
        assert np.linalg.norm((T.inverse() * reached).translation) < 1e-6
    assert task.target == poses[0]  # the caller's task is not touched


@pytest.mark.parametrize("backend", BACKENDS)
def test_solve_many_takes_an_array_of_poses(dual_arm, poses, backend):
    # was: "targets must be a list with one entry per problem, got ndarray" for (n, 4, 4) matrices
    task = tool_task(poses[0])
    H = np.array([T.homogeneous for T in poses])
    before = H.copy()
    from_array = solve_many(dual_arm, None, [[task]], H, backend=backend, restarts=2)
    from_list = solve_many(dual_arm, None, [[task]], list(poses), backend=backend, restarts=2)
    for a, b in zip(from_array, from_list, strict=True):
        np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(H, before)


class PythonFrameTask(FrameTask):
    """A FrameTask whose rows Python computes (a subclass that overrides compute: no description)."""

    def compute(self, kin: reljac.Kinematics) -> TaskTerms:
        return super().compute(kin)


@pytest.mark.parametrize("backend", BACKENDS)
def test_solve_many_with_a_task_of_python_rows(dual_arm, poses, backend):
    # was: AttributeError: 'NoneType' object has no attribute 'target' (the targets were read from
    # the task's compiled description, which a task computed in Python does not have)
    task = PythonFrameTask(TOOL)
    task.set_target(poses[0])
    results = solve_many(dual_arm, None, [[task]], poses[1:], backend=backend, restarts=3, tol=1e-6)
    for result, T in zip(results, poses[1:], strict=True):
        assert result.converged
        assert max(result.errors[task.name].values()) <= 1e-6
        data = dual_arm.model.createData()
        pin.framesForwardKinematics(dual_arm.model, data, result.q)
        err = T.inverse() * data.oMf[dual_arm.model.getFrameId(TOOL)]
        assert np.linalg.norm(err.translation) < 1e-6 and np.linalg.norm(pin.log3(err.rotation)) < 1e-6


# ---------------------------------------------------------------- names
@pytest.mark.parametrize("backend", BACKENDS)
def test_two_tasks_of_one_name_are_refused(dual_arm, poses, backend):
    # was: accepted, and IKResult.errors / levels_met / Controller.errors (keyed by name) showed
    # one task's errors for both: with a position task far out of reach above an orientation
    # task of the same default name, errors said position 0.0 for the unmet level
    far = pin.SE3(poses[0].rotation, poses[0].translation + np.array([3.0, 0.0, 0.0]))
    position = tool_task(far, weight=[1, 1, 1, 0, 0, 0])
    orientation = tool_task(poses[0], weight=[0, 0, 0, 1, 1, 1])
    assert position.name == orientation.name
    with pytest.raises(TaskError) as excinfo:
        solve(dual_arm, None, [[position], [orientation]], backend=backend, restarts=1)
    assert repr(position.name) in one_line_reljac_error(excinfo) and "name=" in str(excinfo.value)
    with pytest.raises(TaskError):
        Controller(dual_arm, [[position, orientation]], dt=0.01, backend=backend)
    # named apart, each task's errors are its own
    orientation = tool_task(poses[0], weight=[0, 0, 0, 1, 1, 1], name="tool orientation")
    result = solve(dual_arm, None, [[position], [orientation]], backend=backend, restarts=1)
    assert result.levels_met[0] is False and result.errors[position.name]["position"] > 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_task_in_two_levels_is_not_a_name_clash(dual_arm, poses, backend):
    task = tool_task(poses[1])
    result = solve(dual_arm, None, [[task], [task]], backend=backend, restarts=3, tol=1e-6)
    assert result.converged and result.levels_met == [True, True]


# ---------------------------------------------------------------- bounds
@pytest.mark.parametrize("lower, upper", [(np.inf, None), (None, -np.inf), ([0.0, np.inf, 0.0], np.inf),
                                          (-np.inf, [0.0, 0.0, -np.inf])])
def test_bounds_that_no_value_meets_are_refused(lower, upper):
    # was: accepted, then a solve said "rows that are not finite ... (its weights or target overflow)"
    task = RelativePositionTask(TOOL, "right_tool")
    task.set_target(np.zeros(3))
    with pytest.raises(TaskError) as excinfo:
        task.set_bounds(lower, upper)
    assert "bound" in one_line_reljac_error(excinfo) and task.bounds is None


def test_a_box_of_open_sides_is_still_accepted(dual_arm):
    task = RelativePositionTask(TOOL, "right_tool")
    task.set_target(np.zeros(3))
    task.set_bounds(-np.inf, [np.inf, 0.5, np.inf])
    assert task.bounds is not None
    assert BallTask(task, 0.1).radius == 0.1


# ---------------------------------------------------------------- what was already right stays so
@pytest.mark.parametrize("backend", BACKENDS)
def test_solver_used_from_two_threads_answers_right_or_refuses(dual_arm, poses, backend):
    import threading

    solver = Solver(dual_arm, [[tool_task(poses[1])]], tol=1e-6, restarts=3, backend=backend)
    alone = [solver.solve(seed=i).q for i in range(6)]
    found: dict[tuple[int, int], np.ndarray] = {}
    refused: list[str] = []

    def work(k: int) -> None:
        for i in range(6):
            try:
                found[k, i] = solver.solve(seed=i).q
            except ReljacError as error:
                refused.append(str(error))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) + len(refused) == 12
    for (_, i), q in found.items():
        np.testing.assert_array_equal(q, alone[i])
    assert all("another thread" in message for message in refused)


# ---------------------------------------------------------------- the controller's error damping
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("gain", [1e160, 1e300])
def test_a_gain_whose_ask_overflows_is_a_task_error(dual_arm, backend, gain):
    # was: |gain e dt|^2 overflowed in the error-dependent damping: lambda^2 = inf, v = 0 and the
    # level reported met (at 1e300) 5 cm from its target; numpy's overflow warning on Python
    q = dual_arm.reference_configuration()
    T = reljac.Kinematics(dual_arm, q).placement(TOOL)
    task = tool_task(pin.SE3(T.rotation, T.translation + np.array([0.05, 0.0, 0.0])), gain=gain)
    controller = Controller(dual_arm, [[task]], dt=0.01, backend=backend)
    with pytest.raises(TaskError) as excinfo:
        controller.velocity(q)
    assert repr(task.name) in one_line_reljac_error(excinfo) and "overflow" in str(excinfo.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_solve_many_refuses_a_task_set_twice_in_one_problem(dual_arm, poses, backend):
    # was: {task: T1, task.name: T2} solved for T2 alone, silently
    task = tool_task(poses[0])
    solver = Solver(dual_arm, [[task]], backend=backend, restarts=1)
    with pytest.raises(ConfigurationError) as excinfo:
        solver.solve_many(None, [{task: poses[1], task.name: poses[2]}])
    assert "twice" in one_line_reljac_error(excinfo)
    assert task.target == poses[0]


def test_a_pose_given_as_a_position_target_is_named(poses):
    # was: "must be 3 finite numbers, got 16 entries: [...]" (the pose's matrix read as numbers)
    task = RelativePositionTask("universe", TOOL)
    with pytest.raises(TaskError) as excinfo:
        task.set_target(poses[0])
    assert "pin.SE3" in one_line_reljac_error(excinfo) and ".translation" in str(excinfo.value)
    task.set_target(poses[0].translation)
    np.testing.assert_array_equal(task.target, poses[0].translation)


@pytest.mark.parametrize("progress", ["yes", 1, [True]])
def test_solve_many_refuses_a_progress_that_is_not_a_switch(dual_arm, poses, progress):
    # was: any truthy value turned the bar on
    solver = Solver(dual_arm, [[tool_task(poses[0])]], restarts=1)
    with pytest.raises(ConfigurationError) as excinfo:
        solver.solve_many(None, poses[:2], progress=progress)
    assert "progress must be True, False or None" in one_line_reljac_error(excinfo)


def test_last_reports_is_the_callers_copy(dual_arm, poses):
    controller = Controller(dual_arm, [[tool_task(poses[0])]], dt=0.01)
    controller.step(dual_arm.neutral())
    reports = controller.last_reports
    reports.clear()
    assert len(controller.last_reports) == 1


def test_a_configuration_of_integers_beyond_floats_range_is_named_infinite(dual_arm):
    # was: "must be an array of 15 real numbers (not booleans, text or complex)"
    with pytest.raises(ConfigurationError) as excinfo:
        dual_arm.validate_q([10**400] + [0] * (dual_arm.nq - 1))
    assert "q[0] is inf" in one_line_reljac_error(excinfo)

"""Inputs checked where they are used, not only where they are first given (an adversarial pass): a
task renamed after its controller or solver was made, a flag given as a truthy string, support
points beyond the coordinates reljac computes with, and a warning in the CLI."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import reljac
from reljac import ConfigurationError, Kinematics, Robot, SupportError, TaskError
from reljac.ik import Controller, FrameTask, PostureTask, Solver


@pytest.fixture()
def two_tools():
    robot = Robot.bundled("dual_arm")
    tasks = []
    for k, frame in enumerate(("left_tool", "right_tool")):
        task = FrameTask(frame, name=frame.split("_")[0])
        task.set_target(Kinematics(robot, robot.random_configuration(k + 1)).placement(frame))
        tasks.append(task)
    return robot, tasks


def test_a_task_renamed_to_another_tasks_name_after_the_controller_is_made_is_refused_where_names_key(two_tools):
    """errors() is keyed by name: two tasks of one name gave one entry, the other task's numbers
    under the first's name."""
    robot, (left, right) = two_tools
    controller = Controller(robot, [[left], [right]], dt=0.01)
    q = robot.neutral()
    errors = controller.errors(q)
    assert set(errors) == {"left", "right"}
    right.name = "left"
    with pytest.raises(TaskError, match="two tasks are named 'left'"):
        controller.errors(q)
    right.name = "right"
    assert controller.errors(q) == errors


def test_a_task_renamed_after_the_solver_is_made_is_refused_by_its_errors_and_solve_many(two_tools):
    robot, (left, right) = two_tools
    solver = Solver(robot, [[left], [right]], timeout=0.05)
    right.name = "left"
    result = solver.solve(seed=0)  # (found by index: what the names key is its report)
    with pytest.raises(TaskError, match="two tasks are named 'left'"):
        result.errors
    target = Kinematics(robot, robot.random_configuration(3)).placement("right_tool")
    with pytest.raises(TaskError, match="two tasks are named 'left'"):
        solver.solve_many(None, [{"left": target}], workers=1)


@pytest.mark.parametrize("flag", ["no", "False", 1, None, [0]])
def test_anti_chatter_must_be_a_boolean(flag):
    robot = Robot.bundled("dual_arm")
    with pytest.raises(ConfigurationError, match="anti_chatter must be True or False"):
        Controller(robot, [[PostureTask(robot)]], dt=0.01, anti_chatter=flag)


def test_support_points_beyond_the_largest_coordinate_say_so():
    """A triangle of legs 1e160 was called "no area" (its area overflowed)."""
    with pytest.raises(SupportError, match="within 1e\\+100"):
        reljac.support_polygon([[0, 0], [1e160, 0], [0, 1e160]])
    assert reljac.support_polygon([[0, 0], [1e90, 0], [0, 1e90]]).vertices.shape == (3, 2)


def test_a_warning_in_the_cli_is_one_line_once(tmp_path):
    """Python's own format printed the file and the source line of reljac, once per place."""
    path = tmp_path / "fast.toml"
    path.write_text('[[task]]\nlevel = 0\ntype = "frame"\nframe = "left_tool"\ngain = 1e29\n')
    done = subprocess.run([sys.executable, "-m", "reljac", "debug", "dual_arm", str(path), "--no-hold"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("reljac: warning: task 'pose of left_tool': gain 1e+29"), lines


def test_a_warning_is_shown_again_by_a_second_command_in_one_process(tmp_path, capsys):
    """A review: the texts already shown were kept for the process: a second main() said nothing."""
    from reljac.apps.cli import main

    path = tmp_path / "fast.toml"
    path.write_text('[[task]]\nlevel = 0\ntype = "frame"\nframe = "left_tool"\ngain = 1e29\n')
    for _ in range(2):
        assert main(["debug", "dual_arm", str(path), "--no-hold"]) == 0
        assert capsys.readouterr().err.count("reljac: warning:") == 1


def test_a_name_two_settable_tasks_share_is_refused_as_a_key_of_solve_many(two_tools):
    """A review: solve_many's targets by name took the first of the tasks of that name among the
    levels' tasks and those they are built on (a BallTask's inner task may share a level task's
    name, which Controller allows): a target silently went to one of them."""
    from reljac.ik import BallTask, RelativePositionTask

    robot, (_, right) = two_tools
    inner = RelativePositionTask("universe", "left_tool", name="right")
    inner.set_target(Kinematics(robot, robot.neutral()).placement("left_tool").translation)
    solver = Solver(robot, [[BallTask(inner, 0.05, name="ball")], [right]], timeout=0.02)
    with pytest.raises(ConfigurationError, match="names task 'right', the name of two tasks"):
        solver.solve_many(None, [{"right": inner.target}], workers=1)
    assert solver.solve_many(None, [{inner: inner.target}], workers=1)[0].converged  # by the task itself


def test_a_joint_value_of_the_wrong_size_is_shown_short_whatever_its_size():
    """A review: the message's value was made a full Python list first (10^7 zeros took 6 s) and a
    list holding itself raised RecursionError; numpy's scalars read as np.float64(1.0)."""
    import re

    from reljac import ConfigurationError, Robot

    robot = Robot.bundled("dual_arm")
    cycle: list = []
    cycle.append(cycle)
    for value, shown in [(np.zeros(10**7), "an array of shape (10000000,)"), ([np.float64(1.0), np.float64(2.0)],
                         "[1.0, 2.0]"), (cycle, "[[[[...]]]]"), (list(range(100)), "[0, 1, 2, 3, 4, 5, 6, 7, ...]")]:
        with pytest.raises(ConfigurationError, match=f"takes one number, not {re.escape(shown)}$"):
            robot.q_from_joint_values({"left_joint1": value})


def test_ragged_weights_speeds_and_cone_bounds_are_task_errors():
    """An adversarial pass: [[1.0], [2.0, 3.0]] raised numpy's own ValueError (np.ndim) before
    reljac's checks, for a weight, a max_speed and a cone's bound."""
    from reljac.ik import ConeTask

    ragged = [[1.0], [2.0, 3.0]]
    task = FrameTask("left_tool")
    with pytest.raises(TaskError, match="weight of task 'pose of left_tool' must be 6 finite real numbers"):
        task.set_weight(ragged)
    with pytest.raises(TaskError, match="max_speed"):
        task.max_speed = ragged
    with pytest.raises(TaskError, match="set half_angle"):
        ConeTask("universe", "left_tool", 0.3).set_bounds(None, ragged)
    assert np.array_equal(task.weight, np.ones(6)) and task.max_speed is None  # (left as they were)


def test_a_limit_in_a_level_takes_a_weight_within_every_tasks_range():
    """An adversarial pass: CollisionAvoidanceTask(weight=1e200) was taken (FrameTask's 1e200 is
    refused), and the backends then disagreed: one overflowed, the other stepped."""
    from reljac.ik import CollisionAvoidance, CollisionAvoidanceTask

    robot = Robot.bundled("dual_arm")
    with pytest.raises(TaskError, match=r"has an entry of 1e\+200: reljac computes with \|entries\| <= 1e\+100"):
        CollisionAvoidanceTask(CollisionAvoidance(robot, min_distance=0.01), weight=1e200)


def test_a_task_name_is_text():
    """An adversarial pass: an array name raised numpy's "truth value ... ambiguous", a list name
    failed later as unhashable, a number was taken."""
    for name in (np.array([1.0, 2.0]), ["a"], 5):
        with pytest.raises(TaskError, match="a task's name must be text"):
            FrameTask("left_tool", name=name)
    task = FrameTask("left_tool", name="lead")
    with pytest.raises(TaskError, match="a task's name must be text, not list"):
        task.name = ["x"]
    assert task.name == "lead"


def test_a_floor_region_of_text_or_ragged_vertices_is_refused():
    """An adversarial pass: a polygon of text, complex or ragged entries raised numpy's errors,
    and x = b"12" was read as (49, 50), the characters' codes."""
    from reljac.placement import FloorRegion

    for polygon in ([[0, 0], [1, "a"], [0, 1]], [[0, 0], [1j, 0], [0, 1]], [[0, 0], [1], [0, 1]],
                    [[0, 0], [10**400, 0], [0, 1]]):
        with pytest.raises(ConfigurationError, match="polygon must be at least 3 finite"):
            FloorRegion(x=(-1, 1), y=(-1, 1), polygon=polygon)
    with pytest.raises(ConfigurationError, match=r"x must be \(lower, upper\), got b'12'"):
        FloorRegion(x=b"12", y=(-1, 1))


def test_a_ball_radius_below_zero_is_refused_through_its_bounds_too():
    from reljac.ik import BallTask, RelativePositionTask

    ball = BallTask(RelativePositionTask("universe", "left_tool"), 0.1)
    with pytest.raises(TaskError, match="must be >= 0"):
        ball.set_bounds(None, -1.0)
    with pytest.raises(TaskError, match="set radius instead of bounds"):
        ball.set_bounds([0.0], 1.0)
    ball.set_bounds(None, 0.2)
    assert ball.radius == 0.2


def test_a_huge_integer_is_named_short_in_its_error():
    """An adversarial pass: 10**400 given as a frame id, a seed, a restart count or a backend made
    one-line messages of over 400 characters."""
    from reljac import FrameNotFound
    from reljac.ik import PostureTask, solve

    robot = Robot.bundled("dual_arm")
    posture = [[PostureTask(robot)]]
    for call, error, shown in [
            (lambda: robot.frame_id(10**400), FrameNotFound, "frame id an integer of 401 digits"),
            (lambda: solve(robot, None, posture, seed=10**400), TaskError, "got an integer of 401 digits"),
            (lambda: solve(robot, None, posture, restarts=10**400), TaskError, "got an integer of 401 digits"),
            (lambda: Controller(robot, posture, dt=0.01, backend=10**400), ConfigurationError, "got 1000")]:
        with pytest.raises(error, match=shown) as info:
            call()
        assert len(str(info.value)) < 160, str(info.value)

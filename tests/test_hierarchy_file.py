"""Hierarchy files of ``reljac debug ROBOT FILE`` (reljac/apps/hierarchy_file.py): every bad value is
one `reljac: error:` line naming the file, the task and what is valid (exit 2); the format reaches
what the Python API builds (CoM, contacts, support region, max_speed, velocity limits, locked
joints), checked against values computed here from Pinocchio."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from reljac import Robot
from reljac.apps.cli import main
from reljac.apps.hierarchy_file import read_hierarchy
from reljac.exceptions import ConfigurationError
from reljac.ik import CollisionAvoidance, CoMTask, ContactTask, PostureTask, RelativePositionTask, SupportRegion

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FRAME = '[[task]]\ntype = "frame"\nframe = "left_tool"\n'


@pytest.fixture(scope="module")
def dual_arm():
    return Robot.bundled("dual_arm")


def error_line(capsys, path, robot="dual_arm") -> str:
    """The command's stderr, after checking it is one `reljac: error:` line and exit code 2."""
    assert main(["debug", robot, str(path), "--no-hold", "--paused"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reljac: error:") and err.count("\n") == 1, err
    assert "unexpected" not in err and "bug" not in err and err.count("hierarchy file") == 1
    return err


BAD = [  # (file text, words the error must contain besides the file's name)
    *[(f'{FRAME}name = {value}\n', ["task 1", "name must be a non-empty string"]) for value in
      ("5", "1.5", "true", "[1]", "0", '""')],
    (f'{FRAME}name = "a"\n[[task]]\ntype = "frame"\nframe = "right_tool"\nname = "a"\n',
     ["tasks 1 and 2 are both named 'a'", "own name"]),
    (f'{FRAME}[[task]]\ntype = "frame"\nframe = "left_tool"\n', ["tasks 1 and 2 are both named 'pose of left_tool'"]),
    ('[[task]]\ntype = "posture"\nposition = [1, 2, 3]\n', ["task 1", "'position' is not used by a posture task",
                                                           "takes level, type, name, gain, weight, max_speed"]),
    ('[[task]]\ntype = "position"\nframe_a = "left_tool"\nframe_b = "right_tool"\nrpy = [0, 0, 0]\n',
     ["'rpy' is not used by a position task", "frame_a, frame_b, position"]),
    (f'{FRAME}frame_a = "left_tool"\n', ["'frame_a' is not used by a frame task"]),
    (f'{FRAME}position = ["1", "2", "3"]\n', ["task 1", "position [m] must be a list of 3 finite numbers"]),
    (f'{FRAME}position = [true, false, true]\n', ["position [m] must be a list of 3 finite numbers"]),
    (f'{FRAME}rpy = [[0, 0, 0]]\n', ["rpy [rad] must be a list of 3 finite numbers"]),
    ('[[task]]\ntype = "frame"\nframe = "left_tol"\nname = "L"\n', ["task 1 ('L')", "left_tool"]),
    ('[[task]]\ntype = "frame"\nframe = 3\n', ["task 1", "frame must be a non-empty string"]),
    (f'{FRAME}gain = -1\n', ["task 1", "gain [1/s] must be a finite number >= 0"]),
    (f'{FRAME}gain = "fast"\n', ["gain [1/s] must be a finite number >= 0"]),
    (f'{FRAME}gain = nan\n', ["gain [1/s] must be a finite number >= 0"]),
    (f'{FRAME}weight = [1, 2]\n', ["task 1", "weight (one number or a list of 6)"]),
    (f'{FRAME}weight = -1\n', ["weight (one number or a list of 6) must be a finite number >= 0"]),
    (f'{FRAME}weight = [1, 1, 1, -1, 1, 1]\n', ["every weight must be >= 0"]),
    (f'{FRAME}max_speed = 0\n', ["max_speed", "> 0"]),
    (f'{FRAME}level = 1.5\n', ["level must be an integer >= 0"]),
    ('[start]\nleft_jont1 = 0.1\n', ["[start]", "left_jont1", "left_joint1"]),
    ('[start]\nleft_joint1 = "0.1"\n', ["[start]", "joint 'left_joint1' [rad or m] must be a finite number"]),
    ('[start]\nleft_joint1 = true\n', ["[start]", "must be a finite number"]),
    ('[collision]\nmin_distance = "1cm"\n', ["[collision]", "min_distance [m] must be a finite number"]),
    ('[collision]\nmin_distance = -1\n', ["[collision]", "min_distance"]),
    ("[collision]\ngain = 5\n", ["[collision]", "gain"]),
    ('[collision]\nmindist = 1\n', ["[collision]", "unknown key 'mindist'"]),
    ("collision = 3\n", ["[collision] must be a table"]),
    ('[velocity_limits]\nleft_joint1 = 0\n', ["[velocity_limits]", "> 0"]),
    ('[velocity_limits]\nleft_jont1 = 1\n', ["[velocity_limits]", "left_joint1"]),
    ('lock = ["left_jont1"]\n', ["lock", "left_jont1"]),
    ('lock = [1]\n', ["each of lock", "non-empty string"]),
    ("dt = true\n", ["dt must be a number of seconds in [1e-4, 0.1]"]),
    ("task = 3\n", ["tasks are [[task]] tables"]),
    ("speed = 1\n", ["unknown key 'speed'", "valid: collision, dt, lock"]),
    ("a = " + "[" * 5000 + "]" * 5000 + "\n", ["nests arrays or tables more than 32 deep"]),
    ('[support]\ncontacts = ["left_tool"]\nsole = [0.1, 0.1]\n', ["[support]", "span"]),
    ('[support]\nmargin = 0.1\n', ["[support]", "contacts = [\"FRAME\", ...] is needed"]),
    ('[[task]]\ntype = "com"\naxes = "xq"\n', ["task 1", "axes must be distinct letters"]),
    ('[[task]]\ntype = "com"\naxes = "xy"\nposition = [1, 2, 3, 4]\n', ["position [m]", "3 or 2 finite numbers"]),
    ('[[task]]\ntype = "posture"\nmasked_joints = ["nope"]\n', ["task 1", "nope"]),
    ('[[obstacle]]\nname = "o"\nshape = "sphere"\nradius = 0.1\n', ["[[obstacle]] needs a [collision] table"]),
    *[(f'[collision]\n[[obstacle]]\nname = "o"\n{body}\n', ["obstacle 1 ('o')", words]) for body, words in (
        ('shape = "cone"', "shape must be one of box, sphere, capsule, cylinder"),
        ('shape = "box"', "a box needs size [m]"),
        ('shape = "box"\nsize = [1, 2]', "size [m] (x, y, z) must be a list of 3 finite numbers"),
        ('shape = "sphere"\nradius = -1', "radius [m] must be a finite number > 0"),
        ('shape = "sphere"\nradius = 1\nsize = [1, 1, 1]', "unknown key 'size'"),
        ('shape = "capsule"\nradius = 1\nlength = 1\nframe = "torsoo"', "torso"),
        ('shape = "sphere"\nradius = 0.1\nposition = [0, "0", 0]', "position [m] must be a list of 3"))],
    ('[collision]\n[[obstacle]]\nshape = "sphere"\n', ["obstacle 1", "name must be a non-empty string"]),
    # the second replaced the first, silently (the near one dropped from the avoidance)
    ('[collision]\n[[obstacle]]\nname = "o"\nshape = "sphere"\nradius = 0.1\n'
     '[[obstacle]]\nname = "o"\nshape = "sphere"\nradius = 0.1\nposition = [5, 5, 5]\n',
     ["obstacles 1 and 2 are both named 'o'", "must be unique"]),
    # only the first entry was read, the others never checked
    ('[support]\ncontacts = ["left_tool", "right_tool"]\nsole = [0.1, 0.1]\nframe = ["left_tool", "nowhere"]\n',
     ["[support]", "frame must be a non-empty string"]),
]


HANDS = '[[task]]\ntype = "relative"\nframe_a = "left_tool"\nframe_b = "right_tool"\nname = "hands"\n'
BALL = '[[task]]\ntype = "ball"\nframe_a = "torso"\nframe_b = "left_tool"\n'
SIX = "must be one number or a list of 6, each a finite number or"
BOUND_BAD = [  # bounds and ball tasks (their good files: tests/test_hierarchy_bounds.py)
    (f'{HANDS}lower = "0.1"\n', ["task 1 ('hands')", "lower [m, m, m, rad, rad, rad]", SIX, "-inf (TOML's"]),
    (f'{HANDS}lower = [0, 0, 0]\n', ["task 1 ('hands')", SIX]),
    (f'{HANDS}upper = [0.1, 0.1, 0.1, 0.1, 0.1, nan]\n', ["upper [m, m, m, rad, rad, rad]", SIX, "inf (TOML's"]),
    (f'{HANDS}upper = -inf\n', ["upper", "for an open side"]),
    (f'{HANDS}lower = inf\n', ["lower", "-inf (TOML's, without quotes)"]),
    (f'{HANDS}lower = ["-inf", 0, 0, 0, 0, 0]\n', ["lower", "without quotes"]),
    (f'{HANDS}lower = [true, 0, 0, 0, 0, 0]\n', ["lower", SIX]),
    (f'{HANDS}lower = 0.1\nupper = -0.1\n', ["task 1 ('hands')", "lower bound 0.1 above upper bound -0.1 (component 0)"]),
    ('[[task]]\ntype = "position"\nframe_a = "left_tool"\nframe_b = "right_tool"\nupper = [1, 2]\n',
     ["upper [m] (on the task's error, from its target) must be one number or a list of 3"]),
    ('[[task]]\ntype = "posture"\nlower = [0, 0]\n', ["lower [rad or m]", "a list of 15 (one per velocity)"]),
    (BALL, ["task 1", "a ball task needs radius = [m]"]),
    (f'{BALL}radius = -0.1\n', ["radius [m] must be a finite number >= 0"]),
    (f'{BALL}radius = "10 cm"\n', ["radius [m] must be a finite number >= 0"]),
    (f'{BALL}radius = 0.1\nlower = 0\n', ["'lower' is not used by a ball task", "takes level, type"]),
    (f'{BALL}radius = 0.1\nrpy = [0, 0, 0]\n', ["'rpy' is not used by a ball task"]),
    (f'{HANDS}radius = 0.1\n', ["'radius' is not used by a relative task (it is for ball tasks)"]),
    ('[[task]]\ntype = "bal"\n', ["type must be one of", "ball"]),
]

TOOLS = 'frame_a = "left_tool"\nframe_b = "right_tool"\n'
ARRAY = "must be a finite number or a list (of lists) of finite numbers of one shape"
KIND_BAD = [  # the values of the compiled kinds (an uncaught ValueError each before: "a reljac bug")
    (f'[[task]]\ntype = "distance"\n{TOOLS}target = "far"\n', ["task 1", "target", ARRAY, "'far'"]),
    (f'[[task]]\ntype = "distance"\n{TOOLS}target = [true]\n', ["task 1", "target", ARRAY]),
    ('[[task]]\ntype = "cone"\nframe_a = "torso"\nframe_b = "left_tool"\nhalf_angle = 0.5\naxis_b = [true, false, true]\n',
     ["task 1", "axis_b", ARRAY]),
    ('[[task]]\ntype = "support_region"\ncontacts = [{frame = "left_tool", points = "x"}]\n',
     ["task 1 contacts[0]", "points", ARRAY]),
    ('[[task]]\ntype = "support_region"\ncontacts = [{frame = "left_tool", points = [[0, 0], [1, 0, 0]]}]\n',
     ["task 1 contacts[0]", "points", ARRAY]),
    ('[[task]]\ntype = "support_region"\ncontacts = [{frame = "left_tool", length = 0.2, width = 0.1, colour = 1}]\n',
     ["task 1 contacts[0]", "unknown key 'colour'", "center, frame, length, width"]),
    # values the tasks refuse only when they compute: at load now (the debug page paused on them)
    ('[[task]]\ntype = "support_region"\ncontacts = [{frame = "left_tool", points = [[0, 0, 0], [0.1, 0, 0], [0.2, 0, 0]]}]\n',
     ["task 1", "span no area", "three points not on one line"]),  # (the task was not named)
    # a half-space's own upper bound 0 kept under a given lower one (a lower above it: silently kept
    # outside), and more obstacles than a file may hold (3000: a load of hours, then 12 s of Pinocchio's)
    ('[[task]]\ntype = "half_space"\nframe_a = "universe"\nframe_b = "right_tool"\nnormal = [0, 0, 1]\noffset = 1.0\n'
     'lower = 1.0\n', ["task 1", "lower bound 1.0 above upper bound 0.0"]),
    ('[collision]\n' + '[[obstacle]]\nname = "o{}"\nshape = "sphere"\nradius = 0.01\nposition = [5, 0, 0]\n' * 1001,
     ["1,001 [[obstacle]] tables; at most 1000"]),
    (f'[[task]]\ntype = "relative"\n{TOOLS}gain = 1e308\n', ["asks for a non-finite velocity"]),
]



@pytest.mark.parametrize("text, words", BAD + BOUND_BAD + KIND_BAD)
def test_every_mistake_is_one_error_line_naming_the_file_and_what_is_valid(capsys, tmp_path, text, words):
    path = tmp_path / "bad file.toml"
    path.write_text(text, encoding="utf-8")
    err = error_line(capsys, path)
    assert f"hierarchy file '{path}'" in err
    for word in words:
        assert word in err


def test_a_latin1_file_and_a_fifo_are_refused(capsys, tmp_path):
    latin = tmp_path / "latin.toml"
    latin.write_bytes(f'{FRAME}name = "caf\xe9"\n'.encode("latin-1"))
    err = error_line(capsys, latin)
    assert "is not UTF-8 text (byte 0xe9" in err and "latin.toml" in err
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    assert "is a FIFO (named pipe)" in error_line(capsys, fifo)  # no read: it would block forever


def test_the_name_of_a_task_labels_it_and_default_names_stay(dual_arm, tmp_path):
    path = tmp_path / "names.toml"
    path.write_text(f'{FRAME}name = "0 left"\n[[task]]\ntype = "frame"\nframe = "right_tool"\n')
    controller = read_hierarchy(dual_arm, path).controller
    assert [t.name for level in controller.levels for t in level] == ["0 left", "pose of right_tool"]
    assert controller.dt == 0.01  # no dt in the file: the documented default


def test_max_speed_velocity_limits_and_locked_joints(dual_arm, tmp_path):
    path = tmp_path / "options.toml"
    path.write_text('lock = {left_joint7 = 0.3, right_joint7 = -0.2}\n[start]\nleft_joint1 = 0.5\n'
                    '[velocity_limits]\nleft_joint2 = 0.25\n'
                    f'{FRAME}max_speed = [0.1, 0.5]\nweight = [1, 1, 1, 0, 0, 0]\n')
    hierarchy = read_hierarchy(dual_arm, path)
    robot, controller = hierarchy.robot, hierarchy.controller
    assert robot.nq == dual_arm.nq - 2 and robot.locked_joints == {"left_joint7": 0.3, "right_joint7": -0.2}
    assert robot.joint_values(hierarchy.q)["left_joint1"] == pytest.approx(0.5)
    (task,), = controller.levels
    np.testing.assert_array_equal(task.max_speed, [0.1, 0.5])
    np.testing.assert_array_equal(task.weight, [1, 1, 1, 0, 0, 0])
    # the locked left_joint7 moved the tool: its target is the start pose with the joint at 0.3
    q_full = dual_arm.q_from_joint_values({**dual_arm.joint_values(dual_arm.reference_configuration()),
                                           "left_joint1": 0.5, "left_joint7": 0.3, "right_joint7": -0.2})
    data = dual_arm.model.createData()
    pin.framesForwardKinematics(dual_arm.model, data, q_full)
    np.testing.assert_allclose(task.target.homogeneous, data.oMf[dual_arm.frame_id("left_tool")].homogeneous,
                               atol=1e-12)
    limits = controller.limits[0].velocity_limits
    idx = robot.model.joints[robot.joint_id("left_joint2")].idx_v
    assert limits[idx] == 0.25
    np.testing.assert_array_equal(np.delete(limits, idx), np.delete(robot.velocity_limits, idx))


@pytest.fixture(scope="module")
def talos():
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    return Robot.load("talos")


def test_the_talos_example_is_the_humanoid_stack_at_its_start(talos):
    hierarchy = read_hierarchy(talos, EXAMPLES / "talos_balance_debug.toml")
    robot, controller, q = hierarchy.robot, hierarchy.controller, hierarchy.q
    kinds = [[type(t) for t in level] for level in controller.levels]
    assert kinds[0] == [ContactTask, ContactTask] and kinds[1] == [CoMTask] and kinds[-1] == [PostureTask]
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    for foot in controller.levels[0]:  # held where they are at the start
        np.testing.assert_allclose(foot.target.homogeneous, data.oMf[robot.frame_id(foot.frame_b)].homogeneous,
                                   atol=1e-12)
    com = controller.levels[1][0]
    np.testing.assert_allclose(com.target, pin.centerOfMass(robot.model, robot.model.createData(), q)[:2], atol=1e-12)
    posture = controller.levels[-1][0]
    assert (posture.weight[:6] == 0).all() and (posture.weight[6:] == 1).all()
    (support,) = [c for c in controller.limits if isinstance(c, SupportRegion)]
    assert support.margin == 0.02 and {c.frame for c in support.contacts} == {"left_sole_link", "right_sole_link"}
    q1 = q
    for _ in range(5):
        q1 = controller.step(q1)  # runs: the stack is consistent
    assert np.isfinite(q1).all()


def test_obstacles_join_the_collision_avoidance(dual_arm, tmp_path):
    path = tmp_path / "obstacles.toml"
    path.write_text(f'{FRAME}[collision]\nmin_distance = 0.02\n'
                    '[[obstacle]]\nname = "table"\nshape = "box"\nsize = [0.5, 0.5, 0.04]\nposition = [0.6, 0, 0.3]\n'
                    '[[obstacle]]\nname = "ball"\nshape = "sphere"\nradius = 0.05\nframe = "torso"\n')
    controller = read_hierarchy(dual_arm, path).controller
    (avoidance,) = [c for c in controller.limits if isinstance(c, CollisionAvoidance)]
    assert avoidance.min_distance == 0.02 and avoidance.model.obstacles == ["table", "ball"]
    assert {"table", "ball"} <= {body for pair in avoidance.model.pairs for body in pair}


def test_a_com_task_and_a_position_target_from_the_file(dual_arm, tmp_path):
    path = tmp_path / "com.toml"
    path.write_text('[[task]]\ntype = "com"\naxes = "zx"\nposition = [0.1, 0.2, 0.3]\ngain = 3\n'
                    '[[task]]\nlevel = 1\ntype = "position"\nframe_a = "left_tool"\nframe_b = "right_tool"\n'
                    'position = [0, 0.2, 0]\n')
    (com,), (position,) = read_hierarchy(dual_arm, path).controller.levels
    assert isinstance(com, CoMTask) and isinstance(position, RelativePositionTask)
    np.testing.assert_array_equal(com.target, [0.3, 0.1])  # z then x of the point
    assert com.gain == 3.0


def test_a_file_error_is_a_configuration_error_in_python(dual_arm, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(f'{FRAME}name = 5\n')
    with pytest.raises(ConfigurationError, match="task 1: name must be"):
        read_hierarchy(dual_arm, path)


def test_a_lower_bound_alone_keeps_a_half_spaces_plane(dual_arm, tmp_path):
    """An adversarial pass: `lower = -0.5` on a half_space replaced its upper bound 0 by +inf: the
    point was no longer kept below the plane."""
    path = tmp_path / "half.toml"
    path.write_text('[[task]]\ntype = "half_space"\nframe_a = "universe"\nframe_b = "right_tool"\n'
                    'normal = [0, 0, 1]\noffset = 1.0\nlower = -0.5\n')
    (task,) = read_hierarchy(dual_arm, path).controller.tasks
    lower, upper = task.bounds
    assert lower.tolist() == [-0.5] and upper.tolist() == [0.0]


def test_a_file_of_more_tasks_than_the_cap_is_refused_at_once(tmp_path):
    """An adversarial pass: 1,000 frame tasks (a 52 KB file) took minutes to start (a level's
    solve grows with the cube of its rows); at most MAX_TASKS, refused before any is built."""
    from reljac.apps.hierarchy_file import MAX_TASKS

    task = '[[task]]\ntype = "frame"\nframe = "left_tool"\nname = "t{}"\n'
    path = tmp_path / "many.toml"
    path.write_text("".join(task.format(i) for i in range(MAX_TASKS + 1)))
    with pytest.raises(ConfigurationError, match=f"{MAX_TASKS + 1:,} \\[\\[task\\]\\] tables; at most {MAX_TASKS}"):
        read_hierarchy(Robot.bundled("dual_arm"), path)


@pytest.mark.parametrize("kind", ["joint_position_limit", "joint_velocity_limit", "reversal_damping"])
def test_registered_kinds_no_level_holds_say_what_the_file_does_instead(tmp_path, kind):
    path = tmp_path / "limit.toml"
    path.write_text(f'[[task]]\ntype = "{kind}"\n')
    with pytest.raises(ConfigurationError, match=f"type '{kind}' is not a task a level can hold: the controller"):
        read_hierarchy(Robot.bundled("dual_arm"), path)


def test_a_joint_value_of_the_wrong_size_is_echoed_as_the_file_gave_it(tmp_path):
    """Not numpy's reprs (an adversarial pass: "not [np.float64(1.0), np.float64(2.0)]")."""
    path = tmp_path / "start.toml"
    path.write_text('[start]\nleft_joint1 = [1.0, 2.0]\n[[task]]\ntype = "posture"\n')
    with pytest.raises(ConfigurationError, match=r"joint 'left_joint1' takes one number, not \[1\.0, 2\.0\]$"):
        read_hierarchy(Robot.bundled("dual_arm"), path)

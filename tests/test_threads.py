"""One Robot shared by several threads: every one-shot answer equals the single-threaded one.

Each thread computes many one-shot results at its own configurations on the SAME Robot; every
answer is compared with the same call made beforehand on one thread. A tiny switch interval
makes the interpreter change threads between almost every pair of bytecodes, so a shared
pin.Data written by one thread and read by another would show up as a wrong answer.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import reljac
import reljac.analysis
import reljac.constraints
import reljac.costs

THREADS = 4
CALLS = 150  # per thread and per function


def _one_shots(robot):
    """name -> f(q) for the one-shot functions of the public API (each uses robot's data)."""
    a, b = ("left_tool", "right_tool") if "left_tool" in robot.frame_names else ("universe", robot.frame_names[-1])
    v = np.linspace(-1.0, 1.0, robot.nv)
    position = reljac.costs.PositionCost(b, [0.3, 0.1, 0.2], relative_to=a)
    ball = reljac.constraints.BallJoint(a, b, point_a=[0.0, 0.0, 0.1])
    return {
        "relative_jacobian": lambda q: reljac.relative_jacobian(robot, q, a, b),
        "relative_jacobian in b": lambda q: reljac.relative_jacobian(robot, q, a, b, expressed_in="b"),
        "relative_jacobian in world": lambda q: reljac.relative_jacobian(robot, q, a, b, expressed_in="world"),
        "relative_placement": lambda q: reljac.relative_placement(robot, q, a, b).homogeneous,
        "relative_twist": lambda q: reljac.relative_twist(robot, q, v, a, b),
        "relative_jacobian_time_variation": lambda q: reljac.relative_jacobian_time_variation(robot, q, v, a, b),
        "relative_manipulability": lambda q: reljac.analysis.relative_manipulability(robot, q, a, b).singular_values,
        "frame_manipulability": lambda q: reljac.analysis.frame_manipulability(robot, q, b).singular_values,
        "cost value and gradient": lambda q: np.append(*position.value_and_tangent_gradient(robot, q)[::-1]),
        "ball-joint jacobian": lambda q: ball.jacobian(robot, q),
        "ball-joint residual": lambda q: ball.residual(robot, q),
        "mass matrix": lambda q: reljac.constraints.mass_matrix(robot, q),
    }


@pytest.fixture
def fast_switching():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


@pytest.mark.parametrize("name", ["dual_arm", "hand", "tree30"])
@pytest.mark.slow
def test_one_shot_functions_from_four_threads_match_a_single_thread(name, fast_switching):
    robot = reljac.Robot.bundled(name)
    functions = _one_shots(robot)
    rng = np.random.default_rng(7)
    qs = [[robot.random_configuration(rng) for _ in range(CALLS)] for _ in range(THREADS)]
    expected = {f: [[fn(q) for q in thread_qs] for thread_qs in qs] for f, fn in functions.items()}
    wrong: list[str] = []
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(t: int) -> None:
        try:
            start.wait()
            for k, q in enumerate(qs[t]):
                for f, fn in functions.items():
                    got = fn(q)
                    if not np.array_equal(got, expected[f][t][k]):
                        wrong.append(f"{f}: thread {t}, call {k}")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:3]
    assert not wrong, f"{len(wrong)} answers differ from the single-threaded ones, e.g. {wrong[:5]}"


def test_kinematics_objects_are_independent_of_the_robots_one_shot_data():
    """A Kinematics built without `data` keeps its answers while one-shot calls run on the robot."""
    robot = reljac.Robot.bundled("dual_arm")
    q = robot.random_configuration(1)
    kin = reljac.Kinematics(robot, q)
    before = kin.relative_jacobian("left_tool", "right_tool")
    for seed in range(5):
        reljac.relative_jacobian(robot, robot.random_configuration(seed + 10), "left_tool", "right_tool")
    np.testing.assert_array_equal(kin.relative_jacobian("left_tool", "right_tool"), before)
    np.testing.assert_array_equal(kin.relative_placement("left_tool", "right_tool").homogeneous,
                                  reljac.relative_placement(robot, q, "left_tool", "right_tool").homogeneous)


@pytest.mark.parametrize("name", ["hand", "tree30"])
def test_a_robot_pickles_and_deep_copies_with_its_answers(name):
    """Locks and per-thread data are not copied; the model is rebuilt from the URDF text (Pinocchio
    4.1 crashes on an unpickled model with mimic joints, as the hand has)."""
    import copy
    import pickle

    robot = reljac.Robot.bundled(name)
    rng = np.random.default_rng(5)
    q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
    a, b = robot.frame_names[3], robot.frame_names[-1]
    for clone in (pickle.loads(pickle.dumps(robot)), copy.deepcopy(robot)):
        np.testing.assert_array_equal(reljac.relative_jacobian(clone, q, a, b),
                                      reljac.relative_jacobian(robot, q, a, b))
        np.testing.assert_array_equal(reljac.relative_placement(clone, q, a, b).homogeneous,
                                      reljac.relative_placement(robot, q, a, b).homogeneous)
        np.testing.assert_array_equal(reljac.relative_jacobian_time_variation(clone, q, v, a, b),
                                      reljac.relative_jacobian_time_variation(robot, q, v, a, b))

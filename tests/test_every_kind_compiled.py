"""Every registered kind (:mod:`reljac.ik.kinds`, issue 41) runs in the compiled core: a stack of
it in a Controller runs no Python rows, a Solver of it searches in one C++ call, and where the kind
has a target, ``solve_many`` sets each problem's own in the core (each result is the one
``solve`` finds with that target set on the task, the same seed: the Python classes and the
single search are the specification).

The registry is walked, not a list: a kind registered without a stack here fails
``test_every_registered_kind_has_a_stack_here`` (a new kind is its class, its C++ file if compiled,
and its line here)."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.exceptions import ConfigurationError, TaskError
from reljac.ik import (
    BallTask,
    CollisionAvoidance,
    CoMTask,
    ConeTask,
    Controller,
    DistanceTask,
    FrameTask,
    HalfSpaceTask,
    JointPositionLimit,
    JointVelocityLimit,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    Solver,
    SupportRegion,
    compiled_available,
    solve_many,
)
from reljac.ik.humanoid import ContactTask
from reljac.ik.kinds import kinds
from reljac.ik.limits.joints import ReversalDamping
from reljac.ik.solvers.backend import BACKENDS

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")

A, B = "left_tool", "right_tool"


def _kin(robot, q):
    return reljac.Kinematics(robot, q)


def _posture(robot):
    return PostureTask(robot, weight=0.01)


def _sole(robot):
    return reljac.SupportContact.rectangle("torso", 0.3, 0.3)


def _avoidance(robot):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pairs that start near each other
        return CollisionAvoidance(robot)


class Case:
    """A stack of one kind: levels, limits, and (for a kind with a target) the task whose targets
    the problems set and the target of problem i."""

    def __init__(self, levels: list, limits: list | None = None, task: Any = None,
                 target: Callable[[int], Any] | None = None) -> None:
        self.levels, self.limits, self.task, self.target = levels, limits or [], task, target


def relative(robot, q):
    task = RelativeFrameTask(A, B)
    T = _kin(robot, q).relative_placement(A, B)
    task.set_target(T)
    return Case([[task], [_posture(robot)]], task=task,
                target=lambda i: pin.SE3(T.rotation, T.translation + [0.02 * i, 0.0, 0.03]))


def frame(robot, q):
    task = FrameTask(A)
    T = _kin(robot, q).placement(A)
    task.set_target(T)
    return Case([[task], [_posture(robot)]], task=task,
                target=lambda i: pin.SE3(T.rotation, T.translation + [0.0, 0.02 * i, 0.03]))


def position(robot, q):
    task = RelativePositionTask(A, B)
    p = _kin(robot, q).relative_placement(A, B).translation
    task.set_target(p)
    return Case([[task], [_posture(robot)]], task=task, target=lambda i: p + [0.03 * i, 0.01, 0.0])


def orientation(robot, q):
    task = RelativeOrientationTask("universe", A)
    R = _kin(robot, q).placement(A).rotation
    task.set_target(R)
    return Case([[task], [_posture(robot)]], task=task, target=lambda i: R @ pin.rpy.rpyToMatrix(0.1 * i, 0.1, 0))


def posture(robot, q):
    task = PostureTask(robot)
    task.set_target(q)
    return Case([[task]], task=task, target=lambda i: q + 0.05 * (i + 1))


def ball(robot, q):
    inner = RelativePositionTask(A, B)
    p = _kin(robot, q).relative_placement(A, B).translation
    inner.set_target(p + [0.1, 0.0, 0.0])
    return Case([[BallTask(inner, 0.02)], [_posture(robot)]], task=inner,
                target=lambda i: p + [0.05 + 0.03 * i, 0.0, 0.0])


def com(robot, q):
    task = CoMTask(robot, axes="xy")
    c = reljac.center_of_mass(robot, q)
    task.set_target(c)
    return Case([[task], [_posture(robot)]], task=task, target=lambda i: c + [0.01 * (i + 1), 0.0, 0.0])


def cone(robot, q):
    return Case([[ConeTask("universe", A, np.radians(10), axis_a=[-1, 0, 0])], [_posture(robot)]])


def half_space(robot, q):
    p = _kin(robot, q).placement(B).translation
    return Case([[HalfSpaceTask("universe", B, [[1, 0, 0], [0, 1, 0]], [p[0] - 0.05, p[1] - 0.05])],
                 [_posture(robot)]])


def distance(robot, q):
    task = DistanceTask(A, B)
    d = float(np.linalg.norm(_kin(robot, q).relative_placement(A, B).translation))
    task.set_target(d)
    return Case([[task], [_posture(robot)]], task=task, target=lambda i: d + 0.03 * (i + 1))


def contact(robot, q):
    task = ContactTask(robot, A, q)
    T = _kin(robot, q).placement(A)
    return Case([[task], [_posture(robot)]], task=task,
                target=lambda i: pin.SE3(T.rotation, T.translation + [0.02 * i, 0.0, -0.02]))


def support_region(robot, q):
    region = SupportRegion(robot, [_sole(robot)], margin=0.01)
    return Case([[region], [_posture(robot)]])


def collision_avoidance(robot, q):
    return Case([[_avoidance(robot)], [_posture(robot)]])


def joint_limits(robot, q):  # every controller holds the joint limits and reversal damping
    return Case([[_posture(robot)]])


STACKS = {"relative": relative, "frame": frame, "position": position, "orientation": orientation,
          "posture": posture, "ball": ball, "com": com, "cone": cone, "half_space": half_space,
          "distance": distance, "contact": contact, "support_region": support_region,
          "collision_avoidance": collision_avoidance, "joint_velocity_limit": joint_limits,
          "joint_position_limit": joint_limits, "reversal_damping": joint_limits}
#: the limits also held as limits (above every level), beside their level form above
AS_LIMITS = {"support_region": lambda robot: SupportRegion(robot, [_sole(robot)], margin=0.01),
             "collision_avoidance": _avoidance}


@pytest.fixture(scope="module")
def q0(dual_arm):
    return dual_arm.reference_configuration()


def test_every_registered_kind_has_a_stack_here():
    missing = sorted(set(kinds()) - set(STACKS))
    assert not missing, f"kinds without a stack in {__file__}: {missing}"


@pytest.mark.parametrize("key", sorted(STACKS))
def test_a_stack_of_each_kind_runs_no_python_rows(dual_arm, q0, key):
    case = STACKS[key](dual_arm, q0)
    controller = Controller(dual_arm, case.levels, dt=0.01, constraints=case.limits, backend="compiled")
    assert controller.backend == "compiled"
    assert controller.python_parts == [], key
    controller.step(q0)
    assert Solver(dual_arm, case.levels, constraints=case.limits, backend="compiled").backend == "compiled", key


@pytest.mark.parametrize("key", sorted(AS_LIMITS))
def test_each_limit_held_above_every_level_runs_no_python_rows(dual_arm, q0, key):
    limit = AS_LIMITS[key](dual_arm)
    controller = Controller(dual_arm, [[_posture(dual_arm)]], dt=0.01, constraints=[limit], backend="compiled")
    assert controller.python_parts == [], key
    assert Solver(dual_arm, [[_posture(dual_arm)]], constraints=[limit], backend="compiled").backend == "compiled", key


@pytest.mark.parametrize("key", sorted(k for k in STACKS if k not in ("joint_velocity_limit", "joint_position_limit",
                                                                    "reversal_damping")))
def test_solve_many_sets_each_problems_target_of_each_kind(dual_arm, q0, key):
    """Each problem's target reaches the core: result i is solve's with target i set on the task
    (same seed, same start), for every kind that has a target; the others solve as one stack."""
    case = STACKS[key](dual_arm, q0)
    options = dict(constraints=case.limits, backend="compiled", max_iters=40, restarts=2)
    task, target = case.task, case.target
    if task is None:  # a kind without a target: the problems set the posture's below it
        task = case.levels[-1][0]
        target = lambda i: q0 + 0.01 * i  # noqa: E731
    targets = [target(i) for i in range(3)]
    many = solve_many(dual_arm, q0, case.levels, [{task: t} for t in targets], seed=5, **options)
    for i, value in enumerate(targets):
        task.set_target(value)
        one = reljac.ik.solve(dual_arm, q0, case.levels, seed=5 + i, **options)
        assert many[i].converged == one.converged, (key, i)
        np.testing.assert_allclose(many[i].q, one.q, rtol=0, atol=1e-9, err_msg=f"{key}: problem {i}")
    if case.task is not None and key != "posture":  # (a posture does not count for convergence: it may stay)
        assert len({tuple(np.round(r.q, 6)) for r in many}) == len(targets), key  # other targets, other q


@pytest.mark.slow
def test_the_kinds_bench_runs_every_stack_compiled():
    """`reljac bench kinds` (Talos): every row's stack runs no Python rows, and each ratio is its
    median over the median of the row it names (the bare stack; the collision level: the limit)."""
    from reljac import robots

    if robots.example_robot_data_dir() is None:
        pytest.skip("example-robot-data is not installed")
    from reljac.apps.bench_kinds import ROWS, kinds_results, kinds_text

    r = kinds_results(quick=True)
    assert [row["row"] for row in r["rows"]] == [label for label, _, _ in ROWS]
    step = {extra: row["step_s"] for (_, extra, _), row in zip(ROWS, r["rows"], strict=True)}
    for (label, _, base), row in zip(ROWS, r["rows"], strict=True):
        assert row["python_parts"] == [], label
        assert row["step_s"] > 0 and row["ratio"] == pytest.approx(row["step_s"] / step[base]), label
    assert "none" in kinds_text(r)


@pytest.mark.parametrize("backend", BACKENDS if compiled_available() else ("python",))
def test_a_limit_made_for_another_robot_is_refused(dual_arm, planar, q0, backend):
    """Each limit kind made for dual_arm, given to a controller, a solver or solve on another robot: a
    ConfigurationError naming both robots, on both backends (the compiled step crashed the process
    with a collision model of another robot's geometry; a support region read the other robot's
    frames by id)."""
    checked = set()
    limits = [make(dual_arm) for make in AS_LIMITS.values()]
    limits += [JointVelocityLimit(dual_arm), JointPositionLimit(dual_arm), ReversalDamping(dual_arm)]
    for limit in limits:
        levels = [[PostureTask(planar)]]
        for make in (lambda: Controller(planar, levels, dt=0.01, constraints=[limit], backend=backend),
                     lambda: Solver(planar, levels, constraints=[limit], backend=backend),
                     lambda: reljac.ik.solve(planar, None, levels, constraints=[limit], backend=backend)):
            with pytest.raises(ConfigurationError, match=f"limit '{limit.name}' .* was made for robot "
                                                         f"'dual_arm', not '{planar.name}'"):
                make()
        if hasattr(limit, "as_task"):  # the same as a level: its task was made for dual_arm
            with pytest.raises(TaskError, match=f"was made for robot 'dual_arm', not '{planar.name}'"):
                Controller(planar, [[limit.as_task()]], dt=0.01, backend=backend)
        checked.add(type(limit).__name__)
    assert checked >= {"CollisionAvoidance", "SupportRegion", "JointVelocityLimit", "JointPositionLimit",
                       "ReversalDamping"}, checked


def _values(target: Any) -> np.ndarray:
    return target.homogeneous if isinstance(target, pin.SE3) else np.asarray(target, dtype=float)


def test_a_rejected_target_changes_nothing_on_any_kind(dual_arm, q0):
    """A set_target that raises (here: a NaN target velocity) leaves the task as it was. An
    adversarial pass: RelativePositionTask and DistanceTask kept the new target before checking the
    velocity, the compiled step was not told, and after 100 steps the two backends' q were 0.11 and
    0.27 rad apart."""
    checked = []
    for key, stack in sorted(STACKS.items()):
        case = stack(dual_arm, q0)
        if case.task is None or "velocity" not in inspect.signature(case.task.set_target).parameters:
            continue
        task = case.task
        steps = {backend: Controller(dual_arm, case.levels, dt=0.01, constraints=case.limits, backend=backend)
                 for backend in BACKENDS}
        first = {backend: controller.step(q0) for backend, controller in steps.items()}
        target, velocity = _values(task.target), task.target_velocity
        with pytest.raises(TaskError, match="target velocity"):
            task.set_target(case.target(2), velocity=np.full(task.size, np.nan))
        np.testing.assert_array_equal(_values(task.target), target, err_msg=key)
        np.testing.assert_array_equal(task.target_velocity, velocity, err_msg=key)
        after = {backend: controller.step(first[backend]) for backend, controller in steps.items()}
        np.testing.assert_allclose(after["compiled"], after["python"], rtol=0, atol=1e-9, err_msg=key)
        checked.append(key)
    assert {"position", "distance", "relative", "frame", "orientation", "com"} <= set(checked), checked

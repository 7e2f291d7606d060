"""The compiled controller against its oracle, the Python one.

Recorded controller steps (several robots, one-step and moderate gains, saturated and damped
levels, starts outside the limits) are replayed through both hierarchy solvers; the compiled
step's system (task rows, damping, velocity box) is compared with the Python tasks' and limits';
the SE(3) logarithms are compared with Pinocchio's and with finite differences.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
from helpers import example_robot

import reljac
from reljac.ik import (
    Controller,
    FrameTask,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    compiled_available,
)
from reljac.ik.limits.base import intersect
from reljac.ik.solvers import hierarchy as H
from reljac.ik.solvers.backend import _compiled, _python
from reljac.relative import Kinematics

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")


class _Recorder:
    """Wraps a controller's solver and keeps a copy of every system it is given."""

    def __init__(self, inner, records):
        self.inner, self.records = inner, records

    def __call__(self, levels, lo, hi, C, d, policy):
        copies = [H.Level(None if L.A is None else L.A.copy(), L.b.copy(), L.identity_scale,
                          None if L.mask is None else L.mask.copy(), L.extra_damping) for L in levels]
        self.records.append((copies, lo.copy(), hi.copy(), policy))
        return self.inner(levels, lo, hi, C, d, policy)


def _middle(robot):
    return robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))


def _dual_arm_episodes(rng, n):
    robot = reljac.Robot.bundled("dual_arm")
    dt, q_mid = 0.01, _middle(robot)
    for ep in range(n):
        gain = (1 / dt, 20.0)[ep % 2]
        kin = Kinematics(robot, robot.random_configuration(rng))
        rel = RelativeFrameTask("left_tool", "right_tool", gain=gain, weight=(1.0, 0.5)[ep % 3 == 1],
                                max_speed=(None, 0.5)[ep % 4 == 1])
        rel.set_target(kin.relative_placement("left_tool", "right_tool"),
                       velocity=0.1 * rng.normal(size=6) if ep % 3 == 0 else None)
        left = FrameTask("left_tool", gain=gain)
        left.set_target(Kinematics(robot, robot.random_configuration(rng)).placement("left_tool"))
        pos = RelativePositionTask("torso", "right_tool", gain=gain)
        pos.set_target(0.3 * rng.normal(size=3))
        ori = RelativeOrientationTask("torso", "right_tool", gain=gain, max_speed=(None, (0.3, 0.2))[ep % 2])
        ori.set_target(pin.exp3(rng.normal(size=3)))
        posture = PostureTask(robot, gain=1.0, weight=0.1)
        posture.set_target(q_mid)
        levels = [[rel], [left], [posture]] if ep % 2 else [[rel, pos], [ori, left], [posture]]
        q = robot.random_configuration(rng) if ep % 4 == 0 else q_mid.copy()
        if ep % 5 == 0:  # start outside the limits
            q[3] = robot.upper_limits[3] + 0.2
        yield robot, levels, q, dt


def _hand_episodes(rng, n):
    hand = reljac.Robot.bundled("hand")
    for ep in range(n):
        pinch = RelativePositionTask(("index_tip", "middle_tip")[ep % 2], "thumb_tip", gain=100.0)
        pinch.set_target(np.zeros(3))
        posture = PostureTask(hand, gain=1.0, weight=0.01)
        posture.set_target(_middle(hand))
        yield hand, [[pinch], [posture]], hand.random_configuration(rng), 0.01


def _tree_episodes(rng, n):
    robot = reljac.Robot.bundled("tree30")
    weight = np.ones(robot.nv)
    weight[:6] = 0.0  # the floating base masked: the posture keeps its identity form
    for _ep in range(n):
        q_target = robot.random_configuration(rng)
        kin = Kinematics(robot, q_target)
        task = RelativeFrameTask("left_hand_site", "right_foot_site", gain=50.0)
        task.set_target(kin.relative_placement("left_hand_site", "right_foot_site"))
        posture = PostureTask(robot, gain=2.0, weight=weight)
        yield robot, [[task], [posture]], robot.random_configuration(rng), 0.01


def _panda_episodes(rng, n):
    robot = example_robot("panda")
    if robot is None:
        return
    hand = "panda_hand" if "panda_hand" in robot.frame_names else robot.frame_names[-1]
    for _ep in range(n):
        task = FrameTask(hand, gain=100.0)
        task.set_target(Kinematics(robot, robot.random_configuration(rng)).placement(hand))
        posture = PostureTask(robot, gain=1.0, weight=0.1)
        yield robot, [[task], [posture]], robot.random_configuration(rng), 0.01


@pytest.fixture(scope="module")
def recorded():
    """Systems the Python path solved along 1,000+ controller steps, with the robot's name."""
    rng = np.random.default_rng(2026)
    records = []
    episodes = [*_dual_arm_episodes(rng, 10), *_hand_episodes(rng, 6), *_tree_episodes(rng, 4),
                *_panda_episodes(rng, 4)]
    for robot, levels, q, dt in episodes:
        controller = Controller(robot, levels, dt=dt, backend="python")
        controller._solve = _Recorder(controller._solve, records)
        for _ in range(60):
            q = controller.step(q)
    assert len(records) >= 1000
    return records


def _well_conditioned(reports, policy) -> bool:
    """Every level has full rank and no singular damping (sigma_min >= the damping threshold)."""
    return all(r.smallest_singular_value >= policy.threshold for r in reports)


@pytest.mark.slow
def test_compiled_solver_equals_the_python_solver_on_recorded_steps(recorded):
    """Equal to 1e-9 wherever every level is well conditioned. Elsewhere a level above is
    singular or damped (sigma_min below the damping threshold): the choice of its rank, or of
    the saturation candidate with the smallest residual, is then decided by rounding, so the
    levels below it may differ; the levels down to the first damped one still agree in task
    space, and both answers stay inside the box."""
    equal = conditioned = 0
    for levels, lo, hi, policy in recorded:
        v_py, r_py = _python(levels, lo, hi, None, None, policy)
        v_c, r_c = _compiled(levels, lo, hi, None, None, policy)
        for v in (v_py, v_c):
            assert np.all(v >= lo - 1e-12) and np.all(v <= hi + 1e-12)
        if _well_conditioned(r_py, policy):
            conditioned += 1
            np.testing.assert_allclose(v_c, v_py, rtol=0, atol=1e-9)
            assert [r.saturated for r in r_c] == [r.saturated for r in r_py]
            np.testing.assert_allclose([r.scale for r in r_c], [r.scale for r in r_py], atol=1e-9)
        equal += np.abs(v_c - v_py).max() <= 1e-9
        for level, report in zip(levels, r_py, strict=True):
            scale = 1.0 + np.linalg.norm(level.b)
            assert np.linalg.norm(level.times(v_c) - level.times(v_py)) <= 1e-6 * scale
            if report.smallest_singular_value < policy.threshold:
                break  # below a damped or singular level, rounding may choose differently
    assert conditioned >= 200, conditioned
    assert equal >= 0.95 * len(recorded), (equal, len(recorded))


def _python_system(controller, kin):
    levels = [controller._level(tasks, kin) for tasks in controller.levels]
    lo, hi, *_ = intersect([limit.constraint(kin, controller.dt) for limit in controller.limits], controller.robot.nv)
    return levels, lo, hi


def _compiled_system(controller, kin):
    return controller._step.system(kin.q)


@pytest.mark.parametrize("episodes", [_dual_arm_episodes, _hand_episodes, _tree_episodes])
@pytest.mark.slow
def test_compiled_step_builds_the_system_of_the_python_tasks_and_limits(episodes):
    """Task rows, right-hand sides, error damping and the velocity box (reversal damping fed
    the same commanded velocities) equal the Python classes' along whole runs (both on Pinocchio's
    log6 and Jlog6)."""
    rng = np.random.default_rng(11)
    for robot, levels, q, dt in episodes(rng, 4):
        compiled = Controller(robot, levels, dt=dt, backend="compiled")
        oracle = Controller(robot, levels, dt=dt, backend="python")
        assert compiled.compiled_step and not oracle.compiled_step
        for _ in range(40):
            kin = Kinematics(robot, q)
            got, lo_c, hi_c = _compiled_system(compiled, kin)
            want, lo_p, hi_p = _python_system(oracle, kin)
            np.testing.assert_allclose(lo_c, lo_p, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(hi_c, hi_p, rtol=1e-12, atol=1e-12)
            for (A, b, _c, _mask, extra, *_bounds), level in zip(got, want, strict=True):
                assert (A is None) == (level.A is None)
                scale = 1.0 + np.abs(level.b).max()
                if A is not None:
                    np.testing.assert_allclose(A, level.A, rtol=0, atol=1e-9 * (1 + np.abs(level.A).max()))
                np.testing.assert_allclose(b, level.b, rtol=0, atol=1e-9 * scale)
                assert extra == pytest.approx(level.extra_damping, rel=1e-10, abs=1e-14)
            q_next = compiled.step(q)
            for limit in oracle.limits:  # the oracle's limits see the velocity the compiled step commanded
                limit.observe(compiled.last_velocity)
            q = q_next


def _run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


@pytest.mark.slow
def test_without_the_compiled_core_reljac_runs_on_the_python_solver_and_says_so_once():
    code = (
        "import sys; sys.modules['reljac.ik._core'] = None\n"
        "import reljac\nfrom reljac.ik import Controller, PostureTask, compiled_available\n"
        "robot = reljac.Robot.bundled('planar_2link')\n"
        "a = Controller(robot, [[PostureTask(robot)]], dt=0.01); b = Controller(robot, [[PostureTask(robot)]], dt=0.01)\n"
        "print(compiled_available(), a.backend, b.backend, a.step(robot.neutral()).tolist())\n"
    )
    out = _run(code, RELJAC_BACKEND="")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:3] == ["False", "python", "python"]
    assert out.stderr.count("running on the Python solver") == 1, out.stderr


def test_backend_choice(monkeypatch, capfd):
    robot = reljac.Robot.bundled("planar_2link")
    assert Controller(robot, [[PostureTask(robot)]], dt=0.01, backend="python").backend == "python"
    assert Controller(robot, [[PostureTask(robot)]], dt=0.01, backend="compiled").compiled_step
    with pytest.raises(reljac.ConfigurationError, match="backend must be one of"):
        Controller(robot, [[PostureTask(robot)]], dt=0.01, backend="fortran")
    # RELJAC_BACKEND is read each time a backend is picked, so it can be set in this process
    monkeypatch.setenv("RELJAC_BACKEND", "python")
    assert reljac.ik.default_backend() == "python"
    assert Controller(robot, [[PostureTask(robot)]], dt=0.01).backend == "python"
    monkeypatch.setenv("RELJAC_BACKEND", "gpu")
    with pytest.raises(reljac.ConfigurationError, match="RELJAC_BACKEND must be one of"):
        reljac.ik.default_backend()
    assert capfd.readouterr().err == ""


@pytest.mark.slow
def test_reljac_info_names_the_ik_solver(monkeypatch, capsys):
    monkeypatch.delenv("RELJAC_BACKEND", raising=False)  # the default (the suite may run under RELJAC_BACKEND=python)
    out = _run("from reljac.apps.cli import main; main(['info', '--list'])")
    assert "IK solver: compiled" in out.stdout
    from reljac.apps.cli import main

    monkeypatch.setenv("RELJAC_BACKEND", "python")
    assert main(["info", "planar_2link"]) == 0
    assert "IK solver: python (the compiled core is built)" in capsys.readouterr().out

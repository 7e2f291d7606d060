"""Tasks with bounds in the compiled controller step (issue 29): the step builds the bounded
levels the Python controller builds (rows, right-hand sides, the rates' intervals, error damping)
along whole runs, its velocity is the hierarchy solver's on them, a closed loop gives the same v
per step on both backends, the bounded levels' reports (active rows by name, margins, held rows,
active-set changes) reach the controller from the compiled step, and ``set_bounds`` on a task a
compiled step holds reaches it before the next step (and clearing the bounds gives back the
equality level).

The oracle is the Python controller (its ``_level``: Task.rows / Task.bound_rates) and the
Python hierarchy solver (reljac.ik.solvers.inequality). Where the two solvers part on the same system
(tests/test_inequality_compiled.py is their comparison), the step is checked against the compiled
solver on the Python system instead: the plumbing is then exact whatever the solvers do.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from reljac.ik import Controller, PostureTask, RelativePositionTask, compiled_available
from reljac.ik.limits.base import intersect
from reljac.ik.solvers.backend import _compiled
from reljac.ik.tasks import TaskTerms
from reljac.ik.tasks.ball import BallTask
from reljac.relative import Kinematics

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")

TOL = 1e-9  # v on both backends, per step [rad/s]


def tip(planar, q):
    return Kinematics(planar, q).relative_placement("base_link", "tip").translation


def planar_box(planar, q):
    """A box the tip starts outside of (x 0.25 beyond, y 0.1), over a centring band."""
    box = RelativePositionTask("base_link", "tip", gain=5.0, weight=[1, 1, 0])
    box.set_target(tip(planar, q) + np.array([-0.25, 0.1, 0.0]))
    box.set_bounds(-0.05, 0.05)
    band = PostureTask(planar, gain=5.0)
    band.set_centring_band(0.6)
    return [[box], [band]]


def planar_ball(planar, q):
    """A ball (compiled: BallTask's description holds its inner task's) over a weighted posture."""
    inner = RelativePositionTask("base_link", "tip", weight=[1, 1, 0])
    inner.set_target(tip(planar, q) + np.array([0.2, -0.1, 0.0]))
    return [[BallTask(inner, 0.05, gain=2.0)], [PostureTask(planar, gain=1.0, weight=0.5)]]


def dual_arm_box(robot, q0):
    """dual_arm's protocol levels (gain 5) with the relative pose kept in a +-2 cm / +-0.05 rad box
    and the posture a centring band (a 14-row identity level with bounds)."""
    from reljac.apps.bench_common import dual_arm_levels

    levels = dual_arm_levels(robot, q0 + 0.3, 5.0, q0)
    levels[0][0].set_bounds(np.r_[np.full(3, -0.02), np.full(3, -0.05)], np.r_[np.full(3, 0.02), np.full(3, 0.05)])
    levels[2][0].set_centring_band(0.6)
    return levels


def closed_loop(robot, make, q0, steps):
    """(v per step, last reports) of each backend, each stepping its own q from q0."""
    out = {}
    for backend in ("python", "compiled"):
        controller = Controller(robot, make(robot, q0), dt=0.01, backend=backend)
        assert controller.compiled_step == (backend == "compiled")
        q, vs = q0.copy(), []
        for _ in range(steps):
            q = controller.step(q)
            vs.append(controller.last_velocity)
        out[backend] = np.array(vs), controller.last_reports
    return out


@pytest.mark.parametrize("which", ["box", "ball"])
def test_a_closed_loop_gives_the_same_v_on_both_backends(planar, which):
    make = planar_box if which == "box" else planar_ball
    out = closed_loop(planar, make, np.array([0.2, 0.4]), 200)
    (v_py, reports_py), (v_c, reports_c) = out["python"], out["compiled"]
    np.testing.assert_allclose(v_c, v_py, rtol=0, atol=TOL)
    assert np.abs(v_py[0]).max() > 0.1  # the bounds asked for motion
    for py, c in zip(reports_py, reports_c, strict=True):
        assert c.active_rows == py.active_rows and c.held == py.held and c.changes == py.changes
        assert c.capped == py.capped and c.met == py.met
        np.testing.assert_allclose(c.margins, py.margins, rtol=0, atol=1e-9)
        assert c.smallest_singular_value == pytest.approx(py.smallest_singular_value, rel=1e-9)
        assert c.damping == pytest.approx(py.damping, rel=1e-9, abs=1e-15)


def test_reports_name_the_active_rows_from_the_compiled_step(planar):
    """Outside its box in x and y, both rows of the box are active on the first step, by name."""
    q = np.array([0.2, 0.4])
    controller = Controller(planar, planar_box(planar, q), dt=0.01, backend="compiled")
    controller.step(q)
    box, band = controller.last_reports
    assert box.active_rows == ["position of tip in base_link[0]", "position of tip in base_link[1]"]
    assert box.margins is not None and (box.margins <= 1e-9).all() and box.changes >= 1
    assert band.margins is not None and band.active_rows == []  # inside the band: nothing active


def test_dual_arm_closed_loop_gives_the_same_v_on_both_backends(dual_arm):
    from reljac.apps.bench_common import middle

    out = closed_loop(dual_arm, dual_arm_box, middle(dual_arm), 100)
    np.testing.assert_allclose(out["compiled"][0], out["python"][0], rtol=0, atol=TOL)
    assert any(r.active_rows for r in out["python"][1]) or np.abs(out["python"][0]).max() > 0.1


def _python_system(controller, kin):
    levels = [controller._level(tasks, kin) for tasks in controller.levels]
    lo, hi, C, d, _ = intersect([limit.constraint(kin, controller.dt) for limit in controller.limits],
                                controller.robot.nv)
    return levels, lo, hi, C, d


def assert_same_system(compiled, oracle, q):
    """The compiled step's levels at q (A, b, bounds, error damping) and box equal the Python
    controller's; returns the Python system."""
    got, lo_c, hi_c = compiled._step.system(q)
    levels, lo, hi, C, d = _python_system(oracle, Kinematics(oracle.robot, q))
    np.testing.assert_allclose(lo_c, lo, rtol=0, atol=1e-12)
    np.testing.assert_allclose(hi_c, hi, rtol=0, atol=1e-12)
    for (A, b, _c, _mask, extra, lower, upper), level in zip(got, levels, strict=True):
        assert (A is None) == (level.A is None) and (lower is None) == (not level.bounded)
        scale = 1e-12 * (1.0 + np.abs(level.b).max())
        if A is not None:
            np.testing.assert_allclose(A, level.A, rtol=0, atol=1e-12 * (1 + np.abs(level.A).max()))
        np.testing.assert_allclose(b, level.b, rtol=0, atol=scale)
        if lower is not None:  # the same infinities, the same finite bounds
            np.testing.assert_allclose(lower, level.lower, rtol=0, atol=scale)
            np.testing.assert_allclose(upper, level.upper, rtol=0, atol=scale)
        assert extra == pytest.approx(level.extra_damping, rel=1e-10, abs=1e-14)
    return levels, lo, hi, C, d


def _talos_stack():
    """benchmarks/inequality_measure.py's Talos stack: feet > relative pose of the grippers in a box
    (5 cm off its target) > lead gripper and CoM > posture with a centring band, support region."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from step_measure import talos_whole_body

    robot, (feet, (box,), lead_com, _), q0, _frame, limits = talos_whole_body("talos")
    target = box.target
    box.set_target(pin.SE3(target.rotation, target.translation + np.array([0.05, 0.0, 0.0])))
    box.set_bounds(np.r_[np.full(3, -0.03), np.full(3, -0.1)], np.r_[np.full(3, 0.03), np.full(3, 0.1)])
    posture = PostureTask(robot, gain=1.0, weight=np.r_[np.zeros(6), np.full(robot.nv - 6, 0.1)])
    posture.set_centring_band(0.5)
    return robot, [feet, [box], lead_com, [posture]], q0, limits


@pytest.mark.parametrize("stack", ["dual_arm", "talos"])
@pytest.mark.slow
def test_the_step_builds_the_python_bounded_system_and_solves_it(stack, dual_arm):
    """Along a run (the Python controller steps), the compiled step's bounded levels and box are
    the Python ones; on dual_arm its v is the compiled solver's on the Python system too. On Talos
    rounding decides the solve at some steps (a relative change of 1e-14 in the rows moves the
    compiled solver's v by up to 1 rad/s there: the band level's joint-bound rows with almost no
    freedom left, benchmarks/inequality_measure.py), so there the system alone is compared (the
    solvers' agreement is tests/test_inequality_compiled.py's)."""
    if stack == "talos":
        from reljac.robots import example_robot_data_dir

        if example_robot_data_dir() is None:
            pytest.skip("needs example-robot-data")
        robot, levels, q, limits = _talos_stack()
    else:
        from reljac.apps.bench_common import middle

        robot, q, limits = dual_arm, middle(dual_arm), []
        levels = dual_arm_box(robot, q)
    compiled = Controller(robot, levels, dt=0.01, constraints=limits, backend="compiled")
    oracle = Controller(robot, levels, dt=0.01, constraints=limits, backend="python")
    assert not compiled._step.has_python_parts
    bounded = 0
    for _ in range(25):
        levels_py, lo, hi, C, d = assert_same_system(compiled, oracle, q)
        bounded += sum(level.bounded for level in levels_py)
        if stack == "dual_arm":
            v = compiled.velocity(q)
            v_solver, _ = _compiled(levels_py, lo, hi, C, d, oracle.damping)
            # (the rows agree to rounding, ~1e-15, which the solve scales: relative to |v|)
            np.testing.assert_allclose(v, v_solver, rtol=0, atol=1e-9 * (1.0 + np.abs(v_solver).max()))
        q = oracle.step(q)
        compiled._step.core.reset()  # reversal damping: both without a last velocity (the oracle's too)
        for limit in oracle.limits:
            limit.reset()
    assert bounded >= 2 * 25


def test_set_bounds_on_a_held_task_reaches_the_compiled_step(planar):
    """Bounds set, changed and cleared between steps on a task a compiled step holds: each next
    step is the Python controller's (the same changes made to its own task), and differs from
    the step without them."""
    q = np.array([0.2, 0.4])
    made = {}
    for backend in ("python", "compiled"):
        task = RelativePositionTask("base_link", "tip", gain=2.0, weight=[1, 1, 0])
        task.set_target(tip(planar, q) + np.array([0.1, -0.02, 0.0]))
        posture = PostureTask(planar, gain=1.0, weight=0.1)
        posture.set_target(q)
        made[backend] = Controller(planar, [[task], [posture]], dt=0.01, backend=backend), task
    assert made["compiled"][0].compiled_step
    steps = {backend: [] for backend in made}
    changes = [lambda t: None, lambda t: t.set_bounds(-0.05, 0.05), lambda t: t.set_bounds(-0.2, 0.2),
               lambda t: t.set_bounds([-0.05, -np.inf, -1], [np.inf, 0.01, 1]), lambda t: t.set_bounds()]
    for change in changes:
        for backend, (controller, task) in made.items():
            change(task)
            steps[backend].append(controller.velocity(q))
    py, c = np.array(steps["python"]), np.array(steps["compiled"])
    np.testing.assert_allclose(c, py, rtol=0, atol=TOL)
    assert np.abs(py[1] - py[0]).max() > 1e-3  # the box changed the step
    np.testing.assert_allclose(py[2], 0.0, atol=1e-12)  # inside the wide box: nothing asked (posture at target)
    np.testing.assert_allclose(py[4], py[0], rtol=0, atol=1e-15)  # cleared: the target again
    report = made["compiled"][0].last_reports[0]  # after clearing: an equality report again
    assert report.active == [] and report.margins is None and report.active_rows == []


def test_a_python_task_with_bounds_passes_its_intervals_to_the_compiled_step(planar):
    """A custom task (rows from Python every step) with bounds: its rows' intervals go with its
    rows; the same v per step as the Python backend."""

    class Doubled(RelativePositionTask):
        def compute(self, kin):
            e, J, ff = super().compute(kin)
            return TaskTerms(2.0 * e, 2.0 * J, 2.0 * ff)

    def make(robot, q):
        task = Doubled("base_link", "tip", gain=3.0, weight=[1, 1, 0])
        task.set_target(tip(robot, q) + np.array([0.15, 0.05, 0.0]))
        task.set_bounds(-0.04, 0.04)
        return [[task], [PostureTask(robot, gain=1.0, weight=0.2)]]

    out = closed_loop(planar, make, np.array([0.3, -0.5]), 120)
    np.testing.assert_allclose(out["compiled"][0], out["python"][0], rtol=0, atol=TOL)
    assert out["python"][1][0].margins is not None


def test_the_bound_solver_binding_returns_named_reports():
    """_core.solve_hierarchy's reports are the core's LevelReport objects, read by name."""
    from reljac.ik.solvers.backend import core

    A = np.eye(2)
    v, (report,) = core().solve_hierarchy([A], [np.zeros(2)], [0.0], [None], [0.0], -np.ones(2), np.ones(2),
                                          np.zeros((0, 2)), np.zeros(0), 0.0, 0.0,
                                          lowers=[np.array([0.5, -np.inf])], uppers=[np.array([np.inf, 0.2])])
    np.testing.assert_allclose(v, [0.5, 0.0], atol=1e-15)  # row 0 on its lower bound, row 1 free inside
    assert report.active == [0] and report.met and not report.capped and report.held == []
    np.testing.assert_allclose(report.margins, [0.0, 0.2], atol=1e-15)


def test_a_ball_runs_in_cpp_and_hears_of_its_inner_task(planar):
    """BallTask on a position task: compiled (no Python rows); its radius and its inner task's
    target changed between steps reach the step (the same v as the Python backend's, which reads
    them every step). On a posture it gives its rows from Python, with the same v."""
    q = np.array([0.2, 0.4])
    made = {}
    for backend in ("python", "compiled"):
        inner = RelativePositionTask("base_link", "tip", weight=[1, 1, 0])
        inner.set_target(tip(planar, q) + np.array([0.2, -0.1, 0.0]))
        ball = BallTask(inner, 0.05, gain=2.0)
        posture = PostureTask(planar, gain=1.0, weight=0.5)
        made[backend] = Controller(planar, [[ball], [posture]], dt=0.01, backend=backend), inner, ball
    assert not made["compiled"][0]._step.has_python_parts
    changes = [lambda i, b: None, lambda i, b: i.set_target(tip(planar, q) + np.array([-0.1, 0.3, 0.0])),
               lambda i, b: setattr(b, "radius", 0.2), lambda i, b: i.set_weight([1, 0, 0])]
    steps: dict[str, list] = {backend: [] for backend in made}
    for change in changes:
        for backend, (controller, inner, ball) in made.items():
            change(inner, ball)
            steps[backend].append(controller.velocity(q))
    py, c = np.array(steps["python"]), np.array(steps["compiled"])
    np.testing.assert_allclose(c, py, rtol=0, atol=TOL)
    assert min(np.abs(py[k + 1] - py[k]).max() for k in range(3)) > 1e-3  # each change changed the step

    def on_posture(robot, q0):
        inner = PostureTask(robot, gain=1.0)
        inner.set_target(q0 + np.array([0.3, -0.2]))
        return [[BallTask(inner, 0.1, gain=3.0)]]

    controller = Controller(planar, on_posture(planar, q), dt=0.01, backend="compiled")
    assert controller.python_parts == []  # the ball of a posture: compiled too (its posture's rows dense)
    out = closed_loop(planar, on_posture, q, 60)
    np.testing.assert_allclose(out["compiled"][0], out["python"][0], rtol=0, atol=TOL)


def test_a_posture_whose_weights_change_between_steps_gives_the_same_v_on_both_backends(dual_arm):
    """The compiled solver writes an identity level's explicit rows again only when its scale or
    mask changed since the last step (issue 41): a posture (under a relative pose kept in a box)
    whose weights change every ten steps (uniform, joints masked out, another scale, other joints
    masked out) gives the same v on both backends at every step. (A band would not show stale
    rows: its masked rows are open.)"""
    from reljac.apps.bench_common import middle

    q0 = middle(dual_arm)
    first, last = np.ones(dual_arm.nv), np.ones(dual_arm.nv)
    first[:4] = 0.0
    last[-5:] = 0.0
    weights = [1.0, first, 2.0, last, 0.5]
    out = {}
    for backend in ("python", "compiled"):
        levels = dual_arm_box(dual_arm, q0)
        posture = levels[2][0]
        posture.set_bounds()  # (dual_arm_box made it a band)
        controller = Controller(dual_arm, levels, dt=0.01, backend=backend)
        q, vs = q0.copy(), []
        for k in range(10 * len(weights)):
            posture.weight = weights[k // 10]
            q = controller.step(q)
            vs.append(controller.last_velocity)
        out[backend] = np.array(vs)
    np.testing.assert_allclose(out["compiled"], out["python"], rtol=0, atol=TOL)
    assert np.abs(out["python"][10:20, :4]).max() > 1e-3  # the masked joints still move (held by nothing else)


def test_a_box_whose_finite_bounds_change_between_steps_gives_the_same_v_on_both_backends():
    """The compiled solver writes the box's hard rows again only when the set of its finite bounds
    changed since the last step (issue 41). Continuous joints (no position limit) without a
    velocity limit: the box is open until the anti-chatter limit caps the joints that reversed; a
    band about a posture target that swings every 15 steps.
    Both backends take the same v at every step (the rows kept from the first step instead:
    velocities 1.8 rad/s apart)."""
    from helpers import example_robot

    robot = example_robot("double_pendulum_continuous")
    if robot is None:
        pytest.skip("needs example-robot-data")
    q0 = np.array([1.0, 0.0, 1.0, 0.0])
    out, patterns = {}, set()
    for backend in ("python", "compiled"):
        posture = PostureTask(robot, gain=5.0)
        controller = Controller(robot, [[posture]], dt=0.01, velocity_limits=np.full(2, np.inf), backend=backend)
        reversal = controller.limits[-1]
        assert type(reversal).__name__ == "ReversalDamping"
        q, vs = q0.copy(), []
        for k in range(120):
            side = 0.5 if (k // 15) % 2 == 0 else -0.5
            posture.set_target(np.array([np.cos(side), np.sin(side), np.cos(-side), np.sin(-side)]))
            posture.set_bounds(-0.05, 0.05)
            q = controller.step(q)
            vs.append(controller.last_velocity)
            patterns.add(tuple(np.isfinite(reversal.cap)))
        out[backend] = np.array(vs)
    assert {(False, False), (True, True)} <= patterns  # the box open at some steps, capped at others
    np.testing.assert_allclose(out["compiled"], out["python"], rtol=0, atol=TOL)

"""Tasks with bounds instead of a target (issue 29): a RelativePositionTask in a box, a ball
(BallTask), a joint-centring band on PostureTask; their rows pinned on the two-link planar arm,
the ball's Jacobian against finite differences, and the controller: it runs them on either
backend (the compiled step takes them: tests/test_bounded_compiled_step.py compares the two) and
names the active rows."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from reljac.exceptions import TaskError
from reljac.ik import Controller, PostureTask, RelativePositionTask, compiled_available
from reljac.ik.solvers.backend import default_backend
from reljac.ik.tasks.ball import BallTask
from reljac.relative import Kinematics

Q = np.array([0.3, 0.5])


def tip(planar, q):
    return Kinematics(planar, q).relative_placement("base_link", "tip").translation


def test_box_rows_are_the_rates_back_to_the_bounds(planar):
    """e = p - target; bounds [-0.1, 0.1] per axis, gain 2: inside (y: e = 0.05) the rates may
    be anything in [2 (-0.1 - 0.05), 2 (0.1 - 0.05)] = [-0.3, 0.1]; outside (x: e = -0.3) both
    bounds shift by the way back, 2 * 0.2 = 0.4: [0.4, 0.8]; z (weight 0) is dropped."""
    p = tip(planar, Q)
    task = RelativePositionTask("base_link", "tip", gain=2.0, weight=[1, 1, 0])
    task.set_target(p + np.array([0.3, -0.05, 0.0]))
    task.set_bounds(-0.1, 0.1)
    rows = task.rows(Kinematics(planar, Q))
    np.testing.assert_allclose(rows.lower, [0.4, -0.3], atol=1e-12)
    np.testing.assert_allclose(rows.upper, [0.8, 0.1], atol=1e-12)
    np.testing.assert_allclose(rows.feedback, [-0.4, 0.0], atol=1e-12)  # only the way back counts
    np.testing.assert_allclose(rows.A, Kinematics(planar, Q).relative_jacobian("base_link", "tip")[:2], atol=1e-15)


def test_a_box_the_arm_is_inside_leaves_it_to_the_level_below(planar):
    """The tip inside its box with margin: the box costs nothing, the posture below is met
    exactly (v = -gain (q - q_target)), as if the box were not there."""
    box = RelativePositionTask("base_link", "tip", weight=[1, 1, 0])
    box.set_target(tip(planar, Q))
    box.set_bounds(-0.5, 0.5)
    posture = PostureTask(planar, gain=1.0)
    posture.set_target(Q + np.array([0.02, -0.01]))
    controller = Controller(planar, [[box], [posture]], dt=0.01, backend="python", anti_chatter=False)
    v = controller.velocity(Q)
    np.testing.assert_allclose(v, [0.02, -0.01], atol=1e-12)
    first, second = controller.last_reports
    assert first.met and first.active_rows == [] and second.met


def test_outside_its_box_the_tip_comes_back_at_the_gain(planar):
    """x 0.3 beyond the box and y inside: with two joints the rows are solved exactly, x's
    rate on its bound 2 * 0.2 = 0.4 (the nearest rate of its interval), y's free inside its
    interval: the least-norm v is the one with J_y v = 0 when 0 is inside [-0.2, 0.2]."""
    p = tip(planar, Q)
    task = RelativePositionTask("base_link", "tip", gain=2.0, weight=[1, 1, 0])
    task.set_target(p + np.array([0.3, 0.0, 0.0]))
    task.set_bounds(-0.1, 0.1)
    controller = Controller(planar, [[task]], dt=0.01, backend="python", anti_chatter=False)
    v = controller.velocity(Q)
    J = Kinematics(planar, Q).relative_jacobian("base_link", "tip")[:2]
    rate = J @ v
    assert rate[0] == pytest.approx(0.4, abs=1e-9)
    assert -0.2 - 1e-9 <= rate[1] <= 0.2 + 1e-9
    report = controller.last_reports[0]
    assert report.met and "position of tip in base_link[0]" in report.active_rows


def test_ball_task_jacobian_matches_finite_differences(planar):
    inner = RelativePositionTask("base_link", "tip")
    inner.set_target(tip(planar, Q) + np.array([0.2, -0.1, 0.0]))
    ball = BallTask(inner, 0.05)
    e, J, _ = ball.compute(Kinematics(planar, Q))
    assert e[0] == pytest.approx(np.hypot(0.2, 0.1), abs=1e-12)
    eps = 1e-7
    for j in range(2):
        dq = np.zeros(2)
        dq[j] = eps
        plus = ball.compute(Kinematics(planar, pin.integrate(planar.model, Q, dq)))[0][0]
        minus = ball.compute(Kinematics(planar, pin.integrate(planar.model, Q, -dq)))[0][0]
        assert J[0, j] == pytest.approx((plus - minus) / (2 * eps), abs=1e-6)


def test_ball_task_drives_the_norm_back_at_its_gain(planar):
    """|e| = 0.2236 > radius 0.05, gain 2: d|e|/dt = 2 (0.05 - 0.2236) exactly (one row, two joints)."""
    inner = RelativePositionTask("base_link", "tip")
    inner.set_target(tip(planar, Q) + np.array([0.2, -0.1, 0.0]))
    ball = BallTask(inner, 0.05, gain=2.0)
    controller = Controller(planar, [[ball]], dt=0.01, backend="python", anti_chatter=False)
    v = controller.velocity(Q)
    _, J, _ = ball.compute(Kinematics(planar, Q))
    assert (J @ v)[0] == pytest.approx(2.0 * (0.05 - np.hypot(0.2, 0.1)), abs=1e-9)
    assert controller.last_reports[0].active_rows == ["ball of position of tip in base_link[0]"]
    ball.radius = 1.0  # now inside with margin: nothing asked
    np.testing.assert_allclose(controller.velocity(Q), 0.0, atol=1e-15)


def test_posture_centring_band(planar):
    """Limits +-3.1: the band's centre is 0, its half-width 0.5 * 3.1 = 1.55. A joint at 2.0
    comes back at the gain to 1.55 (v = -1 * 0.45); one at 0.3 is free (v = 0)."""
    band = PostureTask(planar, gain=1.0)
    band.set_centring_band(0.5)
    np.testing.assert_allclose(band.target, [0.0, 0.0])
    np.testing.assert_allclose(band.bounds[1], [1.55, 1.55])
    controller = Controller(planar, [[band]], dt=0.01, backend="python", anti_chatter=False)
    v = controller.velocity(np.array([2.0, 0.3]))
    np.testing.assert_allclose(v, [-0.45, 0.0], atol=1e-12)
    assert controller.last_reports[0].active_rows == ["posture[0]"]
    with pytest.raises(TaskError, match=r"must be in \[0, 1\]"):
        band.set_centring_band(1.5)


@pytest.mark.skipif(not compiled_available(), reason="compiled core not built")
def test_bounded_tasks_run_on_the_compiled_step_without_a_note(planar):
    task = RelativePositionTask("base_link", "tip")
    task.set_target(tip(planar, Q))
    task.set_bounds(-0.1, 0.1)
    # the default backend too, unless RELJAC_BACKEND=python chose the Python solver
    for backend in (None, "compiled") if default_backend() == "compiled" else ("compiled",):
        controller = Controller(planar, [[task]], dt=0.01, backend=backend)
        assert controller.backend == "compiled" and controller.compiled_step and controller.backend_note == ""
        assert controller.python_parts == []  # the box's rows are computed in C++


@pytest.mark.parametrize("lower, upper, match", [
    (0.2, 0.1, "lower bound 0.2 above upper bound 0.1"),
    ([np.nan, 0, 0], None, "lower bound of task"),
    ("wide", None, "lower bound of task"),
    ([0, 0], None, "a number or 3 numbers"),
])
def test_bad_bounds_are_named(lower, upper, match):
    task = RelativePositionTask("base_link", "tip")
    with pytest.raises(TaskError, match=match):
        task.set_bounds(lower, upper)
    assert task.bounds is None


def test_clearing_the_bounds_gives_back_the_target(planar):
    task = RelativePositionTask("base_link", "tip")
    task.set_target(tip(planar, Q))
    task.set_bounds(-0.1, 0.1)
    task.set_bounds()
    assert task.bounds is None and task.rows(Kinematics(planar, Q)).lower is None


def test_closed_loop_the_tip_enters_its_box_and_rests_there_while_the_band_keeps_the_joints(planar):
    """Stepping from outside the box (e = (0.25, -0.1), box +-0.05): x comes back at the task's
    gain to its bound 0.05 (a target would take it to the centre, 0), y ends anywhere inside;
    then the arm rests (the band below is met, nothing asks for motion), and no joint leaves
    the centring band the posture level keeps."""
    q = np.array([0.2, 0.4])
    box = RelativePositionTask("base_link", "tip", gain=5.0, weight=[1, 1, 0])
    box.set_target(tip(planar, q) + np.array([-0.25, 0.1, 0.0]))
    box.set_bounds(-0.05, 0.05)
    band = PostureTask(planar, gain=5.0)
    band.set_centring_band(0.6)
    controller = Controller(planar, [[box], [band]], dt=0.01)
    for _ in range(300):
        q = controller.step(q)
    e = tip(planar, q) - box.target
    assert e[0] == pytest.approx(0.05, abs=1e-5)  # x came back to its bound, not to the centre
    assert abs(e[1]) <= 0.05 + 1e-6  # y inside: free (the x row's least-norm motion moves it)
    assert (np.abs(q) <= 0.6 * 3.1 + 1e-6).all()
    q_next = controller.step(q)
    assert np.abs(q_next - q).max() < 1e-6  # at rest inside


@pytest.mark.skipif(not compiled_available(), reason="compiled core not built")
def test_a_dropped_compiled_controller_no_longer_holds_the_task(planar):
    task = RelativePositionTask("base_link", "tip")
    task.set_target(tip(planar, Q))
    Controller(planar, [[task]], dt=0.01, backend="compiled")  # dropped at once (its step and it form a cycle)
    task.set_bounds(-0.1, 0.1)
    assert task.bounds is not None


@pytest.mark.parametrize("backend", ["python"] + (["compiled"] if compiled_available() else []))
def test_on_bound_lists_the_rows_whose_rates_end_on_their_bounds(planar, backend):
    """A box (+-0.1 m about the tip, so every rate may be in [-0.2, 0.2]) at level 0 and a level
    below pulling the tip 1 m along x: x's rate ends on its bound, held there by the pull (the
    row is slack at level 0's own solution, so not in ``active``). on_bound is read against the
    rates J v themselves."""
    p = tip(planar, Q)
    box = RelativePositionTask("base_link", "tip", gain=2.0, weight=[1, 1, 0], name="box")
    box.set_target(p)
    box.set_bounds(-0.1, 0.1)
    pull = RelativePositionTask("base_link", "tip", gain=1.0, weight=[1, 0, 0], name="pull")
    pull.set_target(p + np.array([1.0, 0.0, 0.0]))
    controller = Controller(planar, [[box], [pull]], dt=0.01, backend=backend, anti_chatter=False)
    v = controller.velocity(Q)
    rate = Kinematics(planar, Q).relative_jacobian("base_link", "tip")[:2] @ v
    on = [i for i in range(2) if abs(abs(rate[i]) - 0.2) < 1e-9]
    first = controller.last_reports[0]
    assert 0 in on and first.on_bound == on and first.active == []
    assert first.on_bound_rows == [f"box[{i}]" for i in on]

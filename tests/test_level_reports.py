"""A level the solver could not meet says why: the joint bound, the constraint row or the lack of
freedom that limited its scale (LevelReport.limit_kind / limit_index, and the controller's
``limited_by`` name), on both solvers, with hand-solved cases and the Allegro stall of issue 18."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from reljac import Robot
from reljac.ik import Controller, PostureTask, RelativePositionTask
from reljac.ik.solvers.backend import compiled_available, solver
from reljac.ik.solvers.hierarchy import DampingPolicy, Level

SOLVERS = ["python", pytest.param("compiled", marks=pytest.mark.skipif(not compiled_available(),
                                                                       reason="compiled core not built"))]


@pytest.mark.parametrize("backend", SOLVERS)
def test_a_joint_on_its_bound_scales_a_level_to_zero_and_is_named(backend):
    # the level wants joint 0 up; joint 0 sits on its upper bound and joint 1 cannot help
    level = Level(np.array([[1.0, 0.0]]), np.array([1.0]))
    v, (report,) = solver(backend)([level], np.array([-1.0, -1.0]), np.array([0.0, 1.0]), None, None,
                                   DampingPolicy())
    np.testing.assert_array_equal(v, [0.0, 0.0])
    assert report.scale == 0.0 and not report.met
    assert (report.limit_kind, report.limit_index) == (0, 0)


@pytest.mark.parametrize("backend", SOLVERS)
def test_a_constraint_row_that_scales_a_level_is_named(backend):
    # v0 + v1 <= 0.5 while the level asks v = (1, 1): scaled to s = 0.25 by the row
    level = Level(np.eye(2), np.array([1.0, 1.0]))
    C, d = np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([1.0, 0.5])
    v, (report,) = solver(backend)([level], np.full(2, -5.0), np.full(2, 5.0), C, d, DampingPolicy())
    assert (report.limit_kind, report.limit_index) == (1, 1)
    assert v.sum() == pytest.approx(0.5)


@pytest.mark.parametrize("backend", SOLVERS)
def test_no_freedom_left_and_nothing_limiting(backend):
    levels = [Level(np.eye(2), np.array([0.1, 0.2])), Level(np.array([[1.0, 1.0]]), np.array([5.0])),
              Level(np.array([[1.0, 1.0]]), np.array([0.3]))]
    _, reports = solver(backend)(levels, np.full(2, -1.0), np.full(2, 1.0), None, None, DampingPolicy())
    assert (reports[0].limit_kind, reports[0].scale) == (-1, 1.0)  # met, nothing limited it
    assert reports[1].limit_kind == 2 and not reports[1].met  # the first level took both joints
    assert reports[2].limit_kind == -1 and reports[2].met  # 0.1 + 0.2 = 0.3: met without freedom


@pytest.mark.parametrize("backend", SOLVERS)
@pytest.mark.slow
def test_the_allegro_pinch_from_neutral_names_the_joint_that_stalls_it(backend):
    robot = Robot.load("allegro_right_hand")
    q = pin.neutral(robot.model)  # the thumb's rotation joint starts below its lower limit
    pinch = RelativePositionTask("link_3.0_tip", "link_15.0_tip", gain=15.0)
    pinch.set_target(np.zeros(3))
    controller = Controller(robot, [[pinch], [PostureTask(robot, gain=1.0, weight=0.1)]], dt=0.01,
                            backend=backend)
    stalled = 0
    for _ in range(100):
        q_before = q
        q = controller.step(q)
        report = controller.last_reports[0]
        if report.scale < 1e-9 and not report.met:
            stalled += 1
            assert report.limit_kind == 0 and report.limited_by in robot.joint_names
            # the joint named sits on a bound of this step's box (all joints are revolute: q and v agree)
            j = report.limit_index
            lo, hi = controller.limits[1].joint_bounds(q_before, 0.01)
            vmax = controller.limits[0].velocity_limits
            v = controller.last_velocity[j]
            assert min(abs(v - max(lo[j], -vmax[j])), abs(v - min(hi[j], vmax[j]))) < 1e-12
    assert stalled, "the pinch from neutral should stall against the joint limits"


@pytest.mark.parametrize("backend", SOLVERS)
def test_a_level_out_of_reach_says_so_even_at_full_scale(backend):
    """The planar arm's tip sent 3 m away (reach 1.8 m): stretched towards it, the level is not met
    at scale 1 with nothing saturated; the report says out of reach or singular."""
    robot = Robot.bundled("planar_2link")
    task = RelativePositionTask("base_link", "tip", gain=50.0)
    task.set_target([3.0, 0.4, 0.0])
    controller = Controller(robot, [[task]], dt=0.01, backend=backend)
    q = np.array([0.3, 0.5])
    for _ in range(200):
        q = controller.step(q)
    (report,) = controller.last_reports
    assert not report.met and report.scale == 1.0 and report.limit_kind == -1
    assert report.limited_by.startswith("out of reach or singular")


@pytest.mark.parametrize("backend", SOLVERS)
def test_a_level_held_back_by_a_saturated_joint_names_it_even_at_full_scale(backend):
    """joint1 limited to 3.1 rad, the tip sent behind the base at full reach (needs q1 = pi):
    joint1 ends on its bound, saturated for the level, which is met as far as joint2 can."""
    robot = Robot.bundled("planar_2link")
    task = RelativePositionTask("base_link", "tip", gain=50.0)
    task.set_target([-1.8, 0.0, 0.0])
    controller = Controller(robot, [[task]], dt=0.01, backend=backend)
    q = np.array([2.5, 0.0])
    for _ in range(300):
        q = controller.step(q)
    (report,) = controller.last_reports
    assert not report.met
    assert "joint1" in report.limited_by

"""A disagreement of the Python inequality solver with the QP cascade, found with issue 29's
Talos example and fixed since: Talos's feet held (level 0) and its pelvis and left gripper moved
(level 1), equality levels only, under the controller's joint box, whose floating-base rows are
"unbounded": +-1.8e308 (float max: Pinocchio's velocity limit of a free flyer), finite to
np.isfinite, so held as hard rows. solve_lexicographic left level 1 0.1 short while the cascade
meets it exactly: one rounding allowance for all hard rows, 1e-12 x 1.8e308, made every other
hard row count as held at each level's start. Each row's allowance is now its own."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from reljac import Kinematics
from reljac.ik import Controller, DampingPolicy, FrameTask, humanoid_stack
from reljac.ik.limits.base import intersect
from reljac.ik.solvers.inequality import level_rows, solve_lexicographic

UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)
Q = np.array([  # 33 steps of feet > support region > avoidance > pelvis + reach 1 m forward > posture
    -1.5873800597416388e-02, 3.5448040144999311e-03, 9.4377850926869289e-01, 3.9399395117734895e-02,
    2.3757921095828644e-01, 1.4552047208552293e-01, 9.5959762316754471e-01, -2.9918615467775611e-01,
    -1.2960648258774030e-18, -1.1504649426948883e+00, 8.5428639326622136e-01, -1.9020003693016407e-01,
    -9.0254934426965330e-03, -3.0512440103462196e-01, -1.1229915051557026e-02, -1.1873796309838469e+00,
    1.0679613625991251e+00, -3.6699357760438445e-01, 3.6777453905754189e-03, -2.6781687983597074e-01,
    -2.6179931773731424e-01, 2.4988048900958865e-01, 1.7052487802921512e-01, -2.9134856048306884e-04,
    -8.6093465484083265e-01, 1.4799822796032026e-04, 1.5066916318919566e-03, 1.0772003560531090e-01,
    0.0, -2.5846999999999998e-01, -1.7304600000000001e-01, 2.0000000000000001e-04, -5.2536600000000000e-01,
    0.0, 0.0, 1.0000000000000001e-01, 0.0, 0.0, 0.0])


def _problem(talos):
    stack = humanoid_stack(talos, talos.reference_configuration(), feet=("left_sole_link", "right_sole_link"),
                           com_priority="none")
    reach = FrameTask("gripper_left_base_link", gain=5.0, weight=[1, 1, 1, 0, 0, 0], max_speed=0.15)
    reach.set_target(pin.SE3(np.eye(3), np.array([1.1092229704321965, 0.4342167068703506, 0.782427124685225])))
    pelvis = FrameTask("base_link", gain=10.0, weight=[1, 1, 0, 0, 0, 0])
    pelvis.set_target(pin.SE3(np.eye(3), np.array([0.0, 0.0, 1.01927])))
    controller = Controller(talos, [stack.levels[0], [pelvis, reach]], dt=0.01, backend="python",
                            anti_chatter=False)
    kin = Kinematics(talos, Q)
    levels = [controller._level(tasks, kin) for tasks in controller.levels]
    for level in levels:
        level.extra_damping = 0.0
    lo, hi, _, _, _ = intersect([limit.constraint(kin, 0.01) for limit in controller.limits], talos.nv)
    return levels, lo, hi


def test_an_unbounded_floating_base_agrees_with_the_qp_cascade(talos):
    qp_cascade = pytest.importorskip("qp_cascade", reason="needs daqp (the test extra)")
    levels, lo, hi = _problem(talos)
    assert (lo[:6] < -1e300).all() and (hi[:6] > 1e300).all()
    v, _ = solve_lexicographic(levels, lo, hi, policy=UNDAMPED)
    rows = [level_rows(level, talos.nv, i) for i, level in enumerate(levels)]
    problem = qp_cascade.Problem([(r.A, r.lower, r.upper) for r in rows], lo, hi, np.zeros((0, talos.nv)),
                                 np.zeros(0))
    assert max(qp_cascade.differences(problem, v)) <= 1e-6


def test_with_the_floating_base_bounded_it_agrees(talos):
    """What makes the test above a test: the same levels, the floating base's rows at +-1000 or +-inf."""
    for bound in (1e3, np.inf):
        levels, lo, hi = _problem(talos)
        lo[:6], hi[:6] = -bound, bound
        _, reports = solve_lexicographic(levels, lo, hi, policy=UNDAMPED)
        assert reports[1].residual < 1e-9

"""A level of identity rows (a posture, A = c diag(mask)) solved without forming A P
(reljac/ik/solvers/identity_level.py, its compiled twin in hierarchy_factor.hpp) against the same
level given as explicit rows, which the solvers' eigen path takes (the specification), and
against least squares computed here with numpy: every row kept, rows masked (a posture that
leaves a floating base free), with and without damping, below levels that leave range(P)
touching the masked joints, and with no level above (directions that move masked joints only:
cut). Before, a partial mask took P r / c, which is not least squares there: a masked posture
under a task whose rows couple masked and kept joints was left at 0.5087 against 0.5048."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

from reljac import Kinematics, Robot
from reljac.ik import Controller, DampingPolicy, FrameTask, PostureTask
from reljac.ik.solvers.backend import solver
from reljac.ik.solvers.hierarchy import Level

NV = 12
UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)


def problem(rng: np.random.Generator, above_rows: int, masked: list[int], c: float):
    """Levels above (random rows, or none), and the identity level's target."""
    above = [Level(rng.standard_normal((above_rows, NV)), rng.standard_normal(above_rows))] if above_rows else []
    mask = np.ones(NV)
    mask[masked] = 0.0
    b = c * mask * rng.standard_normal(NV)
    return above, mask, b


def solved(backend: str, above: list[Level], last: Level) -> np.ndarray:
    lo, hi = np.full(NV, -1e3), np.full(NV, 1e3)
    return solver(backend)([*above, last], lo, hi, None, None, UNDAMPED)[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("above_rows", [0, 3, 8])
@pytest.mark.parametrize("masked", [[], [0], [0, 1, 2, 3, 4, 5], [2, 7, 11]])
@pytest.mark.parametrize("damping", [0.0, 0.3])
def test_an_identity_level_takes_the_step_of_its_explicit_rows(backend, above_rows, masked, damping):
    rng = np.random.default_rng(above_rows * 100 + len(masked) * 10 + int(10 * damping))
    for c in (1.0, 0.1, 7.0):
        above, mask, b = problem(rng, above_rows, masked, c)
        identity = Level(None, b, identity_scale=c, mask=None if not masked else mask, extra_damping=damping)
        explicit = Level(c * np.diag(mask), b, extra_damping=damping)
        v, v_rows = solved(backend, above, identity), solved(backend, above, explicit)
        assert np.allclose(v, v_rows, rtol=1e-9, atol=1e-9), (c, np.abs(v - v_rows).max())
        if damping == 0.0:  # least squares, min norm, inside the levels above (numpy, not the solvers)
            A_above = above[0].A if above else np.zeros((0, NV))
            v_above = np.linalg.pinv(A_above) @ above[0].b if above else np.zeros(NV)
            _, s, Vt = np.linalg.svd(A_above) if above else (None, np.zeros(0), np.eye(NV))
            N = Vt[len(s[s > 1e-10]):].T if above else np.eye(NV)
            A = c * np.diag(mask)
            z = np.linalg.lstsq(A @ N, b - A @ v_above, rcond=None)[0]
            assert np.allclose(v, v_above + N @ z, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("c", [1e-7, 1e-200])  # (1e-6: c^2 at the cut itself, a tie)
@pytest.mark.parametrize("masked", [[], [0], [0, 1, 2, 3, 4, 5]])
def test_a_level_whose_scale_squared_is_under_the_rank_cut_does_not_move(backend, c, masked):
    """c^2 <= 1e-12: every eigenvalue of its Gram matrix is cut, as of its explicit rows (a masked
    level with a joint held above gave NaN in C++ and a TaskError in Python; 1e-200, a division by
    zero)."""
    rng = np.random.default_rng(7)
    above, mask, b = problem(rng, 3, masked, c)
    above.append(Level(np.eye(NV)[[0, 7]], np.zeros(2)))  # a masked joint held: P's row of it is 0
    identity = Level(None, b, identity_scale=c, mask=None if not masked else mask)
    v = solved(backend, above, identity)
    alone = solver(backend)(above, np.full(NV, -1e3), np.full(NV, 1e3), None, None, UNDAMPED)[0]
    np.testing.assert_allclose(v, alone, rtol=0, atol=1e-12)  # (the levels above alone)
    np.testing.assert_allclose(v, solved(backend, above, Level(c * np.diag(mask), b)), rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_posture_that_leaves_a_joint_free_is_least_squares_below_a_task_that_couples_it(backend):
    """The dual arm: a met position of the left tool (its rows move torso_yaw and the arm's
    joints), then a posture with torso_yaw masked: the posture's residual is numpy's least
    squares in the null space of the position rows, and the same as a posture whose weights
    differ by 1e-9 (no identity level: the explicit rows)."""
    robot = Robot.bundled("dual_arm")
    q = robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))
    kin = Kinematics(robot, q)
    mask = np.ones(robot.nv)
    mask[robot.model.joints[robot.model.getJointId("torso_yaw")].idx_v] = 0.0

    def velocity(weight):
        lead = FrameTask("left_tool", gain=1.0, weight=[1, 1, 1, 0, 0, 0])
        lead.set_target(kin.placement("left_tool"))
        posture = PostureTask(robot, gain=1.0, weight=weight)
        posture.set_target(q + 0.3)
        controller = Controller(robot, [[lead], [posture]], dt=0.01, damping=UNDAMPED, backend=backend,
                                anti_chatter=False)
        return controller.velocity(q)

    v = velocity(mask)
    nearly = mask.copy()
    nearly[np.flatnonzero(mask)[0]] = 1.0 + 1e-9
    assert np.allclose(v, velocity(nearly), atol=1e-7)
    data = robot.model.createData()  # (Pinocchio's own Jacobian: its linear rows' null space is the task's)
    pin.computeJointJacobians(robot.model, data, q)
    pin.updateFramePlacements(robot.model, data)
    J = pin.getFrameJacobian(robot.model, data, robot.model.getFrameId("left_tool"), pin.LOCAL)[:3]
    Vt = np.linalg.svd(J)[2]
    N = Vt[3:].T
    b = 0.3 * np.ones(robot.nv)  # gain 1: the posture's error is -0.3 on every joint
    z = np.linalg.lstsq(np.diag(mask) @ N, mask * b, rcond=None)[0]
    best = np.linalg.norm(mask * (N @ z - b))
    assert np.linalg.norm(mask * (v - b)) == pytest.approx(best, rel=1e-7)
    assert np.abs(J @ v).max() < 1e-9

"""Two rows of C nearly parallel: a support-region vertex where the hull turns by 1e-5 rad (the G1's
feet, their back corners 0.5 um out of line). Saturating the second divides by c^T P c, a
cancellation (0.13 -> 7.7e-12) that lost ten digits: M = A P was left at noise level, its row space
(rank 1 by the noise) outside range(P). The Python solver then took that noise as a direction and
handed the posture a "projector" with an eigenvalue -1 (the feet moved 2 um, |v| 0.36), the
compiled one did not (|v| 0.017): the backends disagreed. P c taken twice
(saturation.PIVOT_REPROJECT) gives both the exact-arithmetic step. Found on the Unitree G1, its
CoM target 0.5 m beyond the back corner of its feet, dt = 2 ms (a helper's adversarial pass)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from helpers import example_robot_data_dir

from reljac import Kinematics, Robot
from reljac.ik import compiled_available, humanoid_stack
from reljac.ik.solvers import saturation

pytestmark = pytest.mark.skipif(example_robot_data_dir() is None, reason="needs example-robot-data")

Q = np.array([  # the state 61 Python steps reached (the CoM slid along the back edge to that vertex)
    -0.09961431690224791, -0.12080966216585534, -0.019123418966504404, -0.0009519171284263003, -0.08895649873570913,
    -0.00959155921462374, 0.995988874023348, 0.028451937842168623, 0.19170956386102125, -0.04411737153075195,
    0.04817858528463995, 0.09917737449666357, -0.195534779220519, 0.011696461794745917, 0.19087033489912655,
    -0.04726825496119425, 0.06797655802168812, 0.0958515715298175, -0.19544161987033412, -0.019466804965642272,
    0.1060872095781668, -0.02017622168426457, 0.00034324368432098895, -0.020659834919441775, -0.010329100670969395,
    -0.0004362391794155644, -7.21419346902108e-06, -0.00011620329130547701, -0.0008389469127170834,
    0.006042392678095016, -0.02077510069199398, -0.010355817196786249, -0.00043170421280701825,
    -4.6699354870543885e-06, -0.00011515793915965152, -0.0008398125627743662
])


@pytest.fixture(scope="module")
def stack():
    robot = Robot.load("g1")
    q0 = robot.reference_configuration()
    stack = humanoid_stack(robot, q0, feet=("left_ankle_roll_link", "right_ankle_roll_link"), sole=(0.18, 0.07),
                           margin=0.02, com_priority="high")
    stack.com.set_target(Kinematics(robot, q0).center_of_mass()[:2] - 0.5)
    return stack


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_both_backends_take_the_same_step_at_a_nearly_flat_vertex(stack):
    v = {}
    for backend in ("python", "compiled"):
        controller = stack.controller(0.002, backend=backend)
        v[backend] = controller.velocity(Q)
        assert controller.last_reports[1].saturated_rows == [5]  # the CoM level: one edge of the two
    np.testing.assert_allclose(v["compiled"], v["python"], atol=1e-9)


def test_the_python_step_keeps_the_feet_and_does_not_worsen_the_posture(stack):
    controller = stack.controller(0.002, backend="python")
    v = controller.velocity(Q)
    levels, _, _, C, d, _ = controller.last_problem
    assert np.linalg.norm(levels[0].A @ v - levels[0].b) < 1e-12  # the feet, the level above: untouched
    assert np.max(C @ v - d) <= 1e-12  # inside the region
    posture = levels[2]
    assert np.linalg.norm(posture.times(v) - posture.b) <= np.linalg.norm(posture.b) + 1e-3  # (v = 0: |b|)


def _exact_projector(rows: list[np.ndarray]) -> np.ndarray:
    """I - R^T (R R^T)^-1 R for two rows R (2, n), in exact rational arithmetic, then rounded."""
    R = [[Fraction(float(x)) for x in row] for row in rows]
    n = len(R[0])
    G = [[sum(a * b for a, b in zip(R[i], R[j], strict=True)) for j in range(2)] for i in range(2)]
    det = G[0][0] * G[1][1] - G[0][1] * G[1][0]
    inverse = [[G[1][1] / det, -G[0][1] / det], [-G[1][0] / det, G[0][0] / det]]
    return np.array([[float(int(i == j) - sum(R[a][i] * inverse[a][b] * R[b][j] for a in range(2) for b in range(2)))
                      for j in range(n)] for i in range(n)])


@pytest.mark.parametrize("delta", [1e-5, 1e-6])  # (1e-7: a pivot below PIVOT_TOLERANCE, no move)
@pytest.mark.parametrize("second", ["joint", "row"])
def test_a_saturation_nearly_in_the_span_saturated_before_keeps_a_projector(delta, second):
    """A row c1 = e_0 + delta r saturated, then joint 0 (pivot P_00) or the row 2 e_0 (c^T P c):
    both pivots are cancellations of order delta^2. P, A P and the first row's bound against the
    exact projector (the joint's pivot had the row's defect: |P - P_exact| 1.8e-5, an eigenvalue
    -5.6e-5, the first row 1.1e-5 off its bound at delta = 1e-6; a reviewer's case)."""
    rng = np.random.default_rng(3)
    n = 10
    A, r = rng.standard_normal((4, n)), rng.standard_normal(n)
    r[0] = 0.0
    e0 = np.eye(n)[0]
    c1 = e0 + delta * r
    P, M, base = np.eye(n), A.copy(), np.zeros(n)
    assert saturation.saturate(P, M, base, c1, 0, 0.3)
    c2 = e0 if second == "joint" else 2.0 * e0
    assert saturation.saturate(P, M, base, None if second == "joint" else c2, 0 if second == "joint" else 1,
                               0.5 if second == "joint" else 1.0)
    exact = _exact_projector([c1, c2])
    assert np.abs(P - exact).max() < 1e-9
    assert np.linalg.eigvalsh((P + P.T) / 2).min() > -1e-9
    assert np.abs(M - A @ exact).max() < 1e-8
    assert abs(c1 @ base - 0.3) < 1e-9 and abs(c2 @ base - (0.5 if second == "joint" else 1.0)) < 1e-9

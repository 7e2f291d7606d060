"""Saturation in the hierarchy solvers where rounding decides: a pivot that cancels, a row in the
span saturated, a tie at scale 0; both solvers agree and keep their projectors.

First found: two rows of C nearly parallel, a support-region vertex where the hull turns by 1e-5 rad (the G1's
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
import pinocchio as pin
import pytest
from helpers import example_robot_data_dir

from reljac import Kinematics, Robot
from reljac.ik import Controller, FrameTask, compiled_available, humanoid_stack
from reljac.ik.solvers import hierarchy as H
from reljac.ik.solvers import saturation
from reljac.ik.solvers.saturation import Constraints

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


Q_PULLED = np.array([  # step 97 of both hands pulled 1 m toward +x
    -0.0694632225577395, -9.308469556935121e-05, -0.0974533855274959, -1.028415575818717e-06, 0.6011306065857673,
    -8.453537425237771e-07, 0.7991507954222751, -1.5162504775906875, 0.00014291601523707594, -6.0521835874196104e-05,
    -0.08726699999999998, 0.31368723871019305, -0.00015254291181860687, -1.5162505211176311, 0.00014291594022933834,
    -6.052180843909646e-05, -0.08726699999999998, 0.313687282237139, -0.00015254283400947151, 0.0010122764492425252,
    -0.0003706085484181071, 0.022726434272639845, -2.9369978499105818, 0.5318202942039902, 0.3496028309875988,
    1.4147728599981975, -7.092406338531643e-05, 0.05468442414570393, 0.013759285468634764, -2.9373255606841533,
    -0.5329058995973415, -0.3497001418588382, 1.414805013024235, 9.55958948162325e-05, 0.05461396039032397,
    -0.013817291463965934
])


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_a_region_row_parallel_to_one_saturated_above_does_not_freeze_a_level():
    """An adversarial pass (lockstep runs, hands pulled 1 m, region as a limit): two region rows
    parallel to 1e-10 (a sole vertex that hardly turns); the second, the first saturated, crossed
    its bound by rounding (8e-13 against a tolerance of 1e-12), its saturation was refused (no
    freedom left along it) and the level stopped with its candidate of scale 0: the posture froze in
    one backend and not the other (|v| 1.55 against 2.80; in 40 of 80 runs on the G1 and Talos).
    A refused row is in the span saturated: it is held and the level goes on."""
    robot = Robot.load("g1")
    q0 = robot.reference_configuration()
    kin0 = Kinematics(robot, q0)
    pulls = []
    for hand in ("left_rubber_hand", "right_rubber_hand"):
        task = FrameTask(hand, gain=5.0, weight=[1, 1, 1, 0, 0, 0], name=f"pull {hand}")
        task.set_target(pin.SE3(np.eye(3), kin0.placement(hand).translation + [1.0, 0.0, 0.0]))
        pulls.append(task)
    stack = humanoid_stack(robot, q0, feet=("left_ankle_roll_link", "right_ankle_roll_link"), sole=(0.18, 0.07),
                           margin=0.02, com_priority="none", tasks=[pulls])
    v, scales = {}, {}
    for backend in ("python", "compiled"):
        controller = Controller(robot, stack.levels, dt=0.002, constraints=list(stack.constraints), backend=backend)
        v[backend] = controller.velocity(Q_PULLED)
        scales[backend] = [report.scale for report in controller.last_reports]
    assert scales["python"] == scales["compiled"] == [1.0] * len(scales["python"])
    np.testing.assert_allclose(v["python"], v["compiled"], rtol=0, atol=1e-7 * np.linalg.norm(v["compiled"]))


def test_a_tie_at_scale_0_goes_to_the_first_constraint_whatever_the_sign_of_rounding():
    """An adversarial pass: a joint on its bound (ratio exactly 0) and a row met to rounding (ratio
    -1e-22 or +1e-22): the sign of the rounding chose which was saturated, and the two backends
    chose differently (Talos, 8e-7 relative). A ratio is clamped at 0: the first (the joint) wins."""
    for rounding in (-1e-22, 1e-22):
        cons = Constraints(lo=np.array([-1.0, -1.0]), hi=np.array([0.0, 1.0]), C=np.array([[0.0, 1.0]]),
                           d=np.array([rounding]))
        scale, kind, index = saturation.max_scale(np.zeros(2), np.array([1.0, 1.0]), cons, [])
        assert (scale, kind, index) == (0.0, 0, 0)



def test_a_pinned_joint_is_skipped_by_max_scale():
    """A joint that cannot move in what is left (saturate refused it) crosses its bound by rounding
    only: max_scale skips it when it is pinned, as it skips a held row."""
    cons = Constraints.box(np.array([-2.0, -2.0]), np.array([2.0, 2.0]))
    base, delta = np.array([-2.0, 0.0]), np.array([-5e-12, 4.0])  # joint 0 on its bound, pushed out by 5e-12
    assert saturation.max_scale(base, delta, cons, [])[:2] == (0.0, 0)
    assert saturation.max_scale(base, delta, cons, [], [0]) == (0.5, 0, 1)


# Two states of an adversarial pass: a joint the level above put on its velocity bound is pushed out
# by 5e-12 of rounding at the level below, where it cannot move (P_jj ~ 5e-12). saturate refused it
# and the Python level ended there (scale 0, 0.078), while the compiled one, its rounding on the other
# side of the tolerance, went on: 2 rad/s apart. A refused joint is now held, as a refused row is.
ROUNDING_STATES = {
    "dual_arm": ("left_tool", "right_tool", "right_tool", None, 1, [
        -0.8196169019035544, -1.5184935166143858, 0.831663335494353, -2.779014348018311, -1.2955276078375069,
        1.736581955655302, 1.1108870465920953, -2.8931294726707906, -1.2795826363197378, 0.876938743145953,
        0.23509610505286, -2.410980099649955, 0.029622380397419754, 2.4194521315120503, -0.027431932268917426], [
        0.6019673649726505, 0.43011169268826244, 0.0689028427920122, -2.8602751628058267, -1.419822237490471,
        2.713833879885518, 1.4831850554330919, -2.805528577599964, -1.484852268821673, 1.574005165468301,
        2.29472712916597, -1.6494917658371562, -2.2184223409172183, 0.2796051106430222, 2.7975606691673804], [
        2.30636902917488, -0.8145988801989201, 1.004109960441351, 0.5289205721303496, -2.1882256592868217,
        2.4495262625462195, 3.2598799234382065, -0.7872634750169363, 2.741870370071767, -0.9712170195602213,
        1.770226356296296, -1.0277495136949062, -0.1676927037055589, 0.0986366239773065, 2.287697667583575]),
    "hand": ("thumb_tip", "index_tip", "index_tip", "undamped", 2, [
        -0.03679598790547419, 0.6252124805460565, 1.0654503707381928, -0.02375139531451628, 1.1199119842983463,
        0.6335746969438848, 0.22338220791984073, 0.7612452623589797, 1.0761281822602764, -0.08058074585060307,
        -0.39466258442310964, 0.5948632988745698], [
        0.15828823497447797, 0.02704450316582907, 1.6673618152077687, 0.15722294848666019, 0.8707394544150138,
        0.4005545818539289, 0.07464181941831949, 0.5748344086712358, 1.0013004039841304, 0.21764093107303084,
        -0.351046989088046, 0.652834434726291], [
        0.0967367335210812, 1.586335640770013, 0.1644400742592603, 0.004693039238828078, 0.6343023223727287,
        0.3502276012792965, 0.26835817635954773, 0.8647726078132651, 1.0407475829492367, 0.25657854014726006,
        0.4896944371544526, 0.8070433495203796]),
}


@pytest.mark.parametrize("name", sorted(ROUNDING_STATES))
def test_a_joint_pushed_out_by_rounding_where_it_cannot_move_does_not_end_the_level(name):
    from reljac.ik import DampingPolicy, PostureTask, RelativeFrameTask

    a, b, lead_frame, damping, level, q, q_target, q_posture = ROUNDING_STATES[name]
    robot = Robot.bundled(name)
    target = Kinematics(robot, np.array(q_target))
    policy = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0) if damping == "undamped" else None
    backends = ("python", "compiled") if compiled_available() else ("python",)
    v, scales = {}, {}
    for backend in backends:
        carry = RelativeFrameTask(a, b, gain=50.0)
        carry.set_target(target.relative_placement(a, b))
        lead = FrameTask(lead_frame, gain=50.0, weight=[1, 1, 1, 0, 0, 0])
        lead.set_target(target.placement(lead_frame))
        posture = PostureTask(robot, gain=5.0, weight=0.1)
        posture.set_target(np.array(q_posture))
        controller = Controller(robot, [[carry], [lead], [posture]], dt=0.01, velocity_limits=np.full(robot.nv, 2.0),
                                damping=policy, anti_chatter=False, backend=backend)
        v[backend] = controller.velocity(np.array(q))
        scales[backend] = controller.last_reports[level].scale
        assert np.abs(v[backend]).max() <= 2.0
    assert scales["python"] > 0.5  # (0.078 and 0 before: the level ended at the refused joint)
    if "compiled" in v:
        np.testing.assert_allclose(v["compiled"], v["python"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("eps", [1e-7, 3e-7, 9e-7])
def test_a_joint_pushed_out_along_a_real_direction_where_it_cannot_move_still_ends_the_level(eps):
    """A review: saturate refuses a joint whose P_jj is below PIVOT_TOLERANCE, where delta_j may be
    up to 1e-6 |delta|, a real direction and not rounding. Pinned, it crossed its bound by up to
    9e-7 and the final clip took that from the level above (its residual 9e-7, reported met). A
    joint is pinned only where its crossing is within PIN_TOLERANCE; else the level ends there."""
    from reljac.ik.solvers.backend import _compiled, _python

    a = np.array([1.0, eps, 0.0])
    levels = [H.Level(a[None], np.array([1.0])), H.Level(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
                                                          np.array([-0.5, 0.3]))]
    for solve in (_python, _compiled) if compiled_available() else (_python,):
        v, reports = solve(levels, -np.ones(3), np.ones(3), None, None,
                           H.DampingPolicy(threshold=0.0, max_damping=0.0))
        assert abs(a @ v - 1.0) <= 1e-9 * 2 and reports[0].met  # the level above keeps its row
        assert np.all(np.abs(v) <= 1.0)

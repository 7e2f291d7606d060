"""Values a mutation pass found unpinned (issue 28, "tests that pin values"): each test below fails
under one plausible one-line bug that every other test let through. Expected values are closed
forms, Pinocchio's own functions or finite differences, never reljac's helpers; each runs on
both backends where the backends differ."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

from reljac import Kinematics, Robot, SupportContact
from reljac.ik import CoMTask, Controller, FrameTask, PostureTask, SupportRegion, humanoid_stack
from reljac.ik.solvers.backend import compiled_available, solver
from reljac.ik.solvers.hierarchy import DampingPolicy, Level, solve_hierarchy
from reljac.maps import capability_map, seed_for
from reljac.maps.kernel import Accumulator, Partial, merge_partials, merge_partials_numpy
from reljac.maps.result import CapabilityMap
from reljac.maps.sampling import Sampler

INERTIA = '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'
YAW = 0.7  # [rad] of the foot frame in the base
# A floating base carrying a two-link horizontal arm (its masses move the centre of mass in x-y),
# a foot frame turned by YAW below it and a sole frame on the foot that no task names.
STAND = f"""<robot name="yawed_stand">
  <link name="base"><inertial><origin xyz="0 0 0"/><mass value="2"/>{INERTIA}</inertial></link>
  <link name="foot"/>
  <joint name="foot_joint" type="fixed"><parent link="base"/><child link="foot"/>
    <origin xyz="0.1 -0.05 -0.5" rpy="0 0 {YAW}"/></joint>
  <link name="sole"/>
  <joint name="sole_joint" type="fixed"><parent link="foot"/><child link="sole"/></joint>
  <link name="l1"><inertial><origin xyz="0.3 0 0"/><mass value="1"/>{INERTIA}</inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="10"/></joint>
  <link name="l2"><inertial><origin xyz="0.3 0 0"/><mass value="1"/>{INERTIA}</inertial></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.6 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="10"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def stand(tmp_path_factory):
    path = tmp_path_factory.mktemp("stand") / "stand.urdf"
    path.write_text(STAND)
    return Robot.from_urdf(path, floating_base=True)


def stand_q(stand) -> np.ndarray:
    return stand.q_from_joint_values({"j1": 0.3, "j2": 0.8})


def com_in(robot, q, frame) -> np.ndarray:
    """c in `frame`'s axes, from Pinocchio (every body of a floating-base robot moves)."""
    data = robot.model.createData()
    c = pin.centerOfMass(robot.model, data, q)
    pin.framesForwardKinematics(robot.model, data, q)
    T = data.oMf[robot.frame_id(frame)]
    return T.rotation.T @ (c - T.translation)


def com_jacobian_fd(robot, q, frame, eps=1e-6) -> np.ndarray:
    """d c_frame / dv (3, nv) by central differences along each velocity coordinate."""
    J = np.empty((3, robot.nv))
    for k in range(robot.nv):
        dv = np.zeros(robot.nv)
        dv[k] = eps
        J[:, k] = (com_in(robot, pin.integrate(robot.model, q, dv), frame)
                   - com_in(robot, pin.integrate(robot.model, q, -dv), frame)) / (2 * eps)
    return J


# ---------------------------------------------------------------------------- support region in a frame
def support_step(stand, backend, half_length, margin, target_w):
    """One step of a world CoM task toward target_w (x-y), the base held, under a SupportRegion in
    the yawed foot's x-y plane made of a rectangle on the sole (frames no task uses): (q, v)."""
    q = stand_q(stand)
    region = SupportRegion(stand, [SupportContact.rectangle("sole", 2 * half_length, 0.6)], margin=margin,
                           gain=0.5, frame="foot")
    base = FrameTask("base", gain=10.0)  # held where it is: only the arm moves the CoM under the foot
    base.set_target(Kinematics(stand, q).placement("base"))
    com = CoMTask(stand, axes="xy", gain=1.0)
    com.set_target(target_w)
    controller = Controller(stand, [[base], [com]], dt=0.01, constraints=[region], backend=backend)
    return q, controller.velocity(q)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_support_region_in_a_turned_frame_stops_the_com_at_its_own_edge(stand, backend):
    """The foot's +x edge is the closed-form line x_foot = half_length - margin: the step moves the
    CoM toward it by exactly gain * s / dt (the row saturated), s measured in the foot's axes."""
    q = stand_q(stand)
    c_foot = com_in(stand, q, "foot")
    half_length, margin = c_foot[0] + 0.015, 0.01  # s = 5 mm to the shrunk +x edge
    direction_w = np.array([np.cos(YAW), np.sin(YAW)])  # the foot's +x in the world
    c_w = com_in(stand, q, "universe")
    q, v = support_step(stand, backend, half_length, margin, c_w[:2] + 0.9 * direction_w)  # |b dt| < 1 cm: undamped
    rate_foot = com_jacobian_fd(stand, q, "foot") @ v
    s = half_length - margin - c_foot[0]
    assert rate_foot[0] == pytest.approx(0.5 * s / 0.01, rel=1e-6)  # n . J v = d on the saturated edge


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("margin, expected", [(0.0, -0.5 * 5e-5 / 0.01), (0.02, 0.0)])
def test_the_overshoot_band_is_margin_wide_at_most(stand, backend, margin, expected):
    """The CoM 50 um past the shrunk +x edge: held (d = 0) with a 2 cm margin, whose band is
    0.1 mm; pushed back by gain * s / dt with margin 0, whose band is 0."""
    q = stand_q(stand)
    c_foot = com_in(stand, q, "foot")
    half_length = c_foot[0] + margin - 5e-5
    q, v = support_step(stand, backend, half_length, margin, com_in(stand, q, "universe")[:2])  # no error
    assert (com_jacobian_fd(stand, q, "foot") @ v)[0] == pytest.approx(expected, abs=1e-9)


# ---------------------------------------------------------------------------- CoM task axes
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_zx_com_task_takes_z_then_x_of_a_whole_point(stand, backend):
    q = stand.q_from_joint_values({"root_joint": (0, 0, 0, 0.2, 0.1, 0, np.sqrt(0.95)), "j1": 0.3, "j2": 0.8})
    c = com_in(stand, q, "universe")
    task = CoMTask(stand, axes="zx", gain=2.0)
    task.set_target(c + [0.002, 0.5, -0.001])  # y is not controlled
    np.testing.assert_array_equal(task.target, [c[2] - 0.001, c[0] + 0.002])
    v = Controller(stand, [[task]], dt=0.01, backend=backend).velocity(q)
    np.testing.assert_allclose(com_jacobian_fd(stand, q, "universe")[[2, 0]] @ v, -2.0 * np.array([0.001, -0.002]),
                               rtol=1e-6, atol=1e-10)


# ---------------------------------------------------------------------------- posture with a kept free-flyer
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_posture_that_keeps_the_free_flyer_follows_its_tangent_map(stand, backend):
    """Uniform weights keep the base's rows, whose d difference / dq is not the identity: the step
    meets J v = -gain e with Pinocchio's dDifference, not v = -gain e."""
    q = stand_q(stand)
    offset = np.array([0.05, -0.03, 0.02, 0.04, -0.03, 0.05, 0.02, -0.01])  # base twist, then j1, j2
    target = pin.integrate(stand.model, q, offset)
    posture = PostureTask(stand, gain=1.0)
    posture.set_target(target)
    v = Controller(stand, [[posture]], dt=0.01, backend=backend).velocity(q)
    e = pin.difference(stand.model, target, q)
    J = pin.dDifference(stand.model, target, q, pin.ARG1)
    assert np.abs(J - np.eye(stand.nv)).max() > 1e-3  # the identity would be wrong here
    np.testing.assert_allclose(J @ v, -e, atol=1e-10)


# ---------------------------------------------------------------------------- humanoid_stack at q1
@pytest.fixture(scope="module")
def talos():
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    return Robot.load("talos")


def test_humanoid_stack_holds_the_feet_at_q1_with_the_gains_given(talos):
    q0 = talos.reference_configuration()
    q1 = q0.copy()
    q1[:3] += [0.3, -0.2, 0.0]  # the whole robot moved and turned: the feet are elsewhere
    q1[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(0, 0, 0.4)).coeffs()
    feet = ("left_sole_link", "right_sole_link")
    stack = humanoid_stack(talos, q1, feet=feet, hands=("gripper_left_base_link", "gripper_right_base_link"),
                           sole=(0.2, 0.1), contact_gain=70.0, hands_gain=60.0, com_gain=3.5, posture_gain=1.5)
    data = talos.model.createData()
    pin.framesForwardKinematics(talos.model, data, q1)
    for task, frame in zip(stack.feet, feet, strict=True):
        np.testing.assert_allclose(task.target.homogeneous, data.oMf[talos.frame_id(frame)].homogeneous, atol=1e-12)
        assert task.gain == 70.0
    np.testing.assert_allclose(stack.com.target, pin.centerOfMass(talos.model, talos.model.createData(), q1)[:2],
                               atol=1e-12)
    assert (stack.com.gain, stack.hands.gain, stack.posture.gain) == (3.5, 60.0, 1.5)
    # the gains act: one step from q1 moves the CoM toward a target 1 cm off at com_gain (the feet hold)
    stack.com.set_target(stack.com.target + [0.01, 0.0])
    v = stack.controller(0.01).velocity(q1)
    J = pin.jacobianCenterOfMass(talos.model, talos.model.createData(), q1)
    np.testing.assert_allclose((J @ v)[:2], [3.5 * 0.01, 0.0], atol=1e-6)


# ---------------------------------------------------------------------------- maps: exact ties
def partial(voxels, best, index) -> Partial:
    n = len(voxels)
    return Partial(np.array(voxels, np.int64), np.ones(n, np.int64), np.ones(n, np.uint64),
                   np.array(best, float), np.array(index, np.int64), outside=0, samples=n)


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0)])
def test_merges_keep_the_smallest_index_of_equal_bests(order):
    parts = [partial([3, 5], [0.5, 0.2], [7, 40]), partial([3], [0.5], [2]), partial([3, 5], [0.5, 0.2], [9, 11])]
    parts = [parts[i] for i in order]
    for merged in (merge_partials(parts), merge_partials_numpy(parts)):
        assert dict(zip(merged.voxel.tolist(), merged.best_index.tolist(), strict=True)) == {3: 2, 5: 11}
    for add in ("add", "add_numpy"):
        grid = type("G", (), {"size": 8})()
        accumulator = Accumulator(grid)
        for part in parts:
            getattr(accumulator, add)(part)
        assert (accumulator.best_index[3], accumulator.best_index[5]) == (2, 11)


def cartesian_robot(tmp_path) -> Robot:
    """Three prismatic joints x, y, z in [0, 0.999] m: p_ab = q and J_ab's position rows are the
    identity, so every sample's manipulability is exactly 1: every voxel is a tie."""
    joints, parent = [], "base"
    for axis, name in zip(("1 0 0", "0 1 0", "0 0 1"), "xyz", strict=True):
        joints.append(f'<link name="{name}"/><joint name="j{name}" type="prismatic"><parent link="{parent}"/>'
                      f'<child link="{name}"/><axis xyz="{axis}"/>'
                      f'<limit lower="0" upper="0.999" effort="1" velocity="1"/></joint>')
        parent = name
    path = tmp_path / "cartesian.urdf"
    path.write_text(f'<robot name="cartesian"><link name="base"/>{"".join(joints)}</robot>')
    return Robot.from_urdf(path)


@pytest.mark.parametrize("backend", BACKENDS)
def test_both_map_backends_keep_the_first_sample_of_a_tie(tmp_path, backend):
    robot = cartesian_robot(tmp_path)
    samples = 4000
    cmap = capability_map(robot, "base", "z", samples=samples, voxel=0.25, seed=3, chunk=700, workers=2,
                          backend=backend)
    Q = Sampler(robot, 3, compiled=backend == "compiled").draw(0, samples)
    flat = [cmap.grid.flat_index(p) for p in Q]  # p_ab = q
    first: dict[int, int] = {}
    for i, f in enumerate(flat):
        first.setdefault(f, i)
    reached = cmap.reached_voxels()
    assert sorted(first) == reached.tolist()
    assert (cmap.best_manipulability.ravel()[reached] == 1.0).all()
    assert [int(cmap.best_index.ravel()[f]) for f in reached] == [first[f] for f in reached.tolist()]


def test_seed_for_takes_the_smallest_flat_index_of_a_tie():
    """Four reached voxels, two at the same distance from the target with the same coverage and
    best manipulability: the smaller flat index wins."""
    counts = np.zeros((4, 1, 1), np.int64)
    counts[[0, 1, 2, 3], 0, 0] = 1
    coverage = np.full((4, 1, 1), 3, np.uint64)
    best = np.full((4, 1, 1), 0.25)
    best_q = np.array([[0.0], [1.0], [2.0], [3.0]])
    cmap = CapabilityMap(counts, coverage, best, np.arange(4).reshape(4, 1, 1), best_q, np.eye(3),
                         metadata={"origin": [0.0, 0.0, 0.0], "voxel": 1.0, "dims": [4, 1, 1]})
    np.testing.assert_array_equal(seed_for(cmap, [2.0, 0.5, 0.5]), [1.0])  # between centres 1.5 and 2.5
    cmap.coverage[2, 0, 0] = 7  # one more direction: it wins the tie
    np.testing.assert_array_equal(seed_for(cmap, [2.0, 0.5, 0.5]), [2.0])


# ---------------------------------------------------------------------------- the Python solver, hand-solved
@pytest.mark.parametrize("name", ["python", *(["compiled"] if compiled_available() else [])])
def test_the_smallest_singular_value_sets_the_damping(name):
    """A = diag(3, 0.01): sigma_min = 0.01 < threshold 0.02, so lambda^2 = 0.05^2 (1 - 0.25) and
    v_1 = 0.01 b_1 / (1e-4 + lambda^2) (the largest, 3, would give no damping)."""
    A, b = np.array([[3.0, 0.0, 0.0], [0.0, 0.01, 0.0]]), np.array([0.3, 0.001])
    v, (report,) = solver(name)([Level(A, b)], np.full(3, -10.0), np.full(3, 10.0), None, None, DampingPolicy())
    lam2 = 0.05**2 * (1 - 0.25)
    assert report.smallest_singular_value == pytest.approx(0.01, rel=1e-12)
    assert report.damping == pytest.approx(lam2, rel=1e-12)
    np.testing.assert_allclose(v, [3 * 0.3 / (9 + lam2), 0.01 * 0.001 / (1e-4 + lam2), 0.0], rtol=1e-12)


def test_the_best_candidate_not_the_last_is_kept():
    """Level 1 asks v0 + v1 = 4 with |v0|, |v1| <= 1: scaled by s = 0.5 to v = (1, 1) (residual 2);
    saturating the joints after that does no better, so the first candidate is kept: nothing
    saturated, its null space (1, -1, 0), (0, 0, 1) passed on. Level 2 asks v0 + v2 = 3: v2 = 2
    (v0 sits on its bound), and level 1 is untouched."""
    A1, A2 = np.array([[1.0, 1.0, 0.0]]), np.array([[1.0, 0.0, 1.0]])
    lo, hi = np.array([-1.0, -1.0, -5.0]), np.array([1.0, 1.0, 5.0])
    v, (first, second) = solve_hierarchy([Level(A1, np.array([4.0])), Level(A2, np.array([3.0]))], lo, hi)
    np.testing.assert_allclose(v, [1.0, 1.0, 2.0], atol=1e-12)
    assert first.scale == pytest.approx(0.5) and first.saturated == [] and first.saturated_rows == []
    assert first.residual == pytest.approx(2.0) and not first.met
    assert second.met and second.residual < 1e-12


def test_the_best_candidates_rows_are_not_held_below():
    """The same with the bounds as rows of C (v0 <= 1, v1 <= 1): the first candidate (s = 0.5,
    no row saturated) is kept, so both rows still bound the levels below. Level 2 asks
    v0 - v1 = 1, along the one direction level 1 leaves, (1, -1, 0): that pushes v0 over its row,
    so it gets nothing (v stays (1, 1)); level 3 takes v2 = -2, free."""
    A1, A2, A3 = np.array([[1.0, 1.0, 0.0]]), np.array([[1.0, -1.0, 0.0]]), np.array([[0.0, 0.0, 1.0]])
    C, d = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), np.array([1.0, 1.0])
    box = np.full(3, 10.0)
    levels = [Level(A1, np.array([4.0])), Level(A2, np.array([1.0])), Level(A3, np.array([-2.0]))]
    v, (first, second, third) = solve_hierarchy(levels, -box, box, C=C, d=d)
    np.testing.assert_allclose(v, [1.0, 1.0, -2.0], atol=1e-12)
    assert (C @ v <= d + 1e-12).all()
    assert first.scale == pytest.approx(0.5) and first.saturated_rows == [] and first.saturated == []
    assert not second.met and second.residual == pytest.approx(1.0) and third.met


# ---------------------------------------------------------------------------- mimic multiplier 0: one rule
MIMIC_ZERO = """<robot name="m"><link name="a"/><link name="b"/><link name="c"/>
<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0.6 0.8"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0.6 0.8"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="j1" multiplier="{m}" offset="0.2"/></joint>
</robot>"""


@pytest.mark.parametrize("multiplier", ["-0.000", "0", "0.0"])
def test_a_mimic_multiplier_of_zero_is_refused_by_every_loader(tmp_path, multiplier):
    """Hypothesis drew -0.000 and the model loaded, then failed where its axis was needed (and the
    map grid made it a fixed joint): reljac refuses it when it loads, from a URDF or a pin.Model."""
    from reljac.exceptions import ConfigurationError, URDFError

    text = MIMIC_ZERO.format(m=multiplier)
    path = tmp_path / "zero.urdf"
    path.write_text(text)
    with pytest.raises(URDFError, match="joint 'j2' has <mimic multiplier=.*fixed joint"):
        Robot.from_urdf(path)
    model = pin.buildModelFromXML(text, mimic=True)  # Pinocchio's own parser takes it
    assert list(model.mimicking_joints) and model.joints[model.getJointId("j2")].extract().scaling == 0
    with pytest.raises(ConfigurationError, match="mimic joint 'j2' has scaling 0"):
        Robot.from_pinocchio(model)

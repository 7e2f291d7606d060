"""Centre of mass in any frame, CoMTask, support polygons and the SupportRegion limit.

Oracles: Pinocchio's own centerOfMass / jacobianCenterOfMass called independently, central finite
differences of the CoM on the configuration manifold, the locked robot's full model, scipy's
ConvexHull (qhull), closed forms for squares, and the contact corners placed by pin directly.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS, feet_and_reaching_hand
from scipy.spatial import ConvexHull

import reljac
from reljac import Kinematics, Robot, SupportContact, SupportError, TaskError, support_polygon
from reljac.ik import CoMTask, Controller, FrameTask, PostureTask, SupportRegion
from reljac.ik.solvers.backend import compiled_available

SOLES = ("left_sole_link", "right_sole_link")


def random_q(robot, rng, scale=0.3):
    return pin.integrate(robot.model, robot.reference_configuration(), scale * rng.standard_normal(robot.nv))


def numeric_com_jacobian(robot, q, frame, eps=1e-6):
    J = np.zeros((3, robot.nv))
    for i in range(robot.nv):
        dv = np.zeros(robot.nv)
        dv[i] = eps
        plus = Kinematics(robot, pin.integrate(robot.model, q, dv)).center_of_mass(frame)
        minus = Kinematics(robot, pin.integrate(robot.model, q, -dv)).center_of_mass(frame)
        J[:, i] = (plus - minus) / (2 * eps)
    return J


# ---------------------------------------------------------------------- the centre of mass
@pytest.mark.parametrize("name", ["talos", "panda", "hand", "tree30", "dual_arm"])
def test_com_and_jacobian_in_the_world_are_pinocchios_with_the_fixed_bodies(name, rng):
    robot = Robot.load(name)
    model, data = robot.model, robot.model.createData()
    m, fixed = pin.computeTotalMass(model), model.inertias[0]  # bodies fixed to the world: joint 0's
    for _ in range(3):
        q = random_q(robot, rng)
        kin = Kinematics(robot, q)
        c = (m * pin.centerOfMass(model, data, q) + fixed.mass * fixed.lever) / (m + fixed.mass)
        np.testing.assert_allclose(kin.center_of_mass(), c, atol=1e-14)
        np.testing.assert_allclose(kin.center_of_mass_jacobian(),
                                   m / (m + fixed.mass) * pin.jacobianCenterOfMass(model, data, q), atol=1e-13)
        np.testing.assert_allclose(kin.center_of_mass_jacobian(), numeric_com_jacobian(robot, q, "universe"),
                                   atol=1e-7)  # also with the mimic joints of 'hand' and 'panda'


def test_a_locked_floating_base_keeps_the_mass_it_locks(talos, rng):
    q = random_q(talos, rng)
    locked = talos.locked(["root_joint", "leg_*"], q)
    assert locked.model.inertias[0].mass > 40  # pelvis and legs, now fixed to the world
    q_locked = locked.q_from_joint_values({k: v for k, v in talos.joint_values(q).items()
                                           if k not in locked.locked_joints})
    np.testing.assert_allclose(reljac.center_of_mass(locked, q_locked), reljac.center_of_mass(talos, q), atol=1e-12)
    kept = [talos.model.joints[talos.model.getJointId(locked.model.names[j])].idx_v + k
            for j in range(1, locked.model.njoints) for k in range(locked.model.joints[j].nv)]
    np.testing.assert_allclose(reljac.center_of_mass_jacobian(locked, q_locked, "torso_2_link"),
                               reljac.center_of_mass_jacobian(talos, q, "torso_2_link")[:, kept], atol=1e-12)


@pytest.mark.parametrize("frame", ["left_sole_link", "torso_2_link", "gripper_right_base_link"])
def test_com_in_a_moving_frame_matches_its_definition_and_finite_differences(talos, frame, rng):
    q = random_q(talos, rng)
    kin = Kinematics(talos, q)
    data = talos.model.createData()
    c = pin.centerOfMass(talos.model, data, q)
    pin.framesForwardKinematics(talos.model, data, q)
    T_wa = data.oMf[talos.model.getFrameId(frame)]
    np.testing.assert_allclose(kin.center_of_mass(frame), T_wa.rotation.T @ (c - T_wa.translation), atol=1e-14)
    np.testing.assert_allclose(kin.center_of_mass_jacobian(frame), numeric_com_jacobian(talos, q, frame), atol=1e-7)
    np.testing.assert_allclose(reljac.center_of_mass_jacobian(talos, q, frame), kin.center_of_mass_jacobian(frame))


def test_locked_joints_keep_their_mass(talos, rng):
    q = random_q(talos, rng)
    locked = talos.locked(["leg_left_*", "leg_right_*"], q)
    assert locked.nv == talos.nv - 12
    q_locked = locked.q_from_joint_values({k: v for k, v in talos.joint_values(q).items()
                                           if k not in locked.locked_joints})
    np.testing.assert_allclose(reljac.center_of_mass(locked, q_locked), reljac.center_of_mass(talos, q), atol=1e-12)
    # the locked robot's CoM Jacobian is the full one's columns of the joints left
    kept = [talos.model.joints[talos.model.getJointId(locked.model.names[j])].idx_v + k
            for j in range(1, locked.model.njoints) for k in range(locked.model.joints[j].nv)]
    np.testing.assert_allclose(reljac.center_of_mass_jacobian(locked, q_locked),
                               reljac.center_of_mass_jacobian(talos, q)[:, kept], atol=1e-12)


def test_a_robot_without_mass_has_no_centre_of_mass():
    model = pin.Model()
    model.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "j")
    model.addFrame(pin.Frame("tip", 1, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    robot = reljac.Robot(model)
    with pytest.raises(SupportError, match="no mass"):
        reljac.center_of_mass(robot, np.zeros(1))
    with pytest.raises(SupportError, match="no mass"):
        CoMTask(robot)
    with pytest.raises(SupportError, match="no mass"):
        SupportRegion(robot, [SupportContact("tip", np.eye(3))])


# ---------------------------------------------------------------------- support polygons
def test_hull_matches_qhull_and_its_half_planes_hold_every_point(rng):
    for _ in range(20):
        points = rng.uniform(-1, 1, (int(rng.integers(3, 30)), 2))
        polygon = support_polygon(points)
        hull = ConvexHull(points)
        np.testing.assert_allclose(polygon.area, hull.volume, rtol=1e-12)
        assert len(polygon.vertices) == len(hull.vertices)
        assert (polygon.normals @ points.T <= polygon.offsets[:, None] + 1e-12).all()
        np.testing.assert_allclose(np.linalg.norm(polygon.normals, axis=1), 1.0)


@pytest.mark.parametrize("n", [1_000, 20_000])
def test_the_hull_of_many_points_is_qhulls(rng, n):
    """Dense clouds (a sole read from a mesh has hundreds of vertices): consecutive x values closer
    than any tolerance on x. The vertices are qhull's, the hull convex and holding every point."""
    points = rng.normal(size=(n, 2))
    polygon = support_polygon(points)
    hull = ConvexHull(points)
    assert len(polygon.vertices) == len(hull.vertices)
    np.testing.assert_allclose(polygon.area, hull.volume, rtol=1e-12)
    assert (polygon.normals @ points.T <= polygon.offsets[:, None] + 1e-12).all()


def test_shrunk_square_and_signed_distance_are_closed_forms():
    square = support_polygon([[0, 0], [2, 0], [2, 1], [0, 1], [1, 0.5]])
    assert square.area == pytest.approx(2.0)
    assert square.signed_distance([1.0, 0.5]) == pytest.approx(0.5)
    assert square.signed_distance([3.0, 0.5]) == pytest.approx(-1.0)
    inner = square.shrunk(0.2)
    assert inner.area == pytest.approx(1.6 * 0.6)
    assert square.contains([1.9, 0.5]) and not inner.contains([1.9, 0.5])
    with pytest.raises(SupportError, match="margin of 0.5 m leaves nothing"):
        square.shrunk(0.5)


@pytest.mark.parametrize("points", [[[0, 0], [1, 1], [2, 2]], [[0, 0]], [[1, 1], [1, 1], [1, 1]],
                                    [[0, 0], [1, np.nan], [2, 0]], "feet", [[0, 0, 0, 0]]])
def test_degenerate_or_bad_points_are_refused(points):
    with pytest.raises(SupportError):
        support_polygon(points)


def test_contacts_refuse_bad_points_and_do_not_alias_the_callers():
    corners = np.zeros((4, 3))
    contact = SupportContact("left_sole_link", corners)
    corners[0, 0] = 5.0
    assert contact.points[0, 0] == 0.0
    for bad in ([1, 2, 3], np.full((2, 3), np.inf), np.zeros((0, 3))):
        with pytest.raises(SupportError, match="points of the contact"):
            SupportContact("left_sole_link", bad)
    with pytest.raises(SupportError, match="length"):
        SupportContact.rectangle("left_sole_link", -0.2, 0.1)


# ---------------------------------------------------------------------- CoMTask
@pytest.mark.slow
def test_com_task_drives_the_com_to_its_target_on_both_backends(talos):
    q0 = talos.reference_configuration()
    kin = Kinematics(talos, q0)
    for backend in ("python", "compiled") if compiled_available() else ("python",):
        feet = [FrameTask(f, gain=100) for f in SOLES]
        for foot in feet:
            foot.set_target(kin.placement(foot.frame_b))
        com = CoMTask(talos, axes="xy", gain=10)
        target = kin.center_of_mass()[:2] + [0.03, -0.02]
        com.set_target(np.r_[target, 5.0])  # a whole point: z is not controlled
        np.testing.assert_array_equal(com.target, target)
        controller = Controller(talos, [feet, [com]], dt=0.01, backend=backend)
        q = q0
        for _ in range(150):
            q = controller.step(q)
        np.testing.assert_allclose(reljac.center_of_mass(talos, q)[:2], target, atol=1e-6)
        for foot in feet:
            T = Kinematics(talos, q).placement(foot.frame_b)
            np.testing.assert_allclose(T.homogeneous, foot.target.homogeneous, atol=1e-6)


def test_com_task_rows_in_a_frame(talos, rng):
    q = random_q(talos, rng)
    task = CoMTask(talos, "left_sole_link", axes="zx")
    task.set_target([0.1, 0.2])
    e, J, ff = task.compute(Kinematics(talos, q))
    data = talos.model.createData()  # c in the sole's frame from Pinocchio itself (every Talos body moves)
    c_w = pin.centerOfMass(talos.model, data, q)
    pin.framesForwardKinematics(talos.model, data, q)
    T = data.oMf[talos.frame_id("left_sole_link")]
    c = T.rotation.T @ (c_w - T.translation)
    np.testing.assert_allclose(e, [c[2] - 0.1, c[0] - 0.2], atol=1e-14)
    np.testing.assert_allclose(J, numeric_com_jacobian(talos, q, "left_sole_link")[[2, 0]], atol=1e-7)
    assert not ff.any()
    task.set_target([0.1, 0.2, 0.3])  # a whole point (x, y, z): the z and x of it, in that order
    np.testing.assert_array_equal(task.target, [0.3, 0.1])
    np.testing.assert_allclose(task.compute(Kinematics(talos, q)).error, [c[2] - 0.3, c[0] - 0.1], atol=1e-14)


@pytest.mark.parametrize("bad", [dict(axes="xw"), dict(axes="xx"), dict(axes=""), dict(frame="nowhere")])
def test_com_task_refuses_bad_axes_and_frames(talos, bad):
    with pytest.raises(ValueError):
        CoMTask(talos, **bad)


def test_com_task_without_target_or_with_a_bad_one(talos):
    task = CoMTask(talos, axes="xy")
    with pytest.raises(TaskError, match="no target"):
        Controller(talos, [[task]], dt=0.01).step(talos.reference_configuration())
    for bad in ([1.0], [1, 2, np.nan], "xy"):
        with pytest.raises(TaskError, match="target of task"):
            task.set_target(bad)


# ---------------------------------------------------------------------- the support region
def soles(margin=0.02):
    return [SupportContact.rectangle(f, 0.2, 0.11) for f in SOLES], margin


def independent_region_distance(robot, q, contacts):
    """Signed distance of pin.centerOfMass's x-y to the hull of the corners placed by pin."""
    data = robot.model.createData()
    c = pin.centerOfMass(robot.model, data, q)
    pin.framesForwardKinematics(robot.model, data, q)
    corners = np.vstack([(data.oMf[robot.model.getFrameId(k.frame)].act(p.copy())) for k in contacts
                         for p in k.points])
    hull = ConvexHull(corners[:, :2])
    return float(-np.max(hull.equations[:, :2] @ c[:2] + hull.equations[:, 2]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.slow
def test_a_hand_pulled_far_away_keeps_the_com_inside_and_the_report_names_the_region(talos, backend):
    q0 = talos.reference_configuration()
    feet, hand, target = feet_and_reaching_hand(talos, q0, [1.0, 0.0, -0.3])  # 1 m forward: far outside
    posture = PostureTask(talos, weight=np.r_[np.zeros(6), np.ones(talos.nv - 6)])
    contacts, margin = soles()
    region = SupportRegion(talos, contacts, margin=margin)
    controller = Controller(talos, [feet, [hand], [posture]], dt=0.01, constraints=[region], backend=backend)
    q, named, scaled = q0, False, False
    for _ in range(250):
        q = controller.step(q)
        # the rows are first order in dt: the shrunk edge is kept to O(dt^2), the region itself with room
        assert independent_region_distance(talos, q, contacts) >= margin - 1e-3
        hand_report = controller.last_reports[1]
        named |= any(n.startswith("support region (edge") for n in hand_report.saturated_constraints)
        scaled |= hand_report.scale < 1
    assert named and scaled and not hand_report.met
    # the CoM ended on the shrunk edge: balance limited the reach, not the arm
    assert independent_region_distance(talos, q, contacts) == pytest.approx(margin, abs=1e-4)
    hand_position = Kinematics(talos, q).placement("gripper_left_base_link").translation
    assert np.linalg.norm(hand_position - target.translation) > 0.05
    # the feet end where they are held, to 10 um: steps where the CoM sits on the shrunk edge scale
    # the feet level too (the region is above every level; seen: 0.8 mm during the run, 2e-7 to
    # 1.7e-6 m at its end, the backends' runs parted at a step that scales the posture to 1e-6 / 0)
    for foot in feet:
        np.testing.assert_allclose(Kinematics(talos, q).placement(foot.frame_b).homogeneous,
                                   foot.target.homogeneous, atol=1e-5)


@pytest.mark.parametrize("offset", [0.0, 0.08005, 0.09])  # the CoM inside, just past the shrunk edge, beyond
def test_support_rows_are_the_velocity_damper_of_each_edge(talos, offset):
    q = talos.reference_configuration()
    kin = Kinematics(talos, q)
    c = pin.centerOfMass(talos.model, talos.model.createData(), q)  # a floating base: Pinocchio's is whole
    sole = kin.placement("left_sole_link")
    centre = sole.actInv(c)  # a 0.2 m square under the CoM, moved `offset` along the sole's x
    contact = SupportContact.rectangle("left_sole_link", 0.2, 0.2, [centre[0] - offset, centre[1], 0.0])
    region = SupportRegion(talos, [contact], margin=0.02, gain=0.4)
    constraint = region.constraint(kin, 0.01)
    polygon = support_polygon(np.vstack([sole.act(p.copy()) for p in contact.points]))
    J = kin.center_of_mass_jacobian()
    np.testing.assert_allclose(constraint.C, polygon.normals @ J[:2], atol=1e-14)
    r = polygon.offsets - polygon.normals @ c[:2]  # distance to each edge
    s = r - 0.02  # distance to the shrunk edge; an overshoot up to 0.1 mm is held, not pushed back
    expected = 0.4 * np.where(s >= 0, s, np.minimum(s + 1e-4, 0.0)) / 0.01
    np.testing.assert_allclose(constraint.d, expected, atol=1e-10)
    nearest = r.min()  # 0.1 - offset, up to the sole's tilt
    assert nearest == pytest.approx(0.1 - offset, abs=2e-3)
    assert (constraint.d.min() > 0) if offset == 0 else (constraint.d.min() == 0) if offset == 0.08005 else \
        (constraint.d.min() < 0)
    assert constraint.row_names[0] == f"support region (edge 1 of {len(polygon.offsets)})"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.slow
def test_changing_contacts_changes_the_region_from_the_next_step(talos, backend):
    q0 = talos.reference_configuration()
    contacts, margin = soles()
    region = SupportRegion(talos, contacts, margin=margin)
    com = CoMTask(talos, axes="xy", gain=20)
    kin = Kinematics(talos, q0)
    com.set_target(kin.placement("left_sole_link").translation)  # over the left foot
    feet = [FrameTask(f, gain=100) for f in SOLES]
    for foot in feet:
        foot.set_target(kin.placement(foot.frame_b))
    controller = Controller(talos, [feet, [com]], dt=0.01, constraints=[region], backend=backend)
    q = q0
    for _ in range(100):
        q = controller.step(q)
    both = independent_region_distance(talos, q, contacts)
    assert both >= margin - 1e-6
    region.contacts = contacts[1:]  # stand on the right foot: the CoM must move over it
    region.margin = 0.01
    for _ in range(200):
        q = controller.step(q)
    assert independent_region_distance(talos, q, contacts[1:]) >= 0.01 - 1e-4 - 1e-6  # back to the shrunk edge


def test_bad_support_settings_are_refused(talos):
    contacts, _ = soles()
    with pytest.raises(reljac.FrameNotFound):
        SupportRegion(talos, [SupportContact("left_sole", contacts[0].points)])
    with pytest.raises(SupportError, match="contacts must be"):
        SupportRegion(talos, [])
    for bad in (dict(margin=-0.01), dict(gain=0.0), dict(gain=1.5), dict(margin=np.nan)):
        with pytest.raises(ValueError):
            SupportRegion(talos, contacts, **bad)
    line = SupportRegion(talos, [SupportContact("left_sole_link", [[0.1, 0, 0], [-0.1, 0, 0]])])
    with pytest.raises(SupportError, match="span no area"):
        Controller(talos, [[PostureTask(talos)]], dt=0.01, constraints=[line]).step(talos.reference_configuration())
    wide = SupportRegion(talos, contacts[:1], margin=0.06)  # a 0.11 m wide sole has no 6 cm margin
    with pytest.raises(SupportError, match="leaves nothing"):
        Controller(talos, [[PostureTask(talos)]], dt=0.01, constraints=[wide]).step(talos.reference_configuration())


def test_a_run_of_noisy_x_split_in_two_keeps_the_hull_convex():
    """Both Talos soles (26 points of their rounded outlines) after a reach at level 3 moved the
    feet by rounding: the left edge's points have x within 3.3e-7 m (the tolerance is 3e-7 m), a
    run that, measured from its first point, ended between two points of the line and left the
    hull non-convex (a margin of 2 cm then 'left nothing'). Every point is inside the hull's
    half-planes, the hull is convex, its area is the shoelace area of qhull's."""
    points = np.array([
        [-0.11978812, 0.07172923], [-0.11836307, 0.04389509], [-0.11714253, 0.02651239], [-0.11149697, 0.02281668],
        [0.08250303, 0.02281663], [0.08769558, 0.02621682], [0.09112164, 0.03626771], [0.09135618, 0.09088982],
        [0.08927549, 0.14083356], [0.08325456, 0.1469555], [-0.10595158, 0.14686804], [-0.11658442, 0.14369918],
        [-0.11836336, 0.13014793], [-0.11978809, -0.07209685], [-0.11836336, -0.13051555], [-0.11658443, -0.14406681],
        [-0.10595158, -0.14723567], [0.08325455, -0.14732323], [0.08927549, -0.14120129], [0.0913562, -0.09125755],
        [0.09112169, -0.03663544], [0.08769564, -0.02658455], [0.08250309, -0.02318436], [-0.11149691, -0.02318431],
        [-0.11714247, -0.02688002], [-0.11836303, -0.04426271]])
    polygon = support_polygon(points)
    edges = np.roll(polygon.vertices, -1, axis=0) - polygon.vertices
    turns = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    assert (turns > 0).all()  # counter-clockwise and convex at every vertex
    assert (polygon.normals @ points.T <= polygon.offsets[:, None] + 1e-12).all()
    assert polygon.area == pytest.approx(ConvexHull(points).volume, rel=1e-9)
    assert polygon.shrunk(0.02).area > 0.03


@pytest.mark.parametrize("points", [[[1e20, 0, 0], [1e20, 1, 0], [1e20 + 1e5, 0, 0]], [[0, 0, 0], [1e101, 0, 0], [0, 1, 0]]])
def test_contact_points_beyond_1e100_m_are_refused(points):
    """An adversarial pass: contacts at 1e20-1e150 m were taken (q and targets stop at 1e100), and
    the backends' steps parted (a held foot moved 0.58 mm in one compiled step); 1e160 was called
    'no area' (the cross product overflowed)."""
    if np.abs(points).max() > 1e100:
        with pytest.raises(SupportError, match="finite numbers .m. within 1e\\+100"):
            SupportContact("left_sole_link", points)
    else:
        SupportContact("left_sole_link", points)  # (1e20 is within the bound)
    with pytest.raises(SupportError, match="within 1e\\+100"):
        SupportContact.rectangle("left_sole_link", 1e300, 1e300)

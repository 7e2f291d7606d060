"""reljac.collision distances: closed forms, conventions, finite differences, the broad phase.

Oracles: closed-form distances of spheres, boxes and capsules (a capsule is a segment grown by
its radius, so its distances are point-segment and segment-segment distances, the latter
minimized over the two segment parameters with scipy); central finite differences of the
distance along random motions through pin.integrate; the same query without broad phase.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pinocchio as pin
import pytest
from helpers import EXAMPLE_ROBOTS, example_robot_data_dir
from scipy.optimize import minimize, minimize_scalar

import reljac
from reljac.collision import CollisionModel, box, capsule, cylinder, sphere

ROBOTS = example_robot_data_dir()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="needs example-robot-data")
DUAL_ARM_MEETING = np.array([0.0, 0.8808, 0.9651, -0.4571, -2.0366, 1.1162, 2.7259, 1.8842,
                             -1.2333, 1.2035, 0.8092, -2.0059, -1.4909, 2.3970, -0.1965])


# ---------------------------------------------------------------------------- a probe robot
def probe_robot(tmp_path, geometry: str, *, name: str = "probe") -> reljac.Robot:
    """x, y, z prismatic joints, then yaw (z) and roll (x) revolute joints, carrying `geometry`
    (URDF <geometry> content, or a capsule "capsule R L") on link 'body' at its origin."""
    caps = ""
    if geometry.startswith("capsule"):
        _, r, length = geometry.split()
        geometry = f'<cylinder radius="{r}" length="{length}"/>'
        caps = '<collision_checking><capsule name="shape"/></collision_checking>'
    joints, links = [], ['<link name="base"/>']
    chain = [("x", "prismatic", "1 0 0"), ("y", "prismatic", "0 1 0"), ("z", "prismatic", "0 0 1"),
             ("yaw", "revolute", "0 0 1"), ("roll", "revolute", "1 0 0")]
    parent = "base"
    for joint, kind, axis in chain:
        child = "body" if joint == "roll" else f"l_{joint}"
        body = f'<collision name="shape"><geometry>{geometry}</geometry></collision>{caps}' if child == "body" else ""
        links.append(f'<link name="{child}">{body}</link>')
        joints.append(f'<joint name="{joint}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                      f'<axis xyz="{axis}"/><limit lower="-5" upper="5" effort="1" velocity="1"/></joint>')
        parent = child
    path = tmp_path / f"{name}.urdf"
    path.write_text(f'<robot name="{name}">{"".join(links)}{"".join(joints)}</robot>')
    return reljac.Robot.from_urdf(path)


def probe_q(x, y, z, yaw=0.0, roll=0.0) -> np.ndarray:
    return np.array([x, y, z, yaw, roll], dtype=float)


def segment_of(robot, q, half_length):
    """World end points of the probe's capsule axis (the body's z axis)."""
    T = reljac.Kinematics(robot, q).placement("body")
    axis = T.rotation[:, 2]
    return T.translation - half_length * axis, T.translation + half_length * axis


def point_segment(p, a, b):
    t = np.clip(np.dot(p - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
    return float(np.linalg.norm(p - (a + t * (b - a))))


def segment_segment(a1, b1, a2, b2):
    """Smallest distance between two segments: the best of a grid refined by scipy (trusted, slow)."""
    grid = np.linspace(0, 1, 41)
    S, T = np.meshgrid(grid, grid)
    P = a1 + S[..., None] * (b1 - a1)
    Q = a2 + T[..., None] * (b2 - a2)
    k = np.unravel_index(np.argmin(np.linalg.norm(P - Q, axis=-1)), S.shape)
    f = lambda st: np.linalg.norm(a1 + st[0] * (b1 - a1) - a2 - st[1] * (b2 - a2))  # noqa: E731
    res = minimize(f, [S[k], T[k]], bounds=[(0, 1), (0, 1)], method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-12})
    return float(min(res.fun, f([S[k], T[k]])))


def point_box(p, half):
    """Signed distance of point p to the box [-half, half] (negative inside)."""
    outside = np.maximum(np.abs(p) - half, 0.0)
    if outside.any():
        return float(np.linalg.norm(outside))
    return -float(np.min(half - np.abs(p)))


# ---------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize("centre", [(0.9, 0.2, -0.1), (0.35, 0.1, 0.05), (0.0, 0.05, 0.02)])
def test_sphere_sphere_distance_points_normal_and_jacobian_are_the_closed_forms(tmp_path, centre):
    """d = |c2 - c1| - r1 - r2 (negative when they overlap), p1 = c1 + r1 n, p2 = c2 - r2 n, and for
    a sphere carried by x, y, z slides (its centre on the revolute axes) J_d = [-n, 0, 0]."""
    robot = probe_robot(tmp_path, '<sphere radius="0.2"/>')
    cm = CollisionModel(robot, pairs=[])
    cm.add_obstacle("ball", sphere(0.15), [0.0, 0.0, 0.0])
    q = probe_q(*centre, yaw=0.7, roll=-0.3)
    rows = cm.distances(q)
    assert rows.pairs == (("body", "ball"),)
    c1, c2 = np.array(centre), np.zeros(3)
    n = (c2 - c1) / np.linalg.norm(c2 - c1)
    d = np.linalg.norm(c2 - c1) - 0.35
    assert rows.distance[0] == pytest.approx(d, abs=1e-6)
    np.testing.assert_allclose(rows.normal[0], n, atol=1e-6)
    np.testing.assert_allclose(rows.point1[0], c1 + 0.2 * n, atol=1e-6)
    np.testing.assert_allclose(rows.point2[0], c2 - 0.15 * n, atol=1e-6)
    np.testing.assert_allclose(rows.jacobian[0], np.r_[-n, 0.0, 0.0], atol=1e-6)


@pytest.mark.parametrize("centre", [(0.6, 0.1, 0.2), (0.2, 0.1, -0.05), (0.05, -0.02, 0.01), (0.9, 0.5, 0.45)])
def test_sphere_box_distance_is_the_point_box_distance_minus_the_radius(tmp_path, centre):
    robot = probe_robot(tmp_path, '<sphere radius="0.1"/>')
    cm = CollisionModel(robot, pairs=[])
    half = np.array([0.3, 0.2, 0.1])
    T_wo = pin.SE3(pin.rpy.rpyToMatrix(0.2, -0.4, 0.9), np.array([0.1, -0.2, 0.3]))
    cm.add_obstacle("crate", box(2 * half), T_wo)
    c_w = T_wo.act(np.array(centre))  # the probe's centre, given in the box frame
    rows = cm.distances(probe_q(*c_w))
    assert rows.distance[0] == pytest.approx(point_box(np.array(centre), half) - 0.1, abs=1e-6)
    np.testing.assert_allclose(rows.point2[0], rows.point1[0] + rows.distance[0] * rows.normal[0], atol=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_capsule_distances_are_segment_distances_minus_the_radii(tmp_path, seed):
    """Capsule-sphere: point-segment; capsule-capsule: segment-segment (scipy); capsule-box:
    the smallest point-box distance along the segment (a 1-D convex minimization)."""
    rng = np.random.default_rng(seed)
    robot = probe_robot(tmp_path, "capsule 0.05 0.4")
    cm = CollisionModel(robot, pairs=[])
    cm.add_obstacle("ball", sphere(0.1), [0.2, -0.1, 0.3])
    T_wc = pin.SE3(pin.rpy.rpyToMatrix(*rng.uniform(-1, 1, 3)), np.array([-0.5, 0.4, 0.1]))
    cm.add_obstacle("rod", capsule(0.07, 0.5), T_wc)
    half = np.array([0.15, 0.1, 0.2])
    T_wb = pin.SE3(pin.rpy.rpyToMatrix(*rng.uniform(-1, 1, 3)), np.array([0.4, 0.5, -0.4]))
    cm.add_obstacle("crate", box(2 * half), T_wb)
    for _ in range(5):
        q = probe_q(*rng.uniform(-0.6, 0.6, 3), *rng.uniform(-np.pi, np.pi, 2))
        a, b = segment_of(robot, q, 0.2)
        rows = cm.distances(q)
        expected = {
            "ball": point_segment(np.array([0.2, -0.1, 0.3]), a, b) - 0.15,
            "rod": segment_segment(a, b, T_wc.act(np.array([0, 0, -0.25])), T_wc.act(np.array([0, 0, 0.25]))) - 0.12,
            "crate": minimize_scalar(lambda t: point_box(T_wb.actInv(a + t * (b - a)), half), bounds=(0, 1),
                                     method="bounded", options={"xatol": 1e-10}).fun - 0.05,
        }
        for name, d in expected.items():
            i = rows.index("body", name)
            if name == "crate" and d < 0:
                continue  # inside the box the closed form is not a 1-D minimum of this kind
            assert rows.distance[i] == pytest.approx(d, abs=2e-5), name


def test_penetrating_capsules_have_negative_distance_and_the_normal_from_body_1_to_body_2(tmp_path):
    """Two parallel capsules 0.06 apart with radii 0.05 + 0.07: depth 0.06, so d = -0.06, the
    normal points from the probe (body 1) to the obstacle, and point2 = point1 + d n."""
    robot = probe_robot(tmp_path, "capsule 0.05 0.4")
    cm = CollisionModel(robot, pairs=[])
    cm.add_obstacle("rod", capsule(0.07, 0.4), [0.0, 0.0, 0.0])
    rows = cm.distances(probe_q(-0.06, 0.0, 0.0))
    assert rows.distance[0] == pytest.approx(-0.06, abs=1e-6)
    np.testing.assert_allclose(rows.normal[0], [1.0, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(rows.point2[0], rows.point1[0] + rows.distance[0] * rows.normal[0], atol=1e-9)
    assert rows.point1[0][0] == pytest.approx(-0.01, abs=1e-6)  # deepest point of the probe in the rod
    assert rows.point2[0][0] == pytest.approx(-0.07, abs=1e-6)  # deepest point of the rod in the probe
    # moving the probe along -n (away from the rod) increases d: J_d v > 0
    assert rows.jacobian[0] @ np.array([-1.0, 0, 0, 0, 0]) == pytest.approx(1.0, abs=1e-6)


def test_cylinders_that_pinocchio_does_not_turn_into_capsules_stay_cylinders(tmp_path):
    robot = probe_robot(tmp_path, '<cylinder radius="0.05" length="0.4"/>')
    cm = CollisionModel(robot, pairs=[])
    cm.add_obstacle("slab", cylinder(0.5, 0.02), [0.0, 0.0, 0.0])
    # the probe's flat end 0.3 above the slab's top face: a capsule would be 0.05 closer
    rows = cm.distances(probe_q(0.1, 0.1, 0.01 + 0.3 + 0.2))
    assert rows.distance[0] == pytest.approx(0.3, abs=1e-6)


# ---------------------------------------------------------------------------- finite differences
def assert_rates_match_finite_differences(cm, q, rng, *, within=math.inf, min_rows=1):
    """J_d v against (d(q + eps v) - d(q - eps v)) / 2 eps, per geometry pair, for random v.

    Separated pairs (GJK, repeatable to ~1e-10 m) use eps = 1e-5; overlapping ones (EPA, to
    ~1e-6 m) eps = 1e-3 and a looser tolerance. Rows near a kink (forward and backward
    differences disagree: the closest features switch) are skipped; `min_rows` are checked.
    """
    robot = cm.robot
    rows = cm.distances(q, within=within, per_geometry=True)
    checked = 0
    for _ in range(3):
        v = rng.normal(size=robot.nv)
        for eps, overlapping, tol in ((1e-5, False, 2e-5), (1e-3, True, 3e-3)):
            shifted = [cm.distances(pin.integrate(robot.model, q, s * eps * v), per_geometry=True, jacobians=False)
                       for s in (1.0, -1.0)]
            ip, im = ({g: i for i, g in enumerate(r.geometries)} for r in shifted)
            for i, g in enumerate(rows.geometries):
                d0 = rows.distance[i]
                if (d0 <= 0) != overlapping or g not in ip or g not in im:
                    continue
                dp, dm = shifted[0].distance[ip[g]], shifted[1].distance[im[g]]
                forward, backward = (dp - d0) / eps, (d0 - dm) / eps
                if abs(forward - backward) > 10 * tol * max(1.0, abs(forward)):
                    continue  # a kink: closest features switch here
                fd = (dp - dm) / (2 * eps)
                assert rows.jacobian[i] @ v == pytest.approx(fd, abs=tol * max(1.0, abs(fd))), (g, d0)
                checked += 1
    assert checked >= min_rows


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.slow
def test_dual_arm_distance_jacobians_match_finite_differences(seed):
    robot = reljac.Robot.bundled("dual_arm")
    cm = CollisionModel(robot)
    rng = np.random.default_rng(seed)
    assert_rates_match_finite_differences(cm, robot.random_configuration(rng), rng, within=0.3, min_rows=3)


def test_distance_jacobians_with_an_obstacle_on_a_moving_frame_match_finite_differences(rng):
    """A box carried by the left tool against the right arm: both bodies move."""
    robot = reljac.Robot.bundled("dual_arm")
    cm = CollisionModel(robot, pairs=[])
    cm.add_obstacle("carried", box((0.2, 0.1, 0.1)), pin.SE3(np.eye(3), np.array([0, 0, 0.12])),
                    frame="left_tool", links=["right_link5", "right_link6", "right_link7", "right_link8"])
    assert_rates_match_finite_differences(cm, DUAL_ARM_MEETING, rng, min_rows=4)


@pytest.mark.parametrize("seed", range(3))
def test_hand_distance_jacobians_match_finite_differences_with_mimic_joints(seed):
    """Distal phalanges move through mimic joints (q_dip = 0.8 q_pip)."""
    robot = reljac.Robot.bundled("hand")
    cm = CollisionModel(robot)
    rng = np.random.default_rng(10 + seed)
    assert_rates_match_finite_differences(cm, robot.random_configuration(rng), rng, within=0.05, min_rows=3)


def test_floating_base_robot_against_a_world_obstacle_matches_finite_differences(rng):
    robot = reljac.Robot.bundled("tree30")
    cm = CollisionModel(robot, pairs=[])
    cm.add_obstacle("floor", box((4.0, 4.0, 0.1)), [0.0, 0.0, -0.3])
    assert_rates_match_finite_differences(cm, robot.random_configuration(rng), rng, min_rows=2)


# ---------------------------------------------------------------------------- conventions, broad phase
@pytest.mark.parametrize("name", ["dual_arm", "hand"])
@pytest.mark.slow
def test_every_row_satisfies_the_conventions(name, rng):
    robot = reljac.Robot.bundled(name)
    cm = CollisionModel(robot)
    for _ in range(20):
        rows = cm.distances(robot.random_configuration(rng), per_geometry=True)
        np.testing.assert_allclose(np.linalg.norm(rows.normal, axis=1), 1.0, atol=1e-9)
        np.testing.assert_allclose(rows.point2, rows.point1 + rows.distance[:, None] * rows.normal, atol=1e-6)
        assert np.isfinite(rows.jacobian).all() and rows.jacobian.shape == (len(rows), robot.nv)


@pytest.mark.parametrize("name", ["dual_arm", "hand", "panda"])
@pytest.mark.slow
def test_broad_phase_keeps_every_pair_nearer_than_the_bound(name, rng):
    """compute(within=w) returns exactly the rows of the full query with d < w (robot links,
    mesh hulls, obstacles in the world and on a frame)."""
    if name == "panda":
        if ROBOTS is None:
            pytest.skip("needs example-robot-data")
        robot = reljac.Robot.from_urdf(ROBOTS / EXAMPLE_ROBOTS["panda"][0])
    else:
        robot = reljac.Robot.bundled(name)
    cm = CollisionModel(robot)
    frame = robot.model.frames[-1].name
    cm.add_obstacle("block", box((0.05, 0.04, 0.03)), [0.05, 0.0, 0.02], frame=frame)
    cm.add_obstacle("ball", sphere(0.03), [0.1, 0.05, 0.05])
    for _ in range(20):
        q = robot.random_configuration(rng)
        full = cm.distances(q, per_geometry=True)
        for within in (0.0, 0.005, 0.05, 0.2):
            near = cm.distances(q, within=within, per_geometry=True)
            expected = {g: d for g, d in zip(full.geometries, full.distance, strict=True) if d < within}
            assert dict(zip(near.geometries, near.distance, strict=True)) == pytest.approx(expected, rel=0, abs=1e-6)


@pytest.mark.slow
def test_without_pinocchios_collecting_callback_every_pair_is_measured(monkeypatch, rng):
    """Pinocchio 3 (the 3.8 that PlaCo pins) has no CollisionCallBackCollect: the rows are those of
    the full query with d < within all the same."""
    robot = reljac.Robot.bundled("dual_arm")
    monkeypatch.delattr(pin, "CollisionCallBackCollect", raising=False)
    cm = CollisionModel(robot)
    for _ in range(10):
        q = robot.random_configuration(rng)
        full = cm.distances(q, per_geometry=True)
        for within in (0.0, 0.05, 0.2):
            near = cm.distances(q, within=within, per_geometry=True)
            expected = {g: d for g, d in zip(full.geometries, full.distance, strict=True) if d < within}
            assert dict(zip(near.geometries, near.distance, strict=True)) == pytest.approx(expected, rel=0, abs=1e-6)


def test_a_pair_row_is_its_closest_geometry_row(rng):
    robot = reljac.Robot.bundled("dual_arm")
    cm = CollisionModel(robot)
    q = robot.random_configuration(rng)
    pairs, geometries = cm.distances(q), cm.distances(q, per_geometry=True)
    assert set(pairs.pairs) == set(cm.pairs)
    for i, pair in enumerate(pairs.pairs):
        mine = [d for p, d in zip(geometries.pairs, geometries.distance, strict=True) if p == pair]
        assert pairs.distance[i] == pytest.approx(min(mine), abs=1e-12)


def test_compute_on_kinematics_data_equals_distances_at_q(rng):
    robot = reljac.Robot.bundled("dual_arm")
    cm = CollisionModel(robot)
    q = robot.random_configuration(rng)
    kin = reljac.Kinematics(robot, q)
    a, b = cm.compute(kin.data, within=0.2), cm.distances(q, within=0.2)
    assert a.pairs == b.pairs
    np.testing.assert_array_equal(a.distance, b.distance)
    np.testing.assert_array_equal(a.jacobian, b.jacobian)


def test_pair_distance_orients_the_row_as_asked():
    robot = reljac.Robot.bundled("dual_arm")
    cm = CollisionModel(robot)
    ab = cm.pair_distance(DUAL_ARM_MEETING, "left_link8", "right_link8")
    ba = cm.pair_distance(DUAL_ARM_MEETING, "right_link8", "left_link8")
    assert ab.pairs == (("left_link8", "right_link8"),) and ba.pairs == (("right_link8", "left_link8"),)
    assert ab.distance[0] == ba.distance[0] > 0.1
    np.testing.assert_array_equal(ab.normal, -ba.normal)
    np.testing.assert_array_equal(ab.point1, ba.point2)
    np.testing.assert_array_equal(ab.jacobian, -ba.jacobian)


@pytest.mark.slow
def test_threads_sharing_a_model_get_the_serial_answers():
    robot = reljac.Robot.bundled("dual_arm")
    cm = CollisionModel(robot)
    qs = [robot.random_configuration(s) for s in range(8)]
    serial = [cm.distances(q, within=0.3).distance for q in qs]
    results = [None] * len(qs)

    def work(k):
        for _ in range(20):
            results[k] = cm.distances(qs[k], within=0.3).distance

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(qs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(serial, results, strict=True):  # GJK starts from the last answer: equal to its tolerance
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-8)


def test_rows_without_jacobians_and_empty_answers():
    robot = reljac.Robot.bundled("dual_arm")
    cm = CollisionModel(robot)
    rows = cm.distances(DUAL_ARM_MEETING, within=0.3, jacobians=False)
    assert len(rows) > 0 and rows.jacobian is None
    none = cm.distances(DUAL_ARM_MEETING, within=0.0)
    assert len(none) == 0 and none.distance.shape == (0,) and none.point1.shape == (0, 3)
    assert none.jacobian.shape == (0, robot.nv)
    with pytest.raises(ValueError, match="read-only"):  # shared between calls: not writable
        none.jacobian[...] = 1.0
    assert cm.distances(DUAL_ARM_MEETING, within=0.0, jacobians=False).jacobian is None


def test_the_callers_configuration_is_not_modified():
    robot = reljac.Robot.bundled("hand")
    q = robot.random_configuration(3)
    before = q.copy()
    CollisionModel(robot).distances(q)
    np.testing.assert_array_equal(q, before)


# ---------------------------------------------------------------------------- meshes


@needs_robots
@pytest.mark.slow
def test_panda_mesh_hulls_are_never_further_apart_than_the_meshes(rng):
    """The convex hull holds its mesh, so hull distances are lower bounds of mesh distances
    (equal where the closest points lie on the meshes); hull rows also pass the FD check."""
    robot = reljac.Robot.from_urdf(ROBOTS / EXAMPLE_ROBOTS["panda"][0])
    srdf = ROBOTS / "panda_description/srdf/panda.srdf"
    hulls = CollisionModel(robot, srdf=srdf)
    meshes = CollisionModel(robot, srdf=srdf, convex_meshes=False)
    assert hulls.pairs == meshes.pairs
    for _ in range(5):
        q = robot.random_configuration(rng)
        h, m = hulls.distances(q, jacobians=False), meshes.distances(q, jacobians=False)
        assert h.pairs == m.pairs
        assert (h.distance <= np.maximum(m.distance, 0.0) + 1e-6).all()
        assert (m.distance >= 0).all()
        # coal leaves the normal unset between triangle meshes: reljac's is p1 -> p2 (where the
        # meshes overlap, d = 0 and the two points are somewhere in the overlap)
        np.testing.assert_allclose(np.linalg.norm(m.normal, axis=1), 1.0, atol=1e-12)
        apart = m.distance > 1e-9
        np.testing.assert_allclose(m.point2[apart], (m.point1 + m.distance[:, None] * m.normal)[apart], atol=1e-9)
    assert_rates_match_finite_differences(hulls, robot.random_configuration(rng), rng, min_rows=5)


@needs_robots
def test_the_robots_own_collision_model_keeps_its_meshes():
    robot = reljac.Robot.from_urdf(ROBOTS / EXAMPLE_ROBOTS["panda"][0])
    cm = CollisionModel(robot)
    kinds = {type(o.geometry).__name__ for o in robot.collision_model.geometryObjects}
    assert "BVHModelOBBRSS" in kinds and "Convex" not in kinds
    mine = {type(o.geometry).__name__ for o in cm.geometry_model.geometryObjects}
    assert "Convex" in mine and "BVHModelOBBRSS" not in mine


@needs_robots
@pytest.mark.parametrize("name", sorted(EXAMPLE_ROBOTS))
@pytest.mark.slow
def test_example_robots_rows_keep_the_conventions_and_match_finite_differences(name, rng):
    """Every example-robot-data robot of the test helpers: default pairs, meshes as hulls."""
    path, floating = EXAMPLE_ROBOTS[name]
    robot = reljac.Robot.from_urdf(ROBOTS / path, floating_base=floating)
    cm = CollisionModel(robot)
    q = robot.random_configuration(rng)
    rows = cm.distances(q, within=0.1)
    np.testing.assert_allclose(np.linalg.norm(rows.normal, axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(rows.point2, rows.point1 + rows.distance[:, None] * rows.normal, atol=1e-6)
    assert_rates_match_finite_differences(cm, q, rng, within=0.1, min_rows=0)


@needs_robots
@pytest.mark.slow
def test_a_failed_penetration_search_is_retried_not_returned(monkeypatch):
    """coal's EPA returns -DBL_MAX when it fails (as it does on Baxter's cylinders with a too
    tight tolerance, forced here): such rows are computed again, never returned as distances."""
    robot = reljac.Robot.from_urdf(ROBOTS / EXAMPLE_ROBOTS["baxter"][0])
    cm = CollisionModel(robot)
    kernel = cm._kernel
    for request in kernel.data.distanceRequests:
        request.epa_tolerance = 1e-12
    retries = []
    original = type(kernel)._retry
    monkeypatch.setattr(type(kernel), "_retry", lambda self, k: retries.append(k) or original(self, k))
    rng = np.random.default_rng(0)
    for _ in range(100):
        rows = cm.distances(robot.random_configuration(rng), per_geometry=True, jacobians=False)
        assert (np.abs(rows.distance) < 10.0).all()
    if not retries:
        pytest.skip("this coal no longer fails here: the retry path was not exercised")

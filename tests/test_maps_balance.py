"""Balance-aware capability maps: the kept samples against a closed form (a two-joint arm on a
rectangular foot) and against Pinocchio's centerOfMass on the full Talos, subsets of the plain
map with the same seed, the hull test against reljac.support_polygon, the metadata in files, and
bad input."""

from __future__ import annotations

import json
import math
import zipfile

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac import SupportContact, support_polygon
from reljac.exceptions import FrameNotFound, MapError, SupportError
from reljac.maps import MapSupport, capability_map, load_map
from reljac.maps.balance import inside_hull
from reljac.maps.compiled import compiled_available
from reljac.maps.kernel import manipulability_of_rows
from reljac.maps.sampling import Sampler

pytestmark = pytest.mark.slow

BASE_MASS, ARM_MASS, ARM_COM = 2.0, 2.0, 0.5  # [kg], [kg], [m]: the arm's centre of mass along its x
FOOT = (0.4, 0.2)  # [m] the foot rectangle, centred under the base
URDF = f"""<robot name="stand">
  <link name="base_link"><inertial><origin xyz="0 0 0"/><mass value="{BASE_MASS}"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="foot"/>
  <joint name="foot_joint" type="fixed"><parent link="base_link"/><child link="foot"/></joint>
  <link name="turret"/>
  <joint name="yaw" type="revolute"><parent link="base_link"/><child link="turret"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/><limit lower="-3.1" upper="3.1" effort="1" velocity="1"/></joint>
  <link name="arm"><inertial><origin xyz="{ARM_COM} 0 0"/><mass value="{ARM_MASS}"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="pitch" type="revolute"><parent link="turret"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3.1" upper="3.1" effort="1" velocity="1"/></joint>
  <link name="tip"/>
  <joint name="tip_joint" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0.8 0 0"/></joint>
</robot>
"""
SAMPLES, SEED, VOXEL = 6_000, 5, 0.1
BACKENDS = ["python"] + (["compiled"] if compiled_available() else [])


@pytest.fixture(scope="module")
def stand_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("stand") / "stand.urdf"
    path.write_text(URDF)
    return path


@pytest.fixture(scope="module", params=[False, True], ids=["fixed base", "floating base"])
def stand(request, stand_path):
    return reljac.Robot.load(stand_path, floating_base=request.param)


def foot_support(margin: float = 0.0) -> MapSupport:
    return MapSupport([SupportContact.rectangle("foot", *FOOT)], margin=margin)


def closed_form_keep(robot: reljac.Robot, Q: np.ndarray, margin: float) -> np.ndarray:
    """The arm's centre of mass is at ARM_COM cos(pitch) (cos yaw, sin yaw) [m] from the base: the
    robot's at a fraction ARM_MASS / (BASE_MASS + ARM_MASS) of it; inside the foot shrunk by margin."""
    values = [robot.joint_values(q) for q in Q]
    yaw, pitch = (np.array([v[name] for v in values]) for name in ("yaw", "pitch"))
    reach = ARM_MASS / (BASE_MASS + ARM_MASS) * ARM_COM * np.cos(pitch)
    x, y = reach * np.cos(yaw), reach * np.sin(yaw)
    return (np.abs(x) <= FOOT[0] / 2 - margin) & (np.abs(y) <= FOOT[1] / 2 - margin)


def expected_map(robot: reljac.Robot, cmap, Q: np.ndarray, keep: np.ndarray):
    """counts and best_index (rows vx, vz) of the kept samples, binned from Pinocchio's own placements."""
    grid = cmap.grid
    kept = np.flatnonzero(keep)
    T = np.array([reljac.relative_placement(robot, Q[i], "base_link", "tip").homogeneous for i in kept])
    J = np.array([reljac.relative_jacobian(robot, Q[i], "base_link", "tip") for i in kept])
    cells = np.floor((T[:, :3, 3] - grid.origin) / grid.voxel).astype(int)
    flat = np.ravel_multi_index(tuple(cells.T), grid.dims)
    counts = np.bincount(flat, minlength=grid.size).reshape(grid.dims)
    m = manipulability_of_rows(J, (0, 2))  # the tip moves on a sphere: 3 rows would all rate 0
    best = {}
    for f, mi, i in zip(flat, m, kept, strict=True):  # largest, then smallest index
        if f not in best or mi > best[f][0]:
            best[f] = (mi, i)
    return counts, {f: i for f, (_, i) in best.items()}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("margin", [0.0, 0.03])
def test_the_kept_samples_are_exactly_those_of_the_closed_form(stand, backend, margin):
    cmap = capability_map(stand, "base_link", "tip", samples=SAMPLES, voxel=VOXEL, seed=SEED, chunk=1_000,
                          workers=2, backend=backend, support=foot_support(margin), part=("vx", "vz"))
    Q = Sampler(stand, SEED).draw(0, SAMPLES)
    if stand.floating_base:  # held where the reference puts it, not drawn
        Q[:, :7] = stand.reference_configuration()[:7]
    keep = closed_form_keep(stand, Q, margin)
    assert 0.2 < keep.mean() < 0.8
    assert cmap.rejected == int((~keep).sum())
    counts, best = expected_map(stand, cmap, Q, keep)
    np.testing.assert_array_equal(cmap.counts, counts)
    reached = np.flatnonzero(cmap.counts.ravel())
    assert {int(f): int(cmap.best_index.ravel()[f]) for f in reached} == best
    np.testing.assert_array_equal(cmap.best_q, Q[cmap.best_index.ravel()[reached]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_balance_aware_map_is_a_subset_of_the_plain_one(stand, backend):
    args = dict(samples=SAMPLES, voxel=VOXEL, seed=SEED, backend=backend, part=("vx", "vz"))
    plain = capability_map(stand, "base_link", "tip", **args)
    balanced = capability_map(stand, "base_link", "tip", support=foot_support(0.01), **args)
    assert np.all(balanced.counts <= plain.counts) and balanced.counts.sum() < plain.counts.sum()
    assert balanced.counts.sum() + balanced.metadata["outside"] + balanced.rejected == SAMPLES
    assert np.all(balanced.coverage & ~plain.coverage == 0)
    # (the Python kinematics go through the world: a drawn or a held base changes J_ab's last bits)
    assert np.all(balanced.best_manipulability <= plain.best_manipulability + 1e-12)
    assert plain.support is None and plain.rejected == 0


def test_the_map_does_not_depend_on_chunks_or_threads(stand):
    args = dict(samples=SAMPLES, voxel=VOXEL, seed=SEED, support=foot_support(0.02))
    one = capability_map(stand, "base_link", "tip", workers=1, **args)
    many = capability_map(stand, "base_link", "tip", workers=2, chunk=777, **args)
    assert one == many


@pytest.fixture(scope="module")
def talos():
    robot = reljac.Robot.load("talos")
    return robot, robot.locked(["root_joint", "leg_*"])


def test_talos_standing_keeps_the_samples_pinocchio_keeps_on_the_full_model(talos):
    """Legs and base locked at half_sitting: the kept samples are those whose full-model
    pin.centerOfMass is inside the soles' rectangle shrunk by the margin (closed form: both soles
    lie flat at z = 0 there)."""
    full, upper = talos
    soles = MapSupport([SupportContact.rectangle(f, 0.2, 0.1) for f in ("left_sole_link", "right_sole_link")], 0.02)
    samples = 2_000
    cmap = capability_map(upper, "arm_left_7_link", "arm_right_7_link", samples=samples, voxel=0.1, seed=1,
                          support=soles)
    Q = Sampler(upper, 1).draw(0, samples)
    q_full = full.reference_configuration()
    data = full.model.createData()
    pin.framesForwardKinematics(full.model, data, q_full)
    corners = np.vstack([c.points @ data.oMf[full.frame_id(c.frame)].rotation.T
                         + data.oMf[full.frame_id(c.frame)].translation for c in soles.contacts])
    lo, hi = corners[:, :2].min(axis=0) + 0.02, corners[:, :2].max(axis=0) - 0.02  # soles side by side, level
    keep = np.empty(samples, dtype=bool)
    for s, q in enumerate(Q):
        for name, value in upper.joint_values(q).items():
            q_full[full.model.joints[full.model.getJointId(name)].idx_q] = value
        c = pin.centerOfMass(full.model, data, q_full)
        keep[s] = np.all(c[:2] >= lo) and np.all(c[:2] <= hi)
    assert 0.1 < keep.mean() < 0.9
    assert cmap.rejected == int((~keep).sum())
    assert cmap.support["held"] == [] and [c["frame"] for c in cmap.support["contacts"]] == \
        ["left_sole_link", "right_sole_link"]


def test_a_floating_talos_is_held_at_half_sitting(talos):
    full, _ = talos
    soles = MapSupport([SupportContact.rectangle(f, 0.2, 0.1) for f in ("left_sole_link", "right_sole_link")])
    cmap = capability_map(full, "arm_left_7_link", "arm_right_7_link", samples=300, voxel=0.1, seed=2, support=soles)
    assert cmap.support["held"] == ["root_joint"]
    np.testing.assert_array_equal(cmap.best_q[:, :7], np.tile(full.configuration("half_sitting")[:7],
                                                               (len(cmap.best_q), 1)))


def test_the_hull_test_agrees_with_support_polygon(rng):
    """Random point sets (some collinear, some repeated) and centres: inside_hull against
    reljac.support_polygon(...).shrunk(margin).contains (Andrew's monotone chain and clipping)."""
    n, k = 1_500, 6
    P = rng.uniform(-1, 1, (n, k, 2))
    P[: n // 10, :, 1] = 0.3 * P[: n // 10, :, 0]         # all on one line: no area
    P[n // 10: n // 5, 3:] = P[n // 10: n // 5, :3]         # repeated points
    c = rng.uniform(-0.7, 0.7, (n, 2))
    for margin in (0.0, 0.1):
        expected = np.empty(n, dtype=bool)
        for s in range(n):
            try:
                expected[s] = support_polygon(P[s]).shrunk(margin).contains(c[s])
            except SupportError:
                expected[s] = False
        got = inside_hull(c, P, margin)
        assert 0.15 < expected.mean() < 0.85
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("scale", [1.0, 1e-3])
def test_the_hull_test_and_support_polygon_share_one_collinear_tolerance(scale):
    """A triangle whose apex is `offset` x scale off its base's line, the centre at its centroid:
    near the tolerance (COLLINEAR_TOLERANCE x scale^2 on the cross product, i.e. 1e-12 x scale off
    the line) both tests say the same (no area below, the centroid inside above)."""
    verdicts = []
    for offset in (1e-14, 1e-13, 1e-11, 1e-10, 1e-6):
        P = scale * np.array([[[0.0, 0.0], [1.0, 0.0], [0.5, offset]]])
        c = P[0].mean(axis=0)[None]
        try:
            expected = support_polygon(P[0]).contains(c[0])
        except SupportError:
            expected = False
        assert inside_hull(c, P, 0.0)[0] == expected, offset
        verdicts.append(expected)
    assert verdicts == [False, False, True, True, True]  # the tolerance sits between 1e-13 and 1e-11


def test_a_saved_map_says_it_is_balance_aware(stand, tmp_path):
    cmap = capability_map(stand, "base_link", "tip", samples=2_000, voxel=VOXEL, seed=1, support=foot_support(0.02))
    loaded = load_map(cmap.save(tmp_path / "stand.npz"))
    assert loaded == cmap
    assert loaded.support["margin"] == 0.02 and loaded.support["plane"] == "world x-y"
    np.testing.assert_array_equal(loaded.support["contacts"][0]["points"], foot_support().contacts[0].points)
    assert loaded.rejected == cmap.rejected > 0
    assert f"balance-aware: {cmap.rejected} rejected" in repr(loaded)


@pytest.mark.parametrize("support", [{"contacts": [], "margin": 0, "plane": "x", "held": [], "rejected": 0},
                                     {"contacts": [{"frame": "f", "points": [[0, 0, math.nan]]}], "margin": 0,
                                      "plane": "x", "held": [], "rejected": 0},
                                     "soles"],
                         ids=["no contacts", "NaN point", "text"])
def test_a_file_with_a_corrupted_support_entry_is_refused(stand, tmp_path, support):
    path = capability_map(stand, "base_link", "tip", samples=500, voxel=VOXEL, support=foot_support()).save(
        tmp_path / "m.npz")
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    with np.load(path) as arrays:
        metadata = json.loads(str(arrays["metadata"]))
    metadata["support"] = support
    bad = tmp_path / "bad.npz"
    arrays = {name[:-4]: np.load(path)[name[:-4]] for name in members if name != "metadata.npy"}
    np.savez_compressed(bad, metadata=np.array(json.dumps(metadata, allow_nan=True)), **arrays)
    with pytest.raises(MapError, match="metadata field 'support'"):
        load_map(bad)


def test_bad_supports_are_one_reljac_error(stand):
    args = dict(samples=100, voxel=VOXEL)
    with pytest.raises(MapError, match="support must be a reljac.maps.MapSupport"):
        capability_map(stand, "base_link", "tip", support=[SupportContact.rectangle("foot", *FOOT)], **args)
    with pytest.raises(SupportError, match="non-empty list"):
        MapSupport([])
    with pytest.raises(SupportError, match="margin"):
        MapSupport([SupportContact.rectangle("foot", *FOOT)], margin=-0.1)
    with pytest.raises(FrameNotFound, match="did you mean 'foot'"):
        capability_map(stand, "base_link", "tip", support=MapSupport([SupportContact.rectangle("fot", *FOOT)]),
                       **args)
    with pytest.raises(SupportError, match="leaves nothing of the support region"):
        capability_map(stand, "base_link", "tip", support=foot_support(0.15), **args)
    with pytest.raises(SupportError, match="span no area"):
        capability_map(stand, "base_link", "tip", support=MapSupport([SupportContact("foot", [[0, 0, 0],
                                                                                              [1, 0, 0]])]), **args)

def test_a_robot_without_mass_is_refused(tmp_path):
    path = tmp_path / "massless.urdf"
    path.write_text(URDF.replace(f'<mass value="{BASE_MASS}"/>', '<mass value="0"/>')
                    .replace(f'<mass value="{ARM_MASS}"/>', '<mass value="0"/>'))
    with pytest.raises(SupportError, match="no mass"):
        capability_map(reljac.Robot.load(path), "base_link", "tip", samples=10, voxel=VOXEL, support=foot_support())


def test_a_support_region_from_reljac_ik_is_taken_when_it_is_in_the_world(stand):
    from reljac.ik.limits.support import SupportRegion

    region = SupportRegion(stand, [SupportContact.rectangle("foot", *FOOT)], margin=0.03)
    by_region = capability_map(stand, "base_link", "tip", samples=1_000, voxel=VOXEL, support=region)
    assert by_region == capability_map(stand, "base_link", "tip", samples=1_000, voxel=VOXEL,
                                       support=foot_support(0.03))
    with pytest.raises(MapError, match="world's x-y plane"):
        capability_map(stand, "base_link", "tip", samples=10, voxel=VOXEL,
                       support=SupportRegion(stand, region.contacts, frame="arm"))

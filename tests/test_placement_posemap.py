"""Pose maps (reljac.placement.pose_map): the sweeps turn a pose as stated (against Pinocchio's
kinematics at the swept angles), the coordinates rebuild the pose, a map reaches every pose its
samples sweep through, the same map for any chunking, thread count and backend, seeds land near
their pose, and a map file read back equals the map (a corrupted one is one MapError)."""

from __future__ import annotations

import math
import zipfile

import numpy as np
import pinocchio as pin
import pytest

from reljac import Robot
from reljac.exceptions import MapError
from reljac.maps import relative_kinematics
from reljac.maps.sampling import Sampler
from reljac.placement import load_maps, load_pose_map, mobile_base, pose_map, save_maps
from reljac.placement.orbits import coordinates, orbits

A, B = "torso_yaw", "left_tool"  # the frame dual_arm's two hands hang from, and a hand
SAMPLES = 5_000


@pytest.fixture(scope="module")
def robot():
    return mobile_base(Robot.bundled("dual_arm")).robot


@pytest.fixture(scope="module")
def pmap(robot):
    return pose_map(robot, A, B, samples=SAMPLES, seed=3, workers=2)


@pytest.fixture(scope="module")
def small(robot):
    return pose_map(robot, A, B, samples=1000, seed=3)


def _rz(angle: float) -> np.ndarray:
    T = np.eye(4)
    T[:2, :2] = [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]
    return T


def test_the_sweeps_turn_the_pose_about_their_axes(robot, rng):
    sweeps = orbits(robot, robot.frame_id(A), robot.frame_id(B))
    assert sweeps.first == "left_joint1" and sweeps.last == "left_joint7"
    Q = np.array([robot.random_configuration(rng) for _ in range(8)])
    sweeps.hold(robot, Q)
    T0 = sweeps.to_swept(relative_kinematics(robot, Q, A, B)[0])
    for d1, d7 in rng.uniform(0, 1, (4, 2)):
        turned = Q.copy()
        for name, d, (lo, hi) in ((sweeps.first, d1, sweeps.first_range), (sweeps.last, d7, sweeps.last_range)):
            turned[:, robot.model.joints[robot.model.getJointId(name)].idx_q] = lo + d * (hi - lo)
        T = sweeps.to_swept(relative_kinematics(robot, turned, A, B)[0])
        a = d1 * np.diff(sweeps.first_range)[0]
        g = d7 * np.diff(sweeps.last_range)[0]
        np.testing.assert_allclose(T, _rz(a) @ T0 @ _rz(g), atol=1e-12)


def test_the_coordinates_rebuild_the_pose(rng):
    R = np.array([pin.rpy.rpyToMatrix(*rng.uniform(-3, 3, 3)) for _ in range(50)])
    T = np.tile(np.eye(4), (50, 1, 1))
    T[:, :3, :3], T[:, :3, 3] = R, rng.uniform(-1, 1, (50, 3))
    rho, z, psi, cos_beta, phi, gamma, north, south = coordinates(T)
    p = np.column_stack([rho * np.cos(phi), rho * np.sin(phi), z])
    rebuilt = [pin.rpy.rpyToMatrix(0, 0, s + f) @ pin.rpy.rpyToMatrix(0, math.acos(c), 0) @ pin.rpy.rpyToMatrix(0, 0, g)
               for s, f, c, g in zip(psi, phi, cos_beta, gamma, strict=True)]
    np.testing.assert_allclose(p, T[:, :3, 3], atol=1e-12)
    np.testing.assert_allclose(np.array(rebuilt), R, atol=1e-9)
    wrap = lambda x: np.mod(x + math.pi, 2 * math.pi) - math.pi  # noqa: E731
    np.testing.assert_allclose(wrap(north - (gamma + psi)), 0.0, atol=1e-9)  # the polar rolls, where ZYZ is defined
    np.testing.assert_allclose(wrap(south - (gamma - psi)), 0.0, atol=1e-9)


@pytest.mark.parametrize("tilt", [1e-3, 1e-9, 0.0])
def test_the_polar_rolls_are_continuous_through_the_poles(tilt):
    """A hand pointing straight down (beta = pi: alpha and gamma apart are undefined) keeps the
    roll it has a hair's breadth away."""
    a, g, phi = 0.7, -1.9, 0.4
    for beta, roll_of, expected in ((math.pi - tilt, 7, phi - (a - g)), (tilt, 6, a + g - phi)):
        T = np.eye(4)[None].copy()
        T[0, :3, :3] = pin.rpy.rpyToMatrix(0, 0, a) @ pin.rpy.rpyToMatrix(0, beta, 0) @ pin.rpy.rpyToMatrix(0, 0, g)
        T[0, :3, 3] = [math.cos(phi), math.sin(phi), 0.3]
        roll = coordinates(T)[roll_of][0]
        assert abs(math.remainder(roll - expected, 2 * math.pi)) < 1e-6


def test_a_map_reaches_every_pose_its_samples_sweep_through(robot, pmap, rng):
    """Sample i with its swept joints anywhere half a bin inside their range is in the map."""
    Q = Sampler(robot, 3).draw(0, 2000)
    sweeps, grid = pmap.orbits, pmap.grid
    for name, (lo, hi), bins in ((sweeps.first, sweeps.first_range, grid.n_phi),
                                 (sweeps.last, sweeps.last_range, grid.n_gamma)):
        half = math.pi / bins
        Q[:, robot.model.joints[robot.model.getJointId(name)].idx_q] = lo + half + rng.random(len(Q)) * (
            hi - lo - 2 * half)
    T = relative_kinematics(robot, Q, A, B)[0]
    assert pmap.reached(T).all()
    # and a pose no arm reaches (2 m away) is not
    far = T[:5].copy()
    far[:, 0, 3] += 2.0
    assert not pmap.reached(far).any()


def test_the_map_is_the_same_for_any_chunking_threads_and_backend(robot, pmap):
    one = pose_map(robot, A, B, samples=SAMPLES, seed=3, workers=1, chunk=1301)
    assert one == pmap
    few = pose_map(robot, A, B, samples=1500, seed=3, workers=2, chunk=700)
    python = pose_map(robot, A, B, samples=1500, seed=3, workers=1, backend="python")
    for name in ("keys", "masks", "cells", "best_index"):  # the binning: exact (no sample on a bin's edge)
        np.testing.assert_array_equal(getattr(python, name), getattr(few, name))
    np.testing.assert_allclose(python.best_manipulability, few.best_manipulability, rtol=1e-12)
    np.testing.assert_allclose(python.best_q, few.best_q, atol=1e-14)


def test_a_seed_puts_the_hand_within_its_cell_of_the_pose(robot, pmap):
    Q = Sampler(robot, 11).draw(0, 300)
    T = relative_kinematics(robot, Q, A, B)[0]
    reached, _, rows = pmap.locate(T)
    assert reached.sum() > 10
    seeds = pmap.seeds(T[reached], rows[reached])
    q = np.repeat(robot.neutral()[None], reached.sum(), axis=0)
    columns = np.concatenate([np.arange(at, at + n) for at, n in zip(pmap.metadata["joint_q"],
                                                                      pmap.metadata["joint_nq"], strict=True)])
    q[:, columns] = seeds
    got = relative_kinematics(robot, q, A, B)[0]
    # within a cell: 2 voxels of rho and z, plus half the phi bin's arc at 1 m
    distance = np.linalg.norm(got[:, :3, 3] - T[reached][:, :3, 3], axis=1)
    assert np.quantile(distance, 0.9) < 2 * pmap.grid.voxel + 0.05
    assert np.isnan(pmap.seeds(T[:1], np.array([-1]))).all()


def test_a_map_file_reads_back_equal(robot, small, tmp_path):
    path = small.save(tmp_path / "one")
    assert path.suffix == ".npz" and load_pose_map(path) == small
    both = save_maps(tmp_path / "two.npz", [small, pose_map(robot, A, "right_tool", samples=1000)])
    maps = load_maps(both)
    assert set(maps) == {"left_tool", "right_tool"} and maps["left_tool"] == small
    with pytest.raises(MapError, match="holds 2 pose maps"):
        load_pose_map(both)


def _text(data: bytes, old: str, new: str) -> bytes:
    """The metadata member (a numpy unicode scalar: UTF-32) with `old` replaced by `new` (same length)."""
    changed = data.replace(old.encode("utf-32-le"), new.encode("utf-32-le"))
    assert changed != data
    return changed


def _rewrite(src, dst, change):
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w") as new:
        for info in old.infolist():
            data = change(info.filename, old.read(info.filename))
            if data is not None:
                new.writestr(info, data)


def _array(data: bytes, value: float) -> bytes:
    """An .npy member with its first entry set to `value`."""
    import io

    x = np.load(io.BytesIO(data))
    x.reshape(-1)[0] = value
    out = io.BytesIO()
    np.save(out, x)
    return out.getvalue()


@pytest.mark.parametrize(("change", "match"), [
    (lambda name, data: data[: len(data) // 2] if name == "m0_keys.npy" else data, "truncated"),
    (lambda name, data: _array(data, np.nan) if name == "m0_best_manipulability.npy" else data, "manipulabilities"),
    (lambda name, data: _array(data, -1.0) if name == "m0_best_manipulability.npy" else data, "manipulabilities"),
    (lambda name, data: None if name == "m0_masks.npy" else data, "no m0_masks"),
    (lambda name, data: _text(data, '"n_gamma": 24', '"n_gamma": 99') if name == "metadata.npy" else data,
     "n_gamma"),
    (lambda name, data: _text(data, "reljac.pose_maps", "reljac.pose_mapz") if name == "metadata.npy" else data,
     "not a reljac pose map file"),
])
def test_a_corrupted_map_file_is_one_map_error(small, tmp_path, change, match):
    path = small.save(tmp_path / "good.npz")
    bad = tmp_path / "bad.npz"
    _rewrite(path, bad, change)
    with pytest.raises(MapError, match=match):
        load_pose_map(bad)
    (tmp_path / "text.npz").write_text("not a zip")
    with pytest.raises(MapError, match="not a readable"):
        load_pose_map(tmp_path / "text.npz")
    with pytest.raises(MapError, match="pose map file"):
        load_pose_map(tmp_path / "missing.npz")


def test_a_frame_not_on_the_hand_chain_is_refused(robot):
    with pytest.raises(MapError, match="not on the chain"):
        pose_map(robot, "right_tool", B, samples=10)


@pytest.mark.slow
def test_the_map_is_the_same_on_a_dask_cluster(robot, pmap):
    pytest.importorskip("distributed")
    on_dask = pose_map(robot, A, B, samples=SAMPLES, seed=3, scheduler="local", workers=2, chunk=1700)
    assert on_dask.same_arrays(pmap)


def test_the_rigid_inverse_is_the_inverse(rng):
    from reljac.placement.orbits import rigid_inverse

    T = np.tile(np.eye(4), (20, 1, 1))
    T[:, :3, :3] = [pin.rpy.rpyToMatrix(*rng.uniform(-3, 3, 3)) for _ in range(20)]
    T[:, :3, 3] = rng.uniform(-5, 5, (20, 3))
    np.testing.assert_allclose(rigid_inverse(T), np.linalg.inv(T), atol=1e-12)
    np.testing.assert_allclose(rigid_inverse(T[0]) @ T[0], np.eye(4), atol=1e-12)


def test_a_map_of_the_robot_locked_elsewhere_is_refused(tmp_path):
    """An adversarial pass: maps of a Panda with panda_joint4 locked at -0.3, reused for the Panda
    locked at -2.8 (same name, nq, frames and chain indices), answered for the wrong arm. A map now
    records the joints of q's columns and the locked values, as a capability map does."""
    from reljac.placement import placement_maps, with_maps

    panda = Robot.load("panda")
    here = mobile_base(panda.locked({"panda_joint4": -0.3}), height=0.6)
    path = save_maps(tmp_path / "panda.npz", placement_maps(here, ["panda_hand"], samples=2000, workers=1))
    loaded = load_maps(path)
    assert loaded["panda_hand"].metadata["locked"] == {"panda_joint4": -0.3}
    with_maps(here, ["panda_hand"], loaded)  # the same robot: taken
    elsewhere = mobile_base(panda.locked({"panda_joint4": -2.8}), height=0.6)
    with pytest.raises(MapError, match=r"the pose map is of robot 'panda' with its joints locked at "
                                       r"\{'panda_joint4': -0.3\}, not at \{'panda_joint4': -2.8\}"):
        with_maps(elsewhere, ["panda_hand"], loaded)
    other_joint = mobile_base(panda.locked({"panda_joint3": -0.3}), height=0.6)
    with pytest.raises(MapError, match="with other joints (free|locked)"):
        with_maps(other_joint, ["panda_hand"], loaded)


@pytest.mark.parametrize("where, match", [("missing/maps.npz", "its folder does not exist"),
                                          ("folder.npz", "is a directory")])
def test_maps_saved_where_no_file_can_be_written_is_one_map_error(small, tmp_path, where, match):
    """save_maps into a missing folder (or /proc, as root) raised a bare FileNotFoundError, and
    `reljac place --maps` called it 'a reljac bug' after building the maps."""
    (tmp_path / "folder.npz").mkdir()
    with pytest.raises(MapError, match=f"pose map file '.*{where}'.* {match}"):
        save_maps(tmp_path / where, [small])


def test_a_voxel_beyond_the_maps_bound_is_refused():
    """A review: pose_map took voxel = 1e300 m (a map of 450 cells), which reljac map refuses."""
    with pytest.raises(MapError, match="voxel must be at most 1000 m"):
        pose_map(Robot.bundled("dual_arm"), "torso", "left_tool", samples=100, voxel=1e300)

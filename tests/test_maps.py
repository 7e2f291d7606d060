"""Capability maps against closed forms on the planar 2-link arm, and their parts (sampler, grid
bound, reduction, file, IK seeds) against slower or independent computations."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from helpers import random_pairs

import reljac
from reljac.maps import capability_map, load_map, seed_for
from reljac.maps.compiled import compiled_available, python_relative_kinematics
from reljac.maps.grid import fibonacci_directions, make_grid, reach_bound
from reljac.maps.kernel import Accumulator, Job, manipulability_of_rows, merge_partials, merge_partials_numpy, run_chunk
from reljac.maps.sampling import BLOCK, Sampler

L1, L2 = 1.0, 0.8  # planar_2link's links (see urdf/planar_2link.urdf)
Q2_LIMIT = 3.1
R_MIN = math.sqrt(L1**2 + L2**2 + 2 * L1 * L2 * math.cos(Q2_LIMIT))  # |q2| <= 3.1
R_MAX = L1 + L2


@pytest.fixture(scope="module")
def planar_map(planar):
    return capability_map(planar, "base_link", "tip", samples=200_000, voxel=0.1, part=("vx", "vy"), seed=3)


def square_distances(cmap, flat):
    """Smallest and largest distance from the z axis to each voxel's x-y square."""
    c = cmap.grid.centers(flat)[:, :2]
    h = cmap.grid.voxel / 2
    nearest = np.clip(0.0, c - h, c + h)
    farthest = np.abs(c) + h
    return np.linalg.norm(nearest, axis=1), np.linalg.norm(farthest, axis=1)


@pytest.mark.slow
def test_the_reachable_annulus_matches_the_closed_form(planar_map):
    grid = planar_map.grid
    flat = np.arange(grid.size)
    centers = grid.centers(flat)
    near, far = square_distances(planar_map, flat)
    in_plane = np.abs(centers[:, 2]) < grid.voxel / 2  # the voxel layer that holds z = 0
    # q1 in [-3.1, 3.1] leaves a thin wedge around the -x axis unreached near r = R_MAX: skip it.
    by_the_wedge = (centers[:, 0] < 0) & (np.abs(centers[:, 1]) < 0.25)
    inside = in_plane & (near > R_MIN) & (far < R_MAX) & ~by_the_wedge
    outside = ~in_plane | (far < R_MIN) | (near > R_MAX)
    reached = planar_map.reached.ravel()
    assert inside.sum() > 500 and outside.sum() > 1000
    assert reached[inside].all(), f"{(~reached[inside]).sum()} voxels inside the annulus not reached"
    assert not reached[outside].any(), f"{reached[outside].sum()} voxels outside the annulus reached"
    assert planar_map.metadata["outside"] == 0
    assert planar_map.counts.sum() == planar_map.metadata["samples"] == 200_000


def test_best_manipulability_is_within_the_closed_form_range_of_its_voxel(planar_map):
    """|det J_xy| = L1 L2 |sin q2|, with cos q2 = (r^2 - L1^2 - L2^2) / (2 L1 L2) at tip radius r."""
    flat = planar_map.reached_voxels()
    near, far = square_distances(planar_map, flat)

    def w(r):
        c = np.clip((r**2 - L1**2 - L2**2) / (2 * L1 * L2), -1.0, 1.0)
        return L1 * L2 * np.sqrt(1.0 - c**2)

    lo, hi = np.maximum(near, R_MIN), np.minimum(far, R_MAX)
    peak = math.sqrt(L1**2 + L2**2)  # q2 = pi/2: w = L1 L2, its largest; w rises then falls with r
    highest = np.where((lo <= peak) & (peak <= hi), L1 * L2, np.maximum(w(lo), w(hi)))
    lowest = np.minimum(w(lo), w(hi))
    best = planar_map.best_manipulability.ravel()[flat]
    assert np.all(best <= highest + 1e-12)
    assert np.all(best >= lowest - 1e-12)
    assert np.all(best > 0)


def test_best_q_reproduces_its_voxel_and_manipulability(planar, planar_map):
    flat = planar_map.reached_voxels()
    pick = flat[:: max(1, flat.size // 60)]
    Q = np.array([planar_map.best_q_at(f) for f in pick])
    T, J = python_relative_kinematics(planar, Q, "base_link", "tip")
    assert [planar_map.grid.flat_index(p) for p in T[:, :3, 3]] == list(pick)
    np.testing.assert_allclose(manipulability_of_rows(J, (0, 1)), planar_map.best_manipulability.ravel()[pick],
                               rtol=1e-12)
    sampler = Sampler(planar, seed=3)
    index = planar_map.best_index.ravel()[pick]
    np.testing.assert_array_equal(sampler.configurations_at(index), Q)


def test_coverage_holds_the_one_direction_of_a_planar_tip(planar_map):
    """The tip's z axis is the base's z axis: only the direction nearest +z is ever reached."""
    up = int(np.argmax(fibonacci_directions(32) @ [0.0, 0.0, 1.0]))
    reached = planar_map.reached
    assert np.all(planar_map.coverage[reached] == np.uint64(1) << np.uint64(up))
    np.testing.assert_allclose(planar_map.coverage_index()[reached], 1 / 32)
    assert np.all(planar_map.coverage[~reached] == 0)


def test_a_saved_map_loads_back_equal(planar_map, tmp_path):
    path = planar_map.save(tmp_path / "planar")
    assert path.suffix == ".npz"
    loaded = load_map(path)
    assert loaded == planar_map
    assert loaded.metadata["robot"] == "planar_2link" and loaded.metadata["frame_b"] == "tip"


def test_load_refuses_what_is_not_a_map(tmp_path):
    with pytest.raises(reljac.ReljacError, match="does not exist"):
        load_map(tmp_path / "nothing.npz")
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(reljac.ReljacError, match="not a reljac capability map"):
        load_map(tmp_path / "other.npz")
    (tmp_path / "broken.npz").write_bytes(b"not a zip")
    with pytest.raises(reljac.ReljacError, match="not a readable"):
        load_map(tmp_path / "broken.npz")


def test_seed_for_picks_the_best_q_of_the_voxel_holding_the_target(planar, planar_map):
    rng = np.random.default_rng(1)
    for _ in range(10):
        T = reljac.relative_placement(planar, planar.random_configuration(rng), "base_link", "tip")
        q = seed_for(planar_map, T)
        target_voxel = planar_map.grid.flat_index(T.translation)
        assert planar_map.reached.ravel()[target_voxel]
        np.testing.assert_array_equal(q, planar_map.best_q_at(target_voxel))
        p = reljac.relative_placement(planar, q, "base_link", "tip").translation
        assert np.linalg.norm(p - T.translation) <= math.sqrt(3) * planar_map.grid.voxel


def test_seed_for_with_the_robot_picks_the_candidate_closest_in_pose(planar, planar_map):
    rng = np.random.default_rng(4)
    for _ in range(5):
        T = reljac.relative_placement(planar, planar.random_configuration(rng), "base_link", "tip")
        q = seed_for(planar_map, T, robot=planar, candidates=9)
        flat = planar_map.reached_voxels()
        nearest = np.argsort(np.linalg.norm(planar_map.grid.centers(flat) - T.translation, axis=1), kind="stable")[:9]

        def score(qc):
            S = reljac.relative_placement(planar, qc, "base_link", "tip")
            angle = np.linalg.norm(pin.log3(S.rotation.T @ T.rotation))
            return np.linalg.norm(S.translation - T.translation) + 0.1 * angle

        scores = [score(planar_map.best_q[i]) for i in nearest]
        assert score(q) == pytest.approx(min(scores), abs=1e-12)
        assert score(q) <= score(seed_for(planar_map, T)) + 1e-12
    with pytest.raises(reljac.ReljacError, match="not of 'dual_arm'"):
        seed_for(planar_map, T, robot=reljac.Robot.bundled("dual_arm"))


def test_seed_for_an_unreachable_target_takes_the_nearest_reached_voxel(planar_map):
    q = seed_for(planar_map, [5.0, 0.0, 0.0])  # far outside: the outer rim towards +x
    flat = planar_map.reached_voxels()
    centers = planar_map.grid.centers(flat)
    nearest = centers[np.argmin(np.linalg.norm(centers - [5.0, 0, 0], axis=1))]
    assert nearest[0] > R_MAX - 0.2 and abs(nearest[1]) < 0.2
    assert any(np.array_equal(q, planar_map.best_q_at(f)) for f in flat[np.all(centers == nearest, axis=1)])
    with pytest.raises(reljac.TaskError):
        seed_for(planar_map, [1.0, np.nan, 0.0])


# ----------------------------------------------------------------------------------------- parts
@pytest.mark.parametrize("name", ["tree30", "hand", "dual_arm"])
def test_any_range_of_samples_is_drawn_alike_and_inside_the_limits(name):
    robot = reljac.Robot.bundled(name)
    sampler = Sampler(robot, seed=9)
    whole = sampler.draw(BLOCK - 40, BLOCK + 40)
    np.testing.assert_array_equal(sampler.draw(BLOCK - 3, BLOCK + 2), whole[37:42])
    np.testing.assert_array_equal(sampler.configurations_at([BLOCK + 39, BLOCK - 40]), whole[[79, 0]])
    picks = np.r_[np.arange(BLOCK - 100, BLOCK + 100), BLOCK - 7]  # > 64 in one block, a repeat
    np.testing.assert_array_equal(sampler.configurations_at(picks, workers=2), sampler.draw(0, BLOCK + 100)[picks])
    assert not np.array_equal(Sampler(robot, seed=10).draw(0, 5), sampler.draw(0, 5))
    for q in whole:
        robot.validate_q(q)  # unit quaternions and (cos, sin) pairs
    bounded = np.isfinite(robot.lower_limits) & np.isfinite(robot.upper_limits)
    one_dof = [robot.model.joints[robot.model.getJointId(n)] for n in robot.joint_names]
    scalar = [j.idx_q for j in one_dof if j.nq == 1]
    keep = np.zeros(robot.nq, bool)
    keep[scalar] = True
    keep &= bounded
    assert np.all(whole[:, keep] >= robot.lower_limits[keep]) and np.all(whole[:, keep] <= robot.upper_limits[keep])


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
@pytest.mark.parametrize("name", ["tree30", "hand", "dual_arm"])
def test_compiled_sampling_matches_its_numpy_specification(name):
    robot = reljac.Robot.bundled(name)
    compiled, spec = Sampler(robot, seed=5), Sampler(robot, seed=5, compiled=False)
    np.testing.assert_allclose(compiled.draw(100, 3000), spec.draw(100, 3000), rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", ["tree30", "hand", "dual_arm"])
def test_the_reach_bound_holds_for_sampled_configurations(name, rng):
    robot = reljac.Robot.bundled(name)
    Q = Sampler(robot, seed=2).draw(0, 3000)
    for a, b in random_pairs(robot, rng, 6) + [(0, robot.model.nframes - 1)]:
        T, _ = reljac.maps.relative_kinematics(robot, Q, a, b)
        assert np.linalg.norm(T[:, :3, 3], axis=1).max() <= reach_bound(robot, a, b) + 1e-12


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_compiled_merge_matches_the_numpy_merge():
    robot = reljac.Robot.bundled("dual_arm")
    job = Job(robot, robot.frame_id("left_tool"), robot.frame_id("right_tool"),
              make_grid(robot, robot.frame_id("left_tool"), robot.frame_id("right_tool"), 0.2),
              fibonacci_directions(8), 2, (0, 1, 2), 0, "compiled")
    parts = [run_chunk(job, start, start + 3000) for start in (0, 3000, 9000, 6000)]
    compiled, spec = merge_partials(parts), merge_partials_numpy(parts)
    order = np.argsort(compiled.voxel)
    for name in ("voxel", "count", "coverage", "best", "best_index"):
        np.testing.assert_array_equal(getattr(compiled, name)[order], getattr(spec, name), err_msg=name)
    assert (compiled.outside, compiled.samples) == (spec.outside, spec.samples) == (0, 12_000)
    dense, dense_numpy = Accumulator(job.grid), Accumulator(job.grid)
    for part in parts:
        dense.add(part)
        dense_numpy.add_numpy(part)
    for name in ("count", "coverage", "best", "best_index"):
        np.testing.assert_array_equal(getattr(dense, name), getattr(dense_numpy, name), err_msg=name)
    whole = run_chunk(job, 0, 12_000)
    np.testing.assert_array_equal(np.sort(whole.voxel), spec.voxel)
    np.testing.assert_array_equal(whole.count[np.argsort(whole.voxel)], spec.count)


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
@pytest.mark.slow
@pytest.mark.parametrize(("name", "a", "b", "part", "voxel"), [
    ("hand", "index_tip", "thumb_tip", "position", 0.02),            # mimic joints: the whole model
    ("dual_arm", "left_tool", "right_tool", "full", 0.1),             # the pair's reduced model
    ("tree30", "left_hand_site", "tail_site", ("vx", "wz"), 0.1),     # a free-flyer above the pair
])
def test_compiled_and_python_reductions_agree(name, a, b, part, voxel):
    robot = reljac.Robot.bundled(name)
    kwargs = dict(samples=3000, voxel=voxel, seed=4, part=part, directions=12)
    compiled = capability_map(robot, a, b, backend="compiled", chunk=1000, **kwargs)
    python = capability_map(robot, a, b, backend="python", chunk=1700, **kwargs)
    for name in ("counts", "coverage", "best_index", "best_q"):
        np.testing.assert_array_equal(getattr(compiled, name), getattr(python, name), err_msg=name)
    np.testing.assert_allclose(compiled.best_manipulability, python.best_manipulability, rtol=1e-10, atol=1e-15)
    assert compiled.metadata["backend"] == "compiled" and python.metadata["backend"] == "python"

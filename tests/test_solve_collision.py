"""Collision-free poses (issue 42, part 2; reljac/ik/search/collisions.py): with collision avoidance
a search converges only where every pair keeps its distance, checked here by an independent
distance computation (Pinocchio's computeDistances on the collision model's pairs), on both
backends; a search that meets its levels in a collision goes on to a clear answer; self-collision
and obstacles, meshes (convex hulls) and primitives, relative targets between two arms; many
collision-free poses at once are those found one by one, on threads and on Dask."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

import reljac
from reljac.collision import CollisionModel, box, sphere
from reljac.ik import (
    CollisionAvoidance,
    FrameTask,
    PostureTask,
    RelativeFrameTask,
    RelativePositionTask,
    Solver,
    compiled_available,
    solve,
    solve_many,
)
from reljac.relative import Kinematics

TOL = 1e-5
MIN_DISTANCE = 0.01


def pair_distances(robot, model: CollisionModel, q: np.ndarray) -> np.ndarray:
    """Every active pair's distance at q [m], by Pinocchio's own computeDistances (not reljac's)."""
    geometry = model.geometry_model
    data, gdata = robot.model.createData(), pin.GeometryData(geometry)
    pin.computeDistances(robot.model, data, geometry, gdata, q)
    return np.array([r.min_distance for r in gdata.distanceResults])


def clear_configurations(robot, model: CollisionModel, n: int, clearance: float, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        q = robot.random_configuration(rng)
        if pair_distances(robot, model, q).min() >= clearance:
            out.append(q)
    return out


@pytest.fixture(scope="module")
def panda_scene():
    """example-robot-data's Panda by name (its meshes as convex hulls, its SRDF) on a table, with a
    box and a shelf board (primitives) and a ball."""
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data (the test extra)")
    robot = reljac.Robot.load("panda")
    model = CollisionModel(robot)
    model.add_obstacle("table", box((1.2, 1.2, 0.05)), np.array([0.3, 0.0, -0.03]))
    model.add_obstacle("box", box((0.2, 0.2, 0.2)), np.array([0.5, 0.35, 0.1]))
    model.add_obstacle("shelf", box((0.3, 0.5, 0.02)), np.array([0.55, -0.3, 0.55]))
    model.add_obstacle("ball", sphere(0.08), np.array([-0.4, 0.3, 0.4]))
    return robot, model


@pytest.mark.parametrize("backend", BACKENDS)
def test_panda_among_obstacles_converges_only_where_every_pair_keeps_its_distance(panda_scene, backend):
    robot, model = panda_scene
    configurations = clear_configurations(robot, model, 12, 2 * MIN_DISTANCE, seed=3)
    task = FrameTask("panda_hand", name="hand")
    task.set_target(Kinematics(robot, configurations[0]).placement("panda_hand"))
    avoid = CollisionAvoidance(robot, model=model, min_distance=MIN_DISTANCE)
    solver = Solver(robot, [[task]], tol=TOL, restarts=50, constraints=[avoid], backend=backend)
    for i, q in enumerate(configurations):
        T = Kinematics(robot, q).placement("panda_hand")
        task.set_target(T)
        r = solver.solve(None, seed=i)
        assert r.converged, r.message
        assert pair_distances(robot, model, r.q).min() >= MIN_DISTANCE
        assert np.linalg.norm(pin.log6(T.actInv(Kinematics(robot, r.q).placement("panda_hand"))).vector) <= 2 * TOL


def dual_arm_levels(robot):
    rel = RelativeFrameTask("left_tool", "right_tool", name="relative")
    left = FrameTask("left_tool", name="left")
    posture = PostureTask(robot, weight=0.1)
    return rel, left, [[rel], [left], [posture]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_dual_arm_relative_targets_keep_its_arms_apart(dual_arm, backend):
    """The right tool in the left tool's frame, the left tool in the world: self-collision of
    capsules, every converged answer clear of it, both tools where asked."""
    model = CollisionModel(dual_arm)
    configurations = clear_configurations(dual_arm, model, 6, 2 * MIN_DISTANCE, seed=4)
    rel, left, levels = dual_arm_levels(dual_arm)
    avoid = CollisionAvoidance(dual_arm, model=model, min_distance=MIN_DISTANCE)
    solver = Solver(dual_arm, levels, tol=TOL, restarts=50, constraints=[avoid], backend=backend)
    levels[2][0].set_target(solver.middle)
    for i, q in enumerate(configurations):
        kin = Kinematics(dual_arm, q)
        rel.set_target(kin.relative_placement("left_tool", "right_tool"))
        left.set_target(kin.placement("left_tool"))
        r = solver.solve(None, seed=i)
        assert r.converged, r.message
        assert pair_distances(dual_arm, model, r.q).min() >= MIN_DISTANCE
        assert max(*r.errors["relative"].values(), *r.errors["left"].values()) <= TOL


def into_the_right_arm(robot, model):
    """The right tool held (level 1) and the left tool sent to right_link5's origin (level 2),
    from a start with no pair nearer than 2 cm: without avoidance the arms end in contact."""
    rng = np.random.default_rng(2)
    while True:
        q0 = robot.random_configuration(rng)
        kin = Kinematics(robot, q0)
        gap = np.linalg.norm(kin.relative_placement("left_tool", "right_link5").translation)
        if gap < 0.5 and pair_distances(robot, model, q0).min() > 0.02:
            break
    hold, lead = FrameTask("right_tool", name="hold"), RelativePositionTask("universe", "left_tool", name="lead")
    hold.set_target(kin.placement("right_tool"))
    lead.set_target(kin.placement("right_link5").translation)
    return q0, [[hold], [lead]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_levels_met_in_a_collision_are_not_converged_and_the_closest_clear_answer_is_returned(dual_arm, backend):
    """The levels can be met only with the arms in contact: no restart converges; the answer is
    clear (never the colliding configurations where the levels were met: the search prefers what
    satisfies its limits), the right tool held."""
    model = CollisionModel(dual_arm)
    q0, levels = into_the_right_arm(dual_arm, model)
    free = solve(dual_arm, q0, levels, tol=TOL, restarts=2, backend=backend)
    assert free.converged and pair_distances(dual_arm, model, free.q).min() < MIN_DISTANCE
    avoid = CollisionAvoidance(dual_arm, model=model, min_distance=MIN_DISTANCE)
    kept = solve(dual_arm, q0, levels, tol=TOL, restarts=3, constraints=[avoid], backend=backend)
    assert not kept.converged and kept.levels_met == [True, False], kept.message
    assert pair_distances(dual_arm, model, kept.q).min() >= MIN_DISTANCE
    assert max(kept.errors["hold"].values()) <= TOL


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_search_failed_by_its_collision_pairs_alone_names_them(dual_arm, backend):
    """A box around the whole robot: the tool's pose is met, no configuration is clear. The message
    said 'level 1 () not met within tol' (every level was met); it names the pairs, nearest first,
    as the collision model measures them at the q returned."""
    model = CollisionModel(dual_arm)
    model.add_obstacle("crate", box((5.0, 5.0, 5.0)), [0.0, 0.0, 0.0])
    task = FrameTask("left_tool", name="tool")
    task.set_target(Kinematics(dual_arm, dual_arm.random_configuration(3)).placement("left_tool"))
    avoid = CollisionAvoidance(dual_arm, model=model, min_distance=MIN_DISTANCE)
    result = solve(dual_arm, None, [[task]], tol=TOL, restarts=1, constraints=[avoid], backend=backend)
    assert not result.converged and result.levels_met == [True]
    nearest = model.pairs_below(result.q, MIN_DISTANCE)
    a, b, d = nearest[0]
    assert result.message.startswith(f"every level met within tol={TOL:g} but not the limits: {len(nearest)} "
                                      f"collision pair(s) nearer than their minimum distance: {a}/{b} "
                                      f"({d * 1e3:.1f} mm)"), result.message


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pose_first_met_in_a_collision_is_then_met_clear(dual_arm, backend):
    """An obstacle (a ball) put where the free search's answer has its left elbow: that answer
    collides; with avoidance the same search goes on to another pose of the tool, clear."""
    model = CollisionModel(dual_arm)
    q = dual_arm.random_configuration(np.random.default_rng(7))
    task = FrameTask("left_tool", name="left")
    task.set_target(Kinematics(dual_arm, q).placement("left_tool"))
    free = solve(dual_arm, None, [[task]], tol=TOL, restarts=5, seed=1, backend=backend)
    assert free.converged
    elbow = Kinematics(dual_arm, free.q).placement("left_link4").translation
    tool = Kinematics(dual_arm, free.q).placement("left_tool").translation
    assert np.linalg.norm(elbow - tool) > 0.2  # the ball does not cover the target
    model.add_obstacle("ball", sphere(0.06), elbow)
    assert pair_distances(dual_arm, model, free.q).min() < 0.0
    avoid = CollisionAvoidance(dual_arm, model=model, min_distance=MIN_DISTANCE)
    r = solve(dual_arm, None, [[task]], tol=TOL, restarts=20, seed=1, constraints=[avoid], backend=backend)
    assert r.converged, r.message
    assert pair_distances(dual_arm, model, r.q).min() >= MIN_DISTANCE
    assert max(r.errors["left"].values()) <= TOL


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_both_backends_find_the_same_collision_free_poses(dual_arm):
    """The compiled search is the Python one's twin with collision avoidance too: the same
    configuration from the same seed, also where a local search met the levels in a collision."""
    model = CollisionModel(dual_arm)
    configurations = clear_configurations(dual_arm, model, 4, 2 * MIN_DISTANCE, seed=5)
    rel, left, levels = dual_arm_levels(dual_arm)
    q0, collide = into_the_right_arm(dual_arm, model)
    avoid = CollisionAvoidance(dual_arm, model=model, min_distance=MIN_DISTANCE)
    for problem in range(len(configurations) + 1):
        if problem < len(configurations):
            kin = Kinematics(dual_arm, configurations[problem])
            rel.set_target(kin.relative_placement("left_tool", "right_tool"))
            left.set_target(kin.placement("left_tool"))
            stack, start = levels, None
        else:
            stack, start = collide, q0
        found = [Solver(dual_arm, stack, tol=TOL, restarts=4, constraints=[avoid], backend=b).solve(start, seed=3)
                 for b in ("python", "compiled")]
        assert (found[0].converged, found[0].iterations, found[0].restarts) == \
            (found[1].converged, found[1].iterations, found[1].restarts), problem
        np.testing.assert_allclose(found[0].q, found[1].q, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_collision_avoidance_as_a_level_converges_only_with_every_pair_clear(dual_arm, backend):
    """The limit put in a level (its rows a task's, met within tol; margin 0): a wall 7 mm from
    the left hand at the seed, which meets the target (the hand there) and, within tol = 5 mm, the
    level's rows; the search checks the pairs too, as a limit's: it goes on to a configuration
    10 mm clear, the hand within tol of its target (seen without the check: converged at the
    seed, 7 mm; the compiled search did not check a level's pairs before)."""
    model = CollisionModel(dual_arm)
    q = clear_configurations(dual_arm, model, 1, 0.05, seed=6)[0]
    away = Kinematics(dual_arm, q).placement("left_tool").translation + np.array([0.0, 0.0, 0.5])
    model.add_obstacle("wall", box((0.4, 0.4, 0.02)), away)  # a board 50 cm above the hand, then lowered
    gap = model.pair_distance(q, "left_link8", "wall").distance.min()
    model.move_obstacle("wall", away - np.array([0.0, 0.0, gap - 0.007]))
    assert pair_distances(dual_arm, model, q).min() == pytest.approx(0.007, abs=1e-6)
    avoid = CollisionAvoidance(dual_arm, model=model, min_distance=MIN_DISTANCE, margin=0.0)
    hand = RelativePositionTask("universe", "left_tool", name="hand")
    hand.set_target(Kinematics(dual_arm, q).placement("left_tool").translation)
    r = solve(dual_arm, q, [[avoid], [hand]], tol=5e-3, restarts=5, backend=backend)
    assert r.converged and r.iterations > 0, r.message
    assert pair_distances(dual_arm, model, r.q).min() >= MIN_DISTANCE - 1e-9
    assert r.errors["hand"]["position"] <= 5e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_collision_free_poses_are_those_found_one_by_one(panda_scene, backend):
    robot, model = panda_scene
    configurations = clear_configurations(robot, model, 16 if backend == "compiled" else 5, 2 * MIN_DISTANCE, seed=8)
    targets = [Kinematics(robot, q).placement("panda_hand") for q in configurations]
    task = FrameTask("panda_hand", name="hand")
    task.set_target(targets[0])
    avoid = CollisionAvoidance(robot, model=model, min_distance=MIN_DISTANCE)
    args = dict(tol=TOL, restarts=30, constraints=[avoid], backend=backend)
    many = solve_many(robot, None, [[task]], targets, workers=2, seed=11, **args)
    for i, (T, r) in enumerate(zip(targets, many, strict=True)):
        one = FrameTask("panda_hand", name="hand")
        one.set_target(T)
        alone = solve(robot, None, [[one]], seed=11 + i, **args)
        assert (alone.converged, alone.iterations, alone.restarts) == (r.converged, r.iterations, r.restarts)
        np.testing.assert_array_equal(alone.q, r.q)
        assert r.converged and pair_distances(robot, model, r.q).min() >= MIN_DISTANCE


@pytest.mark.slow
def test_many_collision_free_poses_on_dask_are_the_threaded_ones(process_client, panda_scene):
    robot, model = panda_scene
    targets = [Kinematics(robot, q).placement("panda_hand")
               for q in clear_configurations(robot, model, 24, 2 * MIN_DISTANCE, seed=9)]
    task = FrameTask("panda_hand", name="hand")
    task.set_target(targets[0])
    args = dict(tol=TOL, restarts=30, seed=2, constraints=[CollisionAvoidance(robot, model=model)])
    threaded = solve_many(robot, None, [[task]], targets, **args)
    dasked = solve_many(robot, None, [[task]], targets, scheduler=process_client, **args)
    for a, b in zip(threaded, dasked, strict=True):
        assert (a.converged, a.iterations, a.restarts) == (b.converged, b.iterations, b.restarts)
        np.testing.assert_allclose(a.q, b.q, atol=1e-8)
        assert b.converged and pair_distances(robot, model, b.q).min() >= MIN_DISTANCE


def test_a_single_limit_as_constraints_is_taken_as_a_list_of_one():
    """constraints=limit (not in a list), which Controller accepts, gives the Solver the same
    search as constraints=[limit] (it failed with a TypeError after the search)."""
    robot = reljac.Robot.bundled("dual_arm")
    lead = FrameTask("left_tool")
    lead.set_target(Kinematics(robot, robot.random_configuration(1)).placement("left_tool"))
    avoidance = CollisionAvoidance(robot)
    alone = Solver(robot, [[lead]], constraints=avoidance, restarts=2).solve(seed=0)
    listed = Solver(robot, [[lead]], constraints=[avoidance], restarts=2).solve(seed=0)
    assert alone.converged == listed.converged
    np.testing.assert_array_equal(alone.q, listed.q)
    with pytest.raises(reljac.ConfigurationError, match="constraints must be reljac.ik Limit objects"):
        Solver(robot, [[lead]], constraints=lead)

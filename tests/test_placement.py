"""reljac.placement's answer on the bundled dual arm (two hands on a torso that turns): the maps
reach a task made from their own samples at the placement it was made at, both ways of asking
them agree, the exact check confirms with configurations that reach the targets (checked here by
Pinocchio's placements), the check's own verification refuses what is wrong, the base's clearance
and the scores against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from reljac import Kinematics, Robot
from reljac.collision import CollisionModel, box
from reljac.exceptions import ConfigurationError, TaskError
from reljac.placement import (
    Checker,
    FloorRegion,
    PlacementTask,
    mobile_base,
    place,
    placement_maps,
    reach,
)
from reljac.placement.chains import hand_chains
from reljac.placement.clearance import Clearance
from reljac.placement.inverse import pose_order
from reljac.placement.rank import exact_scores
from reljac.placement.refine import Refiner
from reljac.placement.witness import Witnesses, other_joints

HANDS = ["left_tool", "right_tool"]
PLACEMENT = np.array([0.2, -0.1, 0.3])


@pytest.fixture(scope="module")
def mobile():
    return mobile_base(Robot.bundled("dual_arm"))


@pytest.fixture(scope="module")
def maps(mobile):
    return placement_maps(mobile, HANDS, samples=4000, seed=5, workers=2)


def _sampled_configuration(maps, row_left: int, row_right: int, shared: int) -> np.ndarray:
    """A configuration made of the maps' own samples (each swept to the middle of its sweeps,
    a bin their masks hold) and a value of the shared joints' grid, base at PLACEMENT."""
    mobile = maps.mobile
    q = mobile.configuration(PLACEMENT)
    q[maps.chains.q_index] = maps.chains.values[shared]
    for hand, row in zip(HANDS, (row_left, row_right), strict=True):
        pmap = maps.maps[hand]
        m = pmap.metadata
        columns = np.concatenate([np.arange(a, a + n) for a, n in zip(m["joint_q"], m["joint_nq"], strict=True)])
        q[columns] = pmap.best_q[row]
        for name, (lo, hi) in ((m["first"], m["first_range"]), (m["last"], m["last_range"])):
            q[mobile.robot.model.joints[mobile.robot.model.getJointId(name)].idx_q] = 0.5 * (lo + hi)
    return q


@pytest.fixture(scope="module")
def sampled(maps):
    """A two-pose task from two sampled configurations: the object is the left hand, the right
    hand holds it where the first configuration has it."""
    robot = maps.mobile.robot
    qs = [_sampled_configuration(maps, 7, 11, 15), _sampled_configuration(maps, 7, 11, 16)]
    kin = Kinematics(robot, qs[0])
    grasp = kin.placement(HANDS[0]).actInv(kin.placement(HANDS[1]))
    poses = [Kinematics(robot, q).placement(HANDS[0]) for q in qs]
    second = Kinematics(robot, qs[1])
    if not np.allclose(second.placement(HANDS[0]).actInv(second.placement(HANDS[1])).homogeneous,
                       grasp.homogeneous):  # the torso turns both hands alike: the grasp is the same
        pytest.fail("the two configurations do not hold the same grasp")
    return PlacementTask(poses, {HANDS[0]: pin.SE3.Identity(), HANDS[1]: grasp}), qs


def test_the_maps_reach_a_task_made_of_their_own_samples(maps, sampled):
    task, _ = sampled
    found = reach(maps, task, PLACEMENT[None])
    assert found.reached.all()
    moved = PLACEMENT + [3.0, 0.0, 0.0]  # 3 m away: no hand reaches
    assert not reach(maps, task, moved[None]).reached.any()


@pytest.mark.slow
def test_asking_every_pose_or_dropping_placements_early_agree(maps, sampled, rng):
    task, _ = sampled
    P = np.vstack([PLACEMENT, PLACEMENT + rng.uniform(-0.2, 0.2, (40, 3))])
    every = reach(maps, task, P, margin=(0.5,) * 4 + (0, 0))
    early = reach(maps, task, P, margin=(0.5,) * 4 + (0, 0), every_pose=False)
    complete = every.reached.all(axis=1)
    np.testing.assert_array_equal(early.reached.all(axis=1), complete)
    np.testing.assert_array_equal(early.sure[complete], every.sure[complete])
    assert (every.sure <= every.reached).all()
    assert sorted(pose_order(7)) == list(range(7)) and pose_order(7)[:2] == [0, 6]


def test_place_finds_a_placement_the_check_confirms(maps, sampled):
    task, _ = sampled
    x, y, yaw = PLACEMENT
    region = FloorRegion(x=(x - 0.1, x + 0.1), y=(y - 0.1, y + 0.1), yaw=(yaw - 0.2, yaw + 0.2), step=0.1,
                         yaw_step=0.2)
    result = place(maps, task, region, candidates=1, check_timeout=0.2)
    best = result.best
    assert best is not None and best.feasible and best.q.shape == (2, maps.mobile.robot.nq)
    assert result.feasible[best.index]
    assert best.witnessed == len(task)  # no collision model: each pose's arm search is its witness
    for k, q in enumerate(best.q):  # every hand at its target, the base at the placement
        kin = Kinematics(maps.mobile.robot, q)
        for hand in HANDS:
            target = pin.SE3(task.poses[k] @ task.grasps[hand])
            assert np.linalg.norm(pin.log6(target.actInv(kin.placement(hand))).vector) < 1e-3
        np.testing.assert_allclose(maps.mobile.placement_of(q), best.placement, atol=1e-3)


def test_the_check_refuses_a_wrong_answer(maps, sampled):
    task, qs = sampled
    checker = Checker(maps.mobile, task)
    assert checker.verify(PLACEMENT, 0, qs[0])
    assert not checker.verify(PLACEMENT + [0.01, 0, 0], 0, qs[0])  # the base elsewhere
    assert not checker.verify(PLACEMENT, 1, qs[0])  # the other pose's configuration
    collision = CollisionModel(maps.mobile.robot)
    hand = Kinematics(maps.mobile.robot, qs[0]).placement("left_link8").translation
    collision.add_obstacle("block", box((0.1, 0.1, 0.1)), hand)
    assert not Checker(maps.mobile, task, collision=collision).verify(PLACEMENT, 0, qs[0])


def test_the_refiner_decides_by_the_arms_alone(maps, sampled):
    task, _ = sampled
    found = reach(maps, task, PLACEMENT[None])
    ok = Refiner(maps, timeout=0.05).run(task, PLACEMENT[None], found, np.array([[0, 0], [0, 1]]))
    assert ok.all()


def test_the_base_is_blocked_where_an_obstacle_stands(mobile):
    collision = CollisionModel(mobile.robot)
    collision.add_obstacle("crate", box((0.2, 0.2, 0.2)), [1.0, 0.0, 0.1])
    chains = hand_chains(mobile, HANDS)
    free = Clearance(mobile, chains, collision).free(np.array([[1.0, 0.0, 0.0], [3.0, 0.0, 0.0], [1.0, 0.0, 1.0]]))
    np.testing.assert_array_equal(free, [False, True, False])


def test_the_base_is_not_blocked_by_an_obstacle_the_collision_model_lets_it_touch(mobile):
    """An adversarial pass: the clearance tested every body the base carries against every
    obstacle, whatever the collision model's pairs: a crate added for the arms' links only (or a
    pair removed) blocked the base standing on it, and place() said no placement."""
    chains = hand_chains(mobile, HANDS)
    placements = np.array([[1.0, 0.0, 0.0], [3.0, 0.0, 0.0]])
    arms_only = CollisionModel(mobile.robot)
    arms_only.add_obstacle("crate", box((0.2, 0.2, 0.2)), [1.0, 0.0, 0.1],
                           links=[link for link in arms_only.bodies if link.startswith(("left_", "right_"))])
    np.testing.assert_array_equal(Clearance(mobile, chains, arms_only).free(placements), [True, True])
    removed = CollisionModel(mobile.robot)
    removed.add_obstacle("crate", box((0.2, 0.2, 0.2)), [1.0, 0.0, 0.1])
    assert not Clearance(mobile, chains, removed).free(placements)[0]
    removed.remove_pairs([pair for pair in removed.pairs if "crate" in pair and not
                          any(body.startswith(("left_", "right_")) for body in pair)])
    np.testing.assert_array_equal(Clearance(mobile, chains, removed).free(placements), [True, True])


def test_the_joint_margin_score_is_the_distance_to_the_nearest_limit(maps):
    robot = maps.mobile.robot
    middle = maps.mobile.configuration(PLACEMENT)
    lo, hi = robot.model.lowerPositionLimit, robot.model.upperPositionLimit
    for j in range(2, robot.model.njoints):  # every arm and torso joint at the middle of its range
        i = robot.model.joints[j].idx_q
        middle[i] = 0.5 * (lo[i] + hi[i])
    at_limit = middle.copy()
    i = robot.model.joints[robot.model.getJointId("left_joint2")].idx_q
    at_limit[i] = lo[i] + 0.1 * (hi[i] - lo[i])
    scores = exact_scores(maps, np.array([[middle, at_limit]]), "joint_margin")
    np.testing.assert_allclose(scores, [[0.5, 0.1]], atol=1e-12)
    with pytest.raises(ConfigurationError, match="score must be one of"):
        exact_scores(maps, np.array([[middle]]), "speed")


@pytest.mark.slow
def test_a_lift_is_asked_as_the_general_path_would(monkeypatch):
    """TIAGo's torso lifts both arms: the shortcut (coordinates once, z shifted) answers as the
    general path (every lift value located whole)."""
    from reljac.placement.chains import HandChains
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    robot = Robot.load("tiago_dual").locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])
    tiago = mobile_base(robot)
    hands = ["hand_left_tool_link", "hand_right_tool_link"]
    lifted = placement_maps(tiago, hands, samples=30_000)
    assert lifted.chains.shifts is not None
    down = np.column_stack([(0.0, -1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)])
    task = PlacementTask([pin.SE3(np.eye(3), np.array([0.7, 0.0, 0.9 + 0.05 * k])) for k in range(3)],
                         {hands[0]: pin.SE3(down, np.array([0, 0.2, 0])),
                          hands[1]: pin.SE3(down @ pin.rpy.rpyToMatrix(0, 0, math.pi), np.array([0, -0.2, 0]))})
    P = FloorRegion(x=(-0.2, 0.4), y=(-0.3, 0.3), yaw=(-0.5, 0.5), step=0.1, yaw_step=0.25).placements()
    fast = reach(lifted, task, P, margin=(0.5,) * 4 + (0, 0))
    monkeypatch.setattr(HandChains, "shifts", property(lambda self: None))
    slow = reach(lifted, task, P, margin=(0.5,) * 4 + (0, 0))
    assert fast.reached.any()
    for name in ("reached", "sure", "shared", "score"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))


@pytest.fixture(scope="module")
def free_sampled(maps):
    """As `sampled`, from samples whose configurations collide with nothing."""
    robot = maps.mobile.robot
    collision = CollisionModel(robot)
    for left in range(7, 200):
        qs = [_sampled_configuration(maps, left, left + 4, s) for s in (15, 16)]
        if all(not collision.pairs_below(q, 0.02) for q in qs):
            break
    else:
        pytest.fail("no pair of samples free of collision")
    kin = Kinematics(robot, qs[0])
    grasp = kin.placement(HANDS[0]).actInv(kin.placement(HANDS[1]))
    poses = [Kinematics(robot, q).placement(HANDS[0]) for q in qs]
    return PlacementTask(poses, {HANDS[0]: pin.SE3.Identity(), HANDS[1]: grasp}), qs, collision


def test_a_witness_is_an_answer_the_check_accepts(maps, free_sampled):
    task, _, collision = free_sampled
    found = reach(maps, task, PLACEMENT[None])
    witnessed = Witnesses(maps, task, collision).run(PLACEMENT[None], found, np.array([[0, 0], [0, 1]]))
    assert witnessed.ok.all()
    checker = Checker(maps.mobile, task, collision=collision)
    for k, q in enumerate(witnessed.q):  # Pinocchio's placements and coal's distances agree
        assert checker.verify(PLACEMENT, k, q)


@pytest.mark.slow
def test_a_pose_reached_only_inside_an_obstacle_has_no_witness_and_no_placement(maps, free_sampled):
    """A block around the lead hand's pose 0: the maps reach it (they know no obstacle), but no
    configuration is free there: no witness, and place calls no placement feasible."""
    task, qs, _ = free_sampled
    found = reach(maps, task, PLACEMENT[None])
    assert found.reached.all()
    collision = CollisionModel(maps.mobile.robot)
    hand = Kinematics(maps.mobile.robot, qs[0]).placement("left_link8").translation
    collision.add_obstacle("block", box((0.12, 0.12, 0.12)), hand)
    witnessed = Witnesses(maps, task, collision).run(PLACEMENT[None], found, np.array([[0, 0], [0, 1]]))
    assert witnessed.converged[0] and not witnessed.free[0]
    region = FloorRegion(x=(PLACEMENT[0], PLACEMENT[0]), y=(PLACEMENT[1], PLACEMENT[1]),
                         yaw=(PLACEMENT[2], PLACEMENT[2]), step=0.1, yaw_step=0.2)
    result = place(maps, task, region, collision=collision, candidates=1, check_timeout=0.02)
    assert result.best is None and result.candidates[0].witnessed < len(task)


def _in_collision_with_what_it_does_not_move(maps, collision):
    """A configuration made of the maps' samples (the left arm's row, the right arm's row 0, the
    shared joints' first value) where the left arm is in a body it does not move, and that row;
    or None."""
    model = maps.mobile.robot.model
    joints = set(maps.maps[HANDS[0]].metadata["joints"])
    moved = {f.name for f in model.frames if _on_chain(model, f.parentJoint, joints)}
    for row in range(len(maps.maps[HANDS[0]].cells)):
        q = _sampled_configuration(maps, row, 0, 0)
        near = collision.distances(q, within=0.0, jacobians=False)
        if any(d < -0.005 and (a in moved) != (b in moved) for (a, b), d in zip(near.pairs, near.distance,
                                                                                  strict=True)):
            return q
    return None


def _on_chain(model, joint, joints):
    while joint > 0:
        if model.names[joint] in joints:
            return True
        joint = model.parents[joint]
    return False


@pytest.mark.slow
def test_a_pose_reached_only_with_the_arm_in_the_body_has_no_witness(maps):
    """A pose made from a sample of the maps whose left arm goes through a body it does not move
    (the torso, or the other arm): the maps reach it; its witness search starts at that very
    configuration, which collides, and is refused (without a collision model it is a witness)."""
    from reljac.placement.inverse import Reach
    from reljac.placement.orbits import rigid_inverse

    collision = CollisionModel(maps.mobile.robot)
    q = _in_collision_with_what_it_does_not_move(maps, collision)
    if q is None:
        pytest.fail("no sample of the left arm's map is in a body it does not move: the test needs one")
    kin = Kinematics(maps.mobile.robot, q)
    task = PlacementTask([kin.placement(HANDS[0])], {HANDS[0]: pin.SE3.Identity(),
                                                     HANDS[1]: kin.placement(HANDS[0]).actInv(kin.placement(HANDS[1]))})
    T_FB = rigid_inverse(maps.chains.T_BF[0])  # the maps' answer at the shared joints' first value
    T_Bw = rigid_inverse(maps.mobile.base_poses(PLACEMENT[None]))[0]
    rows = {hand: maps.maps[hand].locate((T_FB @ T_Bw @ task.poses[0] @ task.grasps[hand])[None])[2].reshape(1, 1)
            for hand in HANDS}
    assert all(r[0, 0] >= 0 for r in rows.values())
    found = Reach(np.ones((1, 1), bool), np.ones((1, 1), bool), np.ones((1, 1)), np.zeros((1, 1), np.int64), rows)
    arms_alone = Witnesses(maps, task, collision, avoid_timeout=0.0).run(PLACEMENT[None], found, np.array([[0, 0]]))
    assert arms_alone.converged[0] and not arms_alone.free[0]
    assert Witnesses(maps, task, None).run(PLACEMENT[None], found, np.array([[0, 0]])).ok[0]
    avoided = Witnesses(maps, task, collision, avoid_timeout=0.2).run(PLACEMENT[None], found, np.array([[0, 0]]))
    if avoided.ok[0]:  # the last search, with collision avoidance, found another way: a true answer
        assert Checker(maps.mobile, task, collision=collision).verify(PLACEMENT, 0, avoided.q[0])
        assert not collision.pairs_below(avoided.q[0], 0.01 - 1e-6)


@pytest.fixture(scope="module")
def left_only(mobile):
    """Maps of the left hand alone: the torso and left arm are its chain, the right arm is neither
    the base's, shared nor a hand's (the "other" joints, like TIAGo's head)."""
    return placement_maps(mobile, ["left_tool"], samples=500, seed=3, workers=1)


def test_the_other_joints_are_those_no_hand_and_no_base_moves(left_only):
    model = left_only.mobile.robot.model
    variants, moved = other_joints(left_only)
    right = [model.getJointId(f"right_joint{i}") for i in range(1, 8)]
    at = [model.joints[j].idx_q for j in right]
    lo, hi = model.lowerPositionLimit[at], model.upperPositionLimit[at]
    expected = [([a], [v]) for a, low, high in zip(at, lo, hi, strict=True) for v in (low, high)]
    expected += [(at, list(lo)), (at, list(hi))]
    assert [(list(c), list(v)) for c, v in variants] == expected
    assert moved == {f.name for f in model.frames if f.name.startswith("right_")} - {"right_mount_joint",
                                                                                      "right_link0"}


@pytest.mark.slow
def test_the_other_joints_move_out_of_the_way_only_when_that_frees(left_only, rng):
    """A configuration whose only collisions are of the right arm (not the task's) is freed by
    moving the right arm, and only it; one where the left arm (the task's) hits something is
    not, and stays as it was."""
    mobile = left_only.mobile
    robot = mobile.robot
    collision = CollisionModel(robot)
    task = PlacementTask([pin.SE3.Identity()], ["left_tool"])
    witnesses = Witnesses(left_only, task, collision)
    _, moved = other_joints(left_only)
    right = np.array([robot.model.joints[robot.model.getJointId(f"right_joint{i}")].idx_q for i in range(1, 8)])
    lo, hi = robot.model.lowerPositionLimit, robot.model.upperPositionLimit
    freed = kept = 0
    for _ in range(400):
        q = mobile.configuration(PLACEMENT)
        q[4:] = rng.uniform(lo[4:], hi[4:])  # the torso and both arms (the planar base first)
        pairs = collision.pairs_below(q, 0.01 - 1e-6)
        if not pairs:
            continue
        before = q.copy()
        ours = all(a in moved or b in moved for a, b, _ in pairs)
        ok = witnesses.free(q)
        if ok:
            assert ours and not collision.pairs_below(q, 0.01 - 1e-6)
            changed = np.flatnonzero(q != before)
            assert set(changed) <= set(right)
            freed += 1
        else:
            np.testing.assert_array_equal(q, before)
            kept += not ours
        if freed and kept:
            break
    assert freed and kept


@pytest.mark.slow
def test_the_margin_is_tested_at_every_placement_reaching_every_pose(mobile):
    """By default the margin was tested only at the max_checked placements the maps rank first by
    their score alone (an adversarial pass: 32 at the maps' edge, sure at 11 of 12 poses, all
    failed, and place() found nothing while placements sure at every pose ranked below them). Now
    at every placement reaching every pose, as with every_pose: the two agree there."""
    one = placement_maps(mobile, ["left_tool"], samples=100_000, seed=1)
    task = PlacementTask([pin.SE3(pin.rpy.rpyToMatrix(np.pi / 2, 0, 0), np.array([0.4, 0.3, 1.1]))], ["left_tool"])
    region = FloorRegion(x=(-0.3, 0.3), y=(-0.3, 0.3), yaw=(-0.6, 0.6), step=0.1, yaw_step=0.3)
    options = dict(candidates=1, check_timeout=0.05, max_checked=2, margin=(0.1, 0.1, 0.1, 0.1, 0, 0))
    some = place(one, task, region, **options)
    every = place(one, task, region, **options, every_pose=True)
    complete = every.found.reached.all(axis=1)
    np.testing.assert_array_equal(some.found.reached.all(axis=1), complete)
    assert some.found.sure.all(axis=1).sum() > 2  # (more sure placements than max_checked)
    np.testing.assert_array_equal(some.found.sure[complete], every.found.sure[complete])
    assert not some.found.sure[~complete].any()


def test_a_task_hand_without_a_map_is_a_map_error_not_reached_everywhere(maps, sampled):
    """Before: a hand the maps did not hold was never asked, so a grasp 100 m away counted as
    reached at every placement (and place ranked 'feasible' placements)."""
    from reljac.exceptions import MapError

    task, _ = sampled
    far = np.eye(4)
    far[0, 3] = 100.0
    grasps = {**task.grasps, "base_link": far}
    wider = PlacementTask(task.poses, grasps)
    with pytest.raises(MapError, match="not the maps' hands"):
        reach(maps, wider, PLACEMENT[None])
    with pytest.raises(MapError, match="not the maps' hands"):
        place(maps, wider, FloorRegion(x=(0.0, 0.1), y=(0.0, 0.1)))


@pytest.mark.parametrize("placements", [np.zeros(6), np.zeros((2, 4)), "abc", np.full((1, 3), np.nan)])
def test_placements_of_the_wrong_shape_are_a_map_error(maps, sampled, placements):
    """Before: (6,) was read as two placements, (2, 4) and text raised numpy's ValueError."""
    from reljac.exceptions import MapError

    with pytest.raises(MapError, match="placements must be"):
        reach(maps, sampled[0], placements)


@pytest.mark.parametrize("kwargs, match", [
    (dict(x=(1e20, 1e20), y=(0.0, 0.0)), "within 1e\\+06 m"),
    (dict(x=(-1.7e308, 1.7e308), y=(0.0, 0.0)), "within 1e\\+06 m"),
    (dict(x=(0.0, 1.0), y=(0.0, 1.0), step=5e-324), "more than 10,000,000 placements"),
    (dict(x=(0.0, 1.0), y=(0.0, 1.0), yaw=(0.0, 1.0), yaw_step=1e-300), "more than 10,000,000 placements"),
])
def test_a_floor_region_beyond_what_the_maps_count_is_a_configuration_error(kwargs, match):
    """Before: an IndexError from the maps' int64 cells, or an OverflowError counting the steps."""
    with pytest.raises(ConfigurationError, match=match):
        FloorRegion(**kwargs)


def test_a_placement_far_from_the_origin_is_a_map_error(maps, sampled):
    from reljac.exceptions import MapError

    with pytest.raises(MapError, match="within 1e\\+06 m"):
        reach(maps, sampled[0], [[1e300, 0.0, 0.0]])


@pytest.mark.parametrize("junk", ["maps", "task", "region", "collision"])
def test_arguments_of_the_wrong_kind_are_one_reljac_error(maps, sampled, junk):
    """Each of place's objects of the wrong kind names itself (they failed deep inside with an
    AttributeError on the attribute first read)."""
    task, _ = sampled
    given = {"maps": maps, "task": task, "region": FloorRegion(x=(0.0, 0.2), y=(-0.1, 0.1), step=0.1),
             "collision": None, junk: "junk"}
    with pytest.raises(TaskError, match=f"^{junk}.* must be a .*, got str$"):
        place(given["maps"], given["task"], given["region"], collision=given["collision"])
    if junk == "maps":  # and a count of threads: at least 1 (0 was taken as every core)
        with pytest.raises(ValueError, match="workers"):
            place(maps, task, given["region"], workers=0)


@pytest.mark.parametrize("option, value, match", [
    ("check_timeout", float("nan"), "check_timeout .s. must be a positive number of seconds, got nan"),
    ("check_timeout", -1.0, "check_timeout .s. must be a positive number of seconds, got -1.0"),
    ("check_timeout", 0, "check_timeout .s. must be a positive number of seconds, got 0"),
    ("tol", 0.0, "tol must be a positive number"),
    ("every_pose", "no", "every_pose must be True or False, got 'no'"),
    ("refine", 1, "refine must be True or False, got 1"),
    ("witness", None, "witness must be True or False, got None"),
])
def test_options_are_checked_before_any_work(maps, sampled, option, value, match):
    """An adversarial pass: check_timeout NaN, -1 or 0 was accepted when the witnesses settled every
    candidate (checked only where the exact check first ran), and every_pose='no' meant True."""
    task, _ = sampled
    region = FloorRegion(x=(0.1, 0.3), y=(-0.2, 0.0), step=0.1, yaw=(0.3, 0.3))
    with pytest.raises(TaskError, match=match):
        place(maps, task, region, **{option: value})

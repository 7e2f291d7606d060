"""reljac.collision models: bundled capsules, default pairs, SRDF, obstacles and bad input."""

from __future__ import annotations

import itertools
import textwrap

import coal
import numpy as np
import pinocchio as pin
import pytest
from helpers import EXAMPLE_ROBOTS, example_robot_data_dir

import reljac
import reljac.collision
from reljac.collision import CollisionModel, box, capsule, cylinder, mesh, read_srdf, sphere
from reljac.exceptions import CollisionError, FrameNotFound, ReljacError, SRDFError

ROBOTS = example_robot_data_dir()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="needs example-robot-data")


@pytest.fixture(scope="module")
def dual_cm(dual_arm):
    return CollisionModel(dual_arm)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


# ---------------------------------------------------------------------------- bundled geometry
@pytest.mark.parametrize("name, capsules, others", [("dual_arm", 28, 4), ("hand", 12, 1)])
def test_bundled_robots_carry_capsules_that_pinocchio_reads(name, capsules, others):
    """The <collision_checking><capsule/> blocks turn the named cylinders into coal capsules."""
    robot = reljac.Robot.bundled(name)
    kinds = [type(o.geometry).__name__ for o in robot.collision_model.geometryObjects]
    assert kinds.count("Capsule") == capsules
    assert len(kinds) - capsules == others
    links = {robot.model.frames[o.parentFrame].name for o in robot.collision_model.geometryObjects}
    assert not any(link.endswith(("_tool", "_tip")) for link in links)


def test_hand_tip_frames_lie_on_their_capsules(hand):
    """Each distal capsule ends one radius before its tip: the tip is 0 from the capsule."""
    cm = CollisionModel(hand, pairs=[])
    for finger in ("thumb", "index", "middle", "ring"):
        cm.add_obstacle("dot", sphere(1e-6), frame=f"{finger}_tip", links=[f"{finger}_distal"])
        rows = cm.distances(hand.neutral())
        assert rows.distance[0] == pytest.approx(-1e-6, abs=1e-9), finger


# ---------------------------------------------------------------------------- default pairs
def all_link_pairs(cm):
    return {frozenset(p) for p in itertools.combinations(cm.links, 2)}


@pytest.mark.parametrize("name", ["dual_arm", "hand", "tree30"])
def test_default_pairs_and_dropped_pairs_partition_the_link_pairs(name):
    robot = reljac.Robot.bundled(name)
    cm = CollisionModel(robot)
    active = [frozenset(p) for p in cm.pairs]
    dropped = [frozenset(d[:2]) for d in cm.dropped]
    assert len(set(active)) == len(active) and len(set(dropped)) == len(dropped)
    assert set(active) | set(dropped) == all_link_pairs(cm) and not set(active) & set(dropped)
    model = robot.model
    for a, b in cm.pairs:
        ja, jb = (model.frames[model.getFrameId(x)].parentJoint for x in (a, b))
        assert ja != jb, "rigid pair kept"
        assert model.parents[ja] != jb and model.parents[jb] != ja, "adjacent pair kept"
    near = cm.distances(robot.neutral(), within=1e-9)
    assert len(near) == 0, f"pairs touching at the neutral configuration kept: {near}"


def test_dropped_pairs_say_why(dual_cm):
    reasons = {frozenset(d[:2]): d[2] for d in dual_cm.dropped}
    assert reasons[frozenset(("torso", "left_link0"))].startswith("rigid")
    assert reasons[frozenset(("left_link7", "left_link8"))].startswith("rigid")
    assert reasons[frozenset(("left_link3", "left_link4"))].startswith("adjacent")
    assert reasons[frozenset(("left_link6", "left_link8"))].startswith("adjacent")  # link8 is fixed to link7
    assert reasons[frozenset(("left_link5", "left_link7"))].startswith("touching at the reference configuration")


@pytest.mark.slow
def test_the_default_pairs_guard_arms_against_each_other_the_torso_and_fingers(dual_cm):
    cm = CollisionModel(reljac.Robot.bundled("hand"))
    for pair in [("left_link8", "right_link8"), ("left_link4", "right_link5"), ("torso", "left_link4"),
                 ("torso", "right_link8"), ("base_link", "left_link8")]:
        assert pair in dual_cm.pairs
    for pair in [("index_distal", "thumb_distal"), ("palm", "index_distal"), ("index_distal", "middle_distal")]:
        assert pair in cm.pairs
    for pair in [("index_proximal", "middle_proximal"), ("middle_proximal", "ring_proximal")]:  # 5.7 mm apart
        assert pair not in cm.pairs                                                          # when straight
        assert pair in CollisionModel(reljac.Robot.bundled("hand"), touching_distance=0.005).pairs


def test_a_reference_configuration_and_a_touching_distance_change_the_touching_rule(hand):
    fist = hand.q_from_joint_values({f"{f}_{j}": 1.2 for f in ("index", "middle", "ring") for j in ("mcp", "pip")})
    default = CollisionModel(hand, touching_distance=0.005)
    curled = CollisionModel(hand, reference_q=fist, touching_distance=0.006)
    assert ("index_proximal", "middle_proximal") in default.pairs      # 5.7 mm apart when straight
    assert ("index_proximal", "middle_proximal") not in curled.pairs
    assert (curled.distances(fist, within=0.006).distance.size == 0)


def test_explicit_pairs_and_edits(dual_arm):
    cm = CollisionModel(dual_arm, pairs=[("right_link8", "left_link8"), ("torso", "left_link5")])
    assert cm.pairs == [("torso", "left_link5"), ("left_link8", "right_link8")]  # model order
    cm.add_pairs([("left_link2", "right_link2")])
    cm.remove_pairs([("left_link8", "right_link8")])
    assert cm.pairs == [("torso", "left_link5"), ("left_link2", "right_link2")]
    assert ("left_link8", "right_link8", "removed by the user") in cm.dropped
    rows = cm.distances(dual_arm.neutral())
    assert set(rows.pairs) == set(cm.pairs)


# ---------------------------------------------------------------------------- SRDF
@needs_robots
def test_panda_srdf_pairs_are_left_out_with_their_reasons():
    robot = reljac.Robot.from_urdf(ROBOTS / EXAMPLE_ROBOTS["panda"][0])
    path = ROBOTS / "panda_description/srdf/panda.srdf"
    srdf = read_srdf(path, [f.name for f in robot.model.frames])
    cm = CollisionModel(robot, srdf=path)
    active = {frozenset(p) for p in cm.pairs}
    reasons = {frozenset(d[:2]): d[2] for d in cm.dropped}
    for pair in srdf.disabled:
        key = frozenset((pair.link1, pair.link2))
        assert key not in active
        if key in reasons and not reasons[key].startswith("rigid"):
            assert reasons[key] == f"SRDF: {pair.reason}"
    assert ("panda_link2", "panda_link5") in cm.pairs or ("panda_link2", "panda_link5") in [d[:2] for d in cm.dropped]
    assert srdf.group_states["default"]["panda_joint4"] == pytest.approx(-2.35619)
    assert srdf.state_groups["default"] == "arm_and_hand"


def test_srdf_default_collisions_and_enabled_pairs(tmp_path, dual_arm):
    path = write(tmp_path, "dual_arm.srdf", """\
        <robot name="dual_arm">
          <disable_collisions link1="left_link8" link2="right_link8" reason="Never"/>
          <disable_default_collisions link="torso"/>
          <enable_collisions link1="torso" link2="left_link8"/>
          <group_state name="home" group="all"><joint name="torso_yaw" value="0.5"/><joint name="free" value="1 2 3 0 0 0 1"/></group_state>
        </robot>""")
    cm = CollisionModel(dual_arm, srdf=path)
    assert ("left_link8", "right_link8", "SRDF: Never") in cm.dropped
    torso = [p for p in cm.pairs if "torso" in p]
    assert torso == [("torso", "left_link8")]
    reasons = {d[:2]: d[2] for d in cm.dropped}  # with an SRDF, adjacency is the SRDF's business:
    assert reasons["left_link3", "left_link4"].startswith("touching at the reference configuration")
    assert cm.srdf.group_states == {"home": {"torso_yaw": 0.5, "free": (1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0)}}


@pytest.mark.parametrize("text, match", [
    ('<robot><disable_collisions link1="left_link8" link2="rigth_link8" reason="Never"/></robot>',
     "names link 'rigth_link8', which the robot does not have; did you mean 'right_link8'"),
    ('<robot><disable_default_collisions link="torsoo"/></robot>', "<disable_default_collisions> names link 'torsoo'"),
    ('<robot><disable_collisions link1="torso"/></robot>', "has no 'link2' attribute"),
    ('<robot><disable_collisions link1="torso" link2="base_link"></robot>', "not well-formed XML"),
    ('<srdf/>', "root element <srdf>, expected <robot>"),
    ('<robot><group_state name="home" group="arm"><joint name="j1" value="up"/></group_state></robot>',
     "group_state 'home' gives joint 'j1' the value 'up'"),
])
def test_bad_srdf_files_raise_one_srdf_error(tmp_path, dual_arm, text, match):
    path = write(tmp_path, "bad.srdf", text)
    with pytest.raises(SRDFError, match=match):
        CollisionModel(dual_arm, srdf=path)


def test_missing_srdf_files(tmp_path, dual_arm):
    with pytest.raises(SRDFError, match="does not exist"):
        CollisionModel(dual_arm, srdf=tmp_path / "nope.srdf")
    with pytest.raises(SRDFError, match="is a directory"):
        CollisionModel(dual_arm, srdf=tmp_path)
    with pytest.raises(SRDFError, match="must be a string or a path"):
        read_srdf(42)


# ---------------------------------------------------------------------------- obstacles
def test_world_and_attached_obstacles(dual_arm):
    cm = CollisionModel(dual_arm, pairs=[])
    q = dual_arm.neutral()
    cm.add_obstacle("ball", sphere(0.05), [0.0, 1.5, 1.25])  # beside the left hand, on the T-pose arm's axis
    assert cm.obstacles == ["ball"] and ("left_link8", "ball") in cm.pairs
    assert ("base_link", "ball") not in cm.pairs  # both fixed in the world: their distance never changes
    before = cm.pair_distance(q, "left_link8", "ball")
    # moved 0.1 along the normal, away from the convex hand: 0.1 further, same closest point
    cm.move_obstacle("ball", np.array([0.0, 1.5, 1.25]) + 0.1 * before.normal[0])
    after = cm.pair_distance(q, "left_link8", "ball")
    assert after.distance[0] == pytest.approx(before.distance[0] + 0.1, abs=1e-9)
    np.testing.assert_allclose(after.point1, before.point1, atol=1e-9)
    cm.add_obstacle("carried", box((0.1, 0.1, 0.1)), frame="left_tool")
    carried = [p for p in cm.pairs if "carried" in p]
    assert ("left_link8", "carried") not in carried and ("left_link7", "carried") not in carried  # fixed to it
    assert ("left_link6", "carried") in carried and ("right_link8", "carried") in carried
    cm.add_obstacle("carried", box((0.1, 0.1, 0.1)), frame="left_tool", links=["right_link8"])  # replaces
    assert [p for p in cm.pairs if "carried" in p] == [("right_link8", "carried")]
    cm.remove_obstacle("ball")
    assert cm.obstacles == ["carried"] and not any("ball" in p for p in cm.pairs)


def test_an_obstacle_named_like_a_robot_geometry_moves_alone(dual_arm):
    cm = CollisionModel(dual_arm, pairs=[])
    cm.add_obstacle("torso_1", sphere(0.05), [0.5, 0.0, 1.0])  # also the name of the torso's box
    torso_box = cm.geometry_model.geometryObjects[3].placement.copy()
    cm.move_obstacle("torso_1", [0.6, 0.0, 1.0])
    assert cm.geometry_model.geometryObjects[3].placement == torso_box
    rows = cm.distances(dual_arm.neutral())
    assert rows.distance[rows.index("torso", "torso_1")] == pytest.approx(0.6 - 0.1 - 0.05, abs=1e-9)


def test_an_attached_obstacle_moves_with_its_frame(dual_arm, rng):
    """A tiny sphere at the right tool's origin is as far from a left-arm link as a sphere
    obstacle fixed in the world at the same point."""
    attached, fixed = CollisionModel(dual_arm, pairs=[]), CollisionModel(dual_arm, pairs=[])
    attached.add_obstacle("dot", sphere(0.01), frame="right_tool", links=["left_link8"])
    for _ in range(3):
        q = dual_arm.random_configuration(rng)
        p = reljac.Kinematics(dual_arm, q).placement("right_tool").translation
        fixed.add_obstacle("dot", sphere(0.01), p, links=["left_link8"])
        assert attached.distances(q).distance[0] == pytest.approx(fixed.distances(q).distance[0], abs=1e-9)


@needs_robots
def test_a_mesh_obstacle_is_its_convex_hull(dual_arm):
    path = ROBOTS / "panda_description/meshes/collision/link1.stl"
    hull = mesh(path, scale=2.0)
    points = np.array(hull.points())
    cm = CollisionModel(dual_arm, pairs=[])
    cm.add_obstacle("link1", hull, [3.0, 0.0, 0.0])
    top = points[:, 0].max() + 3.0  # the hull's furthest point along +x, in the world
    cm.add_obstacle("probe", sphere(0.01), [top + 0.5, 0.0, 0.0], links=[])
    cm.add_pairs([("link1", "probe")])
    rows = cm.distances(dual_arm.neutral())
    assert rows.distance[rows.index("link1", "probe")] == pytest.approx(0.49, abs=1e-3)


# ---------------------------------------------------------------------------- bad input
def test_unknown_links_in_pairs_name_the_link_and_the_valid_ones(dual_arm, dual_cm):
    with pytest.raises(CollisionError, match="'left_lnk8' is not a link with collision geometry of robot "
                                             "'dual_arm'; did you mean 'left_link8'"):
        CollisionModel(dual_arm, pairs=[("left_lnk8", "right_link8")])
    with pytest.raises(CollisionError, match="link 'left_tool' of robot 'dual_arm' has no collision geometry"):
        dual_cm.add_pairs([("left_tool", "right_link8")])
    with pytest.raises(CollisionError, match="two different bodies"):
        dual_cm.add_pairs([("torso", "torso")])
    with pytest.raises(CollisionError, match="a pair must be two names"):
        dual_cm.add_pairs(["torso"])
    with pytest.raises(CollisionError, match="pairs must be a list"):
        dual_cm.add_pairs("torso")
    with pytest.raises(CollisionError, match="is not active"):
        dual_cm.remove_pairs([("left_link3", "left_link4")])
    with pytest.raises(CollisionError, match="is not active"):
        dual_cm.pair_distance(dual_arm.neutral(), "left_link3", "left_link4")


def test_a_robot_without_collision_geometry_is_refused(tmp_path):
    path = write(tmp_path, "bare.urdf", """\
        <robot name="bare"><link name="a"/><link name="b"><visual><geometry><sphere radius="0.1"/></geometry></visual></link>
          <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
          <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>""")
    with pytest.raises(CollisionError, match="robot 'bare' has no collision geometry"):
        CollisionModel(reljac.Robot.from_urdf(path))
    with pytest.raises(ReljacError, match="not loaded from a URDF"):
        CollisionModel(reljac.Robot(reljac.Robot.bundled("planar_2link").model))


@pytest.mark.parametrize("within", [-0.01, float("nan"), "far", True])
def test_negative_or_non_numeric_bounds_are_refused(dual_arm, dual_cm, within):
    with pytest.raises(CollisionError, match="within must be a number >= 0"):
        dual_cm.distances(dual_arm.neutral(), within=within)
    with pytest.raises(CollisionError, match="within must be a number >= 0"):
        dual_cm.compute(dual_arm.data, within=within)
    with pytest.raises(CollisionError, match="touching_distance must be a finite number >= 0"):
        CollisionModel(dual_arm, touching_distance=within)


def test_kinematics_data_of_another_robot_is_refused(dual_cm):
    with pytest.raises(CollisionError, match="data must be a pin.Data of robot 'dual_arm'"):
        dual_cm.compute(reljac.Robot.bundled("hand").data, within=0.05)
    with pytest.raises(CollisionError, match="got str"):
        dual_cm.compute("data")


def test_bad_configurations_are_refused(dual_arm, dual_cm):
    with pytest.raises(reljac.ConfigurationError, match=r"shape \(3,\), expected \(15,\)"):
        dual_cm.distances(np.zeros(3))
    with pytest.raises(reljac.ConfigurationError, match="reference_q"):
        CollisionModel(dual_arm, reference_q=np.full(15, np.nan))


@pytest.mark.parametrize("make, match", [
    (lambda: sphere(-0.1), "a sphere's radius must be a positive number"),
    (lambda: sphere(float("nan")), "a sphere's radius"),
    (lambda: sphere(True), "a sphere's radius"),
    (lambda: box((0.1, 0.2)), "a box's size must be 3 side lengths"),
    (lambda: box((0.1, 0.0, 0.2)), "a box's side must be a positive number"),
    (lambda: capsule(0.1, -1.0), "a capsule's length"),
    (lambda: cylinder("r", 1.0), "a cylinder's radius"),
    (lambda: mesh("/no/such/file.stl"), "does not exist"),
])
def test_bad_shapes_are_refused(make, match):
    with pytest.raises(CollisionError, match=match):
        make()


def test_bad_obstacles_are_refused(dual_arm):
    cm = CollisionModel(dual_arm, pairs=[])
    with pytest.raises(CollisionError, match="must be a coal geometry"):
        cm.add_obstacle("table", (1.0, 1.0, 0.1))
    with pytest.raises(CollisionError, match="'torso' is a link of robot 'dual_arm'"):
        cm.add_obstacle("torso", sphere(0.1))
    with pytest.raises(CollisionError, match="non-empty string"):
        cm.add_obstacle("", sphere(0.1))
    with pytest.raises(FrameNotFound, match="did you mean 'left_tool'"):
        cm.add_obstacle("ball", sphere(0.1), frame="left_tol")
    with pytest.raises(CollisionError, match="did you mean 'left_link8'"):
        cm.add_obstacle("ball", sphere(0.1), links=["left_link88"])
    with pytest.raises(CollisionError, match="position must be 3 finite numbers"):
        cm.add_obstacle("ball", sphere(0.1), [0.0, np.nan, 1.0])
    with pytest.raises(CollisionError, match="rotation"):
        cm.add_obstacle("ball", sphere(0.1), np.diag([2.0, 1.0, 1.0, 1.0]))
    with pytest.raises(CollisionError, match=r"shape \(2, 2\)"):
        cm.add_obstacle("ball", sphere(0.1), np.eye(2))
    with pytest.raises(CollisionError, match="no obstacle named 'bal'"):
        cm.move_obstacle("bal", [0, 0, 0])
    assert cm.obstacles == [] and cm.pairs == []


@pytest.mark.parametrize("position", [[True, False, True], np.array([1, 0, 1], dtype=bool), ["0", "0", "1"],
                                      ("0.1", 0.0, 0.2), [0.0, None, 1.0]])
def test_obstacle_positions_of_booleans_or_text_are_refused(dual_arm, position):
    """Issue 18: numpy reads True as 1.0 and "1" as 1.0; an obstacle's position is 3 numbers."""
    cm = CollisionModel(dual_arm, pairs=[])
    with pytest.raises(CollisionError, match="an obstacle's position must be 3 finite numbers"):
        cm.add_obstacle("ball", sphere(0.1), position)
    cm.add_obstacle("ball", sphere(0.1), [0.0, 0.0, 1.0])
    with pytest.raises(CollisionError, match="an obstacle's position must be 3 finite numbers"):
        cm.move_obstacle("ball", position)
    np.testing.assert_array_equal(cm.obstacle("ball").T_fo.translation, [0.0, 0.0, 1.0])


def test_obstacles_beyond_coals_range_are_refused(dual_arm):
    """coal's distances fail from coordinates of 1e12 m (1e20: an exception from its broad phase,
    which the command line reported as a reljac bug): positions and sizes up to 1e6 m work, beyond
    is a CollisionError naming the limit, and the model is left as it was."""
    cm = CollisionModel(dual_arm, pairs=[])
    cm.add_obstacle("far", sphere(1e6), [1e6, 0.0, -1e6])
    distances = cm.distances(dual_arm.neutral())
    d = distances.distance[distances.index("torso", "far")]
    assert abs(d - (np.sqrt(2.0) - 1.0) * 1e6) < 10.0  # the centre sqrt(2) 1e6 m away, less the radius
    for position in ([1e20, 0.0, 0.0], pin.SE3(np.eye(3), np.array([0.0, 0.0, 2e6]))):
        with pytest.raises(CollisionError, match="within 1e.06 m of its frame's origin"):
            cm.add_obstacle("too far", sphere(0.1), position)
        with pytest.raises(CollisionError, match="within 1e.06 m"):
            cm.move_obstacle("far", position)
    with pytest.raises(CollisionError, match="a sphere's radius must be at most 1e.06 m, got 1e.07"):
        sphere(1e7)
    with pytest.raises(CollisionError, match="sizes must be positive finite numbers of metres, at most 1e.06"):
        cm.add_obstacle("big", coal.Sphere(1e9))
    assert cm.obstacles == ["far"]
    np.testing.assert_array_equal(cm.obstacle("far").T_fo.translation, [1e6, 0.0, -1e6])


@pytest.mark.parametrize("make, what", [
    (lambda: coal.Sphere(-1.0), r"Sphere has radius \[-1.0\]"),
    (lambda: coal.Sphere(float("nan")), r"Sphere has radius \[nan\]"),
    (lambda: coal.Box(0.1, 0.2, -0.3), r"Box has halfSide \[0.05, 0.1, -0.15\]"),
    (lambda: coal.Capsule(0.1, -0.2), r"Capsule has halfLength \[-0.1\]"),
    (lambda: coal.Cylinder(0.0, 0.2), r"Cylinder has radius \[0.0\]"),
    (lambda: coal.Ellipsoid(0.1, -0.1, 0.1), r"Ellipsoid has radii"),
])
def test_coal_shapes_of_negative_or_zero_size_are_refused(dual_arm, make, what):
    """Issue 18: coal.Sphere(-1) read as far away from everything: avoidance ignored it."""
    cm = CollisionModel(dual_arm, pairs=[])
    with pytest.raises(CollisionError, match=f"an obstacle's {what}.*sizes must be positive finite numbers"):
        cm.add_obstacle("ball", make())
    assert cm.obstacles == []
    cm.add_obstacle("ball", coal.Sphere(0.1), [0.0, 0.0, 1.0])  # a well-made coal shape is welcome


def test_module_function_and_result_helpers(dual_arm, dual_cm):
    q = dual_arm.random_configuration(5)
    a = reljac.collision.distances(dual_arm, q, within=0.3)
    b = dual_cm.distances(q, within=0.3)
    assert a.pairs == b.pairs
    np.testing.assert_allclose(a.distance, b.distance, atol=1e-9)
    assert reljac.collision.distances(dual_arm, q) is not None  # the cached model serves again
    with pytest.raises(CollisionError, match="needs a reljac.Robot or a CollisionModel"):
        reljac.collision.distances("dual_arm", q)
    with pytest.raises(KeyError, match="not among these"):
        b.index("torso", "nothing")
    assert repr(b).startswith(f"Distances({len(b)} pairs")


# ---------------------------------------------------------------------------- copies of a robot
@pytest.mark.parametrize("copier", ["deepcopy", "pickle"])
@pytest.mark.slow
def test_a_copied_robot_keeps_the_obstacles_and_pair_edits_of_its_collisions(copier):
    """Issue 18: copy.deepcopy and pickle dropped what was added through robot.collisions."""
    import copy
    import pickle

    robot = reljac.Robot.bundled("dual_arm")
    robot.collisions.add_obstacle("table", box((1.2, 0.8, 0.05)), [0.6, 0.0, 0.4])
    robot.collisions.add_obstacle("cup", sphere(0.04), [0.0, 0.0, 0.1], frame="left_tool", links=["right_link8"])
    robot.collisions.remove_pairs([("left_link8", "right_link8")])
    robot.collisions.add_pairs([("left_link5", "left_link7")])
    clone = copy.deepcopy(robot) if copier == "deepcopy" else pickle.loads(pickle.dumps(robot))
    assert clone.collisions is not robot.collisions
    assert clone.collisions.obstacles == ["table", "cup"]
    assert clone.collisions.pairs == robot.collisions.pairs
    assert clone.collisions.dropped == robot.collisions.dropped
    assert ("left_link8", "right_link8", "removed by the user") in clone.collisions.dropped
    q = robot.random_configuration(7)
    a, b = robot.collisions.distances(q), clone.collisions.distances(q)
    assert a.pairs == b.pairs and ("right_link8", "cup") in b.pairs and ("torso", "table") in b.pairs
    np.testing.assert_allclose(b.distance, a.distance, atol=1e-12)
    np.testing.assert_allclose(b.jacobian, a.jacobian, atol=1e-12)
    clone.collisions.move_obstacle("table", [5.0, 0.0, 0.4])  # the copies are independent
    assert robot.collisions.obstacle("table").T_fo.translation[0] == 0.6
    again = pickle.loads(pickle.dumps(clone))  # a copy of a copy whose collisions were never built
    assert pickle.loads(pickle.dumps(again)).collisions.obstacle("table").T_fo.translation[0] == 5.0


@pytest.mark.slow
def test_a_pickled_robot_keeps_the_obstacle_pairs_removed_and_added():
    """The pairs of an obstacle edited after it was added (one removed, one added with a link it
    was not given) come back as they were, and so do the dropped pairs."""
    import pickle

    robot = reljac.Robot.bundled("dual_arm")
    robot.collisions.add_obstacle("cup", sphere(0.04), [0.0, 0.0, 0.1], frame="left_tool",
                                  links=["right_link8", "right_link7"])
    robot.collisions.remove_pairs([("right_link7", "cup")])
    robot.collisions.add_pairs([("left_link5", "cup")])
    clone = pickle.loads(pickle.dumps(robot))
    assert clone.collisions.pairs == robot.collisions.pairs
    assert ("right_link7", "cup") not in clone.collisions.pairs and ("left_link5", "cup") in clone.collisions.pairs
    assert clone.collisions.dropped == robot.collisions.dropped
    assert clone.collisions.obstacle("cup").links == robot.collisions.obstacle("cup").links
    q = robot.random_configuration(3)
    a, b = robot.collisions.distances(q), clone.collisions.distances(q)
    assert a.pairs == b.pairs
    np.testing.assert_allclose(b.distance, a.distance, atol=1e-12)

@needs_robots
def test_an_srdf_prints_as_one_short_line():
    """Issue 18: robot.srdf's repr listed every disabled pair (thousands of characters)."""
    robot = reljac.Robot.load("talos")
    text = repr(robot.srdf)
    assert len(text) < 250 and "\n" not in text, text
    assert text.startswith(f"SRDF('{robot.srdf.path}' of robot 'talos': {len(robot.srdf.disabled)} disabled pairs")
    assert f"{len(robot.srdf.group_states)} named configurations (half_sitting" in text


def test_a_collision_model_and_its_avoidance_copy_and_pickle(dual_arm):
    """copy.deepcopy or pickle of a CollisionAvoidance (or its task) failed on the model's lock
    ('cannot pickle _thread.RLock'): the copy has the same pairs and obstacles, the same distances
    (a pickle's geometry to 1e-9 m) and is independent of the original."""
    import copy
    import pickle

    from reljac.ik import CollisionAvoidance

    cm = CollisionModel(dual_arm)
    cm.add_obstacle("ball", sphere(0.1), [0.4, 0.0, 0.5])
    avoidance = CollisionAvoidance(dual_arm, model=cm)
    q = dual_arm.random_configuration(np.random.default_rng(0))
    for make in (copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
        other = make(avoidance)
        assert other.model.pairs == cm.pairs and other.model.obstacles == ["ball"]
        np.testing.assert_allclose(other.model.distances(q).distance, cm.distances(q).distance, atol=1e-9)
        other.model.remove_obstacle("ball")
        assert cm.obstacles == ["ball"]  # the original keeps its obstacle
        assert type(make(avoidance.as_task())).__name__ == "CollisionAvoidanceTask"


@pytest.mark.parametrize("vertices", [
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n",  # a flat square
    "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",  # one triangle
])
def test_a_flat_mesh_is_kept_as_it_is_and_does_not_crash(dual_arm, tmp_path, vertices):
    """An adversarial pass: qhull, asked for the hull of 4 points in a plane, killed the process
    (SIGSEGV) from reljac.collision.mesh and from a robot whose <collision> mesh is flat. Such a
    mesh is kept as its triangles (as the docstring said), its distances measured."""
    path = tmp_path / "flat.obj"
    path.write_text(vertices)
    flat = mesh(path)
    assert isinstance(flat, coal.BVHModelBase)
    cm = CollisionModel(dual_arm, pairs=[])
    cm.add_obstacle("flat", flat, [3.0, 0.0, 0.0], links=[])
    cm.add_obstacle("probe", sphere(0.01), [3.0, 0.5, 0.5], links=[])
    cm.add_pairs([("flat", "probe")])
    rows = cm.distances(dual_arm.neutral())
    assert rows.distance[0] == pytest.approx(0.5 - 0.01, abs=1e-9)  # the probe 0.5 m above the plane z = 0


def test_a_mesh_without_area_is_refused(tmp_path):
    """Points on a line: coal measured -0.01 m (minus the probe's radius) from such triangles."""
    path = tmp_path / "line.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 2 0 0\nv 3 0 0\nf 1 2 3\nf 2 3 4\n")
    for convex in (True, False):
        with pytest.raises(CollisionError, match="has no area: its vertices are on a line or at one point"):
            mesh(path, convex=convex)


def test_an_obstacle_coal_cannot_measure_leaves_the_model_as_it_was(dual_arm):
    """A coal.TriangleP obstacle: a bare coal ValueError, then the obstacle listed, its pairs
    counted but not measured, and every later add_obstacle failing the same way."""
    cm = CollisionModel(dual_arm)
    pairs = list(cm.pairs)
    triangle = coal.TriangleP(np.zeros(3), np.array([0.1, 0.0, 0.0]), np.array([0.0, 0.1, 0.0]))
    with pytest.raises(CollisionError, match="obstacle 'tri': coal cannot measure the distance from a TriangleP"):
        cm.add_obstacle("tri", triangle, [1.0, 0.0, 0.0])
    assert cm.obstacles == [] and cm.pairs == pairs
    cm.add_obstacle("ball", sphere(0.1), [1.0, 0.0, 0.0])
    rows = cm.distances(dual_arm.neutral())
    assert len(rows.distance) > len(pairs) and np.isfinite(rows.distance).all()
    with pytest.raises(CollisionError, match="coal cannot measure"):
        cm.add_obstacle("ball", triangle, [1.0, 0.0, 0.0])  # replacing one: the old one stays
    assert cm.obstacle("ball").geometry is not triangle and len(cm.distances(dual_arm.neutral()).distance) == len(rows.distance)


@pytest.mark.parametrize("name", [["ball"], {"ball"}, 3])
def test_an_obstacle_name_that_is_not_a_string_is_named(dual_arm, name):
    cm = CollisionModel(dual_arm, pairs=[])
    cm.add_obstacle("ball", sphere(0.1), [1.0, 0.0, 0.0])
    for call in (lambda: cm.remove_obstacle(name), lambda: cm.move_obstacle(name, [0, 0, 0]),
                 lambda: cm.obstacle(name)):
        with pytest.raises(CollisionError, match="an obstacle's name is a string, not"):
            call()
    assert cm.obstacles == ["ball"]


def test_an_obstacle_coal_cannot_measure_is_refused_even_without_pairs(dual_arm):
    """A review: added with links=[] it had no pair for coal to refuse, and a pair added later (a
    bare coal ValueError) broke the model for good."""
    cm = CollisionModel(dual_arm)
    triangle = coal.TriangleP(np.zeros(3), np.array([0.1, 0.0, 0.0]), np.array([0.0, 0.1, 0.0]))
    with pytest.raises(CollisionError, match="coal cannot measure the distance from a TriangleP to a"):
        cm.add_obstacle("tri", triangle, [1.0, 0.0, 0.0], links=[])
    assert cm.obstacles == []


@pytest.mark.parametrize("thickness", [1e-8, 3e-8, 1e-7])
def test_a_nearly_flat_mesh_does_not_crash(tmp_path, thickness):
    """A review: 4 points 1e-8 of their extent off a plane passed the flatness test and qhull
    crashed the process; such a mesh is kept as its triangles."""
    path = tmp_path / "thin.obj"
    path.write_text(f"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 {thickness}\nf 1 2 3\nf 2 4 3\n")
    assert isinstance(mesh(path), coal.BVHModelBase)

"""CollisionModel.add_obstacles: many obstacles with one rebuild of the pairs, the same model as
one add_obstacle call each (the slower path, its oracle), and a bad one adding none."""

from __future__ import annotations

import copy

import coal
import numpy as np
import pinocchio as pin
import pytest

from reljac.apps.hierarchy_file import read_hierarchy
from reljac.collision import CollisionModel, box, capsule, sphere
from reljac.collision.bodies import Bodies
from reljac.exceptions import CollisionError, FrameNotFound
from reljac.ik import CollisionAvoidance


def _mixed_obstacles(rng):
    """World spheres (a point cloud), a box carried by the left tool against two links, a capsule
    in the world turned about z."""
    cloud = [{"name": f"p{i}", "shape": sphere(0.02), "placement": p}
             for i, p in enumerate(rng.uniform([-0.8, -0.8, 0.6], [0.8, 0.8, 1.6], size=(40, 3)))]
    turned = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.7), np.array([0.6, -0.3, 1.1]))
    return [{"name": "ball", "shape": sphere(0.05), "placement": [0.0, 1.5, 1.25]},
            *cloud,
            {"name": "carried", "shape": box((0.1, 0.1, 0.1)), "frame": "left_tool",
             "links": ["right_link8", "right_link7"]},
            {"name": "rod", "shape": capsule(0.03, 0.4), "placement": turned}]


def test_obstacles_added_at_once_make_the_model_one_add_obstacle_each_makes(dual_arm, rng):
    items = _mixed_obstacles(rng)
    one_by_one, at_once = CollisionModel(dual_arm), CollisionModel(dual_arm)
    one_by_one.add_obstacle("ball", sphere(0.2), [2.0, 0.0, 0.0])  # there before: replaced by both
    at_once.add_obstacle("ball", sphere(0.2), [2.0, 0.0, 0.0])
    for item in items:
        one_by_one.add_obstacle(item["name"], item["shape"], item.get("placement"), frame=item.get("frame"),
                                links=item.get("links"))
    at_once.add_obstacles(iter(items))  # any iterable, read once
    assert at_once.obstacles == one_by_one.obstacles == ["ball", *(f"p{i}" for i in range(40)), "carried", "rod"]
    assert at_once.obstacle("ball").geometry.radius == 0.05
    assert at_once.pairs == one_by_one.pairs
    assert [p for p in at_once.pairs if "carried" in p] == [("right_link7", "carried"), ("right_link8", "carried")]
    for _ in range(3):
        q = dual_arm.random_configuration(rng)
        expected, got = one_by_one.distances(q), at_once.distances(q)
        assert got.pairs == expected.pairs and len(got.pairs) > 40 * 10
        for field in ("distance", "point1", "point2", "normal", "jacobian"):
            np.testing.assert_array_equal(getattr(got, field), getattr(expected, field))


BAD_THIRD = [  # (the third obstacle, the error's class, its message's start, words in it)
    ("a box", CollisionError, "obstacle 3: a mapping of add_obstacle's arguments", ""),
    ({"name": "c", "shape": sphere(0.1), "colour": "red"}, CollisionError, "obstacle 3: unknown key 'colour'", ""),
    ({"name": "c"}, CollisionError, "obstacle 3: name and shape are needed", ""),
    ({"name": "c", "shape": (1.0, 1.0, 0.1)}, CollisionError, "obstacle 3 ('c'): an obstacle's shape must be a coal",
     ""),
    ({"name": ["c"], "shape": sphere(0.1)}, CollisionError, "obstacle 3 (['c']): an obstacle's name must be a", ""),
    ({"name": "torso", "shape": sphere(0.1)}, CollisionError, "obstacle 3 ('torso'): obstacle name 'torso' is a link",
     ""),
    ({"name": "c", "shape": sphere(0.1), "frame": "left_tol"}, FrameNotFound, "obstacle 3 ('c'): ", "'left_tool'"),
    ({"name": "c", "shape": sphere(0.1), "links": ["left_link88"]}, CollisionError, "obstacle 3 ('c'): ",
     "'left_link8'"),
    ({"name": "c", "shape": sphere(0.1), "placement": [0.0, np.nan, 1.0]}, CollisionError,
     "obstacle 3 ('c'): an obstacle's position must be 3 finite numbers", ""),
    ({"name": "a", "shape": sphere(0.1)}, CollisionError, "obstacles 1 and 3 are both named 'a'", "must be unique"),
]


@pytest.mark.parametrize("bad, kind, start, words", BAD_THIRD)
def test_a_bad_obstacle_among_many_is_named_by_its_place_and_none_is_added(dual_arm, bad, kind, start, words):
    cm = CollisionModel(dual_arm)
    cm.add_obstacle("kept", sphere(0.1), [2.0, 0.0, 0.0])
    pairs = cm.pairs
    items = [{"name": "a", "shape": sphere(0.1), "placement": [1.0, 0.0, 0.0]},
             {"name": "kept", "shape": sphere(0.3)}, bad, {"name": "d", "shape": sphere(0.1)}]
    with pytest.raises(kind) as raised:
        cm.add_obstacles(items)
    message = str(raised.value)
    assert message.startswith(start) and words in message and "\n" not in message
    assert cm.obstacles == ["kept"] and cm.pairs == pairs
    assert cm.obstacle("kept").geometry.radius == 0.1


@pytest.mark.parametrize("obstacles", ["ball", {"name": "ball", "shape": None}, 3, None])
def test_obstacles_not_given_as_a_list_are_refused(dual_arm, obstacles):
    cm = CollisionModel(dual_arm, pairs=[])
    with pytest.raises(CollisionError, match="obstacles must be a list of mappings of add_obstacle's arguments"):
        cm.add_obstacles(obstacles)
    assert cm.obstacles == []


def test_a_hierarchy_file_holds_more_obstacles_than_the_old_cap_of_a_hundred(dual_arm, tmp_path):
    """The file's [[obstacle]] tables reach the model in file order, each checked against the links."""
    tables = "".join(f'[[obstacle]]\nname = "p{i}"\nshape = "sphere"\nradius = 0.01\nposition = [{1 + 0.02 * i}, 0, 0]\n'
                     for i in range(150))
    path = tmp_path / "many.toml"
    path.write_text('[[task]]\ntype = "posture"\n[collision]\n' + tables)
    (avoidance,) = [c for c in read_hierarchy(dual_arm, path).controller.limits if isinstance(c, CollisionAvoidance)]
    model = avoidance.model
    assert model.obstacles == [f"p{i}" for i in range(150)]
    assert model.obstacle("p149").T_fo.translation[0] == pytest.approx(1 + 0.02 * 149)
    assert sum(1 for p in model.pairs if p[1] == "p7") == len(model.links) - 1  # not base_link: both fixed


def test_an_obstacle_removed_or_replaced_leaves_no_dropped_pair_behind(dual_arm):
    """An adversarial pass: a pair removed by the user stayed in `dropped` after its obstacle went,
    and the next pair edit failed with a bare KeyError (a copied robot's too); a replaced obstacle
    had its pair both active and dropped."""
    cm = CollisionModel(dual_arm)
    cm.add_obstacles([{"name": "o", "shape": sphere(0.1)}, {"name": "k", "shape": sphere(0.1), "placement": [2, 0, 0]}])
    cm.remove_pairs([("torso", "o"), ("torso", "k")])
    assert ("torso", "o", "removed by the user") in cm.dropped
    cm.remove_obstacle("o")
    cm.add_obstacle("k", sphere(0.2), [2.0, 0.0, 0.0])
    assert not any(name in d[:2] for d in cm.dropped for name in ("o", "k"))
    assert ("torso", "k") in cm.pairs
    cm.add_pairs([("left_link3", "right_link3")])
    assert ("left_link3", "right_link3") in cm.pairs


def _bvh(vertex):
    mesh = coal.BVHModelOBBRSS()
    mesh.beginModel(0, 0)
    mesh.addTriangle(np.zeros(3), np.asarray(vertex, dtype=float), np.array([0.0, 0.1, 0.0]))
    mesh.endModel()
    return mesh


@pytest.mark.parametrize("vertex", [[np.nan, 0.0, 0.0], [np.inf, 0.0, 0.0], [1e20, 0.0, 0.0]])
def test_a_coal_mesh_with_a_vertex_not_a_finite_number_of_metres_is_refused(dual_arm, vertex):
    """It was taken: every distance 0.0 with NaN witness points and Jacobians (a vertex at 1e20 m:
    witness points at 2.5e19)."""
    cm = CollisionModel(dual_arm, pairs=[])
    with pytest.raises(CollisionError, match="a vertex that is not a finite number of metres"):
        cm.add_obstacles([{"name": "m", "shape": _bvh(vertex), "placement": [0.5, 0.0, 1.0]}])
    assert cm.obstacles == []
    cm.add_obstacle("m", _bvh([0.1, 0.0, 0.0]), [0.5, 0.0, 1.0])
    assert np.isfinite(cm.distances(dual_arm.neutral()).jacobian).all()


def test_a_shape_changed_by_its_caller_after_it_was_added_does_not_change_the_model(dual_arm):
    q = dual_arm.neutral()
    shape = sphere(0.1)
    cm = CollisionModel(dual_arm, pairs=[])
    cm.add_obstacles([{"name": "a", "shape": shape, "placement": [0.5, 0.0, 1.0]},
                      {"name": "b", "shape": shape, "placement": [0.5, 0.5, 1.0]}])
    rows = cm.distances(q)
    before = dict(zip(rows.pairs, rows.distance, strict=True))
    shape.radius = 0.3
    rows = cm.distances(q)
    assert dict(zip(rows.pairs, rows.distance, strict=True)) == before
    cm.add_pairs([("left_link3", "right_link3")])  # a rebuild reads the model's own shapes too
    rows = cm.distances(q)
    assert {p: d for p, d in zip(rows.pairs, rows.distance, strict=True) if p in before} == before


def test_edits_in_any_order_give_the_model_built_at_once_from_where_they_end(dual_arm, rng):
    """Obstacles added, moved, replaced and removed between pair edits (each rebuild reuses the
    geometry model built before): distances as a model built from scratch from the final
    obstacles and pairs."""
    cm = CollisionModel(dual_arm)
    names = [f"o{i}" for i in range(6)]
    for _ in range(40):
        op = rng.integers(5)
        name = str(rng.choice(names))
        where = rng.uniform([-0.8, -0.8, 0.6], [0.8, 0.8, 1.6])
        if op == 0:
            cm.add_obstacles([{"name": name, "shape": sphere(float(rng.uniform(0.02, 0.1))), "placement": where}])
        elif op == 1 and name in cm.obstacles:
            cm.move_obstacle(name, where)
        elif op == 2 and name in cm.obstacles:
            cm.remove_obstacle(name)
        elif op == 3 and cm.pairs:
            cm.remove_pairs([cm.pairs[int(rng.integers(len(cm.pairs)))]])
        elif op == 4:
            cm.add_pairs([("left_link4", "right_link4")])
    fresh = CollisionModel(dual_arm, pairs=[])
    fresh.add_obstacles({"name": n, "shape": cm.obstacle(n).geometry, "placement": cm.obstacle(n).T_fo,
                         "links": []} for n in cm.obstacles)
    fresh.check_only(cm.pairs)
    assert fresh.pairs == cm.pairs and fresh.obstacles == cm.obstacles
    for _ in range(3):
        q = dual_arm.random_configuration(rng)
        expected, got = fresh.distances(q), cm.distances(q)
        assert got.pairs == expected.pairs
        np.testing.assert_allclose(got.distance, expected.distance, atol=1e-9)
        np.testing.assert_allclose(got.jacobian, expected.jacobian, atol=1e-9)


def test_an_interrupted_add_obstacles_adds_none_and_later_rebuilds_stay_true(dual_arm, monkeypatch, rng):
    """A review: a Ctrl-C in the rebuild's loop over the obstacles (most of a large call's time)
    left the kept geometry model with objects its count did not know, and every later rebuild
    shifted the obstacles' geometries (a penetration of 3 cm read as 42 cm clear)."""
    cm = CollisionModel(dual_arm)
    cm.add_obstacles([{"name": "first", "shape": sphere(0.05), "placement": [0.4, 0.0, 1.2]}])
    obstacles, pairs = cm.obstacles, cm.pairs
    calls = {"n": 0}
    placement = Bodies.joint_placement

    def interrupted(self, obstacle):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return placement(self, obstacle)

    monkeypatch.setattr(Bodies, "joint_placement", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cm.add_obstacles([{"name": f"b{i}", "shape": sphere(0.02 + 0.01 * i), "placement": [0.3, 0.1 * i, 1.0]}
                          for i in range(6)])
    monkeypatch.undo()
    assert cm.obstacles == obstacles and cm.pairs == pairs
    cm.add_obstacles([{"name": f"b{i}", "shape": sphere(0.02 + 0.01 * i), "placement": [0.3, 0.1 * i, 1.0]}
                      for i in range(6)])
    cm.add_pairs([("left_link3", "right_link3")])
    fresh = CollisionModel(dual_arm, pairs=[])
    fresh.add_obstacles({"name": n, "shape": cm.obstacle(n).geometry, "placement": cm.obstacle(n).T_fo, "links": []}
                        for n in cm.obstacles)
    fresh.check_only(cm.pairs)
    q = dual_arm.random_configuration(rng)
    expected, got = fresh.distances(q), cm.distances(q)
    assert got.pairs == expected.pairs
    np.testing.assert_allclose(got.distance, expected.distance, atol=1e-9)


def test_a_shallow_copy_of_a_model_is_a_model_of_its_own(dual_arm):
    """A review: copy.copy shared the bodies of the two models; an obstacle added to the copy made
    the original's move_obstacle fail with an IndexError."""
    cm = CollisionModel(dual_arm)
    cm.add_obstacle("a", sphere(0.05), [0.5, 0.0, 1.0])
    other = copy.copy(cm)
    assert other.robot is cm.robot and other.obstacles == ["a"] and other.pairs == cm.pairs
    other.add_obstacle("b", sphere(0.05), [0.5, 0.3, 1.0])
    cm.move_obstacle("a", [0.6, 0.0, 1.0])
    assert cm.obstacles == ["a"] and other.obstacles == ["a", "b"]
    assert other.obstacle("a").T_fo.translation[0] == 0.5

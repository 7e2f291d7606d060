"""CollisionModel.add_obstacles: many obstacles with one rebuild of the pairs, the same model as
one add_obstacle call each (the slower path, its oracle), and a bad one adding none."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from reljac.apps.hierarchy_file import read_hierarchy
from reljac.collision import CollisionModel, box, capsule, sphere
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
    ({"name": "a", "shape": sphere(0.1)}, CollisionError, "obstacle 3 ('a'): a name given twice", ""),
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

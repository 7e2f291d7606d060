"""reljac.placement's mobile base, task and floor region: the base joint moves the robot as a rigid
transform of the world (against the fixed-base robot's own kinematics), placements and
configurations are inverse, waypoint paths and floor grids as stated."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from reljac import Kinematics, Robot
from reljac.exceptions import ConfigurationError, TaskError
from reljac.placement import FloorRegion, PlacementTask, mobile_base, with_planar_base


@pytest.fixture(scope="module")
def dual_arm():
    return Robot.bundled("dual_arm")


def test_a_planar_base_moves_every_frame_by_the_placement(dual_arm, rng):
    mobile = mobile_base(dual_arm, height=0.3)
    assert mobile.kind == "planar" and mobile.robot.nq == dual_arm.nq + 4
    for _ in range(5):
        q = dual_arm.random_configuration(rng)
        placement = rng.uniform(-2, 2, 3)
        full = mobile.configuration(placement, np.r_[0.0, 0.0, 1.0, 0.0, q])
        T_wB = mobile.base_poses(placement)[0]
        for frame in ("left_tool", "right_tool", "torso"):
            expected = T_wB @ Kinematics(dual_arm, q).placement(frame).homogeneous
            np.testing.assert_allclose(Kinematics(mobile.robot, full).placement(frame).homogeneous, expected,
                                       atol=1e-12)
        # the base frame itself: Rz(yaw), (x, y) and the mount height
        np.testing.assert_allclose(T_wB[:3, 3], [placement[0], placement[1], 0.3], atol=1e-12)
        np.testing.assert_allclose(mobile.placement_of(full), placement, atol=1e-12)


def test_a_floating_base_is_held_upright_at_its_height(dual_arm, rng):
    floating = Robot.bundled("dual_arm", floating_base=True)
    mobile = mobile_base(floating)
    assert mobile.kind == "free-flyer"
    for _ in range(3):
        placement = rng.uniform(-1, 1, 3)
        q = mobile.configuration(placement)
        np.testing.assert_allclose(mobile.placement_of(q), placement, atol=1e-12)
        T = Kinematics(mobile.robot, q).placement(mobile.base_frame).homogeneous
        np.testing.assert_allclose(T, mobile.base_poses(placement)[0], atol=1e-12)
        assert T[2, 2] == pytest.approx(1.0)  # upright


def test_a_height_is_refused_for_a_robot_with_a_base_joint(dual_arm):
    with pytest.raises(ConfigurationError, match="own base joint"):
        mobile_base(Robot.bundled("dual_arm", floating_base=True), height=0.5)
    with pytest.raises(ConfigurationError, match="already has a joint named"):
        with_planar_base(dual_arm, name="torso_yaw")


def test_a_path_through_waypoints_is_sampled_evenly():
    a = pin.SE3(np.eye(3), np.array([0.0, 0.0, 1.0]))
    b = pin.SE3(pin.rpy.rpyToMatrix(0, 0, 0.5), np.array([1.0, 0.0, 1.0]))
    task = PlacementTask.along([a, b], 11, {"left_tool": pin.SE3.Identity()})
    np.testing.assert_allclose(task.poses[0], a.homogeneous, atol=1e-12)
    np.testing.assert_allclose(task.poses[-1], b.homogeneous, atol=1e-12)
    np.testing.assert_allclose(task.poses[:, 0, 3], np.linspace(0, 1, 11), atol=1e-12)
    yaws = np.arctan2(task.poses[:, 1, 0], task.poses[:, 0, 0])
    np.testing.assert_allclose(yaws, np.linspace(0, 0.5, 11), atol=1e-12)
    np.testing.assert_allclose(task.hand_poses("left_tool"), task.poses)


@pytest.mark.parametrize(("poses", "grasps", "match"), [
    ([], ["a"], "1 to"), ([np.eye(4)], [], "at least one hand"), ([np.full((4, 4), np.nan)], ["a"], "non-finite"),
    ([np.eye(4)], {"a": np.diag([1.0, 1.0, -1.0, 1.0])}, "grasp"),
])
def test_a_bad_task_is_one_task_error(poses, grasps, match):
    with pytest.raises(TaskError, match=match):
        PlacementTask(poses, grasps)


def test_the_floor_grid_and_its_polygon():
    region = FloorRegion(x=(0.0, 1.0), y=(0.0, 0.5), yaw=(-math.pi, math.pi), step=0.25, yaw_step=math.pi / 2)
    assert region.shape == (5, 3, 4)  # a full turn does not repeat its end
    assert len(region.placements()) == 60
    cut = FloorRegion(x=(0.0, 1.0), y=(0.0, 1.0), step=0.5, yaw=(0.0, 0.0), polygon=[(0.1, -0.1), (1.2, -0.1),
                                                                                      (1.2, 1.0)])
    inside = {tuple(p[:2]) for p in cut.placements()}
    assert inside == {(0.5, 0.0), (1.0, 0.0), (1.0, 0.5)}


@pytest.mark.parametrize("kwargs", [dict(x=(1.0, 0.0), y=(0, 1)), dict(x=(0, 1), y=(0, 1), step=0),
                                    dict(x=(0, 1e6), y=(0, 1e6), step=0.01), dict(x=(0, 1), y=(0, 1), yaw=(0, 7.0))])
def test_a_bad_floor_region_is_one_configuration_error(kwargs):
    with pytest.raises(ConfigurationError):
        FloorRegion(**kwargs)


OFFSET_PLANAR = """<robot name="offset_planar"><link name="floor"/><link name="base"/><link name="arm"/><link name="tool"/>
<joint name="base_joint" type="planar"><parent link="floor"/><child link="base"/><origin xyz="0.3 -0.2 0.1" rpy="0 0 0.5"/>
<axis xyz="0 0 1"/></joint>
<joint name="arm_joint" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.2"/><axis xyz="0 0 1"/>
<limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<joint name="tool_joint" type="fixed"><parent link="arm"/><child link="tool"/><origin xyz="0.5 0 0"/></joint></robot>"""


def test_a_planar_root_joint_with_an_origin_places_the_base_where_its_q_does(tmp_path, rng):
    """An adversarial pass: base_poses (the maps' inverse, the clearance, the check's base target)
    put the base 0.42 m from where configuration (its q) does when the planar joint had an
    <origin>, and a pose reached at a placement was called unreachable there."""
    from reljac.placement import place, placement_maps, reach

    path = tmp_path / "offset_planar.urdf"
    path.write_text(OFFSET_PLANAR)
    mobile = mobile_base(Robot.from_urdf(path))
    model = mobile.robot.model
    for placement in [(1.0, 0.5, 0.0), *rng.uniform(-2, 2, (5, 3))]:
        q = mobile.configuration(placement)
        base = Kinematics(mobile.robot, q).placement("base").homogeneous
        np.testing.assert_allclose(mobile.base_poses([placement])[0], base, atol=1e-12)
        np.testing.assert_allclose(mobile.placement_of(q), placement, atol=1e-12)
    q0 = mobile.configuration((1.0, 0.5, 0.0))
    q0[model.joints[model.getJointId("arm_joint")].idx_q] = 0.3
    task = PlacementTask([Kinematics(mobile.robot, q0).placement("tool")], ["tool"])
    maps = placement_maps(mobile, ["tool"], samples=20000, workers=1)
    assert reach(maps, task, np.array([(1.0, 0.5, 0.0)])).reached[0, 0]
    result = place(maps, task, FloorRegion(x=(0.5, 1.5), y=(0.0, 1.0), step=0.5, yaw=(0.0, 0.0)))
    assert result.best is not None and np.allclose(result.best.placement, (1.0, 0.5, 0.0))


def test_a_hand_the_base_alone_moves_is_named_as_such(dual_arm):
    """It was 'hands [...] share every joint: give each hand a joint of its own', for one hand."""
    from reljac.exceptions import MapError
    from reljac.placement import placement_maps

    mobile = mobile_base(dual_arm)
    with pytest.raises(MapError, match=f"hand '{mobile.base_frame}' moves with the base alone .no joint of its own, "
                                       "or every one locked.: give a frame an arm carries"):
        placement_maps(mobile, [mobile.base_frame], samples=100)

"""A mimic follower's own URDF limits, held through its leader (reljac.mimic_limits): Pinocchio's
mimic joint has no coordinate, so a leader moved its follower beyond the follower's <limit> (an
adversarial pass: 0.1 x slide + 0.01 reached -0.0185 with limits [0, 0.05])."""

from __future__ import annotations

import numpy as np
import pytest

from reljac import Robot, URDFError
from reljac.ik import Controller, PostureTask

URDF = """<robot name="mimics">
  <link name="base"/><link name="carriage"/><link name="finger"/><link name="arm"/><link name="forearm"/>
  <joint name="slide" type="prismatic">
    <parent link="base"/><child link="carriage"/><axis xyz="1 0 0"/>
    <limit lower="-0.3" upper="0.4" effort="10" velocity="2"/>
  </joint>
  <joint name="finger_j" type="prismatic">
    <parent link="carriage"/><child link="finger"/><axis xyz="0 1 0"/>
    <limit lower="{finger[0]}" upper="{finger[1]}" effort="10" velocity="0.5"/>
    <mimic joint="slide" multiplier="0.1" offset="0.01"/>
  </joint>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="arm"/><child link="forearm"/><origin xyz="0.3 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="0.5" effort="10" velocity="1"/>
    <mimic joint="shoulder" multiplier="-2" offset="0.1"/>
  </joint>
</robot>
"""


def robot_of(tmp_path, finger: tuple[float, float] = (0.0, 0.05)) -> Robot:
    path = tmp_path / "mimics.urdf"
    path.write_text(URDF.format(finger=finger))
    return Robot.from_urdf(path)


def test_a_leader_is_limited_to_where_its_followers_stay_within_theirs(tmp_path):
    robot = robot_of(tmp_path)
    slide, shoulder = (robot.model.joints[robot.model.getJointId(n)] for n in ("slide", "shoulder"))
    # finger_j = 0.01 + 0.1 slide in [0, 0.05]: slide in [-0.1, 0.4] (its own [-0.3, 0.4])
    # elbow = 0.1 - 2 shoulder in [-1, 0.5]: shoulder in [-0.2, 0.55] (its own [-2, 2])
    np.testing.assert_allclose(robot.lower_limits[[slide.idx_q, shoulder.idx_q]], [-0.1, -0.2], atol=1e-15)
    np.testing.assert_allclose(robot.upper_limits[[slide.idx_q, shoulder.idx_q]], [0.4, 0.55], atol=1e-15)
    # speeds: finger 0.5 / 0.1 = 5 (slide's own 2 is lower), elbow 1 / 2 = 0.5 (shoulder's own 3)
    np.testing.assert_allclose(robot.velocity_limits[[slide.idx_v, shoulder.idx_v]], [2.0, 0.5])
    # (Pinocchio 4 also holds a lower velocity limit, which a model built on this one checks against the upper)
    np.testing.assert_allclose(robot.model.lowerVelocityLimit, robot.model.upperVelocityLimit)
    assert robot.locked(["shoulder"]).nq == 1


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_a_controller_keeps_each_follower_within_its_own_limits(tmp_path, backend):
    robot = robot_of(tmp_path)
    expanded = robot.without_mimic()
    slide, shoulder = (robot.model.joints[robot.model.getJointId(n)].idx_q for n in ("slide", "shoulder"))
    target = np.zeros(robot.nq)
    target[[slide, shoulder]] = -0.3, 2.0  # both leaders sent where their followers would leave their limits
    posture = PostureTask(robot)
    posture.set_target(target)
    controller = Controller(robot, [[posture]], dt=0.01, backend=backend)
    q = robot.neutral()
    for _ in range(300):
        q = controller.step(q)
    q_full = expanded.configuration(q)
    lower, upper = expanded.model.lowerPositionLimit, expanded.model.upperPositionLimit
    assert np.all(q_full >= lower - 1e-9) and np.all(q_full <= upper + 1e-9), (q_full, lower, upper)
    np.testing.assert_allclose(q[[slide, shoulder]], [-0.1, 0.55], atol=1e-3)  # each on the bound its follower sets


def test_a_follower_that_leaves_its_leader_no_position_is_refused(tmp_path):
    with pytest.raises(URDFError, match="mimic joint 'finger_j'.*needs 'slide' in \\[0.5, 0.6\\], outside its own"):
        robot_of(tmp_path, finger=(0.06, 0.07))  # 0.01 + 0.1 slide in [0.06, 0.07]: slide in [0.5, 0.6]
    assert robot_of(tmp_path, finger=(0.045, 0.07)).model.lowerPositionLimit.max() == pytest.approx(0.35)

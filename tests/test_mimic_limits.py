"""A mimic follower's own URDF limits, held through its leader (reljac.mimic_limits): Pinocchio's
mimic joint has no coordinate, so a leader moved its follower beyond the follower's <limit> (an
adversarial pass: 0.1 x slide + 0.01 reached -0.0185 with limits [0, 0.05])."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from reljac import ConfigurationError, ReljacWarning, Robot, URDFError
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


def pair_urdf(tmp_path, lead: tuple[float, float], follow: tuple[float, float], multiplier: float):
    """A URDF of a revolute leader 'l_lead' and its revolute follower 'r_follow' (limits [rad])."""
    path = tmp_path / "pair.urdf"
    path.write_text(f"""<robot name="pair">
  <link name="base"/><link name="l"/><link name="r"/>
  <joint name="l_lead" type="revolute"><parent link="base"/><child link="l"/><axis xyz="0 0 1"/>
    <limit lower="{lead[0]}" upper="{lead[1]}" effort="1" velocity="1"/></joint>
  <joint name="r_follow" type="revolute"><parent link="base"/><child link="r"/><origin xyz="0.1 0 0"/>
    <axis xyz="0 0 -1"/><limit lower="{follow[0]}" upper="{follow[1]}" effort="1" velocity="1"/>
    <mimic joint="l_lead" multiplier="{multiplier}" offset="0"/></joint>
</robot>""")
    return path


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


def test_a_follower_that_leaves_its_leader_no_position_is_not_held(tmp_path):
    """Follower limits that contradict the leader's (no position left) are named in a warning and
    not held (as Pinocchio and MoveIt hold none): the leader keeps its own."""
    with pytest.warns(ReljacWarning, match="mimic joint 'finger_j'.*needs 'slide' in \\[0.5, 0.6\\], which leaves it "
                                           "no position of its limits \\[-0.3, 0.4\\].*not held"):
        robot = robot_of(tmp_path, finger=(0.06, 0.07))  # 0.01 + 0.1 slide in [0.06, 0.07]: slide in [0.5, 0.6]
    slide = robot.model.joints[robot.model.getJointId("slide")].idx_q
    assert (robot.lower_limits[slide], robot.upper_limits[slide]) == (-0.3, 0.4)
    assert robot_of(tmp_path, finger=(0.045, 0.07)).model.lowerPositionLimit.max() == pytest.approx(0.35)


def test_a_follower_that_leaves_its_leader_one_position_is_not_held(tmp_path):
    """PR2's grippers (an adversarial pass): a follower of multiplier -1 with its leader's limits
    [0, 0.548] left the leader only 0, written [0.0, -0.0], and random_configuration failed in
    numpy. Such limits contradict the file's others: named, not held; the gripper moves."""
    path = pair_urdf(tmp_path, (0, 0.5), (0, 0.5), multiplier=-1)
    with pytest.warns(ReljacWarning, match=r"'r_follow' \(0 \+ -1 x 'l_lead'\).*leaves it only 0 of its limits \[0, 0.5\]"):
        robot = Robot.from_urdf(path)
    assert (robot.lower_limits[0], robot.upper_limits[0]) == (0.0, 0.5)
    q = robot.random_configuration(0)
    assert 0.0 <= q[0] <= 0.5


def test_a_continuous_follower_with_a_fractional_multiplier_is_refused(tmp_path):
    """An adversarial pass: Pinocchio reads a continuous leader's angle in (-pi, pi], so 0.5 x it
    jumped by pi where the leader passed pi (a frame moved 0.2 m in one 10 ms step)."""
    path = tmp_path / "half.urdf"
    urdf = """<robot name="half">
  <link name="base"/><link name="a"/><link name="b"/>
  <joint name="drive" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="2"/></joint>
  <joint name="half" type="continuous"><parent link="a"/><child link="b"/><origin xyz="0.1 0 0"/>
    <axis xyz="0 0 1"/><limit effort="1" velocity="1"/><mimic joint="drive" multiplier="{m}"/></joint>
</robot>"""
    path.write_text(urdf.format(m=0.5))
    with pytest.raises(URDFError, match="'half' \\(continuous\\) mimics 'drive' with multiplier 0.5; .*jump"):
        Robot.from_urdf(path)
    with pytest.raises(ConfigurationError, match="mimic joint 'half' is continuous with scaling 0.5: .*jump"):
        Robot.from_pinocchio(pin.buildModelFromUrdf(str(path), mimic=True))  # (the same model, no URDF)
    path.write_text(urdf.format(m=-3))
    assert Robot.from_urdf(path).model.nq == 2  # (cos, sin) of the leader only


def test_a_continuous_follower_limits_its_leaders_speed_and_zero_limits_are_none(tmp_path):
    """A review: a continuous follower's velocity limit was skipped with its (absent) position
    limits; lower = upper = 0 (the URDF default) pinned a leader to one point."""
    path = tmp_path / "wheels.urdf"
    path.write_text("""<robot name="wheels">
  <link name="base"/><link name="w1"/><link name="w2"/><link name="a"/><link name="b"/>
  <joint name="drive" type="continuous"><parent link="base"/><child link="w1"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="2"/></joint>
  <joint name="idler" type="continuous"><parent link="base"/><child link="w2"/><origin xyz="1 0 0"/>
    <axis xyz="0 0 1"/><limit effort="1" velocity="1"/><mimic joint="drive" multiplier="2"/></joint>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 1 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="1 0 0"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0" effort="1" velocity="1"/><mimic joint="j1" multiplier="1" offset="0.5"/></joint>
</robot>""")
    robot = Robot.from_urdf(path)
    drive, j1 = (robot.model.joints[robot.model.getJointId(n)] for n in ("drive", "j1"))
    assert robot.velocity_limits[drive.idx_v] == pytest.approx(0.5)  # 1 rad/s / 2
    assert (robot.lower_limits[j1.idx_q], robot.upper_limits[j1.idx_q]) == (-1.0, 1.0)


def test_the_warning_names_the_range_other_followers_left(tmp_path):
    path = tmp_path / "two.urdf"
    path.write_text("""<robot name="two">
  <link name="base"/><link name="a"/><link name="b"/><link name="c"/>
  <joint name="lead" type="prismatic"><parent link="base"/><child link="a"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="f1" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>
    <limit lower="0.5" upper="1" effort="1" velocity="1"/><mimic joint="lead"/></joint>
  <joint name="f2" type="prismatic"><parent link="a"/><child link="c"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="-0.5" effort="1" velocity="1"/><mimic joint="lead"/></joint>
</robot>""")
    with pytest.warns(ReljacWarning, match=r"no position of its limits \[-1, 1\] as its other followers narrow them, "
                                           r"\[0.5, 1\]: its position limits contradict its leader's and its other followers'"):
        robot = Robot.from_urdf(path)
    assert (robot.lower_limits[0], robot.upper_limits[0]) == (0.5, 1.0)  # f1's held, f2's not


def test_a_follower_that_holds_wherever_its_leader_does_is_not_named(tmp_path):
    """A review: a leader whose own limits are one point (0.2) was named in a warning blaming a
    follower whose limits [-5, 5] hold there: nothing to narrow, nothing to say."""
    import warnings

    path = pair_urdf(tmp_path, (0.2, 0.2), (-5, 5), multiplier=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReljacWarning)
        robot = Robot.from_urdf(path)
    assert (robot.lower_limits[0], robot.upper_limits[0]) == (0.2, 0.2)

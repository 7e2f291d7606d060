"""How far the centre of mass is from the support region's edge: ``SupportRegion.com_distance``
(issue 43: the guide did not say how to read it; the way found in docstrings,
``polygon(kin).signed_distance(kin.center_of_mass())``, is right only in the world frame).

Oracle: the contact points and the centre of mass from Pinocchio's own functions, carried into
the region's frame by hand, and the hull's edges from scipy's ConvexHull (Qhull).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial import ConvexHull

from reljac import Kinematics, SupportContact, robots
from reljac.ik import SupportRegion, humanoid_stack

pytestmark = pytest.mark.skipif(robots.example_robot_data_dir() is None, reason="needs example-robot-data")

FEET = ("left_sole_link", "right_sole_link")


@pytest.fixture(scope="module")
def talos():
    from reljac import Robot

    return Robot.load("talos")


def oracle(robot, q, contacts, frame: str) -> float:
    """min over the hull's edges of the distance inside, in the x-y plane of `frame`."""
    model = robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    c_w = pin.centerOfMass(model, data, q)
    T_f = data.oMf[model.getFrameId(frame)]
    points = []
    for contact in contacts:
        T = data.oMf[model.getFrameId(contact.frame)]
        points += [T_f.actInv(T.act(p)) for p in contact.points]
    xy = np.array(points)[:, :2]
    c = T_f.actInv(c_w)[:2]
    hull = ConvexHull(xy)
    normals, offsets = hull.equations[:, :2], hull.equations[:, 2]  # n . x + d <= 0 inside, |n| = 1
    return float(np.min(-(normals @ c + offsets)))


@pytest.mark.parametrize("frame", ["universe", "left_sole_link", "base_link"])
def test_com_distance_is_the_centre_of_mass_distance_to_the_hull_edge_in_the_regions_frame(talos, frame, rng):
    contacts = [SupportContact.rectangle(foot, 0.21, 0.13) for foot in FEET]
    region = SupportRegion(talos, contacts, margin=0.02, frame=frame)
    for _ in range(5):
        q = talos.reference_configuration()
        v = 0.15 * rng.standard_normal(talos.nv)
        q = pin.integrate(talos.model, q, v)
        expected = oracle(talos, q, contacts, frame)
        assert region.com_distance(Kinematics(talos, q)) == pytest.approx(expected, abs=1e-12)


def test_the_limit_keeps_com_distance_at_least_the_margin_while_a_reach_presses(talos):
    """The guide's reading: com_distance - margin is what is left of the margin; the stack's
    limit keeps it >= 0 to within its 0.1 mm band, and the reach brings it near 0."""
    from reljac.ik import FrameTask

    q = talos.reference_configuration()
    kin = Kinematics(talos, q)
    reach = FrameTask("gripper_left_base_link", gain=5.0, weight=[1, 1, 1, 0, 0, 0], max_speed=0.3)
    T = kin.placement("gripper_left_base_link")
    T.translation += [1.0, 0.0, 0.0]
    reach.set_target(T)
    stack = humanoid_stack(talos, q, feet=FEET, margin=0.02, tasks=[[reach]], com_priority="none")
    controller = stack.controller(dt=0.01)
    left = []
    for _ in range(150):
        q = controller.step(q)
        kin = Kinematics(talos, q)
        left.append(stack.support.com_distance(kin) - stack.support.margin)
        assert stack.support.com_distance(kin) == pytest.approx(np.min(stack.support.edges(kin)[0]) + 0.02, abs=1e-12)
    assert min(left) > -1e-4 and min(left) < 1e-3, (min(left), left[-1])

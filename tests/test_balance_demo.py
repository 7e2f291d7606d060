"""The Talos balance scenario (reljac.apps.balance_demo, examples/talos_balance.py), its demo
command and its browser overlay (reljac.viz.balance).

Every step is checked with an independent computation: the centre of mass by
``pin.centerOfMass``, the soles' corners placed by Pinocchio's frame placements, their hull and
its edges by scipy (Qhull), not by reljac.support.
"""

from __future__ import annotations

import base64
import re

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial import ConvexHull

from reljac import Robot

pytestmark = pytest.mark.slow

STEPS = 400


@pytest.fixture(scope="module")
def scenario():
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    from reljac.apps.balance_demo import TalosBalance

    scene = TalosBalance.build()
    controller = scene.stack.controller(0.01)
    qs = [scene.q_grasp]
    for _ in range(STEPS):
        qs.append(controller.step(qs[-1]))
        scene.measure(qs[-1], controller.last_reports)
    return scene, qs


def com_margin(robot, contacts, q) -> float:
    """Signed distance [m] of the horizontal centre of mass to the edge of the soles' hull."""
    model, data = robot.model, robot.model.createData()
    c = pin.centerOfMass(model, data, q)
    pin.updateFramePlacements(model, data)
    corners = np.vstack([data.oMf[model.getFrameId(k.frame)].act(p) for k in contacts for p in k.points])
    hull = ConvexHull(corners[:, :2])
    return float(-(hull.equations[:, :2] @ c[:2] + hull.equations[:, 2]).max())


def test_the_centre_of_mass_stays_inside_the_shrunk_region(scenario):
    scene, qs = scenario
    margins = np.array([com_margin(scene.robot, scene.stack.contacts, q) for q in qs])
    assert margins.min() >= scene.stack.support.margin - 1e-4, margins.min()
    assert abs(margins[-1] - 0.02) < 1e-3  # at the end, on the shrunk edge: the limit is active
    np.testing.assert_allclose(scene.margins, margins[1:], atol=1e-9)  # what the demo prints


def test_the_box_and_the_feet_stay_held(scenario):
    """Measured (compiled, 400 steps): box 5.6e-5, feet 3e-5 at the worst step, where the support
    region starts to bind; 2e-5 and 1e-6 while nothing binds."""
    scene, qs = scenario
    L, R = scene.stack.hands.frame_a, scene.stack.hands.frame_b
    frames = [L, R, *(f.frame_b for f in scene.stack.feet)]

    def poses(q):
        data = scene.robot.model.createData()
        pin.framesForwardKinematics(scene.robot.model, data, q)
        return [data.oMf[scene.robot.model.getFrameId(f)].copy() for f in frames]

    first = poses(qs[0])
    box0 = first[0].actInv(first[1])
    for q in qs[1:]:
        now = poses(q)
        assert np.linalg.norm(pin.log6(box0.actInv(now[0].actInv(now[1]))).vector) < 2e-4
        for T0, T in zip(first[2:], now[2:], strict=True):
            assert np.linalg.norm(pin.log6(T0.actInv(T)).vector) < 1e-4


def test_the_reach_stops_short_where_the_support_region_binds(scenario):
    scene, _ = scenario
    reach = np.array(scene.reaches)
    assert 0.2 < reach[-1] < 0.6  # went forward, stopped well short of the 1 m asked
    assert reach[-1] - reach[-50] < 0.01  # stopped: under 1 cm in the last 0.5 s
    scale, met = scene.reach_level[-1]
    assert scale < 1e-3 and not met  # the reach's level is blocked
    edges = scene.on_edge[-1]  # the centre of mass on the shrunk region's edge, and the reports name it
    assert edges and all(e.startswith("support region (edge ") for e in edges)
    assert set(edges) <= set(scene.limiting())
    notes = "\n".join(scene.notes())
    assert f"went {reach[-1] * 1e3:.0f} mm forward of 1000 mm asked" in notes
    assert f"limited by: {edges[0]}, the centre of mass on its shrunk edge" in notes
    # named in the report of the level it stopped (the reach's limited_by), not of one below saturated for it
    assert f"(named in the report of level '{scene.lead.name}')" in notes


def test_demo_command_runs_headless(capsys):
    from reljac.apps.demo import main
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    assert main(["talos-balance", "--headless", "--duration", "0.3"]) == 0
    out = capsys.readouterr().out
    assert "30 steps" in out and "reach: the left gripper went" in out and "centre of mass:" in out


def scene_paths(viewer) -> set[str]:
    """The paths of the objects the meshcat server holds (decoded from its static export)."""
    import umsgpack

    html = viewer.viewer.static_html()
    paths = set()
    for blob in re.findall(r'data:application/octet-binary;base64,([A-Za-z0-9+/=]+)', html):
        message = umsgpack.unpackb(base64.b64decode(blob))
        if message.get("type") == "set_object":
            paths.add(message["path"])
    return paths


def test_browser_view_draws_the_centre_of_mass_and_the_polygons(scenario):
    from reljac.viz import Viewer
    from reljac.viz.balance import COM_COLOR, COM_OUT_COLOR, show_balance

    scene, qs = scenario
    with Viewer(scene.robot, q=qs[-1]) as viewer:
        name = show_balance(viewer, scene.stack.support)
        overlay = viewer._overlays[name]
        paths = scene_paths(viewer)
        root = f"/meshcat/{viewer.root}/overlays/{name}"
        for part in ("com", "com_ground", "com_line", "polygon", "shrunk"):
            assert f"{root}/{part}" in paths, sorted(p for p in paths if "overlays" in p)
        c = pin.centerOfMass(scene.robot.model, scene.robot.model.createData(), qs[-1])
        np.testing.assert_allclose(overlay.com, c, atol=1e-12)
        assert abs(overlay.ground) < 5e-3  # the soles are on the ground, z = 0
        assert overlay.shrunk_region.area < overlay.region.area
        assert overlay.color == COM_COLOR  # 20 mm inside: the region's own colour
        scene.stack.support.margin = 0.08  # the centre of mass is now nearer an edge than the margin
        try:
            viewer.display(qs[-1])
            assert overlay.color == COM_OUT_COLOR
        finally:
            scene.stack.support.margin = 0.02
        with pytest.raises(Exception, match="SupportRegion of robot"):
            show_balance(viewer, "not a region")


def test_show_balance_rejects_another_robots_region(scenario):
    from reljac.ik import SupportRegion
    from reljac.support import SupportContact
    from reljac.viz import Viewer
    from reljac.viz.balance import show_balance

    scene, _ = scenario
    arms = Robot.bundled("dual_arm")
    region = SupportRegion(arms, [SupportContact.rectangle("left_tool", 0.1, 0.1)])
    with Viewer(scene.robot) as viewer, pytest.raises(Exception, match="SupportRegion of robot 'talos'"):
        show_balance(viewer, region)

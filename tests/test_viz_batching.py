"""A viewer's update is one message to the meshcat server, and a page gets the same scene
(issue 43: one round trip per visual geometry made ``reljac demo dual-arm`` with its viewer run
at a real-time factor of 0.23 on a busy machine).

The page here is a real websocket client of the meshcat server (what a browser connects to):
every command it receives is decoded, and the transforms it holds are compared with the robot's
geometry placements computed by Pinocchio from q.
"""

from __future__ import annotations

import asyncio
import warnings

import numpy as np
import pinocchio as pin
import pytest
import tornado.websocket
import umsgpack

from reljac import Robot
from reljac.apps.demo import DUAL_ARM_MEETING
from reljac.viz import Viewer
from reljac.viz.batching import packed_transform

with warnings.catch_warnings():  # meshcat imports pyzmq's deprecated zmq.eventloop.ioloop
    warnings.simplefilter("ignore", DeprecationWarning)
    from meshcat.commands import SetTransform
    from meshcat.path import Path

pytestmark = pytest.mark.slow

TIMEOUT = 30.0  # [s]: the machine is shared


class MeshcatPage:
    """A page of a meshcat server: its websocket, the transforms it was sent (path -> (4, 4))."""

    def __init__(self, url: str) -> None:
        self.loop = asyncio.new_event_loop()
        ws_url = url.replace("http", "ws", 1).split("/static")[0] + "/"

        async def connect():
            return await asyncio.wait_for(tornado.websocket.websocket_connect(ws_url), TIMEOUT)

        self.ws = self.loop.run_until_complete(connect())
        self.transforms: dict[str, np.ndarray] = {}
        self.count = 0

    def read(self, timeout: float = TIMEOUT) -> bool:
        """Read one message (False: none came within `timeout`)."""
        async def read():
            return await asyncio.wait_for(self.ws.read_message(), timeout)

        try:
            data = self.loop.run_until_complete(read())
        except asyncio.TimeoutError:
            return False
        message = umsgpack.unpackb(data)
        self.count += 1
        if message["type"] == "set_transform":
            self.transforms[message["path"]] = np.array(message["matrix"]).reshape(4, 4).T
        return True

    def read_until(self, done, timeout: float = TIMEOUT) -> None:
        while not done():
            assert self.read(timeout), "the page got no message while waiting"

    def close(self) -> None:
        # tornado writes the close frame on the thread's current loop: make it this page's (an
        # earlier test may have left the main thread without one), as debug_pages.ControlPage does
        asyncio.set_event_loop(self.loop)
        try:
            self.ws.close()
            self.loop.run_until_complete(asyncio.sleep(0.05))
        finally:
            asyncio.set_event_loop(None)
            self.loop.close()


def geometry_transforms(robot: Robot, q: np.ndarray) -> dict[str, np.ndarray]:
    """Each visual geometry's name -> its transform in w at q (scaled as meshcat draws meshes)."""
    model, data = robot.model, robot.model.createData()
    visual = robot.visual_model
    visual_data = pin.GeometryData(visual)
    pin.forwardKinematics(model, data, q)
    pin.updateGeometryPlacements(model, data, visual, visual_data)
    return {g.name: visual_data.oMg[i].homogeneous @ np.diag([*g.meshScale, 1.0])
            for i, g in enumerate(visual.geometryObjects)}


def node(viewer: Viewer, name: str) -> str:
    return f"/meshcat/{viewer.root}/visuals/{name}"


@pytest.fixture
def dual_arm_view():
    robot = Robot.bundled("dual_arm")
    q0 = robot.q_from_joint_values(DUAL_ARM_MEETING)
    with Viewer(robot, q=q0, announce=False) as viewer:
        page = MeshcatPage(viewer.url)
        try:
            yield robot, q0, viewer, page
        finally:
            page.close()


def test_packed_transforms_are_the_bytes_meshcat_packs():
    rng = np.random.default_rng(3)
    for name in ("a", "x" * 40, "y" * 300, "é/ü"):
        M = rng.normal(size=(4, 4))
        path = Path(("meshcat", name))
        assert packed_transform(path.lower(), M) == umsgpack.packb(SetTransform(M, path).lower()), name


@pytest.mark.parametrize("wait", [True, False])
def test_a_display_is_one_message_and_the_page_gets_every_geometry_where_q_puts_it(dual_arm_view, wait):
    robot, q0, viewer, page = dual_arm_view
    window = viewer.viewer.window
    assert window.batches  # a server reljac started takes batches
    q1 = q0 + 0.05 * np.cos(np.arange(robot.nq))
    expected = geometry_transforms(robot, q1)
    before = window.round_trips
    with viewer.batch(wait=wait):
        viewer.display(q1)
        viewer.show_frame("left_tool", label="left_tool")
    assert window.round_trips == before + 1
    paths = {node(viewer, name): T for name, T in expected.items()}
    page.read_until(lambda: all(p in page.transforms and np.allclose(page.transforms[p], T, atol=1e-12)
                                for p, T in paths.items()))
    html = viewer.viewer.static_html()  # the answer to an unawaited batch is read first
    assert html.count("octet-binary") > len(paths)


def test_a_transform_sent_already_is_not_sent_again_until_its_node_is_deleted(dual_arm_view):
    _, q0, viewer, page = dual_arm_view
    window = viewer.viewer.window
    before = window.round_trips
    viewer.display(q0)  # shown already: nothing to send
    assert window.round_trips == before
    M = np.eye(4)
    M[:3, 3] = [0.1, 0.2, 0.3]
    marker = viewer.viewer["marker"]
    marker.set_transform(M)
    marker.set_transform(M)
    assert window.round_trips == before + 1
    marker.delete()
    marker.set_transform(M)  # a new node: its transform is sent
    assert window.round_trips == before + 3
    page.read_until(lambda: "/meshcat/marker" in page.transforms)
    np.testing.assert_allclose(page.transforms["/meshcat/marker"], M)


def test_a_server_without_batches_gets_the_same_scene_one_command_at_a_time(dual_arm_view):
    robot, q0, viewer, page = dual_arm_view
    window = viewer.viewer.window
    window.batches = False  # as a plain meshcat-server, which answers the probe with an error
    q1 = q0 - 0.05 * np.sin(np.arange(robot.nq))
    expected = {node(viewer, name): T for name, T in geometry_transforms(robot, q1).items()}
    at_q0 = {node(viewer, name): T for name, T in geometry_transforms(robot, q0).items()}
    moved = sum(not np.array_equal(T, at_q0[p]) for p, T in expected.items())
    before = window.round_trips
    viewer.display(q1)
    assert window.round_trips - before == moved > 0  # one for each geometry that moved
    page.read_until(lambda: all(p in page.transforms and np.allclose(page.transforms[p], T, atol=1e-12)
                                for p, T in expected.items()))

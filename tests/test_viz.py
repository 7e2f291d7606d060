"""Tests of reljac.viz: a real browser draws the robot; servers start, stop and free their ports.

The browser tests drive headless Chromium over the DevTools protocol (through a pipe, so no
extra package and no extra port): they load ``viewer.url``, wait until the page has received
every scene message the server holds (counted in the server's own static export of the scene),
then wait two animation frames and take a screenshot. A fixed ``--virtual-time-budget``
screenshot was tried first; it may be taken before the websocket has delivered the scene.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from PIL import Image

import reljac
from reljac import Robot
from reljac.apps.view import view
from reljac.viz import Viewer

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (`chromium` on PATH)")

# Both arms' tools meet in front of the torso (from the comment at the end of dual_arm.urdf).
DUAL_ARM_MEETING = np.array([
    0.0,
    0.8808, 0.9651, -0.4571, -2.0366, 1.1162, 2.7259, 1.8842,
    -1.2333, 1.2035, 0.8092, -2.0059, -1.4909, 2.3970, -0.1965,
])
ROBOT_PIXELS = 500  # per arm colour; a drawn dual_arm shows ~2,000 of each, an empty scene < 100


# ---------------------------------------------------------------------------- PNG, colours
def read_png(data: bytes) -> np.ndarray:
    """Decode a PNG (what Chromium and matplotlib write) with Pillow: (H, W, 3) uint8, alpha dropped.

    A pure-Python decoder was used first: Chromium's screenshots filter most rows with Paeth,
    which it undid one byte at a time (about a second per 800 x 600 picture on a loaded machine,
    most of the browser tests' time)."""
    with Image.open(io.BytesIO(data)) as image:
        if image.format != "PNG":
            raise ValueError(f"not a PNG file: {image.format}")
        return np.asarray(image.convert("RGB"))


def hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hue [deg], saturation and value in [0, 1] of RGB values in [0, 255] (any leading shape)."""
    rgb = np.asarray(rgb, float) / 255.0
    top, chroma = rgb.max(-1), np.ptp(rgb, axis=-1)
    sat = np.where(top > 0, chroma / np.maximum(top, 1e-12), 0.0)
    r, g, b = np.moveaxis(rgb, -1, 0)
    c = np.maximum(chroma, 1e-12)
    hue = np.where(top == r, ((g - b) / c) % 6, np.where(top == g, (b - r) / c + 2, (r - g) / c + 4))
    return 60.0 * hue, sat, top


def colour_mask(img: np.ndarray, rgba, hue_tol: float = 12.0) -> np.ndarray:
    """Pixels of a saturated material colour under any shading: same hue, saturated, not dark."""
    hue, sat, val = hsv(img)
    material_hue = hsv(np.asarray(rgba[:3]) * 255.0)[0]
    dh = np.abs((hue - material_hue + 180.0) % 360.0 - 180.0)
    return (dh <= hue_tol) & (sat >= 0.45) & (val >= 0.2)


def robot_region(img: np.ndarray) -> np.ndarray:
    """Where the dual_arm stands with the viewer's camera: the upper middle of the picture."""
    h, w = img.shape[:2]
    return img[int(0.1 * h) : int(0.65 * h), int(0.2 * w) : int(0.8 * w)]


def arm_colours(robot: Robot) -> dict[str, np.ndarray]:
    """The saturated URDF material colours of the dual_arm (the two arms), by geometry name side."""
    colours = {}
    for geom in robot.visual_model.geometryObjects:
        if geom.name.startswith(("left_link", "right_link")) and hsv(geom.meshColor[:3] * 255)[1] > 0.6:
            colours.setdefault(geom.name.split("_")[0], np.array(geom.meshColor))
    return colours


def robot_pixel_counts(img: np.ndarray, colours: dict[str, np.ndarray]) -> dict[str, int]:
    region = robot_region(img)
    return {side: int(colour_mask(region, rgba).sum()) for side, rgba in colours.items()}


def robot_drawn(counts: dict[str, int]) -> bool:
    return len(counts) == 2 and min(counts.values()) >= ROBOT_PIXELS


# ---------------------------------------------------------------------------- headless Chromium
_PLUMB = "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); os.execvp(sys.argv[3], sys.argv[3:])"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


LOADING_SIZE = (80, 60)  # [px] the page's size while its scene loads (Browser.load)


# The textures of the page's scene not decoded yet (three.js counts a texture's updates: 0 until
# its image has loaded); -1 before meshcat's viewer exists.
PENDING_TEXTURES = """(() => {
  if (typeof viewer === 'undefined') return -1;
  let pending = 0;
  viewer.scene.traverse(o => [].concat(o.material || []).forEach(m => {
    if (m.map && m.map.version === 0) pending += 1;
  }));
  return pending;
})()"""


class Browser:
    """Headless Chromium driven over the DevTools protocol on fds 3/4 (--remote-debugging-pipe)."""

    def __init__(self, size=(800, 600)) -> None:
        self.size = tuple(size)
        self.user_dir = tempfile.mkdtemp(prefix="reljac-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _PLUMB, str(to_chrome_r), str(from_chrome_w), CHROMIUM,
             *CHROMIUM_FLAGS, f"--user-data-dir={self.user_dir}", "--remote-debugging-pipe",
             f"--window-size={size[0]},{size[1]}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(to_chrome_r, from_chrome_w),
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer, self._id = b"", 0
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self._resize(self.size)

    def _resize(self, size: tuple[int, int]) -> None:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=size[0],
                  height=size[1], deviceScaleFactor=1, mobile=False)

    def call(self, method: str, *, session: bool = False, timeout: float = 30.0, **params):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self._buffer:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"Chromium did not answer {method}")
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"Chromium exited during {method}")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, expression: str, *, await_promise: bool = False):
        reply = self.call("Runtime.evaluate", session=True, expression=expression,
                          returnByValue=True, awaitPromise=await_promise)
        return reply["result"].get("value")

    def open(self, url: str) -> None:
        self.call("Page.navigate", session=True, url=url)

    def messages(self) -> int:
        """Scene messages the meshcat page has handled (-1 before its viewer exists)."""
        n = self.evaluate("typeof viewer === 'undefined' ? -1 : viewer.num_messages_received")
        return -1 if n is None else int(n)

    # The timeouts bound a hang; they say nothing about speed. 20 s was once too short for panda's
    # scene with two test workers each drawing in its own Chromium on a loaded machine.
    def wait_messages(self, count: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while self.messages() < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page handled {self.messages()} of {count} messages")
            time.sleep(0.05)
        # meshcat renders on the next animation frame after a command
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))",
                      await_promise=True)

    def wait_textures(self, timeout: float = 60.0) -> None:
        """Wait until the page has decoded every texture of its scene (meshcat decodes a PNG
        texture, such as a label's or a legend's, after handling its message), and drawn them."""
        deadline = time.monotonic() + timeout
        while pending := self.evaluate(PENDING_TEXTURES):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page has {pending} texture(s) still to decode")
            time.sleep(0.05)
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))",
                      await_promise=True)

    def load(self, url: str, count: int, timeout: float = 60.0) -> None:
        """Open the meshcat page at `url` and wait until it has handled and drawn the `count`
        messages of its scene (:func:`scene_messages`).

        While the scene streams in, the page is 80 x 60 px: meshcat draws the scene again after
        its messages, and for a big robot (talos, tiago) those draws at full size take longer in
        software WebGL than decoding the meshes. The browser's size comes back before the page
        draws the complete scene: a picture then has the same pixels as one of a page loaded at
        full size (compared for talos and dual_arm when this was written)."""
        self._resize(LOADING_SIZE)
        try:
            self.open(url)
            self.wait_messages(count, timeout)
        finally:
            self._resize(self.size)
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))", await_promise=True)

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"])

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.call("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
        shutil.rmtree(self.user_dir, ignore_errors=True)


def moved_geometries(robot: Robot, q_from: np.ndarray, q_to: np.ndarray) -> int:
    """How many visual geometries are placed elsewhere at q_to than at q_from (a viewer sends a
    transform only for those)."""
    placed = []
    for q in (q_from, q_to):
        data, visual_data = robot.model.createData(), pin.GeometryData(robot.visual_model)
        pin.forwardKinematics(robot.model, data, q)
        pin.updateGeometryPlacements(robot.model, data, robot.visual_model, visual_data)
        placed.append([M.homogeneous for M in visual_data.oMg])
    return sum(not np.array_equal(a, b) for a, b in zip(*placed, strict=True))


def scene_messages(viewer: Viewer) -> int:
    """How many messages the server replays to a new page (one per object/property/transform)."""
    return viewer.viewer.static_html().count('fetch("data:application/octet-binary')


@pytest.fixture(scope="module")
def shots(dual_arm, chromium, tmp_path_factory):
    """Screenshots of one live page: dual_arm at the meeting pose (scene replayed on connect),
    then at q = 0 (T-pose, sent live), then with the robot deleted (sent live)."""
    out = tmp_path_factory.mktemp("viz")
    browser = chromium
    with Viewer(dual_arm) as viewer:
        viewer.display(DUAL_ARM_MEETING)
        browser.load(viewer.url, scene_messages(viewer))
        meeting = browser.screenshot()
        seen = browser.messages()
        viewer.display(dual_arm.neutral())  # one set_transform per visual geometry that moved
        browser.wait_messages(seen + moved_geometries(dual_arm, DUAL_ARM_MEETING, dual_arm.neutral()))
        tpose = browser.screenshot()
        seen = browser.messages()
        viewer.viewer[viewer.root].delete()
        browser.wait_messages(seen + 1)
        empty = browser.screenshot()
    for name, png in (("meeting", meeting), ("tpose", tpose), ("empty", empty)):
        (out / f"{name}.png").write_bytes(png)
    return {"meeting": meeting, "tpose": tpose, "empty": empty, "dir": out}


# ---------------------------------------------------------------------------- browser tests
@needs_chromium
def test_browser_draws_the_robot_and_an_empty_scene_fails_the_check(dual_arm, shots):
    colours = arm_colours(dual_arm)
    assert set(colours) == {"left", "right"}, f"expected two saturated arm colours, got {colours}"
    meeting = read_png(shots["meeting"])
    empty = read_png(shots["empty"])
    assert meeting.shape == (600, 800, 3)
    # the arm colours are distinct from meshcat's background and grid: no match in the empty scene
    # (the few matches left are meshcat's own world axes at the origin)
    counts, empty_counts = robot_pixel_counts(meeting, colours), robot_pixel_counts(empty, colours)
    assert robot_drawn(counts), f"robot not drawn: {counts} (screenshots in {shots['dir']})"
    assert not robot_drawn(empty_counts), f"empty scene passes the check: {empty_counts}"
    assert max(empty_counts.values()) < ROBOT_PIXELS / 5


@needs_chromium
def test_browser_places_the_arms_where_the_kinematics_puts_them(dual_arm, shots):
    # The camera looks from +x at the robot, so the robot's left (+y, orange arm) is drawn on the
    # right of the picture; at q = 0 (T-pose) the arms stick out sideways, wider than when meeting.
    colours = arm_colours(dual_arm)
    spans = {}
    for name in ("meeting", "tpose"):
        img = read_png(shots[name])
        assert robot_drawn(robot_pixel_counts(img, colours)), name
        columns = {side: np.nonzero(colour_mask(img, rgba))[1] for side, rgba in colours.items()}
        assert columns["left"].mean() > columns["right"].mean() + 50, name
        spans[name] = columns["left"].max() - columns["right"].min()
    assert spans["tpose"] > spans["meeting"] + 100, spans


# ---------------------------------------------------------------------------- servers and ports
def port_of(url: str) -> int:
    return int(url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_two_viewers_and_close_frees_the_ports(planar):
    first, second = Viewer(planar), Viewer(planar)
    try:
        ports = [port_of(first.url), port_of(first.zmq_url), port_of(second.url), port_of(second.zmq_url)]
        assert len(set(ports)) == 4
        assert all(port_open(p) for p in ports)
        first.close()
        assert first.closed
        assert not port_open(ports[0]) and not port_open(ports[1])
        first.close()  # idempotent
        second.display(np.array([0.3, -0.4]))  # the other one still works
        second.show_frame("tip")
        with urllib.request.urlopen(second.url, timeout=5) as page:
            assert b"MeshCat" in page.read()
    finally:
        first.close()
        second.close()
    assert not port_open(ports[2]) and not port_open(ports[3])
    with pytest.raises(reljac.ReljacError, match="closed"):
        second.display(np.zeros(2))


def test_context_manager_closes(planar):
    with Viewer(planar) as viewer:
        port = port_of(viewer.url)
        assert viewer.url.startswith("http://127.0.0.1:") and viewer.url.endswith("/static/")
    assert viewer.closed and not port_open(port)


def test_joining_a_server_shares_it_and_leaves_it_running(planar):
    with Viewer(planar) as owner:
        guest = Viewer(planar, zmq_url=owner.zmq_url, root="guest")
        assert guest.url == owner.url
        guest.display(np.array([1.0, 0.5]))
        guest.close()
        assert port_open(port_of(owner.url))
        owner.display(np.array([0.2, 0.1]))
    with pytest.raises(reljac.ReljacError, match="no meshcat server"):
        Viewer(planar, zmq_url=owner.zmq_url)


@pytest.mark.parametrize("kill", [False, True])
def test_no_server_outlives_its_script(tmp_path, kill):
    script = textwrap.dedent(f"""
        import os, signal, time
        from reljac import Robot
        from reljac.viz import Viewer
        viewer = Viewer(Robot.bundled("planar_2link"))
        print("SERVER", viewer._server.proc.pid, flush=True)
        if {kill}:
            os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no __del__
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    pid = int(next(line for line in result.stdout.splitlines() if line.startswith("SERVER")).split()[1])
    deadline = time.monotonic() + 5.0
    while _process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _process_alive(pid), f"meshcat server {pid} outlived its script"


def _process_alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is gone


# ---------------------------------------------------------------------------- errors
@pytest.fixture(scope="module")
def viewer(planar):
    with Viewer(planar) as v:
        yield v


def test_display_checks_q(viewer):
    with pytest.raises(reljac.ConfigurationError, match=r"shape \(3,\), expected \(2,\)"):
        viewer.display(np.zeros(3))
    with pytest.raises(reljac.ConfigurationError, match="finite"):
        viewer.display(np.array([0.0, np.nan]))


def test_flags_are_booleans_and_a_map_is_a_map(viewer, planar, monkeypatch):
    """An adversarial pass: open="no" opened a browser, show_labels("no") showed them, and a map
    given as text was a bare AttributeError."""
    import webbrowser

    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda *a, **k: opened.append(a))
    for flag in ("open", "follow", "announce"):
        with pytest.raises(reljac.ConfigurationError, match=f"{flag} must be True or False, got 'no'"):
            Viewer(planar, **{flag: "no"})
    assert opened == []
    with pytest.raises(reljac.ConfigurationError, match="visible .show the labels. must be True or False, got 'no'"):
        viewer.show_labels("no")
    with pytest.raises(reljac.ConfigurationError, match="show_capability_map draws a reljac.maps.CapabilityMap"):
        viewer.show_capability_map("dual.npz")


def test_unknown_frames_raise_frame_not_found(viewer):
    with pytest.raises(reljac.FrameNotFound, match="did you mean 'tip'"):
        viewer.show_frame("tipp")
    with pytest.raises(reljac.FrameNotFound):
        viewer.show_segment("link1", "nope")
    with pytest.raises(reljac.FrameNotFound):
        viewer.show_trail(99)
    assert viewer.overlays == []


def test_bad_targets_raise_task_error(viewer):
    with pytest.raises(reljac.TaskError, match=r"shape \(3, 3\)"):
        viewer.show_target("goal", np.eye(3))
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(reljac.TaskError, match="rotation"):
        viewer.show_target("goal", bad)


def test_missing_meshes_raise_urdf_error(tmp_path):
    urdf = tmp_path / "nomesh.urdf"
    urdf.write_text(textwrap.dedent("""\
        <robot name="nomesh">
          <link name="base"><visual><geometry><mesh filename="package://nope/base.stl"/></geometry></visual></link>
        </robot>
    """))
    with pytest.raises(reljac.URDFError, match="could not be found"):
        Viewer(Robot.from_urdf(urdf))


# ---------------------------------------------------------------------------- overlays
def test_overlays_follow_the_robot(viewer, planar):
    viewer.clear_overlays()
    q = np.array([0.4, -0.9])
    viewer.display(q)
    assert viewer.show_frame("tip") == "tip"
    assert viewer.show_frame("link2", label="elbow", scale=0.2) == "elbow"
    assert viewer.show_segment("base_link", "tip") == "base_link--tip"
    assert viewer.show_trail("tip", length=3) == "tip trail"
    assert viewer.show_target("goal", pin.SE3.Identity()) == "goal"
    assert viewer.overlays == ["tip", "elbow", "base_link--tip", "tip trail", "goal"]
    for angle in (0.5, 0.6, 0.7, 0.8):
        viewer.display(np.array([angle, -0.9]))
    trail = viewer._overlays["tip trail"]
    T_wtip = reljac.Kinematics(planar, np.array([0.8, -0.9])).placement("tip")
    assert len(trail.points) == 3
    np.testing.assert_allclose(trail.points[-1], T_wtip.translation, atol=1e-12)
    viewer.show_target("goal", np.eye(4))  # moving an existing target keeps one overlay
    viewer.remove("elbow")
    assert viewer.overlays == ["tip", "base_link--tip", "tip trail", "goal"]
    with pytest.raises(reljac.ReljacError, match="did you mean 'tip'"):
        viewer.remove("tipp")
    viewer.clear_overlays()
    assert viewer.overlays == []


def test_view_shows_frames_and_a_segment(planar):
    viewer = view(planar, ["link1", "tip"], np.array([0.1, 0.2]), hold=False)
    try:
        assert viewer.overlays == ["link1", "tip", "link1--tip"]
        np.testing.assert_array_equal(viewer.q, [0.1, 0.2])
    finally:
        viewer.close()
    with pytest.raises(reljac.FrameNotFound):
        view(planar, ["tip", "nope"], hold=False)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_view_holds_until_interrupted_then_closes(signum):
    script = textwrap.dedent("""
        from reljac.apps.view import view
        view("planar_2link", ["link1", "tip"], hold=True)
        print("RETURNED", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        url = None
        for line in proc.stdout:
            if "http://" in line:
                url = line[line.index("http://") :].strip()
            if line.startswith("Press Ctrl-C"):
                break
        assert url is not None and port_open(port_of(url))
        proc.send_signal(signum)
        rest, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and "RETURNED" in rest
    assert not port_open(port_of(url))


def test_manipulability_ellipsoid_has_the_singular_values_of_the_planar_arm(viewer, planar):
    """Planar 2-link tip in the base: in-plane radii l1 l2 |sin q2| / sigma_max ... closed form:
    the product of the two non-zero singular values of J_ab[:3] is l1 l2 |sin q2|."""
    q = np.array([0.3, 0.9])
    viewer.display(q)
    name = viewer.show_manipulability("base_link", "tip", scale=1.0)
    radii = viewer._overlays[name].radii
    assert radii[2] == pytest.approx(0.0, abs=1e-12)  # no motion out of the plane
    assert radii[0] * radii[1] == pytest.approx(1.0 * 0.8 * abs(np.sin(0.9)), rel=1e-12)
    viewer.display(np.array([0.3, 0.0]))  # stretched: singular
    assert viewer._overlays[name].radii[1] == pytest.approx(0.0, abs=1e-12)
    viewer.remove(name)


# ---------------------------------------------------------------------------- sizes, camera, trails, notebook
def test_viewer_fits_its_sizes_and_camera_to_the_robot_at_q(planar):
    from reljac.viz.camera import frame_points, overlay_scale
    from reljac.viz.viewer import LABEL_HEIGHT

    q = np.array([0.7, -1.2])
    with Viewer(planar, q=q) as viewer:
        np.testing.assert_array_equal(viewer.q, q)
        lower, upper = viewer.bounding_box()
        origins = np.array([M.translation for M in placements(planar, q)[1:]])
        assert np.all(origins >= lower - 1e-9) and np.all(origins <= upper + 1e-9)  # every frame inside
        reach = np.ptp(origins, axis=0)
        assert np.all(upper - lower >= reach - 1e-9) and np.linalg.norm(upper - lower) < 1.8 + 0.5
        assert viewer.scale == pytest.approx(overlay_scale(lower, upper))
        points = viewer.robot_points()  # every geometry's box corners, as displayed
        np.testing.assert_allclose([points.min(axis=0), points.max(axis=0)], [lower, upper])
        np.testing.assert_allclose(viewer.camera.position, frame_points(points).position)
        viewer.show_frame("tip", label="the tip")
        label = viewer._overlays["the tip"].label
        assert label.height == pytest.approx(LABEL_HEIGHT * viewer.scale) and 1.5 < label.width / label.height < 4
        assert viewer._overlays["the tip"].scale == viewer.scale
        assert viewer.frame_camera((0.0, -1.0, 0.0)).position[1] < lower[1]  # from -y, outside the box
    with Viewer(planar, scale=0.05) as viewer:
        viewer.show_frame("tip", label="tip")
        viewer.show_segment("base_link", "tip")
        assert viewer.scale == 0.05 and viewer._overlays["tip"].scale == 0.05
        picture = 2 * viewer.camera.distance * np.tan(np.radians(37.5))  # at least 3 % of it: readable
        assert viewer._overlays["tip"].label.height == pytest.approx(max(LABEL_HEIGHT * 0.05, 0.03 * picture))
        assert viewer._overlays["base_link--tip"].radius == pytest.approx(0.04 * 0.05)
    for bad in (0.0, -1.0, float("nan"), "big"):
        with pytest.raises(reljac.ReljacError, match="scale must be a positive number"):
            Viewer(planar, scale=bad)


def placements(robot, q):
    from helpers import placements as fk

    return fk(robot, q)


def test_trail_starts_at_the_first_display_after_it_is_made(viewer, planar):
    viewer.clear_overlays()
    viewer.display(np.zeros(2))
    name = viewer.show_trail("tip", length=5)
    assert len(viewer._overlays[name].points) == 0  # no point from the pose shown before
    q = np.array([0.4, 0.3])
    viewer.display(q)
    points = viewer._overlays[name].points
    assert len(points) == 1
    np.testing.assert_allclose(points[0], placements(planar, q)[planar.frame_id("tip")].translation, atol=1e-12)
    viewer.clear_overlays()


def test_notebook_html_is_an_iframe_of_the_page(planar):
    from html.parser import HTMLParser

    class Frames(HTMLParser):
        def __init__(self):
            super().__init__()
            self.iframes = []

        def handle_starttag(self, tag, attrs):
            if tag == "iframe":
                self.iframes.append(dict(attrs))

    with Viewer(planar) as viewer:
        parser = Frames()
        parser.feed(viewer._repr_html_(height=300))
        assert [f["src"] for f in parser.iframes] == [viewer.url]
        assert "height: 300px" in viewer._repr_html_(height=300)
        with urllib.request.urlopen(parser.iframes[0]["src"], timeout=5) as page:
            assert b"MeshCat" in page.read()
    parser = Frames()
    parser.feed(viewer._repr_html_())
    assert parser.iframes == [] and "closed" in viewer._repr_html_()

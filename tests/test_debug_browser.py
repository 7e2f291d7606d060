"""The debug page in a real browser: headless Chromium over the DevTools protocol drags a handle
with mouse events, clicks pause / step, scrubs the timeline and exports the recording.

The page keeps a live websocket, so it never settles (no --virtual-time-budget): every wait
polls a condition with a generous deadline. ``RELJAC_UPDATE_SCREENSHOTS=1`` also writes the
page's screenshot to docs/images/debug_page.png (the README's picture).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from helpers import wait_for
from test_viz import LOADING_SIZE, Browser, needs_chromium, read_png

from reljac import Robot
from reljac.apps.debug import new_run_log
from reljac.apps.hierarchy_file import DEMO_FILE, load_hierarchy
from reljac.ik import Controller, FrameTask, PostureTask, RelativeFrameTask
from reljac.relative import Kinematics
from reljac.robots import example_robots
from reljac.viz.debugger import Debugger

pytestmark = pytest.mark.slow

SIZE = (1400, 900)
SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "images" / "debug_page.png"



def mouse(browser: Browser, kind: str, x: float, y: float, buttons: int = 1) -> None:
    browser.call("Input.dispatchMouseEvent", session=True, type=kind, x=float(x), y=float(y), button="left",
                 buttons=buttons, clickCount=1 if kind != "mouseMoved" else 0)


def click(browser: Browser, x: float, y: float) -> None:
    mouse(browser, "mousePressed", x, y)
    mouse(browser, "mouseReleased", x, y, buttons=0)


def drag(browser: Browser, start, end, steps: int = 8) -> None:
    mouse(browser, "mouseMoved", *start, buttons=0)
    mouse(browser, "mousePressed", *start)
    for s in np.linspace(0.0, 1.0, steps + 1)[1:]:
        mouse(browser, "mouseMoved", *(np.asarray(start) + s * (np.asarray(end) - np.asarray(start))))
    mouse(browser, "mouseReleased", *end, buttons=0)


def open_page(browser: Browser, debugger: Debugger, timeout: float = 30.0, query: str = "",
              ready: str | None = None) -> None:
    """Open the debug page and wait for its state and scene (and for the JavaScript expression
    `ready` to be true, when given) while the page is small."""
    browser._resize(LOADING_SIZE)  # small while the scene streams in (Browser.load says why)
    try:
        browser.open(debugger.url + query)
        wait_for(lambda: browser.evaluate("!!(window.reljacDebug && reljacDebug.init && reljacDebug.state)"),
                 "the page's first state")
        # the scene: the robot's meshes came before the handles' parts (the meshcat server replays its
        # tree in order); the meshcat socket is the debugger thread's, so no scene_messages() here
        wait_for(lambda: browser.evaluate(
            "reljacDebug.init.handles.every(h => { const n = viewer.scene_tree.find("
            "(h.path + '/ball/<object>').split('/').filter(x => x)); return n.object && n.object.type === 'Mesh'; })"
            " && viewer.num_messages_received > 0"), "the scene", timeout)
        if ready is not None:
            wait_for(lambda: browser.evaluate(ready), ready, timeout=120)
    finally:
        browser._resize(browser.size)
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))", await_promise=True)


def position_of(robot: Robot, q, frame: str, frame_a: str | None = None) -> pin.SE3:
    kin = Kinematics(robot, np.asarray(q))
    return kin.placement(frame) if frame_a is None else kin.relative_placement(frame_a, frame)


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the file's tests (each opens its own page)."""
    b = Browser(size=SIZE)
    yield b
    b.close()


@needs_chromium
def test_dragging_an_arrow_moves_the_target_along_that_axis_and_the_frame_follows(dual_arm, browser):
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    relative, left = controller.levels[0][0], controller.levels[1][0]
    assert isinstance(relative, RelativeFrameTask) and isinstance(left, FrameTask)
    with Debugger(controller, q0) as debugger:
        open_page(browser, debugger)
        T0 = left.target
        screen = browser.evaluate("reljacDebug.handleScreen('handle left')")
        size = browser.evaluate("reljacDebug.init.handles.find(h => h.name === 'handle left').size")
        center, tip = np.array(screen["center"][:2]), np.array(screen["axes"][0][:2])  # the x arrow
        length = np.linalg.norm(tip - center)
        u = (tip - center) / length
        grab = center + 0.7 * (tip - center)
        drag(browser, grab, grab + 40.0 * u)
        T1 = wait_for(lambda: (T := left.target) is not None and not np.allclose(T.translation, T0.translation)
                      and browser.evaluate("reljacDebug.drag === null") and T, "the target to move")
        # the page sends "release" after its last drag, and the debugger takes them in order
        wait_for(lambda: debugger.run_state.grab is None, "the drag's release")
        T1 = left.target
        moved = T1.translation - T0.translation
        expected = 40.0 * size / length  # [m]: the page maps the arrow's on-screen length to `size`
        # along the target's own x axis, by the mouse's travel along the arrow, turning nothing
        np.testing.assert_allclose(moved, np.linalg.norm(moved) * T0.rotation[:, 0], atol=1e-9)
        assert moved @ T0.rotation[:, 0] == pytest.approx(expected, rel=0.1)
        np.testing.assert_allclose(T1.rotation, T0.rotation, atol=1e-9)
        assert np.linalg.norm(moved) > 0.01
        # the controller tracks it live: the left tool reaches the new target
        wait_for(lambda: np.linalg.norm(position_of(dual_arm, debugger.state()["q"], "left_tool").translation
                                        - T1.translation) < 1e-3, "the left tool to reach the target")
        # the relative target's handle is drawn in frame a (left_tool): it moved with it
        T_wa = position_of(dual_arm, debugger.state()["q"], "left_tool")
        drawn = np.array(wait_for(lambda: debugger.state()["targets"]["handle relative"], "a state"))
        np.testing.assert_allclose(drawn, (T_wa * relative.target).homogeneous, atol=2e-3)

        # dragging the relative handle's ring turns the relative target about its own axis; paused
        # (a drag works paused too), so the handle stays where the page last drew it
        debugger.pause()
        wait_for(lambda: browser.evaluate("reljacDebug.state.paused"), "the page to show the pause")
        R0 = relative.target.rotation
        screen = browser.evaluate("reljacDebug.handleScreen('handle relative')")
        ring = np.array(screen["rings"][2])[:, :2]  # the ring around z, 48 points
        between = np.arange(3, 48, 6)  # 22.5 deg off the x and y arrows, which cross this ring
        k = int(between[np.argmax(np.linalg.norm(ring[between] - np.array(screen["center"][:2]), axis=1))])
        drag(browser, ring[k], ring[(k + 6) % 48])
        wait_for(lambda: not np.allclose(relative.target.rotation, R0) and
                 browser.evaluate("reljacDebug.drag === null"), "the relative target to turn")
        wait_for(lambda: debugger.run_state.grab is None, "the drag's release")
        turn = R0.T @ relative.target.rotation  # in the target's frame: about its z axis only
        assert abs(pin.log3(turn)[2]) > 0.05
        np.testing.assert_allclose(pin.log3(turn)[:2], 0.0, atol=1e-9)

        debugger.resume()
        wait_for(lambda: browser.evaluate("!reljacDebug.state.paused"), "the page to show the run")
        # the picture shows the rates of a running page (over a whole second of the run: not 1 and 1)
        wait_for(lambda: browser.evaluate("reljacDebug.rate > 2 && reljacDebug.fps > 2"), "a second of updates")
        png = browser.screenshot()
    image = read_png(png)
    assert image.shape[:2] == (SIZE[1], SIZE[0])
    if os.environ.get("RELJAC_UPDATE_SCREENSHOTS"):
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        SCREENSHOT.write_bytes(png)


@needs_chromium
def test_pause_step_scrub_and_export_from_the_page(dual_arm, tmp_path, browser):
    task = FrameTask("left_tool", gain=0.5, name="left")  # slow: the step below still moves the arm
    q0 = dual_arm.neutral()
    task.set_target(position_of(dual_arm, q0, "left_tool") * pin.SE3(np.eye(3), np.array([0.3, 0.0, 0.0])))
    controller = Controller(dual_arm, [[task], [PostureTask(dual_arm, weight=0.1)]], dt=0.01)
    with Debugger(controller, q0, new_log=new_run_log, export_dir=tmp_path) as debugger:
        open_page(browser, debugger)
        wait_for(lambda: debugger.state()["steps"] > 5, "steps")
        click(browser, *browser.evaluate("reljacDebug.buttonCenter('pause')"))
        wait_for(lambda: debugger.state()["paused"], "the pause")
        paused = debugger.state()
        click(browser, *browser.evaluate("reljacDebug.buttonCenter('step')"))
        after = wait_for(lambda: (s := debugger.state())["steps"] > paused["steps"] and s, "the step")
        # exactly one step, from the configuration shown when paused
        assert after["steps"] == paused["steps"] + 1
        assert after["t"] == pytest.approx(paused["t"] + controller.dt)
        frame = debugger.recording.frames[-1]
        np.testing.assert_array_equal(frame.q, paused["q"])
        assert np.linalg.norm(np.subtract(after["q"], paused["q"])) > 1e-4
        wait_for(lambda: browser.evaluate("reljacDebug.state.steps") == after["steps"], "the page to show it")
        assert "PAUSED" in browser.evaluate("document.getElementById('status').textContent")

        # the timeline: a click at its left end shows the first frame on record
        box = browser.evaluate("(() => { const r = document.getElementById('timeline').getBoundingClientRect();"
                               " return [r.left, r.top + r.height / 2]; })()")
        click(browser, box[0] + 1, box[1])
        state = wait_for(lambda: (s := debugger.state())["scrub"] == 0 and s, "the scrub")
        np.testing.assert_array_equal(state["q"], debugger.recording.frames[0].q)

        # Export writes the recording in --record's format
        browser.evaluate("document.getElementById('file').value = 'run.npz'")
        click(browser, *browser.evaluate("reljacDebug.buttonCenter('export')"))
        wait_for(lambda: browser.evaluate("reljacDebug.exported"), "the export")
        data = np.load(tmp_path / "run.npz")
        frames = list(debugger.recording.frames)
        np.testing.assert_array_equal(data["t"], [f.t for f in frames])
        np.testing.assert_array_equal(data["q"], [f.q for f in frames])
        np.testing.assert_allclose(data["target/left"][0], frames[0].targets["left"].homogeneous)
        assert str(data["demo"]) == "debug"


@needs_chromium
def test_joint_sliders_without_a_controller_move_the_robot(browser):
    robot = Robot.bundled("dual_arm").locked({"torso_yaw": 0.3})
    with Debugger(None, robot=robot) as debugger:
        open_page(browser, debugger)
        sliders = browser.evaluate("reljacDebug.init.sliders")
        names = [s["name"] for s in sliders]
        assert names[:robot.nq] == [robot.model.names[j] for j in range(1, robot.model.njoints)]
        locked = [s for s in sliders if s["locked"]]
        assert locked == [{"name": "torso_yaw", "lower": 0.3, "upper": 0.3, "value": 0.3, "locked": True}]
        assert browser.evaluate("document.getElementById('joint:torso_yaw').disabled") is True
        j = robot.model.getJointId("left_joint2")
        iq = robot.model.joints[j].idx_q
        lower, upper = robot.model.lowerPositionLimit[iq], robot.model.upperPositionLimit[iq]
        first = next(s for s in sliders if s["name"] == "left_joint2")
        assert (first["lower"], first["upper"]) == (pytest.approx(lower), pytest.approx(upper))
        box = browser.evaluate("(() => { const r = document.getElementById('joint:left_joint2').getBoundingClientRect();"
                               " return [r.right - 2, r.top + r.height / 2]; })()")
        click(browser, *box)
        q = wait_for(lambda: (q := debugger.state()["q"])[iq] > upper - 0.05 and q, "the slider to move the joint")
        assert q[iq] <= upper + 1e-12



SCENE_DRAWING = """(() => { const r = viewer.renderer, c = r.domElement, spheres = [];
  viewer.scene.traverse(o => { if (o.geometry && o.geometry.type === 'SphereGeometry') spheres.push(o.geometry.parameters.widthSegments); });
  return {software: reljacDebug.software, gl: reljacDebug.glRenderer, antialias: r.getContext().getContextAttributes().antialias,
          pixels: [c.width, c.height], shown: [c.clientWidth, c.clientHeight], spheres}; })()"""


@needs_chromium
def test_a_software_drawn_page_draws_fewer_pixels_without_antialiasing_unless_asked(dual_arm, browser):
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    with Debugger(controller, q0, paused=True) as debugger:
        open_page(browser, debugger)
        cheap = browser.evaluate(SCENE_DRAWING)
        assert "SwiftShader" in cheap["gl"] and cheap["software"]  # headless Chromium without a GPU
        assert cheap["antialias"] is False
        width, height = cheap["pixels"]
        assert width * height <= 250_000 * 1.01  # the page's SOFTWARE_PIXELS
        assert cheap["shown"] == [SIZE[0] - 380, SIZE[1]]  # stretched over the whole view
        assert width / height == pytest.approx(cheap["shown"][0] / cheap["shown"][1], rel=0.01)
        assert cheap["spheres"] and max(cheap["spheres"]) <= 12  # the handles' balls, coarser
        # ?quality=full: meshcat's own drawing, antialiased, every pixel, its 20-segment balls
        open_page(browser, debugger, query="?quality=full")
        full = browser.evaluate(SCENE_DRAWING)
        assert full["software"] is False and full["antialias"] is True
        assert full["pixels"] == full["shown"] == cheap["shown"]
        assert min(full["spheres"]) > 12


@needs_chromium
def test_a_software_drawn_page_simplifies_dense_meshes_within_a_cell_of_their_shape(dual_arm, browser):
    with Debugger(None, robot=dual_arm) as debugger:
        open_page(browser, debugger)
        # a dense mesh (a torus knot, 25600 triangles) through the page's simplifier
        out = browser.evaluate("""(() => {
          const dense = new THREE.BufferGeometry().copy(new THREE.TorusKnotGeometry(1, 0.3, 400, 32));
          const simple = simplify(dense);
          dense.computeBoundingBox(); simple.computeBoundingBox();
          const p = simple.attributes.position.array, n = simple.attributes.normal.array;
          let flat = true;  // each triangle's three normals are one (flat shading)
          for (let k = 0; k < n.length; k += 9) for (let j = 3; j < 9; j++) flat = flat && n[k + j] === n[k + j % 3];
          return {before: dense.index.count / 3, after: p.length / 9, flat,
                  lo: [dense.boundingBox.min.toArray(), simple.boundingBox.min.toArray()],
                  hi: [dense.boundingBox.max.toArray(), simple.boundingBox.max.toArray()],
                  small: simplify(new THREE.BufferGeometry().copy(new THREE.BoxGeometry(1, 1, 1))),
                  size: dense.boundingBox.getSize(new THREE.Vector3()).toArray()}; })()""")
    assert out["after"] < out["before"] / 2
    assert out["flat"] and out["small"] is None  # a mesh of few triangles is kept as it is
    cell = max(out["size"]) / 40  # the page's MESH_CELLS
    np.testing.assert_allclose(out["lo"][1], out["lo"][0], atol=cell)
    np.testing.assert_allclose(out["hi"][1], out["hi"][0], atol=cell)


HOSTILE = "<i id=x>x</i>"  # a task name that is HTML


@needs_chromium
def test_names_are_text_and_the_panel_keeps_every_value_on_its_line(dual_arm, browser):
    tool = FrameTask("left_tool", name=HOSTILE)
    q0 = dual_arm.neutral()
    tool.set_target(position_of(dual_arm, q0, "left_tool"))
    controller = Controller(dual_arm, [[tool], [PostureTask(dual_arm, weight=0.1, name="posture")]], dt=0.01)
    with Debugger(controller, q0, paused=True) as debugger:
        debugger.step()
        wait_for(lambda: debugger.steps == 1, "a step")
        open_page(browser, debugger)
        wait_for(lambda: browser.evaluate("reljacDebug.state.steps") == 1, "the page to show the step")
        # the name is shown as text, in the panel and beside its handle: never an element
        assert browser.evaluate("document.getElementById('x') === null && document.querySelectorAll('i').length === 0")
        assert HOSTILE in browser.evaluate("document.getElementById('levels').textContent")
        label = browser.evaluate("(() => { const l = document.querySelector('.handle-label'); const r = l.getBoundingClientRect();"
                                 " return {text: l.textContent, left: r.left, top: r.top, shown: l.style.display}; })()")
        center = browser.evaluate("reljacDebug.handleScreen(reljacDebug.init.handles[0].name).center")
        assert label["text"] == HOSTILE and label["shown"] == ""
        assert 0 <= label["left"] - center[0] <= 40 and 0 <= label["top"] - center[1] <= 40  # just right of and below the ball

        # the status line with a long run: every field visible inside the panel, none cut off
        status = browser.evaluate("""(() => { onState(Object.assign({}, reljacDebug.state, {t: 123456.789, steps: 12345678, samples: []}));
          const box = document.getElementById('status'), r = box.getBoundingClientRect();
          return {fits: box.scrollWidth <= box.clientWidth, text: box.textContent,
                  inside: [...box.querySelectorAll('.field')].every(f => f.getBoundingClientRect().right <= r.right + 0.5)}; })()""")
        assert status["fits"] and status["inside"], status
        assert "t = 123456.79 s" in status["text"] and "frames/s" in status["text"] and "null" not in status["text"]

        # a distance stays on one line beside a long pair name
        lines = browser.evaluate("""(() => { drawPairs([{pair: 'left_link_with_a_rather_long_name/right_link_7_collision_0', distance: 0.0122}], 0.0122);
          return [...document.querySelectorAll('#pairs td.num')].map(td => { const r = document.createRange();
            r.selectNodeContents(td); return [td.textContent, r.getClientRects().length]; }); })()""")
        assert lines == [["12.2 mm", 1], ["12.2 mm", 1]]

        # a posture level that is not met is not painted as a failure; another level is
        levels = browser.evaluate("""(() => { drawLevels(reljacDebug.state.levels.map(l => Object.assign({}, l, {met: false})));
          return [...document.querySelectorAll('#levels .level')].map(d => [d.className, d.textContent]); })()""")
        assert [("unmet" in c, "posture-level" in c) for c, _ in levels] == [(True, False), (False, True)]
        assert "not met" in levels[0][1] and "not expected to be met" in levels[1][1]

        # plots: the legend beside the curves, and labels that tell sub-millimetre jitter apart
        plots = browser.evaluate("""(() => { reljacDebug.samples = Array.from({length: 50}, (_, k) =>
            [k * 0.1, [1e-3 * (1 + 0.01 * Math.sin(k))], 0.021 + 4e-7 * Math.sin(k)]); drawPlots();
          return reljacDebug.plots; })()""")
    for name in ("errors", "distance"):
        assert plots[name]["legendLeft"] >= plots[name]["plotRight"] > plots[name]["plotLeft"]
        top, bottom = plots[name]["labels"]
        assert top != bottom, plots[name]
    assert float(plots["distance"]["labels"][0]) > float(plots["distance"]["labels"][1])
    assert abs(float(plots["distance"]["labels"][0]) - 21.0004) < 1e-4


# Each visual geometry of the robot drawn alone, as the page holds it (simplified in software),
# into a small transparent target framed on it: its pixels drawn.
LINK_PIXELS = """((root) => {
  const visuals = viewer.scene_tree.find(['meshcat', root, 'visuals']).children, out = {};
  const r = viewer.renderer, size = 48, target = new THREE.WebGLRenderTarget(size, size);
  const clear = r.getClearColor(new THREE.Color()), alpha = r.getClearAlpha(), pixels = new Uint8Array(4 * size * size);
  viewer.scene.updateMatrixWorld(true);
  for (const [name, node] of Object.entries(visuals)) {
    const object = node.children['<object>'] && node.children['<object>'].object;
    if (!object) { out[name] = -1; continue; }
    const scene = new THREE.Scene(), copy = object.clone(true);
    copy.matrixAutoUpdate = false; copy.matrix.copy(object.matrixWorld); copy.visible = true;
    scene.add(copy, new THREE.AmbientLight(0xffffff, 1));
    scene.updateMatrixWorld(true);
    const box = new THREE.Box3().setFromObject(copy), center = box.getCenter(new THREE.Vector3());
    const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1e-4);
    const camera = new THREE.PerspectiveCamera(40, 1, radius / 100, radius * 100);
    camera.position.copy(center).add(new THREE.Vector3(1, 0.8, 0.6).normalize().multiplyScalar(3 * radius));
    camera.lookAt(center);
    r.setRenderTarget(target); r.setClearColor(0x000000, 0); r.clear(); r.render(scene, camera);
    r.readRenderTargetPixels(target, 0, 0, size, size, pixels);
    let drawn = 0;
    for (let k = 3; k < pixels.length; k += 4) drawn += pixels[k] > 0;
    out[name] = drawn;
  }
  r.setRenderTarget(null); r.setClearColor(clear, alpha); target.dispose();
  return out; })"""


# Panda (Collada meshes of several materials each: the ones whose links once vanished when simplified,
# with Baxter's arms) and TIAGo (STL meshes). Baxter's page, the same Collada path, was left out to
# keep the suite under its 5 minutes: its 30 MB of Collada took 17 s of the suite's time.
@needs_chromium
@pytest.mark.parametrize("name", ["panda", "tiago"])
def test_a_software_drawn_page_draws_every_link_of_the_robot(name, browser):
    if name not in example_robots():
        pytest.skip(f"needs example-robot-data's {name}")
    robot = Robot.load(name)
    with Debugger(None, robot=robot) as debugger:
        root = debugger.viewer.root
        count = f"Object.values(viewer.scene_tree.find(['meshcat', {root!r}, 'visuals']).children)" \
                ".filter(n => n.children['<object>'] && n.children['<object>'].object).length"
        open_page(browser, debugger, ready=f"{count} === {robot.visual_model.ngeoms}")  # every visual geometry
        assert browser.evaluate("reljacDebug.software") and browser.evaluate("reljacDebug.simplified.before") > 0
        drawn = browser.evaluate(f"{LINK_PIXELS}({root!r})")
    assert len(drawn) == robot.visual_model.ngeoms
    missing = sorted(link for link, pixels in drawn.items() if pixels < 20)  # framed on it: hundreds of pixels
    assert not missing, f"{len(missing)} of {len(drawn)} visual geometries draw nothing: {missing[:10]}"


# ---------------------------------------------------------------------------- loading, scrubbing past the end
LOADING = "(() => { const b = document.getElementById('loading'); return b.style.display === 'none' ? '' : b.textContent; })()"


@needs_chromium
def test_the_page_says_what_is_loading_until_the_robot_is_drawn(dual_arm, browser):
    """Issue 43: Baxter's arms missing, the labels floating in empty space, nothing said. With the
    scene's socket held back the page says how many of the robot's meshes are drawn, of how many
    megabytes, and which comes next; with it, the message goes once every mesh is drawn."""
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    with Debugger(controller, q0, paused=True) as debugger:
        scene = debugger._hello()[0]["scene"]
        names = [g.name for g in dual_arm.visual_model.geometryObjects]
        assert [o["name"] for o in scene] == names and all(o["bytes"] > 0 for o in scene)
        total = sum(o["bytes"] for o in scene) / 1e6
        browser.call("Network.enable", session=True)
        browser.call("Network.setBlockedURLs", session=True, urls=["*/scene"])
        try:
            browser.open(debugger.url)
            text = wait_for(lambda: (t := browser.evaluate(LOADING)) and t.startswith("loading") and t, "the message")
        finally:
            browser.call("Network.setBlockedURLs", session=True, urls=[])
        assert text == (f"loading the robot's meshes: 0 of {len(names)} drawn (0.0 of {total:.1f} MB); "
                        f"next: {names[0]}"), text
        open_page(browser, debugger, ready="reljacDebug.loading && reljacDebug.loading.drawn === reljacDebug.loading.of")
        assert browser.evaluate(LOADING) == ""
        loading = browser.evaluate("reljacDebug.loading")
        assert loading["of"] == len(names) and loading["bytes"] == sum(o["bytes"] for o in scene)
        meshes = browser.evaluate(
            "reljacDebug.init.scene.filter(o => { const n = viewer.scene_tree.find(o.path.split('/').filter(x => x));"
            " let m = 0; n.object.traverse(x => { if (x.isMesh) m++; }); return m > 0; }).length")
        assert meshes == len(names)


@needs_chromium
def test_a_scrub_past_the_end_from_the_page_shows_the_last_frame(dual_arm, browser):
    """The page's own timeline, pushed past its end (as a stale page after a reset would): the
    debugger shows its last frame, paused, and the page says so."""
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    with Debugger(controller, q0) as debugger:
        open_page(browser, debugger)
        wait_for(lambda: debugger.state()["steps"] > 5, "steps")
        browser.evaluate("(() => { const t = document.getElementById('timeline'); t.max = 1e9; t.value = 1e9;"
                         " t.dispatchEvent(new Event('input')); })()")
        state = wait_for(lambda: (s := debugger.state())["scrub"] is not None and s, "the scrub")
        frames = len(debugger.recording)
        assert state["paused"] and state["scrub"] == frames - 1 == state["frames"] - 1
        np.testing.assert_array_equal(state["q"], debugger.recording.frames[-1].q)
        status = wait_for(lambda: (t := browser.evaluate("document.getElementById('status').textContent"))
                          and f"frame {frames}/{frames}" in t and t, "the page to show the frame")
        assert "PAUSED" in status
        browser.evaluate("(() => { const t = document.getElementById('timeline'); t.min = -1e9; t.value = -1e9;"
                         " t.dispatchEvent(new Event('input')); })()")
        assert wait_for(lambda: (s := debugger.state())["scrub"] == 0 and s, "the scrub to the start")["paused"]

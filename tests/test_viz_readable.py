"""A real browser shows robots of any size so that they read well: the robot framed (filling a
fair share of the picture, not clipped), each label drawn, readable and apart from the others;
and the page's own scene state is what the pure functions computed.

Robots: the bundled dual_arm and example-robot-data's panda, talos (a humanoid, 1.7 m) and the
Allegro hand (0.3 m). What each label and the robot cover is measured by hiding them one at a
time and comparing screenshots. Screenshots are kept in the test's tmp folder.
"""

from __future__ import annotations

import html
import time

import numpy as np
import pytest
from helpers import EXAMPLE_ROBOTS, example_robot_data_dir
from test_viz import Browser, arm_colours, colour_mask, needs_chromium, read_png, scene_messages

from reljac import Robot
from reljac.viz import Viewer
from reljac.viz.camera import frame_points, overlay_scale
from reljac.viz.viewer import LABEL_HEIGHT

pytestmark = pytest.mark.slow

SIZE = (800, 600)
FRAMES = {
    "dual_arm": ["left_tool", "right_tool", "torso"],
    "panda": ["panda_link0", "panda_link4", "panda_hand", "panda_leftfinger", "panda_rightfinger"],
    "talos": ["head_2_link", "base_link", "gripper_left_base_link", "gripper_right_base_link",
              "leg_left_6_link", "leg_right_6_link"],
    "allegro": ["palm_link", "link_3.0_tip", "link_7.0_tip", "link_11.0_tip", "link_15.0_tip"],
}
MIN_LABEL_PX = 12  # height of a label's drawn text and box, at least
FAIR_SHARE = 0.5  # the robot spans at least this fraction of the picture's height or width


def load(name: str) -> Robot:
    if name == "dual_arm":
        return Robot.bundled(name)
    root = example_robot_data_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    path, floating = EXAMPLE_ROBOTS[name]
    return Robot.from_urdf(root / path, floating_base=floating)


def changed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pixels that differ between two screenshots (H, W) bool."""
    return np.abs(a.astype(int) - b.astype(int)).sum(axis=2) > 30


def bbox(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right), inclusive, of the True pixels; None when there are none."""
    rows, cols = np.nonzero(mask.any(axis=1))[0], np.nonzero(mask.any(axis=0))[0]
    if rows.size == 0:
        return None
    return int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1])


def disjoint(a, b) -> bool:
    return a[1] < b[0] or b[1] < a[0] or a[3] < b[2] or b[3] < a[2]


class Page:
    """One browser page on one viewer: change the scene, wait for the page, take a picture."""

    def __init__(self, browser: Browser, viewer: Viewer) -> None:
        self.browser, self.viewer = browser, viewer
        browser.load(viewer.url, scene_messages(viewer))
        browser.wait_textures()  # label textures are PNG images decoded after their message

    def settle(self) -> None:
        self.browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))",
                              await_promise=True)

    def shot(self) -> np.ndarray:
        return read_png(self.browser.screenshot())

    def send(self, action, messages: int = 1) -> None:
        """Run action() (which sends `messages` scene messages) and wait until the page handled them."""
        seen = self.browser.messages()
        action()
        self.browser.wait_messages(seen + messages)

    def change(self, action, messages: int = 1) -> np.ndarray:
        """Run action() (which sends `messages` scene messages); the picture once drawn."""
        self.send(action, messages)
        return self.shot()

    def set_visible(self, path: list[str], visible: bool, *, shot: bool = True,
                    also: tuple[list[str], bool] | None = None) -> np.ndarray | None:
        """Show or hide the node at `path` (and, in the same update, set `also` = (path, visible)
        too); the picture once drawn (None with shot=False: the next picture shows it)."""
        changes = [(path, visible)] + ([also] if also is not None else [])

        def action():
            for where, shown in changes:
                node = self.viewer.viewer
                for part in where:
                    node = node[part]
                node.set_property("visible", shown)

        if not shot:
            self.send(action, len(changes))
            return None
        return self.change(action, len(changes))

    def js(self, expression: str):
        return self.browser.evaluate(expression)


@pytest.fixture
def browser(chromium):
    assert chromium.size == SIZE
    return chromium


@needs_chromium
@pytest.mark.parametrize("name", list(FRAMES))
def test_robot_is_framed_and_every_label_reads_apart(name, browser, tmp_path):
    robot = load(name)
    frames = FRAMES[name]
    with Viewer(robot) as viewer:
        for frame in frames:
            viewer.show_frame(frame, label=frame)
        page = Page(browser, viewer)
        full = page.shot()
        (tmp_path / f"{name}.png").write_bytes(browser.screenshot())
        no_labels = page.change(lambda: viewer.show_labels(False))
        assert bbox(changed(full, no_labels)) is not None
        # the robot hidden for the pictures below: a big robot's draw in software WebGL is what
        # takes time (about a second and a half for talos), the labels' alone is quick
        blank = page.set_visible([viewer.root, "visuals"], False)
        labels = page.change(lambda: viewer.show_labels(True))
        # each label alone: hide its text, see what disappears (shown again before the next picture,
        # in the same update that hides the next one: each picture lacks exactly one label)
        boxes, previous = {}, None
        for frame in frames:
            again = ([viewer.root, "labels", previous, "text"], True) if previous is not None else None
            without = page.set_visible([viewer.root, "labels", frame, "text"], False, also=again)
            boxes[frame] = bbox(changed(labels, without))
            previous = frame
        page.set_visible([viewer.root, "labels", previous, "text"], True, shot=False)
        hidden = page.change(lambda: viewer.show_labels(False))
        assert not changed(hidden, page.change(lambda: viewer.show_labels(False))).any()  # stays hidden
        assert not changed(hidden, blank).any()

        # the page's own state is what the pure functions computed
        lower, upper = viewer.bounding_box()
        assert viewer.scale == pytest.approx(overlay_scale(lower, upper))
        camera = frame_points(viewer.robot_points())
        np.testing.assert_allclose(viewer.camera.position, camera.position)
        in_page = page.js("viewer.scene.worldToLocal(viewer.camera.position.clone()"  # in the z-up scene
                          ".setFromMatrixPosition(viewer.camera.matrixWorld)).toArray()")  # shifted by -target
        np.testing.assert_allclose(in_page, camera.position - camera.target, atol=1e-5)
        label = page.js(f"viewer.scene_tree.find(['meshcat', {viewer.root!r}, 'labels', {frames[0]!r}, 'text', "
                        "'<object>']).object.scale.toArray()")
        assert label[1] == pytest.approx(LABEL_HEIGHT * viewer.scale, rel=1e-6)

    h, w = SIZE[1], SIZE[0]
    for frame, box in boxes.items():
        assert box is not None, f"{name}: label {frame!r} not drawn (screenshots in {tmp_path})"
        top, bottom, left, right = box
        assert bottom - top + 1 >= MIN_LABEL_PX, f"{name}: label {frame!r} is {bottom - top + 1} px tall"
        assert top > 0 and left > 0 and bottom < h - 1 and right < w - 1, f"{name}: {frame!r} clipped {box}"
    for a, b in [(a, b) for i, a in enumerate(frames) for b in frames[i + 1:]]:
        assert disjoint(boxes[a], boxes[b]), f"{name}: labels {a!r} {boxes[a]} and {b!r} {boxes[b]} overlap"
    # over the robot, each label shows as it does alone (not hidden behind a link)
    over_robot, alone = changed(full, no_labels), changed(labels, blank)
    for frame, box in boxes.items():
        top, bottom, left, right = box
        seen = over_robot[top:bottom + 1, left:right + 1].sum()
        drawn = alone[top:bottom + 1, left:right + 1].sum()
        assert seen >= 0.8 * drawn, f"{name}: label {frame!r} shows {seen} of its {drawn} px over the robot"
    robot_box = bbox(changed(no_labels, blank))
    assert robot_box is not None, f"{name}: robot not drawn"
    top, bottom, left, right = robot_box
    assert max((bottom - top) / h, (right - left) / w) >= FAIR_SHARE, f"{name}: robot spans only {robot_box}"
    assert top > 0 and left > 0 and bottom < h - 1 and right < w - 1, f"{name}: robot clipped {robot_box}"
    centre = np.array([(left + right) / 2 / w, (top + bottom) / 2 / h])
    assert np.all(np.abs(centre - 0.5) < 0.1), f"{name}: robot off centre {robot_box}"


@needs_chromium
def test_viewer_shows_inline_in_a_notebook_cell(browser, tmp_path):
    """The HTML Jupyter shows for a Viewer: an iframe of the page, which draws the robot."""
    robot = Robot.bundled("dual_arm")
    with Viewer(robot) as viewer:
        cell = viewer._repr_html_()
        assert f'src="{html.escape(viewer.url)}"' in cell and cell.count("<iframe") == 1
        browser.open(viewer.url)  # a page served over http, as a notebook's is (not about:blank)
        frame = browser.call("Page.getFrameTree", session=True)["frameTree"]["frame"]["id"]
        browser.call("Page.setDocumentContent", session=True, frameId=frame,  # a notebook's output cell
                     html=f"<html><body style='margin:0'><h3>Out[1]:</h3>{cell}</body></html>")
        colours, deadline = arm_colours(robot), time.monotonic() + 30.0
        while True:
            img = read_png(browser.screenshot())
            counts = {side: int(colour_mask(img, rgba).sum()) for side, rgba in colours.items()}
            if min(counts.values()) > 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        (tmp_path / "notebook.png").write_bytes(browser.screenshot())
    assert min(counts.values()) > 200, f"the iframe shows no robot: {counts} ({tmp_path})"
    rows = np.nonzero(np.any([colour_mask(img, rgba) for rgba in colours.values()], axis=(0, 2)))[0]
    assert rows.max() < 460  # inside the 400 px cell under the heading
    assert "closed" in viewer._repr_html_() and "<iframe" not in viewer._repr_html_()

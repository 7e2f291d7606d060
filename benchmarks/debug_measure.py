"""Measure the debug page on TIAGo dual (collision avoidance on): updates per second and the
latency from a handle drag to the robot's motion. Not a test (no assertions): run it as

    python benchmarks/debug_measure.py [SECONDS] [--hide-scene] [--quality-full] [--gpu-compositing]

with headless Chromium on PATH. Headless Chromium has no GPU: it draws WebGL in software
(SwiftShader), and the page then draws a cheaper scene (no antialiasing, fewer pixels, coarser
balls: ``debug_page.js``); ``--quality-full`` opens the page with ``?quality=full`` (meshcat's
own drawing, as with a GPU). ``--hide-scene`` hides the page's 3D view after loading (opacity 0:
still drawn, not composited; the handles are still picked from their projected positions).
The tests' Chromium runs with ``--disable-gpu``: its compositor then works in software too, on the
page's main thread, which waits for every WebGL frame to be drawn and read back. With
``--gpu-compositing`` Chromium composites through SwiftShader in its GPU process instead (as a
browser with a GPU composites on it): the main thread no longer waits for the 3D frames.

It prints, for the Python side alone and with the page: control steps per second (real time is
1 / dt), scene updates per second, the mean time of one control step with the panel's data and
of one update (scene placed, state made; its JSON is encoded in the server's thread); for the
page: states and frames drawn per second, how busy its main thread was (DevTools'
Performance.getMetrics), one frame drawn and read back; per drag (median of 10): mouse move ->
task target set, -> the left hand moved 1 mm, -> the page received that state.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the tests' browser and helpers
import test_viz
from helpers import wait_for
from test_debug_browser import mouse, open_page
from test_viz import Browser

from reljac import Robot
from reljac.apps.hierarchy_file import load_hierarchy
from reljac.relative import Kinematics
from reljac.viz.debugger import Debugger

FILE = Path(__file__).resolve().parent.parent / "examples" / "tiago_dual_debug.toml"
LEFT = "hand_left_tool_link"


class Timer:
    """Wraps a method of `obj` (an instance attribute, seen by its thread at the next call) and
    sums its durations."""

    def __init__(self, obj, name: str) -> None:
        method, self.calls, self.seconds = getattr(obj, name), 0, 0.0

        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.calls, self.seconds = self.calls + 1, self.seconds + time.perf_counter() - t

        setattr(obj, name, timed)

    def mean_ms(self) -> str:
        mean = 1e3 * self.seconds / max(self.calls, 1)
        self.calls, self.seconds = 0, 0.0
        return f"{mean:.2f} ms"


def python_side(debugger: Debugger, seconds: float, step: Timer, show: Timer) -> str:
    steps0, t0 = debugger.steps, time.monotonic()
    step.mean_ms(), show.mean_ms()
    time.sleep(seconds)
    elapsed = time.monotonic() - t0
    return (f"control steps/s {(debugger.steps - steps0) / elapsed:.1f}, scene updates/s sent "
            f"{debugger.updates_per_second:.0f}; one control step with the panel's data {step.mean_ms()}, "
            f"one update {show.mean_ms()} (load average {os.getloadavg()[0]:.1f})")


def main(seconds: float = 10.0, hide_scene: bool = False, quality_full: bool = False,
         gpu_compositing: bool = False) -> None:
    if gpu_compositing:
        test_viz.CHROMIUM_FLAGS[:] = [f for f in test_viz.CHROMIUM_FLAGS if f != "--disable-gpu"] + [
            "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
    robot = Robot.load("tiago_dual").locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])
    controller, q0 = load_hierarchy(robot, FILE)
    left = controller.levels[1][0]
    browser = Browser(size=(1400, 900))
    try:
        with Debugger(controller, q0) as debugger:
            step, show = Timer(debugger, "_control_step"), Timer(debugger, "_show")
            time.sleep(2)
            print(f"TIAGo dual, nv = {robot.nv}, {len(robot.collision_pairs)} collision pairs, "
                  f"{len(robot.visual_model.geometryObjects)} visual geometries, dt = {controller.dt} s "
                  f"(real time: {1 / controller.dt:.0f} steps/s), {os.cpu_count()} cores")
            print(f"no page yet: {python_side(debugger, seconds, step, show)}")
            t_open = time.monotonic()
            open_page(browser, debugger, timeout=600, query="?quality=full" if quality_full else "")
            print(f"page loaded in {time.monotonic() - t_open:.0f} s")
            if hide_scene:
                browser.evaluate("document.getElementById('scene').style.opacity = '0'")  # still picks
                print("the page's 3D view is hidden")
            drawing = browser.evaluate(
                "(() => { const r = viewer.renderer, c = r.domElement; r.render(viewer.scene, viewer.camera); "
                "return [reljacDebug.glRenderer, r.getContext().getContextAttributes().antialias, c.width, c.height, "
                "r.info.render.calls, r.info.render.triangles]; })()")
            print(f"page's WebGL: {drawing[0]}; antialias {drawing[1]}, {drawing[2]} x {drawing[3]} pixels, "
                  f"{drawing[4]} draw calls, {drawing[5]} triangles")
            browser.call("Performance.enable", session=True)
            metrics = lambda: {m["name"]: m["value"] for m in  # noqa: E731
                               browser.call("Performance.getMetrics", session=True)["metrics"]}
            m0 = metrics()
            print(f"with the page: {python_side(debugger, seconds, step, show)}")
            m1 = metrics()
            busy = (m1["TaskDuration"] - m0["TaskDuration"]) / (m1["Timestamp"] - m0["Timestamp"])
            script = (m1["ScriptDuration"] - m0["ScriptDuration"]) / (m1["Timestamp"] - m0["Timestamp"])
            print(f"page (headless Chromium): states/s {browser.evaluate('reljacDebug.rate')}, "
                  f"scene frames/s {browser.evaluate('reljacDebug.fps')}; its main thread busy {100 * busy:.0f} % "
                  f"of the time (JavaScript {100 * script:.0f} %)")
            render = browser.evaluate(
                "(() => { const r = viewer.renderer, gl = r.getContext(), px = new Uint8Array(4); "
                "const t = performance.now(); for (let i = 0; i < 5; i++) { r.render(viewer.scene, viewer.camera); "
                "gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px); } return (performance.now() - t) / 5; })()")
            print(f"one frame of the scene drawn and read back in headless Chromium: {render:.0f} ms")
            to_target, to_motion, to_page, stuck = [], [], [], 0
            for k in range(10):
                screen = browser.evaluate("reljacDebug.handleScreen('handle left hand')")
                c, tip = np.array(screen["center"][:2]), np.array(screen["axes"][0][:2])
                grab = c + 0.7 * (tip - c)
                u = (tip - c) / np.linalg.norm(tip - c) * (1 if k % 2 == 0 else -1)
                T0 = left.target
                p0 = Kinematics(robot, debugger.state()["q"]).placement(LEFT).translation
                steps = debugger.state()["steps"]
                mouse(browser, "mouseMoved", *grab, buttons=0)
                mouse(browser, "mousePressed", *grab)
                start = time.monotonic()
                mouse(browser, "mouseMoved", *(grab + 30 * u))
                try:
                    wait_for(lambda: not np.allclose(left.target.translation, T0.translation), "the target", 60)
                    to_target.append(time.monotonic() - start)
                    moved = wait_for(lambda: (s := debugger.state())["steps"] > steps and np.linalg.norm(
                        Kinematics(robot, s["q"]).placement(LEFT).translation - p0) > 1e-3 and s, "the motion", 20)
                    to_motion.append(time.monotonic() - start)
                    wait_for(lambda: browser.evaluate("reljacDebug.state.steps") >= moved["steps"], "the page", 60)
                    to_page.append(time.monotonic() - start)
                except TimeoutError as exc:  # e.g. collision avoidance holds the hand back
                    print(f"drag {k + 1}: {exc}")
                    stuck += 1
                mouse(browser, "mouseReleased", *(grab + 30 * u), buttons=0)
                time.sleep(1.0)
            ms = lambda xs: f"{1e3 * statistics.median(xs):.0f} ms (max {1e3 * max(xs):.0f})" if xs else "-"  # noqa: E731
            print(f"drag (median of {len(to_page)}, {stuck} not followed within the wait) -> target set: "
                  f"{ms(to_target)}; -> left hand moved 1 mm: {ms(to_motion)}; -> the page has that state: "
                  f"{ms(to_page)} (load average {os.getloadavg()[0]:.1f})")
            print("each drag, to the hand moved 1 mm [ms]:", [round(1e3 * x) for x in to_motion])
    finally:
        browser.close()


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:] if not a.startswith("--")), hide_scene="--hide-scene" in sys.argv,
         quality_full="--quality-full" in sys.argv, gpu_compositing="--gpu-compositing" in sys.argv)

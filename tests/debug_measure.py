"""Measure the debug page on TIAGo dual (collision avoidance on): updates per second and the
latency from a handle drag to the robot's motion. Not a test (no assertions): run it as

    python tests/debug_measure.py [SECONDS] [--hide-scene]

with headless Chromium on PATH. ``--hide-scene`` hides the page's 3D view after loading (the
handles are still picked from their projected positions): headless Chromium draws WebGL in
software, which on a small machine costs far more than everything else on the page. It prints, for the Python side and for the page: control steps
per second (real time is 1 / dt), scene updates per second, and per drag (median of 10): mouse
move -> task target set, -> the left hand moved 1 mm, -> the page received that state.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from test_debug_browser import mouse, open_page, wait_for
from test_viz import Browser

from reljac import Robot
from reljac.apps.hierarchy_file import load_hierarchy
from reljac.relative import Kinematics
from reljac.viz.debugger import Debugger

FILE = Path(__file__).resolve().parent.parent / "examples" / "tiago_dual_debug.toml"
LEFT = "hand_left_tool_link"


def main(seconds: float = 10.0, hide_scene: bool = False) -> None:
    robot = Robot.load("tiago_dual").locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])
    controller, q0 = load_hierarchy(robot, FILE)
    left = controller.levels[1][0]
    browser = Browser(size=(1400, 900))
    try:
        with Debugger(controller, q0) as debugger:
            time.sleep(2)
            steps0, t0 = debugger.steps, time.monotonic()
            time.sleep(seconds)
            elapsed = time.monotonic() - t0
            print(f"no page yet: control steps/s {(debugger.steps - steps0) / elapsed:.1f}, "
                  f"scene updates/s {debugger.updates_per_second:.0f} (load average {os.getloadavg()[0]:.1f})")
            t_open = time.monotonic()
            open_page(browser, debugger, timeout=600)  # TIAGo's meshes take a while to decode
            print(f"page loaded in {time.monotonic() - t_open:.0f} s")
            if hide_scene:
                browser.evaluate("document.getElementById('scene').style.opacity = '0'")  # still picks
                print("the page's 3D view is hidden")
            steps0, t0 = debugger.steps, time.monotonic()
            time.sleep(seconds)
            elapsed = time.monotonic() - t0
            print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
            print(f"TIAGo dual, nv = {robot.nv}, {len(robot.collision_pairs)} collision pairs, "
                  f"{len(robot.visual_model.geometryObjects)} visual geometries, dt = {controller.dt} s")
            print(f"control steps/s: {(debugger.steps - steps0) / elapsed:.1f} (real time: {1 / controller.dt:.0f})")
            print(f"scene updates/s sent by Python: {debugger.updates_per_second:.0f}")
            print(f"page (headless Chromium): states/s {browser.evaluate('reljacDebug.rate')}, "
                  f"scene frames/s {browser.evaluate('reljacDebug.fps')}")
            render = browser.evaluate("(() => { const t = performance.now(); for (let i = 0; i < 10; i++) "
                                      "viewer.render(); return (performance.now() - t) / 10; })()")
            print(f"one render of the scene in headless Chromium (software GL): {render:.1f} ms")
            to_target, to_motion, to_page = [], [], []
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
                wait_for(lambda: not np.allclose(left.target.translation, T0.translation), "the target", 60)
                to_target.append(time.monotonic() - start)
                moved = wait_for(lambda: (s := debugger.state())["steps"] > steps and np.linalg.norm(
                    Kinematics(robot, s["q"]).placement(LEFT).translation - p0) > 1e-3 and s, "the motion", 60)
                to_motion.append(time.monotonic() - start)
                wait_for(lambda: browser.evaluate("reljacDebug.state.steps") >= moved["steps"], "the page", 60)
                to_page.append(time.monotonic() - start)
                mouse(browser, "mouseReleased", *(grab + 30 * u), buttons=0)
                time.sleep(1.0)
            ms = lambda xs: f"{1e3 * statistics.median(xs):.0f} ms (max {1e3 * max(xs):.0f})"  # noqa: E731
            print(f"drag -> target set: {ms(to_target)}; -> left hand moved 1 mm: {ms(to_motion)}; "
                  f"-> the page has that state: {ms(to_page)}")
    finally:
        browser.close()


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:] if a != "--hide-scene"), hide_scene="--hide-scene" in sys.argv)

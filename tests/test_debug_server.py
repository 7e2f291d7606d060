"""The debug page's server through real websocket messages (no browser): who may connect (Host,
Origin), malformed messages answered while the run goes on, steps, exports that always answer,
a drag after scrubbing back, and the Debugger's own arguments."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request

import numpy as np
import pinocchio as pin
import pytest
import tornado.httpclient
from debug_pages import ControlPage, wait_for

from reljac import Robot
from reljac.apps.debug import new_run_log
from reljac.apps.hierarchy_file import DEMO_FILE, load_hierarchy
from reljac.exceptions import ConfigurationError, ReljacError
from reljac.ik import Controller, FrameTask, PostureTask
from reljac.relative import Kinematics
from reljac.viz.debug_access import HostPolicy, check_address
from reljac.viz.debugger import Debugger


@pytest.fixture(scope="module")
def dual_arm():
    return Robot.bundled("dual_arm")


def get(url: str, host: str) -> int:
    """HTTP status of GET `url` sent with the Host header `host`."""
    request = urllib.request.Request(url, headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


def refused(url: str, headers: dict, path: str = "control") -> int:
    """The HTTP status a websocket handshake with `headers` got (0: it connected)."""
    try:
        ControlPage(url, headers, path=path).close()
    except tornado.httpclient.HTTPClientError as exc:
        return exc.code
    return 0


# ---------------------------------------------------------------------------- who may connect
def test_the_host_policy_takes_loopback_names_and_the_configured_host_only():
    loopback = HostPolicy("127.0.0.1")
    for host in ("127.0.0.1:8000", "localhost:8000", "LOCALHOST.:1", "[::1]:8000", "127.0.0.1"):
        assert loopback.allows_host(host), host
    for host in ("evil.example:8000", "127.0.0.1.evil.example", "192.168.1.5:8000", "", None, "[::1"):
        assert not loopback.allows_host(host), host
    named = HostPolicy("robot-pc.lab")
    assert named.allows_host("robot-pc.lab:80") and not named.allows_host("evil.example:80")
    anywhere = HostPolicy("0.0.0.0")  # every interface: any address literal (no DNS rebinding without a name)
    assert anywhere.allows_host("192.168.1.5:8000") and anywhere.allows_host("[fe80::1]:1")
    assert not anywhere.allows_host("evil.example:8000")
    assert loopback.allows_origin("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert loopback.allows_origin(None, "127.0.0.1:8000")  # no browser page
    for origin in ("http://evil.example:8000", "http://127.0.0.1:9999", "null", "file://", "http://localhost:8000"):
        assert not loopback.allows_origin(origin, "127.0.0.1:8000"), origin


@pytest.mark.parametrize("host, port, words", [
    (None, 0, "host must be a host name"), ("", 0, "host must be a host name"), (" ", 0, "host must be"),
    ("http://x", 0, "host must be"), ("127.0.0.1", 70000, "port must be an integer in 0..65535"),
    ("127.0.0.1", -1, "0..65535"), ("127.0.0.1", 80.0, "0..65535"), ("127.0.0.1", True, "0..65535"),
])
def test_bad_addresses_are_configuration_errors(host, port, words):
    with pytest.raises(ConfigurationError, match=words):
        check_address(host, port)


def test_a_request_naming_another_host_or_origin_is_refused(dual_arm):
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    with Debugger(controller, q0, paused=True) as debugger:
        url, authority = debugger.url, debugger.url.split("//")[1].rstrip("/")
        port = authority.rsplit(":", 1)[1]
        assert get(url, authority) == get(url, f"localhost:{port}") == 200
        for path in ("", "static/main.min.js"):  # a DNS-rebinding page's requests name its own host
            assert get(url + path, f"evil.example:{port}") == 403
        assert refused(url, {"Host": f"evil.example:{port}"}) == 403
        assert refused(url, {"Origin": f"http://evil.example:{port}"}) == 403
        assert refused(url, {"Origin": "null"}) == 403
        assert refused(url, {"Origin": f"http://{authority}"}) == 0  # the page itself
        assert refused(url, {"Host": f"evil.example:{port}"}, path="scene") == 403
        assert debugger._thread.is_alive()


# ---------------------------------------------------------------------------- malformed messages
NESTED = "[" * 100_000 + "]" * 100_000
BAD = [
    "{", "[1, 2]", "null", NESTED, '{"type": "scrub", "index": ' + NESTED + "}",
    {"type": 5}, {"type": "jump"}, {}, {"type": ["step"]},
    {"type": "scrub", "index": "abc"}, {"type": "scrub", "index": None}, {"type": "scrub", "index": 2.5},
    '{"type": "scrub", "index": Infinity}', '{"type": "scrub", "index": NaN}', {"type": "scrub", "index": True},
    {"type": "grab", "handle": ["handle left"]}, {"type": "grab", "handle": {"a": 1}}, {"type": "grab", "handle": "x"},
    {"type": "drag", "handle": "handle left", "delta": "abc"},
    {"type": "drag", "handle": "handle left", "delta": ["1"] * 16},
    {"type": "drag", "handle": "handle left", "delta": [1e308] * 16},
    {"type": "drag", "handle": "handle left", "delta": np.eye(4).ravel().tolist()[:15]},
    {"type": "drag", "handle": "handle left", "delta": [[1e308 if k == 3 else float(k in (0, 5, 10, 15)) for k in range(16)]]},
    {"type": "drag", "handle": "handle left", "delta": (2 * np.eye(4)).ravel().tolist()},
    {"type": "export", "file": ["x.npz"]},
]


def test_every_malformed_message_is_answered_and_the_run_goes_on(dual_arm):
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    left = controller.levels[1][0]
    with Debugger(controller, q0) as debugger, ControlPage(debugger.url) as page:
        page.until(lambda m: m["type"] == "init", "the hello")
        T0 = left.target
        for k, message in enumerate(BAD):
            page.send(message)
            page.until(lambda m: m["type"] in ("error", "exported"), f"the answer to bad message {k}")
        assert len(page.errors()) == len(BAD) - 1 and all("\n" not in e for e in page.errors())
        assert "nested too deep" in page.errors()[3] and "index must be a whole number" in page.errors()[9]
        assert page.received[-1]["type"] == "exported" and "give a file name" in page.received[-1]["error"]
        assert debugger._thread.is_alive() and not debugger.paused
        np.testing.assert_array_equal(left.target.homogeneous, T0.homogeneous)  # nothing changed
        steps = debugger.steps
        page.until(lambda m: m["type"] == "state" and m["steps"] > steps + 10, "steps after the bad messages")
        # a good drag still works (after a drag without a grab was refused)
        delta = pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.05]))
        page.send({"type": "grab", "handle": "handle left"})
        page.send({"type": "drag", "handle": "handle left", "delta": delta.homogeneous.ravel().tolist()})
        wait_for(lambda: not np.allclose(left.target.translation, T0.translation), "the drag")
        np.testing.assert_allclose(left.target.homogeneous, (T0 * delta).homogeneous, atol=1e-12)
        # each drag message is the motion since the grab, not since the last message: no compounding
        half = pin.SE3(pin.rpy.rpyToMatrix(0.1, 0.0, 0.0), np.array([0.0, 0.02, 0.0]))
        for motion in (half, half, delta):
            page.send({"type": "drag", "handle": "handle left", "delta": motion.homogeneous.ravel().tolist()})
        page.send({"type": "release"})
        page.send({"type": "pause"})
        page.until(lambda m: m["type"] == "state" and m["paused"], "the pause after the drags")
        np.testing.assert_allclose(left.target.homogeneous, (T0 * delta).homogeneous, atol=1e-12)
        page.send({"type": "resume"})
        # a scrub past either end shows the last / first frame
        page.send({"type": "scrub", "index": 10**30})
        state = page.until(lambda m: m["type"] == "state" and m["scrub"] is not None, "the scrub")
        assert state["scrub"] == len(debugger.recording) - 1 and state["paused"]
        page.send({"type": "scrub", "index": -5})
        assert page.until(lambda m: m["type"] == "state" and m["scrub"] == 0, "the scrub to the start")["paused"]


def test_two_step_presses_while_paused_are_two_steps(dual_arm):
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    twin, _ = load_hierarchy(dual_arm, DEMO_FILE)
    with Debugger(controller, q0, paused=True) as debugger, ControlPage(debugger.url) as page:
        page.until(lambda m: m["type"] == "init", "the hello")
        page.send({"type": "step"})
        page.send({"type": "step"})
        state = page.until(lambda m: m["type"] == "state" and m["steps"] >= 2, "two steps")
        page.send({"type": "pause"})  # asked after both: its state comes after them
        later = page.until(lambda m: m["type"] == "state" and m is not state, "the next state")
        assert state["steps"] == later["steps"] == debugger.steps == 2 and later["paused"]
        np.testing.assert_allclose(later["q"], twin.step(twin.step(q0)), atol=1e-12)


# ---------------------------------------------------------------------------- export
def test_export_writes_a_regular_file_or_answers_why_not(dual_arm, tmp_path):
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    (tmp_path / "folder.npz").mkdir()
    os.mkfifo(tmp_path / "pipe.npz")
    with Debugger(controller, q0, paused=True, new_log=new_run_log, export_dir=tmp_path) as debugger, \
            ControlPage(debugger.url) as page:
        page.until(lambda m: m["type"] == "init", "the hello")

        def export(name):
            page.send({"type": "export", "file": name})
            return page.until(lambda m: m["type"] == "exported", f"the export to {name!r}")

        empty = export("before.npz")  # before the first step: an empty run
        assert empty["path"] == str(tmp_path / "before.npz")
        data = np.load(tmp_path / "before.npz")
        assert data["t"].shape == (0,) and data["q"].shape == (0, dual_arm.nq)
        assert data["target/left"].shape == (0, 4, 4)
        for name, words in [("folder.npz", "is a directory"), ("pipe.npz", "FIFO"), ("x" * 300 + ".npz", "at most 255"),
                            ("a\0b.npz", "NUL"), ("sub/x.npz", "no folder"), ("..", "no folder"), ("", "no file name"),
                            ("run.txt", "must end in .npz or .json")]:
            answer = export(name)
            assert words in answer.get("error", ""), (name, answer)
            assert "\n" not in answer["error"]
        assert (tmp_path / "folder.npz").is_dir() and not (tmp_path / "sub").exists()
        page.send({"type": "step"})
        page.until(lambda m: m["type"] == "state" and m["steps"] == 1, "a step after the failed exports")
        assert export("run.json")["path"] == str(tmp_path / "run.json")
        assert len(json.loads((tmp_path / "run.json").read_text())["t"]) == 1


def test_a_record_file_is_never_waited_on(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    log = new_run_log(["a"], 0.01, [])
    done: list = []

    def save():  # in a thread: a blocked open would leave it hanging, not the test
        try:
            log.save(tmp_path / "pipe.json")
        except ReljacError as exc:
            done.append(str(exc))

    thread = threading.Thread(target=save, daemon=True)
    thread.start()
    thread.join(30)
    assert done and "FIFO" in done[0]


# ---------------------------------------------------------------------------- scrub, drag, resume
def test_a_drag_made_after_scrubbing_back_is_kept_on_resume(dual_arm):
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    left = controller.levels[1][0]
    T_start = left.target
    with Debugger(controller, q0, paused=True) as debugger, ControlPage(debugger.url) as page:
        page.until(lambda m: m["type"] == "init", "the hello")
        page.send({"type": "step"})  # a step, a first drag, two steps
        page.send({"type": "grab", "handle": "handle left"})
        away = pin.SE3(np.eye(3), np.array([0.0, 0.1, 0.0]))
        page.send({"type": "drag", "handle": "handle left", "delta": away.homogeneous.ravel().tolist()})
        page.send({"type": "release"})
        for _ in range(2):
            page.send({"type": "step"})
        page.until(lambda m: m["type"] == "state" and m["steps"] == 3, "three steps")
        page.send({"type": "scrub", "index": 0})  # back before the drag: the target of frame 0
        page.until(lambda m: m["type"] == "state" and m["scrub"] == 0, "the scrub")
        np.testing.assert_allclose(left.target.homogeneous, T_start.homogeneous)
        handle = debugger.handles["handle left"][1]
        np.testing.assert_allclose(handle.T_ah.homogeneous, T_start.homogeneous)  # the handle shows it
        up = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.3), np.array([0.0, 0.0, 0.04]))
        page.send({"type": "grab", "handle": "handle left"})
        page.send({"type": "drag", "handle": "handle left", "delta": up.homogeneous.ravel().tolist()})
        page.send({"type": "release"})
        page.send({"type": "resume"})
        page.until(lambda m: m["type"] == "state" and m["scrub"] is None and not m["paused"] and m["steps"] > 3,
                   "the run from frame 0")
        page.send({"type": "pause"})
        page.until(lambda m: m["type"] == "state" and m["paused"], "the pause")
        dragged = T_start * up
        np.testing.assert_allclose(left.target.homogeneous, dragged.homogeneous, atol=1e-12)
        frames = list(debugger.recording.frames)
        assert frames[0].t == 0.0 and len(frames) >= 1
        for frame in frames:  # every step since the resume went for the dragged target
            np.testing.assert_allclose(frame.targets["left"].homogeneous, dragged.homogeneous, atol=1e-12)


# ---------------------------------------------------------------------------- arguments, memory
@pytest.mark.parametrize("kwargs, words", [
    ({"port": 70000}, "port must be an integer in 0..65535"), ({"host": None}, "host must be"),
    ({"host": ""}, "host must be"), ({"history": 1e308}, r"history must be a number of seconds in \(0, 3600\]"),
    ({"history": float("nan")}, "history must be"), ({"history": 0}, "history must be"),
    ({"history": "30"}, "history must be"), ({"export_dir": 5}, "export_dir must be a folder's path"),
])
def test_bad_debugger_arguments_are_one_line_errors(dual_arm, kwargs, words):
    with pytest.raises(ConfigurationError, match=words) as info:
        Debugger(None, robot=dual_arm, **kwargs)
    assert "\n" not in str(info.value)


def test_a_long_history_at_a_short_dt_is_bounded_and_said(dual_arm, capsys):
    from reljac.viz.debug_state import MAX_FRAMES, PLOT_RATE

    q0 = dual_arm.neutral()
    controller = Controller(dual_arm, [[PostureTask(dual_arm)]], dt=1e-3)
    with Debugger(controller, q0, history=3600) as debugger:
        assert debugger.recording.frames.maxlen == MAX_FRAMES and debugger.recording.bounded
        err = capsys.readouterr().err
        assert f"at most {MAX_FRAMES} frames" in err and "not the 3600 s asked" in err
        with ControlPage(debugger.url, ack=False) as page:  # a page that stops acknowledging
            first = page.until(lambda m: m["type"] == "state", "the first state")
            steps = debugger.steps
            wait_for(lambda: debugger.steps > steps + 300, "steps while the page is busy")
            page.send({"type": "ack"})
            state = page.until(lambda m: m["type"] == "state", "the next state")
            if state["steps"] <= steps:  # a state held for the ack (made before the page went busy) came first
                page.send({"type": "ack"})
                state = page.until(lambda m: m["type"] == "state", "the state made after the ack")
            assert state["steps"] > steps
        t = [s[0] for s in state["samples"]]
        # at most PLOT_RATE samples per second of the run held for it, not one per step
        assert state["steps"] - first["steps"] > 300
        assert len(t) <= (state["t"] - first["t"]) * PLOT_RATE + 2
        assert np.all(np.diff(t) >= 1 / PLOT_RATE - 1e-12)


def test_the_recording_counts_the_frames_it_drops():
    from reljac.viz.debug_state import Frame, Recording

    recording = Recording(seconds=1e308, dt=1e-4, max_frames=5)
    assert recording.frames.maxlen == 5 and recording.bounded and recording.seconds == pytest.approx(5e-4)
    for k in range(8):
        recording.add(Frame(k * 1e-4, np.zeros(1), {}, {}))
    assert recording.dropped == 3 and [f.t for f in recording.frames] == pytest.approx([3e-4, 4e-4, 5e-4, 6e-4, 7e-4])
    recording.clear()
    assert recording.dropped == 0 and not Recording(seconds=0.05, dt=0.01, max_frames=5).bounded


def test_plot_samples_held_for_a_page_keep_the_last_seconds_thinned():
    from reljac.viz.debug_state import PLOT_RATE, PLOT_SECONDS, merge_samples

    samples = [[k * 1e-3, [1.0], None] for k in range(30_000)]  # 30 s at 1 kHz
    held = merge_samples([], samples[:10_000])
    held = merge_samples(held, samples[10_000:])
    t = np.array([s[0] for s in held])
    assert len(t) <= PLOT_SECONDS * PLOT_RATE + 1
    assert t[-1] >= 30.0 - 1 / PLOT_RATE and t[-1] - PLOT_SECONDS <= t[0] <= t[-1] - PLOT_SECONDS + 1 / PLOT_RATE
    assert np.all(np.diff(t) >= 1 / PLOT_RATE - 1e-12)
    assert merge_samples(held, [[0.5, [1.0], None]], restart=True) == [[0.5, [1.0], None]]
    assert merge_samples(held, [[0.5, [1.0], None]]) == [[0.5, [1.0], None]]  # time went back


# ---------------------------------------------------------------------------- mimic joints
def test_an_export_on_a_robot_with_mimic_joints_names_each_column(tmp_path):
    hand = Robot.bundled("hand")
    assert len(hand.model.names) - 1 > hand.nq  # mimic followers: joints without a column
    q0 = hand.reference_configuration()
    tip = FrameTask("index_tip", name="index")
    tip.set_target(Kinematics(hand, q0).placement("index_tip") * pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.01])))
    controller = Controller(hand, [[tip], [PostureTask(hand, name="posture")]], dt=0.01)
    with Debugger(controller, q0, paused=True, new_log=new_run_log, export_dir=tmp_path) as debugger:
        for k in range(1, 4):
            debugger.step()
            wait_for(lambda: debugger.steps == k, "a step")
        path = debugger.export(tmp_path / "hand.npz")
    data = np.load(path)
    names = list(data["joint_names"])
    assert data["q"].shape == (3, hand.nq) and len(names) == hand.nq
    for row in data["q"]:  # each column is the value of the joint it names
        values = hand.joint_values(row)
        assert [values[name] for name in names] == pytest.approx(row.tolist(), abs=0)
    # the posture task's own error (|q - q0| on this hand's revolute joints), not NaN position / orientation
    assert "position_error/posture" not in data and "orientation_error/posture" not in data
    np.testing.assert_allclose(data["error/posture"], np.linalg.norm(data["q"] - q0, axis=1), atol=1e-12)
    assert data["error/posture"][0] == 0.0 and data["error/posture"][2] > 0.0
    assert np.all(np.isfinite(data["position_error/index"]))

"""reljac debug without a browser: the hierarchy file, the panel, the recording, the sliders,
the transform relay, and the debugger's requests (the browser tests are test_debug_browser.py)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import wait_for

from reljac.apps.cli import main
from reljac.apps.debug import new_run_log
from reljac.apps.hierarchy_file import DEMO_FILE, load_hierarchy
from reljac.exceptions import ConfigurationError, FrameNotFound, JointNotFound
from reljac.ik import CollisionAvoidance, Controller, FrameTask, PostureTask, RelativeFrameTask, RelativePositionTask
from reljac.relative import Kinematics
from reljac.viz.debug_server import TransformRelay
from reljac.viz.debug_sliders import joint_sliders, q_from_slider
from reljac.viz.debug_state import Frame, Recording, collision_panel, levels_panel, set_handle_target
from reljac.viz.debugger import Debugger

# Both arms' tools meet in front of the torso (the demo's start): link pairs within 5 cm.
MEETING = {"torso_yaw": 0.0, "left_joint1": 0.8808, "left_joint2": 0.9651, "left_joint3": -0.4571,
           "left_joint4": -2.0366, "left_joint5": 1.1162, "left_joint6": 2.7259, "left_joint7": 1.8842,
           "right_joint1": -1.2333, "right_joint2": 1.2035, "right_joint3": 0.8092, "right_joint4": -2.0059,
           "right_joint5": -1.4909, "right_joint6": 2.3970, "right_joint7": -0.1965}


# ---------------------------------------------------------------------------- the hierarchy file
def test_the_demo_file_is_the_demos_hierarchy_with_targets_at_the_start(dual_arm):
    controller, q = load_hierarchy(dual_arm, DEMO_FILE)
    np.testing.assert_allclose(q, dual_arm.q_from_joint_values(MEETING))
    assert [[t.name for t in level] for level in controller.levels] == [["relative"], ["left"], ["posture"]]
    relative, left, posture = (level[0] for level in controller.levels)
    assert isinstance(relative, RelativeFrameTask) and isinstance(left, FrameTask) and isinstance(posture, PostureTask)
    assert (relative.gain, left.gain, posture.gain, controller.dt) == (15.0, 15.0, 2.0, 0.01)
    kin = Kinematics(dual_arm, q)
    np.testing.assert_allclose(relative.target.homogeneous, kin.relative_placement("left_tool", "right_tool").homogeneous)
    np.testing.assert_allclose(left.target.homogeneous, kin.placement("left_tool").homogeneous)
    np.testing.assert_allclose(posture.target, q)
    (avoidance,) = [c for c in controller.limits if isinstance(c, CollisionAvoidance)]
    assert avoidance.min_distance == 0.01


def test_a_hierarchy_file_sets_levels_targets_and_the_start(dual_arm, tmp_path):
    path = tmp_path / "h.toml"
    path.write_text('dt = 0.02\n[start]\nleft_joint4 = -1.0\n'
                    '[[task]]\nlevel = 3\ntype = "position"\nframe_a = "left_tool"\nframe_b = "right_tool"\n'
                    'position = [0.0, 0.1, 0.2]\n'
                    '[[task]]\nlevel = 1\ntype = "frame"\nframe = "right_tool"\nrpy = [0.1, 0.2, 0.3]\nweight = 2.0\n')
    controller, q = load_hierarchy(dual_arm, path)
    assert controller.dt == 0.02
    assert dual_arm.joint_values(q)["left_joint4"] == pytest.approx(-1.0)
    (frame,), (position,) = controller.levels  # level numbers only order the levels
    assert isinstance(frame, FrameTask) and isinstance(position, RelativePositionTask)
    np.testing.assert_allclose(position.target, [0.0, 0.1, 0.2])
    np.testing.assert_allclose(frame.target.rotation, pin.rpy.rpyToMatrix(0.1, 0.2, 0.3))
    np.testing.assert_allclose(frame.target.translation, Kinematics(dual_arm, q).placement("right_tool").translation)
    assert controller.limits and not any(isinstance(c, CollisionAvoidance) for c in controller.limits)
    # a configuration given apart replaces [start], and the default targets follow it
    q1 = dual_arm.neutral()
    controller, q = load_hierarchy(dual_arm, path, q=q1)
    np.testing.assert_array_equal(q, q1)
    np.testing.assert_allclose(controller.levels[0][0].target.translation,
                               Kinematics(dual_arm, q1).placement("right_tool").translation)


@pytest.mark.parametrize("text, error, words", [
    ('[[task]]\ntype = "jump"\n', ConfigurationError, "type must be one of relative, frame"),
    ('[[task]]\ntype = "frame"\nfrme = "x"\n', ConfigurationError, "unknown key 'frme'; did you mean 'frame'"),
    ('[[task]]\ntype = "frame"\n', ConfigurationError, 'needs frame = "FRAME NAME"'),
    ('[[task]]\ntype = "frame"\nframe = "left_tol"\n', FrameNotFound, "left_tool"),
    ('[[task]]\ntype = "frame"\nframe = "left_tool"\nlevel = -1\n', ConfigurationError, "level must be an integer >= 0"),
    ('[[task]]\ntype = "frame"\nframe = "left_tool"\nposition = [1, 2]\n', ConfigurationError, "list of 3 finite numbers"),
    ("dt = 1.0\n", ConfigurationError, "dt must be a number of seconds in [1e-4, 0.1]"),
    ("dt = \n", ConfigurationError, "is not valid TOML"),
    ("[start]\nleft_jont1 = 0.1\n", JointNotFound, "left_jont1"),
    ("[collision]\nmin_distance = -1\n", ConfigurationError, "min_distance"),
    ('[[task]]\ntype = "posture"\n[collision]\nmindist = 1\n', ConfigurationError, "unknown key 'mindist'"),
])
def test_mistakes_in_a_hierarchy_file_are_one_line_errors(dual_arm, tmp_path, text, error, words):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(error) as info:
        load_hierarchy(dual_arm, path)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_file_without_tasks_means_joint_sliders(dual_arm, tmp_path):
    path = tmp_path / "empty.toml"
    path.write_text("[start]\nleft_joint1 = 0.5\n")
    controller, q = load_hierarchy(dual_arm, path)
    assert controller is None and dual_arm.joint_values(q)["left_joint1"] == pytest.approx(0.5)


def test_the_cli_rejects_a_bad_file_in_one_line(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('[[task]]\ntype = "jump"\n')
    assert main(["debug", "dual_arm", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reljac: error:") and "type must be one of" in err and err.count("\n") == 1
    assert main(["debug", "dual_arm", str(tmp_path / "missing.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["debug", "dual_arm", "--history", "0", "--no-hold"]) == 2
    assert "history" in capsys.readouterr().err


@pytest.mark.slow
def test_the_cli_serves_the_demo_hierarchy_on_loopback(capsys):
    assert main(["debug", "dual_arm", "--no-hold", "--paused"]) == 0
    out = capsys.readouterr().out
    # one URL, the page's, and the words say to open it (not the meshcat viewer's own page)
    assert out.count("http://") == 1 and "reljac debug page of robot 'dual_arm': open http://127.0.0.1:" in out
    assert "/static/" not in out


# ---------------------------------------------------------------------------- panel and recording
def test_the_panel_reports_the_controllers_levels_and_the_nearest_pairs(dual_arm):
    controller, q = load_hierarchy(dual_arm, DEMO_FILE)
    avoidance = CollisionAvoidance(dual_arm, influence_distance=0.3)  # pairs within reach at q
    controller = Controller(dual_arm, controller.levels, dt=0.01, constraints=[avoidance])
    controller.step(q)
    errors = controller.errors()
    panel = levels_panel(controller, errors)
    for level, report in zip(panel, controller.last_reports, strict=True):
        assert (level["scale"], level["met"]) == (report.scale, report.met)
        assert level["saturated_joints"] == report.saturated_joints
        assert [t["name"] for t in level["tasks"]] == report.tasks
    assert panel[1]["tasks"][0]["errors"] == errors["left"]
    # the posture level is a regularization (not expected to be met); the others are not
    assert [level["posture"] for level in panel] == [False, False, True]
    pairs = collision_panel([avoidance], count=50)[0]
    rows = avoidance.model.distances(q, within=avoidance.influence_distance, jacobians=False)
    expected = {}
    for (a, b), d in zip(rows.pairs, rows.distance, strict=True):
        expected[f"{a}/{b}"] = min(float(d), expected.get(f"{a}/{b}", np.inf))
    assert len(pairs) == len(expected) > 0
    assert {p["pair"]: p["distance"] for p in pairs} == pytest.approx(expected)
    assert [p["distance"] for p in pairs] == sorted(p["distance"] for p in pairs)
    assert pairs[0]["distance"] == pytest.approx(avoidance.minimum_distance)


def test_the_recording_keeps_the_last_seconds_and_writes_the_record_format(dual_arm, tmp_path):
    task = FrameTask("left_tool", name="left")
    recording = Recording(seconds=0.05, dt=0.01)
    qs = [dual_arm.random_configuration(k) for k in range(8)]
    for k, q in enumerate(qs):
        target = pin.SE3(np.eye(3), np.array([k, 0.0, 0.0]))
        recording.add(Frame(0.01 * k, q, {"left": target}, {"left": {"position": k, "orientation": 0.0}}))
    assert len(recording) == 5  # 0.05 s at 0.01 s per frame
    path = recording.write(new_run_log(list(dual_arm.model.names[1:]), 0.01, [task]), [task]).save(tmp_path / "r.npz")
    data = np.load(path)
    np.testing.assert_allclose(data["t"], 0.01 * np.arange(3, 8))
    np.testing.assert_array_equal(data["q"], qs[3:])
    np.testing.assert_array_equal(data["target/left"][:, 0, 3], np.arange(3, 8))
    np.testing.assert_array_equal(data["position_error/left"], np.arange(3, 8))
    assert recording.truncate(1).t == pytest.approx(0.04) and len(recording) == 2


def test_a_position_task_takes_only_the_handles_translation():
    task = RelativePositionTask("left_tool", "right_tool")
    T = pin.SE3(pin.rpy.rpyToMatrix(0.3, 0.2, 0.1), np.array([0.1, 0.2, 0.3]))
    shown = set_handle_target(task, T)
    np.testing.assert_array_equal(task.target, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(shown.rotation, np.eye(3))


# ---------------------------------------------------------------------------- sliders
def test_sliders_take_the_robots_names_and_limits_and_show_locked_joints(dual_arm):
    robot = dual_arm.locked({"left_joint1": 0.25})
    sliders = joint_sliders(robot, robot.neutral())
    model = robot.model
    free = [s for s in sliders if not s["locked"]]
    assert [s["name"] for s in free] == list(model.names[1:])
    for s in free:
        iq = model.joints[model.getJointId(s["name"])].idx_q
        assert (s["lower"], s["upper"]) == (model.lowerPositionLimit[iq], model.upperPositionLimit[iq])
    assert [s for s in sliders if s["locked"]] == [
        {"name": "left_joint1", "lower": 0.25, "upper": 0.25, "value": 0.25, "locked": True}]
    q = q_from_slider(robot, robot.neutral(), "left_joint2", 100.0)  # clipped to the limit
    iq = model.joints[model.getJointId("left_joint2")].idx_q
    assert q[iq] == model.upperPositionLimit[iq]
    np.testing.assert_array_equal(np.delete(q, iq), np.delete(robot.neutral(), iq))
    with pytest.raises(JointNotFound):
        q_from_slider(robot, robot.neutral(), "left_joint1", 0.0)
    with pytest.raises(ConfigurationError, match="finite"):
        q_from_slider(robot, robot.neutral(), "left_joint2", float("nan"))
    with pytest.raises(ConfigurationError, match="finite"):  # (an OverflowError: "a reljac bug" on the page)
        q_from_slider(robot, robot.neutral(), "left_joint2", 10**400)
    for text in ("0.5", True):  # accepted before, and the joint moved
        with pytest.raises(ConfigurationError, match="must be a number"):
            q_from_slider(robot, robot.neutral(), "left_joint2", text)


# ---------------------------------------------------------------------------- the relay
class _Window:
    def __init__(self):
        self.sent = []

    def send(self, command):
        self.sent.append(command.lower()["type"])


class _Server:
    def __init__(self, log):
        self.log = log

    def broadcast(self, message):
        self.log.append(("page", [path for path, _ in message["items"]]))


def test_the_relay_batches_transforms_and_keeps_other_commands_in_order():
    import meshcat

    log: list = []
    window = _Window()
    relay = TransformRelay(window, _Server(log))
    vis = meshcat.Visualizer(window=relay)
    T = np.eye(4)
    T[0, 3] = 0.5
    vis["a"].set_transform(T)
    vis["b"]["c"].set_transform(np.eye(4))
    vis["a"].set_transform(2 * np.eye(4))  # the last one of a node counts
    assert window.sent == [] and log == []
    vis["d"].set_property("visible", False)  # the transforms go first
    assert log == [("page", ["/meshcat/a", "/meshcat/b/c"])] and window.sent == ["set_property"]
    assert relay.latest["/meshcat/a"] == (2 * np.eye(4)).T.ravel().tolist()
    vis["b"].delete()
    assert list(relay.latest) == ["/meshcat/a"] and window.sent[-1] == "delete"
    assert relay.flush() == 0


def test_the_relay_sends_a_transform_only_when_it_changed():
    import meshcat

    log: list = []
    relay = TransformRelay(_Window(), _Server(log))
    vis = meshcat.Visualizer(window=relay)
    T = np.eye(4)
    T[:3, 3] = [0.1, 0.2, 0.3]
    vis["a"].set_transform(T)
    vis["b"].set_transform(np.eye(4))
    assert relay.flush() == 2
    vis["a"].set_transform(T.copy())  # the same pose again: nothing to send
    vis["b"].set_transform(np.eye(4))
    assert relay.flush() == 0 and len(log) == 1
    T[0, 3] += 1e-12  # any change is sent
    vis["a"].set_transform(T)
    vis["b"].set_transform(np.eye(4))
    assert relay.flush() == 1 and log[-1] == ("page", ["/meshcat/a"])
    vis["b"].delete()  # a node drawn again after a delete gets its transform again
    vis["b"].set_transform(np.eye(4))
    assert relay.flush() == 1 and log[-1] == ("page", ["/meshcat/b"])


class _Page:
    """What a page holds: every node's transform, from the relay's snapshot then its messages."""

    def __init__(self, relay: TransformRelay):
        self.nodes = dict(relay.everything()["items"])
        self.issued: list = []  # (path, matrix) set by the viewer since the last message
        self.messages: list[tuple[list, list]] = []  # (issued, items) per message

    def broadcast(self, message):
        self.messages.append((self.issued, message["items"]))
        self.issued = []


@pytest.mark.slow
def test_only_the_transforms_that_changed_are_sent_and_the_page_ends_as_a_full_resend_puts_it(dual_arm):
    from meshcat.commands import SetTransform

    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    with Debugger(controller, q0, paused=True) as debugger:
        wait_for(lambda: debugger.state().get("type") == "state", "the first update")
        relay = debugger.relay
        page, send = _Page(relay), relay.send
        full = dict(page.nodes)  # every transform the viewer set: what resending all of them gives

        def spy(command):  # the viewer's commands on their way to the relay
            if isinstance(command, SetTransform):
                path = command.path.lower()
                full[path] = np.asarray(command.matrix).T.ravel().tolist()
                page.issued.append((path, full[path]))
            send(command)

        relay.send, relay.server = spy, page
        for k in range(1, 4):  # steps: the arms move, the rest of the robot does not
            debugger.step()
            wait_for(lambda: debugger.state()["steps"] == k, "a step")
        debugger._requests.put({"type": "grab", "handle": "handle left"})
        debugger._requests.put({"type": "drag", "handle": "handle left",
                                "delta": pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.05])).homogeneous.ravel().tolist()})
        drawn = debugger.state()["targets"]["handle left"]
        wait_for(lambda: debugger.state()["targets"]["handle left"] != drawn, "the handle drawn where it was dragged")
        debugger.reset()
        reset = wait_for(lambda: (s := debugger.state())["t"] == 0.0 and s, "the reset")
        np.testing.assert_array_equal(reset["q"], q0)
        messages = len(page.messages)
        debugger.pause()  # drawn again with nothing moved: no transforms at all
        wait_for(lambda: debugger.state() is not reset, "the pause")
        assert len(page.messages) == messages
    assert len(page.messages) == 5  # three steps, the drag, the reset
    for issued, items in page.messages:
        sent = dict(items)
        changed = {path: matrix for path, matrix in issued if page.nodes.get(path) != matrix}
        assert sent == changed  # what moved, all of it, and nothing else
        assert 0 < len(sent) < len(issued)  # some nodes did not move
        page.nodes.update(sent)
    assert page.nodes == full  # the page as if every transform had been sent every time
    assert len(full) > 20


@pytest.mark.slow
def test_the_debugger_makes_no_update_while_its_page_is_busy_with_the_last(dual_arm):
    import asyncio
    import json

    import tornado.websocket

    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)

    async def page(debugger):
        ws = await tornado.websocket.websocket_connect(debugger.url.replace("http", "ws") + "control")
        kinds = []
        while "state" not in kinds:  # the hello (init, every transform), then the first update
            kinds.append(json.loads(await ws.read_message())["type"])
        assert kinds[0] == "init"
        await asyncio.sleep(0.5)  # busy: no ack
        shown, steps = debugger.state()["steps"], debugger.steps
        await asyncio.sleep(0.5)
        held = (debugger.state()["steps"], debugger.steps)

        async def next_state() -> dict:
            ws.write_message(json.dumps({"type": "ack"}))
            message = json.loads(await ws.read_message())
            while message["type"] != "state":
                message = json.loads(await ws.read_message())
            return message

        # updates made before the page opened (the server's thread behind, under load) are merged
        # into one, held for the page's ack: late by that one update, then the one made after the ack
        message = await next_state()
        if message["steps"] == shown:
            message = await next_state()
        ws.close()
        return shown, steps, held, message

    with Debugger(controller, q0) as debugger:
        wait_for(lambda: debugger.state().get("steps", 0) > 5, "updates without a page")  # none open: updates go on
        shown, steps, (shown_later, steps_later), message = asyncio.run(page(debugger))
        assert steps_later > steps + 10  # the controller kept stepping ...
        assert shown_later == shown  # ... but made no update the page could not take
        assert message["steps"] >= steps_later  # acknowledged: the next one, made then
        wait_for(lambda: debugger.state()["steps"] > message["steps"], "updates once the page is gone")


# ---------------------------------------------------------------------------- the debugger's requests
@pytest.mark.slow
def test_a_step_while_paused_is_one_controller_step_and_a_drag_retargets(dual_arm):
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    twin, _ = load_hierarchy(dual_arm, DEMO_FILE)
    with Debugger(controller, q0, paused=True) as debugger:
        debugger.step()
        state = wait_for(lambda: (s := debugger.state()).get("steps") == 1 and s, "one step")
        np.testing.assert_allclose(state["q"], twin.step(q0), atol=1e-12)
        np.testing.assert_array_equal(debugger.recording.frames[0].q, q0)
        recorded, expected = debugger.recording.frames[0].errors, twin.errors(q0)  # the controller's own
        assert recorded.keys() == expected.keys()
        for name, norms in expected.items():
            assert recorded[name] == pytest.approx(norms, abs=1e-12)
        left = controller.levels[1][0]
        T0 = left.target
        delta = pin.SE3(pin.rpy.rpyToMatrix(0.0, 0.0, 0.2), np.array([0.05, 0.0, 0.0]))
        debugger._requests.put({"type": "grab", "handle": "handle left"})
        debugger._requests.put({"type": "drag", "handle": "handle left", "delta": delta.homogeneous.ravel().tolist()})
        wait_for(lambda: not np.allclose(left.target.translation, T0.translation), "the drag")
        np.testing.assert_allclose(left.target.homogeneous, (T0 * delta).homogeneous, atol=1e-12)
        debugger.reset()
        wait_for(lambda: debugger.state().get("steps") == 1 and len(debugger.recording) == 0, "the reset")
        np.testing.assert_allclose(left.target.homogeneous, T0.homogeneous)
        np.testing.assert_allclose(debugger.state()["q"], q0, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_scrubbing_pauses_and_resuming_goes_on_from_the_frame_shown(dual_arm):
    controller, q0 = load_hierarchy(dual_arm, DEMO_FILE)
    with Debugger(controller, q0) as debugger:
        wait_for(lambda: debugger.state().get("steps", 0) > 5, "steps")
        debugger._requests.put({"type": "scrub", "index": 2})
        state = wait_for(lambda: (s := debugger.state())["scrub"] == 2 and s, "the scrub")
        assert state["paused"]
        frame = debugger.recording.frames[2]
        np.testing.assert_array_equal(state["q"], frame.q)
        debugger.resume()  # the run restarts at frame 2: its step is taken again, later frames dropped
        wait_for(lambda: debugger.state()["scrub"] is None and len(debugger.recording) >= 4, "the run")
        debugger.pause()
        frames = list(debugger.recording.frames)
        assert [f.t for f in frames[:3]] == pytest.approx([0.0, 0.01, 0.02])
        np.testing.assert_array_equal(frames[2].q, frame.q)
        np.testing.assert_allclose(np.diff([f.t for f in frames]), 0.01)

"""Debug a task hierarchy live in the browser: drag targets, watch every level, scrub the run.

:func:`debug` (or :class:`Debugger`) opens a page (:mod:`reljac.viz.debug_server`) showing the
:class:`~reljac.viz.Viewer`'s scene, with

* a 6-DoF drag handle on every frame / relative task's target (a relative target's handle is
  drawn in, and moves with, frame a); dragging retargets the task while the controller steps in
  a background thread, in real time;
* joint sliders instead when there is no controller (names and limits from the robot, locked
  joints shown locked);
* per level: its tasks and their errors, the scale, met, the joints and constraints (collision
  pairs by link names) that saturated it, its inequality rows (a task with bounds: active or
  slack, and the distance of its error to the bound; the bounds' box drawn at the task's
  handle, moving with it); the nearest collision pairs and their distances;
  saturated joints marked red on the robot, near pairs drawn by the collision overlay;
* plots of the levels' errors and of the smallest collision distance;
* pause, single step, reset; a timeline over the last `history` seconds (configurations and
  panels on record) to scrub back through; export of the recording.

One thread (the debugger's) owns the controller, the viewer and the recording; the page's
requests and the methods below reach it through a queue, so they are safe from any thread.
"""

from __future__ import annotations

import math
import os
import queue
import sys
import threading
import time
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from numpy.typing import ArrayLike

from ..exceptions import ConfigurationError, ReljacError
from ..files import shown
from ..ik import Controller
from ..robot import Robot, as_robot
from ..validation import as_float
from .debug_access import check_address
from .debug_overlays import HANDLE_PARTS
from .debug_requests import handle_request
from .debug_scene import DebugScene
from .debug_server import LOOPBACK, DebugServer, TransformRelay
from .debug_sliders import joint_sliders
from .debug_state import (
    MAX_HISTORY,
    PLOT_RATE,
    PLOT_SECONDS,
    Frame,
    Recording,
    add_sample,
    collision_limits,
    collision_panel,
    levels_panel,
    targets_of,
)
from .meshes import scene_objects
from .request_target import RunState
from .session import page_iframe
from .viewer import Viewer

MAX_FPS = 60.0  # [1/s] displays of the scene and states sent to the page, at most
PAGE_POLL = 0.005  # [s] between looks at whether a busy page took the last update
STEP_BUDGET = 0.5 / MAX_FPS  # [s] of catching up on the control clock between two updates of the page
REQUESTS_PER_PASS = 256  # requests carried out between two looks at the control clock, at most


class Debugger:
    """A live debug page of a controller (see the module docstring); :func:`debug` starts one.

    Args:
        controller: the hierarchy to debug, or None for joint sliders (then give `robot`).
        q: first configuration (nq,) (default: the robot's reference configuration).
        robot: the robot when there is no controller.
        history: [s] of the run kept for the timeline and export, in (0, 3600]; the recording
            keeps at most ``debug_state.MAX_FRAMES`` frames (memory), and says so when that
            is fewer than `history` asks (a line on stderr, and on the page).
        host: address the page is served on (default loopback: whoever reaches the page can
            move the robot; the page answers only requests naming this host or loopback);
            port: its port, 0..65535 (0: a free one).
        paused: start paused.
        new_log: ``new_log(joint_names, dt, tasks)`` returns an object with ``record(t, q,
            active_tasks, norms)`` and ``save(path)`` (``reljac.apps.recording.RunLog`` fits):
            what the page's Export writes; None: no export.
        export_dir: folder Export writes into (a file name from the page, never a path).
        zmq_url: meshcat server to join (default: start one); open: open a browser tab.
        meshes: the robot's meshes, "simplified" (default) or "full" (as :class:`Viewer`'s);
            the page says what is still loading.

    Attributes:
        url: the page. viewer: the :class:`~reljac.viz.Viewer`; scene: what is drawn over the robot
        (:class:`~reljac.viz.debug_scene.DebugScene`), handles: its drag handles. steps: control steps taken.
        updates_per_second: scene updates sent in the last second. run_state: what the page's
        requests change between two states sent to it (:class:`~reljac.viz.request_target.RunState`);
        lock: held while the recording or the last state changes (other threads read them).

    Raises:
        ConfigurationError: a controller, robot, q, history, host or port that is not one.
    """

    def __init__(self, controller: Controller | None, q: ArrayLike | None = None, *, robot: Robot | None = None,
                 history: float = 30.0, host: str = LOOPBACK, port: int = 0, paused: bool = False,
                 new_log: Callable[[list[str], float, list], Any] | None = None,
                 export_dir: str | Path = ".", zmq_url: str | None = None, open: bool = False,
                 meshes: str = "simplified") -> None:
        if controller is not None and not isinstance(controller, Controller):
            raise ConfigurationError(
                f"controller must be a reljac.ik.Controller or None, got {type(controller).__name__}")
        if controller is None and robot is None:
            raise ConfigurationError("give a controller, or a robot for joint sliders")
        self.robot = robot = controller.robot if controller is not None else as_robot(robot)
        self.controller = controller
        self.dt = controller.dt if controller is not None else 1.0 / 30.0
        history = as_float(history, "history", minimum=0.0, strict=True, error=ConfigurationError,
                           valid=f"a number of seconds in (0, {MAX_HISTORY:g}]")
        if history > MAX_HISTORY:
            raise ConfigurationError(f"history must be a number of seconds in (0, {MAX_HISTORY:g}], got {history:g}")
        host, port = check_address(host, port)
        self.q0 = robot.reference_configuration() if q is None else robot.validate_q(q)
        self.q, self.t, self.steps = self.q0.copy(), 0.0, 0
        self.tasks = [] if controller is None else controller.tasks
        self.targets0 = targets_of(self.tasks)
        self.collision = [] if controller is None else collision_limits(controller)
        self.recording, self.history = Recording(history, self.dt), history
        if self.recording.bounded:
            print(f"reljac debug: the recording keeps the last {self.recording.seconds:.3g} s "
                  f"(at most {self.recording.frames.maxlen} frames, for memory), not the {history:g} s asked",
                  file=sys.stderr, flush=True)
        if not isinstance(export_dir, (str, os.PathLike)):
            raise ConfigurationError(f"export_dir must be a folder's path, got {type(export_dir).__name__}")
        self.new_log, self.export_dir = new_log, Path(export_dir)
        self.paused = bool(paused)
        self.updates_per_second = 0.0
        self._requests: queue.Queue[dict] = queue.Queue()
        self.run_state = RunState()  # what the page's requests change between two states sent to it
        self._state: dict = {}
        self._stop = threading.Event()
        self.lock = threading.Lock()
        self.viewer = Viewer(robot, q=self.q0, zmq_url=zmq_url, announce=False, meshes=meshes)
        self.server: DebugServer | None = None
        try:
            # live transforms go to the page in one message per update (see TransformRelay)
            self.relay = TransformRelay(self.viewer.viewer.window)
            self.viewer.viewer.window = self.relay
            self.scene = DebugScene(self.viewer, robot, self.tasks, self.collision, self.q0)
            self.handles = self.scene.handles
            self.targets0 = targets_of(self.tasks)  # (with the targets the scene gave tasks without one)
            self.server = DebugServer(self.viewer.url, self._requests.put, self._hello, host=host, port=port)
            self.relay.server = self.server
        except BaseException:
            self.close()
            raise
        self.url = self.server.url
        self._thread = threading.Thread(target=self._run, name="reljac-debugger", daemon=True)
        self._thread.start()
        print(f"reljac debug page of robot '{robot.name}': open {self.url} in a browser "
              "(the page to use: scene, handles and panel)", flush=True)
        if open:
            webbrowser.open(self.url, new=2)

    # ------------------------------------------------------------------ the page
    def _hello(self) -> list[dict]:
        """What a page needs first: the handles, the sliders, the levels; the nodes' transforms."""
        paths = {name: handle.node.path.lower() for name, (_, handle) in self.handles.items()}
        recording = self.recording
        return [{"type": "init", "robot": self.robot.name, "dt": self.dt, "history": recording.frames.maxlen,
                 "history_seconds": recording.seconds, "history_bounded": recording.bounded,
                 "history_asked": self.history,
                 "plot": {"seconds": PLOT_SECONDS, "rate": PLOT_RATE},
                "handles": [{"name": name, "path": paths[name], "size": handle.size,
                             "kind": "pose" if getattr(task, "size", 6) == 6 else "position", "task": task.name}
                            for name, (task, handle) in self.handles.items()],
                "parts": HANDLE_PARTS, "scene": scene_objects(self.viewer),
                "levels": [[task.name for task in level] for level in self.controller.levels]
                if self.controller else [],
                "sliders": joint_sliders(self.robot, self.q) if self.controller is None else [],
                "state": self.state()}, self.relay.everything()]

    # ------------------------------------------------------------------ requests (any thread)
    def pause(self) -> None:
        self._requests.put({"type": "pause"})

    def resume(self) -> None:
        self._requests.put({"type": "resume"})

    def step(self) -> None:
        """One control step (also when paused)."""
        self._requests.put({"type": "step"})

    def reset(self) -> None:
        """Back to the first configuration and targets; the recording is cleared."""
        self._requests.put({"type": "reset"})

    def state(self) -> dict:
        """The last state made for the page (a copy; made no faster than the pages take them)."""
        with self.lock:
            return dict(self._state)

    def export(self, path: str | Path) -> Path:
        """Write the recording to `path` (see `new_log`); returns the path written."""
        if self.new_log is None:
            raise ReljacError("this debugger has no log writer (new_log): nothing to export with")
        with self.lock:
            log = self.new_log(self.robot.q_names, self.dt, self.tasks)
            self.recording.write(log, self.tasks)
        try:
            return Path(log.save(path))
        except ReljacError:
            raise
        except (OSError, ValueError) as exc:  # a log writer that does not say it in a ReljacError
            raise ReljacError(f"cannot write the recording to '{shown(str(path))}': {exc}") from None

    def close(self) -> None:
        """Stop the loop, the page's server and the viewer (idempotent)."""
        self._stop.set()
        thread = getattr(self, "_thread", None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        if self.server is not None:
            self.server.close()
        self.viewer.close()

    def _repr_html_(self, height: int = 600) -> str:
        """The page in an iframe `height` px tall (what Jupyter shows for a Debugger)."""
        if self.server is None or self._stop.is_set():
            return "<p>reljac debug page (closed)</p>"
        return page_iframe(self.url, "reljac debug page", height)

    def __enter__(self) -> Debugger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the loop (its own thread)
    def _handle(self, request: dict) -> bool:
        """Carry out one request (:func:`~reljac.viz.debug_requests.handle_request`); True if the scene changed."""
        return handle_request(self, request)

    def tell(self, message: dict) -> None:
        """Send an answer or an error (a dict, sent as JSON) to the pages (none open: dropped)."""
        if not isinstance(message, dict):
            raise ConfigurationError(f"a message to the pages must be a dict, got {type(message).__name__}")
        if self.server is not None:
            self.server.broadcast(message)

    def control_step(self) -> None:
        """One controller step from q, recorded (in the debugger's thread: :meth:`step` asks for one)."""
        controller = self.controller
        assert controller is not None
        targets = targets_of(self.tasks)
        q_next = controller.step(self.q)
        errors = controller.errors()  # at self.q: the configuration the step started from
        levels = levels_panel(controller, errors)
        pairs, distance = collision_panel(self.collision)  # the rows the compiled step computed
        with self.lock:
            self.recording.add(Frame(self.t, self.q.copy(), targets, errors, levels, pairs, distance))
            self.q, self.t, self.steps = q_next, self.t + self.dt, self.steps + 1
        add_sample(self.run_state.samples, [self.t, [level["error"] for level in levels],
                                   distance if math.isfinite(distance) else None])  # bounded: see merge_samples

    def _run(self) -> None:
        """Steps on the control clock (dt per step, in real time), the scene and the page's state
        at most MAX_FPS times a second and no faster than the pages take them, requests in
        between. Behind the clock, it catches up for at most STEP_BUDGET before the next update:
        on a slow machine the run slows down (the clock slips) rather than the page."""
        next_tick, last_draw, dirty = time.monotonic(), 0.0, True
        window: list[float] = []
        while not self._stop.is_set():
            now = time.monotonic()
            wake = (next_tick if not self.paused else now + 0.1)
            if dirty:  # shown when due and a page can take it (else looked at again in PAGE_POLL)
                wake = min(wake, max(last_draw + 1.0 / MAX_FPS, now + PAGE_POLL if not self._page_ready() else now))
            try:
                request: dict | None = self._requests.get(timeout=max(wake - now, 0.0))
            except queue.Empty:
                request = None
            try:
                for _ in range(REQUESTS_PER_PASS):  # a flood of requests does not stop the clock
                    if request is None:
                        break
                    dirty |= self._carry_out(request)
                    request = self._requests.get_nowait()
            except queue.Empty:
                pass
            try:
                if self.controller is not None:
                    if self.paused:
                        next_tick = time.monotonic()
                    taken, budget = 0, time.monotonic() + STEP_BUDGET
                    while not self.paused and time.monotonic() >= next_tick and time.monotonic() < budget:
                        self.control_step()
                        next_tick += self.dt
                        taken += 1
                    next_tick = max(next_tick, time.monotonic() - self.dt)  # behind: the clock slips
                    dirty |= taken > 0
                now = time.monotonic()
                if dirty and now - last_draw >= 1.0 / MAX_FPS and self._page_ready():
                    self._show()
                    last_draw, dirty = now, False
                    window = [s for s in window if now - s < 1.0] + [now]
                    self.updates_per_second = float(len(window))
            except Exception as exc:  # e.g. the meshcat server is gone: say so on the page, stop stepping
                self.paused = True
                self.tell({"type": "error", "message": said(exc) + "; paused"})

    def _carry_out(self, request: dict) -> bool:
        """:meth:`_handle`, and whatever goes wrong there is said on the page: the loop goes on."""
        try:
            return self._handle(request)
        except Exception as exc:  # a ReljacError (a step that failed), or a reljac bug: the run must not die of it
            self.tell({"type": "error", "message": said(exc)})
        return True

    def _page_ready(self) -> bool:
        """True unless every open page is still busy with the last update: an update made now
        would only be merged into the next one (see debug_server._Control), so it waits, and
        the cores go to the page. Without a page, updates go on (``state()``)."""
        return self.server is None or self.server.ready

    def _show(self) -> None:
        viewer = self.viewer
        frame = self.recording.frames[self.run_state.scrub] if self.run_state.scrub is not None else (
            self.recording.frames[-1] if len(self.recording) else None)
        self.scene.marks.joints = [] if frame is None else sorted({j for level in frame.levels
                                                            for j in level["saturated_joints"]})
        viewer.display(self.q)
        self.relay.flush()
        distance = math.inf if frame is None else frame.min_distance
        state = {
            "type": "state", "t": self.t, "steps": self.steps, "paused": self.paused,
            "rate": self.updates_per_second, "frames": len(self.recording), "scrub": self.run_state.scrub,
            "frame_t": None if frame is None else frame.t,
            "levels": [] if frame is None else frame.levels, "pairs": [] if frame is None else frame.pairs,
            "min_distance": distance if math.isfinite(distance) else None,
            "samples": self.run_state.samples, "restart": self.run_state.restart, "targets": self.scene.target_rows(),
            "q": self.q.tolist(),
            "dropped": self.recording.dropped,
            "joints": [] if self.controller is not None else joint_sliders(self.robot, self.q),
        }
        self.run_state.samples, self.run_state.restart = [], False
        with self.lock:
            self._state = state
        if self.server is not None:
            self.server.broadcast(state)


def said(exc: Exception) -> str:
    """An exception as one line for the page (a non-reljac one is a reljac bug and says so)."""
    text = " ".join(str(exc).split())
    return text if isinstance(exc, ReljacError) else f"unexpected {type(exc).__name__} (a reljac bug): {text}"


def debug(controller: Controller | None, q: ArrayLike | None = None, **kwargs: Any) -> Debugger:
    """Open a live debug page of `controller` at configuration `q` and return its
    :class:`Debugger` (running in the background; :meth:`Debugger.close` stops it). Keyword
    arguments are :class:`Debugger`'s. Prints the page's URL (loopback by default)."""
    return Debugger(controller, q, **kwargs)


"""What each request of the debug page does to a :class:`~reljac.viz.debugger.Debugger`: pause,
resume, step, reset, drag a handle, scrub the timeline, move a joint slider, export the
recording. Run in the debugger's own thread (the page's requests reach it through a queue)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from ..exceptions import ReljacError
from .debug_sliders import q_from_slider
from .debug_state import restore_targets, set_handle_target

if TYPE_CHECKING:  # pragma: no cover
    from .request_target import RequestTarget as Debugger  # the debugger imports this module


def handle_request(debugger: Debugger, request: dict) -> bool:
    """Carry out one request of the page (or of the Debugger's methods) on `debugger`, in its
    thread; True if the scene changed."""
    kind = request.get("type")
    if kind in ("pause", "resume"):  # the page shows the new state
        if kind == "resume":
            rewind(debugger)
        debugger.paused = kind == "pause"
        return True
    elif kind == "step":
        rewind(debugger)
        debugger._pending_steps += 1
    elif kind == "reset":
        debugger.q, debugger.t, debugger._scrub = debugger.q0.copy(), 0.0, None
        restore_targets(debugger.tasks, debugger.targets0)
        if debugger.controller is not None:
            debugger.controller.reset()
        with debugger._lock:
            debugger.recording.clear()
        debugger._samples.clear()
        return True
    elif kind == "grab" and request.get("handle") in debugger.handles:
        debugger._grab = (request["handle"], debugger.handles[request["handle"]][1].T_ah)
    elif kind == "drag" and debugger._grab is not None and request.get("handle") == debugger._grab[0]:
        delta = np.asarray(request.get("delta", ()), dtype=float)
        if delta.shape != (16,) or not np.isfinite(delta).all():
            return False
        M = delta.reshape(4, 4)
        rotation = pin.Quaternion(M[:3, :3]).normalized().toRotationMatrix()  # a rigid motion only
        task, handle = debugger.handles[debugger._grab[0]]
        T_ah = set_handle_target(task, debugger._grab[1] * pin.SE3(rotation, M[:3, 3]))
        handle.move(T_ah, debugger.viewer.visualizer.data.oMf)
        return True
    elif kind == "release":
        debugger._grab = None
    elif kind == "scrub" and len(debugger.recording):  # scrubbing pauses the run
        debugger.paused = True
        index = int(np.clip(int(request.get("index", 0)), 0, len(debugger.recording) - 1))
        debugger._scrub = index
        frame = debugger.recording.frames[index]
        debugger.q = frame.q.copy()
        restore_targets(debugger.tasks, frame.targets)
        return True
    elif kind == "joint" and debugger.controller is None:
        with contextlib.suppress(ReljacError, ValueError, TypeError):
            debugger.q = q_from_slider(debugger.robot, debugger.q, str(request.get("name")), request.get("value"))
            return True
    elif kind == "export" and debugger.server is not None:
        debugger.server.broadcast(export_reply(debugger, str(request.get("file", ""))))
    return False


def export_reply(debugger: Debugger, file: str) -> dict:
    """The page's Export: the recording written to `file` (a name, no folder) in the export folder;
    the reply for the page (the path written, or what was wrong)."""
    name = Path(file).name
    if not name or name != file:
        return {"type": "exported", "error": f"give a file name (no folder), not {file!r}"}
    try:
        return {"type": "exported", "path": str(debugger.export(debugger.export_dir / name))}
    except ReljacError as exc:
        return {"type": "exported", "error": str(exc)}


def rewind(debugger: Debugger) -> None:
    """Going on from a scrubbed frame: the run restarts there (later frames are dropped)."""
    if debugger._scrub is None:
        return
    with debugger._lock:
        frame = debugger.recording.truncate(debugger._scrub)
        debugger.recording.frames.pop()  # that frame's step is taken again
    debugger.q, debugger.t, debugger._scrub = frame.q.copy(), frame.t, None
    restore_targets(debugger.tasks, frame.targets)
    if debugger.controller is not None:
        debugger.controller.reset()

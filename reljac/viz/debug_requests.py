"""What each request of the debug page does to a :class:`~reljac.viz.debugger.Debugger`: pause,
resume, step, reset, drag a handle, scrub the timeline, move a joint slider, export the
recording. Run in the debugger's own thread (the page's requests reach it through a queue).

Every field of a request is checked before anything changes: a malformed request (an unknown
kind, a scrub index that is not an integer, a handle that is not a name, a drag that is not a
rigid motion of a sane size, ...) changes nothing and is answered with ``{"type": "error",
"message": ...}`` on the pages; the debugger goes on.
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..exceptions import ReljacError, RequestError
from ..files import shown
from ..validation import as_vector, check_rotation, is_real_number, short_repr
from .debug_sliders import q_from_slider
from .debug_state import handle_pose, restore_targets, set_handle_target

if TYPE_CHECKING:  # pragma: no cover
    from .request_target import RequestTarget as Debugger  # the debugger imports this module

KINDS = ("pause", "resume", "step", "reset", "grab", "drag", "release", "scrub", "joint", "export")
MAX_DRAG = 100.0  # [m] a drag's translation, at most (the page's drags move centimetres to metres)
MAX_NAME = 255  # characters of a file name from the page (a file system's limit)


def handle_request(debugger: Debugger, request: Any) -> bool:
    """Carry out one request of the page (or of the Debugger's methods) on `debugger`, in its
    thread; True if the scene changed. A malformed request is answered with an error on the
    pages (:meth:`Debugger.tell`) and changes nothing."""
    try:
        return _carry_out(debugger, request)
    except RequestError as exc:
        debugger.tell({"type": "error", "message": str(exc)})
        return False


def _carry_out(debugger: Debugger, request: Any) -> bool:
    kind = request.get("type") if isinstance(request, dict) else None
    if not isinstance(kind, str) or kind not in KINDS:
        raise RequestError(f"a request's type must be one of {', '.join(KINDS)}; got {short_repr(kind)}")
    if kind in ("pause", "resume"):  # the page shows the new state
        if kind == "resume":
            rewind(debugger)
        debugger.paused = kind == "pause"
        return True
    if kind == "step":  # taken now, in the order of the requests (a drag sent after it comes after it)
        rewind(debugger)
        if debugger.controller is not None:
            debugger.control_step()
            return True
    elif kind == "reset":
        debugger.q, debugger.t, debugger.run_state.scrub = debugger.q0.copy(), 0.0, None
        restore_targets(debugger.tasks, debugger.targets0)
        if debugger.controller is not None:
            debugger.controller.reset()
        with debugger.lock:
            debugger.recording.clear()
        debugger.run_state.samples.clear()
        debugger.run_state.restart = True
        follow_targets(debugger)
        return True
    elif kind == "grab":
        name = handle_name(debugger, request)
        debugger.run_state.grab = (name, debugger.handles[name][1].T_ah)
    elif kind == "drag":
        name = handle_name(debugger, request)
        motion = rigid_motion(request.get("delta"))
        if debugger.run_state.grab is None or debugger.run_state.grab[0] != name:
            raise RequestError(f"a drag of handle {name!r} must follow a grab of it")
        task, handle = debugger.handles[name]
        T_ah = set_handle_target(task, debugger.run_state.grab[1] * motion)
        handle.move(T_ah, debugger.viewer.visualizer.data.oMf)
        return True
    elif kind == "release":
        debugger.run_state.grab = None
    elif kind == "scrub":
        return scrub(debugger, request.get("index"))
    elif kind == "joint":
        if debugger.controller is None:
            try:
                debugger.q = q_from_slider(debugger.robot, debugger.q, str(request.get("name")), request.get("value"))
            except ReljacError as exc:
                raise RequestError(str(exc)) from None
            return True
    elif kind == "export":
        file = request.get("file")
        debugger.tell(export_reply(debugger, file))
    return False


def handle_name(debugger: Debugger, request: dict) -> str:
    """The request's ``handle``: the name of one of the debugger's handles."""
    name = request.get("handle")
    if not isinstance(name, str) or name not in debugger.handles:
        names = ", ".join(repr(n) for n in debugger.handles) or "none"
        raise RequestError(f"handle must be the name of a handle (here: {names}); got {short_repr(name)}")
    return name


def rigid_motion(delta: Any) -> pin.SE3:
    """A drag's ``delta``: 16 numbers, a row-major 4x4 rigid motion (rotation within the rotation
    tolerance, translation of at most MAX_DRAG m, last row 0 0 0 1), as a ``pin.SE3``."""
    M = as_vector(delta, 16, "a drag's delta (a row-major 4x4 rigid motion)", error=RequestError).reshape(4, 4)
    if np.abs(M[3] - [0.0, 0.0, 0.0, 1.0]).max() > 1e-9:
        raise RequestError(f"a drag's delta must end in the row 0 0 0 1, got {M[3].tolist()}")
    check_rotation(M[:3, :3], "a drag's delta", error=RequestError)
    offset = M[:3, 3]
    largest = float(np.abs(offset).max())  # (the length scaled by it: no square overflows)
    length = largest * float(np.linalg.norm(offset / largest)) if largest > 0.0 else 0.0
    if not length <= MAX_DRAG:  # the whole displacement, not each coordinate
        raise RequestError(f"a drag's translation must be at most {MAX_DRAG:g} m long, got {length:.4g} m "
                           f"({', '.join(f'{x:.4g}' for x in offset)})")
    rotation = pin.Quaternion(M[:3, :3]).normalized().toRotationMatrix()  # exactly a rotation
    return pin.SE3(rotation, M[:3, 3].copy())


def scrub(debugger: Debugger, index: Any) -> bool:
    """Show frame `index` of the recording (an integer; beyond the ends: the first or last frame)
    and pause there; True if there is a frame to show."""
    if not is_real_number(index) or (not isinstance(index, numbers.Integral) and not float(index).is_integer()):
        raise RequestError(f"a scrub's index must be a whole number (a frame of the timeline), got {short_repr(index)}")
    if not len(debugger.recording):
        return False
    debugger.paused = True  # scrubbing pauses the run
    index = min(max(int(index), 0), len(debugger.recording) - 1)
    debugger.run_state.scrub = index
    frame = debugger.recording.frames[index]
    debugger.q = frame.q.copy()
    restore_targets(debugger.tasks, frame.targets)
    follow_targets(debugger)
    return True


def follow_targets(debugger: Debugger) -> None:
    """Put each handle where its task's target now is (after a reset or a scrub set them)."""
    for task, handle in debugger.handles.values():
        T_ah = handle_pose(task)
        if T_ah is not None:
            handle.T_ah = T_ah.copy()
    run = debugger.run_state
    if run.grab is not None and run.grab[0] in debugger.handles:  # a drag goes on from there
        run.grab = (run.grab[0], debugger.handles[run.grab[0]][1].T_ah)


def export_reply(debugger: Debugger, file: Any) -> dict:
    """The page's Export: the recording written to `file` (a name, no folder) in the export folder;
    the reply for the page (the path written, or what was wrong). Never raises, never blocks on
    a FIFO (see :meth:`Debugger.export`)."""
    if file is not None and not isinstance(file, str):
        return {"type": "exported", "error": f"give a file name as text (such as run.npz), not {short_repr(file)}"}
    if not file or len(file) > MAX_NAME or "\0" in file or Path(file).name != file or file in (".", ".."):
        what = "no file name" if not file else f"{shown(file[:80])!r}" + (" ..." if file and len(file) > 80 else "")
        return {"type": "exported", "error": f"give a file name of at most {MAX_NAME} characters, no folder "
                                             f"and no NUL byte (such as run.npz); got {what}"}
    try:
        return {"type": "exported", "path": str(debugger.export(debugger.export_dir / file))}
    except ReljacError as exc:
        return {"type": "exported", "error": str(exc)}


def rewind(debugger: Debugger) -> None:
    """Going on from a scrubbed frame: the run restarts there (later frames are dropped). The
    targets stay as they are now: the frame's, restored by the scrub, and any drag made since."""
    if debugger.run_state.scrub is None:
        return
    with debugger.lock:
        frame = debugger.recording.truncate(debugger.run_state.scrub)
        debugger.recording.frames.pop()  # that frame's step is taken again
    debugger.q, debugger.t, debugger.run_state.scrub = frame.q.copy(), frame.t, None
    debugger.run_state.samples.clear()
    debugger.run_state.restart = True
    if debugger.controller is not None:
        debugger.controller.reset()

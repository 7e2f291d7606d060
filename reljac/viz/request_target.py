"""What a debug page's request acts on (a protocol): the part of a
:class:`~reljac.viz.debugger.Debugger` that :mod:`reljac.viz.debug_requests` reads and sets.

The debugger imports the request handlers; typing their argument by this protocol rather than by
the Debugger class keeps the import one way. Only the debugger's own thread runs the handlers.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pinocchio as pin

if TYPE_CHECKING:  # pragma: no cover
    from ..ik import Controller
    from ..robot import Robot
    from .debug_server import DebugServer
    from .debug_state import Recording
    from .viewer import Viewer


class RequestTarget(Protocol):
    """A debugger as its page's requests see it (:class:`~reljac.viz.debugger.Debugger` is one).

    Attributes:
        robot, controller (None: joint sliders only), viewer, server (None: no page served).
        q: (nq,) the configuration shown; t: [s] the run's time; q0: (nq,) the first one.
        tasks and targets0: the controller's tasks and their first targets, by task name.
        recording: the frames of the run; export_dir: where an export is written by default.
        paused: the run is paused; the private fields are the debugger's state between requests
        (a restart asked for, the frame scrubbed to, the handle grabbed, plot samples).
    """

    robot: Robot
    controller: Controller | None
    viewer: Viewer
    server: DebugServer | None
    q: np.ndarray
    t: float
    q0: np.ndarray
    tasks: Any
    targets0: dict[str, Any]
    recording: Recording
    export_dir: Path
    paused: bool
    handles: dict[str, tuple[Any, Any]]  # handle name -> (task, its Handle overlay)
    _restart: bool
    _scrub: int | None
    _grab: tuple[str, pin.SE3] | None
    _samples: list[list]
    _lock: threading.Lock

    def export(self, path: str | Path) -> Path:
        """Write the recording to `path`; the path written."""
        ...

    def _tell(self, message: dict) -> None:
        """Send `message` to every page (an error, a reply)."""
        ...

    def _control_step(self) -> None:
        """One controller step from q, recorded (the page's Step)."""
        ...


__all__ = ["RequestTarget"]

"""What a debug page's request acts on (a protocol): the part of a
:class:`~reljac.viz.debugger.Debugger` that :mod:`reljac.viz.debug_requests` reads and sets.

The debugger imports the request handlers; typing their argument by this protocol rather than by
the Debugger class keeps the import one way. Only the debugger's own thread runs the handlers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
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


@dataclass
class RunState:
    """What the page's requests change of a debugger's run between two states sent to the page."""

    scrub: int | None = None  # the frame of the recording scrubbed to (the run paused there), or None
    grab: tuple[str, pin.SE3] | None = None  # the handle grabbed, and its pose T_ah when grabbed
    samples: list[list] = field(default_factory=list)  # plot samples not yet sent to the page
    restart: bool = False  # the run went back (reset, rewind) since the last state


class RequestTarget(Protocol):
    """A debugger as its page's requests see it (:class:`~reljac.viz.debugger.Debugger` is one).

    Attributes:
        robot, controller (None: joint sliders only), viewer, server (None: no page served).
        q: (nq,) the configuration shown; t: [s] the run's time; q0: (nq,) the first one.
        tasks and targets0: the controller's tasks and their first targets, by task name.
        recording: the frames of the run; export_dir: where an export is written by default.
        paused: the run is paused; run_state: what the requests change between two states sent to
        the page; lock: held while the recording changes (other threads read it: export, state).
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
    run_state: RunState
    lock: threading.Lock

    def export(self, path: str | Path) -> Path:
        """Write the recording to `path`; the path written."""
        ...

    def tell(self, message: dict) -> None:
        """Send `message` to every page (an error, a reply)."""
        ...

    def control_step(self) -> None:
        """One controller step from q, recorded (the page's Step)."""
        ...


__all__ = ["RequestTarget", "RunState"]

"""``reljac view``: show a robot with labelled frames in the browser, and hold until Ctrl-C."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from numpy.typing import ArrayLike

from ..program import ctrl_c_ends_the_wait
from ..robot import FrameRef, Robot, as_robot
from ..viz import Viewer


def wait_for_interrupt(message: str | None = None, out: Callable[..., object] = print) -> None:
    """Print `message` (once SIGTERM is caught: a signal sent on reading it is not lost), then
    block until Ctrl-C or SIGTERM; both arrive as KeyboardInterrupt (SIGTERM's own handler is
    put back afterwards)."""
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        if message:
            out(message)
        while True:
            time.sleep(3600)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def view(
    robot: Robot | str | Path,
    frames: Sequence[FrameRef] = (),
    q: ArrayLike | None = None,
    *,
    hold: bool,
    open: bool = False,
    zmq_url: str | None = None,
    host: str | None = None,
    scale: float | None = None,
    capability_map: str | Path | None = None,
    color_by: str = "coverage",
    meshes: str = "simplified",
) -> Viewer | None:
    """Show a robot at q with triads on `frames` and a segment between the first two.

    What ``reljac view ROBOT --frames A B ...`` runs. Prints the page's URL.

    Args:
        robot: a Robot, a bundled robot's name or a URDF path.
        frames: frame names or ids to draw triads on (labelled with their names).
        q: configuration, shape (nq,) (default: ``robot.reference_configuration()``).
        hold: wait until Ctrl-C (or SIGTERM), then close the viewer and return None.
            Otherwise return the open viewer.
        open: also open a browser tab.
        zmq_url: join this meshcat server instead of starting one.
        host: the address the page listens on (default 127.0.0.1, this machine only; see
            :class:`~reljac.viz.Viewer`).
        scale: [m] triad size (default: from the robot's size, see :class:`~reljac.viz.Viewer`).
        capability_map: a map file (``reljac map``) of this robot, drawn as voxels coloured by
            `color_by` ("coverage" or "manipulability"); its frames a and b get triads when
            `frames` is empty.
        meshes: "simplified" (default) or "full": see :class:`~reljac.viz.Viewer`.

    Raises:
        URDFError, FrameNotFound, ConfigurationError: bad robot, frame or q (before any server
        starts, for frames and q).
    """
    robot = Robot.load(robot) if isinstance(robot, (str, os.PathLike)) else as_robot(robot)
    cmap = None
    if capability_map is not None:
        from ..maps import load_map
        from ..maps.result import check_robot

        cmap = check_robot(load_map(capability_map), robot)
        frames = frames or [cmap.metadata["frame_a"], cmap.metadata["frame_b"]]
    frame_ids = [robot.frame_id(f) for f in frames]
    q = robot.reference_configuration() if q is None else robot.validate_q(q)
    viewer = Viewer(robot, q=q, scale=scale, zmq_url=zmq_url, host=host, open=open, meshes=meshes)
    try:
        for fid in frame_ids:
            viewer.show_frame(fid, label=robot.model.frames[fid].name)
        if len(frame_ids) >= 2:
            viewer.show_segment(frame_ids[0], frame_ids[1])
        if cmap is not None:
            viewer.show_capability_map(cmap, color_by=color_by)
    except BaseException:
        viewer.close()
        raise
    if not hold:
        return viewer
    try:
        with ctrl_c_ends_the_wait():
            wait_for_interrupt("Press Ctrl-C to stop the viewer.", out=lambda line: print(line, flush=True))
    finally:
        viewer.close()
    return None

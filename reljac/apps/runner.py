"""Running a demo: the paced control loop, its viewer session and its tracking statistics.

:func:`run` is what every demo of :mod:`reljac.apps.demo` calls: targets at t, one controller step,
record, display, pace in real time (with a viewer) or run as fast as possible (headless). A
:class:`Session` says how the run meets its viewer and what it leaves behind (wait for a browser
page, keep serving after the motion, record, plot). Errors are position [m] and orientation
[rad] norms from each task's ``error_norms``; the summary prints them in mm and mrad.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..program import stop_if_interrupted
from ..relative import Kinematics
from .recording import RunLog

if TYPE_CHECKING:  # pragma: no cover
    from ..robot import Robot

DISPLAY_PERIOD = 1.0 / 30.0  # [s] between viewer updates
DISPLAY_GAP = 0.5  # [s] at most between two viewer updates, however late the loop runs
REAL_TIME = 0.95  # a real-time factor below this, with a viewer, is reported with its cause
PROGRESS_PERIOD = 1.0  # [s] between progress lines
BROWSER_SETTLE = 1.0  # [s] given to a page that just connected to draw the scene


@dataclass
class Session:
    """How a run meets its viewer and what it leaves behind (all off by default).

    Attributes:
        wait: [s] at most to wait for a browser page to connect before moving (viewer only);
            the motion starts ``BROWSER_SETTLE`` s after a page connects.
        hold: after the motion, keep serving the last scene until Ctrl-C (viewer only; not after
            an interrupted motion).
        record: write the run here (.npz or .json, see :mod:`reljac.apps.recording`).
        plot: plot the tracking errors here (.png, .pdf or .svg; needs matplotlib).
        progress: called with 1 after every control step (e.g. a tqdm bar's ``update``).
    """

    wait: float = 0.0
    hold: bool = False
    record: Path | None = None
    plot: Path | None = None
    progress: Callable[[int], object] | None = None


# ---------------------------------------------------------------------------- statistics
@dataclass
class TaskStats:
    """Tracking errors of one task over a run: position [mm], orientation [mrad] (NaN if n/a)."""

    name: str
    max_position_mm: float
    rms_position_mm: float
    max_orientation_mrad: float
    rms_orientation_mrad: float


@dataclass
class DemoSummary:
    """Outcome of a demo run.

    Attributes:
        name: demo name; steps: control steps done; simulated_time [s]; wall_time [s];
        realtime_factor: simulated_time / wall_time (about 1 with a viewer, > 1 headless);
        interrupted: True if Ctrl-C ended the run; tasks: one :class:`TaskStats` per tracking task.
    """

    name: str
    steps: int
    simulated_time: float
    wall_time: float
    realtime_factor: float
    interrupted: bool = False
    tasks: list[TaskStats] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # more lines for the table (e.g. a phase's figures)

    def task(self, name: str) -> TaskStats:
        for stats in self.tasks:
            if stats.name == name:
                return stats
        raise KeyError(f"no task named {name!r} (tasks: {', '.join(s.name for s in self.tasks)})")

    def table(self) -> str:
        width = max([len("task")] + [len(s.name) for s in self.tasks])
        head = f"{'task':<{width}}  {'pos max':>8} {'pos RMS':>8} [mm]  {'rot max':>8} {'rot RMS':>8} [mrad]"
        lines = [head, "-" * len(head)]
        for s in self.tasks:
            lines.append(f"{s.name:<{width}}  {_num(s.max_position_mm)} {_num(s.rms_position_mm)}       "
                         f"{_num(s.max_orientation_mrad)} {_num(s.rms_orientation_mrad)}")
        lines.append(f"{self.steps} steps, {self.simulated_time:.2f} s simulated in {self.wall_time:.2f} s "
                     f"wall: real-time factor {self.realtime_factor:.2f}"
                     + (" (interrupted)" if self.interrupted else ""))
        return "\n".join(lines + self.notes)


def _num(x: float) -> str:
    return f"{'-':>8}" if math.isnan(x) else f"{x:8.3f}"


class _Recorder:
    """Running max and mean square of error norms per task (position [m], orientation [rad])."""

    def __init__(self, tasks: Any) -> None:
        self.count = {t.name: 0 for t in tasks}  # dict: one entry per name, in order
        self.max = {name: np.full(2, math.nan) for name in self.count}
        self.sum_sq = {name: np.zeros(2) for name in self.count}

    def record(self, kin: Kinematics, tasks: Any) -> dict[str, dict[str, float]]:
        norms = {t.name: t.error_norms(kin) for t in tasks}
        for name, n in norms.items():
            e = np.array([n.get("position", math.nan), n.get("orientation", math.nan)])
            self.count[name] += 1
            self.max[name] = np.fmax(self.max[name], e)
            self.sum_sq[name] += e**2
        return norms

    def stats(self) -> list[TaskStats]:
        out = []
        for name, n in self.count.items():
            rms = np.sqrt(self.sum_sq[name] / n) if n else np.full(2, math.nan)
            mx = self.max[name]
            out.append(TaskStats(name, 1e3 * mx[0], 1e3 * rms[0], 1e3 * mx[1], 1e3 * rms[1]))
        return out


def _progress(t: float, norms: dict[str, dict[str, float]], report: Any = None) -> str | None:
    """The line printed every PROGRESS_PERIOD: the tracked tasks' errors, else the report's
    ``status()`` (a phase tracking no task), else None (no line)."""
    if not norms:
        status = getattr(report, "status", None)
        return f"t = {t:6.2f} s  {status()}" if status is not None else None
    parts = []
    for name, n in norms.items():
        text = ", ".join(f"{'pos' if k == 'position' else 'rot'} "
                         f"{1e3 * v:.2f} {'mm' if k == 'position' else 'mrad'}" for k, v in n.items())
        parts.append(f"{name}: {text}")
    return f"t = {t:6.2f} s  " + " | ".join(parts)


ControllerAt = Callable[[float], Any]  # t [s] -> the Controller stepping then
TargetsAt = Callable[[float, np.ndarray], None]  # (t, q): set the tasks' targets
TrackedAt = Callable[[float], list]  # t -> the tasks whose errors count then


def run(name: str, robot: Robot, q: np.ndarray, ctrl_for: ControllerAt, set_targets: TargetsAt, tracked: TrackedAt,
        *, duration: float, headless: bool, loop: bool, dt: float, out: Callable[..., object],
        setup_viewer: Any = None, update_viewer: Any = None, session: Session | None = None,
        report: Any = None) -> DemoSummary:
    """The shared control loop: targets at t, one controller step, record, display, pace.

    ``ctrl_for(t)``: the controller in charge at t; ``set_targets(t, q)``; ``tracked``: the tasks
    whose errors are recorded, or a function of t returning them. The viewer (unless headless)
    shows the robot at q from the start; see :class:`Session` for waiting, holding and records.
    ``report``: an object whose ``notes()`` lines end the summary table (or None).
    A Ctrl-C before or after the motion (while waiting or holding) propagates as
    KeyboardInterrupt once the viewer is closed; one during the motion ends the motion.
    """
    session = session or Session()
    tracked_at = tracked if callable(tracked) else (lambda t: tracked)
    all_tasks = [task for t in (0.0, duration) for task in tracked_at(t)]
    recorder = _Recorder(all_tasks)
    log = None
    if session.record or session.plot:
        log = RunLog(name, robot.q_names, dt, all_tasks)
    viewer = None
    try:
        if not headless:
            from ..viz import Viewer  # meshcat only when a viewer is wanted

            viewer = Viewer(robot, q=q)
            out(f"open {viewer.url} in a browser; Ctrl-C to stop")
            if setup_viewer:
                setup_viewer(viewer)
            if session.wait > 0:
                out(f"waiting up to {session.wait:g} s for a browser page to connect (--no-wait to skip)")
                if viewer.wait_for_browser(session.wait):
                    out("a browser page is connected: starting")
                    time.sleep(BROWSER_SETTLE)
                else:
                    out(f"no browser page after {session.wait:g} s: starting anyway")
        summary = _loop(name, q, ctrl_for, set_targets, tracked_at, recorder, log, viewer, update_viewer,
                        n_steps=math.inf if loop else round(duration / dt), dt=dt, out=out, report=report,
                        progress=session.progress)
        if log is not None:
            if session.record:
                out(f"run recorded to {log.save(session.record)}")
            if session.plot:
                out(f"tracking errors plotted to {log.plot(session.plot)}")
        if viewer is not None and session.hold and not summary.interrupted:
            from .view import wait_for_interrupt

            wait_for_interrupt(f"motion done; still serving {viewer.url}; Ctrl-C to stop", out=out)
    finally:
        if viewer is not None:
            viewer.close()
    return summary


def _loop(name: str, q: np.ndarray, ctrl_for: ControllerAt, set_targets: TargetsAt, tracked_at: TrackedAt,
          recorder: Any, log: Any, viewer: Any, update_viewer: Any, *, n_steps: float, dt: float,
          out: Callable[..., object], report: Any = None, progress: Any = None) -> DemoSummary:
    """Run the control steps (paced in real time with a viewer); print and return the summary.

    With a viewer, the scene is updated every DISPLAY_PERIOD of simulated time, in one round trip
    to the meshcat server; an update due while the loop runs more than DISPLAY_PERIOD behind the
    clock is skipped (the control catches up first), unless none was shown for DISPLAY_GAP. The
    summary says how many were skipped, and why real time was not kept where it was not.
    """
    display_every = max(1, round(DISPLAY_PERIOD / dt))
    progress_every = max(1, round(PROGRESS_PERIOD / dt))
    k, interrupted = 0, False
    pace = _Pace()
    start = time.perf_counter()
    last_shown = start
    try:
        while k < n_steps:
            t = k * dt
            began = time.perf_counter()
            stop_if_interrupted()  # a Ctrl-C an extension swallowed (reljac.program)
            controller = ctrl_for(t)
            set_targets(t, q)
            q_before, q = q, controller.step(q)
            norms = recorder.record(controller.last_kinematics, tracked_at(t))  # errors at t, before the step
            if log is not None:
                log.record(t, q_before, tracked_at(t), norms)
            k += 1
            if progress is not None:
                progress(1)
            line = _progress(t, norms, report) if k % progress_every == 0 else None
            if line is not None:
                out(line)
            now = time.perf_counter()
            pace.stepping += now - began
            if viewer is not None:
                if k % display_every == 0:
                    late = now - (start + k * dt)
                    if late > DISPLAY_PERIOD and now - last_shown < DISPLAY_GAP:
                        pace.skipped += 1
                    else:
                        with viewer.batch(wait=False):  # one message to the meshcat server, not awaited
                            viewer.display(q)
                            if update_viewer:
                                update_viewer(viewer, t, q)
                        last_shown = time.perf_counter()
                        pace.shown += 1
                        pace.displaying += last_shown - now
                sleep = start + k * dt - time.perf_counter()
                if sleep > 0:
                    time.sleep(sleep)
    except KeyboardInterrupt:
        interrupted = True
        ignore_ctrl_c()  # what is left (table, files, closing) runs to its end
    wall = time.perf_counter() - start
    sim = k * dt
    factor = sim / wall if wall > 0 else math.inf
    notes = report.notes() if report is not None else []
    if viewer is not None:
        notes += pace.notes(k, dt, wall, factor)
    summary = DemoSummary(name, k, sim, wall, factor, interrupted, recorder.stats(), notes)
    out(summary.table())
    return summary


@dataclass
class _Pace:
    """Where a run with a viewer spent its time: stepping [s] (targets, control step, records),
    displaying [s] (viewer updates shown), and how many updates were shown or skipped."""

    stepping: float = 0.0
    displaying: float = 0.0
    shown: int = 0
    skipped: int = 0

    def notes(self, steps: int, dt: float, wall: float, factor: float) -> list[str]:
        """The summary's lines on the viewer: updates skipped, and why real time was not kept."""
        lines = []
        if self.skipped:
            lines.append(f"viewer: {self.shown} updates shown ({self.shown / wall:.0f} per second), "
                         f"{self.skipped} skipped to keep up with real time")
        if steps and factor < REAL_TIME:
            step_ms = 1e3 * self.stepping / steps
            update_ms = 1e3 * self.displaying / self.shown if self.shown else 0.0
            cause = (f"the control steps alone take {step_ms:.1f} ms per {dt * 1e3:g} ms step"
                     if step_ms > dt * 1e3 else
                     f"a control step takes {step_ms:.1f} ms of each {dt * 1e3:g} ms and a viewer update "
                     f"{update_ms:.1f} ms, but the rest of the time went to other processes")
            lines.append(f"not real time: {cause} (the machine is busy or slow; --headless runs without "
                         "the viewer, as fast as it can)")
        return lines


def ignore_ctrl_c() -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

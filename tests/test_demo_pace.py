"""A demo with a viewer keeps real time when the viewer's updates are slow, and says why when the
control steps themselves cannot keep it (issue 43: ``reljac demo dual-arm`` with its viewer ran at
a real-time factor of 0.23 on a busy machine).

The loop runs on a simulated clock (``time.perf_counter`` and ``time.sleep`` of the runner
replaced), with a viewer whose updates and a controller whose steps cost a stated simulated time:
what the loop decides is then exact, whatever the load of the machine running the test.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import reljac.viz
from reljac import Robot
from reljac.apps import runner
from reljac.apps.runner import DISPLAY_GAP, DISPLAY_PERIOD, run


class Clock:
    """A simulated clock: time passes only when told (sleep, or a stated cost)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


class SlowViewer:
    """What the runner uses of a Viewer; each update costs `cost` [s] of the clock."""

    def __init__(self, clock: Clock, cost: float) -> None:
        self.clock, self.cost = clock, cost
        self.url = "http://127.0.0.1:0/static/"
        self.shown: list[float] = []  # clock time of each update

    def display(self, q) -> None:
        self.clock.now += self.cost
        self.shown.append(self.clock.now)

    @contextlib.contextmanager
    def batch(self, wait: bool = True):
        yield

    def close(self) -> None:
        pass


class Stepper:
    """A controller whose step costs `cost` [s] of the clock and leaves q where it is."""

    last_kinematics = None

    def __init__(self, clock: Clock, cost: float) -> None:
        self.clock, self.cost = clock, cost

    def step(self, q):
        self.clock.now += self.cost
        return q


def paced_run(monkeypatch, *, update_cost: float, step_cost: float, duration: float = 5.0, dt: float = 0.01):
    clock = Clock()
    viewer = SlowViewer(clock, update_cost)
    monkeypatch.setattr(runner, "time", clock)
    monkeypatch.setattr(reljac.viz, "Viewer", lambda robot, q: viewer)
    robot = Robot.bundled("planar_2link")
    lines: list[str] = []
    controller = Stepper(clock, step_cost)
    summary = run("paced", robot, np.zeros(robot.nq), lambda t: controller, lambda t, q: None, [],
                  duration=duration, headless=False, loop=False, dt=dt, out=lines.append)
    return summary, viewer, lines


def test_slow_viewer_updates_are_skipped_and_the_run_keeps_real_time(monkeypatch):
    """Updates of 50 ms, due every 30 ms: before issue 43 the loop waited for each one (real-time
    factor 5 s / (5 s + 166 x 50 ms) = 0.38); now it skips those due while it is late, shows one
    at least every DISPLAY_GAP, and says how many it skipped."""
    summary, viewer, lines = paced_run(monkeypatch, update_cost=0.05, step_cost=0.0005)
    assert summary.steps == 500
    assert summary.realtime_factor > 0.98, summary.table()
    gaps = np.diff([0.0, *viewer.shown])
    assert len(viewer.shown) >= 5.0 / DISPLAY_GAP and gaps.max() <= DISPLAY_GAP + 0.05 + 1e-9, gaps.max()
    due = summary.steps // round(DISPLAY_PERIOD / 0.01)  # one update due every DISPLAY_PERIOD
    skipped = due - len(viewer.shown)
    assert skipped > 0
    assert f"viewer: {len(viewer.shown)} updates shown" in summary.table()
    assert f"{skipped} skipped to keep up with real time" in lines[-1]
    assert "not real time" not in summary.table()


def test_fast_viewer_updates_are_all_shown_and_nothing_is_said(monkeypatch):
    summary, viewer, _ = paced_run(monkeypatch, update_cost=0.005, step_cost=0.0005)
    assert len(viewer.shown) == 166 and summary.realtime_factor > 0.99
    assert summary.notes == []


def test_control_steps_slower_than_real_time_are_named_as_the_cause(monkeypatch):
    """Steps of 15 ms every 10 ms: real time cannot be kept, and the summary says that the
    control steps alone take longer than the period, whatever the viewer does."""
    summary, _, _ = paced_run(monkeypatch, update_cost=0.001, step_cost=0.015, duration=1.0)
    assert summary.realtime_factor == pytest.approx(0.01 / 0.015, rel=0.05)
    note = summary.notes[-1]
    assert note.startswith("not real time: the control steps alone take 15.0 ms per 10 ms step"), note

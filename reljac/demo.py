"""Two task-priority IK demos with tracking statistics: ``reljac demo {dual-arm,hand}``.

dual-arm
    Two arms carry an imaginary box. Levels, highest priority first:
    [pose of right_tool in left_tool] > [pose of left_tool] > [posture]. The left tool follows a
    5 cm circle in a vertical plane (with feed-forward) the whole time; in the second half of each
    cycle the relative target turns (the box pivots between the hands by up to 0.35 rad about its
    vertical axis, with feed-forward).
hand
    The thumb tip pinches the index tip (position of thumb_tip in index_tip driven to zero along a
    smooth approach), then the middle tip. Posture below, toward the known pinch configuration.

Both run at the control rate in real time with a meshcat viewer, or as fast as possible with
``headless=True`` (same computation, no sleeping, no viewer). Ctrl-C ends a run cleanly; the
summary (max and RMS tracking errors per task, real-time factor) is printed and returned.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pinocchio as pin

from .ik import Controller, FrameTask, PostureTask, RelativeFrameTask, RelativePositionTask
from .relative import Kinematics
from .robot import Robot

# Copied from the comment at the end of urdf/dual_arm.urdf: tools 0.25 m apart, facing each other.
DUAL_ARM_MEETING = {
    "torso_yaw": 0.0,
    **dict(zip([f"left_joint{i}" for i in range(1, 8)],
               [0.8808, 0.9651, -0.4571, -2.0366, 1.1162, 2.7259, 1.8842])),
    **dict(zip([f"right_joint{i}" for i in range(1, 8)],
               [-1.2333, 1.2035, 0.8092, -2.0059, -1.4909, 2.3970, -0.1965])),
}
# Copied from the comment at the end of urdf/hand.urdf (thumb-index and thumb-middle pinches).
HAND_PINCH_INDEX = {"index_abduction": 0.1357, "index_mcp": 0.3976, "index_pip": 1.3257,
                    "thumb_cmc_abduction": 0.7222, "thumb_cmc_flexion": 0.2967, "thumb_mcp": 0.7391}
HAND_PINCH_MIDDLE = {"middle_abduction": 0.1994, "middle_mcp": 0.4709, "middle_pip": 1.2948,
                     "thumb_cmc_abduction": 1.0774, "thumb_cmc_flexion": 0.712, "thumb_mcp": 0.4084}
HAND_RELAXED = {"index_mcp": 0.2, "index_pip": 0.3, "middle_mcp": 0.2, "middle_pip": 0.3,
                "ring_mcp": 0.2, "ring_pip": 0.3, "thumb_cmc_abduction": 0.3, "thumb_mcp": 0.2}

DISPLAY_PERIOD = 1.0 / 30.0  # [s] between viewer updates
PROGRESS_PERIOD = 1.0  # [s] between progress lines


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
        return "\n".join(lines)


def _num(x: float) -> str:
    return f"{'-':>8}" if math.isnan(x) else f"{x:8.3f}"


class _Recorder:
    """Running max and mean square of error norms per task (position [m], orientation [rad])."""

    def __init__(self, tasks) -> None:
        self.count = {t.name: 0 for t in tasks}  # dict: one entry per name, in order
        self.max = {name: np.full(2, math.nan) for name in self.count}
        self.sum_sq = {name: np.zeros(2) for name in self.count}

    def record(self, kin: Kinematics, tasks) -> dict[str, dict[str, float]]:
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


def _progress(t: float, norms: dict[str, dict[str, float]]) -> str:
    parts = []
    for name, n in norms.items():
        text = ", ".join(f"{'pos' if k == 'position' else 'rot'} "
                         f"{1e3 * v:.2f} {'mm' if k == 'position' else 'mrad'}" for k, v in n.items())
        parts.append(f"{name}: {text}")
    return f"t = {t:6.2f} s  " + " | ".join(parts)


def _run(name, robot, q, ctrl_for, set_targets, tracked, *, duration, headless, loop, dt, out,
         setup_viewer=None, update_viewer=None) -> DemoSummary:
    """The shared control loop: targets at t, one controller step, record, display, pace.

    ``ctrl_for(t)``: the controller in charge at t; ``set_targets(t, q)``; ``tracked``: the tasks
    whose errors are recorded, or a function of t returning them.
    """
    viewer = None
    if not headless:
        from .viz import Viewer  # meshcat only when a viewer is wanted

        viewer = Viewer(robot)
        out(f"open {viewer.url} in a browser; Ctrl-C to stop")
        if setup_viewer:
            setup_viewer(viewer)
    tracked_at = tracked if callable(tracked) else (lambda t: tracked)
    recorder = _Recorder([task for t in (0.0, duration) for task in tracked_at(t)])
    display_every = max(1, round(DISPLAY_PERIOD / dt))
    progress_every = max(1, round(PROGRESS_PERIOD / dt))
    n_steps = math.inf if loop else int(round(duration / dt))
    k, interrupted = 0, False
    start = time.perf_counter()
    try:
        while k < n_steps:
            t = k * dt
            controller = ctrl_for(t)
            set_targets(t, q)
            q = controller.step(q)
            norms = recorder.record(controller.last_kinematics, tracked_at(t))  # errors at t, before the step
            k += 1
            if k % progress_every == 0:
                out(_progress(t, norms))
            if viewer is not None:
                if k % display_every == 0:
                    viewer.display(q)
                    if update_viewer:
                        update_viewer(viewer, t, q)
                sleep = start + k * dt - time.perf_counter()
                if sleep > 0:
                    time.sleep(sleep)
    except KeyboardInterrupt:
        interrupted = True
        out("interrupted")
    finally:
        wall = time.perf_counter() - start
        if viewer is not None:
            viewer.close()
    sim = k * dt
    summary = DemoSummary(name, k, sim, wall, sim / wall if wall > 0 else math.inf, interrupted,
                          recorder.stats())
    out(summary.table())
    return summary


def _smoothstep(s: float) -> float:
    s = min(max(s, 0.0), 1.0)
    return s * s * (3.0 - 2.0 * s)


def _body_twist(target: Callable[[float], pin.SE3], t: float, h: float = 1e-4) -> np.ndarray:
    """Body twist [linear; angular] (6,) of a pose trajectory T(t), by central differences."""
    return pin.log6(target(t - h).actInv(target(t + h))).vector / (2.0 * h)


# ---------------------------------------------------------------------------- dual arm
def run_dual_arm(*, duration: float = 10.0, headless: bool = False, loop: bool = False, dt: float = 0.01,
                 out=print, radius: float = 0.05, period: float = 5.0, pivot: float = 0.35) -> DemoSummary:
    """Two hands carry an imaginary box (see the module docstring).

    Args:
        duration: [s] length of one cycle (the box pivots in its second half), and of the run
            unless `loop`.
        headless: no viewer, no sleeping (as fast as possible).
        loop: repeat cycles until Ctrl-C.
        dt: control period [s].
        out: where lines are printed.
        radius: [m] of the left tool's circle; period: [s] of one turn; pivot: [rad] largest
            turn of the box.

    Returns:
        the :class:`DemoSummary` (tasks 'relative' and 'left').
    """
    robot = Robot.bundled("dual_arm")
    q0 = robot.q_from_joint_values(DUAL_ARM_MEETING)
    kin0 = Kinematics(robot, q0)
    T_wl0 = kin0.placement("left_tool")
    T_lr0 = kin0.relative_placement("left_tool", "right_tool")
    # Box frame c: at the midpoint between the tools, axes of the left tool (x is up).
    T_lc = pin.SE3(np.eye(3), 0.5 * T_lr0.translation)
    T_cr = T_lc.actInv(T_lr0)
    omega = 2.0 * math.pi / period
    ramp = 1.0  # [s] to reach full speed on the circle

    def phase(t: float) -> float:  # angle on the circle, speed ramped up smoothly from 0
        if t < ramp:
            u = t / ramp
            return omega * ramp * (u**3 - 0.5 * u**4)
        return omega * (0.5 * ramp + t - ramp)

    def left_target(t: float) -> pin.SE3:  # circle in the world x-z plane through the start pose
        a = phase(max(t, 0.0))
        offset = radius * np.array([math.sin(a), 0.0, 1.0 - math.cos(a)])
        return pin.SE3(T_wl0.rotation, T_wl0.translation + offset)

    def relative_target(t: float) -> pin.SE3:  # the box pivots about its vertical axis (x)
        s = (t % duration) / (0.5 * duration) - 1.0  # -1..0 first half, 0..1 second half
        angle = pivot * 0.5 * (1.0 - math.cos(2.0 * math.pi * s)) if s > 0 else 0.0
        return T_lc * pin.SE3(pin.exp3(np.array([angle, 0.0, 0.0])), np.zeros(3)) * T_cr

    relative = RelativeFrameTask("left_tool", "right_tool", gain=15.0, name="relative")
    left = FrameTask("left_tool", gain=15.0, name="left")
    posture = PostureTask(robot, gain=2.0, weight=0.1)
    posture.set_target(q0)
    controller = Controller(robot, [[relative], [left], [posture]], dt=dt)

    def set_targets(t, q):
        relative.set_target(relative_target(t), velocity=_body_twist(relative_target, t))
        left.set_target(left_target(t), velocity=_body_twist(left_target, t))

    def setup_viewer(viewer):
        viewer.show_frame("left_tool", label="left_tool")
        viewer.show_frame("right_tool", label="right_tool")
        viewer.show_segment("left_tool", "right_tool")
        viewer.show_trail("left_tool", length=300)
        viewer.show_trail("right_tool", length=300)

    def update_viewer(viewer, t, q):
        viewer.show_target("left target", left.target, scale=0.06)
        T_wl = viewer.visualizer.data.oMf[robot.frame_id("left_tool")]
        viewer.show_target("right target", T_wl * relative.target, scale=0.06)

    out(f"dual-arm demo: {'until Ctrl-C' if loop else f'{duration:g} s'}, dt = {dt * 1e3:g} ms, "
        f"left tool on a {radius * 100:g} cm circle, the box pivots by up to {pivot:g} rad in the second half")
    return _run("dual-arm", robot, q0, lambda t: controller, set_targets, [relative, left],
                duration=duration, headless=headless, loop=loop, dt=dt, out=out,
                setup_viewer=setup_viewer, update_viewer=update_viewer)


# ---------------------------------------------------------------------------- hand
def run_hand(*, duration: float = 6.0, headless: bool = False, dt: float = 0.01, out=print) -> DemoSummary:
    """The thumb pinches the index tip (first half), then the middle tip (second half).

    Each half: a smooth approach of the thumb tip's position in the finger tip frame to zero over
    2/3 of the half, then a hold. Posture below, toward the known pinch configuration.

    Returns:
        the :class:`DemoSummary` (tasks 'thumb-index' and 'thumb-middle'; each task's errors are
        recorded while it is active).
    """
    robot = Robot.bundled("hand")
    q0 = robot.q_from_joint_values(HAND_RELAXED)
    half = 0.5 * duration
    approach = 2.0 / 3.0 * half
    pinches = []
    for finger, pinch in (("index", HAND_PINCH_INDEX), ("middle", HAND_PINCH_MIDDLE)):
        task = RelativePositionTask(f"{finger}_tip", "thumb_tip", gain=15.0, name=f"thumb-{finger}")
        posture = PostureTask(robot, gain=2.0, weight=0.1)
        posture.set_target(robot.q_from_joint_values(pinch))
        pinches.append((task, Controller(robot, [[task], [posture]], dt=dt)))
    start_points: dict[int, np.ndarray] = {}

    def which(t: float) -> int:
        return 0 if t < half else 1

    def set_targets(t, q):
        i = which(t)
        task = pinches[i][0]
        if i not in start_points:  # the approach starts where the thumb is now
            start_points[i] = Kinematics(robot, q).relative_placement(task.frame_a, task.frame_b).translation
        s = (t - i * half) / approach
        sd = 6.0 * s * (1.0 - s) / approach if 0.0 < s < 1.0 else 0.0
        task.set_target(start_points[i] * (1.0 - _smoothstep(s)), velocity=-start_points[i] * sd)

    def setup_viewer(viewer):
        for tip in ("thumb_tip", "index_tip", "middle_tip"):
            viewer.show_frame(tip, scale=0.02)
        viewer.show_trail("thumb_tip", length=300)

    out(f"hand demo: {duration:g} s, dt = {dt * 1e3:g} ms, the thumb pinches the index tip, then the middle tip")
    return _run("hand", robot, q0, lambda t: pinches[which(t)][1], set_targets, lambda t: [pinches[which(t)][0]],
                duration=duration, headless=headless, loop=False, dt=dt, out=out, setup_viewer=setup_viewer)


# ---------------------------------------------------------------------------- command line
def main(argv=None) -> int:
    """``reljac demo {dual-arm,hand} [--duration S] [--headless] [--loop] [--dt S]``; returns 0."""
    parser = argparse.ArgumentParser(prog="reljac demo", description="task-priority IK demos")
    parser.add_argument("demo", choices=["dual-arm", "hand"])
    parser.add_argument("--duration", type=float, default=None,
                        help="[s] run length (default: 10 for dual-arm, 6 for hand)")
    parser.add_argument("--headless", action="store_true", help="no viewer, no real-time pacing")
    parser.add_argument("--loop", action="store_true", help="dual-arm only: repeat until Ctrl-C")
    parser.add_argument("--dt", type=float, default=0.01, help="[s] control period (default 0.01)")
    args = parser.parse_args(argv)
    if args.duration is not None and not (math.isfinite(args.duration) and args.duration > 0):
        parser.error(f"--duration must be a positive number of seconds, got {args.duration}")
    if not (math.isfinite(args.dt) and 0 < args.dt <= 0.1):
        parser.error(f"--dt must be in (0, 0.1] s, got {args.dt}")
    if args.demo == "dual-arm":
        run_dual_arm(duration=args.duration or 10.0, headless=args.headless, loop=args.loop, dt=args.dt)
    else:
        if args.loop:
            parser.error("--loop is for the dual-arm demo only")
        run_hand(duration=args.duration or 6.0, headless=args.headless, dt=args.dt)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

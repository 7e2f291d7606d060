"""Task-priority IK demos with tracking statistics: ``reljac demo {dual-arm,hand,talos-balance}``.

dual-arm
    Two arms carry an imaginary box. Levels, highest priority first:
    [pose of right_tool in left_tool] > [pose of left_tool] > [posture]. The left tool follows a
    5 cm circle in the vertical y-z plane, which faces the viewer's camera (with feed-forward)
    the whole time; in the second half of each
    cycle the relative target turns (the box pivots between the hands by up to 0.35 rad about its
    vertical axis, with feed-forward).
hand
    The thumb tip pinches the index tip (position of thumb_tip in index_tip driven to zero along a
    smooth approach), then the middle tip. Posture below, toward the known pinch configuration.
talos-balance
    Talos (legs free) carries a box and reaches forward until its balance stops it
    (:mod:`reljac.apps.balance_demo`).

Both run at the control rate in real time with a meshcat viewer, or as fast as possible with
``headless=True`` (same computation, no sleeping, no viewer). Ctrl-C ends a run cleanly; the
summary (max and RMS tracking errors per task, real-time factor) is printed and returned.

A :class:`Session` says how a run meets its viewer and what it leaves behind: wait for a browser
page before moving, keep serving the last scene after the motion until Ctrl-C, record the run
(:mod:`reljac.apps.recording`), plot its errors. ``reljac demo`` waits and keeps serving only
from an interactive terminal (stdin and stdout both TTYs): in CI and pipes it never waits and
exits when the motion ends. Ctrl-C at any moment ends it with one line and exit code 130.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..ik import (
    Controller,
    FrameTask,
    PostureTask,
    RelativeFrameTask,
    RelativePositionTask,
)
from ..relative import Kinematics
from ..robot import Robot
from .arguments import (
    BROWSER_WAIT,
    DEFAULT_CROSSING,
    DEMO_DESCRIPTION,
    DEMO_EPILOG,
    check_demo_arguments,
    demo_arguments,
)
from .recording import PLOT_SUFFIXES, RECORD_SUFFIXES, check_output, require_matplotlib
from .report import progress_bar, progress_wanted, write_line
from .runner import DemoSummary, Session, TaskStats, ignore_ctrl_c, run

__all__ = ["DUAL_ARM_MEETING", "DemoSummary", "Session", "TaskStats", "main", "run_dual_arm", "run_hand"]

# Copied from the comment at the end of urdf/dual_arm.urdf: tools 0.25 m apart, facing each other.
DUAL_ARM_MEETING = {
    "torso_yaw": 0.0,
    **dict(zip([f"left_joint{i}" for i in range(1, 8)],
               [0.8808, 0.9651, -0.4571, -2.0366, 1.1162, 2.7259, 1.8842], strict=True)),
    **dict(zip([f"right_joint{i}" for i in range(1, 8)],
               [-1.2333, 1.2035, 0.8092, -2.0059, -1.4909, 2.3970, -0.1965], strict=True)),
}
# Copied from the comment at the end of urdf/hand.urdf (thumb-index and thumb-middle pinches).
HAND_PINCH_INDEX = {"index_abduction": 0.1357, "index_mcp": 0.3976, "index_pip": 1.3257,
                    "thumb_cmc_abduction": 0.7222, "thumb_cmc_flexion": 0.2967, "thumb_mcp": 0.7391}
HAND_PINCH_MIDDLE = {"middle_abduction": 0.1994, "middle_mcp": 0.4709, "middle_pip": 1.2948,
                     "thumb_cmc_abduction": 1.0774, "thumb_cmc_flexion": 0.712, "thumb_mcp": 0.4084}
HAND_RELAXED = {"index_mcp": 0.2, "index_pip": 0.3, "middle_mcp": 0.2, "middle_pip": 0.3,
                "ring_mcp": 0.2, "ring_pip": 0.3, "thumb_cmc_abduction": 0.3, "thumb_mcp": 0.2}

DEFAULT_DURATION = {"dual-arm": 10.0, "hand": 6.0, "talos-balance": 4.0}  # [s]
HAND_VIEW = (0.4, -1.0, 0.8)  # camera direction: from the thumb's side, above (the fingers lie along +x)
TARGET_SCALE = 0.6  # target triads, as a fraction of the viewer's scale (smaller than the frames')


def _smoothstep(s: float) -> float:
    s = min(max(s, 0.0), 1.0)
    return s * s * (3.0 - 2.0 * s)


def _body_twist(target: Callable[[float], pin.SE3], t: float, h: float = 1e-4) -> np.ndarray:
    """Body twist [linear; angular] (6,) of a pose trajectory T(t), by central differences."""
    return pin.log6(target(t - h).actInv(target(t + h))).vector / (2.0 * h)


# ---------------------------------------------------------------------------- dual arm
def run_dual_arm(*, duration: float = 10.0, headless: bool = False, loop: bool = False, dt: float = 0.01,
                 out: Callable[..., object] = print, radius: float = 0.05, period: float = 5.0, pivot: float = 0.35,
                 crossing: float = 0.0, session: Session | None = None) -> DemoSummary:
    """Two hands carry an imaginary box (see the module docstring), then cross.

    Crossing phase (after the carry, `crossing` seconds, not with `loop`): each tool is sent to
    where the other one is, which would drive the arms through each other; collision avoidance
    (:class:`reljac.ik.CollisionAvoidance`, 1 cm) keeps them apart, and the summary reports the
    smallest distance between any two bodies reached in the phase.

    Args:
        duration: [s] length of one cycle (the box pivots in its second half), and of the carry
            unless `loop`.
        crossing: [s] of the crossing phase (0: none).
        headless: no viewer, no sleeping (as fast as possible).
        loop: repeat cycles until Ctrl-C.
        dt: control period [s].
        out: where lines are printed.
        radius: [m] of the left tool's circle; period: [s] of one turn; pivot: [rad] largest
            turn of the box.
        session: waiting for a browser, holding the scene, record and plot (:class:`Session`).

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

    def left_target(t: float) -> pin.SE3:  # circle in the world y-z plane (facing the camera) through the start
        a = phase(max(t, 0.0))
        offset = radius * np.array([0.0, math.sin(a), 1.0 - math.cos(a)])
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
        viewer.show_target("left target", left.target, scale=TARGET_SCALE * viewer.scale)
        T_wl = viewer.visualizer.data.oMf[robot.frame_id("left_tool")]
        viewer.show_target("right target", T_wl * relative.target, scale=TARGET_SCALE * viewer.scale)

    cross = _Crossing(robot, dt) if crossing > 0 and not loop else None

    def controller_at(t):
        return controller if cross is None or t < duration - 1e-9 else cross.controller

    def targets_at(t, q):
        if cross is None or t < duration - 1e-9:
            set_targets(t, q)
        else:
            cross.start(q)

    def tracked_at(t):
        return [relative, left] if cross is None or t < duration - 1e-9 else []

    def update(viewer, t, q):
        update_viewer(viewer, t, q)
        if cross is not None and t >= duration - 1e-9:
            cross.show(viewer, q)

    total = duration + (crossing if cross is not None else 0.0)
    out(f"dual-arm demo: {'until Ctrl-C' if loop else f'{total:g} s'}, dt = {dt * 1e3:g} ms, "
        f"left tool on a {radius * 100:g} cm circle, the box pivots by up to {pivot:g} rad in the second half"
        + (f"; then {crossing:g} s of crossing the arms with collision avoidance" if cross is not None else ""))
    summary = run("dual-arm", robot, q0, controller_at, targets_at, tracked_at,
                  duration=total, headless=headless, loop=loop, dt=dt, out=out,
                  setup_viewer=setup_viewer, update_viewer=update, session=session, report=cross)
    return summary


class _Crossing:
    """The crossing phase: each tool sent where the other is, collision avoidance on."""

    MIN_DISTANCE = 0.01  # [m]

    def __init__(self, robot: Robot, dt: float) -> None:
        from ..collision import CollisionModel
        from ..ik import CollisionAvoidance

        self.robot, self.model = robot, CollisionModel(robot)
        self.lead = FrameTask("left_tool", gain=20.0, name="left crosses")
        self.follow = FrameTask("right_tool", gain=20.0, name="right crosses")
        self.posture = PostureTask(robot, gain=1.0, weight=0.1)
        avoidance = CollisionAvoidance(robot, model=self.model, min_distance=self.MIN_DISTANCE)
        self.controller = Controller(robot, [[self.lead], [self.follow], [self.posture]], dt=dt,
                                     constraints=[avoidance])
        self.started, self.lowest, self.last, self.shown = False, math.inf, math.inf, False

    def start(self, q: ArrayLike) -> None:
        """At the first step of the phase: targets swap the tools' positions. Then: measure."""
        if self.started:
            self.last = float(self.model.distances(q, within=0.1, jacobians=False).distance.min(initial=0.1))
            self.lowest = min(self.lowest, self.last)
            return
        self.started = True
        kin = Kinematics(self.robot, q)
        left, right = kin.placement("left_tool"), kin.placement("right_tool")
        self.lead.set_target(pin.SE3(left.rotation, right.translation))
        self.follow.set_target(pin.SE3(right.rotation, left.translation))
        self.posture.set_target(q)

    def show(self, viewer: Any, q: ArrayLike) -> None:
        if not self.shown:
            viewer.show_collisions(self.model, within=0.05)
            self.shown = True

    def status(self) -> str:
        """The progress line's text in this phase (it tracks no task error)."""
        far = self.last >= 0.1
        nearest = "no two bodies within 100 mm" if far else f"nearest bodies {self.last * 1e3:.2f} mm apart"
        return f"crossing, collision avoidance on: {nearest} (kept: >= {self.MIN_DISTANCE * 1e3:g} mm)"

    def notes(self) -> list[str]:
        if not self.started:
            return []
        return [f"crossing phase, collision avoidance on: smallest distance between two bodies "
                f"{self.lowest * 1e3:.2f} mm (kept: {self.MIN_DISTANCE * 1e3:g} mm)"]


# ---------------------------------------------------------------------------- hand
def run_hand(*, duration: float = 6.0, headless: bool = False, dt: float = 0.01, out: Callable[..., object] = print,
             session: Session | None = None) -> DemoSummary:
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
        viewer.frame_camera(HAND_VIEW)
        for tip in ("thumb_tip", "index_tip", "middle_tip"):
            viewer.show_frame(tip, label=tip)
        viewer.show_trail("thumb_tip", length=300)

    out(f"hand demo: {duration:g} s, dt = {dt * 1e3:g} ms, the thumb pinches the index tip, then the middle tip")
    return run("hand", robot, q0, lambda t: pinches[which(t)][1], set_targets, lambda t: [pinches[which(t)][0]],
                duration=duration, headless=headless, loop=False, dt=dt, out=out, setup_viewer=setup_viewer,
                session=session)


# ---------------------------------------------------------------------------- command line
def _interactive() -> bool:
    """True when both stdin and stdout are terminals (a person is watching, not CI or a pipe)."""
    try:
        return sys.stdin is not None and sys.stdout is not None and sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line (no usage block), exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"reljac: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``reljac demo`` on its own (``reljac`` itself has it as a subcommand)."""
    parser = _Parser(prog="reljac demo", description=DEMO_DESCRIPTION, epilog=DEMO_EPILOG)
    demo_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``reljac demo {dual-arm,hand,talos-balance} [options]`` (see ``--help``); returns 0, or 130 after Ctrl-C."""
    parser = build_parser()
    return command(parser.parse_args(argv), parser)


def command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the demo of parsed arguments (`parser`: where their mistakes are reported); returns 0,
    or 130 after Ctrl-C."""
    try:
        return _run(args, parser)
    except KeyboardInterrupt:
        ignore_ctrl_c()
        print("reljac: interrupted", file=sys.stderr, flush=True)
        return 130


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    check_demo_arguments(args, parser)
    session = Session()
    if args.record is not None:
        session.record = check_output(args.record, RECORD_SUFFIXES, "--record")
    if args.plot is not None:
        session.plot = check_output(args.plot, PLOT_SUFFIXES, "--plot")
        require_matplotlib()  # a clear error now rather than after the run
    if not args.headless and _interactive():
        session.wait = 0.0 if args.no_wait else BROWSER_WAIT
        session.hold = not args.exit
    duration = args.duration or DEFAULT_DURATION[args.demo]
    given = DEFAULT_CROSSING if args.crossing is None else args.crossing
    crossing = given if args.demo == "dual-arm" and not args.loop else 0.0
    show = args.headless and progress_wanted(args.progress)
    steps = None if args.loop else round((duration + crossing) / args.dt)
    with progress_bar(steps, f"demo {args.demo}", show=show, unit="step", delay=0.0 if args.progress else 0.5) as bar:
        session.progress, out = (None, print) if bar is None else (bar.update, write_line)
        if args.demo == "dual-arm":
            summary = run_dual_arm(duration=duration, headless=args.headless, loop=args.loop, crossing=given,
                                   dt=args.dt, session=session, out=out)
        elif args.demo == "hand":
            summary = run_hand(duration=duration, headless=args.headless, dt=args.dt, session=session, out=out)
        else:
            from .balance_demo import run_talos_balance

            summary = run_talos_balance(duration=duration, headless=args.headless, dt=args.dt, session=session,
                                        out=out)[0]
    if summary.interrupted:  # the table (marked "(interrupted)") is printed; one line says why it ended
        print("reljac: interrupted", file=sys.stderr, flush=True)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


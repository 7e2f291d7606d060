"""``reljac bench ik``: the controller on the peers' protocol, compiled against Python, and chatter.

Protocol (as the IK libraries it is compared with are run): bundled ``dual_arm``, reachable
targets drawn from random configurations, levels relative pose > left-tool pose > posture, a task
gain of one per step (gain = 1/dt, so the velocity limits bind on nearly every step), start at
the middle of the joint limits. Every time is also given as a multiple of one
``pin.computeFrameJacobian`` call timed in the same run.
"""

from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

from ..ik import Controller, FrameTask, PostureTask, RelativeFrameTask, RelativePositionTask, compiled_available
from ..ik.hierarchy import DampingPolicy
from ..relative import Kinematics, relative_jacobian
from ..report import format_table
from ..robot import Robot

LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
PAIR = ("left_tool", "right_tool")


def median_seconds(fn, *, runs: int = 200, inner: int = 20) -> float:
    """Median over `runs` samples of the mean time of `inner` back-to-back calls [s]."""
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return float(np.median(samples))


def frame_jacobian_call(robot: Robot) -> float:
    """[s] one pin.computeFrameJacobian (LOCAL_WORLD_ALIGNED) on `robot`: the unit of the tables."""
    model, data = robot.model, robot.model.createData()
    q, fid = robot.random_configuration(0), robot.model.nframes - 1
    return median_seconds(lambda: pin.computeFrameJacobian(model, data, q, fid, LWA), runs=300)


def middle(robot: Robot) -> np.ndarray:
    return robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))


def dual_arm_levels(robot: Robot, q_target: np.ndarray, gain: float, q_rest: np.ndarray):
    kin = Kinematics(robot, q_target)
    rel = RelativeFrameTask(*PAIR, gain=gain)
    rel.set_target(kin.relative_placement(*PAIR))
    left = FrameTask("left_tool", gain=gain)
    left.set_target(kin.placement("left_tool"))
    posture = PostureTask(robot, gain=1.0, weight=0.1)
    posture.set_target(q_rest)
    return [[rel], [left], [posture]]


def _met(task, kin) -> bool:
    e = task.error_norms(kin)
    return e["position"] < 1e-3 and e["orientation"] < 1e-2


class _Limits:
    """Counts position and velocity limit crossings of the steps q -> q_next."""

    def __init__(self, robot: Robot, dt: float) -> None:
        self.model, self.dt, self.crossings = robot.model, dt, 0
        self.lo, self.hi = robot.lower_limits, robot.upper_limits
        self.vmax = robot.velocity_limits

    def check(self, q: np.ndarray, q_next: np.ndarray) -> None:
        v = pin.difference(self.model, q, q_next) / self.dt
        bad_v = np.abs(v) > self.vmax * (1 + 1e-9) + 1e-12
        bad_q = (q_next < self.lo - 1e-9) | (q_next > self.hi + 1e-9)
        self.crossings += int(bad_v.any() or bad_q.any())


def run_targets(robot: Robot, targets, *, backend: str, dt: float, max_steps: int) -> dict:
    """Each target from the middle of the limits until the top level is met (or max_steps)."""
    q_mid = middle(robot)
    times, steps, top, second = [], [], 0, 0
    limits = _Limits(robot, dt)
    for q_target in targets:
        levels = dual_arm_levels(robot, q_target, 1.0 / dt, q_mid)
        controller = Controller(robot, levels, dt=dt, backend=backend)
        q, n = q_mid, 0
        while n < max_steps:
            start = time.perf_counter()
            q_next = controller.step(q)
            times.append(time.perf_counter() - start)
            limits.check(q, q_next)
            q, n = q_next, n + 1
            if _met(levels[0][0], controller.last_kinematics):
                break
        kin = Kinematics(robot, q)
        top += _met(levels[0][0], kin)
        second += _met(levels[1][0], kin)
        steps.append(n)
    return {"top": top / len(targets), "second": second / len(targets), "steps": np.array(steps),
            "times": np.array(times), "crossings": limits.crossings}


def chatter_fraction(robot: Robot, episodes: int, *, dt: float, steps: int = 300, **options) -> float:
    """Unreachable relative targets with one-step gains: over the last 100 steps of each episode,
    the fraction of steps in which some joint's velocity changes sign at more than half its limit."""
    rng = np.random.default_rng(7)
    q_mid, vmax = middle(robot), robot.velocity_limits
    flips = []
    for _ in range(episodes):
        levels = dual_arm_levels(robot, robot.random_configuration(rng), 1.0 / dt, q_mid)
        far = pin.SE3(pin.exp3(rng.normal(size=3)), np.array([0.0, 2.5, 0.0]) + 0.5 * rng.normal(size=3))
        levels[0][0].set_target(far)  # the hands cannot be 2.5 m apart
        controller = Controller(robot, levels, dt=dt, **options)
        q, velocities = q_mid, []
        for _ in range(steps):
            q_next = controller.step(q)
            velocities.append(pin.difference(robot.model, q, q_next) / dt)
            q = q_next
        v = np.array(velocities[-101:])
        fast = np.abs(v) > 0.5 * vmax
        flips.append((fast[1:] & fast[:-1] & (v[1:] * v[:-1] < 0)).any(axis=1).mean())
    return float(np.mean(flips))


def protocol_table(*, quick: bool = False) -> str:
    robot = Robot.bundled("dual_arm")
    n, dt, max_steps = (10 if quick else 100), 0.01, 500
    rng = np.random.default_rng(2026)
    targets = [robot.random_configuration(rng) for _ in range(n)]
    unit = frame_jacobian_call(robot)
    backends = (["compiled"] if compiled_available() else []) + ["python"]
    episodes = 3 if quick else 20
    rows, medians = [], {}
    for backend in backends:
        r = run_targets(robot, targets, backend=backend, dt=dt, max_steps=max_steps)
        med, p95 = np.median(r["times"]), np.percentile(r["times"], 95)
        medians[backend] = med
        chatter = chatter_fraction(robot, episodes, dt=dt, backend=backend)
        rows.append((backend, f"{100 * r['top']:.0f} %", f"{100 * r['second']:.0f} %",
                     f"{np.median(r['steps']):.0f} / {np.percentile(r['steps'], 95):.0f}",
                     f"{1e6 * med:.0f} / {1e6 * p95:.0f}", f"{med / unit:.0f} / {p95 / unit:.0f}",
                     r["crossings"], f"{100 * chatter:.1f} %"))
    old = chatter_fraction(robot, episodes, dt=dt, anti_chatter=False, damping=DampingPolicy(error_damping=0.0))
    rows.append(("(no anti-chatter, no error damping)", "", "", "", "", "", "", f"{100 * old:.1f} %"))
    title = (f"IK on dual_arm (nv={robot.nv}): {n} reachable targets, levels relative pose > left_tool pose > "
             f"posture, gain = 1/dt = {1 / dt:.0f} [1/s], start mid-limits, <= {max_steps} steps; success: "
             f"error < 1 mm and 1e-2 rad; unit: one pin.computeFrameJacobian = {1e6 * unit:.2f} us")
    table = format_table(["solver", "top level met", "second met", "steps med / p95", "step med / p95 [us]",
                          "step / unit med / p95", "steps crossing a limit", "chatter"], rows)
    if len(medians) == 2:
        table += f"\ncompiled step {medians['python'] / medians['compiled']:.1f}x faster than the Python solver's"
    return title + "\n" + table


def relative_table() -> str:
    """relative_jacobian and Kinematics per pair, in units of one computeFrameJacobian call."""
    robot = Robot.bundled("dual_arm")
    q = robot.random_configuration(0)
    unit = frame_jacobian_call(robot)
    one = median_seconds(lambda: relative_jacobian(robot, q, *PAIR))

    def per_pair():
        kin = Kinematics(robot, q)
        for a, b in (PAIR, ("torso", "left_tool"), ("torso", "right_tool"), ("right_tool", "left_link5")):
            kin.relative_jacobian(a, b)

    four = median_seconds(per_pair) / 4
    rows = [("relative_jacobian, one-shot", 1e6 * one, one / unit),
            ("Kinematics, 4 pairs, per pair", 1e6 * four, four / unit)]
    return ("relative Jacobians on dual_arm, in units of one pin.computeFrameJacobian\n"
            + format_table(["call", "time [us]", "/ unit"], rows))


def hand_table(*, quick: bool = False) -> str:
    hand = Robot.bundled("hand")
    n, dt = (10 if quick else 100), 0.01
    rng = np.random.default_rng(2027)
    unit = frame_jacobian_call(hand)
    times, steps, ok = [], [], 0
    for i in range(n):
        pinch = RelativePositionTask(("index_tip", "middle_tip")[i % 2], "thumb_tip", gain=1.0 / dt)
        pinch.set_target(np.zeros(3))
        posture = PostureTask(hand, gain=1.0, weight=0.01)
        posture.set_target(middle(hand))
        controller = Controller(hand, [[pinch], [posture]], dt=dt)
        q = hand.random_configuration(rng)
        for k in range(500):
            start = time.perf_counter()
            q = controller.step(q)
            times.append(time.perf_counter() - start)
            if pinch.error_norms(controller.last_kinematics)["position"] < 1e-3:
                ok += 1
                break
        steps.append(k + 1)
    med = float(np.median(times))
    rows = [("success", f"{100 * ok / n:.0f} %"), ("steps median / p95", f"{np.median(steps):.0f} / "
            f"{np.percentile(steps, 95):.0f}"), ("step median [us]", f"{1e6 * med:.0f}"),
            ("step / unit", f"{med / unit:.0f}")]
    return (f"IK on hand: {n} pinches (thumb_tip on index/middle tip) from random starts, gain = 1/dt, "
            "levels pinch > posture; success: < 1 mm\n" + format_table(["quantity", "value"], rows))


def ik_tables(*, quick: bool = False) -> str:
    """All IK tables of ``reljac bench ik``."""
    from ..ik.nlp import nlp_bench_rows

    out = [protocol_table(quick=quick), relative_table(), hand_table(quick=quick)]
    rows = nlp_bench_rows(n_targets=5 if quick else 20, seed=0)
    out.append("solve (controller iterations) vs solve_nlp (scipy L-BFGS-B, analytic gradients) on dual_arm\n"
               + format_table(["problem / solver", "success rate", "median time per solve [s]"], rows))
    return "\n\n".join(out)

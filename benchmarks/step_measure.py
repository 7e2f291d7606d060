"""Step medians of the compiled and Python controllers on example-robot-data robots.

Run ``python benchmarks/step_measure.py`` (needs example-robot-data): the bundled dual_arm on the bench
protocol's levels, Baxter by name (relative pose >
left pose > posture, gain 100 [1/s], dt 0.01 s) and TIAGo dual locked as in
``examples/tiago_dual_carry.py`` (box > lead > posture), each with and without CollisionAvoidance
on the default pairs; Talos by name whole body (floating base, legs free: feet held > box > lead
and CoM > posture, support region) beside its bare upper-body step (issue 20's figures); every median also in units of one ``pin.computeFrameJacobian`` call timed in
the same run. Not a test: speed is measured, not asserted (issue 17's figures). The Baxter stack is
also the one ``tests/test_step_allocations.py`` checks allocation-free (pyproject.toml puts this
folder on the tests' path).

``python benchmarks/step_measure.py compiled [STEPS]``: the compiled backend only, STEPS steps per run
(default 300; the first 30 are left out of the median and p99).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pinocchio as pin

import reljac
from reljac.ik import CollisionAvoidance, CoMTask, Controller, FrameTask, PostureTask, RelativeFrameTask, SupportRegion


def median_us(call, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e6


def unit(robot, frame) -> float:
    data, fid, q = robot.model.createData(), robot.frame_id(frame), robot.reference_configuration()
    return median_us(lambda: pin.computeFrameJacobian(robot.model, data, q, fid), 2000)


def run(robot, levels, q0, backend, avoid, steps=300, limits=()) -> tuple[float, float, int, float, float]:
    """(median, p99) of the step's wall-clock time [us], the pairs, and (median, p99) of the CPU time
    this thread spent in it [us] (time.thread_time: time the thread was not running, the other
    engineers' processes on a shared machine, is left out)."""
    constraints = [CollisionAvoidance(robot)] if avoid else list(limits)
    controller = Controller(robot, levels, dt=0.01, backend=backend, constraints=constraints)
    q, times, cpu = q0.copy(), [], []
    for _ in range(steps):
        c = time.thread_time_ns()
        t = time.perf_counter()
        q = controller.step(q)
        times.append(time.perf_counter() - t)
        cpu.append(time.thread_time_ns() - c)
    t_us, c_us = np.array(times[30:]) * 1e6, np.array(cpu[30:]) * 1e-3
    return (float(np.median(t_us)), float(np.percentile(t_us, 99)), len(constraints[0].pairs) if avoid else 0,
            float(np.median(c_us)), float(np.percentile(c_us, 99)))


def dual_arm():
    """The bundled dual_arm on the bench protocol's levels (relative pose > left-tool pose > posture)."""
    from reljac.apps.bench_common import dual_arm_levels, middle

    robot = reljac.Robot.bundled("dual_arm")
    q0 = middle(robot)
    return robot, dual_arm_levels(robot, q0 + 0.4, 100.0, q0), q0, "left_tool"


def baxter():
    robot = reljac.Robot.load("baxter")
    a, b = "left_gripper", "right_gripper"
    q0 = robot.normalize(0.5 * (robot.lower_limits + robot.upper_limits))
    kin = reljac.Kinematics(robot, q0)
    rel = RelativeFrameTask(a, b, gain=100.0)
    rel.set_target(kin.relative_placement(a, b))
    left = FrameTask(a, gain=100.0)
    T = kin.placement(a)
    left.set_target(pin.SE3(T.rotation, T.translation + [0.05, 0.05, 0.0]))
    return robot, [[rel], [left], [PostureTask(robot, gain=1.0, weight=0.1)]], q0, a


def tiago():
    L, R = "hand_left_tool_link", "hand_right_tool_link"
    robot = reljac.Robot.load("tiago_dual").locked(["caster_*", "suspension_*", "wheel_*", "hand_*"])
    box = RelativeFrameTask(L, R, gain=20.0)
    box.set_target(pin.SE3(pin.utils.rpyToMatrix(0.0, 0.0, math.pi), np.array([0.3, 0.0, 0.0])))
    lead = FrameTask(L, gain=20.0)
    R_wl = np.column_stack([(0.0, -1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)])
    lead.set_target(pin.SE3(R_wl, np.array([0.55, 0.15, 0.85])))
    posture = PostureTask(robot, gain=1.0, weight=0.1)
    return robot, [[box], [lead], [posture]], robot.reference_configuration(), L


TALOS_HANDS = ("gripper_left_base_link", "gripper_right_base_link")


def talos_box(robot, q0, gain=20.0):
    """box (the right gripper's pose in the left's, as at q0) and lead (the left gripper 10 cm forward)."""
    L, R = TALOS_HANDS
    kin = reljac.Kinematics(robot, q0)
    box = RelativeFrameTask(L, R, gain=gain)
    box.set_target(kin.relative_placement(L, R))
    lead = FrameTask(L, gain=gain)
    T = kin.placement(L)
    lead.set_target(pin.SE3(T.rotation, T.translation + [0.1, 0.0, 0.0]))
    return box, lead


def talos_whole_body(name):
    """Talos by name, legs free, floating base: feet held > box > lead and horizontal CoM > posture,
    with the support region of both soles (margin 2 cm)."""
    robot = reljac.Robot.load(name)
    q0 = robot.reference_configuration()
    kin = reljac.Kinematics(robot, q0)
    feet = [FrameTask(f, gain=100.0) for f in ("left_sole_link", "right_sole_link")]
    for foot in feet:
        foot.set_target(kin.placement(foot.frame_b))
    box, lead = talos_box(robot, q0)
    com = CoMTask(robot, axes="xy", gain=2.0)
    com.set_target_from_configuration(q0)
    posture = PostureTask(robot, gain=1.0, weight=np.r_[np.zeros(6), np.full(robot.nv - 6, 0.1)])
    region = SupportRegion(robot, [reljac.SupportContact.rectangle(f, 0.2, 0.11) for f in
                                   ("left_sole_link", "right_sole_link")])
    return robot, [feet, [box], [lead, com], [posture]], q0, TALOS_HANDS[0], [region]


def talos_upper_body():
    """The bare arm step of examples/talos_carry.py: legs, base and grippers locked (nv 18), box >
    lead > posture."""
    robot = reljac.Robot.load("talos").locked(["root_joint", "leg_*", "gripper_*"])
    q0 = robot.reference_configuration()
    box, lead = talos_box(robot, q0)
    return robot, [[box], [lead], [PostureTask(robot, gain=1.0, weight=0.1)]], q0, TALOS_HANDS[0], []


def main(backends=("compiled", "python"), steps: int = 300) -> None:
    warnings.simplefilter("ignore")  # the start-below-minimum warnings of the default pairs
    for make in (dual_arm, baxter, tiago):
        robot, levels, q0, frame = make()
        u = unit(robot, frame)
        print(f"{robot.name} (nv={robot.nv}); unit: one pin.computeFrameJacobian = {u:.2f} us")
        for backend in backends:
            for avoid in (False, True):
                median, p99, pairs, cpu, cpu99 = run(robot, levels, q0, backend, avoid,
                                                     steps if backend == "compiled" else 60)
                print(f"  {backend:8s} avoidance={'on ' if avoid else 'off'} pairs={pairs:5d} step median "
                      f"{median:8.1f} us = {median / u:6.1f} units, p99 {p99:8.1f} us; CPU time median "
                      f"{cpu:8.1f} us, p99 {cpu99:8.1f} us")
    for robot, levels, q0, frame, limits in (talos_upper_body(), talos_whole_body("talos"),
                                             talos_whole_body("talos_full")):
        u = unit(robot, frame)
        what = "whole body, CoM + support region" if limits else "upper body, legs and base locked"
        print(f"{robot.name} {what} (nv={robot.nv}); unit: one pin.computeFrameJacobian = {u:.2f} us")
        for backend in backends:
            median, p99, _, cpu, cpu99 = run(robot, levels, q0, backend, False,
                                             steps if backend == "compiled" else 60, limits)
            print(f"  {backend:8s} step median {median:8.1f} us = {median / u:6.1f} units, p99 {p99:8.1f} us; "
                  f"CPU time median {cpu:8.1f} us, p99 {cpu99:8.1f} us")


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["compiled"]:
        main(("compiled",), int(sys.argv[2]) if len(sys.argv) > 2 else 300)
    else:
        main()

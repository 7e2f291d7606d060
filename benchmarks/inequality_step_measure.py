"""The controller step with bounded levels, compiled vs Python (issue 29, item 4): the Talos stack
of benchmarks/inequality_measure.py (feet > grippers' relative pose in a box, 5 cm off its target
> lead gripper and horizontal CoM > posture with a joint-centring band; support region) stepped
through ``Controller.step`` on each backend, each from the same q0 on its own trajectory.

Run ``python benchmarks/inequality_step_measure.py [STEPS] [REPEATS]`` (needs example-robot-data):
each backend makes STEPS steps (default 100; the first 5 left out: warm-up), the run repeated
REPEATS times (default 3), and the compiled step of the same stack without bounds (the box a
target, the posture plain: the equality solver) for reference; printed: the median and the 90th percentile of one step's wall time over
all of them [us], then the fastest and the median of batches of 10 compiled steps taken in C++
along the same trajectories (with and without bounds), and the load average (a shared 2-core machine: figures move with it).
Not a test.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from reljac.ik import Controller, PostureTask

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_measure import talos_whole_body


def talos_bounded(bounded: bool = True):
    """The stack; `bounded` False: the same without bounds (the box a target, the posture plain)."""
    robot, (feet, (box,), lead_com, _), q0, _frame, limits = talos_whole_body("talos")
    target = box.target
    box.set_target(pin.SE3(target.rotation, target.translation + np.array([0.05, 0.0, 0.0])))  # off by 5 cm
    posture = PostureTask(robot, gain=1.0, weight=np.r_[np.zeros(6), np.full(robot.nv - 6, 0.1)])
    if bounded:
        box.set_bounds(np.r_[np.full(3, -0.03), np.full(3, -0.1)], np.r_[np.full(3, 0.03), np.full(3, 0.1)])
        posture.set_centring_band(0.5)
    return robot, [feet, [box], lead_com, [posture]], q0, limits


def controller_at_start(backend: str, bounded: bool) -> tuple[Controller, np.ndarray]:
    """A controller of the stack on `backend` and its start configuration q0."""
    robot, levels, q, limits = talos_bounded(bounded)
    controller = Controller(robot, levels, dt=0.01, constraints=limits, backend=backend)
    assert controller.compiled_step == (backend == "compiled")
    return controller, q


def step_times(backend: str, steps: int, bounded: bool = True) -> list[float]:
    controller, q = controller_at_start(backend, bounded)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        q = controller.step(q)
        times.append(time.perf_counter() - start)
    return times[5:]


def batch_times(bounded: bool, steps: int, repeats: int, size: int = 10) -> np.ndarray:
    """Per-step wall time [s] of batches of `size` compiled steps taken in C++ (the step's own loop,
    `core.run`: no Python between steps) along the same trajectories as step_times (from q0, the
    first 5 steps left out), `repeats` times: on a shared machine the fastest batch is the figure
    least moved by other work."""
    times = []
    for _ in range(repeats):
        controller, q = controller_at_start("compiled", bounded)
        for _ in range(5):
            q = controller.step(q)
        for _ in range((steps - 5) // size):
            start = time.perf_counter()
            q = controller.core_step.core.run(q, size, [], [])
            times.append((time.perf_counter() - start) / size)
    return np.array(times)


def main(steps: int = 100, repeats: int = 3) -> None:
    load = os.getloadavg()
    print(f"Talos whole body, 4 levels, 2 bounded; {steps} steps x {repeats} per backend")
    results = {}
    for backend in ("compiled", "python"):
        times = [t for _ in range(repeats) for t in step_times(backend, steps if backend == "compiled" else steps // 2)]
        results[backend] = 1e6 * np.array(times)
    results["compiled, no bounds"] = 1e6 * np.array(
        [t for _ in range(repeats) for t in step_times("compiled", steps, bounded=False)])
    for backend, us in results.items():
        print(f"  {backend:19s} step median {np.median(us):9.1f} us, p90 {np.percentile(us, 90):9.1f} us")
    print(f"  compiled / python: {np.median(results['python']) / np.median(results['compiled']):.1f}x faster")
    for bounded in (True, False):
        us = 1e6 * batch_times(bounded, steps, repeats)
        print(f"  compiled{'' if bounded else ', no bounds'}, batches of 10 steps in C++: fastest {us.min():.1f} us, "
              f"median {np.median(us):.1f} us per step")
    end = os.getloadavg()
    print(f"load average {load[0]:.2f} at the start, {end[0]:.2f} at the end (2 cores)")


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:3]))

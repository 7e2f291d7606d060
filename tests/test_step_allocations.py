"""No heap allocation inside a compiled controller step once it has run (reljac issue 17, item 4).

How allocations are counted: tests/alloc_count.c, built here with the system C compiler and
preloaded (LD_PRELOAD) into a Python subprocess, counts every malloc, calloc, realloc,
posix_memalign, aligned_alloc, memalign, valloc and pvalloc made while counting is on. C++'s
operator new goes through malloc in libstdc++, so Eigen's temporaries, std::vector growth and
whatever Pinocchio and coal allocate inside the step all count, which Eigen's
EIGEN_RUNTIME_NO_MALLOC (Eigen's own allocations only, and a separate test build of the core)
would miss. The step runs in C++ through ``_core.Step.run(q, n)``: n whole steps (velocity,
integration, guard) with no Python in between. The binding's own allocations (q in, q_next out,
the rows of the Python tasks) are the same for every n, so the difference between run(q, 1) and
run(q, 1 + N) is what N steps allocate, and it must be 0. The runs go on from where the warm-up
stopped (new configurations, collision rows and support edges coming and going): workspaces are
sized by the stack's structure, not by what one step happened to need.

One kind of allocation is counted apart: the message of a std::logic_error being constructed.
coal 3.0's COAL_ASSERT (coal/fwd.hh) builds its exception even when the check passes, so each GJK
distance between shapes (Baxter's boxes and cylinders) allocates three messages inside libcoal;
that is coal's to fix (or a coal built with COAL_TURN_ASSERT_INTO_EXCEPTION): counted, named in
the result, and left out of the assertion for Baxter (0 is asserted for the stacks without such
shapes). Everything else, reljac's, Eigen's, Pinocchio's and the rest of coal's, must be 0.

The stacks: the dual-arm protocol (relative pose > pose > posture with the default limits), the
same with CollisionAvoidance on the bundled dual_arm, Baxter with avoidance on its SRDF pairs,
Talos whole body with a CoMTask and a SupportRegion, the dual-arm stack with a custom Python
task beside the compiled ones (its rows, computed once in Python, handed to every step), and the
dual-arm stack with bounds (the relative pose in a box, the posture a centring band: levels solved
by the bounded solver, its 14-row identity band level included: Gram matrices of up to 48 rows
decompose in fixed-capacity buffers) and a planar stack with bounds on every level (box, ball, band).
Skipped only where no C compiler is found, or off Linux (the counter wraps glibc's __libc_malloc).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
WARM_UP, STEPS = 60, 200


@pytest.fixture(scope="module")
def counter(tmp_path_factory) -> Path:
    if not sys.platform.startswith("linux"):
        pytest.skip("the allocation counter wraps glibc's allocator (Linux)")
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("no C compiler to build the allocation counter")
    out = tmp_path_factory.mktemp("alloc") / "alloc_count.so"
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(out), str(HERE / "alloc_count.c")], check=True)
    return out


def count_in_subprocess(counter: Path, stack: str) -> dict:
    env = dict(os.environ, LD_PRELOAD=str(counter))
    done = subprocess.run([sys.executable, str(Path(__file__)), stack], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _requires(stack: str) -> None:
    from reljac.ik import compiled_available

    if not compiled_available():
        pytest.skip("the compiled core is not built")
    if stack in ("baxter_avoidance", "talos_balance", "talos_legs_free"):
        from helpers import example_robot_data_dir

        if example_robot_data_dir() is None:
            pytest.skip("example-robot-data is not installed")


@pytest.mark.parametrize("stack", ["dual_arm", "dual_arm_avoidance", "baxter_avoidance", "talos_balance",
                                   "talos_legs_free", "dual_arm_custom_task", "planar_bounded", "dual_arm_bounded"])
def test_a_compiled_step_allocates_nothing_after_warm_up(counter, stack):
    _requires(stack)
    result = count_in_subprocess(counter, stack)
    assert result["one_step"] > 0  # the counter counts (the binding allocates q_next)
    assert result["per_steps"] == 0, (f"{result['per_steps']} allocations in {STEPS} steps of {stack} (and "
                                      f"{result['messages']} exception messages built inside coal)")
    if stack != "baxter_avoidance":  # only Baxter's shapes go through coal's GJK
        assert result["messages"] == 0
    if "avoidance" in stack:
        assert max(result["rows"]) > 0  # collision rows were in play
    if stack.startswith("talos"):
        assert min(result["rows"]) >= 3  # the support region's edges were rows


# ----------------------------------------------------------------------------- the subprocess
def _dual_arm(avoid: bool = False, custom: bool = False, bounded: bool = False):
    """The bench protocol's levels on dual_arm; with avoidance, each tool sent where the other is
    (the arms meet); with a custom task, a Python task in the second level; bounded, the relative
    pose in a +-2 cm / +-0.05 rad box and the posture a centring band (levels with bounds)."""
    import reljac
    from reljac.apps.bench_common import dual_arm_levels, middle
    from reljac.ik import CollisionAvoidance, Controller, RelativePositionTask
    from reljac.ik.tasks import TaskTerms

    class HalfPosition(RelativePositionTask):  # compute overridden: its rows come from Python
        def compute(self, kin):
            e, J, ff = super().compute(kin)
            return TaskTerms(0.5 * e, 0.5 * J, 0.5 * ff)

    robot = reljac.Robot.bundled("dual_arm")
    q0 = middle(robot)
    levels = _crossing(robot, q0) if avoid else dual_arm_levels(robot, q0 + 0.4, 100.0, q0)
    if custom:
        task = HalfPosition("left_tool", "right_tool", gain=30.0)
        task.set_target([0.0, 0.4, 0.1])
        levels[1].insert(0, task)
    if bounded:
        levels[0][0].set_bounds(np.r_[np.full(3, -0.02), np.full(3, -0.05)], np.r_[np.full(3, 0.02), np.full(3, 0.05)])
        levels[2][0].set_centring_band(0.6)
    constraints = [CollisionAvoidance(robot)] if avoid else []
    return Controller(robot, levels, dt=0.01, constraints=constraints, backend="compiled"), q0


def _crossing(robot, q0):
    import reljac
    from reljac.ik import FrameTask, PostureTask

    kin = reljac.Kinematics(robot, q0)
    left, right = FrameTask("left_tool", gain=20.0), FrameTask("right_tool", gain=20.0)
    left.set_target(kin.placement("right_tool"))
    right.set_target(kin.placement("left_tool"))
    return [[left, right], [PostureTask(robot, gain=1.0, weight=0.1)]]


def _planar_bounded():
    """The two-link arm with bounds on both levels: a box the tip starts outside of, then a ball
    (compiled BallTask) and a centring band (an identity level with bounds) below it."""
    import reljac
    from reljac.ik import Controller, PostureTask, RelativePositionTask
    from reljac.ik.tasks.ball import BallTask

    robot = reljac.Robot.bundled("planar_2link")
    q0 = np.array([0.2, 0.4])
    p = reljac.Kinematics(robot, q0).relative_placement("base_link", "tip").translation
    box = RelativePositionTask("base_link", "tip", gain=5.0, weight=[1, 1, 0])
    box.set_target(p + np.array([-0.25, 0.1, 0.0]))
    box.set_bounds(-0.05, 0.05)
    inner = RelativePositionTask("base_link", "tip", weight=[1, 1, 0])
    inner.set_target(p + np.array([0.1, -0.3, 0.0]))
    band = PostureTask(robot, gain=5.0)
    band.set_centring_band(0.6)
    levels = [[box], [BallTask(inner, 0.05, gain=2.0)], [band]]
    return Controller(robot, levels, dt=0.01, backend="compiled"), q0


def _baxter():
    import step_measure

    from reljac.ik import CollisionAvoidance, Controller

    robot, levels, q0, _ = step_measure.baxter()
    avoidance = CollisionAvoidance(robot)
    return Controller(robot, levels, dt=0.01, constraints=[avoidance], backend="compiled"), q0


def _talos(masked: int = 6):
    """masked: the posture's joints of weight 0 (the first ones: the floating base, then the legs;
    more than 12 took dynamic-size matrices every step)."""
    from helpers import feet_and_reaching_hand

    from reljac import Robot, SupportContact
    from reljac.ik import CoMTask, Controller, PostureTask, SupportRegion

    robot = Robot.load("talos")
    q0 = robot.reference_configuration()
    feet, hand, _ = feet_and_reaching_hand(robot, q0, [0.8, 0.1, -0.3])
    com = CoMTask(robot, axes="xy", gain=2.0, max_speed=0.05)
    com.set_target_from_configuration(q0)
    posture = PostureTask(robot, weight=np.r_[np.zeros(masked), np.ones(robot.nv - masked)])
    soles = ("left_sole_link", "right_sole_link")
    region = SupportRegion(robot, [SupportContact.rectangle(f, 0.2, 0.11) for f in soles])
    levels = [feet, [hand], [com], [posture]]
    return Controller(robot, levels, dt=0.01, constraints=[region], backend="compiled"), q0


def main(stack: str) -> None:
    import warnings

    warnings.simplefilter("ignore")  # start-below-minimum warnings of the default pairs
    makers = {"dual_arm": _dual_arm, "dual_arm_avoidance": lambda: _dual_arm(avoid=True),
              "baxter_avoidance": _baxter, "talos_balance": _talos, "talos_legs_free": lambda: _talos(masked=18),
              "dual_arm_custom_task": lambda: _dual_arm(False, custom=True),
              "dual_arm_bounded": lambda: _dual_arm(bounded=True), "planar_bounded": _planar_bounded}
    controller, q0 = makers[stack]()
    step = controller._step
    q = controller.step(q0)  # the descriptions reach the core
    tasks, limits = step.python_rows(q) if step.has_python_parts else ([], [])
    core = step.core
    q = core.run(q, WARM_UP, tasks, limits)
    lib = ctypes.CDLL(None)
    lib.reljac_alloc_count.restype = ctypes.c_long
    gc.disable()
    lib.reljac_alloc_exception_messages.restype = ctypes.c_long
    lib.reljac_alloc_counting(1)
    core.run(q, 1, tasks, limits)  # what the binding allocates once (first calls) is left out
    start, start_messages = lib.reljac_alloc_count(), lib.reljac_alloc_exception_messages()
    core.run(q, 1, tasks, limits)
    one, one_messages = lib.reljac_alloc_count(), lib.reljac_alloc_exception_messages()
    core.run(q, 1 + STEPS, tasks, limits)
    many, many_messages = lib.reljac_alloc_count(), lib.reljac_alloc_exception_messages()
    lib.reljac_alloc_counting(0)
    gc.enable()
    rows = []
    for _ in range(STEPS):  # the same steps again, one call each, to see the rows in play
        q = core.run(q, 1, tasks, limits)
        rows.append(len(core.row_sources()))  # rows of C (collision or support rows)
    print(json.dumps({"one_step": one - start, "per_steps": (many - one) - (one - start), "rows": rows,
                      "messages": (many_messages - one_messages) - (one_messages - start_messages)}))


if __name__ == "__main__":
    sys.path[:0] = [str(HERE), str(HERE.parent / "benchmarks")]  # helpers; step_measure's stacks
    main(sys.argv[1])

"""Test helpers: finite differences on the configuration manifold and external robot files.

Everything here is computed from Pinocchio's forward kinematics and pin.integrate / pin.log3
directly, never through reljac.relative, so it is an independent oracle for that module.
"""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import strategies as st

from reljac.ik import compiled_available
from reljac.robots import EXAMPLE_ROBOTS as ROBOT_TABLE
from reljac.robots import example_robot_data_dir  # the tests take it from here too

# The example-robot-data robots the tests load from their files: test name -> name in reljac's
# table (reljac.robots.EXAMPLE_ROBOTS, which holds each one's files and free-flyer choice).
#: a test parametrized over both solvers: the Python one (the specification) and the compiled one,
#: skipped where the core is not built
BACKENDS = ["python", pytest.param("compiled", marks=pytest.mark.skipif(not compiled_available(),
                                                                        reason="the compiled core is not built"))]
TESTED_ROBOTS = {"panda": "panda", "ur5": "ur5", "baxter": "baxter", "tiago_dual": "tiago_dual", "talos": "talos",
                 "allegro": "allegro_right_hand", "double_pendulum_continuous": "double_pendulum_continuous",
                 "solo12": "solo12"}
#: test name -> (URDF path under example-robot-data's robots/, floating base)
EXAMPLE_ROBOTS = {name: (ROBOT_TABLE[entry].urdf, ROBOT_TABLE[entry].free_flyer)
                  for name, entry in TESTED_ROBOTS.items()}


def example_robot(name: str):
    """A reljac.Robot of example-robot-data (EXAMPLE_ROBOTS), or None when it is not installed."""
    import reljac

    root = example_robot_data_dir()
    if root is None:
        return None
    path, floating = EXAMPLE_ROBOTS[name]
    return reljac.Robot.from_urdf(root / path, floating_base=floating, package_dirs=[root.parent])


def placements(robot, q) -> list[pin.SE3]:
    """T_wf of every frame at q, from Pinocchio's forward kinematics."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return [pin.SE3(T) for T in data.oMf]


def relative_from(placements_, a: int, b: int) -> pin.SE3:
    return placements_[a].inverse() * placements_[b]


def numeric_relative_jacobians(robot, q, pairs, eps: float = 1e-6) -> dict:
    """Central finite differences of T_ab over the tangent space: {(a, b): (6, nv)}.

    Column k: linear = d/dt p_ab (coordinates in a); angular = w_ab in a, from
    R_ab(q+) R_ab(q-)^T = exp([w] 2 eps).
    """
    out = {pair: np.zeros((6, robot.nv)) for pair in pairs}
    data = robot.model.createData()  # one for all the perturbations (a big model's takes 0.2 s)
    frames = sorted({f for pair in pairs for f in pair})

    def placements_at(q_: np.ndarray) -> dict[int, pin.SE3]:
        """T_wf of the frames in `pairs` (copies) at q_, from Pinocchio's forward kinematics."""
        pin.framesForwardKinematics(robot.model, data, q_)
        return {f: pin.SE3(data.oMf[f]) for f in frames}

    for k in range(robot.nv):
        dv = np.zeros(robot.nv)
        dv[k] = eps
        plus = placements_at(pin.integrate(robot.model, q, dv))
        minus = placements_at(pin.integrate(robot.model, q, -dv))
        for (a, b), J in out.items():
            Tp, Tm = relative_from(plus, a, b), relative_from(minus, a, b)
            J[:3, k] = (Tp.translation - Tm.translation) / (2 * eps)
            J[3:, k] = pin.log3(Tp.rotation @ Tm.rotation.T) / (2 * eps)
    return out


def assert_jacobian_rates_match_finite_differences(robot, q, v, triples, eps: float = 1e-6, note: str = "") -> None:
    """dJ_ab/dt (Kinematics) against central differences of J_ab along v through pin.integrate,
    for each (a, b, c) in `triples`, expressed in a, b, the world and c."""
    from reljac.relative import Kinematics

    kin = Kinematics(robot, q, v)
    plus = Kinematics(robot, pin.integrate(robot.model, q, eps * v))
    minus = Kinematics(robot, pin.integrate(robot.model, q, -eps * v))
    for a, b, c in triples:
        for where in ("a", "b", "world", c):
            dJ = kin.relative_jacobian_time_variation(a, b, expressed_in=where)
            fd = (plus.relative_jacobian(a, b, expressed_in=where)
                  - minus.relative_jacobian(a, b, expressed_in=where)) / (2 * eps)
            np.testing.assert_allclose(dJ, fd, atol=1e-6 * max(1.0, np.abs(fd).max()),
                                       err_msg=f"{a}->{b} in {where}{note}")


def load_random_tree(directory, text: str, *, floating_base: bool = False):
    """The Robot of a random URDF tree written to `directory`, or None when Pinocchio refuses it
    for one of the expected reasons (its mimic order; a second free-flyer)."""
    import reljac

    path = directory / "random.urdf"
    path.write_text(text)
    try:
        return reljac.Robot.from_urdf(path, floating_base=floating_base)
    except reljac.URDFError as exc:
        assert "mimic" in str(exc) or "already has a floating root joint" in str(exc), str(exc)
        return None


def interesting_frames(robot) -> list[int]:
    """Ids of link frames and fixed frames (the ones users name), plus the universe."""
    keep = (pin.FrameType.BODY, pin.FrameType.FIXED_JOINT)
    return [0] + [i for i, f in enumerate(robot.model.frames) if f.type in keep]


def random_pairs(robot, rng, n: int) -> list[tuple[int, int]]:
    frames = interesting_frames(robot)
    return [tuple(int(x) for x in rng.choice(frames, size=2, replace=True)) for _ in range(n)]


JOINT_TYPES = ["revolute", "continuous", "prismatic", "fixed", "floating", "planar"]


@st.composite
def urdf_trees(draw, *, pinocchio_compatible: bool = True) -> str:
    """Random URDF trees: random shapes, joint types, rotated origins, non-unit oblique axes and
    mimic joints with multipliers and offsets (up to 12 links).

    With `pinocchio_compatible`, mimics are only those Pinocchio represents: follower and leader
    revolute or prismatic, the leader not itself a mimic. Otherwise continuous joints mimic and
    are mimicked too, and mimics chain (the in-house reference supports these).
    """
    count = draw(st.integers(min_value=2, max_value=12))
    rng = np.random.default_rng(draw(st.integers(min_value=0, max_value=2**32 - 1)))
    links = "".join(f'<link name="l{i}"/>' for i in range(count))
    mimicking = ("revolute", "prismatic") if pinocchio_compatible else ("revolute", "continuous", "prismatic")
    joints, leaders = [], []
    for i in range(1, count):
        kind = draw(st.sampled_from(JOINT_TYPES))
        xyz = " ".join(f"{x:.4f}" for x in rng.uniform(-0.5, 0.5, 3))
        rpy = " ".join(f"{x:.4f}" for x in rng.uniform(-np.pi, np.pi, 3))
        axis = rng.normal(size=3)
        axis = " ".join(f"{x:.4f}" for x in axis * rng.uniform(0.2, 3.0) / np.linalg.norm(axis))
        if kind == "planar":  # (it moves in its frame's x-y plane: the normal must be +z, at any length)
            axis = f"0 0 {rng.uniform(0.2, 3.0):.4f}"
        mimic = ""
        is_mimic = kind in mimicking and leaders and draw(st.booleans())
        if is_mimic:
            leader = draw(st.sampled_from(leaders))
            mimic = f'<mimic joint="{leader}" multiplier="{rng.uniform(-2, 2):.3f}" offset="{rng.uniform(-1, 1):.3f}"/>'
        if kind in mimicking and not (is_mimic and pinocchio_compatible):
            leaders.append(f"j{i}")
        parent = draw(st.integers(min_value=0, max_value=i - 1))
        joints.append(
            f'<joint name="j{i}" type="{kind}"><parent link="l{parent}"/><child link="l{i}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            f'<limit lower="-2" upper="2" effort="1" velocity="1"/>{mimic}</joint>'
        )
    return f'<robot name="random">{links}{"".join(joints)}</robot>'


def feet_and_reaching_hand(robot, q0, reach, feet=("left_sole_link", "right_sole_link"),
                           hand="gripper_left_base_link"):
    """Tasks for a standing humanoid: each foot held where it is at q0 (6D, one-step gain) and a
    hand's position pulled by `reach` (3,) [m] in the world. Returns (feet tasks, hand task, target)."""
    from reljac import Kinematics
    from reljac.ik import FrameTask

    kin = Kinematics(robot, q0)
    held = [FrameTask(f, gain=100) for f in feet]
    for foot in held:
        foot.set_target(kin.placement(foot.frame_b))
    pulled = FrameTask(hand, gain=5, weight=[1, 1, 1, 0, 0, 0])
    target = kin.placement(hand)
    target.translation += np.asarray(reach, dtype=float)
    pulled.set_target(target)
    return held, pulled, target


def run_once_per_session(argv: list[str], *, timeout: float) -> subprocess.CompletedProcess:
    """subprocess.run(argv, capture_output=True, text=True, timeout=timeout), run once in the whole
    test session and shared by every module that asks for the same argv (and environment): the
    first asker runs it, the others, on any pytest-xdist worker, wait for it and read what it
    printed. For commands that only print (an example run headless, quoted by two modules)."""
    import fcntl
    import hashlib
    import json
    import tempfile

    folder = Path(os.environ.get("PYTEST_RELJAC_SHARED_RUNS") or tempfile.mkdtemp())  # conftest.py sets it
    folder.mkdir(exist_ok=True)
    env = sorted((k, v) for k, v in os.environ.items() if not k.startswith("PYTEST_"))  # a test's own name aside
    key = hashlib.sha256(json.dumps([argv, env]).encode()).hexdigest()[:24]
    done = folder / f"{key}.json"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one run; the others wait here for its result
        if not done.exists():
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
            done.write_text(json.dumps([proc.returncode, proc.stdout, proc.stderr]))
        code, out, err = json.loads(done.read_text())
    return subprocess.CompletedProcess(argv, code, out, err)


class SideBySide:
    """Independent commands started at once, to run side by side (at most `jobs` at a time)
    rather than one after another; each test then takes its own result with :meth:`result`.

    Each command still runs alone in a fresh process with its own arguments, environment and
    timeout, and is checked by its own test: only the order in time changes. Used by modules whose
    tests each wait for a subprocess that computes (the examples, the README's snippets), which on a
    2-core machine otherwise leave a core idle. Not for commands that hold ports or time signals.
    """

    def __init__(self, jobs: int | None = None) -> None:
        self._pool = ThreadPoolExecutor(max_workers=jobs or max(2, min(4, os.cpu_count() or 2)))
        self._runs: dict[object, Future] = {}

    def start(self, key: object, argv: list, **kwargs) -> None:
        """subprocess.run(argv, capture_output=True, text=True, **kwargs) in the background."""
        kwargs = {"capture_output": True, "text": True, **kwargs}
        self._runs[key] = self._pool.submit(subprocess.run, argv, **kwargs)

    def start_shared(self, key: object, argv: list, *, timeout: float) -> None:
        """:func:`run_once_per_session` (argv) in the background: a command another module runs too."""
        self._runs[key] = self._pool.submit(run_once_per_session, argv, timeout=timeout)

    def __contains__(self, key: object) -> bool:
        return key in self._runs

    def result(self, key: object) -> subprocess.CompletedProcess:
        """The finished command started under `key` (its exception, such as TimeoutExpired, re-raised)."""
        return self._runs[key].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def wait_for(condition, what: str, timeout: float = 30.0):
    """condition()'s first true value, polled every 10 ms; TimeoutError naming `what` after
    `timeout` seconds (a bound on a hang, not a claim about speed)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout} s for {what}")
        time.sleep(0.01)
    return value


def selected_tests(request) -> list:
    """The tests of the requesting module's file that this session runs, in their order (what a
    module-scoped fixture needs to start for them, and no more)."""
    return [item for item in request.session.items if getattr(item, "module", None) is request.module]

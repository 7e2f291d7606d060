"""``reljac bench ik``, its table of the hierarchy with inequality rows at any level (issue 29): a
Talos whole-body stack of four levels, two of them bounded, timed per solve, in units of one
pin.computeFrameJacobian call timed in the same run (the other tables' unit).

The stack (Talos by name, example-robot-data; floating base, legs free, nv 38): feet held (12
rows) > the grippers' relative pose kept within a box (+-3 cm, +-0.1 rad; the box's target 5 cm
off, so rows are active) > lead gripper 10 cm forward and horizontal CoM (8 rows) > posture with a
joint-centring band (32 masked identity rows), under the joint limits and the support region of
both soles (2 cm margin). A controller steps it on the Python backend and each solve's arguments
are recorded; each recorded solve is then timed on the compiled solver (through
reljac.ik.solvers.backend, the call the controller makes) and on the Python specification.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pinocchio as pin

from ..exceptions import URDFError
from ..ik import CoMTask, Controller, FrameTask, PostureTask, RelativeFrameTask, SupportRegion, compiled_available
from ..ik.solvers.backend import solver as backend_solver
from ..relative import Kinematics
from ..robot import Robot
from ..support import SupportContact
from .bench_common import Progress, done, frame_jacobian_call, median_seconds
from .report import format_table

HANDS = ("gripper_left_base_link", "gripper_right_base_link")
SOLES = ("left_sole_link", "right_sole_link")


def talos_whole_body(robot: Robot, q0: np.ndarray) -> tuple[list[FrameTask], RelativeFrameTask, FrameTask, CoMTask,
                                                             PostureTask, SupportRegion]:
    """Talos's whole-body tasks at q0 (nq,): the soles held (level 0), the box between the
    grippers at its pose at q0 (level 1), the lead gripper 10 cm ahead and the horizontal centre
    of mass where it is (level 2), the posture, floating base masked (level 3); and the support
    region of both soles (a limit). (feet, box, lead, com, posture, region)."""
    kin = Kinematics(robot, q0)
    feet = [FrameTask(f, gain=100.0) for f in SOLES]
    for foot in feet:
        foot.set_target(kin.placement(foot.frame_b))
    left, right = HANDS
    box = RelativeFrameTask(left, right, gain=20.0)
    box.set_target(kin.relative_placement(left, right))
    lead = FrameTask(left, gain=20.0)
    T = kin.placement(left)
    lead.set_target(pin.SE3(T.rotation, T.translation + np.array([0.1, 0.0, 0.0])))
    com = CoMTask(robot, axes="xy", gain=2.0)
    com.set_target_from_configuration(q0)
    posture = PostureTask(robot, gain=1.0, weight=np.r_[np.zeros(6), np.full(robot.nv - 6, 0.1)])
    region = SupportRegion(robot, [SupportContact.rectangle(f, 0.2, 0.11) for f in SOLES])
    return feet, box, lead, com, posture, region


def bounded_talos() -> tuple[Robot, Controller, np.ndarray] | None:
    """The bounded Talos stack's robot, controller (Python backend) and start q, or None when
    Talos is not installed (example-robot-data)."""
    try:
        robot = Robot.load("talos")
    except URDFError:
        return None
    q0 = robot.reference_configuration()
    feet, box, lead, com, posture, region = talos_whole_body(robot, q0)
    T = Kinematics(robot, q0).relative_placement(*HANDS)
    box.set_target(pin.SE3(T.rotation, T.translation + np.array([0.05, 0.0, 0.0])))
    box.set_bounds(np.r_[np.full(3, -0.03), np.full(3, -0.1)], np.r_[np.full(3, 0.03), np.full(3, 0.1)])
    posture.set_centring_band(0.5)
    controller = Controller(robot, [feet, [box], [lead, com], [posture]], dt=0.01, backend="python",
                            constraints=[region])
    return robot, controller, q0


def recorded_solves(steps: int) -> tuple[Robot, list[tuple]] | None:
    """The arguments ``(levels, lo, hi, C, d, policy)`` of the solves of `steps` controller steps
    of the bounded Talos stack (None without Talos)."""
    made = bounded_talos()
    if made is None:
        return None
    robot, controller, q = made
    recorded: list[tuple] = []
    for _ in range(steps):
        q = controller.step(q)
        assert controller.last_problem is not None  # (a step on the Python backend)
        recorded.append(controller.last_problem)
    return robot, recorded


def inequality_units(*, quick: bool = False) -> int:
    """Units of work :func:`inequality_results` reports (one per recorded solve)."""
    return 5 if quick else 20


def inequality_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """{``robot``, ``nv``, ``solves`` (recorded), ``unit_s``, ``rows``: [{``solver``, ``time_s``
    (median per solve over the recorded solves [s]), ``units``}]}; {``robot``: None} without Talos."""
    made = recorded_solves(inequality_units(quick=quick))
    if made is None:
        done(progress, inequality_units(quick=quick))
        return {"robot": None}
    robot, recorded = made
    unit = frame_jacobian_call(robot)
    solvers = [("Python specification (reljac.ik.solvers.inequality)", backend_solver("python"), 1, 1)]
    if compiled_available():
        solvers.insert(0, ("compiled (inequality.cpp), through reljac.ik.solvers.backend", backend_solver("compiled"),
                           5 if quick else 20, 5))
    times: dict[str, list[float]] = {name: [] for name, *_ in solvers}
    for args in recorded:
        for name, solver, runs, inner in solvers:
            times[name].append(median_seconds(partial(solver, *args), runs=runs, inner=inner))
        done(progress)
    rows = [{"solver": name, "time_s": float(np.median(times[name])),
             "units": float(np.median(times[name])) / unit} for name, *_ in solvers]
    return {"robot": robot.name, "nv": robot.nv, "solves": len(recorded), "unit_s": unit, "rows": rows}


def inequality_text(r: dict[str, Any]) -> str:
    if r["robot"] is None:
        return "inequality levels: Talos is not installed (example-robot-data): no table"
    rows = [(row["solver"], 1e6 * row["time_s"], row["units"]) for row in r["rows"]]
    return (f"inequality levels at any priority, {r['robot']} whole body (nv {r['nv']}): 4 levels, 2 bounded, "
            f"under joint limits and the support region; median per solve over {r['solves']} recorded solves, "
            f"in units of one pin.computeFrameJacobian ({1e6 * r['unit_s']:.2f} us)\n"
            + format_table(["solver", "time [us]", "/ unit"], rows))

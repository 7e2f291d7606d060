"""``reljac demo talos-balance``: Talos carries a box and reaches forward until balance stops it.

Talos by name (example-robot-data; floating base, legs free) stands in its SRDF posture
``half_sitting``. Grasp: both grippers go in front of the chest, 0.4 m apart (one ``solve`` under
the feet and the support region). Then the stack of :func:`reljac.ik.humanoid_stack`, highest
first: both soles held > the pose of the right gripper in the left one (the box stays rigid) >
the pelvis kept over the feet (x-y of ``base_link``) > the left gripper sent 1 m forward (out of
reach, at most 0.15 m/s) > the reference posture; the support region of the soles (shrunk by
2 cm) is held above every level. The centre of mass moves forward with the box until it reaches
the shrunk region's edge, where the reach stops, short of its target.

With the pelvis free, Talos sticks its hips out behind and leans over, and reaches about twice
as far before its torso and arm joints stop it; the support region is then one limit among many.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin

from ..ik import FrameTask, HumanoidStack, humanoid_stack, solve
from ..relative import Kinematics
from ..robot import Robot
from .runner import DemoSummary, Session, run

LEFT, RIGHT = "gripper_left_base_link", "gripper_right_base_link"
FEET = ("left_sole_link", "right_sole_link")
PELVIS = "base_link"
GRASP = {LEFT: (0.35, 0.2, 0.95), RIGHT: (0.35, -0.2, 0.95)}  # [m] in w, in front of the chest
REACH = (1.0, 0.0, 0.0)  # [m]: the lead gripper's target, from where it grasped (out of reach)
MARGIN = 0.02  # [m] kept from the support region's edges
REACH_SPEED = 0.15  # [m/s] at most
POSITION = (1, 1, 1, 0, 0, 0)  # weights: position only
ON_EDGE = 1e-4  # [m]: the centre of mass this near the shrunk edge is on it
VIEW = (0.35, 1.0, 0.9)  # camera direction: from Talos' left, above (the reach and the feet in sight)


@dataclass
class TalosBalance:
    """The scenario's robot, tasks and running figures (see the module docstring).

    Attributes:
        robot, stack (:class:`~reljac.ik.HumanoidStack`), lead (the reaching FrameTask), pelvis,
        q_grasp: the configuration after the grasp (nq,), start: the lead gripper's position
        there (3,) [m]; target (3,) [m]; margins: per step the centre of mass's distance to the
        region's edge [m]; limits: per step the constraints any level's report names.
    """

    robot: Robot
    stack: HumanoidStack
    lead: FrameTask
    pelvis: FrameTask
    q_grasp: np.ndarray
    start: np.ndarray
    target: np.ndarray
    margins: list[float] = field(default_factory=list)
    on_edge: list[list[str]] = field(default_factory=list)
    limits: list[list[tuple[str, str]]] = field(default_factory=list)
    stopped: list[list[tuple[str, str]]] = field(default_factory=list)  # (limited_by, the level's first task)
    reaches: list[float] = field(default_factory=list)
    reach_level: list[tuple[float, bool]] = field(default_factory=list)

    @property
    def reach(self) -> float:
        """How far the lead gripper went from where it grasped [m] (at the last step measured)."""
        return self.reaches[-1] if self.reaches else 0.0

    @classmethod
    def build(cls, robot: Robot | None = None, backend: str | None = None) -> TalosBalance:
        """Load Talos (by name), grasp, and build the reaching stack."""
        robot = robot or Robot.load("talos")
        q0 = robot.reference_configuration()
        standing = humanoid_stack(robot, q0, feet=FEET, margin=MARGIN, com_priority="none")
        hands = []
        for frame, p in GRASP.items():
            task = FrameTask(frame, gain=20.0, weight=POSITION)
            task.set_target(pin.SE3(np.eye(3), np.array(p)))
            hands.append(task)
        grasp = solve(robot, q0, [standing.levels[0], hands, *standing.levels[1:]], tol=1e-3,
                      constraints=standing.constraints, backend=backend)
        q = grasp.q
        kin = Kinematics(robot, q)
        start = kin.placement(LEFT).translation.copy()
        lead = FrameTask(LEFT, gain=5.0, weight=POSITION, max_speed=REACH_SPEED, name="reach")
        lead.set_target(pin.SE3(np.eye(3), start + REACH))
        pelvis = FrameTask(PELVIS, gain=10.0, weight=(1, 1, 0, 0, 0, 0), name="pelvis over the feet")
        pelvis.set_target(kin.placement(PELVIS))
        stack = humanoid_stack(robot, q, feet=FEET, hands=(LEFT, RIGHT), margin=MARGIN, tasks=[[pelvis], [lead]],
                               com_priority="none")
        stack.hands.name = "box"  # type: ignore[union-attr]
        return cls(robot, stack, lead, pelvis, q, start, start + np.array(REACH))

    def measure(self, q: np.ndarray, reports: list[Any]) -> None:
        """Record at q, after a step whose reports are `reports`: the margin, the edges the
        centre of mass is on, the constraints each level's report names, the reach and its level."""
        kin = Kinematics(self.robot, q)
        region, c = self.stack.support.polygon(kin), kin.center_of_mass()
        self.margins.append(self.stack.support.com_distance(kin))
        gaps = region.offsets - region.normals @ c[:2] - self.stack.support.margin  # [m] to each shrunk edge
        n = len(gaps)
        self.on_edge.append([f"support region (edge {i + 1} of {n})" for i in np.flatnonzero(gaps < ON_EDGE)])
        self.limits.append([(name, report.tasks[0]) for report in reports for name in report.saturated_constraints])
        self.stopped.append([(report.limited_by, report.tasks[0]) for report in reports if report.tasks])
        self.reaches.append(float(np.linalg.norm(kin.placement(LEFT).translation - self.start)))
        level = next(r for r in reports if self.lead.name in r.tasks)
        self.reach_level.append((level.scale, level.met))

    def limiting(self, last: int = 20) -> list[str]:
        """The constraints the reports named in the last `last` steps, most named first."""
        names = [name for step in self.limits[-last:] for name, _ in step]
        return sorted(set(names), key=lambda n: (-names.count(n), n))

    def notes(self) -> list[str]:
        if not self.margins:
            return []
        asked = float(np.linalg.norm(self.target - self.start))
        scale, met = self.reach_level[-1]
        edges = self.on_edge[-1]
        named = {name: level for step in self.limits[-20:] for name, level in step}
        # the level whose correction it stopped (the reach), rather than one it was saturated for below
        named.update({name: level for step in self.stopped[-20:] for name, level in step if name in edges})
        if edges:
            where = "; ".join(f"{e}, the centre of mass on its shrunk edge" + (
                f" (named in the report of level '{named[e]}')" if e in named else "") for e in edges)
        else:
            where = ", ".join(self.limiting()) or "none named"
        return [f"reach: the left gripper went {self.reach * 1e3:.0f} mm forward of {asked * 1e3:.0f} mm asked "
                f"({(asked - self.reach) * 1e3:.0f} mm short); its level scaled by {scale:.3f}, "
                f"{'met' if met else 'not met'}",
                f"centre of mass: {self.margins[-1] * 1e3:.4f} mm from the support region's edge at the end "
                f"(smallest {min(self.margins) * 1e3:.4f} mm; kept: {MARGIN * 1e3:g} mm)",
                f"limited by: {where}"]


def run_talos_balance(*, duration: float = 4.0, headless: bool = False, dt: float = 0.01,
                      out: Callable[..., object] = print, session: Session | None = None,
                      backend: str | None = None) -> tuple[DemoSummary, TalosBalance]:
    """Run the scenario (module docstring) for `duration` [s]; returns the summary (tasks 'box'
    and 'reach') and the scenario with its figures."""
    scene = TalosBalance.build(backend=backend)
    controller = scene.stack.controller(dt, backend=backend)
    box = scene.stack.hands

    def targets(t: float, q: np.ndarray) -> None:
        if controller.last_reports:
            scene.measure(q, controller.last_reports)

    def setup_viewer(viewer: Any) -> None:
        from ..viz.balance import show_balance

        viewer.frame_camera(VIEW)
        show_balance(viewer, scene.stack.support)
        viewer.show_frame(LEFT, label="left gripper")
        viewer.show_frame(RIGHT, label="right gripper")
        viewer.show_segment(LEFT, RIGHT, name="box")
        viewer.show_target("reach target", scene.lead.target, scale=0.6 * viewer.scale)

    out(f"talos-balance demo: {duration:g} s, dt = {dt * 1e3:g} ms; Talos holds a box between its grippers and "
        f"reaches {REACH[0]:g} m forward; the centre of mass is kept {MARGIN * 1e3:g} mm inside its feet's "
        "support region")
    tracked = [box, scene.lead]
    summary = run("talos-balance", scene.robot, scene.q_grasp, lambda t: controller, targets, lambda t: tracked,
                  duration=duration, headless=headless, loop=False, dt=dt, out=out, setup_viewer=setup_viewer,
                  session=session, report=scene)
    return summary, scene


__all__ = ["TalosBalance", "run_talos_balance"]

"""``reljac bench ik --peers``, its adapters: one IK problem handed to reljac, PlaCo and pink alike.

A :class:`Problem` says what each library is asked, in reljac's terms: a top level (the pose, or
only the position, of frame b in frame a), an optional second level (a frame's pose in the
world, the URDF root), a posture, the robot's joint position and velocity limits and, when a
:class:`~reljac.collision.CollisionModel` is given, its collision pairs kept apart. Each adapter
sets its library up once per robot, :meth:`start` s an episode, and :meth:`step` s it: the one call
that is timed. ``q()`` is the configuration in reljac's layout (nq,), so that one judge, reljac's
own kinematics, measures every library.

How each library is configured (the gains are per step, a gain of 1 [1/s] at dt being ``dt``):

* **reljac**: strict priorities (top > second > posture) by :class:`~reljac.ik.Controller`,
  task gains 1/dt, posture gain 1 [1/s] and weight 0.1; position limits with ``limit_gain`` 0.5;
  :class:`~reljac.ik.CollisionAvoidance` (min 1 cm, influence 5 cm, gain 0.3 per step).
* **PlaCo** (C++, qpmad since 0.10, eiquadprog before): no strict priorities either: every level ``soft``, weighted
  top 1e4 (position and orientation), second 1, posture (a joints task) 1e-6; its tasks ask for the
  whole error in one step (gain 1); joint and velocity limits on. Tried on 8 dual_arm targets:
  a ``hard`` top level makes the QP infeasible on every target (the velocity limits bind),
  ``scaled`` (a hard top scaled into the limits) met the second level on 5 of 8 where this met
  it on 7. Self collisions: its hard constraint d + J dq >= 1 cm on the pairs closer than 5 cm,
  on the same pairs and (convex) shapes as reljac's.
* **pink** (Python, QP by ``daqp`` through qpsolvers): no priorities, one weighted QP: top level
  cost 10 (position [1/m] and orientation [1/rad]), second level cost 1, posture cost 1e-2 with
  gain dt (reljac's 1 [1/s]), task gains 1; ``ConfigurationLimit`` (gain 0.5) and
  ``VelocityLimit``; collisions: its ``SelfCollisionBarrier`` (d_min 1 cm, gain 0.3/dt: a gap
  may close by 0.3 of itself per step, as reljac's) on reljac's geometry model (same pairs, shapes),
  on the 10 closest pairs of each step (its Jacobians are a Python loop per pair: on all 156 of
  dual_arm's pairs a step took 0.19 s here), ``safe_displacement_gain`` 0 (its default 1 adds
  1/|J|^2 times the identity to the QP's Hessian: where the closest pairs' Jacobians vanish, as
  at dual_arm's start, the robot never moves).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from ..collision import CollisionModel
from ..ik import CollisionAvoidance, Controller, FrameTask, PostureTask, RelativeFrameTask, RelativePositionTask, Task
from ..robot import Robot

#: the peers the bench compares with: name -> the module that must be importable
PEERS = {"PlaCo": "placo", "pink": "pink"}
MIN_DISTANCE, INFLUENCE, COLLISION_GAIN = 0.01, 0.05, 0.3  # [m], [m], per step
POSTURE_GAIN, POSTURE_WEIGHT = 1.0, 0.1  # reljac's posture: [1/s], weight in its level
PLACO_TOP_PRIORITY, PLACO_TOP_WEIGHT, PLACO_SECOND_WEIGHT, PLACO_POSTURE_WEIGHT = "soft", 1e4, 1.0, 1e-6
PINK_TOP_COST, PINK_SECOND_COST, PINK_POSTURE_COST = 10.0, 1.0, 1e-2
PINK_BARRIER_PAIRS = 10  # its barrier keeps the closest pairs only (a Python loop per pair)


class PeerFailure(RuntimeError):
    """A library could not compute a step (its QP infeasible or unsolved)."""


@dataclass(frozen=True)
class Problem:
    """One target. ``top``: frames (a, b) and ``T_ab`` (pose of b in a; with ``position_only``
    only its translation [m] counts); ``second``: a frame and ``T_w2`` its pose in the world, or
    None; ``rest``: the posture target (nq,); ``q_target`` (nq,): the configuration the targets
    were taken from (all reachable together)."""

    top: tuple[str, str]
    T_ab: pin.SE3
    position_only: bool
    second: str | None
    T_w2: pin.SE3 | None
    rest: np.ndarray
    q_target: np.ndarray


def missing_peers() -> dict[str, str]:
    """{library: one-line note} for every peer that is not installed."""
    return {name: f"{name} not installed (pip install \".[peers]\" in a clone of reljac; PlaCo by hand: its "
                  "wheels need pin 3.8, so build it from source on pin 4.1): skipped"
            for name, module in PEERS.items() if importlib.util.find_spec(module) is None}


@contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Sends what C++ writes on stdout (PlaCo lists self collisions when it loads a robot) to
    /dev/null: stdout carries the bench's tables and JSON only."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class ReljacIK:
    """reljac's Controller on the problem (see the module docstring)."""

    name = "reljac"

    def __init__(self, robot: Robot, dt: float, collision: CollisionModel | None) -> None:
        self.robot, self.dt, self.collision = robot, dt, collision

    def start(self, problem: Problem, q0: np.ndarray) -> None:
        a, b = problem.top
        top: Task
        if problem.position_only:
            top = RelativePositionTask(a, b, gain=1.0 / self.dt)
            top.set_target(problem.T_ab.translation)
        else:
            top = RelativeFrameTask(a, b, gain=1.0 / self.dt)
            top.set_target(problem.T_ab)
        levels: list[list[Task]] = [[top]]
        if problem.second is not None:
            second = FrameTask(problem.second, gain=1.0 / self.dt)
            second.set_target(problem.T_w2)
            levels.append([second])
        posture = PostureTask(self.robot, gain=POSTURE_GAIN, weight=POSTURE_WEIGHT)
        posture.set_target(problem.rest)
        levels.append([posture])
        limits = [] if self.collision is None else [CollisionAvoidance(
            self.robot, model=self.collision, min_distance=MIN_DISTANCE, influence_distance=INFLUENCE,
            gain=COLLISION_GAIN)]
        self.controller = Controller(self.robot, levels, dt=self.dt, constraints=limits)
        self._q = np.array(q0, dtype=float)

    def step(self) -> None:
        self._q = self.controller.step(self._q)

    def q(self) -> np.ndarray:
        return self._q


class _JointMap:
    """q of `robot` <-> q of another Pinocchio model of the same URDF, joint by name."""

    def __init__(self, robot: Robot, other: pin.Model) -> None:
        model = robot.model
        self.pairs = []  # (slice in robot's q, slice in other's q, name)
        for j in range(1, model.njoints):
            name = model.names[j]
            k = other.getJointId(name)
            if k >= other.njoints:
                continue
            i, n, i2 = model.joints[j].idx_q, model.joints[j].nq, other.joints[k].idx_q
            self.pairs.append((slice(i, i + n), slice(i2, i2 + n), name))
        self.names = {p[2] for p in self.pairs}

    def to_other(self, q: np.ndarray, base: np.ndarray) -> np.ndarray:
        out = np.array(base, dtype=float)
        for mine, theirs, _ in self.pairs:
            out[theirs] = q[mine]
        return out

    def from_other(self, q_other: np.ndarray, base: np.ndarray) -> np.ndarray:
        out = np.array(base, dtype=float)
        for mine, theirs, _ in self.pairs:
            out[mine] = q_other[theirs]
        return out


class PlacoIK:
    """PlaCo's KinematicsSolver on the same URDF (see the module docstring)."""

    name = "PlaCo"

    def __init__(self, robot: Robot, dt: float, collision: CollisionModel | None) -> None:
        import placo

        if robot.urdf_path is None:
            raise PeerFailure(f"robot '{robot.name}' has no URDF file for PlaCo to load")
        if robot.package_dirs:  # where Pinocchio looks for package:// meshes
            os.environ["ROS_PACKAGE_PATH"] = os.pathsep.join(
                [str(d) for d in robot.package_dirs] + [os.environ.get("ROS_PACKAGE_PATH", "")])
        flags = 0 if collision is not None else placo.Flags.ignore_collisions
        self.robot, self.dt = robot, dt
        with _quiet_stdout():
            self.wrapper = wrapper = placo.RobotWrapper(str(robot.urdf_path), flags)
        self.map = _JointMap(robot, wrapper.model)
        lower, upper, vmax = robot.lower_limits, robot.upper_limits, robot.velocity_limits
        model = robot.model
        for j in range(1, model.njoints):
            name = model.names[j]
            if name in self.map.names and model.joints[j].nq == 1:
                i, iv = model.joints[j].idx_q, model.joints[j].idx_v
                wrapper.set_joint_limits(name, float(lower[i]), float(upper[i]))
                wrapper.set_velocity_limit(name, float(vmax[iv]))
        self.solver = solver = placo.KinematicsSolver(wrapper)
        solver.mask_fbase(True)
        solver.dt = dt
        solver.enable_joint_limits(True)
        solver.enable_velocity_limits(True)
        for name in wrapper.model.names[2:]:  # joints reljac does not move (mimic joints): held
            if name not in self.map.names:
                solver.mask_dof(name)
        self._tasks: dict[Any, Any] = {}  # PlaCo's task objects (untyped bindings)
        if collision is not None:
            self._use_geometry(collision)
            constraint = solver.add_avoid_self_collisions_constraint()
            constraint.configure("self_collisions", "hard", 1.0)
            constraint.self_collisions_margin = MIN_DISTANCE
            constraint.self_collisions_trigger = INFLUENCE

    def _use_geometry(self, collision: CollisionModel) -> None:
        """PlaCo's collision model gets reljac's shapes (convex hulls) and active pairs, by name."""
        ours, theirs = collision.geometry_model, self.wrapper.collision_model
        index = {o.name: k for k, o in enumerate(theirs.geometryObjects)}
        for obj in ours.geometryObjects:
            if obj.name in index:
                theirs.geometryObjects[index[obj.name]].geometry = obj.geometry
        theirs.removeAllCollisionPairs()
        for pair in ours.collisionPairs:
            first, second = ours.geometryObjects[pair.first].name, ours.geometryObjects[pair.second].name
            theirs.addCollisionPair(pin.CollisionPair(index[first], index[second]))

    def _task(self, problem: Problem) -> Any:  # one task per kind, created once, retargeted per episode
        a, b = problem.top
        key = ("top", a, b, problem.position_only)
        if key not in self._tasks:
            if problem.position_only:
                task = self.solver.add_relative_position_task(a, b, np.zeros(3))
            else:
                task = self.solver.add_relative_frame_task(a, b, np.eye(4))
            task.configure("top", PLACO_TOP_PRIORITY, PLACO_TOP_WEIGHT)
            self._tasks[key] = task
        return self._tasks[key]

    def start(self, problem: Problem, q0: np.ndarray) -> None:
        top = self._task(problem)
        if problem.position_only:
            top.target = problem.T_ab.translation.copy()
        else:
            top.T_a_b = problem.T_ab.homogeneous
        if problem.second is not None:
            if "second" not in self._tasks:
                self._tasks["second"] = self.solver.add_frame_task(problem.second, np.eye(4))
                self._tasks["second"].configure("second", "soft", PLACO_SECOND_WEIGHT, PLACO_SECOND_WEIGHT)
            self._tasks["second"].T_world_frame = problem.T_w2.homogeneous if problem.T_w2 is not None else None
        if "posture" not in self._tasks:
            self._tasks["posture"] = self.solver.add_joints_task()
            self._tasks["posture"].configure("posture", "soft", PLACO_POSTURE_WEIGHT)
        rest = self.map.to_other(problem.rest, self.wrapper.neutral_state().q)
        self._tasks["posture"].set_joints({name: float(rest[theirs.start]) for _, theirs, name in self.map.pairs
                                           if theirs.stop - theirs.start == 1})
        state = self.wrapper.state
        state.q = self.map.to_other(q0, self.wrapper.neutral_state().q)
        state.qd = np.zeros(self.wrapper.model.nv)
        self._q0 = np.array(q0, dtype=float)
        self.wrapper.update_kinematics()

    def step(self) -> None:
        try:
            self.solver.solve(True)
        except RuntimeError as e:
            raise PeerFailure(f"PlaCo: {e}") from None
        self.wrapper.update_kinematics()

    def q(self) -> np.ndarray:
        return self.map.from_other(self.wrapper.state.q, self._q0)


class PinkIK:
    """pink's solve_ik on a copy of the robot's model (see the module docstring)."""

    name = "pink"

    def __init__(self, robot: Robot, dt: float, collision: CollisionModel | None) -> None:
        import pink
        from pink.barriers import SelfCollisionBarrier
        from pink.limits import ConfigurationLimit, VelocityLimit

        self.pink, self.robot, self.dt = pink, robot, dt
        self.model = model = pin.Model(robot.model)  # pink adds attributes to the model it is given
        model.lowerPositionLimit = robot.lower_limits.copy()
        model.upperPositionLimit = robot.upper_limits.copy()
        model.velocityLimit = robot.velocity_limits.copy()
        self.data = model.createData()
        self.limits = [ConfigurationLimit(model, config_limit_gain=0.5), VelocityLimit(model)]
        self.geometry = None if collision is None else collision.geometry_model
        self.barriers = [] if self.geometry is None else [SelfCollisionBarrier(
            n_collision_pairs=min(PINK_BARRIER_PAIRS, len(self.geometry.collisionPairs)),
            gain=COLLISION_GAIN / dt, d_min=MIN_DISTANCE, safe_displacement_gain=0.0)]

    def start(self, problem: Problem, q0: np.ndarray) -> None:
        from pink.tasks import FrameTask as PinkFrameTask
        from pink.tasks import PostureTask as PinkPostureTask
        from pink.tasks import RelativeFrameTask as PinkRelativeFrameTask

        a, b = problem.top
        top = PinkRelativeFrameTask(b, a, position_cost=PINK_TOP_COST,
                                    orientation_cost=0.0 if problem.position_only else PINK_TOP_COST, gain=1.0)
        top.set_target(problem.T_ab)
        self.tasks = [top]
        if problem.second is not None:
            second = PinkFrameTask(problem.second, position_cost=PINK_SECOND_COST, orientation_cost=PINK_SECOND_COST,
                                   gain=1.0)
            second.set_target(problem.T_w2)
            self.tasks.append(second)
        posture = PinkPostureTask(cost=PINK_POSTURE_COST, gain=POSTURE_GAIN * self.dt)
        posture.set_target(problem.rest)
        self.tasks.append(posture)
        collision_data = None if self.geometry is None else pin.GeometryData(self.geometry)
        self.configuration = self.pink.Configuration(self.model, self.data, np.array(q0, dtype=float),
                                                     collision_model=self.geometry, collision_data=collision_data)

    def step(self) -> None:
        try:
            v = self.pink.solve_ik(self.configuration, self.tasks, self.dt, solver="daqp", limits=self.limits,
                                   barriers=self.barriers, safety_break=False)
        except self.pink.exceptions.NoSolutionFound as e:
            raise PeerFailure(f"pink: {e}") from None
        self.configuration.integrate_inplace(v, self.dt)

    def q(self) -> np.ndarray:
        return np.array(self.configuration.q)


ADAPTERS = {"reljac": ReljacIK, "PlaCo": PlacoIK, "pink": PinkIK}

"""The joint posture task: e = difference(q_target, q) over the whole tangent space, with the
identity-rows form the solver's fast path takes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ...exceptions import TaskError
from ...relative import Kinematics
from ...robot import Robot, as_robot
from ...validation import as_float
from ..description import Description, frozen
from ..limits.joints import one_dof_joints
from .base import Task, TaskRows, TaskTerms


class PostureTask(Task, kind="posture"):
    """Joint posture: e = difference(q_target, q) (nv,), so J = d difference / dq (identity
    for revolute, prismatic and continuous joints). Usually the lowest level; it does not count
    for convergence. Target: a configuration (nq,); mask a floating base with zero weights.

    When the weighted Jacobian is c times a selection of identity rows (uniform weights, and any
    floating or spherical joint masked out), the controller takes a fast path: the level's
    correction is the null-space projection of the weighted posture error (exact when nothing
    above constrains the joints).
    """

    counts_for_convergence = False

    def __init__(self, robot: Robot, **kwargs: Any) -> None:
        self.robot = robot = as_robot(robot)
        self.size = robot.nv
        model = robot.model
        # velocity rows whose d difference / dq block is not the identity (free-flyer, spherical, planar)
        curved = np.zeros(model.nv, dtype=bool)
        for j in range(1, model.njoints):
            joint = model.joints[j]
            if joint.nv > 1:
                curved[joint.idx_v : joint.idx_v + joint.nv] = True
        self._curved_rows = curved
        self._euclidean = not curved.any()
        kwargs.setdefault("name", "posture")
        super().__init__(**kwargs)
        self._target = robot.reference_configuration()

    @property
    def target(self) -> np.ndarray:
        """The target configuration (nq,) (a copy: change it with set_target)."""
        return self._target.copy()

    @target.setter
    def target(self, q: ArrayLike) -> None:
        self.set_target(q)

    def set_target(self, q: ArrayLike) -> None:
        """Target configuration q (nq,)."""
        self._target = self.robot.validate_q(q, name=f"target of task '{self.name}'")
        self._changed()

    def description(self, robot: Robot) -> Description:
        """The task for the compiled step."""
        return Description("PostureDescription", target=frozen(self._target), **self.described_parameters())

    def compute(self, kin: Kinematics) -> TaskTerms:
        model = self.robot.model
        e = pin.difference(model, self._target, kin.q)
        J = np.eye(model.nv) if self._euclidean else pin.dDifference(model, self._target, kin.q, pin.ARG1)
        return TaskTerms(e, J, np.zeros(model.nv))

    def error(self, kin: Kinematics) -> np.ndarray:
        """e = difference(q_target, q), (nv,), without the Jacobian."""
        return pin.difference(self.robot.model, self._target, kin.q)

    def rows(self, kin: Kinematics) -> TaskRows:
        """Identity form (A = c diag(mask), not built) when the weights allow it, else dense rows."""
        c = self._identity_scale
        if c is None:
            return super().rows(kin)
        mask = self.row_mask
        if self._bounds is not None:  # a band: c times the rates, open on masked rows
            b, feedback, lower, upper = self.bound_rates(self.error(kin), np.zeros(self.size))
            kept = mask > 0
            return TaskRows(None, mask * (c * b), mask * (c * feedback), identity_scale=c, mask=mask,
                            lower=np.where(kept, c * lower, -np.inf), upper=np.where(kept, c * upper, np.inf))
        feedback = mask * (c * self._feedback(self.error(kin)))
        return TaskRows(None, -feedback, feedback, identity_scale=c, mask=mask)

    def set_centring_band(self, fraction: float) -> None:
        """A joint-centring band: each 1-DoF joint with finite position limits [lo, hi] stays within
        ``fraction`` (in [0, 1]) of its half-range around the middle of its range: the target's
        coordinate goes to (lo + hi) / 2 and the error's bounds to +-fraction (hi - lo) / 2 [rad
        or m]; other joints' rows get no bound (free). Inside the band the task costs nothing.

        Raises:
            TaskError: fraction not in [0, 1] (and as :meth:`Task.set_bounds`).
        """
        fraction = as_float(fraction, f"centring band fraction of task '{self.name}'", minimum=0.0)
        if fraction > 1.0:
            raise TaskError(f"centring band fraction of task '{self.name}' must be in [0, 1], got {fraction}")
        q_index, v_index, lo, hi = one_dof_joints(self.robot)
        target = self.target
        target[q_index] = 0.5 * (lo + hi)
        half = np.full(self.size, np.inf)
        half[v_index] = fraction * 0.5 * (hi - lo)
        self.set_target(target)
        self.set_bounds(-half, half)

    @property
    def identity_scale(self) -> float | None:
        """c when the weighted Jacobian is c times identity rows (solver fast path), else None."""
        return self._identity_scale

    @property
    def row_mask(self) -> np.ndarray:
        """(nv,) 1.0 for the rows the task keeps, 0.0 for masked ones."""
        return (self.weight > 0).astype(float)

    def set_weight(self, weight: ArrayLike) -> None:
        super().set_weight(weight)
        kept = self.weight[self.weight > 0]
        uniform = kept.size and np.all(kept == kept[0])
        curved_kept = (self._curved_rows & (self.weight > 0)).any()
        self._identity_scale = float(kept[0]) if uniform and not curved_kept else None

"""Collision avoidance as a limit: velocity dampers, one-sided rows above every task level.

For every active pair of bodies nearer than the influence distance d_i, with signed distance d
[m] and distance Jacobian J_d (nv,) (``d_dot = J_d v``, from :mod:`reljac.collision`), the
step's velocity must satisfy

    J_d v >= -gain (d - d_s - margin) / dt          (d_s = min_distance)

so in one step a pair closes at most the fraction `gain` of its gap above d_s + margin: it
approaches it geometrically and, to first order, never crosses it (the velocity damper of Faverjon and
Tournassoud, in discrete time, like the joint position limits). A pair already closer than d_s
gets a positive right-hand side: it must move apart by gain (d_s - d) per step. The rows are
``C v <= d`` with ``C = -J_d``; the solver holds them above every task level by Saturation in
the Null Space (rows violated at the start are met first, as a level of their own). Every
geometry pair within reach gets its own row (a link's other geometries are not left free).

The first-order model misses what a fast step's curvature adds (a capsule turning near a face
closes the gap by about L dtheta^2 / 2). The limit measures that error online: it predicts each
geometry pair's distance after the commanded step (``d + J_d v dt``), compares it with the
distance found at the next step and, where the pair came closer than predicted, keeps that much
more margin for it (the margin halves each step it is not needed again).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..exceptions import ConfigurationError
from ..relative import Kinematics
from ..robot import Robot
from ..validation import as_float
from .limits import Limit, VelocityConstraint


class CollisionAvoidance(Limit):
    """Keeps the active collision pairs at least `min_distance` apart.

    Args:
        robot: the robot (with ``<collision>`` geometry in its URDF).
        pairs: (link, link) pairs to keep apart (default: the collision model's active pairs).
        min_distance: d_s [m], the distance kept, >= 0.
        influence_distance: d_i [m] > d_s: pairs farther apart are not constrained.
        gain: fraction in (0, 1] of the gap above d_s + margin a pair may close in one step.
        margin: [m] >= 0, kept above d_s by the linear model, for the curvature its steps miss
            (a pair first met at full speed); d_s itself is what the limit promises.
        model: a :class:`reljac.collision.CollisionModel` (for an SRDF, obstacles or chosen
            pairs); give either `pairs` or `model`.

    ``last`` holds the distances of the last step (:class:`reljac.collision.Distances`).
    """

    name = "collision avoidance"
    rows_only = True  # gives rows C v <= d, never a box: the compiled step takes them as they are

    def __init__(self, robot: Robot, pairs: Any = None, *, min_distance: float = 0.01, influence_distance: float = 0.05,
                 gain: float = 0.3, margin: float = 0.001, model: Any = None) -> None:
        from ..collision import CollisionModel

        self.min_distance = as_float(min_distance, "min_distance [m]", minimum=0.0, error=ConfigurationError)
        self.influence_distance = as_float(influence_distance, "influence_distance [m]", minimum=0.0,
                                           error=ConfigurationError)
        if self.influence_distance <= self.min_distance:
            raise ConfigurationError(f"min_distance ({self.min_distance} m) must be < influence_distance "
                                     f"({self.influence_distance} m)")
        self.gain = as_float(gain, "gain", minimum=0.0, strict=True, error=ConfigurationError)
        self.margin = as_float(margin, "margin [m]", minimum=0.0, error=ConfigurationError)
        if self.min_distance + self.margin >= self.influence_distance:
            raise ConfigurationError(f"min_distance + margin ({self.min_distance + self.margin} m) must be < "
                                     f"influence_distance ({self.influence_distance} m)")
        if self.gain > 1:
            raise ConfigurationError(f"gain must be in (0, 1], got {self.gain}")
        if model is not None and pairs is not None:
            raise ConfigurationError("give the pairs or a CollisionModel, not both")
        if model is None:
            model = CollisionModel(robot, pairs=pairs)
        elif not isinstance(model, CollisionModel):
            raise ConfigurationError(f"model must be a reljac.collision.CollisionModel, got {type(model).__name__}")
        self.model = model
        self.last = None
        self.reset()

    def reset(self) -> None:
        """Forget the predictions and margins of earlier steps."""
        self._predicted: dict[tuple[str, str], float] = {}
        self._margin: dict[tuple[str, str], float] = {}
        self._dt = 0.0

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The pairs kept apart (link or obstacle names)."""
        return self.model.pairs

    def constraint(self, kin: Kinematics, dt: float) -> VelocityConstraint:
        rows = self.model.compute(kin.data, within=self.influence_distance, per_geometry=True)
        self.last, self._dt = rows, dt
        margins = np.zeros(len(rows))
        for i, (key, distance) in enumerate(zip(rows.geometries, rows.distance, strict=True)):
            missed = self._predicted.get(key, distance) - distance  # > 0: closer than the model said
            margins[i] = max(missed, 0.5 * self._margin.get(key, 0.0), 0.0)
        self._margin = dict(zip(rows.geometries, margins, strict=True))
        if len(rows) == 0:
            return VelocityConstraint()
        C = -rows.jacobian
        d = (self.gain * (rows.distance - self.min_distance - self.margin) - margins) / dt
        return VelocityConstraint(C=C, d=d, row_names=tuple(f"{a}/{b}" for a, b in rows.pairs))

    def observe(self, v: np.ndarray) -> None:
        """Predict each constrained pair's distance after the step v (nv,) just commanded."""
        rows = self.last
        if rows is None or len(rows) == 0:
            self._predicted = {}
            return
        predicted = rows.distance + self._dt * (rows.jacobian @ v)
        self._predicted = dict(zip(rows.geometries, predicted, strict=True))

    @property
    def minimum_distance(self) -> float:
        """The smallest distance of the last step's constrained pairs [m] (inf when none)."""
        if self.last is None or len(self.last) == 0:
            return math.inf
        return float(np.min(self.last.distance))

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
import warnings
from typing import Any

import numpy as np

from ...exceptions import ConfigurationError, ReljacWarning, TaskError
from ...relative import Kinematics
from ...robot import Robot
from ...validation import as_float
from ..description import Description, FixedAttributes
from ..tasks.regions import RegionRowsTask
from .base import Limit, VelocityConstraint

AVOIDANCE_TASK_GAIN = 20.0  # [1/s]: CollisionAvoidanceTask's default gain


class CollisionAvoidance(Limit, kind="collision_avoidance"):
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
    min_distance, influence_distance, gain and margin can be changed between steps (checked as
    at construction); pairs and obstacles through ``model`` (a CollisionModel).
    """

    name = "collision avoidance"

    def __init__(self, robot: Robot, pairs: Any = None, *, min_distance: float = 0.01, influence_distance: float = 0.05,
                 gain: float = 0.3, margin: float = 0.001, model: Any = None) -> None:
        from ...collision import CollisionModel

        self._set(min_distance, influence_distance, gain, margin)
        if model is not None and pairs is not None:
            raise ConfigurationError("give the pairs or a CollisionModel, not both")
        if model is None:  # default pairs: those the robot can keep this far apart
            model = CollisionModel(robot, pairs=pairs, touching_distance=self._min_distance) if pairs is None \
                else CollisionModel(robot, pairs=pairs)
        elif not isinstance(model, CollisionModel):
            raise ConfigurationError(f"model must be a reljac.collision.CollisionModel, got {type(model).__name__}")
        self._model = model
        self._last = None
        self._described: Any = None  # the geometry model of the last description
        self.reset()

    def _set(self, min_distance: float, influence_distance: float, gain: float, margin: float) -> None:
        min_distance = as_float(min_distance, "min_distance [m]", minimum=0.0, error=ConfigurationError)
        influence_distance = as_float(influence_distance, "influence_distance [m]", minimum=0.0,
                                      error=ConfigurationError)
        if influence_distance <= min_distance:
            raise ConfigurationError(f"min_distance ({min_distance} m) must be < influence_distance "
                                     f"({influence_distance} m)")
        gain = as_float(gain, "gain", minimum=0.0, strict=True, error=ConfigurationError)
        margin = as_float(margin, "margin [m]", minimum=0.0, error=ConfigurationError)
        if min_distance + margin >= influence_distance:
            raise ConfigurationError(f"min_distance + margin ({min_distance + margin} m) must be < "
                                     f"influence_distance ({influence_distance} m)")
        if gain > 1:
            raise ConfigurationError(f"gain must be in (0, 1], got {gain}")
        self._min_distance, self._influence_distance, self._gain, self._margin = (
            min_distance, influence_distance, gain, margin)
        self._changed()

    @property
    def model(self) -> Any:
        """The :class:`reljac.collision.CollisionModel` (edit its pairs and obstacles there)."""
        return self._model

    @property
    def robot(self) -> Robot:
        """The robot of the collision model."""
        return self._model.robot

    @property
    def min_distance(self) -> float:
        """d_s [m], the distance kept."""
        return self._min_distance

    @min_distance.setter
    def min_distance(self, value: float) -> None:
        self._set(value, self._influence_distance, self._gain, self._margin)

    @property
    def influence_distance(self) -> float:
        """d_i [m]: pairs farther apart are not constrained."""
        return self._influence_distance

    @influence_distance.setter
    def influence_distance(self, value: float) -> None:
        self._set(self._min_distance, value, self._gain, self._margin)

    @property
    def gain(self) -> float:
        """Fraction in (0, 1] of the gap a pair may close in one step."""
        return self._gain

    @gain.setter
    def gain(self, value: float) -> None:
        self._set(self._min_distance, self._influence_distance, value, self._margin)

    @property
    def margin(self) -> float:
        """[m] kept above d_s by the linear model."""
        return self._margin

    @margin.setter
    def margin(self, value: float) -> None:
        self._set(self._min_distance, self._influence_distance, self._gain, value)

    def description(self, robot: Robot) -> Description:
        self._described = self._model.geometry_model
        return Description("CollisionAvoidanceDescription", geometry=self._model.geometry_model,
                           min_distance=self._min_distance, influence_distance=self._influence_distance,
                           gain=self._gain, margin=self._margin)

    @property
    def last(self) -> Any:
        """The distances of the last step's constrained pairs (:class:`reljac.collision.Distances`),
        None before the first step."""
        if self.held_by is not None:
            step, index = self.held_by
            return step.collision_distances(index, self._model)
        return self._last

    def reset(self) -> None:
        """Forget the predictions and margins of earlier steps."""
        self._predicted: dict[tuple[str, str], float] = {}
        self._pair_margin: dict[tuple[str, str], float] = {}
        self._dt = 0.0
        self._started = False  # the first step of a motion checks the start (a warning)

    def refresh(self) -> None:
        """Pairs or obstacles edited on the collision model (a new geometry model): a change."""
        if self._described is not None and self._model.geometry_model is not self._described:
            self._changed()

    def stepped(self) -> None:
        """The first step of a motion on a compiled step checks the start (:meth:`_check_start`)."""
        if not self._started:
            self._check_start(self.last, stacklevel=5)  # (the frame a compiled step warned at before)

    def held_row_names(self, count: int) -> list[str]:
        """The body pairs ('link/link') of the last rows."""
        return ["/".join(pair) for pair in self.last.pairs]

    def _check_start(self, rows: Any, stacklevel: int = 4) -> None:
        """At the first step of a motion: warn, naming them, when pairs start nearer than
        min_distance (they are pushed apart first, and the task levels may be scaled meanwhile)."""
        if self._started:
            return
        self._started = True
        nearest: dict[tuple[str, str], float] = {}
        for pair, d in zip(rows.pairs, rows.distance.tolist(), strict=True):
            if d < self._min_distance and d < nearest.get(pair, math.inf):
                nearest[pair] = d
        if not nearest:
            return
        below = sorted(nearest.items(), key=lambda item: item[1])
        named = ", ".join(f"{a}/{b} ({d * 1e3:.1f} mm)" for (a, b), d in below[:6])
        more = f" and {len(below) - 6} more" if len(below) > 6 else ""
        warnings.warn(
            f"collision avoidance starts with {len(below)} pair(s) nearer than its minimum of "
            f"{self._min_distance * 1e3:g} mm: {named}{more}; they are pushed apart first and the task levels "
            "may be scaled until they are: remove pairs the robot cannot keep apart "
            "(model.remove_pairs) or lower min_distance", ReljacWarning, stacklevel=stacklevel)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The pairs kept apart (link or obstacle names)."""
        return self._model.pairs

    def distances(self, kin: Kinematics) -> Any:
        """The geometry pairs nearer than the influence distance at kin's configuration, with
        their distance Jacobians (:class:`reljac.collision.Distances`, one row per geometry
        pair); kept as :attr:`last`."""
        rows = self._model.compute(kin.data, within=self._influence_distance, per_geometry=True)
        self._last, self.held_by = rows, None
        return rows

    def as_task(self, **kwargs: Any) -> CollisionAvoidanceTask:
        """These pairs as a level's rows (:class:`CollisionAvoidanceTask`): put the limit itself
        in a level of a :class:`~reljac.ik.Controller` for the default gain, or this task for
        others (`kwargs`: gain [1/s], weight, max_speed, name)."""
        return CollisionAvoidanceTask(self, **kwargs)

    def constraint(self, kin: Kinematics, dt: float) -> VelocityConstraint:
        rows = self.distances(kin)
        self._dt = dt
        self._check_start(rows)
        margins = np.zeros(len(rows))
        for i, (key, distance) in enumerate(zip(rows.geometries, rows.distance, strict=True)):
            missed = self._predicted.get(key, distance) - distance  # > 0: closer than the model said
            margins[i] = max(missed, 0.5 * self._pair_margin.get(key, 0.0), 0.0)
        self._pair_margin = dict(zip(rows.geometries, margins, strict=True))
        if len(rows) == 0:
            return VelocityConstraint()
        C = -rows.jacobian
        d = (self._gain * (rows.distance - self._min_distance - self._margin) - margins) / dt
        return VelocityConstraint(C=C, d=d, row_names=tuple(f"{a}/{b}" for a, b in rows.pairs))

    def observe(self, v: np.ndarray) -> None:
        """Predict each constrained pair's distance after the step v (nv,) just commanded."""
        rows = self._last
        if rows is None or len(rows) == 0:
            self._predicted = {}
            return
        predicted = rows.distance + self._dt * (rows.jacobian @ v)
        self._predicted = dict(zip(rows.geometries, predicted, strict=True))

    @property
    def minimum_distance(self) -> float:
        """The smallest distance of the last step's constrained pairs [m] (inf when none)."""
        last = self.last
        if last is None or len(last) == 0:
            return math.inf
        return float(np.min(last.distance))


class CollisionAvoidanceTask(FixedAttributes, RegionRowsTask):
    """A :class:`CollisionAvoidance` as one level's rows (issue 29): its pairs kept apart below
    the levels above it (a humanoid's feet) and above those below, instead of above every level.

    One row per geometry pair nearer than the limit's influence distance d_i: e = d - d_s -
    margin [m] >= 0 (d the signed distance, d_s the limit's min_distance), J = J_d (1, nv) (the
    distance Jacobian, d_dot = J_d v). Inside with margin the rows cost nothing; a pair may close
    at most at gain x its gap, d_dot >= -gain (d - d_s - margin), and a pair nearer than that is
    pushed apart at the gain, as far as the levels above allow (keep gain dt < 1). The limit's
    learnt margins (its predictions between steps) are not used here: only its fixed margin.

    The limit's pairs (its model), distances and margin are read at every step; its own gain (a
    fraction per step) is not used: this task's gain is [1/s]. ``row_names`` names the rows'
    body pairs ('link/link'); ``limit.last`` holds the last step's distances.

    Args:
        limit: the :class:`CollisionAvoidance`.
        gain: [1/s] (default 20: a fifth of the gap per 10 ms step).
        **kwargs: weight (one number), max_speed [m/s], name (default: the limit's).
    """

    side = "lower"
    fixed_attributes = frozenset({"limit", "robot"})

    def __init__(self, limit: CollisionAvoidance, *, gain: float = AVOIDANCE_TASK_GAIN, **kwargs: Any) -> None:
        if not isinstance(limit, CollisionAvoidance):
            raise TaskError(f"CollisionAvoidanceTask needs a reljac.ik.CollisionAvoidance, got {limit!r}")
        self.limit = limit
        kwargs.setdefault("name", limit.name)
        super().__init__(limit.model.robot, gain=gain, **kwargs)
        limit.listen(self)  # the limit's changes are this task's (its compiled description holds them)

    def heard(self, limit: Any) -> None:
        """The limit changed: this task's description changes with it (an
        :class:`~reljac.ik.description.Observable`'s listener)."""
        self._changed()

    def refresh(self) -> None:
        """Before a compiled step: pairs or obstacles edited on the limit's collision model."""
        self.limit.refresh()

    def names_of(self, step: Any, index: int) -> list[str]:
        return [f"{a}/{b}" for a, b in step.task_collision_distances(index, self.limit.model).pairs]

    def description(self, robot: Robot) -> Description:
        """The task for the compiled step: its limit's description within (the limit's ``last``
        then reads this task's rows)."""
        return Description("CollisionAvoidanceTaskDescription", limit=self.limit.description(robot),
                           **self.described_parameters())

    def measure(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray, list[str]]:
        rows = self.limit.distances(kin)
        nv = kin.model.nv
        J = np.zeros((0, nv)) if len(rows) == 0 else rows.jacobian
        return rows.distance - self.limit.min_distance - self.limit.margin, J, [f"{a}/{b}" for a, b in rows.pairs]

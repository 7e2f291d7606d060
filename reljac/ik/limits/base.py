"""Limits: objects that constrain the joint velocity of one control step.

Every limit answers :meth:`Limit.constraint` with a :class:`VelocityConstraint`: a box
``lo <= v <= hi`` and/or one-sided rows ``C v <= d``. The controller intersects what its limits
return and hands it to the solver, which keeps it above every task level; it knows no limit
class by name. A new limit (collision avoidance, a workspace bound, ...) is a new subclass: the
joint limits are in :mod:`reljac.ik.limits.joints`, collision avoidance in
:mod:`reljac.ik.limits.collision`, the support region in :mod:`reljac.ik.limits.support`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ...exceptions import ConfigurationError
from ...relative import Kinematics
from ...robot import Robot
from ...validation import as_float
from ..description import Description, Observable
from ..kinds import register


@dataclass(frozen=True)
class VelocityConstraint:
    """What one limit asks of v (nv,) [rad/s, m/s] for one step.

    lo, hi: (nv,) box bounds (None: no box); C: (k, nv), d: (k,): rows ``C v <= d`` (None: no
    rows), named by ``row_names`` (k,) for reports.
    """

    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    C: np.ndarray | None = None
    d: np.ndarray | None = None
    row_names: tuple[str, ...] = ()


class Limit(ABC, Observable):
    """A constraint on the joint velocity v of one control step of length dt [s].

    Built-in limits describe themselves to the compiled step (:meth:`description`); their public
    parameters are read-only unless they have a setter, which the controllers using the limit
    hear about. A limit that keeps state between steps (its last velocity, its distances) keeps
    it per controller on the compiled backend: give each controller its own.
    """

    name = "limit"  # (a limit made for one robot has a `robot` attribute: controllers check it)
    held_by: tuple[Any, int] | None = None
    """(compiled step, index) that keeps this limit's state between steps, set by that step (None:
    the limit keeps it); what the limit reports of its state (``ReversalDamping.cap``,
    ``CollisionAvoidance.last``), it reads there."""

    def description(self, robot: Robot) -> Description | None:
        """What the compiled step needs to apply this limit itself (see
        :mod:`reljac.ik.description`), or None: it runs in Python every step."""
        return None

    def __init_subclass__(cls, kind: str | None = None, **kwargs: object) -> None:
        """A subclass statement's ``kind="key"`` registers it (:mod:`reljac.ik.kinds`)."""
        super().__init_subclass__(**kwargs)
        if kind is not None:
            register(kind, cls)
        # a subclass that changes the constraint without describing itself anew runs in Python
        if not cls.__module__.startswith("reljac.ik.") and "description" not in cls.__dict__ and any(
                m in cls.__dict__ for m in ("constraint", "observe", "guard", "reset", "joint_bounds")):
            cls.description = Limit.description  # type: ignore[method-assign]

    @abstractmethod
    def constraint(self, kin: Kinematics, dt: float) -> VelocityConstraint:
        """The constraint at kin's configuration for a step of length dt."""

    def guard(self, q_next: np.ndarray, q: np.ndarray) -> np.ndarray:
        """q_next (nq,) after the step from q, corrected for rounding (default: as it is)."""
        return q_next

    def observe(self, v: np.ndarray) -> None:
        """Told the velocity v (nv,) the controller commanded this step (default: ignored)."""

    def reset(self) -> None:
        """Forget any state kept between steps (default: none)."""

    def refresh(self) -> None:
        """Before each step of a compiled step that holds this limit: announce (``_changed``) a change
        no setter of the limit saw, e.g. its collision model edited (default: none)."""

    def stepped(self) -> None:
        """After each step of a compiled step that holds this limit (default: nothing)."""

    def held_row_names(self, count: int) -> list[str]:
        """The names of the `count` rows C v <= d the compiled step holding this limit gave it in its
        last step, as :meth:`constraint` names them."""
        return [f"{self.name} (row {i + 1} of {count})" for i in range(count)]


def step_fraction(value: float, what: str) -> float:
    """`value` as a fraction in (0, 1] of a distance a limit lets the robot cover in one step
    (its gain); ConfigurationError naming `what` otherwise."""
    gain = as_float(value, what, minimum=0.0, strict=True, error=ConfigurationError)
    if gain > 1:
        raise ConfigurationError(f"{what} must be in (0, 1], got {gain}")
    return gain


class Intersection(NamedTuple):
    """What the limits of one step allow together: the box ``lo <= v <= hi`` (nv,) and the rows
    ``C v <= d`` ((k, nv) and (k,), None without rows), named by ``row_names`` (k,)."""

    lo: np.ndarray
    hi: np.ndarray
    C: np.ndarray | None
    d: np.ndarray | None
    row_names: list[str]


def intersect(constraints: list[VelocityConstraint], nv: int) -> Intersection:
    """(lo, hi, C, d, row_names): the box of every constraint intersected in order, lo <= hi.

    Where a later box does not meet the earlier ones, the earlier win: the later bound is
    clipped into what they allow (list hard limits, e.g. joint velocity, first).
    """
    lo, hi = np.full(nv, -np.inf), np.full(nv, np.inf)
    rows: list[np.ndarray] = []
    rhs: list[np.ndarray] = []
    names: list[str] = []
    for c in constraints:
        if c.lo is not None and c.hi is not None:
            lo, hi = np.clip(c.lo, lo, hi), np.clip(c.hi, lo, hi)
        if c.C is not None and c.C.shape[0]:
            rows.append(c.C)
            rhs.append(np.asarray(c.d))
            names.extend(c.row_names)
    C = np.vstack(rows) if rows else None
    d = np.concatenate(rhs) if rhs else None
    return Intersection(lo, hi, C, d, names)

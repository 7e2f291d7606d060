"""Collision avoidance in a search (:mod:`reljac.ik.search.local_search`): checked where the
levels are met, not steered.

A search's configurations on the way to an answer need not be free of collisions (it is not a
motion), only its answer. So a search's steps do not keep the collision pairs apart: a
:class:`~reljac.ik.limits.collision.CollisionAvoidance` given as a constraint gives them no rows
(its rows, velocity dampers, slowed every step near an obstacle and stopped the search against
it: on Panda with three obstacles, 22 Newton steps per solve and 0.6 restarts where the same
search without them took 9 steps and found a pose free of collisions at its first try, 30 of 30
targets). Its pairs are checked instead, by their distances (the limit's own rows at v = 0:
every pair at least ``min_distance + margin`` apart), where the levels are met: a configuration
converges only there, and one that meets the levels in a collision ends its local search. Then
a local search from where that one started, its steps keeping the pairs apart (the limit's rows
steered, as in a controller: it may slide along an obstacle to an answer the free one could not
reach, or end as near as the obstacle allows), and, if it does not converge either, a restart
from a configuration drawn anew, every coordinate (what a rejection loop around the search does,
without leaving the search). Where a free local search ends is checked as well (with converged
ones and those of a local search keeping the pairs apart, the configurations that compete for the
best found: a local search keeps only steps that lower its costs, so where it ends is its best).

A :class:`~reljac.ik.limits.collision.CollisionAvoidanceTask` (the limit put in a level) keeps its
rows in its level: its pairs are checked too, as the limits' are (at every convergence, the local
search that keeps the pairs apart included), so that a converged answer keeps every pair at its
distance, whatever tol allows the level's rows; its rows are not also steered as a limit's after a
collision (they are in their level already): a search whose only collision pairs are a level's
goes from a collision straight to a restart from a configuration drawn anew.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...relative import Kinematics
from ..limits.base import Limit
from ..limits.collision import CollisionAvoidance
from ..tasks.base import Task
from .options import feasible


class CheckedLimits:
    """A controller's limits in a search: `steered`, those its steps keep (all but collision
    avoidance); `checked`, the collision avoidance limits it checks instead; `levels`, those of the
    collision tasks among its tasks, checked too (each limit once); `steering`: the checked limits'
    rows kept by the steps too (the local search after a collision). The core's twin:
    search_collisions.hpp."""

    def __init__(self, limits: Sequence[Limit], tasks: Sequence[Task]) -> None:
        self.steered = [limit for limit in limits if not isinstance(limit, CollisionAvoidance)]
        self.checked: list[Limit] = [limit for limit in limits if isinstance(limit, CollisionAvoidance)]
        self.levels: list[Limit] = []
        for task in tasks:
            limit = getattr(task, "limit", None)
            if isinstance(limit, CollisionAvoidance) and not any(limit is c for c in [*self.checked, *self.levels]):
                self.levels.append(limit)
        self.steering = False

    @property
    def lazy(self) -> bool:
        """Collision pairs checked, not steered, now."""
        return bool(self.checked or self.levels) and not self.steering

    @property
    def steerable(self) -> bool:
        """A local search may keep the checked limits' pairs apart (collision avoidance given as a
        constraint): the one after a collision does."""
        return bool(self.checked)

    def limits(self) -> list[Limit]:
        """The limits whose rows the steps keep now."""
        return [*self.steered, *self.checked] if self.steering else self.steered

    def clear(self, kin: Kinematics) -> bool:
        """Every pair of the checked limits not steered now and of the levels' at least its
        distance apart at kin's q (its row's right-hand side at v = 0 not below 0:
        :func:`~reljac.ik.search.options.feasible`); True when there is none."""
        unsteered = [] if self.steering else self.checked
        return all(feasible(limit.constraint(kin, 1.0).d) for limit in [*unsteered, *self.levels])

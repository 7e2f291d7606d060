"""The search for a configuration behind :func:`reljac.ik.solve` (:class:`PythonSearch`): local
searches (:mod:`reljac.ik.search.local_search`, whose docstring states how one runs) in two phases,
restarted, and the exact pass; the readable specification of the compiled search
(``src/core/search.cpp``) and its oracle (``RELJAC_BACKEND=python`` runs it).

**Two phases** (TRAC-IK runs two local methods as well): a local search first puts every task that
counts for convergence in one level (postures stay below: the flat phase), then, if that did not
converge, goes on with the levels as given from where it ended (the strict phase, at most
``POLISH_ITERS = 20`` iterations: it restores the priorities near where the flat phase ended). A
level met greedily first can drive joints onto limits where the levels below have no way left,
which the flat phase avoids (on a dual arm with a relative pose above an absolute one, measured:
3-4 times fewer restarts); where every level can be met the answer is the same, every task met, and
where one cannot, the strict phase restores the priorities. The strict phase runs only after a flat
phase that ended lower (its counted levels, lexicographically) than every flat phase before it in
this search: a flat phase that fails where every level can be met is a local minimum the strict one
does not leave (measured on the dual arm: none of 60 did), so the strict phase is spent on the
candidates for the answer. A flat phase also ends when its counted cost has not fallen by 30 % over
the last ``STALL_WINDOW = 8`` iterations (``STALL_WINDOW_RATIO = 0.7``, from its
``STALL_WINDOW_FROM = 8``-th iteration on): a search creeping along joint limits; the next restart
is cheaper than its tail (dual arm, 100 targets, Newton steps per solve: mean 78 -> 56, 99th
percentile 423 -> 193; a window of 5 and a ratio of 0.5, 0.7 or 0.85 did less). A strict phase
ends on a window of its own (:func:`reljac.ik.search.order.window_stalled`): when its first level
above ``floor`` is the same as ``STRICT_WINDOW = 3`` iterations before and has not fallen below
``STALL_WINDOW_RATIO`` times its cost then (from its ``STRICT_WINDOW_FROM = 3``-rd iteration on):
a strict phase meets its first level in a few Newton steps and then creeps (dual arm, 600
targets of ``bench solve``'s protocol: 3 of 443 strict phases converged, their iterations a fifth
of all; Newton steps per solve: mean 58 -> 53, 99th percentile 337 -> 289; a window of 2: 51,
280; none at all: 48, 267, but then no priorities restored). With a single level there is one
phase, which ends only as said above.

**The exact pass**: a search of two phases that ends without converging (restarts spent, or its
budget), while at the best configuration found a level above the first unmet one is met only by
the slack (:func:`~reljac.ik.search.order.slack_used`), ends with a strict local search from that
configuration with the steps kept in exact lexicographic order (a level above the active one may
not rise above ``floor``), under the strict window; its configurations count for the best found.
The slack lets a level sit at up to 1 % of the cost left below it, met for now, which is what a
search that never converges would return: strict priority broken in the answer (Panda, a position
it can reach above an orientation it cannot have there: the position was returned 4 cm off; with
the exact pass, met, and the orientation as close as it allows). A timed search of two phases
keeps time for it while the best configuration so far would need it, at most half of its budget,
and the pass runs the iterations that time was kept for, whatever the clock: a moment the machine
stops the process does not cut it short; a pass no time was kept for (the best needed it only
at the budget's end) ends on the budget (:mod:`reljac.ik.search.budget`). Run after every
unconverged strict phase instead, it cost the searches that converge (``bench solve``'s 600
dual-arm targets: Newton steps per solve, mean 53 -> 58, 99th percentile 289 -> 326); at the end
it costs them nothing.

**Restarts** (:mod:`reljac.ik.search.restarts`): a local search that ends without converging is
followed by another, from where it ended with every bounded coordinate that lies within
``PARTIAL_BAND`` (1 %) of its range from a limit drawn anew, uniform inside its limits, the others
kept: the joints at their limits are what stopped it, the others hold progress (on the dual arm:
99th percentile of Newton steps per solve 457 -> 258, single chains' 92-134 from 105-196). Every
``FRESH_EVERY``-th (third) restart, and whenever no coordinate is at a limit, starts from a random
configuration: each coordinate of a joint with finite limits uniform inside them, each unbounded
revolute joint a uniform angle, every other coordinate (floating bases, spherical joints) as in the
first seed. A local search that met the levels in a collision is followed, from where it started,
by one whose steps keep the pairs apart (collision avoidance given as a limit steered, as a
controller's; not where the only pairs are a level's), then by a restart from a random
configuration (:mod:`reljac.ik.search.collisions`). The random stream is
splitmix64 seeded with ``seed``, the same in C++. The search ends on convergence, after
``restarts`` restarts (None: no cap, then a timeout is needed), or when
``timeout`` seconds of wall clock would pass before one more iteration ends (checked every
iteration, at the mean time of one so far: a search of slow iterations, such as rows computed in
Python, ends inside its budget rather than one iteration past it; a step cut back to where its
bounded tasks enter halves no more once one more halving would end past it); it returns the
configuration with the lexicographically smallest costs seen among those that satisfy the limits'
rows (any, when none did; with collision pairs checked, the configurations seen are those where a
local search converges or ends, and every one of a local search that keeps the pairs apart).
"""

from __future__ import annotations

import warnings

import numpy as np

from ...exceptions import ReljacWarning
from ..tasks.base import Task
from .budget import Budget
from .local_search import LocalSearch
from .options import CONVERGED, EXHAUSTED, FAILED, TIMEOUT, SearchResult
from .order import lexicographically_lower, slack_used
from .restarts import SplitMix64, restart_configuration

POLISH_ITERS = 20  # Newton iterations of the strict phase after a flat one, at most


class PythonSearch(LocalSearch):
    """The whole search on the Python rows and solver (the specification; see the module
    docstring): local searches from the seed and from restarts, each in its phases."""

    def run(self, q0: np.ndarray) -> SearchResult:
        with warnings.catch_warnings():  # (a controller's warning: pairs near at the start of a motion)
            warnings.simplefilter("ignore", ReljacWarning)
            return self._run(q0)

    def _run(self, q0: np.ndarray) -> SearchResult:
        o = self.o
        random = SplitMix64(o.seed)
        for limit in [*self.controller.limits, *self.checks.levels]:
            limit.reset()
        self.iterations = 0
        self.best_q, self.best_costs, self.best_feasible = q0, None, False
        self.failing = -1  # the first task whose rows were not finite (FAILED), as the core's
        ids = {id(t) for t in self.leading}
        counted = [[any(id(t) in ids for t in level) for level in levels] for levels in (self.strict, self.flat)]
        phases = [(self.flat, counted[1]), (self.strict, counted[0])] if len(self.flat) != len(self.strict) \
            else [(self.strict, counted[0])]
        # (one phase: one level of counted tasks, no slack, no exact pass)
        self.budget = Budget(o.timeout, o.floor, counted[0], reserving=len(phases) == 2)
        q, searches, self.best_flat = q0, 0, None
        while True:
            searches += 1
            start, collided = q, False
            for steering in (False, True) if self.checks.steerable else (False,):  # free, then steered after one
                self.checks.steering, self.collided = steering, False
                status, q = self.attempt(start, phases)
                if status != EXHAUSTED:
                    return self.end(status, searches, counted[0])
                collided = collided or self.collided
                if not self.collided:
                    break
            if o.restarts is not None and searches > o.restarts:
                return self.end(FAILED if self.best_costs is None else EXHAUSTED, searches, counted[0])
            if self.timed_out():
                return self.end(TIMEOUT, searches, counted[0])
            q = restart_configuration(random, q0, q, 0 if collided else searches, *self.sample)

    def attempt(self, q: np.ndarray, phases: list[tuple[list[list[Task]], list[bool]]]) -> tuple[int, np.ndarray]:
        """The phases of one local search from q: the flat one, then the strict one from where it
        ended (when that flat phase ended lower than every one before it, and not in a collision):
        as :meth:`local`, (status, q)."""
        two = len(phases) == 2
        for structure, counts in phases:
            if self.collided:  # the levels met in a collision: no strict phase from there
                break
            if two and structure is self.strict:
                ended = self.ended[np.asarray(phases[0][1], dtype=bool)]
                if self.best_flat is not None and not lexicographically_lower(ended, self.best_flat, self.o.floor)[0]:
                    continue  # not a candidate for the answer: no strict phase
                self.best_flat = ended
            cap = min(self.o.max_iters, POLISH_ITERS) if two and structure is self.strict else self.o.max_iters
            status, q = self.local(q, structure, counts, cap, window=two and structure is self.flat)
            if status != EXHAUSTED:
                return status, q
        return EXHAUSTED, q

    def end(self, reason: int, searches: int, counts: list[bool]) -> SearchResult:
        """The result; a search of two phases that ends unconverged with a level above its first
        unmet one met only by SLACK (at the best found) ends on the exact pass from the best found,
        which may use the time reserved for it (:meth:`timed_out`)."""
        if reason in (EXHAUSTED, TIMEOUT) and self.budget.reserving and self.best_costs is not None and \
                slack_used(self.best_costs, self.o.floor, counts):
            self.budget.exact_pass(self.iterations)  # the whole budget from here
            self.checks.steering = False
            if self.local(self.best_q, self.strict, counts, self.o.max_iters, exact=True)[0] == CONVERGED:
                reason = CONVERGED
        return self.result(reason, searches)

    def result(self, reason: int, searches: int) -> SearchResult:
        """The search's result: the converged q (kept as best) or the best found."""
        costs = np.full(len(self.strict), np.inf) if self.best_costs is None else self.best_costs
        return SearchResult(self.best_q.copy(), reason == CONVERGED, reason, self.iterations, searches, costs,
                            self.budget.elapsed(), self.failing if self.best_costs is None else -1)

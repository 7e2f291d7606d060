"""The search for a configuration behind :func:`reljac.ik.solve`: the readable specification of the
compiled search (``src/core/search.cpp``) and its oracle (``RELJAC_BACKEND=python`` runs it).

**A local search** from a configuration q takes Newton (Gauss-Newton) steps on the same
strict-priority hierarchy as the controller, with the controller's rows in *search mode*: every
task's rows are ``A = W J``, ``b = -W e`` (gain 1, no speed cap, no feed-forward; a task with
bounds keeps them, ``W (lower - e) <= A v <= W (upper - e)``: into them from outside, free
inside them with margin (:meth:`Task.bound_rates` with ``search=True``; its level is a bounded
one, solved by :mod:`reljac.ik.inequality`), the step is
``dt = 1`` long, joint position limits are held by saturation in the null space (a step may use
half the way to a limit, ``limit_gain = 0.5``: full steps slam joints onto their limits, where the
levels below lose their way), the constraints given (collision avoidance, a support region) keep
their rows, and no velocity limit nor reversal damping applies, nor any cap on the step unless
``max_step`` is given (then a step whose largest joint displacement ``max_i |v_i|`` [rad or m]
exceeds it is scaled down to it, its direction kept). Each level k has its own
Levenberg-Marquardt damping ``mu_k``, added to its ``lambda^2`` (the damping policy's singular
part, none unless a policy is given: ``mu_k`` damps near singularities); the levels are marked
``Level.search``, so that a candidate's correction is ``M^T (G + mu_k I)^-1 r`` when ``mu_k`` is
not too small (:func:`reljac.ik.hierarchy._correction`).

A step is kept (:mod:`reljac.ik.search_order`) only if it lowers the levels' costs
``c_k = |b|^2`` summed over the level's tasks (``|W e|^2``; for a task with bounds its squared
weighted violation ``|W (e - n)|^2``, n the nearest point of its bounds to e: 0 inside) in
lexicographic order from
the first level not met (the active level: its cost above ``floor = tol^2`` and above 0.01 times
the largest cost of a level below it that counts for convergence; the first level whose cost
differs decides; costs under ``floor`` tie, as does a relative difference under 1e-12), while the
met levels above it stay under ``max(floor, 0.01 c_active)`` (a step for a lower level moves them
at second order; the next Newton steps bring them back as the levels below converge); then every
``mu_k`` shrinks (x ``mu_shrink``, down to ``mu_min``). Else the step is tried again from the same
q with more damping (x ``mu_grow``) on the levels below the one that got worse, when it was met
(their motion moved it: damping it too would slow its own convergence) and on the odd rejections
of a streak, and on the even ones on it too (its own step may overshoot); q's rows and
constraints are kept from before the rejected step, not evaluated again. A step that takes every
counted task with bounds that was beyond tol of them at q to within tol (it entered them) is
first cut back to where they enter: ``ENTRY_BISECTIONS = 16`` halvings of its fraction t in
[0, 1], the end of the bracket that is inside kept (inside costs nothing, so a full Newton step
could end anywhere inside, deep in when the linearization is poor; the search ends on the face it
came through, within tol).

A local search ends when every task that counts for convergence has its error norms
(:meth:`Task.error_norms`: of its violation for a task with bounds) at most ``tol`` and q
satisfies the limits' rows (no collision pair closer than its minimum distance, the centre of mass
in its support region: :func:`~reljac.ik.search_options.feasible`): converged; or after ``max_iters`` iterations, when
every ``mu_k`` exceeds ``mu_max``, or after ``stall_iters`` iterations in a row that were rejected
or improved by less than ``stall_ratio`` (relative).

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
ends on a window of its own (:func:`reljac.ik.search_order.window_stalled`): when its first level
above ``floor`` is the same as ``STRICT_WINDOW = 3`` iterations before and has not fallen below
``STALL_WINDOW_RATIO`` times its cost then (from its ``STRICT_WINDOW_FROM = 3``-rd iteration on):
a strict phase meets its first level in a few Newton steps and then creeps (dual arm, 600
targets of ``bench solve``'s protocol: 3 of 443 strict phases converged, their iterations a fifth
of all; Newton steps per solve: mean 58 -> 53, 99th percentile 337 -> 289; a window of 2: 51,
280; none at all: 48, 267, but then no priorities restored). With a single level there is one
phase, which ends only as said above.

**The exact pass**: a search of two phases that ends without converging (restarts spent, or its
budget), while at the best configuration found a level above the first unmet one is met only by
the slack (:func:`~reljac.ik.search_order.slack_used`), ends with a strict local search from that
configuration with the steps kept in exact lexicographic order (a level above the active one may
not rise above ``floor``), under the strict window; its configurations count for the best found.
The slack lets a level sit at up to 1 % of the cost left below it, met for now, which is what a
search that never converges would return: strict priority broken in the answer (Panda, a position
it can reach above an orientation it cannot have there: the position was returned 4 cm off; with
the exact pass, met, and the orientation as close as it allows). A timed search of two phases
keeps for it the time of ``EXACT_RESERVE = 20`` iterations at its mean iteration time so far
(the rest of the search ends that much before the budget). Run after every unconverged strict
phase instead, it cost the searches that converge (``bench solve``'s 600 dual-arm targets: Newton
steps per solve, mean 53 -> 58, 99th percentile 289 -> 326); at the end it costs them nothing.

**Restarts** (:mod:`reljac.ik.search_restarts`): a local search that ends without converging is
followed by another, from where it ended with every bounded coordinate that lies within
``PARTIAL_BAND`` (1 %) of its range from a limit drawn anew, uniform inside its limits, the others
kept: the joints at their limits are what stopped it, the others hold progress (on the dual arm:
99th percentile of Newton steps per solve 457 -> 258, single chains' 92-134 from 105-196). Every
``FRESH_EVERY``-th (third) restart, and whenever no coordinate is at a limit, starts from a random
configuration: each coordinate of a joint with finite limits uniform inside them, each unbounded
revolute joint a uniform angle, every other coordinate (floating bases, spherical joints) as in the
first seed. The random stream is splitmix64 seeded with ``seed``, the same in C++. The search ends
on convergence, after ``restarts`` restarts (None: no cap, then a timeout is needed), or when
``timeout`` seconds of wall clock have passed (checked every iteration); it returns the
configuration with the lexicographically smallest costs seen among those that satisfy the limits'
rows (any, when none did).
"""

from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

from ..exceptions import SupportError
from ..relative import Kinematics
from .controller import Controller
from .hierarchy import Level
from .limits import intersect
from .search_options import CONVERGED, EXHAUSTED, FAILED, TIMEOUT, SearchOptions, SearchResult, feasible
from .search_order import SLACK, improves, lexicographically_lower, raise_damping, slack_used, window_stalled
from .search_restarts import SplitMix64, restart_configuration
from .search_rows import level_of, newton_rows
from .task import Task

POLISH_ITERS = 20  # Newton iterations of the strict phase after a flat one, at most
EXACT_RESERVE = 20  # iterations' time a timed search of two phases keeps for its exact pass
STALL_WINDOW = 8  # a flat phase ends when its counted cost has not fallen by 30 % over this many iterations
STALL_WINDOW_FROM = 8  # ... from this iteration on
STALL_WINDOW_RATIO = 0.7
STRICT_WINDOW = 3  # a strict phase ends when its first level not met has not fallen by 30 % over this many
STRICT_WINDOW_FROM = 3  # ... iterations, from this iteration on
ENTRY_BISECTIONS = 16  # halvings of a step cut back to where the bounded tasks it took inside enter


def flat_levels(levels: list[list[Task]], counted: list[Task]) -> list[list[Task]]:
    """The levels of a flat local search: every counted task in one level (in order), then each
    level's other tasks (postures) as a level of their own."""
    ids = {id(t) for t in counted}
    first = [t for level in levels for t in level if id(t) in ids]
    rest = [[t for t in level if id(t) not in ids] for level in levels]
    return ([first] if first else []) + [level for level in rest if level]


class PythonSearch:
    """The search on the Python rows and solver (the specification; see the module docstring)."""

    def __init__(self, controller: Controller, counted: list[Task], options: SearchOptions,
                 sample: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        self.controller, self.counted, self.o, self.sample = controller, counted, options, sample
        self.robot = controller.robot
        self.strict = [list(level) for level in controller.levels]
        self.flat = flat_levels(self.strict, counted)
        self.levels: list[Level] = []
        self.failing = -1
        self.reserving = False  # a timed search keeps time for its exact pass (run: two phases)

    def evaluate(self, q: np.ndarray, structure: list[list[Task]]) -> tuple[Kinematics, np.ndarray, np.ndarray]:
        """The kinematics at q, the search-mode rows of `structure`'s levels (kept for the step),
        and the costs: per level of the controller (for the best found), per level of `structure`
        (for the steps)."""
        kin = Kinematics(self.robot, q, data=self.controller.data)
        rows = {id(task): newton_rows(task, kin) for task in self.controller.tasks}
        with np.errstate(over="ignore"):  # |W e|^2 may overflow: inf, no local search from q
            squared = {id(task): float(rows[id(task)].b @ rows[id(task)].b) for task in self.controller.tasks}
        for i, task in enumerate(self.controller.tasks):  # the first that overflows: the core's failing task
            if not np.isfinite(squared[id(task)]) and self.failing < 0:
                self.failing = i
        self.levels = [level_of([rows[id(t)] for t in level], self.robot.nv) for level in structure]

        def costs(levels: list[list[Task]]) -> np.ndarray:
            return np.array([sum(squared[id(t)] for t in level) for level in levels])

        return kin, costs(self.strict), costs(structure)

    def converged(self, kin: Kinematics) -> bool:
        return all(max(task.error_norms(kin).values()) <= self.o.tol for task in self.counted)

    def constraints(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """The limits' box and rows at kin's q for a step of dt = 1 (intersect)."""
        lo, hi, C, d, _ = intersect([limit.constraint(kin, 1.0) for limit in self.controller.limits], self.robot.nv)
        return lo, hi, C, d

    def newton_step(self, kin: Kinematics, mu: np.ndarray, constraints: tuple) -> np.ndarray | None:
        """q + v (integrated, guarded): the hierarchy's step at kin's q inside `constraints` (of
        that q) with damping mu (one per level), or None."""
        c = self.controller
        for level, damping in zip(self.levels, mu, strict=True):
            level.extra_damping, level.search = float(damping), True
        v, _ = c._solve(self.levels, *constraints, c.damping)
        if not np.isfinite(v).all():
            return None
        largest = float(np.max(np.abs(v), initial=0.0))
        if self.o.max_step is not None and largest > self.o.max_step:  # the direction kept
            v = v * (self.o.max_step / largest)
        self.v = v
        q_new = self.advance(kin.q, v)
        return q_new if np.isfinite(q_new).all() else None

    def advance(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """q + v integrated on the configuration manifold, then guarded by the limits."""
        q_new = pin.integrate(self.robot.model, q, v)
        for limit in self.controller.limits:
            q_new = limit.guard(q_new, q)
        return q_new

    def outside(self, kin: Kinematics) -> list[Task]:
        """The counted tasks with bounds whose violation norms exceed tol at kin's q."""
        return [t for t in self.counted if t.bounds is not None and max(t.error_norms(kin).values()) > self.o.tol]

    def entered(self, kin: Kinematics, costs: np.ndarray, outside: list[Task]) -> bool:
        """Every task of `outside` within tol of its bounds at kin's q (its rows finite)."""
        return bool(np.isfinite(costs).all()) and all(max(t.error_norms(kin).values()) <= self.o.tol
                                                      for t in outside)

    def enter(self, q: np.ndarray, outside: list[Task],
              structure: list[list[Task]]) -> tuple[Kinematics, np.ndarray, np.ndarray]:
        """The step from q cut back to where the tasks of `outside` enter their bounds (it took
        them all inside): ENTRY_BISECTIONS halvings of [0, 1] for the fraction t of the step
        self.v, then q + t v evaluated (as :meth:`evaluate`) at the end of the bracket that is inside."""
        low, high = 0.0, 1.0
        for _ in range(ENTRY_BISECTIONS):
            mid = 0.5 * (low + high)
            kin, _, costs = self.evaluate(self.advance(q, mid * self.v), structure)
            if self.entered(kin, costs, outside):
                high = mid
            else:
                low = mid
        return self.evaluate(self.advance(q, high * self.v), structure)

    def run(self, q0: np.ndarray) -> SearchResult:
        o, start = self.o, time.perf_counter()
        random = SplitMix64(o.seed)
        for limit in self.controller.limits:
            limit.reset()
        self.start, self.iterations = start, 0
        self.best_q: np.ndarray = q0
        self.best_costs: np.ndarray | None = None
        self.best_feasible = False
        self.failing = -1  # the first task whose rows were not finite (FAILED), as the core's
        ids = {id(t) for t in self.counted}
        counted = [[any(id(t) in ids for t in level) for level in levels] for levels in (self.strict, self.flat)]
        phases = [(self.flat, counted[1]), (self.strict, counted[0])] if len(self.flat) != len(self.strict) \
            else [(self.strict, counted[0])]
        self.reserving = len(phases) == 2  # (one phase: one level of counted tasks, no slack, no exact pass)
        q, searches, best_flat = q0, 0, None
        while True:
            searches += 1
            for structure, counts in phases:  # the flat phase, then the strict one from where it ended
                two = len(phases) == 2
                if two and structure is self.strict:
                    ended = self.ended[np.asarray(phases[0][1], dtype=bool)]
                    if best_flat is not None and not lexicographically_lower(ended, best_flat, o.floor)[0]:
                        continue  # not a candidate for the answer: no strict phase
                    best_flat = ended
                cap = min(o.max_iters, POLISH_ITERS) if two and structure is self.strict else o.max_iters
                status, q = self.local(q, structure, counts, cap, window=two and structure is self.flat)
                if status != EXHAUSTED:
                    return self.end(status, searches, counted[0])
            if o.restarts is not None and searches > o.restarts:
                return self.end(FAILED if self.best_costs is None else EXHAUSTED, searches, counted[0])
            if self.timed_out():
                return self.end(TIMEOUT, searches, counted[0])
            q = restart_configuration(random, q0, q, searches, *self.sample)

    def end(self, reason: int, searches: int, counts: list[bool]) -> SearchResult:
        """The result; a search of two phases that ends unconverged with a level above its first
        unmet one met only by SLACK (at the best found) ends on the exact pass from the best found,
        which may use the time reserved for it (:meth:`timed_out`)."""
        if reason in (EXHAUSTED, TIMEOUT) and self.reserving and self.best_costs is not None and \
                slack_used(self.best_costs, self.o.floor, counts):
            self.reserving = False  # the whole budget from here
            if self.local(self.best_q, self.strict, counts, self.o.max_iters, exact=True)[0] == CONVERGED:
                reason = CONVERGED
        return self.result(reason, searches)

    def timed_out(self) -> bool:
        """The budget spent; while `reserving`, less the time of EXACT_RESERVE iterations at the
        mean time of an iteration so far (the exact pass's share)."""
        if self.o.timeout is None:
            return False
        elapsed = time.perf_counter() - self.start
        reserve = EXACT_RESERVE * elapsed / self.iterations if self.reserving and self.iterations else 0.0
        return elapsed >= self.o.timeout - reserve

    def result(self, reason: int, searches: int) -> SearchResult:
        """The search's result: the converged q (kept as best) or the best found."""
        costs = np.full(len(self.strict), np.inf) if self.best_costs is None else self.best_costs
        return SearchResult(self.best_q.copy(), reason == CONVERGED, reason, self.iterations, searches, costs,
                            time.perf_counter() - self.start, self.failing if self.best_costs is None else -1)

    def local(self, q: np.ndarray, structure: list[list[Task]], counts: list[bool],
              max_iters: int, window: bool = False, exact: bool = False) -> tuple[int, np.ndarray]:
        """A local search from q on the levels `structure`: (CONVERGED, q), (TIMEOUT, q), or
        (EXHAUSTED, the q it ended at; self.ended: its costs). Keeps the best configuration seen
        (lexicographic). window: also end when the counted cost has not fallen below
        STALL_WINDOW_RATIO times itself STALL_WINDOW iterations before (from the STALL_WINDOW_FROM-th on).
        The strict phase after a flat one also ends on its own window (:func:`window_stalled`,
        STRICT_WINDOW iterations, from the STRICT_WINDOW_FROM-th on). exact: steps kept in exact
        lexicographic order (no SLACK for the levels above the active one: the exact pass)."""
        o = self.o
        polish = not window and structure is self.strict and len(self.flat) != len(self.strict)
        kin, level_costs, costs = self.evaluate(q, structure)
        mu, stale, streak, it = np.full(len(structure), o.mu_initial), 0, 0, 0
        mask = np.asarray(counts, dtype=bool)
        history = [float(costs[mask].sum())]  # the counted cost after each iteration
        trail = [costs]  # the costs after each iteration (the strict phase's window)
        rejected = False  # the last step was: q, its rows (kept) and its constraints are as checked
        while np.isfinite(costs).all():  # (rows that are not finite: no local search from q)
            if not rejected:
                try:
                    constraints = self.constraints(kin)
                except SupportError:  # no support region left at q (a restart's legs anywhere)
                    if self.best_costs is None:
                        raise  # the seed itself: the caller's contacts give no region to hold
                    costs = np.full_like(costs, np.inf)  # not a candidate: ends this local search
                    break
                ok = feasible(constraints[3])
                if self.best_costs is None or (ok and not self.best_feasible) or (
                        ok == self.best_feasible and lexicographically_lower(level_costs, self.best_costs, o.floor)[0]):
                    self.best_q, self.best_costs, self.best_feasible = kin.q, level_costs, ok
                if ok and self.converged(kin):
                    self.best_q, self.best_costs = kin.q, level_costs
                    return CONVERGED, kin.q
                outside = self.outside(kin)
            if self.timed_out():
                return TIMEOUT, kin.q
            if it >= max_iters or (window and it >= STALL_WINDOW_FROM and history[-1] > max(
                    o.floor, STALL_WINDOW_RATIO * history[-1 - STALL_WINDOW])) or (
                    polish and it >= STRICT_WINDOW_FROM
                    and window_stalled(costs, trail[-1 - STRICT_WINDOW], o.floor, STALL_WINDOW_RATIO)):
                break
            it += 1
            q_new = self.newton_step(kin, mu, constraints)
            if q_new is None:
                break
            self.iterations += 1
            levels = self.levels  # q's rows: a rejected step keeps them (no second evaluation at q)
            kin_new, new_level_costs, new_costs = self.evaluate(q_new, structure)
            if outside and self.entered(kin_new, new_costs, outside):  # to where they enter
                kin_new, new_level_costs, new_costs = self.enter(kin.q, outside, structure)
            better, ratio, culprit, active = improves(new_costs, costs, o.floor, counts, 0.0 if exact else SLACK)
            if better:
                kin, level_costs, costs = kin_new, new_level_costs, new_costs
                mu = np.maximum(mu * o.mu_shrink, o.mu_min)
                streak, rejected = 0, False
                stale = stale + 1 if ratio < o.stall_ratio else 0
                if stale >= o.stall_iters:
                    break
            else:
                streak += 1
                raise_damping(mu, culprit, active, streak, o.mu_grow)
                stale += 1
                if mu.min() > o.mu_max or stale >= o.stall_iters:
                    break
                self.levels, rejected = levels, True  # q's rows again (kin's data stays q_new's: unread)
            history.append(float(costs[mask].sum()))
            trail.append(costs)
        self.ended = costs
        return EXHAUSTED, kin.q

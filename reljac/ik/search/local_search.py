"""One local search of the search for a configuration behind :func:`reljac.ik.solve`
(:class:`LocalSearch`; :mod:`reljac.ik.search.python_search` runs them: its phases, restarts and
exact pass): the readable specification of the compiled one (``src/core/search_local.hpp``) and
its oracle (``RELJAC_BACKEND=python`` runs it).

**A local search** from a configuration q takes Newton (Gauss-Newton) steps on the same
strict-priority hierarchy as the controller, with the controller's rows in *search mode*: every
task's rows are ``A = W J``, ``b = -W e`` (gain 1, no speed cap, no feed-forward; a task with
bounds keeps them, ``W (lower - e) <= A v <= W (upper - e)``: into them from outside, free
inside them with margin (:meth:`Task.bound_rates` with ``search=True``; its level is a bounded
one, solved by :mod:`reljac.ik.solvers.inequality`), the step is
``dt = 1`` long, joint position limits are held by saturation in the null space (a step may use
half the way to a limit, ``limit_gain = 0.5``: full steps slam joints onto their limits, where the
levels below lose their way), the constraints given (a support region) keep their rows but
collision avoidance, whose pairs are checked where the levels are met instead of steered
(:mod:`reljac.ik.search.collisions`), and no velocity limit nor reversal damping applies, nor any cap on the step unless
``max_step`` is given (then a step whose largest joint displacement ``max_i |v_i|`` [rad or m]
exceeds it is scaled down to it, its direction kept). Each level k has its own
Levenberg-Marquardt damping ``mu_k``, added to its ``lambda^2`` (the damping policy's singular
part, none unless a policy is given: ``mu_k`` damps near singularities); the levels are marked
``Level.search``, so that a candidate's correction is ``M^T (G + mu_k I)^-1 r`` when ``mu_k`` is
not too small (:func:`reljac.ik.solvers.hierarchy._correction`).

A step is kept (:mod:`reljac.ik.search.order`) only if it lowers the levels' costs
``c_k = |b|^2`` summed over the level's tasks (``|W e|^2``; for a task with bounds its squared
weighted violation ``|W (e - n)|^2``, n the nearest point of its bounds to e: 0 inside) in
lexicographic order from
the first level not met (the active level: its cost above ``floor = (tol w)^2``, w the counted
tasks' smallest row weight at most 1 (``SearchOptions.weight``: a weighted cost under it has its
errors under tol), and above 0.01 times
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
in its support region: :func:`~reljac.ik.search.options.feasible`): converged; or after ``max_iters`` iterations, when
every ``mu_k`` exceeds ``mu_max``, or after ``stall_iters`` iterations in a row that were rejected
or improved by less than ``stall_ratio`` (relative).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ...exceptions import SupportError
from ...relative import Kinematics
from ..controller import Controller
from ..limits.base import intersect
from ..solvers.hierarchy import Level
from ..tasks.base import Task
from .budget import Budget
from .collisions import CheckedLimits
from .options import CONVERGED, EXHAUSTED, TIMEOUT, SearchOptions, feasible
from .order import SLACK, improves, lexicographically_lower, raise_damping, window_stalled
from .rows import level_of, newton_rows

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


class LocalSearch:
    """Local searches on the Python rows and solver (the specification; see the module docstring),
    the best configuration they found and the budget's clock; :class:`~reljac.ik.search.python_search.PythonSearch`
    runs them (phases, restarts, the exact pass).
    counted: the tasks whose errors decide convergence (a task of weight 0 has no rows, so it does
    not); the levels' structure (the flat phase's first level, the levels that count) is made of
    every task that counts for convergence by its kind (all but postures), as the core's."""

    def __init__(self, controller: Controller, counted: list[Task], options: SearchOptions,
                 sample: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        self.controller, self.counted, self.o, self.sample = controller, counted, options, sample
        self.robot = controller.robot
        self.strict = [list(level) for level in controller.levels]
        self.leading = [t for t in controller.tasks if t.counts_for_convergence]
        self.flat = flat_levels(self.strict, self.leading)
        self.levels: list[Level] = []
        self.failing = -1
        self.budget = Budget(None, options.floor, [], False)
        self.iterations = 0
        self.best_q: np.ndarray = np.zeros(0)
        self.best_costs: np.ndarray | None = None
        self.best_feasible = False
        self.ended = np.zeros(0)  # the costs where the last local search ended
        self.checks = CheckedLimits(controller.limits, controller.tasks)
        self.collided = False  # the last local search met the levels in a collision
        self.best_flat: np.ndarray | None = None  # the counted costs of the lowest flat phase's end

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
        """The steered limits' box and rows at kin's q for a step of dt = 1 (intersect): every
        limit but collision avoidance (:mod:`reljac.ik.search.collisions`)."""
        lo, hi, C, d, _ = intersect([limit.constraint(kin, 1.0) for limit in self.checks.limits()], self.robot.nv)
        return lo, hi, C, d

    def offer(self, q: np.ndarray, level_costs: np.ndarray, ok: bool) -> None:
        """q (with its costs per level; `ok`: it satisfies the limits) as the best found, if it
        is: any first, then one that satisfies the limits before one that does not, then the
        lexicographically lower."""
        if self.best_costs is None or (ok and not self.best_feasible) or (
                ok == self.best_feasible and lexicographically_lower(level_costs, self.best_costs, self.o.floor)[0]):
            self.best_q, self.best_costs, self.best_feasible = q, level_costs, ok

    def offer_end(self, q: np.ndarray, level_costs: np.ndarray, ok: bool) -> None:
        """A local search's end at q (ok: its steered limits hold there) offered as the best, its
        collision pairs checked (with checked limits, the only configurations but converged ones
        that compete: see :mod:`reljac.ik.search.collisions`)."""
        if self.checks.lazy and np.isfinite(level_costs).all():
            self.offer(q, level_costs, ok and self.checks.clear(Kinematics(self.robot, q, data=self.controller.data)))

    def newton_step(self, kin: Kinematics, mu: np.ndarray, constraints: tuple) -> np.ndarray | None:
        """q + v (integrated, guarded): the hierarchy's step at kin's q inside `constraints` (of
        that q) with damping mu (one per level), or None."""
        c = self.controller
        for level, damping in zip(self.levels, mu, strict=True):
            level.extra_damping, level.search = float(damping), True
        v, _ = c.solve_levels(self.levels, *constraints)
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
        self.v, then q + t v evaluated (as :meth:`evaluate`) at the end of the bracket that is
        inside. A timed search halves no more once one more halving and that last evaluation, at
        the mean time of a halving so far, would spend its budget (:meth:`Budget.spent`): a
        bracket's inside end is inside at any halving, and the halvings cost up to 17 evaluations."""
        low, high = 0.0, 1.0
        began = self.budget.elapsed()
        for k in range(ENTRY_BISECTIONS):
            if k and self.budget.spent(self.iterations, self.best_costs, 2 * (self.budget.elapsed() - began) / k):
                break
            mid = 0.5 * (low + high)
            kin, _, costs = self.evaluate(self.advance(q, mid * self.v), structure)
            if self.entered(kin, costs, outside):
                high = mid
            else:
                low = mid
        return self.evaluate(self.advance(q, high * self.v), structure)

    def timed_out(self) -> bool:
        """The budget spent (:meth:`Budget.spent`: less the exact pass's share while it is kept)."""
        return self.budget.spent(self.iterations, self.best_costs)

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
        ok = False  # q satisfies the steered limits
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
                lazy = self.checks.lazy  # (collision pairs checked, not steered)
                if not lazy:  # (lazy: where a local search converges or ends, its pairs checked)
                    self.offer(kin.q, level_costs, ok)
                if ok and self.converged(kin):
                    if self.checks.clear(kin):  # (pairs not steered now; none: True)
                        self.best_q, self.best_costs, self.best_feasible = kin.q, level_costs, True
                        return CONVERGED, kin.q
                    self.offer(kin.q, level_costs, False)  # the levels met in a collision: a restart
                    self.collided = True
                    break
                outside = self.outside(kin)
            if self.timed_out():
                self.offer_end(kin.q, level_costs, ok)
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
        if not self.collided and np.isfinite(costs).all():  # (not where q's rows or support region failed)
            self.offer_end(kin.q, level_costs, ok)
        self.ended = costs
        return EXHAUSTED, kin.q

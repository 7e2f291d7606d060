"""The records of a search (:mod:`reljac.ik.search.local_search`): how it runs (:class:`SearchOptions`), what it
found (:class:`SearchResult`, its reasons), and when a configuration satisfies the limits' rows
(:func:`feasible`), and the options checked from a caller's values (:func:`checked_options`).

The options are declared once, in C++ (``RELJAC_SEARCH_OPTIONS`` in src/core/search_options.hpp:
the core's struct and its bindings by name); :class:`SearchOptions` is their twin for the Python
backend (None where the core says -1), handed to the core by keyword (:func:`core_options`);
tests/test_search_options.py compares the two field by field. The results carry the same fields
and codes."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ...exceptions import TaskError
from ...validation import as_count, as_float, shown_integer

CONVERGED, TIMEOUT, EXHAUSTED, FAILED = 0, 1, 2, 3  # SearchResult.reason, as the core's
FEASIBLE_TOLERANCE = 1e-9  # how far below 0 a row's d may be at a converged q [units of d]
MAX_COUNT = 2**31 - 1  # max_iters and restarts at most this (the core counts them in C ints)
MAX_TOL = 1e100  # [m or rad] tol at most this (the search compares costs with tol^2)


@dataclass
class SearchOptions:
    """How a search runs (the fields of the core's ``SearchOptions``, the same defaults).

    tol [m, rad]; max_iters per local search; restarts (None: no cap); timeout [s] of wall clock
    (None: none); seed of the random stream; the Levenberg-Marquardt damping's start, factors,
    floor and ceiling [same units as the levels' sigma^2]; stall_iters and stall_ratio; floor
    [m^2, rad^2] under which level costs tie; max_step [rad or m]: a Newton step's largest joint
    displacement max_i |v_i| at most this (the step scaled, its direction kept; None: no cap).
    """

    tol: float = 1e-4
    max_iters: int = 100
    restarts: int | None = 20
    timeout: float | None = None
    seed: int = 0
    mu_initial: float = 1e-2
    mu_grow: float = 10.0
    mu_shrink: float = 0.5
    mu_min: float = 1e-12
    mu_max: float = 1e4
    stall_iters: int = 10
    stall_ratio: float = 1e-3
    weight: float = 1.0
    max_step: float | None = None

    @property
    def floor(self) -> float:
        """Level costs below this tie, and a level under it is met: (tol weight)^2 (weighted costs
        under it have their tasks' errors under tol)."""
        return (self.tol * self.weight) ** 2


def row_weight(tasks: Sequence[Any]) -> float:
    """The smallest positive row weight of `tasks` (the counted ones; 1 if none has one):
    SearchOptions.weight (their costs are weighted, so the floor under which a level is met scales
    with it; with a weight of 0.01 and the floor tol^2, a level of errors 100 x tol was met). Above 1
    as below: capped at 1, the damping stayed that of weight 1 against a level's sigma^2 grown as
    w^2, and a reachable Panda pose at weight 1e6 came out 'unreachable' after 5 restarts."""
    smallest = math.inf
    for task in tasks:
        weights = np.asarray(task.weight, dtype=float)
        if (weights > 0).any():
            smallest = min(smallest, float(weights[weights > 0].min()))
    return smallest if math.isfinite(smallest) else 1.0


def weighted_options(options: SearchOptions, tasks: Sequence[Any]) -> SearchOptions:
    """`options` for a search whose counted tasks are `tasks`: their row weight w (:func:`row_weight`),
    hence the floor (tol w)^2, and the Levenberg-Marquardt damping's start, floor and ceiling times
    w^2: the levels' sigma^2 scale as w^2, so that a weight common to the tasks leaves the steps as
    they were (an absolute start of 1e-2 against sigma^2 ~ 1e-12 took a task of weight 1e-6 nowhere:
    'unreachable' after 21 local searches, 29 iterations at 1e-4 against 5 at 1)."""
    w = row_weight(tasks)
    scale = w * w
    return dataclasses.replace(options, weight=w, mu_initial=options.mu_initial * scale,
                               mu_min=options.mu_min * scale, mu_max=options.mu_max * scale)


MU_FIELDS = ("mu_initial", "mu_min", "mu_max")  # what weighted_options scales


def weigh(options: Any, weighted: SearchOptions) -> None:
    """The core's SearchOptions `options` take a call's weighted values (:func:`weighted_options`:
    the weight, the floor and the Levenberg-Marquardt damping's)."""
    options.weight, options.floor = weighted.weight, weighted.floor
    for name in MU_FIELDS:
        setattr(options, name, getattr(weighted, name))


UNSET = ("restarts", "timeout", "max_step")  # None here, -1 in the core (no cap, no budget)


def core_options(options: SearchOptions, core: Any) -> Any:
    """The core's SearchOptions (`core`: the compiled module) with the same values, by keyword:
    every field, floor ((tol weight)^2) and -1 for None."""
    values = {f.name: getattr(options, f.name) for f in fields(options)}
    values.update({name: -1 for name in UNSET if values[name] is None}, floor=options.floor)
    return core.SearchOptions(**values)


@dataclass
class SearchResult:
    """What a search found: q (nq,), converged, reason (CONVERGED, TIMEOUT, EXHAUSTED, FAILED),
    iterations (Newton steps in all), searches (1 + restarts), level_costs (one per level) and
    seconds of wall clock; failing: the index of a task whose rows were not finite (FAILED)."""

    q: np.ndarray
    converged: bool
    reason: int
    iterations: int
    searches: int
    level_costs: np.ndarray
    seconds: float
    failing: int = -1


def feasible(d: np.ndarray | None) -> bool:
    """q satisfies the limits' rows C v <= d at v = 0 (no pair closer than its minimum distance,
    the centre of mass inside its region): every d_j >= -FEASIBLE_TOLERANCE."""
    return d is None or len(d) == 0 or float(np.min(d)) >= -FEASIBLE_TOLERANCE


def checked_seed(seed: Any) -> int:
    """A search's seed: an integer in [0, 2**64) (TaskError otherwise)."""
    seed = as_count(seed, "seed", minimum=0)
    if seed >= 2 ** 64:
        raise TaskError(f"seed must be below 2**64, got {shown_integer(seed)}")
    return seed


def checked_options(tol: Any, max_iters: Any, restarts: Any, timeout: Any, seed: Any,
                    max_step: Any = None) -> SearchOptions:
    """SearchOptions from a caller's values, each checked (a TaskError naming it and what is valid);
    restarts None: 20 without a timeout, no cap with one."""
    tol = as_float(tol, "tol", minimum=0.0, strict=True, valid="a positive number [m or rad]")
    if tol > MAX_TOL:
        raise TaskError(f"tol must be at most {MAX_TOL:g} [m or rad], got {tol:g}")
    max_iters = as_count(max_iters, "max_iters", minimum=1, maximum=MAX_COUNT)
    if timeout is not None:
        timeout = as_float(timeout, "timeout [s]", minimum=0.0, strict=True, valid="a positive number of seconds")
    restarts = ((None if timeout is not None else 20) if restarts is None else
                as_count(restarts, "restarts", maximum=MAX_COUNT))
    max_step = None if max_step is None else as_float(max_step, "max_step", minimum=0.0, strict=True,
                                                      valid="a positive number [rad or m] or None")
    return SearchOptions(tol=tol, max_iters=max_iters, restarts=restarts, timeout=timeout, seed=checked_seed(seed),
                         max_step=max_step)

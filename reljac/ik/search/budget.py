"""A search's time budget (:mod:`reljac.ik.search.local_search`, whose docstring states the rules;
the core's twin is in src/core/search.cpp): when a timed search ends, what it keeps for its exact
pass, and what a :class:`~reljac.ik.search.solve.Solver`'s call keeps for outside its search.

A call's budget is a promise: it searches for about its budget whatever earlier calls did.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from .order import slack_used

EXACT_RESERVE = 20  # iterations' time a timed search of two phases keeps for its exact pass
EXACT_SHARE = 0.5  # ... at most this share of its budget
OUTSIDE_START = 2e-4  # [s] a call's time outside its search, assumed before a Solver's first call
OUTSIDE_WINDOW = 50  # a call's budget leaves the median time outside the search of the last this many calls
RESERVE_SHARE = 0.25  # ... at most this share of the budget: the search has the rest, whatever earlier calls did


def outside_reserve(recent: Sequence[float], timeout: float) -> float:
    """The time [s] a call with budget `timeout` [s] keeps for outside its search, from the times
    `recent` [s] its Solver's recent calls spent outside theirs: their median (the lower one of an
    even count: half of them must be slower to raise it, one is not enough), at most
    RESERVE_SHARE x timeout."""
    ordered = sorted(recent)
    return min(ordered[(len(ordered) - 1) // 2], RESERVE_SHARE * timeout)


class CallShare:
    """A Solver call's budget, `timeout` [s] from `start` [s, time.perf_counter], and its search's
    share of it; `recent`: the times [s] the Solver's recent calls spent after their searches'
    shares were set, outside the searches (:func:`outside_reserve`)."""

    def __init__(self, timeout: float, start: float, recent: Sequence[float]) -> None:
        self.timeout, self.start, self.recent = timeout, start, recent
        self.began = start

    def share(self) -> float:
        """The search's share [s], from now: the rest of the budget less what the call keeps for
        after the search (:func:`outside_reserve`); at least 1 us (one evaluation)."""
        self.began = time.perf_counter()
        return max(self.timeout - (self.began - self.start) - outside_reserve(self.recent, self.timeout), 1e-6)

    def outside(self, end: float, seconds: float) -> float:
        """The time [s] a call that ended at `end` [s, time.perf_counter] spent outside its search
        of `seconds` [s] since the share was set."""
        return max(end - self.began - seconds, 0.0)


class Budget:
    """The clock of one search: `timeout` [s] (None: none) from its start.

    ``reserving``: the search has two phases and keeps time for its exact pass, while the best
    configuration so far would end on it (``counts``: per level of the levels as given, it holds
    a counted task; ``floor``: the search's); ``kept`` [s]: the time kept for the pass when the
    search last went on (:meth:`spent`); ``assured``: once the pass has begun, the iterations (in
    all) it runs whatever the clock (:meth:`exact_pass`)."""

    def __init__(self, timeout: float | None, floor: float, counts: list[bool], reserving: bool) -> None:
        self.timeout, self.floor, self.counts, self.reserving = timeout, floor, counts, reserving
        self.start = time.perf_counter()
        self.kept = 0.0
        self.assured = 0

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def spent(self, iterations: int, best_costs: np.ndarray | None, next_seconds: float | None = None) -> bool:
        """The budget spent after `iterations` Newton steps (best_costs: per level, of the best
        configuration so far): what comes next, `next_seconds` [s] (None: one more iteration, at
        the mean time of one so far), would end past it (a search of slow iterations, such as a
        task's rows computed in Python, ends before its budget rather than an iteration after
        it); while reserving and the best would end on the exact pass (:func:`slack_used`), less
        the pass's share: the time of EXACT_RESERVE iterations at that mean time, at most
        EXACT_SHARE of the budget. Never before the iterations assured to the exact pass. Where
        the search goes on, that share is what it keeps (``kept``)."""
        if self.timeout is None or iterations < self.assured:
            return False
        elapsed = self.elapsed()
        mean = elapsed / iterations if iterations else 0.0
        reserve = 0.0
        if self.reserving and iterations and best_costs is not None and slack_used(best_costs, self.floor, self.counts):
            reserve = min(EXACT_RESERVE * mean, EXACT_SHARE * self.timeout)
        if elapsed + (mean if next_seconds is None else next_seconds) >= self.timeout - reserve:
            return True
        self.kept = reserve
        return False

    def exact_pass(self, iterations: int) -> None:
        """The exact pass begins after `iterations` Newton steps: no reserve from here, and the pass
        runs at least the iterations of the time kept for it (``kept``: the share the search left
        when it last went on, none where its best did not need the pass then), at most
        EXACT_RESERVE, at the mean iteration time so far, whatever the clock: a moment the machine
        stops the process, just before the pass or in it, does not cut it short (at rest the
        budget's end comes about when they are done), and a pass no time was kept for ends on the
        budget."""
        self.reserving = False
        if self.timeout is not None and iterations:
            fit = self.kept / (self.elapsed() / iterations)
            self.assured = iterations + int(min(fit, EXACT_RESERVE))

"""The order a search keeps its steps in (:mod:`reljac.ik.search.local_search`, whose docstring states the
rules): level costs compared lexicographically, the first level not met, whether a step is kept,
and which levels a rejected step damps more. Pure functions of the level costs (numpy only)."""

from __future__ import annotations

import numpy as np

TIE_BAND = 1e-12  # relative difference of two level costs that is a tie
SLACK = 1e-2  # met levels may rise to this fraction of the first unmet level's cost in a kept step


def lexicographically_lower(a: np.ndarray, b: np.ndarray, floor: float) -> tuple[bool, float]:
    """(better, ratio): costs `a` below `b` in lexicographic order (costs under `floor` tie), and
    the relative improvement at the first level that differs."""
    for x, y in zip(a, b, strict=True):
        x, y = max(float(x), floor), max(float(y), floor)
        if x < y * (1.0 - TIE_BAND):
            return True, (y - x) / y
        if x > y * (1.0 + TIE_BAND):
            return False, 0.0
    return False, 0.0


def active_level(costs: np.ndarray, floor: float, counted: list[bool], slack: float = SLACK) -> int:
    """The first level not met: its cost above `floor` and above `slack` times the largest cost of a
    counted level below it (a level that small next to what is left below is met for now: the
    Newton steps bring it back as the levels below converge; slack 0: exact lexicographic order).
    len(costs) when all are met."""
    below = 0.0  # the largest cost of a counted level below k
    bounds = [0.0] * len(costs)
    for k in range(len(costs) - 1, -1, -1):
        bounds[k] = below
        if counted[k]:
            below = max(below, float(costs[k]))
    return next((k for k, c in enumerate(costs) if c > max(floor, slack * bounds[k])), len(costs))


def slack_used(costs: np.ndarray, floor: float, counted: list[bool]) -> bool:
    """A level above the first one not met (:func:`active_level`) is above `floor`: met only by
    SLACK, as a search that stops here would return it (the exact pass then follows)."""
    return active_level(costs, floor, counted) > active_level(costs, floor, counted, 0.0)


def improves(new: np.ndarray, old: np.ndarray, floor: float, counted: list[bool],
             slack: float = SLACK) -> tuple[bool, float, int, int]:
    """(keep, ratio, culprit, active): whether a step from costs `old` to `new` is kept. The levels
    above the active one (:func:`active_level` of `old`, with `slack`) are met; they may rise to
    ``max(floor, slack * old[active])``, and from the active level on the costs must be
    lexicographically lower (:func:`lexicographically_lower`). ratio: the relative improvement at
    the level that decided; culprit: the level that got worse (-1 when kept or all tied)."""
    active = active_level(old, floor, counted, slack)
    if active < len(old):
        rise = max(floor, slack * float(old[active]))
        for k in range(active):
            if float(new[k]) > rise:
                return False, 0.0, k, active
    for k in range(active, len(old)):
        x, y = max(float(new[k]), floor), max(float(old[k]), floor)
        if x < y * (1.0 - TIE_BAND):
            return True, (y - x) / y, -1, active
        if x > y * (1.0 + TIE_BAND) or x != x:  # (NaN: worse)
            return False, 0.0, k, active
    return False, 0.0, -1, active


def raise_damping(mu: np.ndarray, culprit: int, active: int, streak: int, grow: float) -> None:
    """After a rejected step (the `streak`-th in a row, from 1), in place: more damping (x grow)
    for the levels below the level that got worse, when it was met (active > culprit: their motion
    moved it) or on the odd rejections of a streak (it may be their motion); on the even ones,
    and when it is the last level, for it too (its own step may overshoot). Every level when
    they all tied."""
    if culprit < 0:
        mu *= grow
        return
    blame_below = (culprit < active or streak % 2 == 1) and culprit + 1 < len(mu)
    mu[culprit + 1 if blame_below else culprit:] *= grow


def window_stalled(now: np.ndarray, then: np.ndarray, floor: float, ratio: float) -> bool:
    """A strict phase's stall window: the first level above `floor` is the same in the costs
    `now` and `then` (none met in between) and its cost now is above `ratio` times its cost then
    (False when every level is under `floor`)."""
    first = next((k for k, c in enumerate(now) if float(c) > floor), len(now))
    if first == len(now) or not float(then[first]) > floor or any(float(c) > floor for c in then[:first]):
        return False
    return float(now[first]) > ratio * float(then[first])

"""Where a search's restarts start (:mod:`reljac.ik.search.local_search`, whose docstring states the rule):
the random stream (splitmix64, as the core draws it), how each coordinate of q is drawn, a random
configuration inside the limits, and a restart from where the last local search ended."""

from __future__ import annotations

import math

import numpy as np

from ...robot import Robot
from ..limits.joints import JointPositionLimit

PARTIAL_BAND = 0.01  # a bounded coordinate this close to a limit (fraction of its range) is at it
FRESH_EVERY = 3  # every third restart draws every coordinate
MASK64 = (1 << 64) - 1


class SplitMix64:
    """splitmix64 (Steele, Lea and Flood, 2014), as the core draws it."""

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self) -> float:
        """A double in [0, 1)."""
        return (self.next() >> 11) * 2.0 ** -53

    def between(self, lower: float, upper: float) -> float:
        """A double in [lower, upper): lower + uniform() (upper - lower)."""
        return lower + self.uniform() * (upper - lower)


def sampling(robot: Robot, position_limit: JointPositionLimit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kind, lower, upper), each (nq,): how a restart draws each coordinate of q: 0 uniform in
    [lower, upper] (a joint with finite limits, as the position limit keeps them), 2 an unbounded
    revolute joint's (cos, sin) pair from a uniform angle (its second entry: 3), 1 the seed's."""
    model = robot.model
    kind = np.ones(model.nq, dtype=np.int32)
    lower, upper = np.zeros(model.nq), np.zeros(model.nq)
    d = position_limit.description(robot)
    bounded = {int(i): (lo, hi) for i, lo, hi in zip(d.q_index, d.q_min, d.q_max, strict=True)
               if np.isfinite(lo) and np.isfinite(hi)}
    for joint in model.joints[1:]:
        i = joint.idx_q
        if joint.nq == 1 and joint.nv == 1 and i in bounded:
            kind[i] = 0
            lower[i], upper[i] = bounded[i]
        elif joint.nq == 2 and joint.nv == 1:
            kind[i], kind[i + 1] = 2, 3
    return kind, lower, upper


def random_configuration(random: SplitMix64, seed: np.ndarray, kind: np.ndarray, lower: np.ndarray,
                         upper: np.ndarray) -> np.ndarray:
    """A restart's configuration (:func:`sampling`'s kinds), drawn in q's order."""
    q = seed.copy()
    i = 0
    while i < len(q):
        if kind[i] == 0:
            q[i] = random.between(lower[i], upper[i])
        elif kind[i] == 2:
            angle = -math.pi + 2.0 * math.pi * random.uniform()
            q[i], q[i + 1] = math.cos(angle), math.sin(angle)
            i += 1
        i += 1
    return q


def restart_configuration(random: SplitMix64, seed: np.ndarray, ended: np.ndarray, restart: int, kind: np.ndarray,
                          lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The start of restart `restart` (1, 2, ...): where the last local search ended, with its
    bounded coordinates at a limit (within PARTIAL_BAND of their range) drawn anew in q's order,
    the others kept (the joints at their limits are what stopped it); every FRESH_EVERY-th
    restart, and when no coordinate is at a limit, :func:`random_configuration`."""
    if restart % FRESH_EVERY:
        band = PARTIAL_BAND * (upper - lower)
        at = np.flatnonzero((kind == 0) & ((ended - lower <= band) | (upper - ended <= band)))
        if len(at):
            q = ended.copy()
            for i in at:
                q[i] = random.between(lower[i], upper[i])
            return q
    return random_configuration(random, seed, kind, lower, upper)

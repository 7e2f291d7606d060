"""The default collision pairs: the link pairs a robot can keep apart, and why the others are not.

The rules (see :mod:`reljac.collision.model`) are those robot setup tools apply when they write an
SRDF's disabled pairs (MoveIt's Setup Assistant: adjacent links, links in collision at the
default configuration, links in collision in most of its random samples): rigid, adjacent (or
the SRDF's), touching at the reference configuration, near in most sampled configurations.
Distances are the collision model's (convex hulls by default) [m].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from .distances import Distances

if TYPE_CHECKING:  # pragma: no cover
    from ..robot import Robot
    from ..srdf import SRDF

TOUCH_TOLERANCE = 1e-9  # [m] added to touching_distance (exactly tangent shapes)
SAMPLE_SEED = 0  # the always-near rule draws the same configurations every time

Pair = tuple[str, str]
Dropped = tuple[str, str, str]


class PairModel(Protocol):
    """What the rules read and set of a :class:`~reljac.collision.CollisionModel` being built (a
    protocol: the model imports this module, not the other way round)."""

    robot: Robot
    links: list[str]  # links with collision geometry, in model order
    srdf: SRDF | None

    def joint_of(self, name: str) -> int: ...

    def check_only(self, pairs: list[Pair]) -> None: ...

    def distances(self, q: np.ndarray, *, within: float = ..., jacobians: bool = ...) -> Distances: ...


def _adjacent(model: PairModel, a: str, b: str) -> bool:
    """Links separated by exactly one joint (counting links fixed to them)."""
    parents = model.robot.model.parents
    ja, jb = model.joint_of(a), model.joint_of(b)
    return ja != jb and (parents[ja] == jb or parents[jb] == ja)


def structural_pairs(model: PairModel) -> tuple[list[Pair], list[Dropped]]:
    """(candidate pairs, dropped pairs with their reason) by the robot's structure alone: rigid
    pairs, then the SRDF's disabled pairs or, without an SRDF, adjacent ones."""
    candidates, dropped = [], []
    for i, a in enumerate(model.links):
        for b in model.links[i + 1:]:
            reason = None
            if model.joint_of(a) == model.joint_of(b):
                reason = "rigid: fixed to each other"
            elif model.srdf is not None:
                disabled = model.srdf.is_disabled(a, b)
                reason = None if disabled is None else f"SRDF: {disabled}"
            elif _adjacent(model, a, b):
                reason = "adjacent: separated by one joint"
            if reason is None:
                candidates.append((a, b))
            else:
                dropped.append((a, b, reason))
    return candidates, dropped


def _near(model: PairModel, q: np.ndarray, within: float) -> dict[Pair, float]:
    """{pair: distance [m]} of the pairs checked at most `within` apart at q (nq,)."""
    rows = model.distances(q, within=within + TOUCH_TOLERANCE, jacobians=False)
    return dict(zip(rows.pairs, (float(d) for d in rows.distance), strict=True))


def default_pairs(model: PairModel, reference_q: np.ndarray, touching_distance: float, samples: int,
                  always_near: float) -> tuple[list[Pair], list[Dropped]]:
    """(active pairs, dropped pairs with their reason) by every rule, in the model's link order.

    Args:
        reference_q: (nq,) the reference configuration of the touching rule.
        touching_distance: [m] pairs at most this far apart are "touching" / "near".
        samples: random configurations inside the joint limits of the always-near rule (0: off).
        always_near: fraction in (0, 1] of the samples a pair must be near in to be dropped.
    """
    candidates, dropped = structural_pairs(model)
    if not candidates:
        return candidates, dropped
    mm = f"{touching_distance * 1e3:g} mm"
    model.check_only(candidates)
    touching = _near(model, reference_q, touching_distance)
    dropped += [(a, b, f"touching at the reference configuration (d = {d * 1e3:.2f} mm, within {mm})")
                for (a, b), d in touching.items()]
    candidates = [p for p in candidates if p not in touching]
    if samples == 0 or not candidates:
        return candidates, dropped
    counts = dict.fromkeys(candidates, 0)
    rng = np.random.default_rng(SAMPLE_SEED)
    model.check_only(candidates)
    for _ in range(samples):
        for pair in _near(model, model.robot.random_configuration(rng), touching_distance):
            counts[pair] += 1
    always = [p for p in candidates if counts[p] >= always_near * samples]
    dropped += [(a, b, f"near in most configurations: within {mm} in {counts[a, b]} of {samples} random ones")
                for a, b in always]
    return [p for p in candidates if p not in always], dropped

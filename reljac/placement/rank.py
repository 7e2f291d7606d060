"""Scores of a placement and the order candidates are checked in.

A placement's score is its worst pose's (the task is as good as its hardest pose), and at a pose
the worst hand's:

* ``"manipulability"``: sqrt(det(J_p J_p^T)) of the hand's position Jacobian relative to the
  frame F its map is in (the quantity the maps keep: the arm's own dexterity, not the base's);
* ``"joint_margin"``: the smallest distance of a joint of the hands' chains (and the shared
  joints) to a position limit, as a fraction of its range (0 at a limit, 0.5 in the middle).

The maps rank placements before the check: every pose reached first, then the poses reached
surely (not at the boundary of a map: :func:`~reljac.placement.inverse.reach`), then the worst
pose's map manipulability (the maps keep no joint margins: with ``"joint_margin"`` the checked
placements are ordered again by their exact scores).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import ConfigurationError
from ..maps.kernel import manipulability_of_rows
from ..relative import Kinematics
from .inverse import PlacementMaps, Reach

SCORES = ("manipulability", "joint_margin")


def check_score(score: str) -> str:
    """The score's name, or ConfigurationError listing the valid ones."""
    if score not in SCORES:
        raise ConfigurationError(f"score must be one of {', '.join(SCORES)}, got {score!r}")
    return score


def map_order(found: Reach) -> np.ndarray:
    """Placement indices, best first, by (every pose reached, poses surely reached, worst map
    score, poses reached); ties keep the placements' order."""
    complete = found.reached.all(axis=1)
    return np.lexsort((-found.counts, -found.worst, -found.sure.sum(axis=1), ~complete))


def exact_scores(maps: PlacementMaps, q: np.ndarray, score: str) -> np.ndarray:
    """(M, K) the score of each configuration of q (M, K, nq) (module docstring)."""
    check_score(score)
    robot = maps.mobile.robot
    M, K = q.shape[:2]
    flat = q.reshape(M * K, robot.nq)
    if score == "manipulability":
        worst = np.full(M * K, np.inf)
        for hand in maps.hands:
            J = np.array([Kinematics(robot, x).relative_jacobian(maps.chains.frame, hand) for x in flat])
            worst = np.minimum(worst, manipulability_of_rows(J, (0, 1, 2)))
        return worst.reshape(M, K)
    model = robot.model
    names = {name for pmap in maps.maps.values() for name in pmap.metadata["joints"]} | set(maps.chains.shared)
    columns = [model.joints[model.getJointId(n)].idx_q for n in sorted(names)
               if model.joints[model.getJointId(n)].nq == 1]
    lo, hi = model.lowerPositionLimit[columns], model.upperPositionLimit[columns]
    bounded = np.isfinite(lo) & np.isfinite(hi) & (hi > lo)
    values = flat[:, columns][:, bounded]
    span = (hi - lo)[bounded]
    margin = np.minimum(values - lo[bounded], hi[bounded] - values) / span
    return margin.min(axis=1, initial=0.5).reshape(M, K)

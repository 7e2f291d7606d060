"""Where to put text labels so that they do not overlap: pure numpy, no meshcat.

Labels are axis-aligned rectangles in the picture plane (any 2D unit, x right, y up), each tied
to an anchor point (a frame's origin). :func:`place_labels` puts each label beside its anchor,
on the first spot of a fixed list that overlaps no label placed before it and covers no anchor;
a label keeps its previous spot while that spot stays free, so labels do not jump around while
the robot moves.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import ConfigurationError

# Candidate sides, in order of preference: upper right, upper left, lower right, lower left,
# above, below, right, left. Each is tried at growing distances from the anchor.
_SIDES = np.array([[1, 1], [-1, 1], [1, -1], [-1, -1], [0, 1], [0, -1], [1, 0], [-1, 0]], dtype=float)
_RINGS = (1.0, 2.5, 4.5, 7.0, 10.0, 14.0)  # distances from the anchor, in units of `gap`


def _overlap(centre: np.ndarray, half: np.ndarray, centres: np.ndarray, halves: np.ndarray) -> np.ndarray:
    """Overlap area of one rectangle with each of many (centres, half sizes (m, 2))."""
    d = np.abs(centres - centre)
    extent = np.clip(half + halves - d, 0.0, None)
    return extent[:, 0] * extent[:, 1]


def candidate_offsets(size: ArrayLike, gap: float) -> np.ndarray:
    """Offsets (k, 2) from an anchor to a label's centre, in order of preference.

    For a label of size (width, height), the nearest ring leaves `gap` between the anchor and
    the label's closest edge (or corner).
    """
    half = 0.5 * np.asarray(size, dtype=float)
    return np.array([side * (half + ring * gap) for ring in _RINGS for side in _SIDES])


def place_labels(anchors: ArrayLike, sizes: ArrayLike, *, gap: float,
                 previous: ArrayLike | None = None) -> np.ndarray:
    """Centres (n, 2) of n labels: each beside its anchor, none overlapping another.

    Args:
        anchors: (n, 2) anchor points; NaN rows (anchors out of sight) keep their label on the
            anchor and are ignored by the others.
        sizes: (n, 2) label widths and heights (> 0), in the anchors' unit.
        gap: (> 0) clearance between a label and its anchor, and the half-size of the square
            around every anchor that no label may cover.
        previous: (n, 2) offsets from anchor to centre chosen last time (NaN rows: none); such
            an offset is kept while the label still fits there.

    Returns:
        centres (n, 2). When no candidate spot is free (crowded labels), a label goes to the
        spot with the least overlap.
    """
    anchors = np.atleast_2d(np.asarray(anchors, dtype=float))
    sizes = np.atleast_2d(np.asarray(sizes, dtype=float))
    n = anchors.shape[0]
    if anchors.shape != (n, 2) or sizes.shape != (n, 2) or np.any(~(sizes > 0)) or not gap > 0:
        raise ConfigurationError(f"need anchors and sizes of shape (n, 2), positive sizes and gap; got "
                         f"{anchors.shape}, {sizes.shape}, gap {gap}")
    previous = None if previous is None else np.asarray(previous, dtype=float)
    seen = np.all(np.isfinite(anchors), axis=1)
    # obstacles: small squares on every anchor in sight, then each label once placed
    centres = [anchors[i] for i in range(n) if seen[i]]
    halves = [np.full(2, gap) for i in range(n) if seen[i]]
    out = anchors.copy()
    for i in range(n):
        if not seen[i]:
            continue
        half = 0.5 * sizes[i]
        offsets = candidate_offsets(sizes[i], gap)
        if previous is not None and np.all(np.isfinite(previous[i])):
            offsets = np.vstack([np.asarray(previous[i], dtype=float), offsets])
        C, H = np.array(centres), np.array(halves)
        best, best_cost = offsets[0], np.inf
        for offset in offsets:
            cost = _overlap(anchors[i] + offset, half, C, H).sum()
            if cost <= 0.0:
                best = offset
                break
            if cost < best_cost:
                best, best_cost = offset, cost
        out[i] = anchors[i] + best
        centres.append(out[i])
        halves.append(half)
    return out

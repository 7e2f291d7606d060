"""One chunk of a capability map (samples [start, stop) -> per-voxel partial results) and the
order-independent merge of partial results into the map's dense arrays.

A chunk draws its configurations (:mod:`reljac.maps.sampling`) in batches of at most
``BATCH`` samples (memory does not grow with the chunk) and reduces them per voxel: ``count``
(samples whose b origin fell in it), ``coverage`` (bit d set when b's approach axis was binned to
direction d there), ``best`` (largest manipulability of the chosen rows of J_ab) and
``best_index`` (the global index of the sample that achieved it; the smallest one on ties).
Counts add, coverage ORs and best keeps the largest (smallest index on ties) in any order, so
a map does not depend on chunk sizes, worker counts or the order chunks finish in.

The compiled reduction (``CapabilityReduction`` in ``src/core/kinematics.cpp``) does the whole
chunk without the GIL; :func:`python_reduce` is its specification, a loop over the Pinocchio
layer plus numpy, used for robots the compiled kinematics does not model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import loading
from ..robot import Robot
from .grid import Grid
from .sampling import Sampler

BATCH = 2**15


@dataclass
class Partial:
    """Per-voxel results of some samples: one entry per voxel reached (flat index, unique)."""

    voxel: np.ndarray       # (k,) int64
    count: np.ndarray       # (k,) int64
    coverage: np.ndarray    # (k,) uint64
    best: np.ndarray        # (k,) float64
    best_index: np.ndarray  # (k,) int64
    outside: int            # samples outside the grid
    samples: int            # samples reduced

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.voxel, self.count, self.coverage, self.best, self.best_index))


class Job:
    """Everything a worker needs for any chunk of one map (sent once per worker).

    Pickled with the robot's kinematics only, in the form a pickled Robot keeps
    (:func:`reljac.loading.model_state`: its URDF text, or its model with mimic joints made
    independent plus their couplings). Pinocchio 4.1 crashes when the joint tree of an unpickled
    ``pin.Model`` with mimic joints is read, so a bare model is never shipped; and no geometry,
    SRDF or parent robot either (a Robot made from a pin.Model with meshes pickles to hundreds of
    MB). The robot, sampler and compiled model are rebuilt once in each process.
    """

    def __init__(self, robot: Robot, frame_a: int, frame_b: int, grid: Grid, directions: np.ndarray,
                 axis: int, rows: tuple[int, ...], seed: int, backend: str) -> None:
        self.robot = robot
        self.frame_a, self.frame_b = frame_a, frame_b
        self.grid, self.directions, self.axis, self.rows = grid, directions, axis, rows
        self.seed, self.backend = seed, backend
        self._sampler: Sampler | None = None

    def __getstate__(self) -> dict:
        robot = self.robot
        kinematics = (loading.model_state(robot.model, robot._loaded), robot._loaded, robot.floating_base,
                      robot.mimic)
        return {**self.__dict__, "robot": None, "_sampler": None, "_kinematics": kinematics}

    def __setstate__(self, state: dict) -> None:
        model_state, loaded, floating_base, mimic = state.pop("_kinematics")
        self.__dict__.update(state)
        self.robot = Robot(loading.restored_model(model_state, loaded, floating_base=floating_base, mimic=mimic))

    @property
    def sampler(self) -> Sampler:
        if self._sampler is None:
            self._sampler = Sampler(self.robot, self.seed, compiled=self.backend == "compiled")
        return self._sampler


def run_chunk(job: Job, start: int, stop: int) -> Partial:
    """Reduce samples [start, stop) of the job's map."""
    if job.backend == "compiled":
        from .compiled import _core, export

        reduction = _core.CapabilityReduction(
            export(job.robot), job.frame_a, job.frame_b, np.asarray(job.grid.origin), job.grid.voxel,
            np.asarray(job.grid.dims, np.int64), job.directions, job.axis, list(job.rows))
        for first in range(start, stop, BATCH):
            reduction.add(job.sampler.draw(first, min(stop, first + BATCH)), first)
        voxel, count, coverage, best, best_index, outside = reduction.result()
        return Partial(voxel, count, coverage, best, best_index, outside, samples=stop - start)
    parts = [python_reduce(job, job.sampler.draw(first, min(stop, first + BATCH)), first)
             for first in range(start, stop, BATCH)]
    return merge_partials_numpy(parts) if parts else python_reduce(job, np.zeros((0, job.robot.nq)), start)


def manipulability_of_rows(J: np.ndarray, rows: tuple[int, ...]) -> np.ndarray:
    """sqrt(det(J_r J_r^T)) for the rows r of each J (N, 6, nv), clamped at 0; 0 when len(r) > nv."""
    Jr = J[:, list(rows), :]
    if len(rows) > J.shape[2]:
        return np.zeros(J.shape[0])
    det = np.linalg.det(Jr @ np.swapaxes(Jr, 1, 2))
    return np.sqrt(np.clip(det, 0.0, None))


def python_reduce(job: Job, Q: np.ndarray, first_index: int) -> Partial:
    """The specification of the compiled reduction: Pinocchio placements and Jacobians, then numpy."""
    from .compiled import python_relative_kinematics

    T, J = python_relative_kinematics(job.robot, Q, job.frame_a, job.frame_b)
    grid = job.grid
    cells = np.floor((T[:, :3, 3] - grid.origin) / grid.voxel)
    inside = np.all((cells >= 0) & (cells < grid.dims), axis=1)
    flat = np.ravel_multi_index(tuple(cells[inside].astype(np.int64).T), grid.dims) if inside.any() \
        else np.zeros(0, np.int64)
    approach = T[inside, :3, job.axis]
    bits = np.left_shift(np.uint64(1), np.argmax(approach @ job.directions.T, axis=1).astype(np.uint64))
    m = manipulability_of_rows(J[inside], job.rows)
    index = first_index + np.flatnonzero(inside).astype(np.int64)
    return _group(flat.astype(np.int64), np.ones(flat.size, np.int64), bits, m, index,
                  outside=int((~inside).sum()), samples=Q.shape[0])


def _group(voxel: np.ndarray, count: np.ndarray, coverage: np.ndarray, best: np.ndarray, best_index: np.ndarray, *,
           outside: int, samples: int) -> Partial:
    """One entry per voxel: counts summed, coverage ORed, best by (largest best, smallest index)."""
    order = np.lexsort((best_index, -best, voxel))  # per voxel: best first
    voxel, count, coverage = voxel[order], count[order], coverage[order]
    best, best_index = best[order], best_index[order]
    first = np.flatnonzero(np.r_[True, voxel[1:] != voxel[:-1]]) if voxel.size else np.zeros(0, np.int64)
    return Partial(voxel[first], np.add.reduceat(count, first) if voxel.size else count[:0],
                   np.bitwise_or.reduceat(coverage, first) if voxel.size else coverage[:0],
                   best[first], best_index[first], outside, samples)


def merge_partials(parts: list[Partial]) -> Partial:
    """Several partial results as one (any order gives the same result, up to the order of the
    voxels). Linear time in the compiled core when it is built, else :func:`merge_partials_numpy`."""
    from .compiled import _core

    if _core is None:
        return merge_partials_numpy(parts)
    fields = [[getattr(p, name) for p in parts] for name in ("voxel", "count", "coverage", "best", "best_index")]
    voxel, count, coverage, best, best_index, _ = _core.merge_partials(*fields)
    return Partial(voxel, count, coverage, best, best_index, outside=sum(p.outside for p in parts),
                   samples=sum(p.samples for p in parts))


def merge_partials_numpy(parts: list[Partial]) -> Partial:
    """The specification of :func:`merge_partials`: sort by voxel, then reduce each run."""
    cat = [np.concatenate([getattr(p, name) for p in parts])
           for name in ("voxel", "count", "coverage", "best", "best_index")]
    return _group(*cat, outside=sum(p.outside for p in parts), samples=sum(p.samples for p in parts))


class Accumulator:
    """The dense per-voxel arrays of a map under construction (32 bytes per voxel)."""

    def __init__(self, grid: Grid) -> None:
        self.count = np.zeros(grid.size, np.int64)
        self.coverage = np.zeros(grid.size, np.uint64)
        self.best = np.full(grid.size, -1.0)  # below any manipulability: unreached
        self.best_index = np.full(grid.size, -1, np.int64)
        self.outside = 0
        self.samples = 0

    def add(self, part: Partial) -> None:
        """Merge a partial result: in the compiled core when built (without the GIL), else
        :meth:`add_numpy`, its specification."""
        from .compiled import _core

        if _core is None:
            return self.add_numpy(part)
        _core.accumulate(self.count, self.coverage, self.best, self.best_index, part.voxel, part.count,
                         part.coverage, part.best, part.best_index)
        self.outside += part.outside
        self.samples += part.samples

    def add_numpy(self, part: Partial) -> None:
        """Merge a partial result (its voxels are unique, so fancy indexing is exact)."""
        v = part.voxel
        self.count[v] += part.count
        self.coverage[v] |= part.coverage
        current, current_index = self.best[v], self.best_index[v]
        better = (part.best > current) | ((part.best == current) & (part.best_index < current_index))
        self.best[v[better]] = part.best[better]
        self.best_index[v[better]] = part.best_index[better]
        self.outside += part.outside
        self.samples += part.samples


"""One chunk of a capability map (samples [start, stop) -> per-voxel partial results) and the
order-independent merge of partial results into the map's dense arrays.

A chunk draws its configurations (:mod:`reljac.maps.sampling`) in batches of at most
``BATCH`` samples (memory does not grow with the chunk) and reduces them per voxel: ``count``
(samples whose b origin fell in it), ``coverage`` (bit d set when b's approach axis was binned to
direction d there), ``best`` (largest manipulability of the chosen rows of J_ab) and
``best_index`` (the global index of the sample that achieved it; the smallest one on ties).
Counts add, coverage ORs and best keeps the largest (smallest index on ties) in any order, so
a map does not depend on chunk sizes, worker counts or the order chunks finish in.

With a support region (:mod:`reljac.maps.balance`), each batch's configurations are tested in
Python first and only the kept ones are reduced, under their global indices; ``rejected`` counts
the others.

The compiled reduction (``CapabilityReduction`` in ``src/core/kinematics.cpp``, Pinocchio's C++ on
the robot's own ``pin.Model``) does the whole chunk without the GIL; :func:`python_reduce` is its
specification, a loop over the Pinocchio layer plus numpy, used where the core is not built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compiled_core import extension
from ..robot import Robot
from .balance import BalanceCheck, Held, MapSupport
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
    samples: int            # samples reduced (the rejected ones included)
    rejected: int = 0       # samples whose centre of mass left the support region

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.voxel, self.count, self.coverage, self.best, self.best_index))


class Job:
    """Everything a worker needs for any chunk of one map (sent once per worker).

    Pickled with the robot's kinematics only (:meth:`reljac.Robot.kinematics_state`), in the
    form a pickled Robot keeps
    (:func:`reljac.loading.model_state`: its URDF text, or its model with mimic joints made
    independent plus their couplings). Pinocchio 4.1 crashes when the joint tree of an unpickled
    ``pin.Model`` with mimic joints is read, so a bare model is never shipped; and no geometry,
    SRDF or parent robot either (a Robot made from a pin.Model with meshes pickles to hundreds of
    MB). The robot and sampler are rebuilt once in each process.
    """

    def __init__(self, robot: Robot, frame_a: int, frame_b: int, grid: Grid, directions: np.ndarray,
                 axis: int, rows: tuple[int, ...], seed: int, backend: str, support: MapSupport | None = None,
                 held: Held | None = None) -> None:
        self.robot = robot
        self.frame_a, self.frame_b = frame_a, frame_b
        self.grid, self.directions, self.axis, self.rows = grid, directions, axis, rows
        self.seed, self.backend, self.support = seed, backend, support
        self.held = held  # computed where the robot has its SRDF: a worker's copy has none
        self._sampler: Sampler | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "robot": None, "_sampler": None, "_kinematics": self.robot.kinematics_state()}

    def __setstate__(self, state: dict) -> None:
        kinematics = state.pop("_kinematics")
        self.__dict__.update(state)
        self.robot = Robot.from_kinematics_state(kinematics)

    @property
    def sampler(self) -> Sampler:
        if self._sampler is None:
            self._sampler = make_sampler(self.robot, self.seed, self.backend, self.held)
        return self._sampler


def make_sampler(robot: Robot, seed: int, backend: str, held: Held | None) -> Sampler:
    """The map's sampler, with the held joints' entries of q fixed (:func:`~reljac.maps.balance.held_joints`)."""
    return Sampler(robot, seed, compiled=backend == "compiled", held=None if held is None else held[1:])


def run_chunk(job: Job, start: int, stop: int) -> Partial:
    """Reduce samples [start, stop) of the job's map."""
    if job.support is not None:
        return _run_balanced_chunk(job, job.support, start, stop)
    if job.backend == "compiled":
        reduction = _compiled_reduction(job)
        for first in range(start, stop, BATCH):
            reduction.add(job.sampler.draw(first, min(stop, first + BATCH)), first)
        voxel, count, coverage, best, best_index, outside = reduction.result()
        return Partial(voxel, count, coverage, best, best_index, outside, samples=stop - start)
    parts = [python_reduce(job, job.sampler.draw(first, min(stop, first + BATCH)), first)
             for first in range(start, stop, BATCH)]
    return merge_partials_numpy(parts) if parts else python_reduce(job, np.zeros((0, job.robot.nq)), start)


MERGE_EVERY = 16  # batch results held before they are merged (memory stays bounded for any chunk)


def _run_balanced_chunk(job: Job, support: MapSupport, start: int, stop: int) -> Partial:
    """Reduce the samples of [start, stop) that keep the centre of mass inside the support region."""
    check = BalanceCheck(job.robot, support, job.held)  # its own pin.Data: chunks run on threads
    parts: list[Partial] = []
    for first in range(start, stop, BATCH):
        Q = job.sampler.draw(first, min(stop, first + BATCH))
        keep = check.keep(Q)
        indices = first + np.flatnonzero(keep).astype(np.int64)
        if job.backend == "compiled":
            part = _compiled_reduce(job, np.ascontiguousarray(Q[keep]), indices)
        else:
            part = python_reduce(job, Q[keep], first, indices=indices)
        part.samples, part.rejected = Q.shape[0], Q.shape[0] - indices.size
        parts.append(part)
        if len(parts) >= MERGE_EVERY:
            parts = [merge_partials(parts)]
    return merge_partials(parts) if parts else python_reduce(job, np.zeros((0, job.robot.nq)), start)


def _compiled_reduce(job: Job, Q: np.ndarray, indices: np.ndarray) -> Partial:
    """The compiled reduction of configurations Q (n, nq) whose global sample indices are `indices` (n,)."""
    reduction = _compiled_reduction(job)
    if Q.shape[0]:
        reduction.add(Q, 0)  # indices 0..n-1 into `indices`: increasing, so ties resolve alike
    voxel, count, coverage, best, best_index, outside = reduction.result()
    return Partial(voxel, count, coverage, best, indices[best_index], outside, samples=Q.shape[0])


def _compiled_reduction(job: Job) -> Any:
    """A compiled reduction over the job's grid (a ``reljac.ik._core.CapabilityReduction``, with
    its own pin.Data: one per chunk and thread)."""
    return extension().CapabilityReduction(
        job.robot.model, job.frame_a, job.frame_b, np.asarray(job.grid.origin), job.grid.voxel,
        np.asarray(job.grid.dims, np.int64), job.directions, job.axis, list(job.rows))


def manipulability_of_rows(J: np.ndarray, rows: tuple[int, ...]) -> np.ndarray:
    """sqrt(det(J_r J_r^T)) for the rows r of each J (N, 6, nv), clamped at 0; 0 when len(r) > nv."""
    Jr = J[:, list(rows), :]
    if len(rows) > J.shape[2]:
        return np.zeros(J.shape[0])
    det = np.linalg.det(Jr @ np.swapaxes(Jr, 1, 2))
    return np.sqrt(np.clip(det, 0.0, None))


def python_reduce(job: Job, Q: np.ndarray, first_index: int, *, indices: np.ndarray | None = None) -> Partial:
    """The specification of the compiled reduction: Pinocchio placements and Jacobians, then numpy.
    Row s of Q is sample first_index + s, or indices[s] when `indices` (n,) is given."""
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
    index = (first_index + np.flatnonzero(inside).astype(np.int64)) if indices is None else indices[inside]
    return _group(flat.astype(np.int64), np.ones(flat.size, np.int64), bits, m, index,
                  outside=int((~inside).sum()), samples=Q.shape[0])


def _group(voxel: np.ndarray, count: np.ndarray, coverage: np.ndarray, best: np.ndarray, best_index: np.ndarray, *,
           outside: int, samples: int, rejected: int = 0) -> Partial:
    """One entry per voxel: counts summed, coverage ORed, best by (largest best, smallest index)."""
    order = np.lexsort((best_index, -best, voxel))  # per voxel: best first
    voxel, count, coverage = voxel[order], count[order], coverage[order]
    best, best_index = best[order], best_index[order]
    first = np.flatnonzero(np.r_[True, voxel[1:] != voxel[:-1]]) if voxel.size else np.zeros(0, np.int64)
    return Partial(voxel[first], np.add.reduceat(count, first) if voxel.size else count[:0],
                   np.bitwise_or.reduceat(coverage, first) if voxel.size else coverage[:0],
                   best[first], best_index[first], outside, samples, rejected)


def merge_partials(parts: list[Partial]) -> Partial:
    """Several partial results as one (any order gives the same result, up to the order of the
    voxels). Linear time in the compiled core when it is built, else :func:`merge_partials_numpy`."""
    core = extension()
    if core is None:
        return merge_partials_numpy(parts)
    fields = [[getattr(p, name) for p in parts] for name in ("voxel", "count", "coverage", "best", "best_index")]
    voxel, count, coverage, best, best_index, _ = core.merge_partials(*fields)
    return Partial(voxel, count, coverage, best, best_index, outside=sum(p.outside for p in parts),
                   samples=sum(p.samples for p in parts), rejected=sum(p.rejected for p in parts))


def merge_partials_numpy(parts: list[Partial]) -> Partial:
    """The specification of :func:`merge_partials`: sort by voxel, then reduce each run."""
    cat = [np.concatenate([getattr(p, name) for p in parts])
           for name in ("voxel", "count", "coverage", "best", "best_index")]
    return _group(*cat, outside=sum(p.outside for p in parts), samples=sum(p.samples for p in parts),
                  rejected=sum(p.rejected for p in parts))


class Accumulator:
    """The dense per-voxel arrays of a map under construction (32 bytes per voxel)."""

    def __init__(self, grid: Grid) -> None:
        self.count = np.zeros(grid.size, np.int64)
        self.coverage = np.zeros(grid.size, np.uint64)
        self.best = np.full(grid.size, -1.0)  # below any manipulability: unreached
        self.best_index = np.full(grid.size, -1, np.int64)
        self.outside = 0
        self.samples = 0
        self.rejected = 0

    def add(self, part: Partial) -> None:
        """Merge a partial result: in the compiled core when built (without the GIL), else
        :meth:`add_numpy`, its specification."""
        core = extension()
        if core is None:
            return self.add_numpy(part)
        core.accumulate(self.count, self.coverage, self.best, self.best_index, part.voxel, part.count,
                         part.coverage, part.best, part.best_index)
        self.outside += part.outside
        self.samples += part.samples
        self.rejected += part.rejected

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
        self.rejected += part.rejected


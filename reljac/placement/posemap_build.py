"""pose_map: build a :class:`~reljac.placement.posemap.PoseMap` of a hand b in a frame a from
random configurations, on threads or a Dask cluster.

Sample i is drawn as a capability map draws it (:class:`reljac.maps.sampling.Sampler`: a
function of (seed, i) alone), with the two swept joints at their lower limits
(:mod:`reljac.placement.orbits`); T_ab and J_ab come from the compiled core (Pinocchio's C++) or
the Pinocchio layer. A chunk of samples gives a partial map: per (invariant cell, gamma bin) the
OR of the phi masks its samples sweep, per invariant cell the sample of largest manipulability
(smallest index on ties). Partial maps merge in any order to the same map, so the map is the
same, bit for bit, for any chunk size, thread count, or Dask cluster (scheduling:
:mod:`reljac.maps.scheduling`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import MapError
from ..ik.solvers.backend import core
from ..loading import model_state as state_of_model
from ..loading import restored_model
from ..maps.capability import default_workers
from ..maps.compiled import python_relative_kinematics, require_compiled
from ..maps.grid import positive_voxel, reach_bound
from ..maps.kernel import manipulability_of_rows
from ..maps.result import robot_joints
from ..maps.sampling import BLOCK, Sampler
from ..maps.scheduling import check_scheduler, run
from ..robot import FrameRef, Robot
from ..validation import as_count
from ..version import __version__
from .orbits import Orbits, PoseGrid, coordinates, orbits
from .posemap import FORMAT, FORMAT_VERSION, PoseMap

BATCH = 2**14
MERGE_EVERY = 8  # partial maps held before they are merged (memory stays bounded)
DEFAULT_BINS = (36, 12, 24)  # psi, beta (equal areas), gamma: 10 deg, ~9.6 deg at the equator, 15 deg
MAX_CELLS = 2**28
POSITION_ROWS = (0, 1, 2)


@dataclass
class PosePartial:
    """A partial pose map (see :class:`~reljac.placement.posemap.PoseMap` for the arrays)."""

    keys: np.ndarray
    masks: np.ndarray
    cells: np.ndarray
    best: np.ndarray
    best_index: np.ndarray
    best_q: np.ndarray
    best_start: np.ndarray
    outside: int
    samples: int


class PoseJob:
    """What a worker needs for any chunk of one pose map (pickled with the robot's kinematics only:
    :func:`reljac.loading.model_state`, never its geometry)."""

    def __init__(self, robot: Robot, frame_a: int, frame_b: int, grid: PoseGrid, sweeps: Orbits, seed: int,
                 backend: str, columns: np.ndarray) -> None:
        self.robot, self.frame_a, self.frame_b = robot, frame_a, frame_b
        self.grid, self.sweeps, self.seed, self.backend, self.columns = grid, sweeps, seed, backend, columns
        self._sampler: Sampler | None = None

    def __getstate__(self) -> dict:
        state = {**self.__dict__, "robot": None, "_sampler": None}
        state["_model"] = (state_of_model(self.robot.model, None), self.robot.mimic)
        return state

    def __setstate__(self, state: dict) -> None:
        model_state, mimic = state.pop("_model")
        self.__dict__.update(state)
        self.robot = Robot(restored_model(model_state, None, floating_base=False, mimic=mimic))

    @property
    def sampler(self) -> Sampler:
        if self._sampler is None:
            self._sampler = Sampler(self.robot, self.seed, compiled=self.backend == "compiled")
        return self._sampler


def swept(start: np.ndarray, span: float, n: int) -> np.ndarray:
    """(len(start), n) bool: the bins of n over [-pi, pi) whose centre lies in [start, start + span]
    (mod 2 pi), and the bin of start + span / 2 (a sweep narrower than a bin keeps its middle)."""
    centres = -math.pi + (np.arange(n) + 0.5) * (2 * math.pi / n)
    if span >= 2 * math.pi:
        return np.ones((len(start), n), bool)
    bins = np.mod(centres[None, :] - start[:, None], 2 * math.pi) <= span
    middle = np.floor((start + 0.5 * span + math.pi) * (n / (2 * math.pi))).astype(np.int64) % n
    bins[np.arange(len(start)), middle] = True
    return bins


def reduce_samples(job: PoseJob, Q: np.ndarray, first: int) -> PosePartial:
    """The partial map of configurations Q (n, nq), sample indices first, first + 1, ..."""
    job.sweeps.hold(job.robot, Q)
    if job.backend == "compiled":
        T, J = core().relative_kinematics(job.robot.model, job.frame_a, job.frame_b, Q)
    else:
        T, J = python_relative_kinematics(job.robot, Q, job.frame_a, job.frame_b)
    grid = job.grid
    rho, z, psi, cos_beta, phi, gamma, north, south = coordinates(job.sweeps.to_swept(T))
    cell, roll = grid.cell(rho, z, psi, cos_beta, gamma, north, south)
    inside = np.flatnonzero(cell >= 0)
    span_phi, span_gamma = job.sweeps.spans
    bits = np.left_shift(np.uint64(1), np.arange(grid.n_phi, dtype=np.uint64))
    phi_mask = np.where(swept(phi[inside], span_phi, grid.n_phi), bits, np.uint64(0)).sum(axis=1, dtype=np.uint64)
    s, g = np.nonzero(swept(roll[inside], span_gamma, grid.n_gamma))
    keys, masks = _or_by_key(cell[inside][s] * grid.n_gamma + g, phi_mask[s])
    m = manipulability_of_rows(J[inside], POSITION_ROWS)
    index = first + inside.astype(np.int64)
    start = np.column_stack([phi[inside], roll[inside]])
    picked = _best_by_cell(cell[inside], m, index, Q[inside][:, job.columns], start)
    return PosePartial(keys, masks, *picked, outside=len(Q) - len(inside), samples=len(Q))


def _or_by_key(keys: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique keys, increasing, and the OR of the masks of each."""
    if not len(keys):
        return keys.astype(np.int64), masks.astype(np.uint64)
    order = np.argsort(keys, kind="stable")
    keys, masks = keys[order], masks[order]
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[first], np.bitwise_or.reduceat(masks, first)


def _best_by_cell(cells: np.ndarray, best: np.ndarray, index: np.ndarray, q: np.ndarray,
                  start: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per unique cell (increasing): the row of largest `best`, the smallest index on ties."""
    if not len(cells):
        return cells.astype(np.int64), best.astype(float), index.astype(np.int64), q, start.reshape(0, 2)
    order = np.lexsort((index, -best, cells))
    starts = np.flatnonzero(np.r_[True, cells[order][1:] != cells[order][:-1]])
    pick = order[starts]
    return cells[pick], best[pick], index[pick], q[pick], start[pick]


def run_pose_chunk(job: PoseJob, start: int, stop: int) -> PosePartial:
    """The partial map of samples [start, stop) (a module-level function: Dask sends it by name)."""
    parts = [reduce_samples(job, job.sampler.draw(first, min(stop, first + BATCH)), first)
             for first in range(start, stop, BATCH)]
    return merge_pose_partials(parts)


def merge_pose_partials(parts: list[PosePartial]) -> PosePartial:
    """Several partial maps as one; any order gives the same result."""
    keys, masks = _or_by_key(np.concatenate([p.keys for p in parts]), np.concatenate([p.masks for p in parts]))
    cells, best, index, q, start = (np.concatenate([getattr(p, name) for p in parts])
                                    for name in ("cells", "best", "best_index", "best_q", "best_start"))
    picked = _best_by_cell(cells, best, index, q, start)
    return PosePartial(keys, masks, *picked, outside=sum(p.outside for p in parts),
                       samples=sum(p.samples for p in parts))


def pose_map(robot: Robot, frame_a: FrameRef, frame_b: FrameRef, *, samples: int, voxel: float = 0.04,
             bins: tuple[int, int, int] = DEFAULT_BINS, seed: int = 0, chunk: int | None = None,
             scheduler: Any = None, workers: int | None = None, backend: str | None = None,
             connect_timeout: float = 10.0, progress: Callable[[int, int], None] | None = None) -> PoseMap:
    """The pose map of frame b (a hand) in frame a (a frame its arm hangs from).

    Args:
        robot: the robot (a Robot, a name or a URDF path).
        frame_a: the map's frame, on b's chain (the map is of T_ab).
        frame_b: the hand.
        samples: random configurations, 1..10^12 (each stands for every pose its sweeps reach).
        voxel: [m] the cell's size in rho and z, in (0, 1000].
        bins: (psi, beta, gamma) angle bins, each 1..1024 (beta at least 3: its first and last bins
            are polar charts; gamma at most 64).
        seed: integer >= 0 (sample i depends on (seed, i) only).
        chunk: samples per task (the map does not depend on it).
        scheduler: None or "threads", "local" (a Dask LocalCluster), a Dask address or a
            distributed.Client, as :func:`reljac.maps.capability_map`'s (the same map on each).
        workers: local threads or LocalCluster processes.
        backend: "compiled", "python" or None (compiled when built).
        connect_timeout: [s] how long to wait for a Dask scheduler address.
        progress: called as progress(samples done, samples).

    Raises:
        FrameNotFound: an unknown frame. MapError: a not on b's chain, bad samples, voxel, bins,
        seed, chunk, workers or scheduler, or a grid of more than 2^28 cells. SchedulerError:
        Dask missing or not answering. ConfigurationError: backend="compiled" where the core is not built.
    """
    if not isinstance(robot, Robot):
        robot = Robot.load(robot)
    fa, fb = robot.frame_id(frame_a), robot.frame_id(frame_b)
    samples = as_count(samples, "samples", minimum=1, maximum=10**12, error=MapError)
    seed = as_count(seed, "seed", minimum=0, maximum=2**63 - 1, error=MapError)
    voxel = positive_voxel(voxel)  # (at most MAX_VOXEL, as the maps': 1e300 m had built a map of 450 cells)
    if not isinstance(bins, (tuple, list)) or len(bins) != 3:
        raise MapError(f"bins must be (psi, beta, gamma) counts, got {bins!r}")
    n_psi, n_beta, n_gamma = (as_count(b, f"{name} bins", minimum=1, maximum=1024, error=MapError)
                              for b, name in zip(bins, ("psi", "beta", "gamma"), strict=True))
    if n_gamma > 64:
        raise MapError(f"gamma bins must be at most 64, got {n_gamma}")
    sweeps = orbits(robot, fa, fb)
    reach = reach_bound(robot, fa, fb) + float(np.linalg.norm(sweeps.T_aA[:3, 3]))
    n_rho = math.ceil(reach * (1 + 1e-9) / voxel) + 1
    if n_beta < 3:
        raise MapError(f"beta bins must be at least 3 (two polar charts and the equator), got {n_beta}")
    n_u = max(2, math.ceil(2.0 * math.sqrt(1.0 - (1.0 - 2.0 / n_beta) ** 2) / (2.0 * math.pi / n_psi)))
    grid = PoseGrid(voxel, n_rho, 2 * n_rho, n_psi, n_beta, n_gamma, n_u=n_u)
    if grid.cells > MAX_CELLS:
        raise MapError(f"voxel {voxel:g} m makes {grid.cells:,} cells for a reach of {reach:.3g} m; at most "
                       f"{MAX_CELLS:,}: use a larger voxel or fewer bins")
    check_scheduler(scheduler)
    workers = default_workers() if workers is None else as_count(workers, "workers", minimum=1, maximum=4096,
                                                                  error=MapError)
    chunk = (min(2**20, max(2**14, math.ceil(samples / (8 * workers)))) if chunk is None
             else as_count(chunk, "chunk", minimum=1, maximum=2**27, error=MapError))
    if backend not in (None, "compiled", "python"):
        raise MapError(f"backend must be 'compiled', 'python' or None, not {backend!r}")
    if backend is None:
        backend = "compiled" if core() is not None else "python"
    elif backend == "compiled":
        require_compiled()
    model = robot.model
    chain = [model.getJointId(name) for name in sweeps.joints]
    columns = np.concatenate([np.arange(model.joints[j].idx_q, model.joints[j].idx_q + model.joints[j].nq)
                              for j in chain]).astype(np.int64)
    job = PoseJob(robot, fa, fb, grid, sweeps, seed, backend, columns)
    held: list[PosePartial] = []
    done = 0

    def on_result(part: PosePartial) -> None:
        held.append(part)
        if len(held) >= MERGE_EVERY:
            held[:] = [merge_pose_partials(held)]

    def on_progress(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, samples)

    chunks = ((s, min(samples, s + chunk)) for s in range(0, samples, chunk))
    run(job, chunks, on_result, on_progress, scheduler=scheduler, workers=workers, connect_timeout=connect_timeout,
        chunk=run_pose_chunk, merge=merge_pose_partials)
    total = merge_pose_partials(held)
    if total.samples != samples:  # pragma: no cover - a scheduler lost a chunk
        raise MapError(f"only {total.samples} of {samples} samples came back")
    metadata = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "reljac_version": __version__, "robot": robot.name,
        "nq": robot.nq, "nv": robot.nv, "frame_a": model.frames[fa].name, "frame_b": model.frames[fb].name,
        "samples": samples, "seed": seed, "voxel": voxel, "n_rho": grid.n_rho, "n_z": grid.n_z, "n_psi": n_psi,
        "n_beta": n_beta, "n_gamma": n_gamma, "n_phi": grid.n_phi, "n_u": n_u, "T_aA": sweeps.T_aA.tolist(),
        "R_bb": sweeps.R_bb.tolist(), "first": sweeps.first, "last": sweeps.last,
        "first_range": list(sweeps.first_range), "last_range": list(sweeps.last_range),
        "joints": list(sweeps.joints), "joint_q": [int(model.joints[j].idx_q) for j in chain],
        "joint_nq": [int(model.joints[j].nq) for j in chain], "outside": total.outside, "block": BLOCK,
        "backend": backend, **robot_joints(robot),
    }
    return PoseMap(total.keys, total.masks, total.cells, total.best, total.best_index, total.best_q,
                   total.best_start, metadata)

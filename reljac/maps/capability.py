"""capability_map: sample a robot's configurations and bin where frame b's origin lands in frame a.

For ``samples`` random configurations (:mod:`reljac.maps.sampling`), T_ab and J_ab are computed
(by Pinocchio's C++ in the compiled core, or through the Pinocchio layer in Python) and reduced per voxel of a grid in a
(:mod:`reljac.maps.grid`): sample counts, approach-direction coverage (Zacharias et al., 2007),
the best relative manipulability and the configuration that achieved it
(:mod:`reljac.maps.kernel`). Chunks run on threads, a Dask LocalCluster or an existing Dask
cluster (:mod:`reljac.maps.scheduling`); the map is identical for any chunk size, worker count
and scheduler. With ``support``, samples whose centre of mass leaves the support region are
rejected first (:mod:`reljac.maps.balance`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import MapError
from ..robot import FrameRef, Robot
from ..version import __version__
from .balance import MapSupport, check_support, held_joints
from .compiled import compiled_available, require_compiled
from .grid import AXES, as_axis, as_directions, as_rows, make_grid
from .kernel import Accumulator, Job, make_sampler
from .result import FORMAT, FORMAT_VERSION, CapabilityMap, robot_joints
from .sampling import BLOCK
from .scheduling import check_scheduler, run

MAX_SAMPLES = 10**12   # sample indices, counts and seeds stay exact far below 2**53
MAX_CHUNK = 2**27      # samples per task
DEFAULT_DIRECTIONS = 32


def _count(value: Any, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise MapError(f"{what} must be an integer in [{lo:,}, {hi:,}], not {value!r}")
    if not lo <= value <= hi:
        raise MapError(f"{what} must be an integer in [{lo:,}, {hi:,}], not {value:,}")
    return int(value)


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def default_chunk(samples: int, workers: int) -> int:
    """About 8 chunks per worker, between 2**14 and 2**21 samples each."""
    return int(min(2**21, max(2**14, math.ceil(samples / (8 * workers)))))


def chunk_ranges(samples: int, chunk: int) -> Iterator[tuple[int, int]]:
    """(start, stop) of each chunk, made as they are asked for (10**12 chunks of 1 take no memory)."""
    return ((start, min(samples, start + chunk)) for start in range(0, samples, chunk))


def capability_map(
    robot: Robot,
    frame_a: FrameRef,
    frame_b: FrameRef,
    *,
    samples: int,
    voxel: float,
    seed: int = 0,
    directions: ArrayLike = DEFAULT_DIRECTIONS,
    axis: str = "z",
    part: Any = "position",
    chunk: int | None = None,
    scheduler: Any = None,
    workers: int | None = None,
    backend: str | None = None,
    connect_timeout: float = 10.0,
    progress: Callable[[int, int], None] | None = None,
    support: MapSupport | Any = None,
) -> CapabilityMap:
    """The relative capability map of frame b in frame a.

    Args:
        robot: the robot (a Robot, a bundled name or a URDF path).
        frame_a, frame_b: the map is of b's origin, in a's frame.
        samples: random configurations, 1 <= samples <= 10**12 (MAX_SAMPLES).
        voxel: [m] voxel edge; the grid is a cube around a's origin holding every reachable p_ab,
            of at most 2**25 voxels (MAX_VOXELS).
        seed: integer >= 0; sample i is a function of (seed, i) only.
        directions: approach directions: a count 1..64 (a Fibonacci sphere) or an (n, 3) array
            of vectors in a (n <= 64).
        axis: the axis of b taken as its approach direction, "x", "y" or "z".
        part: rows of J_ab rated by the manipulability sqrt(det(J_r J_r^T)): "position"
            (default), "orientation", "full", or row names / indices (e.g. ("vx", "vy")).
        chunk: samples per task (default: about 8 tasks per worker, 2**14 to 2**21 each); the
            map does not depend on it.
        scheduler: None or "threads" (local threads, the default), "local" (a Dask LocalCluster),
            a Dask address "tcp://HOST:8786" or a distributed.Client; see
            :mod:`reljac.maps.scheduling`.
        workers: local threads or LocalCluster processes (default: this process's cores).
        backend: "compiled", "python" or None (compiled when the core is built, else python);
            the map is the same.
        connect_timeout: [s] how long to wait for a Dask scheduler address to answer.
        progress: called as progress(samples_done, samples) after every chunk.
        support: a :class:`~reljac.maps.balance.MapSupport` (contacts, margin) or a
            :class:`reljac.ik.SupportRegion` in the world: a sample is kept only when its centre
            of mass, on the world's x-y plane, is inside the contacts' hull shrunk by the margin;
            free-flyers are then held at the reference configuration (see
            :mod:`reljac.maps.balance`). The metadata's ``support`` entry records it and the
            ``rejected`` count.

    Raises:
        FrameNotFound: unknown frame. MapError: bad samples, voxel, seed, chunk, workers,
        directions, axis, part, scheduler or support. SchedulerError: Dask missing or the address
        does not answer. ConfigurationError: backend="compiled" where the core is not built.
        UnsupportedJoint: a joint type the sampler does not draw.
        SupportError: a robot without mass, or contacts whose region (shrunk by the margin) is
        empty at the reference configuration.
    """
    if not isinstance(robot, Robot):
        robot = Robot.load(robot)
    fa, fb = robot.frame_id(frame_a), robot.frame_id(frame_b)
    samples = _count(samples, "samples", 1, MAX_SAMPLES)
    seed = _count(seed, "seed", 0, 2**63 - 1)
    grid = make_grid(robot, fa, fb, voxel)
    dirs, axis_index, rows = as_directions(directions), as_axis(axis), as_rows(part)
    check_scheduler(scheduler)
    workers = default_workers() if workers is None else _count(workers, "workers", 1, 4096)
    chunk = default_chunk(samples, workers) if chunk is None else _count(chunk, "chunk", 1, MAX_CHUNK)
    if not (isinstance(connect_timeout, (int, float)) and not isinstance(connect_timeout, bool)
            and 0 < connect_timeout < float("inf")):
        raise MapError(f"connect_timeout must be a positive number of seconds, not {connect_timeout!r}")
    if backend not in (None, "compiled", "python"):
        raise MapError(f"backend must be 'compiled', 'python' or None, not {backend!r}")
    if backend is None:
        backend = "compiled" if compiled_available() else "python"
    elif backend == "compiled":
        require_compiled()  # say so before any work
    held = None
    if support is not None:
        support = MapSupport.from_any(support)
        check_support(robot, support)
        held = held_joints(robot)
    sampler = make_sampler(robot, seed, backend, held)
    job = Job(robot, fa, fb, grid, dirs, axis_index, rows, seed, backend, support, held)
    accumulator = Accumulator(grid)

    done = 0

    def on_progress(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, samples)

    run(job, chunk_ranges(samples, chunk), accumulator.add, on_progress, scheduler=scheduler, workers=workers,
        connect_timeout=connect_timeout)
    if accumulator.samples != samples:  # pragma: no cover - a scheduler lost a chunk
        raise MapError(f"only {accumulator.samples} of {samples} samples came back")

    shape = grid.dims
    reached = np.flatnonzero(accumulator.count)
    best = np.where(accumulator.count > 0, accumulator.best, 0.0)
    metadata = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "reljac_version": __version__,
        "robot": robot.name, "nq": robot.nq, "nv": robot.nv,
        "frame_a": robot.model.frames[fa].name, "frame_b": robot.model.frames[fb].name,
        "samples": samples, "seed": seed, "voxel": grid.voxel, "origin": list(grid.origin),
        "dims": list(grid.dims), "axis": AXES[axis_index], "rows": list(rows), "outside": accumulator.outside,
        "block": BLOCK, "backend": backend, **robot_joints(robot),
    }
    if support is not None and held is not None:
        metadata["support"] = {**support.metadata(robot, held[0]), "rejected": accumulator.rejected}
    return CapabilityMap(
        counts=accumulator.count.reshape(shape),
        coverage=accumulator.coverage.reshape(shape),
        best_manipulability=best.reshape(shape),
        best_index=accumulator.best_index.reshape(shape),
        best_q=sampler.configurations_at(accumulator.best_index[reached], workers=workers),
        directions=dirs,
        metadata=metadata,
    )

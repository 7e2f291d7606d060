"""Capability maps are the same for any chunk size, worker count and scheduler; bad input and an
unreachable scheduler give one reljac error each, quickly."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

import reljac
from reljac.dask_client import local_servers
from reljac.exceptions import MapError, SchedulerError
from reljac.maps import MAX_SAMPLES, capability_map, scheduling

pytestmark = pytest.mark.slow

ARGS = dict(samples=40_000, voxel=0.1, seed=7, directions=16)


@pytest.fixture(scope="module")
def reference_map(dual_arm):
    return capability_map(dual_arm, "left_tool", "right_tool", workers=1, chunk=40_000, **ARGS)


def test_the_map_is_not_trivial(reference_map):
    assert reference_map.reached.sum() > 500
    assert reference_map.coverage_index().max() >= 0.25  # several directions in a voxel
    assert reference_map.metadata["outside"] == 0


@pytest.mark.parametrize("workers, chunk", [(2, None), (2, 1000), (1, 7777), (3, 12_345)])
def test_same_map_for_any_workers_and_chunk(dual_arm, reference_map, workers, chunk):
    other = capability_map(dual_arm, "left_tool", "right_tool", workers=workers, chunk=chunk, **ARGS)
    assert other == reference_map


def test_a_different_seed_gives_a_different_map(dual_arm, reference_map):
    other = capability_map(dual_arm, "left_tool", "right_tool", **{**ARGS, "seed": 8})
    assert not other.same_reduction(reference_map)


def test_progress_reaches_the_sample_count_and_chunks_in_flight_stay_bounded(dual_arm, monkeypatch):
    seen, in_flight, peak = [], [0], [0]
    real = scheduling.run_chunk

    def counting(job, start, stop):
        in_flight[0] += 1
        peak[0] = max(peak[0], in_flight[0])
        try:
            return real(job, start, stop)
        finally:
            in_flight[0] -= 1

    monkeypatch.setattr(scheduling, "run_chunk", counting)
    capability_map(dual_arm, "left_tool", "right_tool", samples=20_000, voxel=0.2, chunk=1000, workers=2,
                   progress=lambda done, total: seen.append((done, total)))
    assert len(seen) == 20 and seen[-1] == (20_000, 20_000)
    assert all(a[0] < b[0] for a, b in itertools.pairwise(seen))
    assert peak[0] <= 2


def test_a_dask_local_cluster_gives_the_same_map(dual_arm, reference_map):
    pytest.importorskip("distributed")
    other = capability_map(dual_arm, "left_tool", "right_tool", scheduler="local", workers=2, chunk=9000, **ARGS)
    assert other == reference_map


def test_an_unreachable_scheduler_is_one_clear_error_without_a_hang(dual_arm):
    pytest.importorskip("distributed")
    start = time.monotonic()
    with pytest.raises(SchedulerError, match=r"no Dask scheduler answered at 'tcp://127.0.0.1:9' within 1 s"):
        capability_map(dual_arm, "left_tool", "right_tool", samples=1000, voxel=0.2,
                       scheduler="tcp://127.0.0.1:9", connect_timeout=1.0)
    assert time.monotonic() - start < 30


def test_a_task_failing_on_a_worker_is_one_scheduler_error(dual_arm, monkeypatch):
    distributed = pytest.importorskip("distributed")
    from reljac.maps import kernel

    def broken(job, start, stop):
        raise ModuleNotFoundError("No module named 'reljac'")

    monkeypatch.setattr(scheduling, "run_chunk", broken)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, **local_servers()) as client, \
            pytest.raises(SchedulerError, match="failed on a Dask worker .*No module named 'reljac'"):
        capability_map(dual_arm, "left_tool", "right_tool", samples=1000, voxel=0.2, scheduler=client)
    assert kernel.run_chunk is not broken


def test_without_dask_a_scheduler_says_how_to_install_it(dual_arm, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError("No module named 'distributed'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(SchedulerError, match=r"needs Dask: pip install '\.\[scale\]'"):
        capability_map(dual_arm, "left_tool", "right_tool", samples=100, voxel=0.2, scheduler="tcp://127.0.0.1:9")
    local = capability_map(dual_arm, "left_tool", "right_tool", samples=100, voxel=0.2)  # threads need no Dask
    assert local.counts.sum() == 100


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(frame_a="left_tol"), reljac.FrameNotFound, "did you mean 'left_tool'"),
    (dict(frame_b="nowhere"), reljac.FrameNotFound, "'nowhere' is not in robot 'dual_arm'"),
    (dict(voxel=0.0), MapError, "voxel must be a positive number"),
    (dict(voxel=-0.1), MapError, "voxel must be a positive number"),
    (dict(voxel=float("nan")), MapError, "voxel must be a positive number"),
    (dict(voxel=1e-4), MapError, "use voxel >= "),
    (dict(samples=0), MapError, "samples must be an integer in"),
    (dict(samples=MAX_SAMPLES + 1), MapError, "samples must be an integer in"),
    (dict(samples=2.5), MapError, "samples must be an integer"),
    (dict(seed=-1), MapError, "seed must be an integer"),
    (dict(chunk=0), MapError, "chunk must be an integer"),
    (dict(workers=0), MapError, "workers must be an integer"),
    (dict(directions=0), MapError, "directions must be between 1 and 64"),
    (dict(directions=65), MapError, "directions must be between 1 and 64"),
    (dict(directions=[[0, 0, 0]]), MapError, "non-zero"),
    (dict(axis="w"), MapError, "axis must be 'x', 'y' or 'z'"),
    (dict(part="speed"), MapError, "part must be one of position, orientation, full"),
    (dict(part=("vx", "vx")), MapError, "distinct"),
    (dict(scheduler=42), MapError, "scheduler must be None, 'threads', 'local'"),
    (dict(backend="gpu"), MapError, "backend must be"),
    (dict(connect_timeout=0), MapError, "connect_timeout must be a positive number"),
    (dict(scheduler="not an address"), SchedulerError, "is not a Dask scheduler address|needs Dask"),
])
def test_bad_input_is_one_reljac_error(dual_arm, kwargs, error, message):
    args = dict(frame_a="left_tool", frame_b="right_tool", samples=100, voxel=0.2)
    args.update(kwargs)
    with pytest.raises(error, match=message):
        capability_map(dual_arm, args.pop("frame_a"), args.pop("frame_b"), **args)


def test_directions_given_as_vectors_are_normalised(dual_arm):
    cmap = capability_map(dual_arm, "left_tool", "right_tool", samples=2000, voxel=0.2,
                          directions=[[0, 0, 2.0], [0, 0, -1.0]])
    np.testing.assert_allclose(cmap.directions, [[0, 0, 1], [0, 0, -1]])
    assert set(np.unique(cmap.coverage)) <= {0, 1, 2, 3}

"""``reljac bench map``: batched relative kinematics, capability-map throughput on threads and
Dask, Dask's per-task costs, and what seeding IK from a map does. Figures, never assertions.

Timings on a shared machine move with its load (printed with each table); the per-core figure
is samples per second of CPU time of this process, which other processes disturb less, and
"cores used" (CPU time / wall time) shows how much of the machine a run actually got.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable
from functools import partial
from statistics import median
from typing import Any, TypeVar

import numpy as np
import pinocchio as pin

from ..maps import CapabilityMap, capability_map, seed_for
from ..maps.compiled import compiled_available, python_relative_kinematics, relative_kinematics
from ..maps.grid import as_directions, make_grid
from ..maps.kernel import Accumulator, Job, merge_partials, run_chunk
from ..maps.sampling import Sampler
from ..relative import Kinematics
from ..robot import Robot
from .bench_common import middle
from .report import format_table

PAIR = ("left_tool", "right_tool")
_Result = TypeVar("_Result")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count() or 1} cores"


def _timed(fn: Callable[[], _Result]) -> tuple[float, float, _Result]:
    """(wall [s], CPU time of this process [s], result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def kinematics_table(robot: Robot, *, quick: bool) -> str:
    """T_ab + J_ab for N configurations: the compiled batch (Pinocchio's C++ calls in a loop) vs the
    Pinocchio layer's Python loop vs the batched reference."""
    from ..reference_map import LayerMap, reference_robot

    n = 2000 if quick else 20_000
    ref = reference_robot(robot)
    layers = LayerMap(robot, ref)
    q_ref = ref.random_configuration(np.random.default_rng(0), n=n)
    Q = np.ascontiguousarray(layers.q_to_pinocchio(q_ref))
    fa, fb = robot.frame_id(PAIR[0]), robot.frame_id(PAIR[1])

    def compiled() -> tuple[np.ndarray, np.ndarray]:
        return relative_kinematics(robot, Q, fa, fb, backend="compiled")

    loop_n = n // 10
    t_compiled = min(_timed(compiled)[0] for _ in range(5)) / n
    t_loop = min(_timed(lambda: python_relative_kinematics(robot, Q[:loop_n], fa, fb))[0] for _ in range(3)) / loop_n
    t_ref = min(_timed(lambda: (ref.relative_placement(q_ref, *PAIR), ref.relative_jacobian(q_ref, *PAIR)))[0]
                for _ in range(3)) / n
    T, J = compiled()
    T_pin, J_pin = python_relative_kinematics(robot, Q[:loop_n], fa, fb)
    err_pin = max(np.abs(T[:loop_n] - T_pin).max(), np.abs(J[:loop_n] - J_pin).max())
    err_ref = max(np.abs(T - ref.relative_placement(q_ref, *PAIR)).max(),
                  np.abs(layers.columns(J) - ref.relative_jacobian(q_ref, *PAIR)).max())
    rows = [
        ("compiled batch, Pinocchio C++ calls (reljac.maps.relative_kinematics)", t_compiled * 1e6, 1.0, "-"),
        ("Pinocchio layer, Python loop", t_loop * 1e6, t_loop / t_compiled, f"{err_pin:.1e}"),
        ("in-house reference, batched numpy", t_ref * 1e6, t_ref / t_compiled, f"{err_ref:.1e}"),
    ]
    return (f"T_ab and J_ab of {PAIR[1]} in {PAIR[0]} on {robot.name} (nv={robot.nv}), N={n}, one thread, best of "
            f"runs; {_load()}\n" + format_table(["path", "per configuration [us]", "time / compiled",
                                                 "max |difference| to compiled"], rows))


def throughput_table(robot: Robot, *, quick: bool, voxel: float) -> str:
    """Samples per second of the whole map (sampling + T_ab + J_ab + binning + merge), best of
    interleaved runs (the least disturbed by other processes on a shared machine)."""
    samples = 400_000 if quick else 2_000_000
    repeats = 1 if quick else 3
    args: dict[str, Any] = dict(samples=samples, voxel=voxel, seed=1)
    capability_map(robot, *PAIR, samples=20_000, voxel=voxel)  # warm up: caches
    best: dict[str, tuple[float, float]] = {}
    maps: dict[int | str, CapabilityMap] = {}

    def keep(label: str, wall: float, cpu: float) -> None:
        if label not in best or wall < best[label][0]:
            best[label] = (wall, cpu)

    for _ in range(repeats):
        for workers in (1, 2):
            wall, cpu, maps[workers] = _timed(partial(capability_map, robot, *PAIR, **args, workers=workers))
            keep(f"threads, {workers} worker{'s' if workers > 1 else ''}", wall, cpu)
    try:
        distributed: Any = importlib.import_module("distributed")
    except ImportError:
        distributed = None
    if distributed is not None:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                                      silence_logs=40) as cluster, distributed.Client(cluster) as client:
            capability_map(robot, *PAIR, samples=20_000, voxel=voxel, scheduler=client)  # workers warm up
            for _ in range(repeats):
                wall, _, maps["dask"] = _timed(lambda: capability_map(robot, *PAIR, **args, scheduler=client))
                keep("Dask LocalCluster, 2 processes", wall, float("nan"))
    one = best["threads, 1 worker"][0]
    rows = []
    for label, (wall, cpu) in best.items():
        per_cpu = f"{samples / cpu:,.0f}" if cpu == cpu else "(other processes)"
        used = f"{cpu / wall:.2f}" if cpu == cpu else "-"
        rows.append((label, f"{samples / wall:,.0f}", per_cpu, used, f"{one / wall:.2f}x"))
    same = all(m == maps[1] for m in maps.values())
    # where the time goes, one thread, per sample (best of 5)
    fa, fb = robot.frame_id(PAIR[0]), robot.frame_id(PAIR[1])
    grid = make_grid(robot, fa, fb, voxel)
    job = Job(robot, fa, fb, grid, as_directions(32), 2, (0, 1, 2), 1, "compiled")
    n = 1 << 17
    sampler = Sampler(robot, 1)

    def fastest(fn: Callable[[], object]) -> float:
        return min(_timed(fn)[0] for _ in range(5)) / n

    t_uniform = fastest(lambda: sampler.uniforms(0, n))
    t_draw = fastest(lambda: sampler.draw(0, n))
    t_chunk = fastest(lambda: run_chunk(job, 0, n))
    part = run_chunk(job, 0, n)
    accumulator = Accumulator(grid)
    accumulator.add(part)  # the first touch of the map's pages is paid once per map, not per chunk
    t_merge = fastest(lambda: accumulator.add(part))
    breakdown = [("uniforms (numpy PCG64)", t_uniform * 1e9), ("uniforms -> q (C++)", (t_draw - t_uniform) * 1e9),
                 ("T_ab, J_ab (Pinocchio C++), manipulability, binning", (t_chunk - t_draw) * 1e9),
                 ("merge into the map (C++, client side)", t_merge * 1e9),
                 ("total", (t_chunk + t_merge) * 1e9)]
    return (f"capability map of {PAIR[1]} in {PAIR[0]} on {robot.name}: {samples:,} samples, voxel {voxel} m "
            f"({grid.size:,} voxels), 32 directions, position manipulability; best of {repeats} interleaved runs; "
            f"{'identical maps' if same else 'MAPS DIFFER'}; {_load()}\n"
            + format_table(["run", "samples/s (wall)", "samples/s per CPU second", "cores used (CPU / wall)",
                            "speed-up vs 1 worker"], rows)
            + "\nper sample, one thread (wall, best of 5)\n" + format_table(["step", "ns"], breakdown))


def dask_costs_table(robot: Robot, *, quick: bool, voxel: float) -> str:
    """Scheduler overhead per task, bytes a chunk sends back, and the cost of merging it."""
    rows = []
    try:
        import distributed
    except ImportError:
        return "Dask costs: Dask is not installed (pip install 'reljac[scale]')"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        n = 200 if quick else 1000
        client.gather([client.submit(int, i, pure=False) for i in range(20)])
        wall = _timed(lambda: client.gather([client.submit(int, i, pure=False) for i in range(n)]))[0]
        rows.append(("no-op tasks, throughput (2 workers)", f"{wall / n * 1e3:.2f} ms per task"))
        def round_trip(k: int) -> object:
            return client.submit(int, k, pure=False).result()

        trips = [_timed(partial(round_trip, i))[0] for i in range(20 if quick else 100)]
        rows.append(("one task's round trip (submit -> result)", f"{median(trips) * 1e3:.2f} ms"))
    fa, fb = robot.frame_id(PAIR[0]), robot.frame_id(PAIR[1])
    grid = make_grid(robot, fa, fb, voxel)
    job = Job(robot, fa, fb, grid, as_directions(32), 2, (0, 1, 2), 1, "compiled")
    sizes = [1 << 16, 1 << 18] if quick else [1 << 16, 1 << 18, 1 << 20, 1 << 22]
    for c in sizes:
        compute, _, part = _timed(partial(run_chunk, job, 0, c))
        other = run_chunk(job, c, 2 * c)
        merge = _timed(partial(merge_partials, [part, other]))[0]
        accumulator = Accumulator(grid)
        accumulator.add(other)  # pages touched once per map
        add = _timed(partial(accumulator.add, part))[0]
        rows.append((f"chunk of {c:,} samples", f"computed in {compute * 1e3:.0f} ms; returns {part.voxel.size:,} "
                     f"voxels = {part.nbytes / 1e6:.2f} MB; pairwise merge {merge * 1e3:.0f} ms; "
                     f"client merge {add * 1e3:.0f} ms"))
    return (f"Dask costs (LocalCluster of 2 processes on this machine; {_load()})\n"
            + format_table(["quantity", "value"], rows))


def seeding_table(robot: Robot, *, quick: bool, voxel: float) -> str:
    """IK of relative poses far from the start: from the middle of the limits, from neutral, and
    from seed_for(map, T_ab)."""
    from ..ik import RelativeFrameTask, solve

    cmap = capability_map(robot, *PAIR, samples=400_000 if quick else 4_000_000, voxel=voxel, seed=5)
    rng = np.random.default_rng(2028)
    starts = {"middle of the limits": middle(robot),
              "neutral (q = 0)": robot.neutral()}
    p_starts = [Kinematics(robot, q).relative_placement(*PAIR).translation for q in starts.values()]
    targets: list[pin.SE3] = []
    while len(targets) < (6 if quick else 40):
        T = Kinematics(robot, robot.random_configuration(rng)).relative_placement(*PAIR)
        if min(np.linalg.norm(T.translation - p) for p in p_starts) > 0.4:  # far from both starts
            targets.append(T)
    seeded = {"seed_for(map, T_ab)": lambda T: seed_for(cmap, T),
              "seed_for(map, T_ab, robot=robot)": lambda T: seed_for(cmap, T, robot=robot)}
    results: dict[str, list[tuple[bool, int, float, float]]] = {name: [] for name in [*starts, *seeded]}
    for T in targets:
        for name in results:
            q0 = starts[name] if name in starts else seeded[name](T)
            task = RelativeFrameTask(*PAIR, gain=20.0)
            task.set_target(T)
            wall, _, result = _timed(partial(solve, robot, q0, [[task]], tol=1e-4, max_iters=500))
            p_start = Kinematics(robot, q0).relative_placement(*PAIR).translation
            start_error = float(np.linalg.norm(T.translation - p_start))
            results[name].append((result.converged, result.iterations, wall, start_error))
    rows = []
    for name, runs in results.items():
        ok = [r for r in runs if r[0]]
        rows.append((name, f"{100 * len(ok) / len(runs):.0f} %",
                     f"{median([r[1] for r in ok]):.0f}" if ok else "-",
                     f"{median([r[1] for r in runs]):.0f}", f"{1e3 * median([r[2] for r in runs]):.0f}",
                     f"{median([r[3] for r in runs]):.3f}"))
    return (f"IK seeding on {robot.name}: {len(targets)} reachable relative poses of {PAIR[1]} in {PAIR[0]} more than "
            f"0.4 m from both fixed starts; solve(robot, q0, [[RelativeFrameTask(gain=20)]], tol=1e-4, "
            f"max_iters=500); map: {cmap.metadata['samples']:,} samples, voxel {voxel} m\n"
            + format_table(["start", "success", "iterations (successes, median)", "iterations (all, median)",
                            "time per solve [ms]", "start position error [m]"], rows))


def map_tables(*, quick: bool = False) -> str:
    if not compiled_available():
        return "bench map: the compiled core is not built (no C++ compiler at install time)"
    robot = Robot.bundled("dual_arm")
    voxel = 0.05
    return "\n\n".join([kinematics_table(robot, quick=quick), throughput_table(robot, quick=quick, voxel=voxel),
                        dask_costs_table(robot, quick=quick, voxel=voxel),
                        seeding_table(robot, quick=quick, voxel=voxel)])

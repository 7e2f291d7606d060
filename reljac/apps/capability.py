"""``reljac map``: compute a capability map with a progress bar, save it, print a summary."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..maps import capability_map
from ..maps.capability import default_workers
from ..maps.scheduling import describe
from ..robot import Robot
from ..validation import PARTS


def _progress_bar(samples: int, enabled: bool) -> Any:
    """(callback, close): a tqdm bar in samples/s on stderr, or nothing without tqdm / a terminal."""
    if not enabled:
        return None, lambda: None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, lambda: None
    size = shutil.get_terminal_size((100, 24))  # a terminal that reports 0 x 0 gets 100 x 24
    bar = tqdm(total=samples, unit="samples", unit_scale=True, file=sys.stderr, disable=None, smoothing=0.1,
               ncols=size.columns, nrows=size.lines)

    def update(done: int, _total: int) -> None:
        bar.update(done - bar.n)

    return update, bar.close


def make_map(robot: Robot, frame_a: str, frame_b: str, *, samples: int, voxel: float, out: str, seed: int = 0,
             directions: int = 32, part: str = "position", chunk: int | None = None, workers: int | None = None,
             scheduler: str | None = None, progress: bool = True, print_: Callable[..., object] = print) -> Path:
    """What ``reljac map`` runs. Returns the path written."""
    rows = part if part in PARTS else tuple(name.strip() for name in str(part).split(",") if name.strip())
    callback, close = _progress_bar(samples, progress)
    start = time.perf_counter()
    try:
        cmap = capability_map(robot, frame_a, frame_b, samples=samples, voxel=voxel, seed=seed,
                              directions=directions, part=rows, chunk=chunk, workers=workers, scheduler=scheduler,
                              progress=callback)
    finally:
        close()
    elapsed = time.perf_counter() - start
    path = cmap.save(out)
    m = cmap.metadata
    reached = cmap.reached
    coverage = cmap.coverage_index()[reached]
    best = cmap.best_manipulability[reached]
    where = describe(scheduler)
    if where == "threads":
        where = f"{workers or default_workers()} threads"
    print_(f"capability map of '{m['frame_b']}' in '{m['frame_a']}' on {m['robot']}: {samples:,} samples in "
           f"{elapsed:.1f} s ({samples / elapsed:,.0f} samples/s, {where}, {m['backend']} kinematics)")
    print_(f"grid {' x '.join(map(str, m['dims']))} voxels of {m['voxel']:g} m; {int(reached.sum()):,} reached"
           + (f"; {m['outside']:,} samples outside the grid" if m["outside"] else ""))
    if reached.any():
        print_(f"coverage index (of {len(cmap.directions)} directions): max {coverage.max():.2f}, "
               f"median {np.median(coverage):.2f}; best manipulability ({part}): max {best.max():.4g}, "
               f"median {np.median(best):.4g}")
    print_(f"saved to {path}")
    return path

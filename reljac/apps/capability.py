"""``reljac map``: compute a capability map with a progress bar, save it, print a summary."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import ReljacError, SupportError
from ..maps import CapabilityMap, MapSupport, capability_map
from ..maps.capability import default_workers
from ..maps.scheduling import describe
from ..robot import Robot
from ..support import SupportContact
from ..validation import PARTS
from ..workspace import workspace_summary
from .recording import check_output
from .report import json_document


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


RANK_SAMPLES = 64  # random configurations that tell a structurally singular pair (all singular)


def output_path(out: str | os.PathLike, option: str = "--out") -> Path:
    """The file `reljac map --out` (or `option`) will write (".npz" added when missing, as
    CapabilityMap.save does), after checking it names a file, not a folder nor another kind of
    file, in a folder that exists and is writable: before any sample is drawn."""
    given = os.fspath(out)
    path = Path(given)
    if not given.strip() or given.endswith(("/", os.sep)) or path.is_dir() or path.name in ("", ".", ".."):
        raise ReljacError(f"{option}: {given!r} is not a file name; give a file name ending in .npz")
    if path.suffix != ".npz":
        if path.exists():
            raise ReljacError(f"{option}: {given!r} is a file that is not a map (.npz); give a file name ending in "
                              ".npz")
        path = path.with_name(path.name + ".npz")
    check_output(path, (".npz",), option)
    if path.is_dir():
        raise ReljacError(f"{option}: {str(path)!r} is a folder; give a file name ending in .npz")
    if path.exists() and not path.is_file():  # a FIFO would block the writer until a reader comes
        raise ReljacError(f"{option}: {str(path)!r} is not a regular file (a FIFO, a socket or a device); "
                          "give a file name ending in .npz")
    if not os.access(path.parent, os.W_OK):
        raise ReljacError(f"{option}: folder {str(path.parent)!r} is not writable")
    return path


def map_support(frames: str, sole: tuple[float, float] | None, margin: float) -> MapSupport:
    """`--support F1,F2 --sole LxW --margin M`: a contact per frame (a LxW rectangle centred on its
    origin, or the origin alone), kept `margin` [m] inside.

    Raises:
        SupportError: no frame name given.
    """
    names = [name.strip() for name in frames.split(",")]
    if not all(names):
        raise SupportError(f"--support expects contact frame names separated by commas, got {frames!r}")
    contacts = [SupportContact.rectangle(name, *sole) if sole else SupportContact(name, np.zeros((1, 3)))
                for name in names]
    return MapSupport(tuple(contacts), margin)


def make_map(robot: Robot, frame_a: str, frame_b: str, *, samples: int, voxel: float, out: str, seed: int = 0,
             directions: int = 32, part: str = "position", chunk: int | None = None, workers: int | None = None,
             scheduler: str | None = None, progress: bool = True, as_json: bool = False,
             support: MapSupport | None = None, print_: Callable[..., object] = print) -> Path:
    """What ``reljac map`` runs: checks `out`, computes, saves, prints a summary (text, or one
    JSON document with `as_json`, keys in :func:`map_summary`). Returns the path written."""
    path = output_path(out)
    rows = part if part in PARTS else tuple(name.strip() for name in str(part).split(",") if name.strip())
    callback, close = _progress_bar(samples, progress)
    start = time.perf_counter()
    try:
        cmap = capability_map(robot, frame_a, frame_b, samples=samples, voxel=voxel, seed=seed,
                              directions=directions, part=rows, chunk=chunk, workers=workers, scheduler=scheduler,
                              progress=callback, support=support)
    finally:
        close()
    elapsed = time.perf_counter() - start
    path = cmap.save(path)
    where = describe(scheduler)
    if where == "threads":
        where = f"{workers or default_workers()} threads"
    # a pair whose rows have lower rank everywhere (UR5's tool0 in forearm_link) has only rounding
    # noise for a manipulability: said as such (RANK_SAMPLES random samples all singular)
    rank = workspace_summary(robot, frame_a, frame_b, samples=RANK_SAMPLES, seed=seed,
                             part=tuple(cmap.metadata["rows"])).rank
    summary = map_summary(cmap, path, elapsed, where, part, rank=rank)
    if as_json:
        print_(json_document(summary))
        return path
    m = cmap.metadata
    print_(f"capability map of '{m['frame_b']}' in '{m['frame_a']}' on {m['robot']}: {samples:,} samples in "
           f"{elapsed:.1f} s ({summary['samples_per_second']:,.0f} samples/s, {where}, {m['backend']} kinematics)")
    print_(f"grid {' x '.join(map(str, m['dims']))} voxels of {m['voxel']:g} m; {summary['reached']:,} reached"
           + (f"; {m['outside']:,} samples outside the grid" if m["outside"] else ""))
    if cmap.support is not None:
        s = cmap.support
        held = f"; held at the reference: {', '.join(s['held'])}" if s["held"] else ""
        print_(f"balance-aware: {cmap.rejected:,} of {samples:,} samples rejected "
               f"({summary['rejected_fraction']:.1%}): centre of mass outside the support region of "
               f"{', '.join(c['frame'] for c in s['contacts'])} (margin {s['margin']:g} m{held})")
    if summary["reached"]:
        coverage, best = summary["coverage_index"], summary["best_manipulability"]
        manipulability = f"max {best['max']:.4g}, median {best['median']:.4g}" if rank is None else \
            f"0: rank {rank} < {len(m['rows'])} at every sample ({m['frame_b']} moves in only {rank} of these " \
            f"directions in {m['frame_a']})"
        print_(f"coverage index (of {len(cmap.directions)} directions): max {coverage['max']:.2f}, "
               f"median {coverage['median']:.2f}; best manipulability ({part}): {manipulability}")
    print_(f"saved to {path}")
    return path


def map_summary(cmap: CapabilityMap, path: Path, seconds: float, where: str, part: str, *,
                rank: int | None = None) -> dict[str, Any]:
    """What ``reljac map --json`` prints: ``robot``, ``frame_a``, ``frame_b``, ``samples``,
    ``seed``, ``seconds``, ``samples_per_second``, ``scheduler``, ``backend``, ``part``, ``rows``,
    ``directions``, ``voxel`` [m], ``origin`` [m], ``dims``, ``voxels``, ``reached``, ``outside``,
    ``coverage_index`` and ``best_manipulability`` (``max`` and ``median`` over the reached voxels,
    null when none is), ``path``; ``support`` (null, or the contacts' frames and points [m], ``margin``,
    ``plane``, ``held`` joints and ``rejected`` samples) and ``rejected_fraction`` (0 for a plain map);
    ``rank``: null, or the rank of the rows at every sample when it is below their number (then
    ``best_manipulability`` is 0: the map's values are rounding noise)."""
    m = cmap.metadata
    reached = cmap.reached

    def stats(values: np.ndarray) -> dict[str, float | None]:
        if not values.size:
            return {"max": None, "median": None}
        return {"max": float(values.max()), "median": float(np.median(values))}

    return {
        "robot": m["robot"], "frame_a": m["frame_a"], "frame_b": m["frame_b"], "samples": m["samples"],
        "seed": m["seed"], "seconds": seconds, "samples_per_second": m["samples"] / seconds if seconds > 0 else None,
        "scheduler": where, "backend": m["backend"], "part": part, "rows": list(m["rows"]),
        "directions": len(cmap.directions), "voxel": m["voxel"], "origin": list(m["origin"]), "dims": list(m["dims"]),
        "voxels": int(reached.size), "reached": int(reached.sum()), "outside": m["outside"],
        "coverage_index": stats(cmap.coverage_index()[reached]),
        "best_manipulability": stats(cmap.best_manipulability[reached] * (rank is None)),
        "path": str(path),
        "support": m.get("support"), "rejected_fraction": cmap.rejected / m["samples"], "rank": rank,
    }

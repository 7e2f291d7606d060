"""``reljac place ROBOT TASKFILE``: where the base should stand for a task file's poses (text or
JSON), with progress bars for building the maps and checking the candidates, and a browser view.

The work is :func:`reljac.placement.place`'s; the file is read by :mod:`reljac.apps.place_file`.
"""

from __future__ import annotations

import argparse
import math
import time
from functools import partial
from pathlib import Path
from typing import Any

from ..exceptions import MapError
from ..files import shown
from ..placement import PlacementMaps, PlacementResult, load_maps, mobile_base, place, placement_maps, save_maps
from ..placement.place import DEFAULT_MARGIN
from ..placement.posemap import cell_sizes
from ..placement.posemap_build import DEFAULT_BINS
from ..program import ctrl_c_ends_the_wait
from .arguments import UsageError, load_robot
from .capability import output_path
from .hierarchy_values import within
from .place_file import PlaceFile, read_place_file
from .report import format_table, json_document, progress_bar, progress_wanted

DEFAULT_SAMPLES = 2_000_000


def run(args: argparse.Namespace) -> int:
    """The command (see the module docstring); returns its exit code (0: done, a placement found
    or not)."""
    given = [option for option, used in (("--open", args.open), ("--host", args.host is not None),
                                         ("--no-hold", args.no_hold)) if used]
    if given and not args.view:
        raise UsageError(f"reljac: error: {', '.join(given)} go{'es' if len(given) == 1 else ''} with --view "
                         "(the page of the result); add --view or leave them out")
    spec = read_place_file(args.taskfile)
    if args.view:  # before the maps and the check: an --json document is then never followed by an error
        from ..viz.server import LOOPBACK, check_host

        check_host(args.host or LOOPBACK)  # (None: --host not given, which the options above tell apart)
    robot = load_robot(args)
    if spec.lock:
        robot = within(f"{spec.where}, lock", lambda: robot.locked(spec.lock))
    mobile = within(f"{spec.where}, [base]", lambda: mobile_base(robot, height=spec.height))
    task = spec.task()
    for i, hand in enumerate(task.hands):  # named by the file, before any map is built
        within(f"{spec.where}, hand {i + 1}", partial(mobile.robot.frame_id, hand))
    show = progress_wanted(args.progress)
    maps, built = _maps(args, spec, mobile, task.hands, show)
    collision = spec.collision(mobile)
    margin = spec.check.get("margin", DEFAULT_MARGIN[0])
    with progress_bar(None, "check", show=show, unit="placement") as bar:
        def progress(stage: str, done: int, total: int) -> None:
            if bar is not None and stage == "check":
                bar.total = total
                bar.update(done - bar.n)

        result = place(maps, task, spec.region, collision=collision,
                       min_distance=spec.collision_options.get("min_distance", 0.01), score=spec.score,
                       candidates=args.candidates or spec.check.get("candidates", 3),
                       check_timeout=spec.check.get("timeout", 0.05), margin=(margin,) * 4 + (0.0, 0.0),
                       refine=args.refine or spec.check.get("refine", False), workers=args.workers,
                       every_pose=args.view, progress=progress)  # the view colours the floor by every pose
    document = summary(spec, maps, result, built)
    if args.json:
        print(json_document(document))
    else:
        print(text(document))
    if args.view:
        _view(args, maps, task, result, collision)
    return 0


def _view(args: argparse.Namespace, maps: PlacementMaps, task: Any, result: PlacementResult, collision: Any) -> None:
    """The result in the browser; from a terminal (no --no-hold) the robot goes through the poses
    at the best placement until Ctrl-C."""
    from ..viz.placement import play, show_placement
    from ..viz.server import LOOPBACK
    from .view import wait_for_interrupt

    viewer = show_placement(maps.mobile, task, result, open=args.open, obstacles=collision,
                            host=args.host or LOOPBACK)
    try:
        if args.no_hold:
            return
        print("Press Ctrl-C to stop the viewer.", flush=True)
        with ctrl_c_ends_the_wait():
            if result.best is not None:
                play(viewer, result.best.q)
            else:
                wait_for_interrupt()
    finally:
        viewer.close()


def _maps(args: argparse.Namespace, spec: PlaceFile, mobile: Any, hands: list[str],
          show: bool) -> tuple[PlacementMaps, dict[str, Any]]:
    """The task's maps: read from --maps (or the file's [maps] file) when it exists, else built
    (with a bar) and saved there. Returns them and what was done: {built, seconds, file}."""
    from ..placement import with_maps

    path = Path(args.maps) if args.maps else spec.map_file
    if path is not None and not (path.suffix == ".npz" and path.is_file()):  # not maps to read: maps to build and
        # save there, a file name in a folder that exists (checked first)
        path = output_path(path, "--maps" if args.maps else f"{spec.where}, [maps] file")
    if path is not None and path.exists():
        start = time.perf_counter()
        loaded = load_maps(path)
        missing = [h for h in hands if h not in loaded]
        if missing:
            raise MapError(f"'{shown(path)}' has no map of {', '.join(missing)}: delete it to build them again")
        maps = with_maps(mobile, hands, loaded)
        _check_asked(path, loaded, hands, args, spec)
        return maps, {"built": False, "seconds": time.perf_counter() - start, "file": str(path)}
    samples = args.samples or spec.maps.get("samples", DEFAULT_SAMPLES)
    start = time.perf_counter()
    with progress_bar(samples * len(hands), "maps", show=show, unit="sample") as bar:
        def step(done: int, _total: int) -> None:
            if bar is not None:
                bar.update(done - bar.n)

        maps = placement_maps(mobile, hands, samples=samples, voxel=spec.maps.get("voxel", 0.04),
                              bins=spec.maps.get("bins", DEFAULT_BINS), seed=spec.maps.get("seed", 0),
                              workers=args.workers, scheduler=args.scheduler, progress=step)
    seconds = time.perf_counter() - start
    if path is not None:
        save_maps(path, maps)
    return maps, {"built": True, "seconds": seconds, "file": None if path is None else str(path)}


def _check_asked(path: Path, loaded: dict[str, Any], hands: list[str], args: argparse.Namespace,
                 spec: PlaceFile) -> None:
    """MapError when the maps read from `path` are not the ones this run asks for (--samples, and
    the samples, voxel, bins and seed the file's [maps] gives; its defaults ask for nothing): a
    file of other maps is not used silently."""
    asked: dict[str, Any] = {key: list(spec.maps[key]) if key == "bins" else spec.maps[key]
                             for key in ("samples", "voxel", "bins", "seed") if key in spec.maps}
    if args.samples:
        asked["samples"] = args.samples
    said = {"samples": "{:,} samples per hand", "voxel": "cells of {:g} m", "bins": "bins {}", "seed": "seed {}"}
    built = list(loaded)  # (the file's order, as built: hand i's map from seed + i, placement_maps)
    for hand in hands:
        m = loaded[hand].metadata
        i = built.index(hand)
        held = {"samples": m["samples"], "voxel": m["voxel"], "bins": [m["n_psi"], m["n_beta"], m["n_gamma"]],
                "seed": m["seed"] - i}
        differ = [key for key, value in asked.items()
                  if (not math.isclose(held[key], value, rel_tol=1e-9) if key == "voxel" else held[key] != value)]
        if differ:
            raise MapError(f"'{shown(path)}' holds maps of {', '.join(said[k].format(held[k]) for k in differ)}; "
                           f"this run asks for {', '.join(said[k].format(asked[k]) for k in differ)} (--samples or "
                           "the file's [maps]): delete the file to build them again, or ask for the maps it holds")


def summary(spec: PlaceFile, maps: PlacementMaps, result: PlacementResult, built: dict[str, Any]) -> dict[str, Any]:
    """What ``reljac place --json`` prints: ``robot``, ``base_joint``, ``base_kind``, ``hands``,
    ``frame`` (the hands' maps are in), ``shared`` (joints), ``shared_values``, ``maps`` {``built``,
    ``seconds``, ``file``, ``samples``, ``bytes``, ``cells`` (per hand), ``resolution``}, ``poses``,
    ``placements``, ``clear`` (the base clears the obstacles), ``reach_all`` (the maps reach every
    pose), ``sure_all``, ``seconds`` {``clearance``, ``maps``, ``refine``, ``check``, ``total``},
    ``query_us_per_pair`` (null without a clear placement), ``checked``, ``check_problems``, ``score``,
    ``best`` (null or {``x``, ``y``, ``yaw``, ``score``, ``map_score``, ``q``: one configuration per pose}),
    ``candidates`` (each checked placement: ``x``, ``y``, ``yaw``, ``map_score``,
    ``map_poses_reached``, ``map_poses_sure``, ``map_poses_witnessed``, ``feasible``, ``poses_reached``,
    ``score``)."""
    mobile, chains = maps.mobile, maps.chains
    first = next(iter(maps.maps.values()))
    pairs = int(result.free.sum()) * len(result.found.reached[0]) if len(result.found.reached) else 0
    best = result.best
    return {
        "robot": mobile.robot.name, "base_joint": mobile.joint, "base_kind": mobile.kind, "hands": maps.hands,
        "frame": chains.frame, "shared": list(chains.shared), "shared_values": len(chains.values),
        "maps": {**built, "samples": int(first.metadata["samples"]), "bytes": maps.nbytes,
                 "cells": {hand: len(m.cells) for hand, m in maps.maps.items()}, "resolution": cell_sizes(first)},
        "poses": int(result.found.reached.shape[1]), "placements": len(result.placements),
        "clear": int(result.free.sum()), "reach_all": int(result.found.reached.all(axis=1).sum()),
        "sure_all": int(result.found.sure.all(axis=1).sum()), "seconds": result.seconds,
        "query_us_per_pair": 1e6 * result.seconds["maps"] / pairs if pairs else None, "checked": len(result.candidates),
        "check_problems": result.checked_problems, "score": result.score,
        "best": None if best is None else {**best.to_dict(), "q": best.q.tolist()},
        "candidates": [c.to_dict() for c in result.candidates],
    }


def _degrees(yaw: float) -> str:
    """A yaw [rad] in degrees, one decimal, a value rounding to zero as 0.0 (never -0.0)."""
    return f"{round(math.degrees(yaw), 1) + 0.0:.1f}"


def text(d: dict[str, Any]) -> str:
    """The text form of :func:`summary`'s document."""
    shared = f" (shared: {', '.join(d['shared'])}, {d['shared_values']} values)" if d["shared"] else ""
    m = d["maps"]
    made = (f"built from {m['samples']:,} samples per hand in {m['seconds']:.1f} s" if m["built"] else
            f"read from {m['file']} in {m['seconds']:.2f} s")
    r = m["resolution"]
    us = d["query_us_per_pair"]
    per_pair = "" if us is None else f" ({us:.2f} us per (placement, pose) pair)"
    lines = [
        f"{d['robot']}: base joint '{d['base_joint']}' ({d['base_kind']}); hands {', '.join(d['hands'])} in "
        f"'{d['frame']}'{shared}",
        f"maps: {made}{'' if not m['built'] or not m['file'] else ', saved to ' + m['file']}; "
        f"{m['bytes'] / 1e6:.1f} MB; cells of {r['voxel']:g} m, {r['psi']:.0f}/{r['beta']:.0f}/{r['gamma']:.0f} deg",
        f"floor: {d['placements']:,} placements, {d['clear']:,} clear of the obstacles; the maps reach all "
        f"{d['poses']} poses from {d['reach_all']:,} ({d['sure_all']:,} surely) in {d['seconds']['maps']:.2f} s"
        f"{per_pair}",
        f"check: {d['checked']} placements ({d['check_problems']} IK problems) in {d['seconds']['check']:.2f} s; "
        f"total {d['seconds']['total']:.2f} s",
    ]
    best = d["best"]
    if best is None:
        lines.append("no placement passed the exact check" + ("" if d["reach_all"] else
                     ": the maps reach every pose from none of the floor's placements (widen [floor]?)"))
    else:
        lines.append(f"best: x {best['x']:.3f} m, y {best['y']:.3f} m, yaw {_degrees(best['yaw'])} deg: "
                     f"every pose reached, {d['score']} {best['score']:.4g} (maps: {best['map_score']:.4g})")
    if d["candidates"]:
        rows = [[f"{c['x']:.3f}", f"{c['y']:.3f}", _degrees(c["yaw"]), f"{c['map_poses_sure']}",
                 f"{c['map_poses_witnessed']}",
                 "yes" if c["feasible"] else f"no ({c['poses_reached']}/{d['poses']})",
                 "-" if c["score"] is None else f"{c['score']:.4g}"] for c in d["candidates"]]
        lines.append(format_table(["x [m]", "y [m]", "yaw [deg]", "sure", "witnessed", "feasible", d["score"]], rows))
    return "\n".join(lines)




"""``reljac bench``: timing tables, medians of many runs, ratios to Pinocchio's own C++ calls.

Every table times its baseline in the same run as the code it compares, so the ratios hold on a
shared, noisy machine even when the absolute times move.

Each section ("jacobian", "reference", "ik") measures into a dict of numbers (times in seconds;
the ``--json`` form, see :func:`results`) and formats it as a table. Each calls an optional
`progress` hook with the units of work just done; :func:`units` says how many there are.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pinocchio as pin

from ..one_shot import relative_jacobian
from ..relative import Kinematics
from ..robot import Robot
from .bench_common import Progress, done, median_seconds
from .bench_units import HEADER as UNITS_HEADER
from .bench_units import robots_results, robots_rows
from .report import format_table, json_document, write_line

PAIRS = [("left_tool", "right_tool"), ("torso", "left_tool"), ("torso", "right_tool"), ("right_tool", "left_link5")]


JACOBIAN_CASES = 6  # the five cases, then the per-robot table


def jacobian_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """Relative Jacobians on dual_arm vs Pinocchio's computeFrameJacobian for one frame.

    Returns {``robot``, ``nv``, ``runs``, ``calls_per_run``, ``cases``: [{``case``,
    ``time_s`` (median [s] per call), ``ratio_to_baseline``}]} (the first case is the baseline).
    """
    robot = Robot.bundled("dual_arm")
    model, data = robot.model, robot.model.createData()
    q = robot.random_configuration(0)
    fa, fb = robot.frame_id("left_tool"), robot.frame_id("right_tool")
    pairs = [p for p in PAIRS if all(f in robot.frame_names for f in p)]
    runs = 30 if quick else 300
    LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def pin_one_frame():
        pin.computeFrameJacobian(model, data, q, fa, LWA)

    def pin_two_frames():
        pin.computeFrameJacobian(model, data, q, fa, LWA)
        pin.computeFrameJacobian(model, data, q, fb, LWA)

    def one_pair():
        relative_jacobian(robot, q, "left_tool", "right_tool")

    def four_single_calls():
        for a, b in pairs:
            relative_jacobian(robot, q, a, b)

    def shared_four_pairs():
        kin = Kinematics(robot, q, data=robot.data)
        for a, b in pairs:
            kin.relative_jacobian(a, b)

    cases = [
        ("pin.computeFrameJacobian, 1 frame (baseline)", pin_one_frame),
        ("pin.computeFrameJacobian, 2 frames", pin_two_frames),
        ("reljac.relative_jacobian, 1 pair", one_pair),
        (f"reljac.relative_jacobian x {len(pairs)} single calls", four_single_calls),
        (f"reljac.Kinematics, {len(pairs)} pairs (one pass)", shared_four_pairs),
    ]
    times = []
    for _, fn in cases:
        times.append(median_seconds(fn, runs=runs))
        done(progress)
    robots = robots_results(quick=quick)
    done(progress)
    return {"robot": robot.name, "nv": robot.nv, "runs": runs, "calls_per_run": 20,
            "cases": [{"case": name, "time_s": t, "ratio_to_baseline": t / times[0]}
                      for (name, _), t in zip(cases, times, strict=True)],
            "robots": robots}


def jacobian_text(r: dict[str, Any]) -> str:
    title = (f"relative Jacobians on {r['robot']} (nv={r['nv']}), median of {r['runs']} runs x "
             f"{r['calls_per_run']} calls")
    rows = [(c["case"], c["time_s"] * 1e6, c["ratio_to_baseline"]) for c in r["cases"]]
    return (title + "\n" + format_table(["case", "time [us]", "ratio to baseline"], rows)
            + "\n\nper robot, in units of one pin.computeFrameJacobian call on it (frame b), same run, interleaved\n"
            + format_table(UNITS_HEADER, robots_rows(r["robots"])))


def reference_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """Batched in-house reference vs a Python loop over the Pinocchio layer, per configuration.

    Returns {``robot``, ``configurations`` (N), ``runs``, ``paths``: [{``path``,
    ``time_per_configuration_s`` (median [s]), ``ratio_to_batched``}]}.
    """
    from ..reference_map import LayerMap, reference_robot

    robot = Robot.bundled("dual_arm")
    ref = reference_robot(robot)
    n = 1000 if quick else 10_000
    rng = np.random.default_rng(0)
    q_ref = ref.random_configuration(rng, n=n)
    layers = LayerMap(robot, ref)
    q_pin = list(layers.q_to_pinocchio(q_ref))
    runs = 3 if quick else 7

    def batched():
        ref.relative_jacobian(q_ref, "left_tool", "right_tool")

    def loop():
        for q in q_pin:
            relative_jacobian(robot, q, "left_tool", "right_tool")

    t_batch = median_seconds(batched, runs=runs, inner=1) / n
    done(progress)
    t_loop = median_seconds(loop, runs=runs, inner=1) / n
    done(progress)
    return {"robot": robot.name, "configurations": n, "runs": runs, "paths": [
        {"path": "reference, batched numpy (N at once)", "time_per_configuration_s": t_batch, "ratio_to_batched": 1.0},
        {"path": "Pinocchio layer, Python loop", "time_per_configuration_s": t_loop,
         "ratio_to_batched": t_loop / t_batch},
    ]}


def reference_text(r: dict[str, Any]) -> str:
    rows = [(p["path"], p["time_per_configuration_s"] * 1e6, p["ratio_to_batched"]) for p in r["paths"]]
    return (f"relative Jacobians for N={r['configurations']} random configurations of {r['robot']}, per "
            f"configuration, median of {r['runs']} runs\n"
            + format_table(["path", "time per configuration [us]", "ratio to batched"], rows))


def _ik_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    from .bench_ik import ik_results

    return ik_results(quick=quick, progress=progress)


def _ik_text(r: dict[str, Any]) -> str:
    from .bench_ik import ik_text

    return ik_text(r)


def _ik_units(quick: bool) -> int:
    from .bench_ik import ik_units

    return ik_units(quick=quick)


def _map_results(*, quick: bool = False, progress: Progress = None) -> dict[str, Any]:
    """`reljac bench map` (batched kinematics, map throughput, Dask costs, IK seeding): its tables."""
    from .bench_map import map_tables

    text = map_tables(quick=quick)
    if progress is not None:
        progress(1)
    return {"tables": text}


def _map_text(r: dict[str, Any]) -> str:
    return r["tables"]


#: name: (measure(quick=, progress=) -> dict, format(dict) -> str, units of work(quick) -> int)
SECTIONS: dict[str, tuple[Callable[..., dict], Callable[[dict], str], Callable[[bool], int]]] = {
    "jacobian": (jacobian_results, jacobian_text, lambda quick: JACOBIAN_CASES),
    "reference": (reference_results, reference_text, lambda quick: 2),
    "ik": (_ik_results, _ik_text, _ik_units),
    "map": (_map_results, _map_text, lambda quick: 1),
    "kinds": (lambda **kw: _lazy("bench_kinds", "kinds_results")(**kw), lambda r: _lazy("bench_kinds", "kinds_text")(r),
              lambda quick: _lazy("bench_kinds", "kinds_units")(quick)),
}


def _solve_section(peers: bool) -> tuple[Callable[..., dict], Callable[[dict], str], Callable[[bool], int]]:
    """`reljac bench solve` (TRAC-IK's protocol; with `peers`, TRAC-IK itself on the same targets)."""
    return (lambda **kw: _lazy("bench_solve", "solve_results")(peers=peers, **kw),
            _lazy("bench_solve", "solve_text"), lambda quick: _lazy("bench_solve", "solve_units")(quick))


def _collision_section(peers: bool) -> tuple[Callable[..., dict], Callable[[dict], str], Callable[[bool], int]]:
    """`reljac bench solve --collision` (collision-free poses; with `peers`, TRAC-IK in a rejection loop)."""
    return (lambda **kw: _lazy("bench_solve_collision", "collision_results")(peers=peers, **kw),
            _lazy("bench_solve_collision", "collision_text"),
            lambda quick: _lazy("bench_solve_collision", "collision_units")(quick))


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """`name` of the sibling `module`, imported at the first call (PlaCo and pink load only then)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(f".{module}", __package__), name)(*args, **kwargs)

    return call


#: measured only when asked (``--peers``), after "ik": reljac beside PlaCo and pink
PEERS_SECTION = (_lazy("bench_peers", "peers_results"), _lazy("bench_peers", "peers_text"),
                 lambda quick: _lazy("bench_peers", "peers_units")(quick=quick))


#: measured only when asked (``reljac bench place``: minutes, a brute-force truth), never in "all"
PLACE_SECTION = (_lazy("bench_place", "place_results"), _lazy("bench_place", "place_text"),
                 lambda quick: _lazy("bench_place", "place_units")(quick))


def _names(what: str, peers: bool = False, collision: bool = False) -> list[str]:
    if collision:  # `solve --collision`: its own protocol
        return ["solve_collision+peers" if peers else "solve_collision"]
    names = [*SECTIONS, "solve"] if what == "all" else [what]
    if peers and "ik" in names:
        names.insert(names.index("ik") + 1, "peers")
    return [f"{n}+peers" if n == "solve" and peers else n for n in names]


def _section(name: str) -> tuple[Callable[..., dict], Callable[[dict], str], Callable[[bool], int]]:
    if name.startswith("solve_collision"):
        return _collision_section(name.endswith("+peers"))
    if name.startswith("solve"):
        return _solve_section(name.endswith("+peers"))
    if name == "place":
        return PLACE_SECTION
    return PEERS_SECTION if name == "peers" else SECTIONS[name]


def formatter(section: str) -> Callable[[dict], str]:
    """The function that writes a measured section (a key of :func:`results`' ``sections``: "jacobian",
    "solve", "solve_collision", "peers", ...) as its table: what ``reljac bench`` prints, and what the
    performance page (benchmarks/performance_page.py) renders stored runs with."""
    return _section(section)[1]


def units(what: str = "all", *, quick: bool = False, peers: bool = False, collision: bool = False) -> int:
    """How many units of work :func:`main` reports to its `progress` hook for `what`."""
    return sum(_section(name)[2](quick) for name in _names(what, peers, collision))


def results(what: str = "all", *, quick: bool = False, progress: Progress = None,
            peers: bool = False, collision: bool = False) -> dict[str, Any]:
    """The measurements of ``reljac bench WHAT --json``: {``quick``, ``sections``: {name: dict}}
    with the dicts of :func:`jacobian_results`, :func:`reference_results`,
    :func:`reljac.apps.bench_ik.ik_results` and, with `peers` (for "ik" and "all"),
    :func:`reljac.apps.bench_peers.peers_results`; with `collision` ("solve" only), the section
    ``solve_collision`` of :func:`reljac.apps.bench_solve_collision.collision_results` (times in seconds)."""
    return {"quick": quick, "sections": {name.removesuffix("+peers"): _section(name)[0](quick=quick, progress=progress)
                                         for name in _names(what, peers, collision)}}


def main(what: str = "all", *, quick: bool = False, as_json: bool = False, progress: Progress = None,
         peers: bool = False, collision: bool = False) -> int:
    """Print the tables of `what` ("all", "jacobian", "reference", "ik", "map", "kinds", "solve"
    or "place") as each is
    measured, or with `as_json` one JSON document at the end; `progress` and `peers` as in
    :func:`results`."""
    if as_json:
        print(json_document(results(what, quick=quick, progress=progress, peers=peers, collision=collision)))
        return 0
    out = partial(print, flush=True) if progress is None else write_line  # write_line: between bar redraws
    for i, name in enumerate(_names(what, peers, collision)):
        measure, text, _ = _section(name)
        out(("\n" if i else "") + text(measure(quick=quick, progress=progress)))
    return 0

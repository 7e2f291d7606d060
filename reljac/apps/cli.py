"""The ``reljac`` command line: argument parsing and printing, no math.

    reljac info ROBOT                      DoF, joints with limits, frames as a tree
    reljac jacobian ROBOT A B [...]        labelled relative Jacobian J_ab at a configuration
    reljac check ROBOT [...]               Pinocchio layer vs the in-house reference kinematics
    reljac bench [jacobian|reference|ik|map] timing tables
    reljac view ROBOT [--frames ...]       show a robot in the browser
    reljac demo {dual-arm,hand}            the IK demos
    reljac analyze ROBOT A B               relative manipulability over the workspace
    reljac map ROBOT A B --samples N ...   capability map of b in a (threads or Dask), saved as .npz
    reljac robots                          the robot names ROBOT accepts

ROBOT is a robot name (``reljac robots``: the bundled ones, and example-robot-data's when it is
installed) or a path to a URDF file. ``--lock JOINT[=VALUE]`` fixes joints (shell patterns
such as 'hand_*' allowed), ``--q-named NAME`` takes a configuration of the robot's SRDF.

``--json`` (info, jacobian, check, analyze, bench) prints one JSON document on stdout instead of
text: numbers as numbers, null for NaN and infinities (keys in the docs' command-line page).
check, analyze, bench and ``demo --headless`` draw a progress bar on stderr when stderr is a
terminal and ``CI`` is unset; ``--progress`` / ``--no-progress`` decide instead.

Every number has a range (shown by ``--help``). Exit codes: 0 done (also when the output is
piped into a program that closes it early, like ``head``), 1 a check mismatch or a reljac bug,
2 bad input (one ``reljac: error:`` line), 130 interrupted by Ctrl-C (one line).
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_starting(signum, frame) -> None:  # pragma: no cover - timing dependent
    os.write(2, b"reljac: interrupted\n")
    os._exit(130)


# The `reljac` program: Ctrl-C while the modules below load ends with one line too (main() then
# turns Ctrl-C into KeyboardInterrupt again). Not when another program imports this module.
if os.path.basename(sys.argv[0] if sys.argv else "") in ("reljac", "cli.py") \
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_while_starting)

import argparse  # noqa: E402
from typing import Sequence  # noqa: E402

# Small matrices: BLAS threads only add overhead (and noise to `reljac bench`). Set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ..exceptions import ReljacError  # noqa: E402

MAX_SEED = 2**63 - 1
MAX_PRECISION = 16  # digits: float64 has 15-17 significant ones
MAX_COORDINATE = 1e100  # as reljac.robot.MAX_COORDINATE (not imported: the parser loads no numpy)
CHECK_SAMPLES = 10_000  # ~10 ms each on the dual arm
ANALYZE_SAMPLES = 1_000_000  # ~5 us each on the dual arm


class UsageError(Exception):
    """A command-line mistake found by the parser (printed as one line, exit 2)."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: 'reljac jacobian: error: ... (see reljac jacobian --help)'."""

    def error(self, message: str):  # noqa: D102 - argparse's hook
        raise UsageError(f"{self.prog}: error: {message} (see '{self.prog} --help')")


def _integer(low: int, high: int):
    """argparse type: an integer in [low, high]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer in {low}..{high}, got '{text}'") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in {low}..{high}, got {value if abs(value) < 10**30 else text[:30] + '...'}")
        return value

    parse.__name__ = "integer"
    return parse


def _coordinate(text: str) -> float:
    """argparse type: a finite number with |x| <= 1e100."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not abs(value) <= MAX_COORDINATE:
        raise argparse.ArgumentTypeError(f"must be finite with |x| <= {MAX_COORDINATE:g}, got '{text}'")
    return value


def _folder(text: str) -> str:
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"'{text}' is not a folder")
    return text


def _robot_arguments(parser: argparse.ArgumentParser, *, optional: bool = False, lock: bool = True) -> None:
    parser.add_argument("robot", nargs="?" if optional else None,
                        help="robot name (see 'reljac robots') or path to a URDF file")
    parser.add_argument("--floating-base", action="store_true", help="add a free-flyer root joint")
    parser.add_argument(
        "--package-dir", action="append", default=None, metavar="DIR", type=_folder,
        help="folder searched for package:// meshes (repeatable)",
    )
    parser.add_argument("--no-mimic", action="store_true", help="load <mimic> joints as independent joints")
    if lock:
        parser.add_argument("--srdf", metavar="FILE", help="the robot's SRDF (named configurations, collision pairs)")
        parser.add_argument("--lock", action="append", metavar="JOINT[=VALUE]",
                            help="fix a joint (a shell pattern like 'hand_*' fixes each joint it matches) at VALUE, "
                                 "else at its value in --q-named's or the reference configuration (repeatable)")


def _robot_options(args) -> dict:
    """Load options given on the command line (a named robot keeps its own otherwise)."""
    kwargs = {}
    if args.floating_base:
        kwargs["floating_base"] = True
    if args.no_mimic:
        kwargs["mimic"] = False
    if args.package_dir:
        kwargs["package_dirs"] = args.package_dir
    if getattr(args, "srdf", None):
        kwargs["srdf"] = args.srdf
    return kwargs


def _load_robot(args):
    from ..robot import Robot

    robot = Robot.load(args.robot, **_robot_options(args))
    if getattr(args, "lock", None):
        values: dict = {}
        for item in args.lock:
            name, sep, value = item.partition("=")
            if sep and not value:
                raise ReljacError(f"--lock expects JOINT or JOINT=VALUE, got '{item}'")
            values[name] = value if sep else None
        named = getattr(args, "q_named", None)
        robot = robot.locked(values, robot.configuration(named) if named else None)
    return robot


def _configuration(robot, args):
    """q from --q (nq numbers), --joint NAME=VALUE pairs, --q-named NAME (the SRDF's) or --seed
    (random); default: the robot's reference configuration (neutral unless it names one)."""
    if args.q_named is not None:
        return robot.configuration(args.q_named)
    if args.q is not None:
        return robot.validate_q(args.q)
    if args.joint:
        values = {}
        for item in args.joint:
            name, sep, value = item.partition("=")
            if not sep:
                raise ReljacError(f"--joint expects NAME=VALUE, got '{item}'")
            values[name] = value
        return robot.q_from_joint_values(values)
    if args.seed is not None:
        return robot.random_configuration(args.seed)
    return robot.reference_configuration()


def _configuration_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--q", type=_coordinate, nargs="+", metavar="X",
                       help=f"configuration: nq numbers, each |X| <= {MAX_COORDINATE:g}")
    group.add_argument("--joint", action="append", metavar="NAME=VALUE",
                       help=f"joint value [rad or m], |VALUE| <= {MAX_COORDINATE:g} (repeatable)")
    group.add_argument("--seed", type=_integer(0, MAX_SEED), metavar="S",
                       help=f"random configuration inside the limits, seed 0..2^63-1")
    group.add_argument("--q-named", metavar="NAME", help="a named configuration of the robot's SRDF")


# ------------------------------------------------------------------ commands
def cmd_info(args) -> int:
    from .report import robot_summary
    from ..robot import bundled_robots

    if args.json:
        return _info_json(args)
    if args.list or args.robot is None:
        print("bundled robots: " + ", ".join(bundled_robots()))
        print(_ik_backend_line())
        return 0
    title, _, rest = robot_summary(_load_robot(args)).partition("\n")
    print(title)
    print("  " + _ik_backend_line())
    print(rest)
    return 0


def _info_json(args) -> int:
    """``reljac info [ROBOT] --json``: {bundled_robots, ik_solver, compiled_core_built[, robot keys]}."""
    from ..ik import backend
    from .report import json_document, robot_dict
    from ..robot import bundled_robots

    document = {"bundled_robots": bundled_robots(), "ik_solver": backend.default_backend(),
                "compiled_core_built": backend.compiled_available()}
    if not args.list and args.robot is not None:
        document.update(robot_dict(_load_robot(args)))
    print(json_document(document))
    return 0


def _ik_backend_line() -> str:
    """Which solver the IK controller runs on here."""
    from ..ik import backend

    name = backend.default_backend()
    if name == "compiled":
        return "IK solver: compiled (reljac.ik._core, C++)"
    built = "built" if backend.compiled_available() else "not built"
    return f"IK solver: python (the compiled core is {built})"


def cmd_jacobian(args) -> int:
    import numpy as np

    from ..relative import Kinematics
    from .report import format_matrix, format_placement, velocity_labels

    robot = _load_robot(args)
    q = _configuration(robot, args)
    kin = Kinematics(robot, q)
    J = kin.relative_jacobian(args.frame_a, args.frame_b, expressed_in=args.expressed_in)
    T_ab = kin.relative_placement(args.frame_a, args.frame_b)
    if args.json:
        from .report import jacobian_dict, json_document

        print(json_document(jacobian_dict(robot, q, args.frame_a, args.frame_b, args.expressed_in, T_ab, J)))
        return 0
    np.set_printoptions(precision=args.precision, suppress=True, linewidth=200)
    print(f"robot {robot.name}: nq={robot.nq}, nv={robot.nv}")
    print(f"q = {np.array2string(q, precision=args.precision)}")
    print(f"T_ab (pose of '{args.frame_b}' in '{args.frame_a}'):")
    print(format_placement(T_ab, args.precision))
    print(
        f"J_ab: motion of '{args.frame_b}' measured in '{args.frame_a}', expressed in "
        f"'{args.expressed_in}'; [d/dt p_ab; w_ab] = J v\n(printed transposed: one line per column of J, i.e. per velocity index)"
    )
    rows = ["vx", "vy", "vz", "wx", "wy", "wz"]
    print(format_matrix(J, rows, velocity_labels(robot), args.precision))
    return 0


def cmd_bench(args) -> int:
    from . import bench
    from .report import hook

    with _bar(args, bench.units(args.what, quick=args.quick), f"bench {args.what}", "unit") as bar:
        return bench.main(args.what, quick=args.quick, as_json=args.json, progress=hook(bar))


def cmd_check(args) -> int:
    from .check import check_urdf

    from .report import hook, json_document

    pairs = [tuple(args.frames)] if args.frames else None
    with _bar(args, args.samples, "check", "sample") as bar:
        report = check_urdf(args.robot, **_robot_options(args), samples=args.samples, seed=args.seed, pairs=pairs,
                            progress=hook(bar))
    print(json_document(report.to_dict()) if args.json else report.format())
    return 0 if report.ok else 1


def cmd_analyze(args) -> int:
    from ..analysis import format_workspace_summary, workspace_summary

    from .report import hook, json_document

    robot = _load_robot(args)
    with _bar(args, args.samples, "analyze", "sample") as bar:
        summary = workspace_summary(robot, args.frame_a, args.frame_b, args.samples, args.seed, part=args.part,
                                    progress=hook(bar))
    print(json_document(summary.to_dict()) if args.json else format_workspace_summary(summary))
    return 0


# ------------------------------------------------------------------ map
def cmd_map(args) -> int:
    from .capability import make_map

    make_map(_load_robot(args), args.frame_a, args.frame_b, samples=args.samples, voxel=args.voxel, out=args.out,
             seed=args.seed, directions=args.directions, part=args.part, chunk=args.chunk, workers=args.workers,
             scheduler=args.scheduler, progress=not args.no_progress)
    return 0


# ------------------------------------------------------------------ view
def cmd_view(args) -> int:
    from .view import view

    robot = _load_robot(args)
    q = _configuration(robot, args)
    view(robot, args.frames or [], q, hold=not args.no_hold, open=args.open, zmq_url=args.zmq_url,
         capability_map=args.map, color_by=args.color_by)
    return 0


def _bar(args, total: int, what: str, unit: str):
    """A progress bar on stderr for a long command (see :func:`reljac.apps.report.progress_wanted`)."""
    from .report import progress_bar, progress_wanted

    asked = args.progress
    return progress_bar(total, what, show=progress_wanted(asked), unit=unit, delay=0.0 if asked else 0.5)


def cmd_robots(args) -> int:
    from .. import robots

    names = robots.available_robots()
    print(f"{'NAME':<28}{'FROM':<20}{'BASE':<10}{'SRDF':<6}REFERENCE")
    for name in names:
        source = robots.resolve(name)
        print(f"{name:<28}{source.origin:<20}{'floating' if source.floating_base else 'fixed':<10}"
              f"{'yes' if source.srdf else '-':<6}{source.posture or '-'}")
    root = robots.example_robot_data_dir()
    if root is None:
        print(f"\nexample-robot-data is not installed: pip install \"reljac[robots]\" for "
              f"{len(robots.EXAMPLE_ROBOTS)} more robots")
    else:
        print(f"\n{len(names)} robots; example-robot-data's files: {root}")
    return 0


# ------------------------------------------------------------------ parser
def _json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document on stdout instead of text (numbers; null for NaN and inf)")


def _progress_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar on stderr (default: only when stderr is a terminal and CI is unset)")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="reljac", description="Relative Jacobians, task-priority IK and browser views for URDF robots.",
        epilog="Exit codes: 0 done, 1 check mismatch, 2 bad input, 130 interrupted.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    seed = _integer(0, MAX_SEED)

    p = sub.add_parser("info", help="DoF, joints with limits, frames as a tree")
    _robot_arguments(p, optional=True)
    p.add_argument("--list", action="store_true", help="list the bundled robots")
    _json_argument(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("jacobian", help="labelled relative Jacobian J_ab at a configuration")
    _robot_arguments(p)
    p.add_argument("frame_a", help="frame a (the one b is measured in), or 'universe' for the world")
    p.add_argument("frame_b", help="frame b")
    p.add_argument("--expressed-in", default="a", metavar="F", help="'a' (default), 'b', 'world' or a frame name")
    p.add_argument("--precision", type=_integer(0, MAX_PRECISION), default=4, metavar="D",
                   help=f"digits printed, 0..{MAX_PRECISION} (default 4)")
    _configuration_arguments(p)
    _json_argument(p)
    p.set_defaults(func=cmd_jacobian)

    p = sub.add_parser("bench", help="timing tables (median of many runs, ratios to Pinocchio)")
    p.add_argument("what", nargs="?", default="all", choices=["all", "jacobian", "reference", "ik", "map"])
    p.add_argument("--quick", action="store_true", help="fewer repetitions (for smoke tests)")
    _json_argument(p)
    _progress_argument(p)
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("check", help="compare the Pinocchio layer with the in-house reference kinematics")
    _robot_arguments(p, lock=False)
    p.add_argument("--frames", nargs=2, metavar=("A", "B"), help="check this pair only (default: all pairs)")
    p.add_argument("--samples", type=_integer(1, CHECK_SAMPLES), default=50, metavar="N",
                   help=f"random configurations, 1..{CHECK_SAMPLES} (default 50)")
    p.add_argument("--seed", type=seed, default=0, metavar="S", help="0..2^63-1 (default 0)")
    _json_argument(p)
    _progress_argument(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("analyze", help="relative manipulability of b in a over random configurations")
    _robot_arguments(p)
    p.add_argument("frame_a")
    p.add_argument("frame_b")
    p.add_argument("--samples", type=_integer(1, ANALYZE_SAMPLES), default=1000, metavar="N",
                   help=f"random configurations, 1..{ANALYZE_SAMPLES} (default 1000)")
    p.add_argument("--seed", type=seed, default=0, metavar="S", help="0..2^63-1 (default 0)")
    p.add_argument("--part", default="position", choices=["position", "orientation", "full"])
    _json_argument(p)
    _progress_argument(p)
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("map", help="capability map of frame b in frame a over random configurations (.npz)")
    _robot_arguments(p)
    p.add_argument("frame_a", help="the map's frame (voxels are in a)")
    p.add_argument("frame_b", help="the frame whose origin is binned")
    p.add_argument("--samples", type=_integer(1, 10**12), required=True, help="random configurations, 1..10^12")
    p.add_argument("--voxel", required=True, help="voxel edge [m], > 0, with at most 2^25 voxels in the map")
    p.add_argument("--out", required=True, metavar="FILE", help="output file (.npz)")
    p.add_argument("--seed", type=_integer(0, 2**63 - 1), default=0, help="0..2^63-1 (default 0)")
    p.add_argument("--directions", type=_integer(1, 64), default=32, help="approach directions, 1..64 (default 32)")
    p.add_argument("--part", default="position", help="rows of J_ab rated by the manipulability: position "
                   "(default), orientation, full, or rows such as vx,vy")
    p.add_argument("--chunk", type=_integer(1, 2**27), help="samples per task, 1..2^27 (the map does not depend on it)")
    p.add_argument("--workers", type=_integer(1, 4096), help="local threads or processes, 1..4096 (default: all cores)")
    p.add_argument("--scheduler", metavar="URL", help="'local' (Dask LocalCluster) or a Dask address tcp://HOST:8786")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_map)

    sub.add_parser("demo", add_help=False,  # main() hands `reljac demo ...` to reljac/demo.py
                   help="IK demos: reljac demo {dual-arm,hand} [--duration S] [--headless] [--loop] "
                   "[--no-wait] [--exit] [--record FILE] [--plot FILE]")

    p = sub.add_parser("view", help="show a robot in the browser (meshcat) with chosen frames")
    _robot_arguments(p)
    p.add_argument("--frames", nargs="+", metavar="F", help="frames drawn as triads (segment between the first two)")
    p.add_argument("--no-hold", action="store_true", help="exit right away instead of waiting for Ctrl-C")
    p.add_argument("--open", action="store_true", help="open a browser tab")
    p.add_argument("--zmq-url", help="join a running meshcat server instead of starting one")
    p.add_argument("--map", metavar="FILE", help="draw a capability map (from `reljac map`) as coloured voxels")
    p.add_argument("--color-by", default="coverage", choices=["coverage", "manipulability"], help="voxel colours")
    _configuration_arguments(p)
    p.set_defaults(func=cmd_view)

    p = sub.add_parser("robots", help="the robot names ROBOT accepts: bundled, then example-robot-data's")
    p.set_defaults(func=cmd_robots)

    return parser


# ------------------------------------------------------------------ running a command
def _say(line: str) -> None:
    """One line on stderr (newlines in a message are joined)."""
    print(" ".join(line.split("\n")), file=sys.stderr, flush=True)


def _run(argv: list[str]) -> int:
    if argv[:1] == ["demo"]:  # the demos parse their own options (reljac/demo.py)
        from .demo import main as demo_main

        return int(demo_main(argv[1:]) or 0)
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (see the module docstring). Never raises."""
    try:
        if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            argv = list(sys.argv[1:] if argv is None else argv)
            _printable_output()
            try:
                code = _run(argv)
            except SystemExit as exc:  # argparse's --help (0) and the demo's own parser (2)
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            sys.stdout.flush()  # inside the try: a closed pipe is reported here, not at exit
            return code
        except UsageError as exc:
            _say(str(exc))
            return 2
        except ReljacError as exc:
            _say(f"reljac: error: {type(exc).__name__}: {exc}")
            return 2
        except MemoryError as exc:
            _say(f"reljac: error: out of memory{': ' + str(exc) if str(exc) else ''}")
            return 1
        except (KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as exc:  # noqa: BLE001 - a bug: one line for the user, not a traceback
            if _caused_by(exc, KeyboardInterrupt):  # e.g. numpy turns Ctrl-C during its import into ImportError
                raise KeyboardInterrupt from None
            if _caused_by(exc, BrokenPipeError):
                raise BrokenPipeError from None
            _say(f"reljac: error: unexpected {type(exc).__name__}: {exc} (a reljac bug: please report it)")
            return 1
    except BrokenPipeError:
        return _output_closed()
    except KeyboardInterrupt:
        return _interrupted()


def _caused_by(exc: BaseException, kind: type) -> bool:
    """exc is, or was raised while handling or because of, an exception of type `kind`."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _printable_output() -> None:
    """Paths and names with bytes that are not UTF-8 print as escapes instead of failing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass


def _output_closed() -> int:
    """The reader of stdout went away (`reljac info x | head`): stop quietly with exit 0."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush then succeeds
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    return 0


def _interrupted() -> int:
    """Ctrl-C: one line, exit 130; a second Ctrl-C while saying so is ignored."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        previous = None
    try:
        _say("reljac: interrupted")
    except (OSError, ValueError):
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

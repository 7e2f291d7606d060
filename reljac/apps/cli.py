"""The ``reljac`` command line: argument parsing and printing, no math.

The commands and what each does: :data:`SYNOPSIS`, the one list of them (``reljac --help`` shows
each command's line of it; :func:`synopsis` renders it for the docs, which are checked to show it).

ROBOT is a robot name (``reljac robots``: the bundled ones, and example-robot-data's when it is
installed) or a path to a URDF file. ``--lock JOINT[=VALUE]`` fixes joints (shell patterns
such as 'hand_*' allowed), ``--q-named NAME`` takes a configuration of the robot's SRDF.

``--json`` (info, jacobian, check, analyze, bench, map, place) prints one JSON document on stdout instead of
text: numbers as numbers, null for NaN and infinities (keys in the docs' command-line page).
check, analyze, bench and ``demo --headless`` draw a progress bar on stderr when stderr is a
terminal and ``CI`` is unset; ``--progress`` / ``--no-progress`` decide instead.

Every number has a range (shown by ``--help``). Exit codes: 0 done (also when the output is
piped into a program that closes it early, like ``head``), 1 a check mismatch or a reljac bug,
2 bad input (one ``reljac: error:`` line), 130 interrupted by Ctrl-C (one line).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import warnings

from ..program import catch_interrupts_while_starting, interrupt_noted, interrupt_received, interrupted_while_starting

# The `reljac` program: Ctrl-C while the modules below load ends with one line too (reljac's
# __init__ did this already; main() then turns Ctrl-C into KeyboardInterrupt again). Not when
# another program imports this module, nor in the worker processes of `reljac map --scheduler
# local` (reljac.program says how it tells them apart).
catch_interrupts_while_starting()

import argparse  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from functools import partial  # noqa: E402

# Small matrices: BLAS threads only add overhead (and noise to `reljac bench`). Set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ..exceptions import ReljacError, caused_by  # noqa: E402
from . import commands  # noqa: E402
from .arguments import (  # noqa: E402
    ANALYZE_SAMPLES,
    CHECK_SAMPLES,
    DEMO_DESCRIPTION,
    DEMO_EPILOG,
    FULL_MESHES,
    MAX_PRECISION,
    CommandParser,
    Parser,
    UsageError,
    configuration_arguments,
    debug_arguments,
    demo_arguments,
    integer,
    json_argument,
    place_arguments,
    progress_argument,
    robot_arguments,
    seed_argument,
    support_arguments,
)

#: The command line's synopsis: (a command with its usual arguments, what it does); a line
#: starting with spaces continues the command above it. ``reljac --help`` lists each command with
#: its lines' summaries; :func:`synopsis` is the block of the docs' command-line page.
SYNOPSIS: tuple[tuple[str, str], ...] = (
    ("reljac info ROBOT", "DoF, joints with limits, frame tree"),
    ("reljac jacobian ROBOT A B [--q ...|--joint N=V|--seed S] [--expressed-in F] [--precision D]",
     "labelled relative Jacobian J_ab at a configuration"),
    ("reljac check ROBOT [--frames A B] [--samples N]",
     "Pinocchio layer vs the in-house reference (exit 1 on mismatch)"),
    ("reljac analyze ROBOT A B [--samples N]", "relative manipulability over the workspace"),
    ("reljac analyze ROBOT [A B] --com [--com-frame F] [--q ...|--q-named N]", "centre of mass and its Jacobian"),
    ("reljac bench [jacobian|reference|ik|map|kinds|solve|place] [--peers] [--collision]",
     "timing tables against Pinocchio (--peers: PlaCo, pink; solve: TRAC-IK, pink, ikpy)"),
    ("reljac view ROBOT --frames A B [--seed S]", "show the robot and frames in the browser"),
    ("reljac view ROBOT --map FILE [--color-by C]", "a capability map as coloured voxels, with the robot"),
    ("reljac map ROBOT A B --samples N --voxel V --out FILE [--scheduler URL]", "capability map of b in a (.npz)"),
    ("    [--support F1,F2 [--sole LxW] [--margin M]]", "... keeping only samples whose centre of mass is supported"),
    ("reljac place ROBOT TASKFILE [--maps FILE] [--view]",
     "where the base should stand for a task's poses (maps, then IK)"),
    ("reljac demo dual-arm|hand|talos-balance [--headless] [--duration S] [--loop]", "the IK demos"),
    ("reljac debug ROBOT [FILE] [--lock J] [--q-named N]", "debug a task hierarchy live in the browser"),
    ("reljac robots", "the names ROBOT accepts: bundled, then example-robot-data's"),
)


def synopsis() -> str:
    """:data:`SYNOPSIS` as a block of text: each command, then its summary from column 49."""
    return "\n".join(f"{usage:<46}  {summary}" for usage, summary in SYNOPSIS)


def summary(command: str) -> str:
    """What `command` does: the summaries of its lines of :data:`SYNOPSIS`, joined by '; '."""
    return "; ".join(text for usage, text in SYNOPSIS if usage.split()[:2] == ["reljac", command])


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="reljac", description="Relative Jacobians, task-priority IK and browser views for URDF robots.",
        epilog="Exit codes: 0 done, 1 check mismatch, 2 bad input, 130 interrupted.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=CommandParser)

    p = sub.add_parser("info", help=summary("info"))
    robot_arguments(p, optional=True)
    p.add_argument("--list", action="store_true", help="list the bundled robots")
    json_argument(p)
    p.set_defaults(func=commands.cmd_info)

    p = sub.add_parser("jacobian", help=summary("jacobian"))
    robot_arguments(p)
    p.add_argument("frame_a", help="frame a (the one b is measured in), or 'universe' for the world")
    p.add_argument("frame_b", help="frame b")
    p.add_argument("--expressed-in", default=None, metavar="F",
                   help="'a' (default), 'b', 'world' (keywords: frame A's, B's or the world's axes) or a frame "
                        "name (link:NAME or joint:NAME for a frame named like a keyword)")
    p.add_argument("--precision", type=integer(0, MAX_PRECISION), default=4, metavar="D",
                   help=f"digits printed, 0..{MAX_PRECISION} (default 4)")
    configuration_arguments(p)
    json_argument(p)
    p.set_defaults(func=commands.cmd_jacobian)

    p = sub.add_parser("bench", help=summary("bench"))
    p.add_argument("what", nargs="?", default="all",
                   choices=["all", "jacobian", "reference", "ik", "map", "kinds", "solve", "place"])
    p.add_argument("--quick", action="store_true", help="fewer repetitions (for smoke tests)")
    p.add_argument("--peers", action="store_true",
                   help="ik, solve (or all): also compare with PlaCo and pink (ik), TRAC-IK, pink and ikpy (solve) "
                        "on the same targets, when installed (pip install \".[peers]\" in a clone of reljac; PlaCo "
                        "by hand: its wheels need pin 3.8, so build it from source on pin 4.1)")
    p.add_argument("--collision", action="store_true",
                   help="solve: collision-free poses (Panda among obstacles, the dual arm's self-collision) within "
                        "a budget, beside rejection loops (with --peers, TRAC-IK's too)")
    json_argument(p)
    progress_argument(p)
    p.set_defaults(func=commands.cmd_bench)

    p = sub.add_parser("check", help=summary("check"))
    robot_arguments(p, lock=False)
    p.add_argument("--frames", nargs=2, metavar=("A", "B"), help="check this pair only (default: all pairs)")
    p.add_argument("--samples", type=integer(1, CHECK_SAMPLES), default=50, metavar="N",
                   help=f"random configurations, 1..{CHECK_SAMPLES} (default 50)")
    seed_argument(p)
    json_argument(p)
    progress_argument(p)
    p.set_defaults(func=commands.cmd_check)

    p = sub.add_parser("analyze", help=summary("analyze"))
    robot_arguments(p)
    p.add_argument("frame_a", nargs="?", help="frame a of the relative task (optional with --com)")
    p.add_argument("frame_b", nargs="?", help="frame b")
    p.add_argument("--com", action="store_true",
                   help="also report the centre of mass and its Jacobian at the configuration given by --q, "
                        "--joint or --q-named (default: the reference configuration)")
    p.add_argument("--com-frame", metavar="F",
                   help="measure and express the centre of mass in frame F (default: the world); implies --com")
    configuration_arguments(p, random=False)
    p.add_argument("--samples", type=integer(1, ANALYZE_SAMPLES), metavar="N",
                   help=f"random configurations of A and B's manipulability, 1..{ANALYZE_SAMPLES} (default 1000)")
    seed_argument(p, default=None)  # (None: not given; --com alone takes no sampling option)
    p.add_argument("--part", choices=["position", "orientation", "full"],
                   help="rows of J_ab rated by the manipulability (default position)")
    json_argument(p)
    progress_argument(p)
    p.set_defaults(func=commands.cmd_analyze)

    p = sub.add_parser("map", help=summary("map"))
    robot_arguments(p)
    p.add_argument("frame_a", help="the map's frame (voxels are in a)")
    p.add_argument("frame_b", help="the frame whose origin is binned")
    p.add_argument("--samples", type=integer(1, 10**12), required=True, help="random configurations, 1..10^12")
    p.add_argument("--voxel", required=True, help="voxel edge [m], in (0, 1000], with at most 2^25 voxels in the map")
    p.add_argument("--out", required=True, metavar="FILE", help="output file (.npz)")
    seed_argument(p, metavar=None)
    p.add_argument("--directions", type=integer(1, 64), default=32, help="approach directions, 1..64 (default 32)")
    p.add_argument("--part", default="position", help="rows of J_ab rated by the manipulability: position "
                   "(default), orientation, full, or rows such as vx,vy")
    p.add_argument("--chunk", type=integer(1, 2**27), help="samples per task, 1..2^27 (the map does not depend on it)")
    p.add_argument("--workers", type=integer(1, 4096), help="local threads or processes, 1..4096 (default: all cores)")
    p.add_argument("--scheduler", metavar="URL", help="'local' (Dask LocalCluster) or a Dask address tcp://HOST:8786")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    support_arguments(p)
    json_argument(p)
    p.set_defaults(func=commands.cmd_map)

    p = sub.add_parser("place", help=summary("place"))
    robot_arguments(p)
    place_arguments(p)
    json_argument(p)
    progress_argument(p)
    p.set_defaults(func=commands.cmd_place)

    p = sub.add_parser("demo", description=DEMO_DESCRIPTION, epilog=DEMO_EPILOG,
                       help=summary("demo"))
    demo_arguments(p)
    p.set_defaults(func=partial(commands.cmd_demo, parser=p))

    p = sub.add_parser("view", help=summary("view"))
    robot_arguments(p)
    p.add_argument("--frames", nargs="+", metavar="F", help="frames drawn as triads (segment between the first two)")
    p.add_argument("--no-hold", action="store_true", help="exit right away instead of waiting for Ctrl-C")
    p.add_argument("--open", action="store_true", help="open a browser tab")
    p.add_argument("--zmq-url", help="join a running meshcat server instead of starting one")
    p.add_argument("--host", help="address the page listens on (default 127.0.0.1: this machine only; "
                   "0.0.0.0: the network)")
    p.add_argument("--map", metavar="FILE", help="draw a capability map (from `reljac map`) as coloured voxels")
    p.add_argument("--color-by", default="coverage", choices=["coverage", "manipulability"], help="voxel colours")
    p.add_argument("--full-meshes", action="store_true", help=FULL_MESHES)
    configuration_arguments(p)
    p.set_defaults(func=commands.cmd_view)

    p = sub.add_parser("debug", help=summary("debug"))
    robot_arguments(p)
    debug_arguments(p)
    configuration_arguments(p)
    p.set_defaults(func=commands.cmd_debug)

    p = sub.add_parser("robots", help=summary("robots"))
    p.set_defaults(func=commands.cmd_robots)

    return parser


# ------------------------------------------------------------------ running a command
def _say(line: str) -> None:
    """One line on stderr (newlines in a message are joined)."""
    print(" ".join(line.split("\n")), file=sys.stderr, flush=True)


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      file: object = None, line: str | None = None) -> None:
    """A warning as one line, `reljac: warning: ...` (Python's shows the file and source line), each
    text once (the same warning from two places of a command is one)."""
    text = f"reljac: warning: {message}"
    if text not in _warned:
        _warned.add(text)
        _say(text)


_warned: set[str] = set()


def _run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (see the module docstring). Never raises."""
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _quiet_after_an_interrupt
    code = _main(argv)
    if code == 130:
        _forget_the_interrupt()  # (the hook stays: objects Ctrl-C left half made go at exit)
    else:
        sys.unraisablehook = previous_hook
    return code


def _quiet_after_an_interrupt(unraisable: sys.UnraisableHookArgs) -> None:
    """Python's report of an error no one can catch (in a __del__), but none once Ctrl-C came: an
    object the interrupt left half made fails in its finalizer (dask's Future: "no attribute
    '_cleared'", a traceback after "reljac: interrupted", seen once in a CI run)."""
    if not interrupt_received():
        sys.__unraisablehook__(unraisable)


def _forget_the_interrupt() -> None:
    """CPython 3.11 remembers a KeyboardInterrupt raised inside eval() of a string (namedtuple and
    dataclasses build their methods so, while a command loads its modules) as unhandled, even once
    handled here, and a ``python -m reljac.apps.cli`` run then ends killed by SIGINT instead of
    with 130; a successful eval() of a string clears that memory (Python's run_eval_code_obj)."""
    eval("None")


def _main(argv: Sequence[str] | None) -> int:
    try:
        if signal.getsignal(signal.SIGINT) is interrupted_while_starting:
            signal.signal(signal.SIGINT, interrupt_noted)
        try:
            argv = list(sys.argv[1:] if argv is None else argv)
            _printable_output()
            try:
                with warnings.catch_warnings():  # (the caller's way of showing them, back after)
                    _warned.clear()  # (once per command: main() may run again in one process)
                    warnings.showwarning = _one_line_warning
                    code = _run(argv)
            except SystemExit as exc:  # argparse's --help (0)
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            if code != 130 and interrupt_received():  # a Ctrl-C an extension module swallowed
                raise KeyboardInterrupt
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
        except Exception as exc:  # a bug: one line for the user, not a traceback
            if caused_by(exc, KeyboardInterrupt) or interrupt_received():
                # Ctrl-C during an import that turned it into another error (numpy's: ImportError)
                raise KeyboardInterrupt from None
            if caused_by(exc, BrokenPipeError):
                raise BrokenPipeError from None
            _say(f"reljac: error: unexpected {type(exc).__name__}: {exc} (a reljac bug: please report it)")
            return 1
    except BrokenPipeError:
        return _output_closed()
    except KeyboardInterrupt:
        return _interrupted()


def _printable_output() -> None:
    """Paths and names with bytes that are not UTF-8 print as escapes instead of failing."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # absent on some replaced streams
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


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

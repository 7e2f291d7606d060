"""The command line's arguments: number ranges, robot and configuration options, one-line usage errors.

Nothing here loads numpy or Pinocchio at import: ``reljac --help`` and argument mistakes answer at
once. :func:`load_robot` and :func:`configuration` turn parsed options into a robot and a q.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from typing import Any, NoReturn

from ..decimal_text import decimal_integer, decimal_number
from ..exceptions import ReljacError

MAX_SEED = 2**63 - 1
MAX_PRECISION = 16  # digits: float64 has 15-17 significant ones
MAX_COORDINATE = 1e100  # as reljac.robot.MAX_COORDINATE (not imported: the parser loads no numpy)
CHECK_SAMPLES = 10_000  # ~10 ms each on the dual arm
ANALYZE_SAMPLES = 1_000_000  # ~5 us each on the dual arm



class UsageError(Exception):
    """A command-line mistake found by the parser (printed as one line, exit 2)."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: 'reljac: error: ... (see 'reljac jacobian --help')', the
    subcommand named in the help it points to.

    ``own_extras=True`` (a subcommand's parser): arguments it does not know are its own error,
    naming it, rather than the top-level parser's.
    """

    def __init__(self, *args: Any, own_extras: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.own_extras = own_extras
        self._intermixing = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._intermixing:  # (parse_known_intermixed_args' own passes)
            return super().parse_known_args(args, namespace)
        start = None if namespace is None else argparse.Namespace(**vars(namespace))
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self.own_extras:
            # an optional positional after an option (`debug ROBOT --paused FILE`: argparse fills
            # FILE, empty, before it meets the option): the positionals parsed apart from the options
            self._intermixing = True
            try:
                parsed, extras = super().parse_known_intermixed_args(args, start)
            finally:
                self._intermixing = False
            if extras:
                self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:  # argparse's hook
        raise UsageError(f"reljac: error: {message} (see '{self.prog} --help')")


class CommandParser(Parser):
    """A command's parser (``reljac jacobian``, ...): its errors name it ('see reljac jacobian
    --help'), arguments it does not know included (``own_extras``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("own_extras", True)
        super().__init__(*args, **kwargs)


def integer(low: int, high: int) -> Callable[[str], int]:
    """argparse type: an integer in [low, high]."""

    def parse(text: str) -> int:
        try:
            value = decimal_integer(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer in {low}..{high}, got '{text}'") from None
        if not low <= value <= high:
            shown = value if abs(value) < 10**30 else text[:30] + "..."
            raise argparse.ArgumentTypeError(f"must be in {low}..{high}, got {shown}")
        return value

    parse.__name__ = "integer"
    return parse


def coordinate(text: str) -> float:
    """argparse type: a finite number with |x| <= 1e100, written in decimal."""
    try:
        value = decimal_number(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not abs(value) <= MAX_COORDINATE:
        raise argparse.ArgumentTypeError(f"must be finite with |x| <= {MAX_COORDINATE:g}, got '{text}'")
    return value


def seconds(text: str) -> float:
    """argparse type: a duration [s] written in decimal (its range is the caller's check)."""
    try:
        return decimal_number(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got '{text}'") from None


def _folder(text: str) -> str:
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"'{text}' is not a folder")
    return text


def robot_arguments(parser: argparse.ArgumentParser, *, optional: bool = False, lock: bool = True) -> None:
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
                                 "else at its value in the reference configuration (or --q-named's, where the command "
                                 "takes it) (repeatable)")


def robot_options(args: argparse.Namespace) -> dict:
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


def joint_value_text(value: str) -> str | list[str]:
    """The text of one joint's value in --joint and --lock: one number, or several (a floating
    base's x,y,z,qx,qy,qz,qw; commas or spaces) as a list."""
    parts = value.replace(",", " ").split()
    return parts if len(parts) > 1 else value


def load_robot(args):
    from ..robot import Robot

    robot = Robot.load(args.robot, **robot_options(args))
    if getattr(args, "lock", None):
        values: dict = {}
        for item in args.lock:
            name, sep, value = item.partition("=")
            if sep and not value:
                raise ReljacError(f"--lock expects JOINT or JOINT=VALUE, got '{item}'")
            if name in values:
                raise ReljacError(f"--lock: joint '{name}' is given twice; lock each joint once")
            values[name] = joint_value_text(value) if sep else None
        named = getattr(args, "q_named", None)
        robot = robot.locked(values, robot.configuration(named) if named else None)
    return robot


def configuration(robot: Any, args: argparse.Namespace, *, random: bool = True) -> Any:
    """q from --q (nq numbers), --joint NAME=VALUE pairs (the other joints at the reference
    configuration), --q-named NAME (the SRDF's) or --seed (random; not when `random` is False: the
    command's --seed is its sampling seed); default: the robot's reference configuration (neutral
    unless it names one)."""
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
            if name in values:
                raise ReljacError(f"--joint: joint '{name}' is given twice; give each joint one value")
            values[name] = joint_value_text(value)
        return robot.q_from_joint_values(values, start=robot.reference_configuration())
    if random and args.seed is not None:
        return robot.random_configuration(args.seed)
    return robot.reference_configuration()


FULL_MESHES = ("send the robot's mesh files as they are (default: large meshes simplified, drawn in seconds: "
               "reljac.viz.meshes)")


def debug_arguments(parser: argparse.ArgumentParser) -> None:
    """``reljac debug``'s own options (the robot's and the configuration's are shared with view)."""
    parser.add_argument("file", nargs="?", metavar="FILE",
                        help="hierarchy file (TOML, see docs/cli.md); default: the demo's for dual_arm, "
                             "else joint sliders")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address the page is served on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=integer(0, 65535), default=0,
                        help="port of the page, 0..65535 (default 0: a free one)")
    parser.add_argument("--history", type=integer(1, 3600), default=30, metavar="S",
                        help="[s] of the run kept for the timeline and export, 1..3600 (default 30)")
    parser.add_argument("--paused", action="store_true", help="start paused")
    parser.add_argument("--export-dir", default=".", type=_folder, metavar="DIR",
                        help="folder the page's Export writes into (default: the current folder)")
    parser.add_argument("--open", action="store_true", help="open a browser tab")
    parser.add_argument("--no-hold", action="store_true", help="exit right away instead of waiting for Ctrl-C")
    parser.add_argument("--full-meshes", action="store_true", help=FULL_MESHES)


def configuration_arguments(parser: argparse.ArgumentParser, *, random: bool = True) -> None:
    """--q, --joint, --q-named and (with `random`) --seed: one configuration (see :func:`configuration`)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--q", type=coordinate, nargs="+", metavar="X",
                       help=f"configuration: nq numbers, each |X| <= {MAX_COORDINATE:g}")
    group.add_argument("--joint", action="append", metavar="NAME=VALUE",
                       help=f"joint value [rad or m], |VALUE| <= {MAX_COORDINATE:g}, the other joints at the reference "
                            "configuration; a joint of several values (a floating base: x y z qx qy qz qw) takes them "
                            "separated by commas (repeatable)")
    if random:
        group.add_argument("--seed", type=integer(0, MAX_SEED), metavar="S",
                           help="random configuration inside the limits, seed 0..2^63-1")
    group.add_argument("--q-named", metavar="NAME", help="a named configuration of the robot's SRDF")


def _sole(text: str) -> tuple[float, float]:
    """argparse type: 'LxW', a rectangle's length and width [m], both positive and finite."""
    parts = text.lower().split("x")
    try:
        sizes = tuple(decimal_number(p) for p in parts)
    except ValueError:
        sizes = ()
    if len(sizes) != 2 or not all(math.isfinite(x) and 0 < x <= MAX_COORDINATE for x in sizes):
        raise argparse.ArgumentTypeError(f"expected LENGTHxWIDTH in metres, two positive numbers such as 0.2x0.1, "
                                         f"got '{text}'")
    return sizes[0], sizes[1]


def _margin(text: str) -> float:
    """argparse type: a finite distance >= 0 [m]."""
    value = coordinate(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a distance >= 0 [m], got '{text}'")
    return value


def support_arguments(parser: argparse.ArgumentParser) -> None:
    """``reljac map``'s balance options: --support FRAMES, --sole LxW, --margin M."""
    parser.add_argument("--support", metavar="FRAMES",
                        help="keep only samples whose centre of mass is inside the support region of these "
                             "contact frames (comma-separated, e.g. left_sole_link,right_sole_link); a "
                             "floating base is held at the reference configuration")
    parser.add_argument("--sole", type=_sole, metavar="LxW",
                        help="with --support: each contact is a LENGTHxWIDTH rectangle [m], 0 < L, W <= 1e100, "
                             "centred on its frame's origin in its x-y plane (default: the frame's origin, a point "
                             "contact)")
    parser.add_argument("--margin", type=_margin, metavar="M",
                        help="with --support: distance [m] kept from the region's edges, 0 <= M <= 1e100 (default 0)")


def place_arguments(parser: argparse.ArgumentParser) -> None:
    """``reljac place``'s own options (see :mod:`reljac.apps.place`)."""
    parser.add_argument("taskfile", metavar="TASKFILE", help="the task (TOML: object poses, hands, obstacles, "
                        "floor; see docs/cli.md)")
    parser.add_argument("--maps", metavar="FILE", help="pose maps file (.npz): read when it exists, else built and "
                        "saved there (default: the task file's [maps] file, or built each run)")
    parser.add_argument("--samples", type=integer(1, 10**12), metavar="N",
                        help="samples per hand when the maps are built, 1..10^12 (default: the file's, else 2,000,000)")
    parser.add_argument("--workers", type=integer(1, 4096), help="threads or processes, 1..4096 (default: all cores)")
    parser.add_argument("--scheduler", metavar="URL", help="build the maps on Dask: 'local' or tcp://HOST:8786")
    parser.add_argument("--candidates", type=integer(1, 1000), metavar="N",
                        help="feasible placements wanted from the exact check, 1..1000 (default: the file's, else 3)")
    parser.add_argument("--refine", action="store_true",
                        help="decide the poses the maps are unsure of by a short search per hand (the floor map)")
    parser.add_argument("--view", action="store_true", help="show the floor, candidates and best placement in the "
                        "browser")
    parser.add_argument("--open", action="store_true", help="with --view: open a browser tab")
    parser.add_argument("--host", help="with --view: address the page listens on (default 127.0.0.1)")
    parser.add_argument("--no-hold", action="store_true", help="with --view: exit right away")


def seed_argument(parser: argparse.ArgumentParser, *, metavar: str | None = "S", default: int | None = 0) -> None:
    """``--seed S``: the random stream of a sampling command, 0..2^63-1 (default 0; `default`
    None: the command tells an absent --seed from 0 and applies 0 itself)."""
    parser.add_argument("--seed", type=integer(0, MAX_SEED), default=default, metavar=metavar,
                        help="0..2^63-1 (default 0)")


def json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document on stdout instead of text (numbers; null for NaN and inf)")


def progress_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar on stderr (default: only when stderr is a terminal and CI is unset)")




# ------------------------------------------------------------------ reljac demo
DEFAULT_CROSSING = 4.0  # [s] of the dual-arm demo's crossing phase
BROWSER_WAIT = 10.0  # [s] at most that `reljac demo` waits for a browser page, from a terminal
DEMO_DESCRIPTION = "task-priority IK demos"
DEMO_EPILOG = ("From an interactive terminal the demo waits for a browser page before moving and keeps "
               "serving the last scene until Ctrl-C; in CI and pipes it does neither.")


def demo_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``reljac demo`` (see :mod:`reljac.apps.demo`)."""
    parser.add_argument("demo", choices=["dual-arm", "hand", "talos-balance"],
                        help="dual-arm: two arms carry a box; hand: pinches; talos-balance: Talos (legs free) "
                             "carries a box and reaches until its balance stops it (needs example-robot-data)")
    parser.add_argument("--duration", type=seconds, default=None, metavar="S",
                        help="[s] run length, 0 < S <= 3600 (default: 10 for dual-arm, 6 for hand, "
                             "4 for talos-balance); for dual-arm, the carry's length (the crossing comes after it)")
    parser.add_argument("--crossing", type=seconds, default=None, metavar="S",
                        help="dual-arm only: [s] 0..3600 of crossing the arms with collision avoidance after "
                             "the carry (default 4; 0: none)")
    parser.add_argument("--headless", action="store_true", help="no viewer, no real-time pacing")
    parser.add_argument("--loop", action="store_true", help="dual-arm only: repeat until Ctrl-C")
    parser.add_argument("--dt", type=seconds, default=0.01, help="[s] control period, 1e-4 <= DT <= 0.1 (default 0.01)")
    parser.add_argument("--no-wait", action="store_true",
                        help=f"start moving at once (default from a terminal: wait up to {BROWSER_WAIT:g} s "
                             "for a browser page)")
    parser.add_argument("--exit", action="store_true",
                        help="exit when the motion ends (default from a terminal: keep serving until Ctrl-C)")
    parser.add_argument("--record", metavar="FILE", help="save t, q, targets and errors to FILE (.npz or .json)")
    parser.add_argument("--plot", metavar="FILE", help="plot the tracking errors to FILE (.png, .pdf, .svg; "
                        "needs matplotlib: pip install matplotlib)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="with --headless: progress bar on stderr (default: only when stderr is a terminal "
                             "and CI is unset)")


def check_demo_arguments(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """The ranges of ``reljac demo``'s numbers; a mistake is reported through `parser`."""
    if args.duration is not None and not (math.isfinite(args.duration) and 0 < args.duration <= 3600):
        parser.error(f"--duration must be in (0, 3600] s, got {args.duration}")
    if args.crossing is not None and not (math.isfinite(args.crossing) and 0 <= args.crossing <= 3600):
        parser.error(f"--crossing must be in [0, 3600] s, got {args.crossing}")
    if args.crossing is not None and args.demo != "dual-arm":
        parser.error("--crossing is for the dual-arm demo only")
    if not (math.isfinite(args.dt) and 1e-4 <= args.dt <= 0.1):
        parser.error(f"--dt must be in [1e-4, 0.1] s, got {args.dt}")
    if args.loop and args.demo != "dual-arm":
        parser.error("--loop is for the dual-arm demo only")
    if args.loop and args.exit:
        parser.error("--loop repeats until Ctrl-C and --exit exits when the motion ends: give one of them")
    if args.duration is not None and args.duration < args.dt:
        parser.error(f"--duration {args.duration:g} s is shorter than one control period (--dt {args.dt:g} s): "
                     "no step would run")

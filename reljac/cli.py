"""The ``reljac`` command line: argument parsing and printing, no math.

    reljac info ROBOT                      DoF, joints with limits, frames as a tree
    reljac jacobian ROBOT A B [...]        labelled relative Jacobian J_ab at a configuration
    reljac check ROBOT [...]               Pinocchio layer vs the in-house reference kinematics
    reljac bench [jacobian|reference|ik|map] timing tables
    reljac view ROBOT [--frames ...]       show a robot in the browser
    reljac demo {dual-arm,hand}            the IK demos
    reljac analyze ROBOT A B               relative manipulability over the workspace
    reljac map ROBOT A B --samples N ...   capability map of b in a (threads or Dask), saved as .npz

ROBOT is a bundled robot name (see ``reljac info --list``) or a path to a URDF file.
"""

from __future__ import annotations

import argparse
import os
import sys

# Small matrices: BLAS threads only add overhead (and noise to `reljac bench`). Set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from typing import Sequence

import numpy as np

from .exceptions import ReljacError


def _count(minimum: int):
    """argparse type: an integer >= minimum."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got '{text}'") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


def _robot_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("robot", help="bundled robot name or path to a URDF file")
    parser.add_argument("--floating-base", action="store_true", help="add a free-flyer root joint")
    parser.add_argument(
        "--package-dir", action="append", default=None, metavar="DIR",
        help="folder searched for package:// meshes (repeatable)",
    )
    parser.add_argument("--no-mimic", action="store_true", help="load <mimic> joints as independent joints")


def _load_robot(args):
    from .robot import Robot

    kwargs = {}
    if args.floating_base:
        kwargs["floating_base"] = True
    if args.package_dir:
        kwargs["package_dirs"] = args.package_dir
    if getattr(args, "no_mimic", False):
        kwargs["mimic"] = False
    return Robot.load(args.robot, **kwargs)


def _configuration(robot, args) -> np.ndarray:
    """q from --q (nq numbers), --joint NAME=VALUE pairs, or --seed (random); default neutral."""
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
    return robot.neutral()


def _configuration_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--q", type=float, nargs="+", metavar="X", help="configuration: nq numbers")
    group.add_argument("--joint", action="append", metavar="NAME=VALUE", help="joint value (repeatable)")
    group.add_argument("--seed", type=_count(0), help="random configuration inside the limits (seed >= 0)")


# ------------------------------------------------------------------ info
def cmd_info(args) -> int:
    from .robot import bundled_robots
    from .report import robot_summary

    if args.list or args.robot is None:
        print("bundled robots: " + ", ".join(bundled_robots()))
        return 0
    print(robot_summary(_load_robot(args)))
    return 0


# ------------------------------------------------------------------ jacobian
def cmd_jacobian(args) -> int:
    from .relative import Kinematics
    from .report import format_matrix, format_placement, velocity_labels

    robot = _load_robot(args)
    q = _configuration(robot, args)
    kin = Kinematics(robot, q)
    J = kin.relative_jacobian(args.frame_a, args.frame_b, expressed_in=args.expressed_in)
    T_ab = kin.relative_placement(args.frame_a, args.frame_b)
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


# ------------------------------------------------------------------ bench
def cmd_bench(args) -> int:
    from . import bench

    return bench.main(args.what, quick=args.quick)


# ------------------------------------------------------------------ check
def cmd_check(args) -> int:
    from .check import check_urdf

    pairs = [tuple(args.frames)] if args.frames else None
    report = check_urdf(args.robot, floating_base=args.floating_base, package_dirs=args.package_dir,
                        samples=args.samples, seed=args.seed, pairs=pairs)
    print(report.format())
    return 0 if report.ok else 1


# ------------------------------------------------------------------ analyze
def cmd_analyze(args) -> int:
    from .analysis import format_workspace_summary, workspace_summary

    robot = _load_robot(args)
    summary = workspace_summary(robot, args.frame_a, args.frame_b, args.samples, args.seed, part=args.part)
    print(format_workspace_summary(summary))
    return 0


# ------------------------------------------------------------------ map
def cmd_map(args) -> int:
    from .apps.capability import make_map

    make_map(_load_robot(args), args.frame_a, args.frame_b, samples=args.samples, voxel=args.voxel, out=args.out,
             seed=args.seed, directions=args.directions, part=args.part, chunk=args.chunk, workers=args.workers,
             scheduler=args.scheduler, progress=not args.no_progress)
    return 0


# ------------------------------------------------------------------ view
def cmd_view(args) -> int:
    from .apps.view import view

    robot = _load_robot(args)
    q = _configuration(robot, args)
    view(robot, args.frames or [], q, hold=not args.no_hold, open=args.open, zmq_url=args.zmq_url,
         capability_map=args.map, color_by=args.color_by)
    return 0


# ------------------------------------------------------------------ parser
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reljac", description="Relative Jacobians, task-priority IK and browser views for URDF robots."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("info", help="DoF, joints with limits, frames as a tree")
    p.add_argument("robot", nargs="?", help="bundled robot name or path to a URDF file")
    p.add_argument("--list", action="store_true", help="list the bundled robots")
    p.add_argument("--floating-base", action="store_true", help="add a free-flyer root joint")
    p.add_argument("--package-dir", action="append", default=None, metavar="DIR")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("jacobian", help="labelled relative Jacobian J_ab at a configuration")
    _robot_arguments(p)
    p.add_argument("frame_a", help="frame a (the one b is measured in), or 'universe' for the world")
    p.add_argument("frame_b", help="frame b")
    p.add_argument("--expressed-in", default="a", metavar="F", help="'a' (default), 'b', 'world' or a frame name")
    p.add_argument("--precision", type=_count(0), default=4, help="digits printed (default 4)")
    _configuration_arguments(p)
    p.set_defaults(func=cmd_jacobian)

    p = sub.add_parser("bench", help="timing tables (median of many runs, ratios to Pinocchio)")
    p.add_argument("what", nargs="?", default="all", choices=["all", "jacobian", "reference", "ik", "map"])
    p.add_argument("--quick", action="store_true", help="fewer repetitions (for smoke tests)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("check", help="compare the Pinocchio layer with the in-house reference kinematics")
    _robot_arguments(p)
    p.add_argument("--frames", nargs=2, metavar=("A", "B"), help="check this pair only (default: all pairs)")
    p.add_argument("--samples", type=_count(1), default=50, help="random configurations (default 50)")
    p.add_argument("--seed", type=_count(0), default=0)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("analyze", help="relative manipulability of b in a over random configurations")
    _robot_arguments(p)
    p.add_argument("frame_a")
    p.add_argument("frame_b")
    p.add_argument("--samples", type=_count(1), default=1000, help="random configurations (default 1000)")
    p.add_argument("--seed", type=_count(0), default=0)
    p.add_argument("--part", default="position", choices=["position", "orientation", "full"])
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("map", help="capability map of frame b in frame a over random configurations (.npz)")
    _robot_arguments(p)
    p.add_argument("frame_a", help="the map's frame (voxels are in a)")
    p.add_argument("frame_b", help="the frame whose origin is binned")
    p.add_argument("--samples", type=_count(1), required=True, help="random configurations (<= 10**12)")
    p.add_argument("--voxel", type=float, required=True, help="voxel edge [m]")
    p.add_argument("--out", required=True, metavar="FILE", help="output file (.npz)")
    p.add_argument("--seed", type=_count(0), default=0)
    p.add_argument("--directions", type=_count(1), default=32, help="approach directions, 1-64 (default 32)")
    p.add_argument("--part", default="position", help="rows of J_ab rated by the manipulability: position "
                   "(default), orientation, full, or rows such as vx,vy")
    p.add_argument("--chunk", type=_count(1), help="samples per task (the map does not depend on it)")
    p.add_argument("--workers", type=_count(1), help="local threads or processes (default: all cores)")
    p.add_argument("--scheduler", metavar="URL", help="'local' (Dask LocalCluster) or a Dask address tcp://HOST:8786")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_map)

    sub.add_parser("demo", help="IK demos: reljac demo {dual-arm,hand} [--duration S] [--headless] [--loop] "
                   "[--no-wait] [--exit] [--record FILE] [--plot FILE]", add_help=False)

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

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["demo"]:  # the demos parse their own options
        try:
            from .demo import main as demo_main

            return demo_main(argv[1:])
        except ReljacError as exc:
            print(f"reljac: error: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ReljacError as exc:
        print(f"reljac: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug: one line for the user, not a traceback
        print(f"reljac: error: unexpected {type(exc).__name__}: {exc} (a reljac bug: please report it)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

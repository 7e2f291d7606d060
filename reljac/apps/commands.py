"""The commands of ``reljac`` (see :mod:`reljac.apps.cli`): each takes the parsed arguments, prints,
and returns an exit code. Library modules are imported inside each command, so that parsing the
command line loads no numpy or Pinocchio."""

from __future__ import annotations

import argparse
from contextlib import AbstractContextManager
from typing import Any

from .arguments import UsageError, configuration, load_robot, robot_options


def cmd_info(args: argparse.Namespace) -> int:
    from ..robot import bundled_robots
    from .report import robot_summary

    _check_listing(args)
    if args.json:
        return _info_json(args)
    if args.list or args.robot is None:
        print("bundled robots: " + ", ".join(bundled_robots()))
        print(_ik_backend_line())
        return 0
    title, _, rest = robot_summary(load_robot(args)).partition("\n")
    print(title)
    print("  " + _ik_backend_line())
    print(rest)
    return 0


def _check_listing(args: argparse.Namespace) -> None:
    """``info --list`` (or no ROBOT) lists the bundled robots: a robot or robot options given with
    it would be ignored, so they are refused."""
    given = [flag for flag, value in (("--floating-base", args.floating_base), ("--no-mimic", args.no_mimic),
                                      ("--package-dir", args.package_dir), ("--srdf", getattr(args, "srdf", None)),
                                      ("--lock", getattr(args, "lock", None))) if value]
    if args.list and args.robot is not None:
        raise UsageError(f"reljac: error: --list lists the bundled robots: give it no ROBOT (got '{args.robot}'), "
                         "or leave --list out to describe that robot")
    if (args.list or args.robot is None) and given:
        raise UsageError(f"reljac: error: {', '.join(given)} describe{'s' if len(given) == 1 else ''} how to load "
                         "a robot: give a ROBOT with it")


def _info_json(args: argparse.Namespace) -> int:
    """``reljac info [ROBOT] --json``: {bundled_robots, ik_solver, compiled_core_built[, robot keys]}."""
    from ..ik.solvers import backend
    from ..robot import bundled_robots
    from .report import json_document, robot_dict

    document = {"bundled_robots": bundled_robots(), "ik_solver": backend.default_backend(),
                "compiled_core_built": backend.compiled_available()}
    if not args.list and args.robot is not None:
        document.update(robot_dict(load_robot(args)))
    print(json_document(document))
    return 0


def _ik_backend_line() -> str:
    """Which solver the IK controller runs on here."""
    from ..ik.solvers import backend

    name = backend.default_backend()
    if name == "compiled":
        return "IK solver: compiled (reljac.ik._core, C++)"
    built = "built" if backend.compiled_available() else "not built"
    return f"IK solver: python (the compiled core is {built})"


def _keyword_shadows_a_frame(kin: Any, expressed_in: str) -> None:
    """A warning where --expressed-in is a keyword (a, b, world) that also names a frame of the
    robot (`kin`'s): the keyword wins (an adversarial pass: a robot's link 'b' was silently not
    used). Not for a frame 'world' whose axes are the world's (UR's world link: the same J)."""
    import warnings

    import numpy as np

    from ..exceptions import ReljacWarning
    from ..relative import EXPRESSED_IN_KEYWORDS

    robot = kin.robot
    frames = [i for i, f in enumerate(robot.model.frames) if f.name == expressed_in]
    if expressed_in == "world":
        frames = [i for i in frames if not np.allclose(kin.placement(i).rotation, np.eye(3), rtol=0.0, atol=1e-12)]
    if expressed_in in EXPRESSED_IN_KEYWORDS and frames:
        axes = {"a": "frame A's axes", "b": "frame B's axes", "world": "the world's axes"}[expressed_in]
        warnings.warn(ReljacWarning(
            f"--expressed-in {expressed_in} is the keyword ({axes}); robot '{robot.name}' also has a frame "
            f"named '{expressed_in}': write link:{expressed_in} or joint:{expressed_in} to mean it"), stacklevel=2)


def cmd_jacobian(args: argparse.Namespace) -> int:
    import numpy as np

    from ..joint_space import velocity_labels
    from ..relative import Kinematics
    from .report import format_matrix, format_placement

    robot = load_robot(args)
    q = configuration(robot, args)
    kin = Kinematics(robot, q)
    if args.expressed_in is not None:  # (given: the default "a" warns of nothing)
        _keyword_shadows_a_frame(kin, args.expressed_in)
    expressed_in = "a" if args.expressed_in is None else args.expressed_in
    J = kin.relative_jacobian(args.frame_a, args.frame_b, expressed_in=expressed_in)
    T_ab = kin.relative_placement(args.frame_a, args.frame_b)
    if args.json:
        from .report import jacobian_dict, json_document

        print(json_document(jacobian_dict(robot, q, args.frame_a, args.frame_b, expressed_in, T_ab, J)))
        return 0
    np.set_printoptions(precision=args.precision, suppress=True, linewidth=200)
    print(f"robot {robot.name}: nq={robot.nq}, nv={robot.nv}")
    print(f"q = {np.array2string(q, precision=args.precision)}")
    print(f"T_ab (pose of '{args.frame_b}' in '{args.frame_a}'):")
    print(format_placement(T_ab, args.precision))
    print(
        f"J_ab: motion of '{args.frame_b}' measured in '{args.frame_a}', expressed in "
        f"'{expressed_in}'; [d/dt p_ab; w_ab] = J v\n"
        "(printed transposed: one line per column of J, i.e. per velocity index)"
    )
    rows = ["vx", "vy", "vz", "wx", "wy", "wz"]
    print(format_matrix(J, rows, velocity_labels(robot), args.precision))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from . import bench
    from .report import hook

    if args.peers and args.what not in ("ik", "solve", "all"):
        raise UsageError(f"reljac: error: --peers compares IK libraries: use it with 'ik', 'solve' or 'all', "
                         f"not '{args.what}'")
    if args.collision and args.what != "solve":
        raise UsageError(f"reljac: error: --collision is a protocol of 'solve', not of '{args.what}'")
    units = bench.units(args.what, quick=args.quick, peers=args.peers, collision=args.collision)
    with _bar(args, units, f"bench {args.what}", "unit") as bar:
        return bench.main(args.what, quick=args.quick, as_json=args.json, progress=hook(bar), peers=args.peers,
                          collision=args.collision)


def cmd_check(args: argparse.Namespace) -> int:
    from .check import check_urdf
    from .report import hook, json_document

    pairs = [tuple(args.frames)] if args.frames else None
    with _bar(args, args.samples, "check", "sample") as bar:
        report = check_urdf(args.robot, **robot_options(args), samples=args.samples, seed=args.seed, pairs=pairs,
                            progress=hook(bar))
    print(json_document(report.to_dict()) if args.json else report.format())
    return 0 if report.ok else 1


def cmd_analyze(args: argparse.Namespace) -> int:
    from ..workspace import format_workspace_summary, workspace_summary
    from .report import hook, json_document

    com = args.com or args.com_frame is not None
    if args.frame_b is None and (args.frame_a is not None or not com):
        raise UsageError("reljac: error: give frames A and B (the relative task), or --com for the centre "
                         "of mass alone (see 'reljac analyze --help')")
    if not com and (args.q is not None or args.joint or args.q_named is not None):
        raise UsageError("reljac: error: --q, --joint and --q-named choose the configuration of --com; "
                         "the manipulability is over random configurations (see 'reljac analyze --help')")
    if args.frame_a is None and (args.samples is not None or args.seed is not None or args.part is not None):
        raise UsageError("reljac: error: --samples, --seed and --part set the manipulability of frames A and B "
                         "over random configurations; --com alone takes none of them (see 'reljac analyze --help')")
    samples, seed, part = args.samples or 1000, args.seed or 0, args.part or "position"
    robot = load_robot(args)
    document: dict = {}
    text = []
    if com:
        from .com_report import com_dict, format_com

        frame = "universe" if args.com_frame is None else robot.model.frames[robot.frame_id(args.com_frame)].name
        document["com"] = com_dict(robot, configuration(robot, args, random=False), frame)
        text.append(format_com(document["com"]))
    if args.frame_a is not None:
        with _bar(args, samples, "analyze", "sample") as bar:
            summary = workspace_summary(robot, args.frame_a, args.frame_b, samples, seed, part=part,
                                        progress=hook(bar))
        document = {**summary.to_dict(), **document}
        text.insert(0, format_workspace_summary(summary))
    print(json_document({"robot": robot.name, **document}) if args.json else "\n\n".join(text))
    return 0


# ------------------------------------------------------------------ map
def cmd_map(args: argparse.Namespace) -> int:
    from .capability import make_map, map_support

    if args.support is None and (args.sole is not None or args.margin is not None):
        raise UsageError("reljac: error: --sole and --margin describe the contacts of --support: give --support "
                         "FRAMES too (see 'reljac map --help')")
    robot = load_robot(args)
    support = None if args.support is None else map_support(args.support, args.sole, args.margin or 0.0)
    make_map(robot, args.frame_a, args.frame_b, samples=args.samples, voxel=args.voxel, out=args.out,
             seed=args.seed, directions=args.directions, part=args.part, chunk=args.chunk, workers=args.workers,
             scheduler=args.scheduler, progress=not args.no_progress, as_json=args.json, support=support)
    return 0


def cmd_place(args: argparse.Namespace) -> int:
    from .place import run

    return run(args)


# ------------------------------------------------------------------ view
def cmd_view(args: argparse.Namespace) -> int:
    from .view import view

    robot = load_robot(args)
    q = configuration(robot, args)
    view(robot, args.frames or [], q, hold=not args.no_hold, open=args.open, zmq_url=args.zmq_url,
         host=args.host, capability_map=args.map, color_by=args.color_by,
         meshes="full" if args.full_meshes else "simplified")
    return 0


def cmd_debug(args: argparse.Namespace) -> int:
    from .debug import run

    return run(load_robot(args), args)


def _bar(args: argparse.Namespace, total: int, what: str, unit: str) -> AbstractContextManager[Any]:
    """A progress bar on stderr for a long command (see :func:`reljac.apps.report.progress_wanted`)."""
    from .report import progress_bar, progress_wanted

    asked = args.progress
    return progress_bar(total, what, show=progress_wanted(asked), unit=unit, delay=0.0 if asked else 0.5)


def _has_floating_joint(urdf: Any) -> bool:
    """The URDF declares a floating joint of its own (tree30's root: reljac adds none then); read as
    reljac reads URDFs (a commented-out joint does not count; a file it cannot read: False)."""
    from ..exceptions import URDFError
    from ..urdf_files import parse_xml, read_urdf

    try:
        root = parse_xml(read_urdf(urdf), f"'{urdf}'")
    except URDFError:
        return False
    return any(joint.get("type") == "floating" for joint in root.findall("joint"))


def cmd_robots(args: argparse.Namespace) -> int:
    from .. import robots

    names = robots.available_robots()
    print(f"{'NAME':<28}{'FROM':<20}{'BASE':<10}{'SRDF':<6}REFERENCE")
    for name in names:
        source = robots.resolve(name)
        floating = source.floating_base or _has_floating_joint(source.urdf)
        print(f"{name:<28}{source.origin:<20}{'floating' if floating else 'fixed':<10}"
              f"{'yes' if source.srdf else '-':<6}{source.posture or '-'}")
    root = robots.example_robot_data_dir()
    if root is None:
        print(f"\nexample-robot-data is not installed: pip install example-robot-data for "
              f"{len(robots.EXAMPLE_ROBOTS)} more robots")
    else:
        print(f"\n{len(names)} robots; example-robot-data's files: {root}")
    return 0




def cmd_demo(args: argparse.Namespace, *, parser: argparse.ArgumentParser) -> int:
    from .demo import command

    return command(args, parser)

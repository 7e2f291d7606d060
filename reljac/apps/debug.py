"""``reljac debug ROBOT [FILE]``: debug a task hierarchy live in the browser.

FILE is a hierarchy file (:mod:`reljac.apps.hierarchy_file`); without one, ``dual_arm`` opens
the dual-arm demo's hierarchy (``dual_arm_debug.toml``) and any other robot gets joint sliders.
The page (:mod:`reljac.viz.debugger`) is served on loopback unless ``--host`` says otherwise;
Export writes the recording in ``reljac demo --record``'s format (:mod:`reljac.apps.recording`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..program import ctrl_c_ends_the_wait
from ..robot import Robot
from ..viz import Debugger
from .arguments import configuration
from .hierarchy_file import DEMO_FILE, read_hierarchy
from .recording import RunLog
from .view import wait_for_interrupt

DEMO_ROBOT = "dual_arm"
STARTS = ("q", "joint", "seed", "q_named")  # the options that choose the first configuration


def hierarchy_path(robot_name: str, file: str | None) -> Path | None:
    """The hierarchy file to read: `file`, else the demo's for dual_arm, else None (sliders)."""
    if file is not None:
        return Path(file)
    return DEMO_FILE if robot_name == DEMO_ROBOT else None


def new_run_log(joint_names: list[str], dt: float, tasks: list) -> RunLog:
    """The log Export fills (``reljac demo --record``'s format, demo name "debug")."""
    return RunLog("debug", joint_names, dt, tasks)


def start(robot: Robot, args: argparse.Namespace, **kwargs: Any) -> Debugger:
    """The :class:`reljac.viz.Debugger` the command line asks for (running)."""
    chosen = any(getattr(args, key, None) not in (None, [], False) for key in STARTS)
    q = configuration(robot, args) if chosen else None
    path = hierarchy_path(args.robot, args.file)
    controller = None
    if path is not None:
        hierarchy = read_hierarchy(robot, path, q=q)  # the file may lock joints: its robot and q
        robot, controller, q = hierarchy.robot, hierarchy.controller, hierarchy.q
    return Debugger(controller, q, robot=robot, history=args.history, host=args.host, port=args.port,
                    paused=args.paused, new_log=new_run_log, export_dir=args.export_dir, open=args.open,
                    meshes="full" if getattr(args, "full_meshes", False) else "simplified", **kwargs)


def run(robot: Robot, args: argparse.Namespace) -> int:
    debugger = start(robot, args)
    try:
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            print(f"reljac: warning: the page is served on {args.host}: anyone who reaches it can move the robot",
                  file=sys.stderr)
        if not args.no_hold:
            with ctrl_c_ends_the_wait():
                wait_for_interrupt("Ctrl-C to stop")
    finally:
        debugger.close()
    return 0

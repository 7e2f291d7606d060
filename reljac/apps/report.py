"""What the command line prints: text tables, JSON documents and progress bars.

* Plain text: robots (:func:`robot_summary`), matrices, placements and tables.
* JSON (``--json``): :func:`json_document` turns dicts of numbers, numpy arrays and scalars into
  one JSON document with numbers (never formatted strings); NaN and infinities become ``null``.
  :func:`robot_dict` and :func:`jacobian_dict` are the documents of ``reljac info`` and
  ``reljac jacobian``.
* Progress bars (:func:`progress_bar`): tqdm bars on stderr, shown when stderr is a terminal
  (and the ``CI`` variable is unset) or when asked (:func:`reljac.progress.progress_wanted`, the
  library's rule too); erased when they close, so that an error or interruption that stops a
  command stays one line.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pinocchio as pin

from ..joint_space import velocity_labels
from ..json_values import json_ready
from ..program import stop_if_interrupted
from ..progress import progress_wanted as progress_wanted  # the commands' rule is the library's
from ..robot import Robot
from ..urdf_files import shown


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A left/right aligned text table: strings left, numbers right."""
    cells = [[str(h) for h in headers]] + [[_cell(x) for x in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], (int, float, np.floating)) for row in rows) for i in range(len(headers))]

    def line(row):
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(row, widths, numeric, strict=True))

    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in cells[1:]])


def _cell(x: object) -> str:
    if isinstance(x, (float, np.floating)):
        if x == 0 or 1e-3 <= abs(x) < 1e5:
            return f"{x:.3f}" if abs(x) < 100 else f"{x:.1f}"
        return f"{x:.2e}"
    return str(x)


def format_matrix(M: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], precision: int = 4) -> str:
    """A matrix printed transposed when it is wide: one line per column label (joint)."""
    width = precision + 7
    name_width = max(len(c) for c in col_labels) if len(col_labels) else 0
    lines = [" " * name_width + "".join(r.rjust(width) for r in row_labels)]
    for j, label in enumerate(col_labels):
        lines.append(label.ljust(name_width) + "".join(f"{M[i, j]:{width}.{precision}f}" for i in range(M.shape[0])))
    return "\n".join(lines)


def format_placement(T: pin.SE3, precision: int = 4) -> str:
    rpy = pin.rpy.matrixToRpy(T.rotation)
    return (
        f"  translation [m]: {np.array2string(T.translation, precision=precision, suppress_small=True)}\n"
        f"  rpy [rad]:       {np.array2string(rpy, precision=precision, suppress_small=True)}"
    )


MAX_INDENT = 30  # levels of the frame tree indented; deeper frames show their depth instead


def robot_summary(robot: Robot) -> str:
    """DoF, joints with limits, and the frame tree of a robot."""
    model = robot.model
    lines = [
        f"robot '{robot.name}'" + (f" from {shown(robot.urdf_path)}" if robot.urdf_path else ""),
        f"  nq = {robot.nq}, nv = {robot.nv}, joints with DoF = {len(robot.joint_names)}, frames = {model.nframes}",
        "",
        "joints (q order):",
    ]
    rows = []
    for name in robot.joint_names:
        j = model.getJointId(name)
        joint = model.joints[j]
        kind = joint.shortname().replace("JointModel", "")
        if joint.nq == 1:
            lo, hi = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
            limits = f"[{lo:.4g}, {hi:.4g}]"
        else:
            limits = "(multi-DoF / continuous)"
        vel = model.velocityLimit[joint.idx_v : joint.idx_v + joint.nv].copy()
        vel[vel >= np.finfo(float).max] = np.inf  # Pinocchio's "no limit" (a free flyer's), as JSON's null and a URDF's
        rows.append((name, kind, f"{joint.idx_q}:{joint.idx_q + joint.nq}", f"{joint.idx_v}:{joint.idx_v + joint.nv}",
                     limits, np.array2string(vel, precision=3)))
    lines.append(format_table(["joint", "type", "q", "v", "position limits", "velocity limits"], rows))
    for follower, leader in zip(model.mimicking_joints, model.mimicked_joints, strict=True):
        m = model.joints[follower].extract()
        lines.append(f"  mimic: {model.names[follower]} = {m.scaling:g} * {model.names[leader]} + {m.offset:g}")
    lines += ["", "frames (tree):"]
    children: dict[int, list[int]] = {}
    for i, frame in enumerate(model.frames):
        if i:
            children.setdefault(frame.parentFrame, []).append(i)
    stack = [(0, 1)]  # depth first, children in model order; no recursion (chains of any length)
    while stack:
        i, depth = stack.pop()
        frame = model.frames[i]
        kind = str(frame.type).split(".")[-1]
        indent = "  " * depth if depth <= MAX_INDENT else "  " * MAX_INDENT + f"[depth {depth}] "
        lines.append(f"{indent}{frame.name} ({kind})")
        stack.extend((c, depth + 1) for c in reversed(children.get(i, [])))
    return "\n".join(lines)


# ---------------------------------------------------------------------------- JSON
def json_document(value: Any) -> str:
    """One JSON document on one line (keys in the order given) of
    :func:`~reljac.json_values.json_ready` (`value`)."""
    return json.dumps(json_ready(value), allow_nan=False)


def _bound(limit: float) -> float | None:
    """A limit, or None when it is unbounded (Pinocchio writes +-1.8e308, the largest float, for none)."""
    return None if not abs(limit) < np.finfo(float).max else float(limit)


def robot_dict(robot: Robot) -> dict[str, Any]:
    """What ``reljac info ROBOT --json`` prints (see the command-line docs for every key).

    Keys: ``robot``, ``urdf`` (path or None), ``nq``, ``nv``, ``joints`` (q order: name, type,
    q and v index ranges [start, stop), ``lower`` and ``upper`` position limits [rad or m] of
    one-coordinate joints (None for others and for unbounded limits), ``velocity_limits``
    [rad/s or m/s] (nv_joint,), None where unbounded), ``mimic`` (follower, leader, scaling, offset) and ``frames``
    (model order: name, type, parent frame (None for the world), parent joint).
    """
    model = robot.model
    joints = []
    for name in robot.joint_names:
        joint = model.joints[model.getJointId(name)]
        one = joint.nq == 1
        joints.append({
            "name": name,
            "type": joint.shortname().replace("JointModel", ""),
            "q": [joint.idx_q, joint.idx_q + joint.nq],
            "v": [joint.idx_v, joint.idx_v + joint.nv],
            "lower": _bound(model.lowerPositionLimit[joint.idx_q]) if one else None,
            "upper": _bound(model.upperPositionLimit[joint.idx_q]) if one else None,
            "velocity_limits": [_bound(x) for x in model.velocityLimit[joint.idx_v : joint.idx_v + joint.nv]],
        })
    mimic = []
    for follower, leader in zip(model.mimicking_joints, model.mimicked_joints, strict=True):
        m = model.joints[follower].extract()
        mimic.append({"follower": model.names[follower], "leader": model.names[leader],
                      "scaling": m.scaling, "offset": m.offset})
    frames = [{"name": f.name, "type": str(f.type).split(".")[-1],
               "parent": model.frames[f.parentFrame].name if i else None,
               "joint": model.names[f.parentJoint]}
              for i, f in enumerate(model.frames)]
    return {"robot": robot.name, "urdf": str(robot.urdf_path) if robot.urdf_path else None,
            "nq": robot.nq, "nv": robot.nv, "joints": joints, "mimic": mimic, "frames": frames}


def jacobian_dict(robot: Robot, q: np.ndarray, frame_a: str, frame_b: str, expressed_in: str,
                  T_ab: pin.SE3, J: np.ndarray) -> dict[str, Any]:
    """What ``reljac jacobian ... --json`` prints: the configuration, T_ab and J_ab.

    Keys: ``robot``, ``nq``, ``nv``, ``q`` (nq,), ``frame_a``, ``frame_b``, ``expressed_in``,
    ``T_ab`` (4, 4) homogeneous pose of b in a [m], ``J`` (6, nv) with rows ``rows``
    (vx, vy, vz [m/s], wx, wy, wz [rad/s] per unit of v) and columns ``columns`` (one label per
    velocity index: the joint name, with [k] for multi-DoF joints).
    """
    return {"robot": robot.name, "nq": robot.nq, "nv": robot.nv, "q": q, "frame_a": frame_a,
            "frame_b": frame_b, "expressed_in": expressed_in, "T_ab": T_ab.homogeneous, "J": J,
            "rows": ["vx", "vy", "vz", "wx", "wy", "wz"], "columns": velocity_labels(robot)}


# ---------------------------------------------------------------------------- progress bars
@contextmanager
def progress_bar(total: int | None, what: str, *, show: bool, unit: str = "it",
                 delay: float = 0.0) -> Iterator[Any]:
    """A tqdm bar on stderr while the block runs, or None when `show` is False (or tqdm is absent).

    Yields the bar; its ``update(n)`` is the `progress` hook that
    :func:`reljac.apps.check.check_robot`, :func:`reljac.workspace.workspace_summary` and the benches
    call with the number of units just done (see :func:`hook`).
    The bar is erased when the block ends, also by an exception: what follows on stderr (a
    ``reljac: error:`` line) starts on a clean line. `delay` [s]: show it only after that long.
    """
    if not show:
        yield None
        return
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency; a --no-deps install runs without bars
        yield None
        return
    # Ctrl-C waits while the bar is being drawn or erased: one between drawing it and holding it
    # here, or in the middle of erasing it, would leave it on the screen before 'reljac: interrupted'.
    bar, held = None, _hold_ctrl_c()
    try:
        bar = tqdm(total=total, desc=what, unit=unit, file=sys.stderr, leave=False, delay=delay,
                   dynamic_ncols=True)
        _release_ctrl_c(held)  # a Ctrl-C that came meanwhile raises from here on, inside the try
        held = None
        yield bar
    finally:
        held = _hold_ctrl_c() if held is None else held
        try:
            if bar is not None:
                bar.close()
        finally:
            _release_ctrl_c(held)


def _hold_ctrl_c():
    """Block SIGINT in this thread (it stays pending); returns what undoes it (None: no masks here)."""
    mask = getattr(signal, "pthread_sigmask", None)  # not on Windows
    return None if mask is None else mask(signal.SIG_BLOCK, {signal.SIGINT})


def _release_ctrl_c(held: Any) -> None:
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def hook(bar: Any) -> Callable[[int], object]:
    """The `progress` hook of a bar from :func:`progress_bar` (None: no bar): it updates the bar,
    and ends the command with KeyboardInterrupt if a Ctrl-C came that an extension module swallowed
    (:func:`reljac.program.stop_if_interrupted`), bar or not."""
    def progress(n: int) -> None:
        stop_if_interrupted()
        if bar is not None:
            bar.update(n)
    return progress


def write_line(text: str) -> None:
    """Print `text` on stdout without tearing a progress bar drawn on stderr."""
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        print(text, flush=True)
        return
    tqdm.write(text, file=sys.stdout)
    sys.stdout.flush()

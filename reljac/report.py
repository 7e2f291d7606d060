"""Plain-text formatting of robots, matrices and tables (used by the command line and benches)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pinocchio as pin

from .robot import Robot
from .urdf_checks import shown


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A left/right aligned text table: strings left, numbers right."""
    cells = [[str(h) for h in headers]] + [[_cell(x) for x in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], (int, float, np.floating)) for row in rows) for i in range(len(headers))]

    def line(row):
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(row, widths, numeric))

    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in cells[1:]])


def _cell(x: object) -> str:
    if isinstance(x, (float, np.floating)):
        if x == 0 or 1e-3 <= abs(x) < 1e5:
            return f"{x:.3f}" if abs(x) < 100 else f"{x:.1f}"
        return f"{x:.2e}"
    return str(x)


def velocity_labels(robot: Robot) -> list[str]:
    """One label per velocity index: the joint name, with [k] for multi-DoF joints."""
    labels = [""] * robot.nv
    model = robot.model
    for j in range(1, model.njoints):
        joint = model.joints[j]
        if joint.nv == 0:
            continue
        for k in range(joint.nv):
            labels[joint.idx_v + k] = model.names[j] + (f"[{k}]" if joint.nv > 1 else "")
    return labels


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
        vel = model.velocityLimit[joint.idx_v : joint.idx_v + joint.nv]
        rows.append((name, kind, f"{joint.idx_q}:{joint.idx_q + joint.nq}", f"{joint.idx_v}:{joint.idx_v + joint.nv}",
                     limits, np.array2string(vel, precision=3)))
    lines.append(format_table(["joint", "type", "q", "v", "position limits", "velocity limits"], rows))
    for follower, leader in zip(model.mimicking_joints, model.mimicked_joints):
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

"""A demo run on record: times, configurations, targets and tracking errors; saved, and plotted.

``reljac demo ... --record FILE`` writes one of two formats, chosen by FILE's suffix:

``.npz`` (``numpy.load(FILE)``)
    ``t`` (n,) [s]; ``q`` (n, nq); ``dt`` [s]; ``demo`` (its name); ``joint_names`` (nq,): the
    joint each column of q belongs to (``Robot.q_names``: mimic followers have no column; a joint
    of several values repeats its name); and, for each tracked task ``NAME``: ``target/NAME``
    ((n, 4, 4) pose or (n, 3) position), ``position_error/NAME`` (n,) [m] and
    ``orientation_error/NAME`` (n,) [rad] (norms), or for a task whose error is neither (a
    posture task) ``error/NAME`` (n,) (the norm of its error, in its own units) instead.
``.json``
    one object with the same keys (``target``, ``position_error`` and ``orientation_error`` are
    objects keyed by task name); numbers as lists, NaN written as null.

Row k holds the state at time ``t[k]``: the configuration before control step k, the targets
set for that step and the errors at that configuration. A task that is not active at ``t[k]``
(the hand demo's second pinch during the first) and an error a task does not have (orientation
of a position task) are NaN.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import ReljacError
from ..files import open_for_writing

RECORD_SUFFIXES = (".npz", ".json")
PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def check_output(path: str | Path, suffixes: tuple[str, ...], option: str) -> Path:
    """`path` as a Path, after checking its suffix and that its folder exists (before any run)."""
    path = Path(path)
    if path.suffix.lower() not in suffixes:  # (an option names its argument; a file asked otherwise, itself)
        what = f"{option} FILE" if option.startswith("--") else option
        raise ReljacError(f"{what} must end in {' or '.join(suffixes)}, not {path.name!r}")
    if not path.parent.is_dir():
        raise ReljacError(f"{option}: folder {str(path.parent)!r} does not exist")
    return path


def require_matplotlib():
    """matplotlib.pyplot with the file-only Agg backend; ReljacError naming the extra if missing."""
    try:
        import matplotlib
    except ImportError:
        raise ReljacError("--plot needs matplotlib, an optional dependency: pip install matplotlib "
                          "(or the plot extra: pip install '.[plot]' in the reljac folder)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _target_array(target: Any) -> np.ndarray:
    """A task's target as an array: (4, 4) for a pose (pin.SE3), else the array as it is."""
    if target is None:
        return np.full(3, math.nan)
    homogeneous = getattr(target, "homogeneous", None)
    return np.array(homogeneous if homogeneous is not None else target, dtype=float)


class RunLog:
    """The state at every control step of a run (see the module docstring for the layout).

    Args:
        demo: the demo's name; joint_names: the name of each column of q (``Robot.q_names``);
        dt: control period [s]; tasks: every task that is tracked at some time of the run
        (names unique).
    """

    def __init__(self, demo: str, joint_names: list[str], dt: float, tasks: Any) -> None:
        self.demo, self.joint_names, self.dt = demo, list(joint_names), float(dt)
        self.task_names = list(dict.fromkeys(task.name for task in tasks))
        self.t: list[float] = []
        self.q: list[np.ndarray] = []
        self.targets: dict[str, list[np.ndarray | None]] = {name: [] for name in self.task_names}
        self.errors: dict[str, list[tuple[float, float, float]]] = {name: [] for name in self.task_names}
        self._target_shape: dict[str, tuple[int, ...]] = {  # known before any row where set (an empty run's shape)
            task.name: _target_array(task.target).shape for task in tasks if getattr(task, "target", None) is not None}

    def record(self, t: float, q: np.ndarray, active_tasks: Any, norms: dict[str, dict[str, float]]) -> None:
        """Add the row at time t [s]: q (nq,) before the step, the active tasks' targets and their
        error norms ``{name: {"position": m, "orientation": rad}}``."""
        q = np.array(q, dtype=float).reshape(-1)
        if q.size != len(self.joint_names):
            raise ReljacError(f"a recorded q has {q.size} entries but the log names {len(self.joint_names)} "
                              "columns (joint_names must be Robot.q_names: one per entry of q)")
        self.t.append(float(t))
        self.q.append(q)
        active = {task.name: task for task in active_tasks}
        for name in self.task_names:
            if name in active:
                target = _target_array(active[name].target)
                self._target_shape.setdefault(name, target.shape)
            else:
                target = None
            self.targets[name].append(target)
            n = norms.get(name, {})
            self.errors[name].append((n.get("position", math.nan), n.get("orientation", math.nan),
                                      n.get("error", math.nan)))

    def arrays(self) -> dict[str, np.ndarray]:
        """Every column as an array, keyed as in the .npz file."""
        out = {"t": np.array(self.t, dtype=float),
               "q": np.array(self.q, dtype=float).reshape(len(self.t), len(self.joint_names)),
               "dt": np.array(self.dt), "demo": np.array(self.demo),
               "joint_names": np.array(self.joint_names, dtype=str)}
        for name in self.task_names:
            shape = self._target_shape.get(name, (3,))
            rows = [row if row is not None else np.full(shape, math.nan) for row in self.targets[name]]
            out[f"target/{name}"] = np.array(rows, dtype=float).reshape((len(rows), *shape))
            errors = np.array(self.errors[name], dtype=float).reshape(-1, 3)
            generic = np.isfinite(errors[:, 2]).any() and not np.isfinite(errors[:, :2]).any()
            if generic:  # a posture task: its own error norm, no position or orientation
                out[f"error/{name}"] = errors[:, 2]
            else:
                out[f"position_error/{name}"] = errors[:, 0]
                out[f"orientation_error/{name}"] = errors[:, 1]
        return out

    def save(self, path: str | Path) -> Path:
        """Write the run to `path` (.npz or .json, see the module docstring); returns the path."""
        path = check_output(path, RECORD_SUFFIXES, "a record file")
        data = self.arrays()
        with open_for_writing(path, "record file", ReljacError) as f:  # a FIFO or folder: refused, never waited on
            if path.suffix.lower() == ".npz":
                np.savez_compressed(f, allow_pickle=False, **data)
                return path
            f.write(json.dumps(self._document(data), allow_nan=False).encode("utf-8"))
        return path

    @staticmethod
    def _document(data: dict[str, np.ndarray]) -> dict:
        """The .json file's object: groups (``target``, ...) as objects keyed by task name."""
        doc: dict = {}
        for key, value in data.items():
            group, _, name = key.partition("/")
            plain = _jsonable(value)
            if name:
                doc.setdefault(group, {})[name] = plain
            else:
                doc[key] = plain
        return doc

    def plot(self, path: str | Path) -> Path:
        """Plot the tracking errors over time, position [mm] above, orientation [mrad] below
        (tasks without one are left out of that panel); returns the path written."""
        path = check_output(path, PLOT_SUFFIXES, "--plot")
        plt = require_matplotlib()
        data = self.arrays()
        fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 5.5), constrained_layout=True)
        for name in self.task_names:
            for axes, key, factor in ((top, "position_error", 1e3), (bottom, "orientation_error", 1e3)):
                values = data.get(f"{key}/{name}")
                if values is not None and np.any(np.isfinite(values)):
                    axes.plot(data["t"], factor * values, label=name)
        top.set_ylabel("position error [mm]")
        bottom.set_ylabel("orientation error [mrad]")
        bottom.set_xlabel("time [s]")
        top.set_title(f"reljac demo {self.demo}: tracking errors")
        for axes in (top, bottom):
            axes.grid(True, alpha=0.3)
            if axes.lines:
                axes.legend(loc="upper right")
            else:
                axes.text(0.5, 0.5, "no task with this error", ha="center", va="center", transform=axes.transAxes)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return path


def _jsonable(value: np.ndarray) -> Any:
    """Nested lists of floats (NaN -> None), or the string / list of strings as it is."""
    if value.dtype.kind in "US":
        return value.tolist()
    as_object = np.asarray(value, dtype=float).astype(object)
    as_object[~np.isfinite(np.asarray(value, dtype=float))] = None
    return as_object.tolist()

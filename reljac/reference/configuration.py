"""Configurations q and velocities v in the reference layout: checks, sampling, integration.

The layout is described in :mod:`reljac.reference.model`. Every function takes either one vector,
shape (nq,) / (nv,), or a batch, shape (N, nq) / (N, nv), and answers in the same form.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from reljac.exceptions import ConfigurationError
from reljac.reference.lie import exp_se3, quaternion_exp, quaternion_multiply, quaternion_to_rotation
from reljac.reference.model import KinematicTree
from reljac.validation import MAX_COORDINATE, as_count, as_float, as_rng, real_array, short_repr

#: A free-joint quaternion may differ from unit norm by this much; it is then normalized.
QUATERNION_NORM_TOLERANCE = 1e-6


def _free_joints(tree: KinematicTree) -> list[str]:
    return [name for name in tree.joint_names if tree.joint_types[name] == "floating"]


def check_vector(tree: KinematicTree, array: ArrayLike, label: str) -> tuple[np.ndarray, bool]:
    """Return `array` (a q if `label` is "q", else a v) as floats of shape (N, size), and whether it
    was batched.

    Raises:
        ConfigurationError: on a wrong shape or a NaN/inf entry (naming the entry and its joint).
    """
    size, slices = (tree.nq, tree.q_slices) if label == "q" else (tree.nv, tree.v_slices)
    values = real_array(array)
    if values is None:  # text, booleans, complex numbers or ragged lists: not read as numbers
        raise ConfigurationError(f"{label} is not an array of numbers; expected real numbers, got {short_repr(array)}")
    if values.ndim not in (1, 2) or values.shape[-1] != size:
        raise ConfigurationError(
            f"{label} has shape {values.shape}, expected ({size},) or (N, {size}) for robot '{tree.name}'"
        )
    batched = values.ndim == 2
    values = values if batched else values[None]
    bad = ~np.isfinite(values)
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        value = values[row, column]
        where = f"{label}[{row}, {column}]" if batched else f"{label}[{column}]"
        joint = next(name for name, s in slices.items() if s.start <= column < s.stop)
        raise ConfigurationError(f"{where} is {'NaN' if np.isnan(value) else value} (joint '{joint}')")
    return values, batched


def check_configuration(tree: KinematicTree, q: ArrayLike) -> tuple[np.ndarray, bool]:
    """Return q as shape (N, nq) with unit free-joint quaternions, and whether it was batched.

    Raises:
        ConfigurationError: on a wrong shape, a NaN/inf entry or a quaternion whose norm is not 1
            (within QUATERNION_NORM_TOLERANCE).
    """
    values, batched = check_vector(tree, q, "q")
    free = _free_joints(tree)
    if free:
        values = values.copy()  # quaternions are normalized in place below
    for name in free:
        start, stop = tree.q_slices[name].start + 3, tree.q_slices[name].stop
        quaternion = values[:, start:stop]
        norm = np.linalg.norm(quaternion, axis=1)
        off = np.abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE
        if off.any():
            row = int(np.argmax(off))
            where = f"q[{row}, {start}:{stop}]" if batched else f"q[{start}:{stop}]"
            raise ConfigurationError(
                f"{where}, the quaternion [qx, qy, qz, qw] of joint '{name}', has norm {norm[row]:.6g}; "
                "expected 1"
            )
        quaternion /= norm[:, None]
    return values, batched


def neutral_configuration(tree: KinematicTree) -> np.ndarray:
    """q with every joint at zero and every free joint at the identity pose. Shape (nq,)."""
    q = np.zeros(tree.nq)
    for name in _free_joints(tree):
        q[tree.q_slices[name].stop - 1] = 1.0  # qw
    return q


def random_configuration(
    tree: KinematicTree,
    rng: np.random.Generator | int | None = None,
    n: int | None = None,
    *,
    position_box: float = 1.0,
) -> np.ndarray:
    """Random finite configuration(s) inside the limits. Shape (nq,), or (n, nq) if `n` is given.

    A bounded joint is uniform in [lower, upper] (within +-MAX_COORDINATE, 1e100); a continuous or
    unbounded revolute joint is uniform in [-pi, pi]; an unbounded prismatic joint is uniform in
    ``[-position_box, position_box]`` [m]; a free joint has its position uniform in that box and a
    uniformly random unit quaternion; a planar joint its x and y in that box and its angle in
    [-pi, pi].

    Raises:
        ConfigurationError: `rng` is not a Generator, a seed >= 0 or None; `n` is not None or an
            integer >= 0.
    """
    rng = as_rng(rng, "rng")
    count = 1 if n is None else as_count(n, "n (the number of configurations)", error=ConfigurationError)
    q = np.empty((count, tree.nq))
    for name in tree.joint_names:
        start, kind = tree.q_slices[name].start, tree.joint_types[name]
        if kind == "floating":
            q[:, start : start + 3] = rng.uniform(-position_box, position_box, (count, 3))
            quaternion = rng.standard_normal((count, 4))  # isotropic, so uniform once normalized
            q[:, start + 3 : start + 7] = quaternion / np.linalg.norm(quaternion, axis=1, keepdims=True)
            continue
        if kind == "planar":
            q[:, start : start + 2] = rng.uniform(-position_box, position_box, (count, 2))
            q[:, start + 2] = rng.uniform(-math.pi, math.pi, count)
            continue
        lower, upper = tree.lower[start], tree.upper[start]
        if not (math.isfinite(lower) and math.isfinite(upper)):
            lower, upper = (-position_box, position_box) if kind == "prismatic" else (-math.pi, math.pi)
        # limits beyond +-MAX_COORDINATE (what q may hold) drawn within it
        q[:, start] = rng.uniform(max(lower, -MAX_COORDINATE), min(upper, MAX_COORDINATE), count)
    return q if n is not None else q[0]


def integrate(tree: KinematicTree, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> np.ndarray:
    """``q (+) v dt``: move each joint by its velocity for dt [s].

    One-DoF joints add ``v dt``; a free joint moves by ``T(q) @ exp_se3(v dt)`` (v is the twist of its
    child frame expressed in that frame), a planar joint likewise with the twist
    ``[vx, vy, 0; 0, 0, w] dt``. q: (nq,) or (N, nq); v: (nv,) or (N, nv). The result is
    batched if either is.

    Raises:
        ConfigurationError: if q, v or dt is invalid (dt must be a finite real number), both are
            batched with different N, or v dt is so large that the result overflows.
    """
    dt = as_float(dt, "dt", valid="a finite real number [s]", error=ConfigurationError)
    q2, q_batched = check_configuration(tree, q)
    v2, v_batched = check_vector(tree, v, "v")
    if q_batched and v_batched and len(q2) != len(v2):
        raise ConfigurationError(f"q holds {len(q2)} configurations but v holds {len(v2)} velocities")
    count = len(q2) if q_batched else len(v2)  # (1, ...) when neither is batched
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below
        out = _integrate(tree, q2, v2 * float(dt), count)
    if not np.isfinite(out).all():
        raise ConfigurationError(
            f"q (+) v dt overflows: v dt is too large (largest |v| {np.abs(v2).max():.3g}, dt {float(dt):.3g})"
        )
    return out if (q_batched or v_batched) else out[0]


def _integrate(tree: KinematicTree, q: np.ndarray, step: np.ndarray, count: int) -> np.ndarray:
    """q (+) step for checked q (N or 1, nq) and step = v dt (N or 1, nv): shape (count, nq)."""
    out = np.array(np.broadcast_to(q, (count, tree.nq)))
    step = np.broadcast_to(step, (count, tree.nv))
    for name in tree.joint_names:
        q_slice, v_slice = tree.q_slices[name], tree.v_slices[name]
        kind = tree.joint_types[name]
        if kind == "planar":
            _integrate_planar(out[:, q_slice], step[:, v_slice])
            continue
        if kind != "floating":
            out[:, q_slice] += step[:, v_slice]
            continue
        position = out[:, q_slice.start : q_slice.start + 3]
        quaternion = out[:, q_slice.start + 3 : q_slice.stop]
        twist = step[:, v_slice]
        # T(q) @ exp(twist): the origin moves by R(q) times the exponential's translation.
        translation = exp_se3(twist)[:, :3, 3]
        new_position = position + np.einsum("nij,nj->ni", quaternion_to_rotation(quaternion), translation)
        new_quaternion = quaternion_multiply(quaternion, quaternion_exp(twist[:, 3:]))
        out[:, q_slice.start : q_slice.start + 3] = new_position
        out[:, q_slice.start + 3 : q_slice.stop] = new_quaternion / np.linalg.norm(
            new_quaternion, axis=1, keepdims=True
        )
    return out


def _integrate_planar(q3: np.ndarray, step: np.ndarray) -> None:
    """``[x, y, theta] (+) [vx, vy, w] dt`` in place (q3, step: (N, 3)): ``T(q) @ exp_se3(twist)``
    with the twist ``[vx, vy, 0; 0, 0, w] dt``, whose exponential stays in the plane."""
    twist = np.zeros((len(step), 6))
    twist[:, [0, 1, 5]] = step
    translation = exp_se3(twist)[:, :2, 3]
    cos, sin = np.cos(q3[:, 2]), np.sin(q3[:, 2])
    q3[:, 0] += cos * translation[:, 0] - sin * translation[:, 1]
    q3[:, 1] += sin * translation[:, 0] + cos * translation[:, 1]
    q3[:, 2] += step[:, 2]

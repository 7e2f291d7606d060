"""Joint names <-> blocks of q and v: sampling, named values both ways, and which joints to lock.

Each joint with its own degrees of freedom owns a block of q (``nq`` entries from ``idx_q``) and a
block of v (``nv`` entries from ``idx_v``). Its *value* by name is

* a number for a one-DoF joint (revolute [rad], prismatic [m]); an angle [rad] for a continuous
  joint, whose q block is (cos, sin);
* a tuple of its q entries for a joint with several (a floating base: x y z qx qy qz qw, as an
  SRDF's group_state writes it; planar: x y cos sin; spherical: qx qy qz qw).

Its *velocity* by name is a number, or a tuple of its nv entries. Mimic joints have no block.
Functions here take a :class:`~reljac.Robot` (``robot``: any
:class:`~reljac.configuration_space.ConfigurationSpace`) and never modify their inputs.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .decimal_text import decimal_number, held_text
from .exceptions import ConfigurationError, SRDFError, suggest
from .validation import MAX_COORDINATE, real_array, short_repr

if TYPE_CHECKING:  # pragma: no cover
    from .srdf import SRDF

Value = float | tuple[float, ...]
MAX_SQUARE = MAX_COORDINATE**2  # x @ x below this: every entry is finite and within the bound
UNIT_TOLERANCE = 1e-6  # a quaternion or (cos, sin) block of q has unit norm within this


class JointSpace(Protocol):
    """What the functions here read of a robot: a :class:`~reljac.configuration_space.ConfigurationSpace`
    (and so a :class:`~reljac.Robot`) is one. A protocol, so that this module, which the
    configuration space is made of, does not import it back."""

    model: pin.Model
    name: str
    joint_names: list[str]
    srdf: SRDF | None
    dof_joint_ids: list[int]  # joints with degrees of freedom, in q order
    unit_blocks: list[tuple[int, slice]]  # (joint, its unit-norm block of q)

    @property
    def nq(self) -> int: ...

    @property
    def nv(self) -> int: ...

    @property
    def joint_frame_names(self) -> list[str]: ...

    def joint_id(self, name: str) -> int: ...

    def validate_q(self, q: ArrayLike, *, name: str = "q", copy: bool = True) -> np.ndarray: ...

    def validate_v(self, v: ArrayLike, *, name: str = "v") -> np.ndarray: ...

    def normalize(self, q: ArrayLike) -> np.ndarray: ...


def is_angle_pair(joint: pin.JointModel) -> bool:
    """A continuous (unbounded revolute) joint, any axis: q holds (cos, sin), v one rate."""
    return joint.nq == 2 and joint.nv == 1


def velocity_labels(robot: JointSpace) -> list[str]:
    """One label per velocity index (nv,): the joint's name, with [k] for a joint with several."""
    labels = [""] * robot.nv
    model = robot.model
    for j in range(1, model.njoints):
        joint = model.joints[j]
        for k in range(joint.nv):
            labels[joint.idx_v + k] = model.names[j] + (f"[{k}]" if joint.nv > 1 else "")
    return labels


def unit_slice(joint: pin.JointModel) -> slice | None:
    """Slice (within the joint's own q block) of the components that must have unit norm."""
    kind = joint.shortname()
    if kind == "JointModelFreeFlyer":
        return slice(3, 7)
    if kind == "JointModelSpherical":
        return slice(0, 4)
    if is_angle_pair(joint):
        return slice(0, 2)
    if kind == "JointModelPlanar":
        return slice(2, 4)
    return None


# ----------------------------------------------------------------------------- checks of q and v
def owner(robot: JointSpace, index: int, *, tangent: bool = False) -> str:
    """Name of the joint whose q block (v block with `tangent`) holds entry `index` ('?' if none)."""
    for j in robot.dof_joint_ids:
        joint = robot.model.joints[j]
        start, size = (joint.idx_v, joint.nv) if tangent else (joint.idx_q, joint.nq)
        if start <= index < start + size:
            return robot.model.names[j]
    return "?"


def as_vector(robot: JointSpace, x: ArrayLike, size: int, name: str, *, tangent: bool,
              copy: bool = True) -> np.ndarray:
    """x as a float array (size,) of finite entries within :data:`MAX_COORDINATE`, or
    ConfigurationError naming the entry and its joint."""
    arr = real_array(x, copy=copy)
    if arr is None:
        raise ConfigurationError(f"{name} must be an array of {size} real numbers (not booleans, text or "
                                 f"complex), got {short_repr(x)}")
    if arr.shape != (size,):
        raise ConfigurationError(
            f"{name} has shape {arr.shape}, expected ({size},) for robot '{robot.name}'"
            + (" (velocities have nv entries)" if tangent else " (configurations have nq entries)"))
    with np.errstate(over="ignore"):
        square = arr @ arr
    if not square < MAX_SQUARE:  # dot: fast common path
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ConfigurationError(f"{name}[{i}] is {arr[i]} (joint '{owner(robot, i, tangent=tangent)}'); "
                                     "all entries must be finite")
        i = int(np.argmax(np.abs(arr)))
        if abs(arr[i]) > MAX_COORDINATE:
            raise ConfigurationError(
                f"{name}[{i}] is {arr[i]:.3g} (joint '{owner(robot, i, tangent=tangent)}'); reljac "
                f"computes with |entries| <= {MAX_COORDINATE:g} (so no product of them overflows)")
    return arr


def check_unit_blocks(robot: JointSpace, q: np.ndarray, name: str) -> None:
    """ConfigurationError unless every quaternion and (cos, sin) block of q has unit norm (within
    UNIT_TOLERANCE)."""
    for j, block in robot.unit_blocks:
        unit = q[block]
        norm = math.sqrt(float(unit @ unit))
        if abs(norm - 1.0) > UNIT_TOLERANCE:
            raise ConfigurationError(
                f"{name}[{block.start}:{block.stop}] of joint '{robot.model.names[j]}' must have "
                f"unit norm (it is a quaternion or a (cos, sin) pair); its norm is {norm:.6g}. "
                "Use robot.normalize(q).")


def normalize(robot: JointSpace, q: ArrayLike) -> np.ndarray:
    """q with its quaternion and (cos, sin) blocks normalized; ConfigurationError for a zero block."""
    values = as_vector(robot, q, robot.nq, "q", tangent=False).copy()
    for j, block in robot.unit_blocks:
        if not np.any(values[block]):
            raise ConfigurationError(
                f"q[{block.start}:{block.stop}] of joint '{robot.model.names[j]}' is zero: a "
                "quaternion or (cos, sin) pair cannot be normalized from zero")
        values[block] /= np.abs(values[block]).max()  # first by its largest entry: a block of 1e-170 has a norm
    return pin.normalize(robot.model, values)


def inside_limits(robot: JointSpace, q: np.ndarray, *, middle: bool) -> np.ndarray:
    """A copy of q (nq,) whose one-DoF coordinates outside their finite position limits are put
    back: at the middle of the limits (`middle`), else at the nearest limit."""
    q = q.copy()
    model = robot.model
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    for j in robot.dof_joint_ids:
        joint = model.joints[j]
        i = joint.idx_q
        if joint.nq != 1 or not (math.isfinite(lo[i]) and math.isfinite(hi[i])) or lo[i] <= q[i] <= hi[i]:
            continue
        q[i] = 0.5 * (lo[i] + hi[i]) if middle else min(max(q[i], lo[i]), hi[i])
    return q


def named_configuration(robot: JointSpace, name: str, base: np.ndarray | None = None) -> np.ndarray:
    """q (nq,) of the SRDF group state `name` (see :meth:`Robot.configuration`); joints it does not
    name keep their values in `base` (default: neutral)."""
    if robot.srdf is None:
        raise SRDFError(f"robot '{robot.name}' has no SRDF, so no named configuration {name!r} (load it "
                        "with srdf=PATH)")
    states = robot.srdf.group_states
    if not isinstance(name, str) or name not in states:
        raise SRDFError(f"robot '{robot.name}' has no named configuration {name!r}"
                        f"{suggest(str(name), states)} (SRDF states: {', '.join(states) or 'none'})")
    known = set(robot.joint_frame_names)
    unknown = [joint for joint in states[name] if joint not in known]
    if unknown:
        raise SRDFError(f"SRDF '{robot.srdf.path}', state '{name}' names joint '{unknown[0]}', which robot "
                        f"'{robot.name}' does not have{suggest(unknown[0], robot.joint_names)}")
    moving = set(robot.joint_names)
    values = {joint: value for joint, value in states[name].items() if joint in moving}
    try:
        start = pin.neutral(robot.model) if base is None else base
        return normalize(robot, write_values(robot, values, start))
    except ConfigurationError as exc:
        raise SRDFError(f"SRDF '{robot.srdf.path}', state '{name}': {exc}") from None


def random_configuration(robot: JointSpace, rng: np.random.Generator) -> np.ndarray:
    """A random configuration inside the position limits (see :meth:`Robot.random_configuration`)."""
    model = robot.model
    q = pin.neutral(model)
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    for j in robot.dof_joint_ids:
        joint = model.joints[j]
        i, kind = joint.idx_q, joint.shortname()
        if joint.nq == 1:
            default = math.pi if kind.startswith("JointModelR") else 1.0
            a = max(lo[i], -MAX_COORDINATE) if np.isfinite(lo[i]) else -default
            b = min(hi[i], MAX_COORDINATE) if np.isfinite(hi[i]) else default
            q[i] = rng.uniform(a, b)
        elif is_angle_pair(joint):
            angle = rng.uniform(-math.pi, math.pi)
            q[i : i + 2] = (math.cos(angle), math.sin(angle))
        elif kind in ("JointModelFreeFlyer", "JointModelSpherical"):
            t = 3 if kind == "JointModelFreeFlyer" else 0
            for k in range(t):
                a = max(lo[i + k], -1.0)
                b = min(hi[i + k], 1.0)
                q[i + k] = rng.uniform(a, b) if a < b else 0.5 * a + 0.5 * b
            quat = rng.normal(size=4)
            q[i + t : i + t + 4] = quat / np.linalg.norm(quat)
        elif kind == "JointModelPlanar":
            q[i : i + 2] = rng.uniform(-1.0, 1.0, size=2)
            angle = rng.uniform(-math.pi, math.pi)
            q[i + 2 : i + 4] = (math.cos(angle), math.sin(angle))
        else:
            raise ConfigurationError(
                f"joint '{model.names[j]}' has type {kind}, which random_configuration does not sample")
    return q


# ----------------------------------------------------------------------------- values by name
def joint_values(robot: JointSpace, q: ArrayLike) -> dict[str, Value]:
    """{joint name: value} of every joint with degrees of freedom, in q order (module docstring)."""
    q = robot.validate_q(q)
    out: dict[str, Value] = {}
    for j in robot.dof_joint_ids:
        joint = robot.model.joints[j]
        block = q[joint.idx_q : joint.idx_q + joint.nq]
        if joint.nq == 1:
            out[robot.model.names[j]] = float(block[0])
        elif is_angle_pair(joint):
            out[robot.model.names[j]] = math.atan2(block[1], block[0])
        else:
            out[robot.model.names[j]] = tuple(float(x) for x in block)
    return out


def joint_velocities(robot: JointSpace, v: ArrayLike) -> dict[str, Value]:
    """{joint name: velocity} (a number, or a tuple of the joint's nv entries) from v (nv,)."""
    v = robot.validate_v(v)
    out: dict[str, Value] = {}
    for j in robot.dof_joint_ids:
        joint = robot.model.joints[j]
        block = v[joint.idx_v : joint.idx_v + joint.nv]
        out[robot.model.names[j]] = float(block[0]) if joint.nv == 1 else tuple(float(x) for x in block)
    return out


def _number(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_, complex, np.complexfloating)):
        raise ConfigurationError(f"value of joint '{name}' must be a real number, not {value!r}")
    text = held_text(value)  # read in decimal only (float() also reads "1_0" as 10, "nan", other scripts' digits)
    try:
        number = float(value) if text is None else decimal_number(text)
    except OverflowError:  # an integer beyond float's range (10**400): not finite, named below
        number = math.inf if value > 0 else -math.inf
    except (TypeError, ValueError):
        raise ConfigurationError(f"value of joint '{name}' must be a number, "
                                 f"not {short_repr(value if text is None else text)}") from None
    if not abs(number) <= MAX_COORDINATE:
        shown = f"{number:.3g}" if text is None else short_repr(text)
        raise ConfigurationError(f"value of joint '{name}' is {shown}; it must be finite, with "
                                 f"|value| <= {MAX_COORDINATE:g}")
    return number


def _single(value: Any) -> bool:
    """One value (a number, a numeric string, a 0-d array), not a sequence."""
    if isinstance(value, (str, bytes)):
        return True
    try:
        return np.ndim(value) == 0
    except (TypeError, ValueError):  # ragged nested sequences
        return False


class _Given(reprlib.Repr):
    """A user's value in a message: a few entries and levels (cycles named), numpy's scalars and
    small arrays as the plain numbers and lists they hold (not np.float64(1.0)), a large array by
    its shape, at no cost growing with its size."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlist = self.maxtuple = 8
        self.maxlevel = 3

    def repr1(self, x: Any, level: int) -> str:
        if isinstance(x, np.generic):
            return repr(x.item())
        if isinstance(x, np.ndarray):
            return repr(x.tolist()) if x.size <= self.maxlist else f"an array of shape {x.shape}"
        return super().repr1(x, level)


def _as_given(value: Any) -> str:
    """`value` for a message (:class:`_Given`), on one line of at most 80 characters."""
    text = " ".join(_Given().repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _numbers(name: str, value: Any, size: int, what: str) -> list[float]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != size:
        raise ConfigurationError(
            f"joint '{name}' has {size} {what} values; give them as a sequence of {size} numbers, "
            f"not {_as_given(value)}")
    return [_number(name, x) for x in value]


def write_values(robot: JointSpace, values: Mapping[str, object], q: np.ndarray) -> np.ndarray:
    """Write {joint name: value} into q (nq,) in place (module docstring); returns q.

    Raises:
        JointNotFound: unknown, fixed or mimic joint name.
        ConfigurationError: a non-finite value, or one of the wrong size for its joint.
    """
    if not isinstance(values, Mapping):
        raise ConfigurationError(f"joint values must be a mapping {{joint name: value}}, not {type(values).__name__}")
    for name, value in values.items():
        joint = robot.model.joints[robot.joint_id(name)]
        if joint.nq == 1 or is_angle_pair(joint):
            if not _single(value):
                raise ConfigurationError(f"joint '{name}' takes one number, not {_as_given(value)}")
            value = _number(name, value)
            if joint.nq == 1:
                q[joint.idx_q] = value
            else:
                q[joint.idx_q : joint.idx_q + 2] = (math.cos(value), math.sin(value))
        elif _single(value):
            raise ConfigurationError(
                f"joint '{name}' has {joint.nq} configuration values ({joint.shortname()}); it has no single "
                f"scalar value: give its {joint.nq} values as a sequence, or set its block of q directly")
        else:
            q[joint.idx_q : joint.idx_q + joint.nq] = _numbers(name, value, joint.nq, "configuration")
    return q


def v_from_joint_velocities(robot: JointSpace, values: Mapping[str, object]) -> np.ndarray:
    """v (nv,) from {joint name: velocity}; joints not named have zero velocity."""
    if not isinstance(values, Mapping):
        raise ConfigurationError(f"joint velocities must be a mapping {{joint name: velocity}}, "
                                 f"not {type(values).__name__}")
    v = np.zeros(robot.nv)
    for name, value in values.items():
        joint = robot.model.joints[robot.joint_id(name)]
        if joint.nv == 1:
            if not _single(value):
                raise ConfigurationError(f"joint '{name}' takes one velocity, not {value!r}")
            v[joint.idx_v] = _number(name, value)
        else:
            v[joint.idx_v : joint.idx_v + joint.nv] = _numbers(name, value, joint.nv, "velocity")
    return v

"""A pin.Model exported to the compiled batched kinematics, and T_ab, J_ab for N configurations.

The compiled core (``reljac.ik._core.KinematicModel``, C++ in ``src/core/kinematics.cpp``) has its
own forward kinematics over a joint tree exported here once per robot: parents, joint placements,
joint kinds and axes, q/v indices, mimic scaling and offset, frames (parent joint, placement).
Pinocchio's C++ is not linked. :func:`python_relative_kinematics` (a loop over the Pinocchio
layer, :mod:`reljac.relative`) is the specification the compiled path is tested against, and the
fallback for models it does not support.

Supported joints: revolute about x/y/z or any axis, prismatic likewise, continuous (unbounded
revolute, q = (cos, sin)), free-flyer (q = xyz + quaternion xyzw), spherical (quaternion), planar
(q = x, y, cos, sin), and mimic joints following a revolute or prismatic leader. Any other type
raises :class:`~reljac.exceptions.UnsupportedJoint` naming the joint.
"""

from __future__ import annotations

import importlib
import weakref
from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..exceptions import ConfigurationError, UnsupportedJoint
from ..relative import Kinematics
from ..robot import FrameRef, Robot
from ..validation import as_matrix

REVOLUTE, PRISMATIC, UNBOUNDED, FREE_FLYER, SPHERICAL, PLANAR = range(6)
_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
_FIXED_KINDS = {
    "JointModelFreeFlyer": FREE_FLYER,
    "JointModelSpherical": SPHERICAL,
    "JointModelPlanar": PLANAR,
}
SUPPORTED = ("JointModelRX/RY/RZ, JointModelRevoluteUnaligned, JointModelPX/PY/PZ, JointModelPrismaticUnaligned, "
             "JointModelRUBX/RUBY/RUBZ, JointModelRevoluteUnboundedUnaligned, JointModelFreeFlyer, "
             "JointModelSpherical, JointModelPlanar, JointModelMimic (of a revolute or prismatic joint)")

# the compiled core as reljac.ik.backend loads it (None when not built, or built for another
# Pinocchio: its MISMATCH says so), typed Any: pybind11 modules carry no annotations
_backend = importlib.import_module("reljac.ik.backend")
_core: Any = _backend.core()
IMPORT_ERROR = "" if _core is not None else (_backend.MISMATCH or "no C++ compiler when reljac was installed")

_exported: weakref.WeakKeyDictionary[Robot, object] = weakref.WeakKeyDictionary()


def compiled_available() -> bool:
    """True when the compiled kinematics was built and imports."""
    return _core is not None


def _kind_and_axis(model: pin.Model, j: int) -> tuple[int, tuple[float, float, float]]:
    joint = model.joints[j]
    name = joint.shortname()
    if name in _FIXED_KINDS:
        return _FIXED_KINDS[name], (0.0, 0.0, 1.0)
    for prefix, kind in (("JointModelRUB", UNBOUNDED), ("JointModelR", REVOLUTE), ("JointModelP", PRISMATIC)):
        if name[len(prefix):] in _AXES and name.startswith(prefix):
            return kind, _AXES[name[len(prefix):]]
    unaligned = {"JointModelRevoluteUnaligned": REVOLUTE, "JointModelPrismaticUnaligned": PRISMATIC,
                 "JointModelRevoluteUnboundedUnaligned": UNBOUNDED}
    if name in unaligned:  # the axis, from the motion subspace (not every type exposes .axis)
        data = joint.createData()
        joint.calc(data, pin.neutral(model))
        S = np.asarray(data.S).reshape(6)
        axis = S[:3] if unaligned[name] == PRISMATIC else S[3:]
        return unaligned[name], tuple(axis / np.linalg.norm(axis))
    raise UnsupportedJoint(
        f"joint '{model.names[j]}' has type {name}, which reljac's compiled kinematics does not support "
        f"(supported: {SUPPORTED}); use backend='python'")


def _mimic(model: pin.Model, j: int) -> tuple[int, tuple, float, float, pin.SE3]:
    """(kind, axis, scaling, offset, extra placement) of mimic joint j, read from its motion
    subspace and checked against its own transform at two leader values."""
    joint = model.joints[j]
    mimic = joint.extract()
    scaling, offset = float(mimic.scaling), float(mimic.offset)
    data = joint.createData()
    q = pin.neutral(model)

    def motion(x: float) -> tuple[pin.SE3, np.ndarray]:
        q[joint.idx_q] = x
        joint.calc(data, q)
        return pin.SE3(data.M), np.asarray(data.S).reshape(6)

    S = motion(0.0)[1]
    if scaling == 0.0:  # a Robot refuses it (loading.check_mimic): one rule for every part of reljac
        raise UnsupportedJoint(f"mimic joint '{model.names[j]}' has scaling 0 (reljac refuses such joints)")
    linear, angular = S[:3] / scaling, S[3:] / scaling
    kind, axis = (REVOLUTE, angular) if np.linalg.norm(angular) > 1e-12 else (PRISMATIC, linear)
    if abs(np.linalg.norm(axis) - 1.0) > 1e-9 or (kind == REVOLUTE and np.linalg.norm(linear) > 1e-12):
        raise UnsupportedJoint(f"mimic joint '{model.names[j]}' does not follow a revolute or prismatic joint "
                               f"(supported: {SUPPORTED}); use backend='python'")
    for x in (0.3, -1.1):
        value = scaling * x + offset
        expected = (pin.SE3(pin.exp3(axis * value), np.zeros(3)) if kind == REVOLUTE
                    else pin.SE3(np.eye(3), axis * value))
        if not np.allclose(motion(x)[0].homogeneous, expected.homogeneous, atol=1e-12):
            raise UnsupportedJoint(f"mimic joint '{model.names[j]}' moves unlike a revolute or prismatic joint "
                                   f"(supported: {SUPPORTED}); use backend='python'")
    return kind, tuple(axis), scaling, offset, pin.SE3.Identity()


def export(robot: Robot) -> Any:
    """The robot's joint tree as a ``reljac.ik._core.KinematicModel`` (built once per robot).

    Raises:
        UnsupportedJoint: a joint type the compiled kinematics does not model (names the joint).
        ConfigurationError: the compiled core is not built.
    """
    if _core is None:
        raise ConfigurationError(f"the compiled kinematics is not built ({IMPORT_ERROR}); use backend='python'")
    cached = _exported.get(robot)
    if cached is not None:
        return cached
    model = robot.model
    nj = model.njoints
    parents, kinds = np.zeros(nj, np.int64), np.zeros(nj, np.int64)
    axes = np.tile([0.0, 0.0, 1.0], (nj, 1))
    rotations, translations = np.tile(np.eye(3), (nj, 1, 1)), np.zeros((nj, 3))
    idx_q, idx_v = np.zeros(nj, np.int64), np.zeros(nj, np.int64)
    scaling, offset = np.ones(nj), np.zeros(nj)
    for j in range(1, nj):
        joint = model.joints[j]
        placement = model.jointPlacements[j]
        if joint.shortname() == "JointModelMimic":
            kinds[j], axes[j], scaling[j], offset[j], extra = _mimic(model, j)
            placement = placement * extra
        else:
            kinds[j], axes[j] = _kind_and_axis(model, j)
        parents[j] = model.parents[j]
        rotations[j], translations[j] = placement.rotation, placement.translation
        idx_q[j], idx_v[j] = joint.idx_q, joint.idx_v
    frames = model.frames
    exported = _core.KinematicModel(
        model.nq, model.nv, parents, kinds, axes, rotations, translations, idx_q, idx_v, scaling, offset,
        np.array([f.parentJoint for f in frames], np.int64),
        np.array([f.placement.rotation for f in frames]).reshape(-1, 3, 3),
        np.array([f.placement.translation for f in frames]).reshape(-1, 3))
    _exported[robot] = exported
    return exported


def supports(robot: Robot) -> bool:
    """True when the compiled kinematics is built and models every joint of the robot."""
    try:
        export(robot)
    except (UnsupportedJoint, ConfigurationError):
        return False
    return True


def as_configurations(robot: Robot, Q: ArrayLike) -> np.ndarray:
    """Q as a C-contiguous float array (N, nq) of valid configurations (a copy), or raise."""
    configurations = as_matrix(Q, robot.nq, "Q", rows="N", note=f" for robot '{robot.name}'")
    for i in range(configurations.shape[0]) if robot._unit_blocks else ():
        robot.validate_q(configurations[i], name=f"Q[{i}]")
    return configurations


def relative_kinematics(robot: Robot, Q: ArrayLike, frame_a: FrameRef, frame_b: FrameRef, *,
                        backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """T_ab and J_ab for N configurations at once.

    Args:
        Q: configurations, shape (N, nq) (or (nq,) for one).
        backend: "compiled", "python" (a loop over :mod:`reljac.relative`) or None: compiled when
            it is built and supports the robot, else python.

    Returns:
        (T, J): T (N, 4, 4) homogeneous poses of b in a; J (N, 6, nv) relative Jacobians
        expressed in a, rows [linear; angular].

    Raises:
        FrameNotFound, ConfigurationError; UnsupportedJoint with backend="compiled".
    """
    fa, fb = robot.frame_id(frame_a), robot.frame_id(frame_b)
    Q = as_configurations(robot, Q)
    if backend not in (None, "compiled", "python"):
        raise ConfigurationError(f"backend must be 'compiled', 'python' or None, got {backend!r}")
    if backend == "compiled" or (backend is None and supports(robot)):
        return export(robot).relative(fa, fb, Q)
    return python_relative_kinematics(robot, Q, fa, fb)


def python_relative_kinematics(robot: Robot, Q: np.ndarray, frame_a: FrameRef,
                               frame_b: FrameRef) -> tuple[np.ndarray, np.ndarray]:
    """The same as :func:`relative_kinematics`, one Pinocchio pass per configuration."""
    Q = np.asarray(Q, dtype=float)
    Q = Q[None, :] if Q.ndim == 1 else Q
    T = np.empty((Q.shape[0], 4, 4))
    J = np.empty((Q.shape[0], 6, robot.nv))
    data = robot.new_data()  # ModelTooLarge when it does not fit
    for i, q in enumerate(Q):
        kin = Kinematics(robot, q, data=data)
        T[i] = kin.relative_placement(frame_a, frame_b).homogeneous
        J[i] = kin.relative_jacobian(frame_a, frame_b)
    return T, J

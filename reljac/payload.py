"""Payloads: a carried mass (a box between the hands, a tool) counted in the robot's own model.

A :class:`Payload` is a rigid body of mass m [kg] whose centre of mass sits at `offset` (3,) [m]
in the axes of a robot frame f, with rotational inertia `inertia` (3, 3) [kg m^2] about that
centre, in f's axes (zeros: a point mass). :func:`attach` adds it to the inertia of the joint that
carries f, as Pinocchio's ``Model.appendBodyToJoint`` does::

    model.inertias[j] += (T_jf * T(offset)).act(Inertia(m, 0, inertia))      j = f's parent joint

Nothing else of the model changes (joints, frames, limits, ids): every computation that reads the
model's inertias counts the payload from then on, on both backends, with no code of its own: the
centre of mass c = (sum_i m_i c_i + m p_wp) / (sum_i m_i + m) and its Jacobian (Pinocchio's
``centerOfMass``, ``jacobianCenterOfMass``, reljac's :mod:`reljac.mass` split), so
:class:`~reljac.ik.CoMTask` and :class:`~reljac.ik.SupportRegion`, the compiled step's too, and
the mass matrix (``pin.crba``). A payload on a frame fixed to the world (a locked base) joins the
welded mass of :mod:`reljac.mass`.

:meth:`reljac.Robot.with_payload` is the public way in: it returns a new robot and leaves the
original as it was. Units: [kg], [m], [kg m^2].
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .exceptions import ConfigurationError
from .model_index import FrameRef, ModelIndex
from .validation import as_float, as_vector, real_array, short_repr

MAX_MASS = 1e9  # [kg] heaviest payload accepted (beyond it the centre of mass is the payload's alone)
MAX_OFFSET = 1e3  # [m] farthest a payload's centre of mass may sit from its frame
MAX_INERTIA = 1e9  # [kg m^2] largest entry of a payload's rotational inertia
SYMMETRY_TOLERANCE = 1e-9  # relative, on the inertia's symmetry and smallest eigenvalue


@dataclass(frozen=True, eq=False)
class Payload:
    """A carried rigid body (module docstring).

    Attributes:
        mass: [kg], > 0.
        frame: the name of the robot frame f that carries it.
        frame_id: f's id in the model it was attached to.
        offset: (3,) [m] its centre of mass in f's axes, from f's origin.
        inertia: (3, 3) [kg m^2] its rotational inertia about its centre of mass, in f's axes.
    """

    mass: float
    frame: str
    frame_id: int
    offset: np.ndarray
    inertia: np.ndarray

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Payload):
            return NotImplemented
        return (self.mass, self.frame, self.frame_id) == (other.mass, other.frame, other.frame_id) and \
            np.array_equal(self.offset, other.offset) and np.array_equal(self.inertia, other.inertia)

    __hash__ = None  # type: ignore[assignment]  # holds arrays

    def __repr__(self) -> str:
        return f"Payload({self.mass:g} kg at {np.round(self.offset, 6).tolist()} m in frame '{self.frame}')"


def _inertia(inertia: Any) -> np.ndarray:
    if inertia is None:
        return np.zeros((3, 3))
    arr = real_array(inertia)
    what = "payload inertia (3, 3) [kg m^2] about its centre of mass, in the frame's axes"
    if arr is None or arr.shape != (3, 3) or not np.isfinite(arr).all():
        raise ConfigurationError(f"{what} must be a symmetric positive semi-definite (3, 3) matrix of finite "
                                 f"numbers, got {short_repr(inertia)}")
    scale = float(np.abs(arr).max())
    if scale > MAX_INERTIA:
        raise ConfigurationError(f"{what} has an entry of {scale:g}; at most {MAX_INERTIA:g} is accepted")
    if np.abs(arr - arr.T).max() > SYMMETRY_TOLERANCE * max(scale, 1.0):
        raise ConfigurationError(f"{what} must be symmetric, got {arr.tolist()}")
    arr = 0.5 * (arr + arr.T)
    if np.linalg.eigvalsh(arr)[0] < -SYMMETRY_TOLERANCE * max(scale, 1.0):
        raise ConfigurationError(f"{what} must be positive semi-definite, got eigenvalues "
                                 f"{np.linalg.eigvalsh(arr).tolist()}")
    return arr


def payload(robot: ModelIndex, mass: Any, frame: FrameRef, offset: ArrayLike = (0.0, 0.0, 0.0),
            inertia: ArrayLike | None = None) -> Payload:
    """A :class:`Payload` of `robot`, its values checked.

    Raises:
        ConfigurationError: a mass not in (0, MAX_MASS] kg, an offset not 3 finite numbers within
            MAX_OFFSET m, an inertia not a symmetric positive semi-definite (3, 3) matrix.
        FrameNotFound: an unknown frame (the message lists near names).
    """
    m = as_float(mass, "payload mass [kg]", minimum=0.0, strict=True,
                 valid=f"a number of kilograms in (0, {MAX_MASS:g}]", error=ConfigurationError)
    if m > MAX_MASS:
        raise ConfigurationError(f"payload mass [kg] must be a number of kilograms in (0, {MAX_MASS:g}], got {m:g}")
    if isinstance(frame, (bool, np.bool_)) or not isinstance(frame, (str, int, np.integer)):
        raise ConfigurationError(f"payload frame must be a frame name (str) or id (int), got {short_repr(frame)}")
    fid = robot.frame_id(frame)
    p = as_vector(offset, 3, "payload offset [m] (its centre of mass in the frame's axes)", error=ConfigurationError)
    if np.abs(p).max() > MAX_OFFSET:
        raise ConfigurationError(f"payload offset [m] must stay within {MAX_OFFSET:g} m of the frame, got {p.tolist()}")
    body = _inertia(inertia)
    for array in (p, body):
        array.flags.writeable = False
    return Payload(m, robot.model.frames[fid].name, fid, p, body)


def attach(model: pin.Model, load: Payload) -> None:
    """Add `load`'s inertia to the joint carrying its frame in `model` (in place: give a copy)."""
    frame = model.frames[load.frame_id]
    body = pin.Inertia(load.mass, np.zeros(3), np.asarray(load.inertia, dtype=float))
    T_jp = frame.placement * pin.SE3(np.eye(3), np.asarray(load.offset, dtype=float))
    model.appendBodyToJoint(frame.parentJoint, body, T_jp)


def renumbered(load: Payload, model: pin.Model, reduced: pin.Model) -> Payload:
    """`load` (a payload of `model`) with the id of its frame in `reduced` (its locked robot's
    model, where buildReducedModel has already merged its inertia)."""
    return replace(load, frame_id=int(reduced.getFrameId(load.frame, model.frames[load.frame_id].type)))


__all__ = ["MAX_MASS", "MAX_OFFSET", "Payload", "attach", "payload", "renumbered"]

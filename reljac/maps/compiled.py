"""T_ab and J_ab for N configurations at once, in the compiled core or as a loop over the
Pinocchio layer.

The compiled path (``reljac.ik._core.relative_kinematics``, C++ in ``src/core/kinematics.cpp``)
calls Pinocchio's C++ on the robot's own ``pin.Model`` (every joint type Pinocchio models, mimic
joints included) configuration after configuration, without the GIL.
:func:`python_relative_kinematics` (a loop over the Pinocchio layer, :mod:`reljac.relative`) is
the specification the compiled path is tested against, and the path where the core is not built.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..compiled_core import extension, mismatch
from ..exceptions import ConfigurationError
from ..relative import Kinematics
from ..robot import FrameRef, Robot
from ..validation import as_matrix

# the compiled core (None when not built, or built for another Pinocchio: mismatch() says so)
_core: Any = extension()
IMPORT_ERROR = "" if _core is not None else (mismatch() or "no C++ compiler when reljac was installed")


def compiled_available() -> bool:
    """True when the compiled core was built and imports."""
    return _core is not None


def require_compiled() -> None:
    """Raise ConfigurationError when the compiled core is not built (or built for another Pinocchio)."""
    if _core is None:
        raise ConfigurationError(f"the compiled core is not built ({IMPORT_ERROR}); use backend='python'")


def as_configurations(robot: Robot, Q: ArrayLike) -> np.ndarray:
    """Q as a C-contiguous float array (N, nq) of valid configurations (a copy), or raise."""
    configurations = as_matrix(Q, robot.nq, "Q", rows="N", note=f" for robot '{robot.name}'")
    for i in range(configurations.shape[0]) if robot.unit_blocks else ():
        robot.validate_q(configurations[i], name=f"Q[{i}]")
    return configurations


def relative_kinematics(robot: Robot, Q: ArrayLike, frame_a: FrameRef, frame_b: FrameRef, *,
                        backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """T_ab and J_ab for N configurations at once.

    Args:
        Q: configurations, shape (N, nq) (or (nq,) for one).
        backend: "compiled", "python" (a loop over :mod:`reljac.relative`) or None: compiled when
            it is built, else python.

    Returns:
        (T, J): T (N, 4, 4) homogeneous poses of b in a; J (N, 6, nv) relative Jacobians
        expressed in a, rows [linear; angular].

    Raises:
        FrameNotFound, ConfigurationError (also backend="compiled" where the core is not built).
    """
    fa, fb = robot.frame_id(frame_a), robot.frame_id(frame_b)
    Q = as_configurations(robot, Q)
    if backend not in (None, "compiled", "python"):
        raise ConfigurationError(f"backend must be 'compiled', 'python' or None, got {backend!r}")
    if backend == "compiled":
        require_compiled()
    if backend == "compiled" or (backend is None and _core is not None):
        return _core.relative_kinematics(robot.model, fa, fb, Q)
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

"""reljac: relative Jacobians, task-priority IK and browser views for URDF robots, on Pinocchio.

Notation (used everywhere in reljac; a Markdown table, as the API reference renders it):

| symbol | meaning |
| --- | --- |
| `w` | the world frame (Pinocchio's `universe`) |
| `T_ab` | pose of frame b in frame a (`pin.SE3`), `R_ab`, `p_ab` its parts; subscripts cancel: `T_ac = T_ab * T_bc` |
| `J_a` | LOCAL_WORLD_ALIGNED frame Jacobian: [velocity of a's origin; angular velocity], world axes, (6, nv) |
| `J_ab` | relative Jacobian: b's motion *measured in* a, *expressed in* a, `[d/dt p_ab; w_ab] = J_ab @ v`, (6, nv) |
| `J_ab_in_c` | the same motion expressed in c: `blockdiag(R_ca, R_ca) @ J_ab` (c = b: T_ab's body Jacobian) |
| `q`, `v` | configuration (nq), velocity (nv): they differ with floating bases and continuous joints |

Units: metres, radians, seconds; gains in [1/s], time steps in [s].

The Pinocchio-backed API is imported lazily, so ``import reljac.reference`` (the pure-numpy
in-house kinematics) never loads Pinocchio.
"""

from __future__ import annotations

from . import program as _program

_program.catch_interrupts_while_starting()  # in the `reljac` program only: before any other import

import importlib  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

from . import robot_parts as _robot_parts  # noqa: E402
from .exceptions import (  # noqa: E402
    CollisionError,
    ConfigurationError,
    FrameNotFound,
    JointNotFound,
    ReljacError,
    ReljacWarning,
    SRDFError,
    SupportError,
    TaskError,
    URDFError,
)
from .version import __version__ as __version__  # noqa: E402


def _robot_collisions(robot: Any, kept: Any) -> Any:
    """``robot.collisions``: built by the collision room (loaded at first use)."""
    from .collision.state import robot_collisions

    return robot_collisions(robot, kept)


def _kept_collisions(model: Any) -> Any:
    """What a copy or pickle of a robot keeps of ``robot.collisions``."""
    from .collision.state import collision_state

    return collision_state(model)


_robot_parts.register("collisions", _robot_collisions, _kept_collisions)  # reljac.robot_parts says why here

_LAZY = {
    "Robot": "robot",
    "bundled_robots": "robot",
    "Kinematics": "relative",
    "relative_placement": "one_shot",
    "relative_jacobian": "one_shot",
    "relative_twist": "one_shot",
    "relative_jacobian_time_variation": "one_shot",
    "center_of_mass": "one_shot",
    "center_of_mass_jacobian": "one_shot",
    "SupportContact": "support",
    "SupportPolygon": "support",
    "support_polygon": "support",
    "ik": None,
    "collision": None,
    "reference": None,
    "Viewer": "viz",
    "PositionCost": "costs",
    "OrientationCost": "costs",
    "CostSum": "costs",
    "pose_cost": "costs",
    "BallJoint": "constraints",
    "Distance": "constraints",
    "Contact": "constraints",
    "effective_inverse_mass": "constraints",
    "manipulability": "analysis",
    "relative_manipulability": "analysis",
    "frame_manipulability": "analysis",
    "workspace_summary": "workspace",
}

__all__ = [
    "CollisionError",
    "ConfigurationError",
    "FrameNotFound",
    "JointNotFound",
    "ReljacError",
    "ReljacWarning",
    "SRDFError",
    "SupportError",
    "TaskError",
    "URDFError",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'reljac' has no attribute '{name}'")
    module = _LAZY[name]
    if module is None:  # a subpackage
        value = importlib.import_module(f".{name}", __name__)
    else:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .one_shot import center_of_mass as center_of_mass
    from .one_shot import center_of_mass_jacobian as center_of_mass_jacobian
    from .one_shot import relative_jacobian as relative_jacobian
    from .one_shot import relative_jacobian_time_variation as relative_jacobian_time_variation
    from .one_shot import relative_placement as relative_placement
    from .one_shot import relative_twist as relative_twist
    from .relative import Kinematics as Kinematics
    from .robot import Robot as Robot
    from .robot import bundled_robots as bundled_robots
    from .support import SupportContact as SupportContact
    from .support import SupportPolygon as SupportPolygon
    from .support import support_polygon as support_polygon

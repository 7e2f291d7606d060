"""Task-priority differential IK without a QP solver.

Levels of tasks, highest priority first, resolved by recursive null-space projection with
damped (singularity-robust) pseudo-inverses; joint position and velocity limits enforced by
Saturation in the Null Space. See :class:`Controller` (tracking, a step per control tick) and
:func:`solve` / :func:`solve_many` (finding a pose).
"""

from .controller import Controller
from .humanoid import ContactTask, HumanoidStack, humanoid_stack
from .limits.base import Limit, VelocityConstraint
from .limits.collision import CollisionAvoidance, CollisionAvoidanceTask
from .limits.joints import JointPositionLimit, JointVelocityLimit, ReversalDamping
from .limits.support import SupportRegion, SupportRegionTask
from .nlp import NLPResult, solve_nlp
from .search.solve import IKResult, Solver, solve, solve_many
from .solvers.backend import compiled_available, default_backend
from .solvers.damping import DampingPolicy
from .solvers.hierarchy import LevelReport
from .tasks import (
    FrameTask,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    Task,
    TaskRows,
    TaskTerms,
)
from .tasks.ball import BallTask
from .tasks.com import CoMTask
from .tasks.distance import DistanceTask
from .tasks.regions import ConeTask, HalfSpaceTask

__all__ = [
    "BallTask",
    "CoMTask",
    "CollisionAvoidance",
    "CollisionAvoidanceTask",
    "ConeTask",
    "ContactTask",
    "Controller",
    "DampingPolicy",
    "DistanceTask",
    "FrameTask",
    "HalfSpaceTask",
    "HumanoidStack",
    "IKResult",
    "JointPositionLimit",
    "JointVelocityLimit",
    "LevelReport",
    "Limit",
    "NLPResult",
    "PostureTask",
    "RelativeFrameTask",
    "RelativeOrientationTask",
    "RelativePositionTask",
    "ReversalDamping",
    "Solver",
    "SupportRegion",
    "SupportRegionTask",
    "Task",
    "TaskRows",
    "TaskTerms",
    "VelocityConstraint",
    "compiled_available",
    "default_backend",
    "humanoid_stack",
    "solve",
    "solve_many",
    "solve_nlp",
]

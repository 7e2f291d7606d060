"""Task-priority differential IK without a QP solver.

Levels of tasks, highest priority first, resolved by recursive null-space projection with
damped (singularity-robust) pseudo-inverses; joint position and velocity limits enforced by
Saturation in the Null Space. See :class:`Controller` (tracking, a step per control tick) and
:func:`solve` / :func:`solve_many` (finding a pose).
"""

from .backend import compiled_available, default_backend
from .balance import CoMTask, SupportRegion, SupportRegionTask
from .bounds import BallTask
from .collision_avoidance import CollisionAvoidance, CollisionAvoidanceTask
from .controller import Controller
from .distance import DistanceTask
from .hierarchy import DampingPolicy, LevelReport
from .humanoid import ContactTask, HumanoidStack, humanoid_stack
from .limits import JointPositionLimit, JointVelocityLimit, Limit, VelocityConstraint
from .nlp import NLPResult, solve_nlp
from .regions import ConeTask, HalfSpaceTask
from .solve import IKResult, Solver, solve, solve_many
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

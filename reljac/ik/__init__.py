"""Task-priority differential IK without a QP solver.

Levels of tasks, highest priority first, resolved by recursive null-space projection with
damped (singularity-robust) pseudo-inverses; joint position and velocity limits enforced by
Saturation in the Null Space. See :class:`Controller` and :func:`solve`.
"""

from .controller import Controller, IKResult, solve
from .hierarchy import DampingPolicy, LevelReport
from .limits import JointLimits
from .nlp import NLPResult, solve_nlp
from .tasks import (
    FrameTask,
    PostureTask,
    RelativeFrameTask,
    RelativeOrientationTask,
    RelativePositionTask,
    Task,
)

__all__ = [
    "Controller",
    "DampingPolicy",
    "FrameTask",
    "IKResult",
    "JointLimits",
    "LevelReport",
    "NLPResult",
    "PostureTask",
    "RelativeFrameTask",
    "RelativeOrientationTask",
    "RelativePositionTask",
    "Task",
    "solve",
    "solve_nlp",
]

"""IK tasks: an error e(q) that is zero at the target and its Jacobian de/dt = J v.

The controller asks every task for ``J v = -gain * e + feed_forward`` (gain in [1/s]). Rows can be
weighted (``weight``: a scalar or one number per error component; a zero weight masks that
component out). All tasks read the shared :class:`~reljac.relative.Kinematics` of the step, so one
kinematics pass serves every task.

Frame tasks use the SE(3) log: e = log6(T_t^-1 T_ab) = [translation part; rotation vector], in
the target frame's axes, with its exact Jacobian ``pin.Jlog6(T_t^-1 T_ab) @ J_ab_in_b``.
"""

from .base import Task, TaskRows, TaskTerms
from .frames import WORLD, FrameTask, RelativeFrameTask, RelativeOrientationTask, RelativePositionTask
from .posture import PostureTask

__all__ = [
    "WORLD",
    "FrameTask",
    "PostureTask",
    "RelativeFrameTask",
    "RelativeOrientationTask",
    "RelativePositionTask",
    "Task",
    "TaskRows",
    "TaskTerms",
]

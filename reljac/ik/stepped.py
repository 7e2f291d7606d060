"""What the compiled step reads of the controller it steps (a protocol).

:mod:`reljac.ik.controller` builds its :class:`~reljac.ik.compiled_step.CompiledStep` from itself; the
compiled step reads the controller's robot, its ``pin.Data``, its levels and limits, and its
``dt`` and damping policy. Typing that controller by this protocol rather than by the
:class:`~reljac.ik.controller.Controller` class keeps the import one way: the controller imports
the compiled step, never the reverse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from ..robot import Robot
    from .limits.base import Limit
    from .solvers.damping import DampingPolicy
    from .tasks import Task


class SteppedController(Protocol):
    """A controller as its compiled step sees it (:class:`~reljac.ik.Controller` is one)."""

    robot: Robot
    data: Any  # the robot's pin.Data the step computes in (shared with the controller)

    @property
    def levels(self) -> tuple[tuple[Task, ...], ...]:
        """The task levels, highest priority first."""
        ...

    @property
    def limits(self) -> tuple[Limit, ...]:
        """The limits held above every level."""
        ...

    @property
    def dt(self) -> float:
        """Control period [s]."""
        ...

    @property
    def damping(self) -> DampingPolicy:
        """The damping policy."""
        ...


__all__ = ["SteppedController"]

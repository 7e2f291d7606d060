"""Iterative IK: the controller stepped until every task converges, with the reason it stopped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import ConfigurationError
from ..relative import Kinematics
from ..robot import Robot
from ..validation import as_count, as_float
from .controller import Controller
from .hierarchy import LevelReport

CONVERGED, STALLED, ITERATION_CAP, UNREACHABLE = "converged", "stalled", "iteration cap", "level unreachable"


@dataclass
class IKResult:
    """Outcome of :func:`solve`.

    q: the configuration (nq,) (the best one found when not converged); converged: every
    counted task below tol; iterations: controller steps taken; errors: final error norms per
    task; reason: why it stopped ("converged", "stalled", "iteration cap" or "level
    unreachable"); message: one line saying so in words; reports: the last step's level reports.
    """

    q: np.ndarray
    converged: bool
    iterations: int
    errors: dict[str, dict[str, float]] = field(default_factory=dict)
    reason: str = CONVERGED
    message: str = ""
    reports: list[LevelReport] = field(default_factory=list)


def _why(reason: str, controller: Controller, iterations: int, tol: float) -> tuple[str, str]:
    """(reason, message): a stop explained by the first level whose tasks did not converge."""
    counted = {t.name for t in controller.tasks if t.counts_for_convergence}
    for k, report in enumerate(controller.last_reports):
        if not counted.intersection(report.tasks):
            continue
        if report.scale < 1.0 and (report.saturated_joints or report.saturated_constraints):
            held = ", ".join(report.saturated_joints + report.saturated_constraints)
            return UNREACHABLE, (f"level {k + 1} ({', '.join(report.tasks)}) cannot be met inside the limits: "
                                 f"scaled to {report.scale:.2f} with {held} saturated")
    slow = [t for t in controller.tasks if t.counts_for_convergence and t.gain * controller.dt < 0.05]
    hint = ""
    if slow:
        hint = (f"; the gain x dt of '{slow[0].name}' is {slow[0].gain * controller.dt:.3g}, so its error shrinks "
                f"by that fraction per iteration: use gains of about 0.1-0.5 / dt")
    what = "no improvement in the last iterations" if reason == STALLED else f"{iterations} iterations"
    return reason, f"stopped after {what} with errors above tol={tol:g}{hint}"


def solve(
    robot: Robot,
    q0: ArrayLike,
    levels: Any,
    *,
    tol: float = 1e-4,
    max_iters: int = 500,
    dt: float = 0.01,
    stall_iters: int = 200,
    **controller_options: Any,
) -> IKResult:
    """Iterate the controller from q0 until every task's errors are below `tol` [m, rad].

    Each iteration is one controller step of length `dt`, so a task's error shrinks by about
    ``gain * dt`` per iteration where nothing saturates: choose gains with gain * dt around
    0.1-0.5 (e.g. gain 20 [1/s] with the default dt = 0.01 s); the default gain 1 needs
    thousands of iterations. `controller_options` are :class:`Controller`'s keyword arguments.

    Tasks with ``counts_for_convergence = False`` (postures) do not count. An unreachable
    target ends with the closest configuration found (smallest sum of errors above tol) and
    ``converged=False``, after `max_iters` or earlier after `stall_iters` without improvement;
    the result's ``reason`` and ``message`` say which; never NaN.

    Raises:
        TaskError: a bad tol, max_iters or stall_iters (the rule: :mod:`reljac.validation`).
        ConfigurationError: a bad q0, or an unknown or bad controller option.
    """
    tol = as_float(tol, "tol", minimum=0.0, strict=True, valid="a positive number [m or rad]")
    max_iters = as_count(max_iters, "max_iters", minimum=0)
    stall_iters = as_count(stall_iters, "stall_iters", minimum=1)
    known = {"velocity_limits", "limit_gain", "position_margin", "damping", "constraints", "backend"}
    unknown = sorted(set(controller_options) - known)
    if unknown:
        raise ConfigurationError(f"solve() got unknown option(s) {', '.join(unknown)}; valid: "
                                 f"tol, max_iters, dt, stall_iters, {', '.join(sorted(known))}")
    controller = Controller(robot, levels, dt=dt, **controller_options)
    q = robot.validate_q(q0)
    counted = [t for t in controller.tasks if t.counts_for_convergence]

    def score(kin: Kinematics) -> float:  # how far above tol the task errors are, all tasks together
        return sum(max(max(t.error_norms(kin).values()) - tol, 0.0) for t in counted)

    best_q, best_score, since_best = q, None, 0
    reason = ITERATION_CAP
    for iteration in range(max_iters + 1):
        kin = Kinematics(robot, q, data=controller.data)
        s = score(kin)
        if best_score is None or s < best_score * (1.0 - 1e-9):
            best_q, best_score, since_best = q, s, 0
        else:
            since_best += 1
        if s == 0.0:
            return IKResult(q, True, iteration, controller.errors(q), CONVERGED, "converged",
                            controller.last_reports)
        if iteration == max_iters:
            break
        if since_best >= stall_iters:
            reason = STALLED
            break
        q = controller.step(q)
    reason, message = _why(reason, controller, iteration, tol)
    return IKResult(best_q, False, iteration, controller.errors(best_q), reason, message, controller.last_reports)

"""Optimisation-based IK: minimize a sum of frame costs with scipy's L-BFGS-B and exact gradients.

The objective is a :class:`~reljac.costs.CostSum` (positions ``|p - p_hat|^2`` [m^2] and quaternion
distances ``1 - (e . e_hat)^2``). Two parametrisations, chosen from the robot:

* every joint has one DoF (nq = nv; revolute, prismatic, mimic followers): x = q, gradient
  ``grad_q f`` (equal to the tangent gradient), box bounds = the joint limits;
* a floating base, continuous or other multi-coordinate joint: x lives in the tangent space at a
  chart centre q_c, ``q(x) = pin.integrate(q_c, x)``, gradient
  ``dIntegrate/dx^T grad_v f``. Joints with one DoF still move additively (``x_i = q_i - q_c,i``),
  so their limits become exact box bounds on x; quaternions and (cos, sin) pairs stay unit by
  construction and have no bounds. If a run ends unconverged, the chart is re-centred at the
  best q and L-BFGS-B restarts (within the iteration budget).

Convergence is judged like the controller's :func:`~reljac.ik.solve`: every term's error norm
(position [m], orientation angle [rad]) below `tol`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..costs import Cost, CostSum, as_cost
from ..exceptions import ConfigurationError, TaskError
from ..relative import Kinematics
from ..robot import Robot
from ..validation import as_count, as_float

if TYPE_CHECKING:
    import scipy.optimize

BOUNDS = ("joint limits", None)


@dataclass
class NLPResult:
    """Outcome of :func:`solve_nlp`, shaped like :class:`~reljac.ik.IKResult`.

    Attributes:
        q: the best configuration found (nq,), within the joint limits when bounds are on.
        converged: every term's error norm is below tol.
        iterations: L-BFGS-B iterations over all restarts.
        errors: {term name: {'position': m} or {'orientation': rad}} at q.
        cost: the objective's value at q.
        evaluations: objective + gradient evaluations.
        message: the optimiser's last message.
    """

    q: np.ndarray
    converged: bool
    iterations: int
    errors: dict[str, dict[str, float]] = field(default_factory=dict)
    cost: float = math.nan
    evaluations: int = 0
    message: str = ""


def _is_euclidean(robot: Robot) -> bool:
    """True when every joint with its own DoF has one coordinate (q lives in R^nq = R^nv)."""
    return all(robot.model.joints[j].nq == robot.model.joints[j].nv for j in range(1, robot.model.njoints)) \
        and robot.nq == robot.nv


def _one_dof_slots(robot: Robot) -> list[tuple[int, int]]:
    """(idx_q, idx_v) of joints with a single coordinate (their tangent coordinate is additive)."""
    model = robot.model
    return [(model.joints[j].idx_q, model.joints[j].idx_v) for j in range(1, model.njoints)
            if model.joints[j].nq == 1 and model.joints[j].nv == 1]


class _Chart:
    """Where L-BFGS-B searches: x = q (every joint one coordinate), or x in the tangent space at
    `center` with q = integrate(center, x). 1-DoF joints move additively in both."""

    def __init__(self, robot: Robot, center: np.ndarray, euclidean: bool) -> None:
        self.model, self.center, self.euclidean = robot.model, center, euclidean
        self.x0 = center.copy() if euclidean else np.zeros(robot.nv)

    def to_q(self, x: np.ndarray) -> np.ndarray:
        return x if self.euclidean else pin.integrate(self.model, self.center, x)

    def value_and_gradient(self, cost: Cost, kin: Kinematics, x: np.ndarray) -> tuple[float, np.ndarray]:
        """The cost and its gradient in x at q = to_q(x) (`kin` is the kinematics there)."""
        f, g_v = cost.evaluate(kin)
        if self.euclidean:
            return f, g_v
        return f, pin.dIntegrate(self.model, self.center, x, pin.ARG1).T @ g_v

    def box(self, robot: Robot, slots: list[tuple[int, int]]) -> list[tuple[float | None, float | None]]:
        """L-BFGS-B bounds on x: the position limits of the 1-DoF joints (infinite ones open)."""
        lo, hi = robot.lower_limits, robot.upper_limits
        box: list[tuple[float | None, float | None]] = [(None, None)] * robot.nv
        for iq, iv in slots:
            offset = 0.0 if self.euclidean else self.center[iq]
            box[iv] = (lo[iq] - offset if np.isfinite(lo[iq]) else None,
                       hi[iq] - offset if np.isfinite(hi[iq]) else None)
        return box


class _Search:
    """The best configuration found over every chart and restart, with the counts of iterations
    and evaluations; stops L-BFGS-B (StopIteration from its callback) once every error is below tol."""

    def __init__(self, robot: Robot, cost: CostSum, q0: np.ndarray, tol: float) -> None:
        self.robot, self.cost, self.tol = robot, cost, tol
        self.data = robot.new_data()  # ModelTooLarge when it does not fit
        self.iterations = self.evaluations = 0
        self.q, self.error = q0, self.max_error(q0)

    def kinematics(self, q: np.ndarray) -> Kinematics:
        return Kinematics(self.robot, q, data=self.data)

    def max_error(self, q: np.ndarray) -> float:
        errors = self.cost.term_errors(self.kinematics(q)).values()
        return max((e for errs in errors for e in errs.values()), default=0.0)

    @property
    def converged(self) -> bool:
        return self.error < self.tol

    def keep_if_better(self, q: np.ndarray) -> None:
        error = self.max_error(q)
        if error < self.error:
            self.q, self.error = q.copy(), error

    def run(self, chart: _Chart, box: list | None, budget: int) -> scipy.optimize.OptimizeResult | None:
        """One L-BFGS-B run of at most `budget` iterations on `chart`; None when it stopped
        because every error is below tol."""

        def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
            self.evaluations += 1
            return chart.value_and_gradient(self.cost, self.kinematics(chart.to_q(x)), x)

        def callback(x: np.ndarray) -> None:
            self.iterations += 1
            self.keep_if_better(chart.to_q(x))
            if self.converged:
                raise StopIteration  # scipy >= 1.11 stops cleanly; older versions propagate it

        import scipy.optimize  # here: the package's import stays light (scipy.optimize takes about a second)

        try:
            with np.errstate(over="ignore", invalid="ignore"):  # huge steps in a line search overflow harmlessly
                result = scipy.optimize.minimize(
                    fun, chart.x0, jac=True, method="L-BFGS-B", bounds=box, callback=callback,
                    options={"maxiter": budget, "ftol": 1e-15, "gtol": 1e-12, "maxls": 40},
                )
        except StopIteration:
            return None
        self.keep_if_better(chart.to_q(result.x))
        return result


def solve_nlp(
    robot: Robot,
    q0: ArrayLike,
    objectives: Cost | Sequence[Cost],
    *,
    bounds: str | None = "joint limits",
    tol: float = 1e-4,
    max_iters: int = 500,
    restarts: int = 3,
) -> NLPResult:
    """Minimize the weighted costs from q0 (nq,) with L-BFGS-B and analytic gradients.

    Args:
        objectives: a Cost, a CostSum, or a list of costs (summed).
        bounds: "joint limits" (the URDF's position limits; infinite ones left open) or None.
        tol: convergence threshold on every term's error norm [m or rad].
        max_iters: L-BFGS-B iterations in total.
        restarts: chart re-centrings allowed for robots with multi-coordinate joints.

    Returns:
        NLPResult with the best q found (never NaN); ``converged`` tells whether tol was met.

    Raises:
        ConfigurationError: a bad q0, or a robot without degrees of freedom (nv = 0: nothing to
            optimise); TaskError: bad objectives, bounds, tol, max_iters or restarts.
    """
    cost = as_cost(objectives)
    q0 = robot.normalize(robot.validate_q(q0, name="q0"))
    if bounds not in BOUNDS:
        raise TaskError(f"bounds must be 'joint limits' or None, got {bounds!r}")
    tol = as_float(tol, "tol", minimum=0.0, strict=True, valid="a positive number [m or rad]")
    max_iters, restarts = as_count(max_iters, "max_iters"), as_count(restarts, "restarts")
    if robot.nv == 0:
        raise ConfigurationError(f"robot '{robot.name}' has no degrees of freedom (nv = 0): "
                                 "there is nothing to optimise")
    slots = _one_dof_slots(robot)  # only these joints have position limits L-BFGS-B can enforce
    if bounds is not None:
        lo, hi = robot.lower_limits, robot.upper_limits
        for iq, _ in slots:
            q0[iq] = min(max(q0[iq], lo[iq]), hi[iq])
    search = _Search(robot, cost, q0, tol)
    with np.errstate(all="ignore"):
        value, gradient = cost.evaluate(search.kinematics(q0))
    if not (math.isfinite(value) and np.isfinite(gradient).all()):
        raise TaskError(f"the cost at q0 is {value:g} with a gradient of {np.abs(gradient).max():g}: its weights and "
                        "targets are too large to compute with; scale them down")
    euclidean = _is_euclidean(robot)
    message = "no iteration"
    for _ in range(1 if euclidean else 1 + restarts):
        budget = max_iters - search.iterations
        if search.converged or budget <= 0:
            break
        chart = _Chart(robot, search.q, euclidean)
        result = search.run(chart, chart.box(robot, slots) if bounds is not None else None, budget)
        if result is None:
            break
        message = str(result.message)
        if result.nit == 0:
            break
    q = robot.normalize(search.q)
    kin = search.kinematics(q)
    if search.converged:
        message = f"converged: every error norm below tol = {tol:g}"
    return NLPResult(
        q=q, converged=search.converged, iterations=search.iterations, errors=cost.term_errors(kin),
        cost=cost.evaluate(kin)[0], evaluations=search.evaluations, message=message,
    )

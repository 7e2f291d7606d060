"""The task base: :class:`Task` (what every task is asked for), :class:`TaskTerms` (e, J and the
feed-forward at one configuration) and :class:`TaskRows` (a task's rows in the controller's system).

The built-in tasks are in :mod:`reljac.ik.tasks.frames` and :mod:`reljac.ik.tasks.posture`;
:mod:`reljac.ik.tasks` gathers them (and documents the error conventions).
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ...exceptions import TaskError
from ...relative import Kinematics
from ...robot import Robot
from ...validation import as_float, as_vector, dims, real_array, short_repr
from ..description import Description, Observable, frozen
from ..kinds import register


class TaskTerms(NamedTuple):
    """A task at one configuration (what :meth:`Task.compute` returns): ``error`` e (size,),
    ``jacobian`` J (size, nv) with de/dt = J v, and ``feed_forward`` (size,), the rate the
    target's own motion asks for [units of e / s]. A plain 3-tuple works as well."""

    error: np.ndarray
    jacobian: np.ndarray
    feed_forward: np.ndarray


@dataclass
class TaskRows:
    """A task's rows in the controller's system ``A v = b`` (masked rows dropped).

    A: (m, nv) weighted Jacobian W J, or None when A = identity_scale * diag(mask) (then b has
    zeros on the masked rows, m = nv); b: (m,) weighted desired rate W (-gain e + feed-forward)
    [m/s, rad/s]; feedback: (m,) its feedback part W gain e (without the feed-forward), from
    which the controller's error-dependent damping is computed.
    """

    A: np.ndarray | None
    b: np.ndarray
    feedback: np.ndarray
    identity_scale: float | None = None
    mask: np.ndarray | None = None
    # a task with bounds (Task.set_bounds): lower <= A v <= upper, (m,) each [same units as b]
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None

    def dense(self, nv: int) -> tuple[np.ndarray, np.ndarray]:
        """(A, b) with A explicit, masked rows dropped."""
        if self.A is not None:
            return self.A, self.b
        kept = np.ones(nv, dtype=bool) if self.mask is None else self.mask > 0
        scale = 1.0 if self.identity_scale is None else self.identity_scale
        return scale * np.eye(nv)[kept], self.b[kept]

    def dense_bounds(self, nv: int) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of the rows :meth:`dense` gives; (b, b) for a task without bounds."""
        if self.lower is None or self.upper is None:
            b = self.dense(nv)[1]
            return b, b
        if self.A is not None:
            return self.lower, self.upper
        kept = np.ones(nv, dtype=bool) if self.mask is None else self.mask > 0
        return self.lower[kept], self.upper[kept]


class Task(ABC, Observable):
    """Base class: subclasses define ``size``, :meth:`compute` and a target.

    Args:
        gain: [1/s] rate at which the error is driven to zero (error ~ exp(-gain t)).
        weight: scalar or (size,) per-component weight; zeros mask components out.
        max_speed: cap on the norm of the feedback velocity gain * e (step-size clamping) [m/s or
            rad/s; for 6D frame tasks it caps the linear and the angular halves separately, and
            a pair (linear, angular) may be given]. None: no cap.
        name: label used in reports (default: derived from the frames).

    Every public attribute (gain, weight, max_speed, target, frames) can be changed between
    steps, on either backend: the controllers using the task hear about it.
    """

    size = 6
    counts_for_convergence = True
    _bounds: tuple[np.ndarray, np.ndarray] | None = None  # (lower, upper) on e: see set_bounds
    # which parts of e max_speed caps: (slice of e, index in the (linear, angular) pair)
    speed_parts: tuple[tuple[slice, int], ...] = ((slice(None), 0),)

    def __init__(self, *, gain: float = 1.0, weight: ArrayLike = 1.0, max_speed: ArrayLike | None = None,
                 name: str | None = None) -> None:
        self._bounds = None
        self.gain = gain
        self.max_speed = max_speed
        self.name = type(self).__name__ if name is None or (isinstance(name, str) and not name) else name
        self.set_weight(weight)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {getattr(self, 'name', '?')!r}>"

    @property
    def name(self) -> str:
        """The task's name (text): reports, errors and solve_many's targets name it so."""
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        if not isinstance(value, str):  # (an array raised numpy's "truth value", a list failed later unhashable)
            raise TaskError(f"a task's name must be text, not {type(value).__name__} {short_repr(value)}")
        self._name = value

    @property
    def gain(self) -> float:
        """[1/s] rate at which the error is driven to zero."""
        return self._gain

    @gain.setter
    def gain(self, value: float) -> None:
        self._gain = as_float(value, "gain [1/s]", minimum=0.0)
        self._changed()

    @property
    def max_speed(self) -> np.ndarray | None:
        """(linear, angular) caps on the feedback speed [m/s, rad/s], or None (a copy)."""
        return None if self._max_speed is None else self._max_speed.copy()

    @max_speed.setter
    def max_speed(self, value: ArrayLike | None) -> None:
        if value is None:
            self._max_speed = None
        else:
            pair = as_vector(value, 2, "max_speed (linear, angular)") if dims(value) \
                else np.full(2, as_float(value, "max_speed"))
            if not (pair > 0).all():
                raise TaskError(f"max_speed must be positive, got {value}")
            self._max_speed = pair
        self._changed()

    def set_weight(self, weight: ArrayLike) -> None:
        """Per-component weights (scalar or (size,)); a zero masks the component out."""
        what = f"weight of task '{self.name}'"
        if dims(weight) == 0:  # (a vector's range: a scalar of 1e300 overflowed a search's costs)
            weight = np.full(self.size, as_float(weight, what))
        w = as_vector(weight, self.size, what)
        if (w < 0).any():
            raise TaskError(f"weights of task '{self.name}' must be finite and >= 0, got {w}")
        self._weight = w
        self._rows = np.flatnonzero(w > 0)
        self._unit_weights = bool(np.all(w == 1.0))
        self._changed()

    @property
    def weight(self) -> np.ndarray:
        """(size,) per-component weights (read-only array: assign a new value or call set_weight)."""
        view = self._weight.view()
        view.flags.writeable = False
        return view

    @weight.setter
    def weight(self, value: ArrayLike) -> None:
        self.set_weight(value)

    @property
    def has_weight(self) -> bool:
        """Some component's weight is positive: the task has rows (one of weight 0 has none; it
        decides nothing in a search)."""
        return bool(np.any(np.asarray(self.weight) > 0))

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(lower, upper) bounds on the error e, (size,) each, or None: the task drives e to 0 (copies)."""
        return None if self._bounds is None else (self._bounds[0].copy(), self._bounds[1].copy())

    def set_bounds(self, lower: ArrayLike | None = None, upper: ArrayLike | None = None) -> None:
        """Bounds instead of a target: keep ``lower <= e <= upper`` per component of the error e
        [units of e], a scalar or (size,) each; None (or -inf / +inf) leaves a side open. Inside
        with margin the task costs nothing; outside, its rows drive e back to the bound at the
        task's gain (capped by max_speed). ``set_bounds()`` with no bound clears them. A task
        with bounds makes inequality rows (:mod:`reljac.ik.solvers.inequality`), on either backend; they
        can be set, changed or cleared between steps of a controller using the task.

        Raises:
            TaskError: a bound NaN or of the wrong size, a lower bound above its upper bound, a
                lower bound of +inf or an upper bound of -inf (no error meets them).
        """
        if lower is None and upper is None:
            self._bounds = None
            self._changed()
            return
        sides = []
        for side, given, open_value in (("lower", lower, -np.inf), ("upper", upper, np.inf)):
            arr = np.full(1, open_value) if given is None else real_array(given)
            x = None if arr is None else np.broadcast_to(arr.reshape(-1), self.size) if arr.size in (1, self.size) \
                else None
            if x is None or np.isnan(x).any():
                raise TaskError(f"{side} bound of task '{self.name}' must be a number or {self.size} numbers "
                                f"(+-inf for an open side), got {short_repr(given)}")
            sides.append(x.astype(float))
        for side, x, shut in (("lower", sides[0], np.inf), ("upper", sides[1], -np.inf)):
            if (x == shut).any():
                raise TaskError(f"{side} bound of task '{self.name}' is {shut} (component "
                                f"{int(np.flatnonzero(x == shut)[0])}): no error meets it; use {-shut} (or None) "
                                "for an open side")
        if (sides[0] > sides[1]).any():
            i = int(np.flatnonzero(sides[0] > sides[1])[0])
            raise TaskError(f"task '{self.name}': lower bound {sides[0][i]} above upper bound {sides[1][i]} "
                            f"(component {i})")
        self._bounds = (sides[0], sides[1])
        self._changed()

    def bound_rates(self, e: np.ndarray, ff: np.ndarray, *,
                    search: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(b, feedback, lower, upper) (size,) each of a task with bounds: the rates [units of e /
        s] de/dt must keep, ``ff + gain (bound - n) - capped(gain (e - n))`` with n the nearest
        point of the bounds to e (de/dt in [lower, upper] leaves any rate inside them free, and
        asks to come back at the gain from outside); b = ff - capped(gain (e - n)). search: the
        rows of a search's Newton step (:mod:`reljac.ik.search.local_search`): gain 1 and no speed cap, so
        that b = ff - (e - n) and [lower, upper] = ff + [lower - e, upper - e]: the whole way
        into the bounds in one step."""
        assert self._bounds is not None  # called for tasks with bounds
        low, high = self._bounds
        nearest = np.clip(e, low, high)
        gain = 1.0 if search else self._gain
        feedback = e - nearest if search else self._feedback(e - nearest)
        b = ff - feedback
        with np.errstate(invalid="ignore"):  # gain 0 x inf: an open side stays open
            lower = np.where(np.isfinite(low), b + gain * (low - nearest), -np.inf)
            upper = np.where(np.isfinite(high), b + gain * (high - nearest), np.inf)
        return b, feedback, lower, upper

    def violation(self, e: np.ndarray) -> np.ndarray:
        """How far e (size,) lies outside the task's bounds, per component [units of e]:
        e - clip(e, lower, upper), 0 inside; e itself for a task without bounds (its bounds are
        the point 0)."""
        if self._bounds is None:
            return np.asarray(e, dtype=float)
        return e - np.clip(e, *self._bounds)

    def described_parameters(self) -> dict[str, Any]:
        """The fields every task kind's description has, written once: ``gain`` [1/s], ``weight``
        (size,), ``max_speed`` (linear, angular) or None, and the bounds ``lower`` and ``upper``
        (size,) each, or None (no bounds) (read-only copies)."""
        bounds = self._bounds
        return {"gain": self._gain, "weight": frozen(self._weight),
                "max_speed": None if self._max_speed is None else frozen(self._max_speed),
                "lower": None if bounds is None else frozen(bounds[0]),
                "upper": None if bounds is None else frozen(bounds[1])}

    def description(self, robot: Robot) -> Description | None:
        """What the compiled step needs to compute this task's rows itself (see
        :mod:`reljac.ik.description`), or None: its rows are computed in Python every step."""
        return None

    def __init_subclass__(cls, kind: str | None = None, **kwargs: Any) -> None:
        """A subclass statement's ``kind="key"`` registers it (:mod:`reljac.ik.kinds`)."""
        super().__init_subclass__(**kwargs)
        if kind is not None:
            register(kind, cls)
        init = cls.__dict__.get("__init__")
        if init is not None:  # help(cls) shows gain, weight, max_speed, name instead of **kwargs
            init.__signature__ = _forwarded_signature(init, super(cls, cls).__init__)
        # a subclass that changes how its rows are computed, without describing itself anew,
        # is not what its base's description says: it runs in Python. The built-in tasks (any
        # module of reljac.ik, as for Limit) describe themselves where their rows differ.
        if not cls.__module__.startswith("reljac.ik.") and "description" not in cls.__dict__ and any(
                m in cls.__dict__ for m in ("compute", "rows", "weighted", "_feedback", "error", "set_weight")):
            cls.description = Task.description  # type: ignore[method-assign]

    @abstractmethod
    def compute(self, kin: Kinematics) -> TaskTerms:
        """(e, J, feed_forward) at kin's configuration: shapes (size,), (size, nv), (size,)."""

    def weighted(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray]:
        """Rows (A, b) of the level's system: A = W J, b = W (-gain e + feed_forward), masked rows dropped."""
        return self.rows(kin).dense(kin.model.nv)

    def _feedback(self, e: np.ndarray) -> np.ndarray:
        """gain * e [units of e / s], capped by max_speed (a new array)."""
        feedback = self._gain * e
        if self._max_speed is not None:
            for part, which in self.speed_parts:
                cap = self._max_speed[which]
                norm = float(np.linalg.norm(feedback[part]))
                if norm > cap:
                    feedback[part] *= cap / norm
        return feedback

    def rows(self, kin: Kinematics) -> TaskRows:
        """The task's rows at kin's configuration: A = W J, b = W (-gain e + feed_forward)."""
        e, J, ff = self.compute(kin)
        if self._bounds is not None:
            b, feedback, lower, upper = self.bound_rates(np.asarray(e, dtype=float), np.asarray(ff, dtype=float))
            w = self.weight[self._rows]
            return TaskRows(w[:, None] * np.asarray(J)[self._rows], w * b[self._rows], w * feedback[self._rows],
                            lower=w * lower[self._rows], upper=w * upper[self._rows])
        feedback = self._feedback(e)
        if self._unit_weights:  # the common case: no copies
            return TaskRows(J, ff - feedback, feedback)
        w = self.weight[self._rows]
        fb = w * feedback[self._rows]
        return TaskRows(w[:, None] * J[self._rows], w * ff[self._rows] - fb, fb)

    def error_norms(self, kin: Kinematics) -> dict[str, float]:
        """Norms of the (masked) error for reports: e.g. {'position': m, 'orientation': rad}; for
        a task with bounds, of its violation (:meth:`violation`: 0 inside the bounds)."""
        e = self.violation(self.compute(kin)[0])[self._rows]
        return {"error": float(np.linalg.norm(e))}


def _forwarded_signature(init: Any, base_init: Any) -> inspect.Signature:
    """`init`'s signature with its ``**kwargs`` replaced by the keyword-only parameters of
    `base_init` (whose own signature was made so in turn) it forwards them to."""
    sig = inspect.signature(init)
    own = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    if len(own) == len(sig.parameters):
        return sig
    names = {p.name for p in own}
    forwarded = [p for p in inspect.signature(base_init).parameters.values()
                 if p.kind is p.KEYWORD_ONLY and p.name not in names]
    leading = [p for p in own if p.kind is not p.KEYWORD_ONLY]
    return sig.replace(parameters=[*leading, *(p for p in own if p.kind is p.KEYWORD_ONLY), *forwarded])


class TargetedTask(Task):
    """A task with a target (None until ``set_target``) and the target's velocity for feed-forward
    ((size,), zero by default): what the frame tasks and CoMTask share. Subclasses define
    ``set_target(target, velocity=None)`` and read the target through :meth:`_require_target`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._target: Any = None  # the subclass's: pin.SE3, (3,) position, (3, 3) rotation, (size,) point
        self._target_velocity = np.zeros(self.size)

    @property
    def target(self) -> Any:
        """The target (None until set_target); a copy: change it with set_target."""
        return None if self._target is None else self._target.copy()

    @target.setter
    def target(self, value: Any) -> None:
        self.set_target(value)

    @property
    def target_velocity(self) -> np.ndarray:
        """The target's velocity for feed-forward, (size,) (a copy)."""
        return self._target_velocity.copy()

    @target_velocity.setter
    def target_velocity(self, value: Any) -> None:
        self._set_target_velocity(value)
        self._changed()

    def set_target(self, target: Any, velocity: ArrayLike | None = None) -> None:  # pragma: no cover - subclasses
        raise NotImplementedError

    def clear_target(self) -> None:
        """No target, as before the first set_target (what ``solve_many`` leaves a task it set
        that had none)."""
        self._target = None
        self._target_velocity = np.zeros(self.size)
        self._changed()

    def _set_target_velocity(self, velocity: ArrayLike | None) -> None:
        self._target_velocity = self._checked_target_velocity(velocity)

    def _checked_target_velocity(self, velocity: ArrayLike | None) -> np.ndarray:
        """A target velocity (size,), zero for None; TaskError if it is not `size` finite numbers.
        A set_target checks it before it changes anything (a call that raises changes nothing)."""
        return np.zeros(self.size) if velocity is None else \
            as_vector(velocity, self.size, f"target velocity of task '{self.name}'")

    def _require_target(self) -> Any:
        if self._target is None:
            raise TaskError(f"task '{self.name}' has no target: call set_target first")
        return self._target

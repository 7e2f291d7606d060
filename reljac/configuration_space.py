"""ConfigurationSpace: a model's configurations q and velocities v, by joint name.

The base of :class:`reljac.Robot` above :class:`~reljac.model_index.ModelIndex`: q and v checked
and normalized, the neutral, random, reference and named (SRDF) configurations, and joint names
<-> values of q and v. The work is :mod:`reljac.joint_space`'s; no file I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from . import joint_space
from .compiled_core import Core
from .joint_space import MAX_SQUARE, Value
from .model_index import ModelIndex
from .validation import as_rng

if TYPE_CHECKING:  # pragma: no cover
    from .srdf import SRDF


class ConfigurationSpace(ModelIndex):
    """q (nq,) and v (nv,) of a ``pin.Model`` by joint name (see :class:`reljac.Robot`, which
    documents these methods)."""

    srdf: SRDF | None  # named configurations (group states)
    reference_posture: str | None  # the SRDF state reference_configuration starts from

    # ----------------------------------------------------------------- configurations
    def validate_q(self, q: ArrayLike, *, name: str = "q", copy: bool = True) -> np.ndarray:
        """Return q as a float array of shape (nq,), or raise ConfigurationError.

        Checks the shape, finiteness, and unit norm of quaternion / (cos, sin) blocks
        (tolerance 1e-6; use ``robot.normalize(q)`` on a drifting q). With ``copy=False`` a
        float64 array of the right shape is returned as it is (for read-only one-shot uses).
        """
        core = Core.module if Core.loaded else Core.get()
        if core is not None:  # the same checks in C++ on a float64 (nq,) array: True when it passes
            if core.configuration_ok(self.model, q):  # (then q is a numpy array)
                checked: np.ndarray = q  # type: ignore[assignment]
                return checked.copy() if copy else checked
        elif (type(q) is np.ndarray and q.dtype == np.float64 and q.shape == self._q_shape
                and not self.unit_blocks and np.vdot(q, q) < MAX_SQUARE):  # vdot: no overflow warning
            return q.copy() if copy else q  # fast path of the checks below (False for NaN, inf and huge entries)
        q = joint_space.as_vector(self, q, self.nq, name, tangent=False, copy=copy)
        joint_space.check_unit_blocks(self, q, name)
        return q

    def validate_v(self, v: ArrayLike, *, name: str = "v") -> np.ndarray:
        """Return a velocity-like vector as a float array of shape (nv,), or raise."""
        return joint_space.as_vector(self, v, self.nv, name, tangent=True)

    def normalize(self, q: ArrayLike) -> np.ndarray:
        """q with its quaternion and (cos, sin) blocks normalized (pin.normalize).

        Raises:
            ConfigurationError: a block is zero (it has no direction to keep).
        """
        return joint_space.normalize(self, q)

    def neutral(self) -> np.ndarray:
        """The neutral configuration (zero angles, identity quaternions), shape (nq,)."""
        return pin.neutral(self.model)

    def random_configuration(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """A random configuration inside the position limits, shape (nq,).

        Unbounded revolute and continuous joints draw angles in [-pi, pi]; unbounded translations
        (floating bases) draw in [-1, 1] m; quaternions are uniform on SO(3); limits beyond
        +-1e100 (:data:`MAX_COORDINATE`) are drawn within +-1e100.
        """
        return joint_space.random_configuration(self, as_rng(rng))

    def q_from_joint_values(self, values: Mapping[str, object], start: ArrayLike | None = None) -> np.ndarray:
        """Configuration q (nq,) from {joint name: value} (e.g. a joint-state message); the
        inverse of :meth:`joint_values`.

        Joints not named keep their values in `start` (nq,) (default: the neutral
        configuration; ``start=robot.reference_configuration()`` changes only the named joints
        of the robot's usual pose). A continuous joint takes its angle [rad]; a joint with
        several values (floating base: x y z qx qy qz qw) a sequence of them. Mimic joints
        follow their leader and cannot be set. `start` is not modified.

        Raises:
            JointNotFound: unknown, fixed, locked or mimic joint name.
            ConfigurationError: a bad `start`, a non-finite value, one of the wrong size, or a
                quaternion that is not unit.
        """
        q = self.neutral() if start is None else self.validate_q(start, name="start")  # (a copy)
        q = joint_space.write_values(self, values, q)
        return self.validate_q(q, name="q from joint values")

    def joint_values(self, q: ArrayLike) -> dict[str, Value]:
        """{joint name: value} at q (nq,): a number per one-DoF joint [rad or m], the angle of a
        continuous joint, a tuple of q entries for a joint with several (a floating base)."""
        return joint_space.joint_values(self, q)

    def joint_velocities(self, v: ArrayLike) -> dict[str, Value]:
        """{joint name: velocity} of v (nv,) [rad/s or m/s]: a number, or a tuple for a joint
        with several velocities; the inverse of :meth:`v_from_joint_velocities`."""
        return joint_space.joint_velocities(self, v)

    def v_from_joint_velocities(self, values: Mapping[str, object]) -> np.ndarray:
        """v (nv,) from {joint name: velocity}; joints not named have zero velocity."""
        return joint_space.v_from_joint_velocities(self, values)

    @property
    def q_names(self) -> list[str]:
        """The joint each entry of q belongs to, (nq,) names: a joint of several values (a free
        flyer's 7, a continuous joint's cos and sin) repeats its name; mimic followers and fixed
        joints, which have no entry, are not listed (what labels the columns of a recorded q)."""
        model = self.model
        return [model.names[j] for j in self.dof_joint_ids for _ in range(model.joints[j].nq)]

    # ----------------------------------------------------------------- SRDF and locked joints
    @property
    def configuration_names(self) -> list[str]:
        """Names of the SRDF's named configurations (group states), in file order."""
        return list(self.srdf.group_states) if self.srdf is not None else []

    def configuration(self, name: str) -> np.ndarray:
        """The SRDF's named configuration (a group_state) as q (nq,).

        Joints the state does not name stay at neutral; joints it names that this robot does not
        move (fixed, locked or mimic) are left out; quaternion and (cos, sin) blocks are normalized.

        Raises:
            SRDFError: no SRDF, an unknown state (near matches listed), a joint the robot does not
                have, or a value of the wrong size.
        """
        return joint_space.named_configuration(self, name)

    def reference_configuration(self) -> np.ndarray:
        """The robot's reference configuration, inside its position limits; shape (nq,): its
        :attr:`reference_posture` (e.g. Panda's 'default') over the neutral configuration, whose
        one-DoF joints outside their limits take the middle of them (a posture value: the nearest
        limit). PostureTask's default target; where :meth:`locked` and the default pairs start."""
        base = joint_space.inside_limits(self, self.neutral(), middle=True)
        if not self.reference_posture:
            return base
        q = joint_space.named_configuration(self, self.reference_posture, base)
        return joint_space.inside_limits(self, q, middle=False)

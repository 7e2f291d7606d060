"""ReferenceRobot: the public face of the in-house kinematics, and ReferenceKinematics, its per-q answers.

Every query takes q of shape (nq,), answered with unbatched shapes (placements (4, 4), Jacobians
(6, nv)), or a batch of shape (N, nq), answered with a leading batch axis ((N, 4, 4), (N, 6, nv)).
Frames are named (see :mod:`reljac.reference.model`); ``universe`` is the world frame w.
Jacobians have rows [linear; angular] and shape (6, nv) in the reference velocity layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from reljac.exceptions import FrameNotFound, TaskError, suggest
from reljac.reference import configuration
from reljac.reference.jacobians import (
    cross_product_jacobian,
    relative_cross_product_jacobian,
    to_batch_first,
    to_batch_last,
)
from reljac.reference.kinematics import ForwardKinematics, ForwardPlan, to_matrices
from reljac.reference.model import KinematicTree
from reljac.reference.poe import poe_world_aligned_jacobian
from reljac.reference.relative import express_in, relative_jacobian_in_world, relative_placement
from reljac.reference.urdf import parse_urdf_file, parse_urdf_string

#: Jacobian constructions: the geometric cross-product one and the product-of-exponentials one.
METHODS = ("cross", "poe")
#: Keywords of `expressed_in` (they take precedence over frames of the same name).
EXPRESSED_IN_KEYWORDS = ("a", "b", "world")


def _check_method(method: Any) -> str:
    if not isinstance(method, str) or method not in METHODS:
        raise TaskError(f"method {method!r} is not one of {', '.join(repr(m) for m in METHODS)}")
    return method


class ReferenceKinematics:
    """Kinematics of one configuration (or one batch), computed on demand and cached.

    Obtain it with :meth:`ReferenceRobot.kinematics`; ask it as many questions as needed.
    Internally poses and Jacobians are batch-last (see :mod:`reljac.reference.kinematics`); every
    answer is converted to the public shapes.
    """

    def __init__(self, robot: ReferenceRobot, q: ArrayLike) -> None:
        self.robot = robot
        tree = robot.tree
        self.q, self.batched = configuration.check_configuration(tree, q)  # q: (N, nq)
        self._forward = ForwardKinematics(tree, robot._plan, self.q)
        self._jacobians: dict[tuple[int, str], np.ndarray] = {}

    def _answer(self, array: np.ndarray) -> np.ndarray:
        return array if self.batched else array[0]

    def _body(self, frame: str) -> int:
        return self.robot.tree.frame_body(frame)

    def placement(self, frame: str) -> np.ndarray:
        """``T_wf``, the pose of `frame` in the world: (4, 4), or (N, 4, 4) for a batch."""
        return self._answer(to_matrices(self._forward.frame(self._body(frame))))

    def placements(self) -> dict[str, np.ndarray]:
        """``T_wf`` of every frame, by frame name."""
        return {name: self.placement(name) for name in self.robot.tree.frame_names}

    def _world_aligned(self, body: int, method: str) -> np.ndarray:
        """World-aligned Jacobian of a body's frame, batch-last (nv, 6, N), cached."""
        key = (body, _check_method(method))
        if key not in self._jacobians:
            if method == "cross":
                self._jacobians[key] = cross_product_jacobian(self._forward, body)
            else:
                jacobian = poe_world_aligned_jacobian(self.robot.tree, self.q, body)
                self._jacobians[key] = to_batch_last(jacobian)
        return self._jacobians[key]

    def jacobian(self, frame: str, *, method: str = "cross") -> np.ndarray:
        """World-aligned Jacobian of `frame` (Pinocchio's LOCAL_WORLD_ALIGNED).

        Rows ``[d/dt p_wf; w_wf]``: the velocity of the frame's origin and its angular velocity, both
        in world coordinates. Shape (6, nv), or (N, 6, nv) for a batch.

        Args:
            method: "cross" (cross-product construction) or "poe" (product of exponentials).
        """
        return self._answer(to_batch_first(self._world_aligned(self._body(frame), method)))

    def body_jacobian(self, frame: str, *, method: str = "cross") -> np.ndarray:
        """Jacobian of `frame`'s twist expressed in the frame itself (Pinocchio's LOCAL): (6, nv)
        or (N, 6, nv)."""
        body = self._body(frame)
        return self._answer(express_in(self._forward.frame(body), self._world_aligned(body, method)))

    def relative_placement(self, frame_a: str, frame_b: str) -> np.ndarray:
        """``T_ab = T_wa^-1 T_wb``, the pose of b in a: (4, 4), or (N, 4, 4) for a batch."""
        cols_a = self._forward.frame(self._body(frame_a))
        cols_b = self._forward.frame(self._body(frame_b))
        return self._answer(to_matrices(relative_placement(cols_a, cols_b)))

    def relative_jacobian(
        self, frame_a: str, frame_b: str, expressed_in: str = "a", *, method: str = "cross"
    ) -> np.ndarray:
        """Jacobian of b's motion measured in a: ``[d/dt p_ab; w_ab] = J_ab @ v`` expressed in a.

        Args:
            expressed_in: "a" (J_ab), "b" (the body Jacobian of T_ab), "world", or any frame name c
                (both 3-row blocks rotated by R_ca = R_wc^T R_wa).
            method: which frame Jacobians to compose, "cross" or "poe".

        Returns:
            Shape (6, nv), or (N, 6, nv) for a batch.

        Raises:
            FrameNotFound: if a frame name (or `expressed_in`) is not in the robot.
            TaskError: if `method` is not "cross" or "poe".
        """
        _check_method(method)
        body_a, body_b = self._body(frame_a), self._body(frame_b)
        body_c = self._expressed_in_body(expressed_in, body_a, body_b)
        if method == "cross":  # straight from the joints that move one frame and not the other
            jacobian = relative_cross_product_jacobian(self._forward, body_a, body_b)
        else:  # composed from the two frames' Jacobians
            jacobian = relative_jacobian_in_world(
                self._forward.frame(body_a)[3],
                self._forward.frame(body_b)[3],
                self._world_aligned(body_a, method),
                self._world_aligned(body_b, method),
            )
        if body_c == 0:
            return self._answer(to_batch_first(jacobian))
        return self._answer(express_in(self._forward.frame(body_c), jacobian))

    def _expressed_in_body(self, expressed_in: str, body_a: int, body_b: int) -> int:
        if expressed_in == "a":
            return body_a
        if expressed_in == "b":
            return body_b
        if expressed_in == "world":
            return 0
        tree = self.robot.tree
        if expressed_in in tree.frame_names:
            return tree.frame_body(expressed_in)
        raise FrameNotFound(
            f"expressed_in={expressed_in!r} is neither one of {EXPRESSED_IN_KEYWORDS} nor a frame of robot "
            f"'{tree.name}'{suggest(str(expressed_in), EXPRESSED_IN_KEYWORDS + tree.frame_names)}"
        )


class ReferenceRobot:
    """A robot's kinematics in pure numpy, for checking the Pinocchio layer.

    Configuration layout (see :mod:`reljac.reference.model`): ``joint_names`` in depth-first URDF
    order; one entry of q and v per revolute/continuous/prismatic joint; 7 entries of q
    ``[x, y, z, qx, qy, qz, qw]`` and 6 of v ``[v; w]`` (local twist) per free joint; 3 of q
    ``[x, y, theta]`` and 3 of v ``[vx, vy, w]`` (local twist) per planar joint; fixed and mimic
    joints take none.

    Attributes:
        tree: the :class:`KinematicTree` (bodies, frames, layout).
    """

    def __init__(self, tree: KinematicTree) -> None:
        self.tree = tree
        self._plan = ForwardPlan(tree)

    @classmethod
    def from_urdf(cls, path: str | Path, *, floating_base: bool = False) -> ReferenceRobot:
        """Load a URDF file; ``floating_base=True`` adds the free joint ``root_joint`` above the root link.

        Raises:
            URDFError: if the file is missing, malformed or unsupported (the message names the element).
        """
        return cls(KinematicTree(parse_urdf_file(path), floating_base=floating_base))

    @classmethod
    def from_urdf_string(cls, text: str, *, floating_base: bool = False, source: str = "<string>") -> ReferenceRobot:
        """Like :meth:`from_urdf`, from the URDF's text; `source` names it in errors."""
        return cls(KinematicTree(parse_urdf_string(text, source=source), floating_base=floating_base))

    def __repr__(self) -> str:
        return f"ReferenceRobot({self.name!r}, nq={self.nq}, nv={self.nv}, frames={len(self.frame_names)})"

    # -- layout ---------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Robot name from the URDF."""
        return self.tree.name

    @property
    def nq(self) -> int:
        """Size of a configuration q."""
        return self.tree.nq

    @property
    def nv(self) -> int:
        """Size of a velocity v (the number of Jacobian columns)."""
        return self.tree.nv

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Joints with their own degrees of freedom, in configuration order."""
        return self.tree.joint_names

    @property
    def frame_names(self) -> tuple[str, ...]:
        """``universe``, then every joint and link frame in depth-first order."""
        return self.tree.frame_names

    @property
    def q_slices(self) -> Mapping[str, slice]:
        """Entries of q of each joint in `joint_names`."""
        return self.tree.q_slices

    @property
    def v_slices(self) -> Mapping[str, slice]:
        """Entries of v (Jacobian columns) of each joint in `joint_names`."""
        return self.tree.v_slices

    @property
    def mimic_joints(self) -> Mapping[str, tuple[str, float, float]]:
        """Follower -> (leader, multiplier, offset): ``q_follower = multiplier * q_leader + offset``."""
        return self.tree.mimics

    @property
    def lower_limits(self) -> np.ndarray:
        """Lower position limits, (nq,); -inf where unbounded."""
        return self.tree.lower

    @property
    def upper_limits(self) -> np.ndarray:
        """Upper position limits, (nq,); +inf where unbounded."""
        return self.tree.upper

    def idx_q(self, joint: str) -> int:
        """First entry of q of `joint`. Raises JointNotFound (with suggestions) if it has no own DoF."""
        self.tree.joint_index(joint)
        return self.tree.q_slices[joint].start

    def idx_v(self, joint: str) -> int:
        """First entry of v of `joint`. Raises JointNotFound (with suggestions) if it has no own DoF."""
        self.tree.joint_index(joint)
        return self.tree.v_slices[joint].start

    # -- configurations ---------------------------------------------------------------------------
    def neutral_configuration(self) -> np.ndarray:
        """All joints at zero, free joints at the identity. Shape (nq,)."""
        return configuration.neutral_configuration(self.tree)

    def random_configuration(
        self, rng: np.random.Generator | int | None = None, n: int | None = None
    ) -> np.ndarray:
        """Random finite configuration(s) inside the limits: (nq,), or (n, nq) if `n` is given.

        Continuous joints are in [-pi, pi]; free joints get a position in [-1, 1]^3 [m] and a uniformly
        random unit quaternion.

        Raises:
            ConfigurationError: `rng` is not a Generator, an integer seed >= 0 or None, or `n` is not
                None or an integer >= 0.
        """
        return configuration.random_configuration(self.tree, rng, n)

    def integrate(self, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> np.ndarray:
        """``q (+) v dt`` (free joints: ``T(q) @ exp_se3(v dt)``). q (nq,)/(N, nq), v (nv,)/(N, nv).

        Raises:
            ConfigurationError: bad q or v, dt not a finite real number, or a result that overflows.
        """
        return configuration.integrate(self.tree, q, v, dt)

    # -- kinematics -------------------------------------------------------------------------------
    def kinematics(self, q: ArrayLike) -> ReferenceKinematics:
        """Answer several questions about one q (or batch) while computing each pose only once.

        Raises:
            ConfigurationError: if q has a wrong shape, a NaN/inf or a non-unit quaternion.
        """
        return ReferenceKinematics(self, q)

    def frame_placement(self, q: ArrayLike, frame: str) -> np.ndarray:
        """``T_wf``: (4, 4), or (N, 4, 4) for q of shape (N, nq)."""
        return self.kinematics(q).placement(frame)

    def forward_kinematics(self, q: ArrayLike) -> dict[str, np.ndarray]:
        """``T_wf`` of every frame, by name: each (4, 4), or (N, 4, 4) for a batch."""
        return self.kinematics(q).placements()

    def frame_jacobian(self, q: ArrayLike, frame: str, *, method: str = "cross") -> np.ndarray:
        """World-aligned (LOCAL_WORLD_ALIGNED) Jacobian of `frame`, rows ``[d/dt p_wf; w_wf]``: (6, nv)
        or (N, 6, nv). `method`: "cross" (cross-product) or "poe" (product of exponentials)."""
        return self.kinematics(q).jacobian(frame, method=method)

    def body_jacobian(self, q: ArrayLike, frame: str, *, method: str = "cross") -> np.ndarray:
        """Jacobian of `frame`'s twist expressed in the frame (LOCAL): (6, nv) or (N, 6, nv)."""
        return self.kinematics(q).body_jacobian(frame, method=method)

    def relative_placement(self, q: ArrayLike, frame_a: str, frame_b: str) -> np.ndarray:
        """``T_ab = T_wa^-1 T_wb``: (4, 4) or (N, 4, 4)."""
        return self.kinematics(q).relative_placement(frame_a, frame_b)

    def relative_jacobian(
        self, q: ArrayLike, frame_a: str, frame_b: str, expressed_in: str = "a", *, method: str = "cross"
    ) -> np.ndarray:
        """``J_ab`` with ``[d/dt p_ab; w_ab] = J_ab @ v``, expressed in `expressed_in` ("a", "b", "world"
        or a frame name): (6, nv) or (N, 6, nv). See :meth:`ReferenceKinematics.relative_jacobian`."""
        return self.kinematics(q).relative_jacobian(frame_a, frame_b, expressed_in, method=method)

"""Where a task's hands hang from the base: the frame F their pose maps are in, and the joints
between the base joint and F (the *shared* joints, which move every hand), on a grid.

With two hands (or more) F is the frame of the last joint their chains share (TIAGo's torso lift,
a humanoid's torso): the chains after F are independent, so a pose of the object is reachable
when, for some value s of the shared joints, every hand's pose in F is in its map. With one hand,
F is the base frame. Leading prismatic joints after that (a lift) are shared too, so that a map
starts at a revolute joint, whose sweep makes it cheap (:mod:`reljac.placement.orbits`).

The shared joints are taken on a grid of at most :data:`MAX_SHARED` values: each prismatic joint
every `step` [m], each revolute one every `angle_step` [rad], both ends included. The grid only
limits which values are tried (a value between two is missed): the maps never claim more.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..exceptions import MapError
from ..validation import short_repr
from .base import MobileBase
from .orbits import chain, joint_axis, rigid_inverse

MAX_SHARED = 64  # shared-joint values tried per pose
PRISMATIC = {"JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismaticUnaligned"}


@dataclass(frozen=True)
class HandChains:
    """The frame F of the hands' maps and the shared joints' grid.

    Attributes:
        frame: F's name (a joint frame, or the base frame B).
        shared: the shared joints' names, root first.
        values: (S, n) the grid's values of the shared joints' q entries (S >= 1; n may be 0).
        T_BF: (S, 4, 4) F in the base frame B at each grid value.
        q_index: (n,) where those entries are in q.
    """

    frame: str
    shared: tuple[str, ...]
    values: np.ndarray
    T_BF: np.ndarray
    q_index: np.ndarray

    @property
    def shifts(self) -> np.ndarray | None:
        """When every T_BF differs from the first by a translation along F's z only (a lift): its
        length (S,) [m]; else None."""
        T0 = self.T_BF[0]
        D = rigid_inverse(T0) @ self.T_BF
        if np.abs(D[:, :3, :3] - np.eye(3)).max() > 1e-12 or np.abs(D[:, :2, 3]).max() > 1e-12:
            return None
        return D[:, 2, 3].copy()


def _grid(lo: float, hi: float, step: float) -> np.ndarray:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return np.array([0.0 if not math.isfinite(lo) else lo])
    n = max(2, math.ceil((hi - lo) / step - 1e-9) + 1)
    return np.linspace(lo, hi, n)


def hand_names(hands: Iterable[str]) -> list[str]:
    """`hands` (any iterable of frame names: a list, a tuple, an array of names, a dict's keys) as
    a list of str; a MapError unless they are distinct names, at least one."""
    names = None if isinstance(hands, (str, bytes)) or not isinstance(hands, Iterable) else list(hands)
    if not names or not all(isinstance(h, str) for h in names) or len(set(names)) != len(names):
        raise MapError(f"hands must be a non-empty list of distinct frame names, got {short_repr(hands)}")
    return [str(h) for h in names]


def hand_chains(mobile: MobileBase, hands: list[str], *, step: float = 0.04,
                angle_step: float = math.radians(10.0)) -> HandChains:
    """F and the shared joints of `hands` (frame names, as :func:`hand_names` gives them) on
    `mobile` (module docstring).

    Raises:
        MapError: a hand not moved by any joint but the base joint, or a shared joint that is
            neither revolute nor prismatic (a ball joint, a planar one above the hands).
    """
    if not isinstance(mobile, MobileBase):
        raise MapError(f"mobile must be a MobileBase (reljac.placement.mobile_base(robot)), got "
                       f"{type(mobile).__name__}")
    robot = mobile.robot
    model = robot.model
    base = model.getJointId(mobile.joint)
    chains = []
    for hand in hands:
        path = chain(model, robot.frame_id(hand))
        if base not in path:
            raise MapError(f"hand '{hand}' does not move with the base joint '{mobile.joint}'")
        chains.append(path[path.index(base) + 1:])
    shared: list[int] = []
    for joints in zip(*chains, strict=False):
        if all(j == joints[0] for j in joints) and len(hands) > 1:
            shared.append(joints[0])
        else:
            break
    own = chains[0][len(shared):]
    while own and model.joints[own[0]].shortname() in PRISMATIC and all(len(c) > len(shared) + 1 and
                                                                       c[len(shared)] == own[0] for c in chains):
        shared.append(own[0])
        own = own[1:]
    if any(len(c) <= len(shared) for c in chains):
        if len(hands) == 1:
            raise MapError(f"hand '{hands[0]}' moves with the base alone (no joint of its own, or every one "
                           "locked): give a frame an arm carries")
        raise MapError(f"hands {hands} share every joint: give each hand a joint of its own")
    axes: list[list[tuple[float, ...]]] = []
    for j in shared:
        joint = model.joints[j]
        if joint.shortname() in PRISMATIC:
            lo, hi = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
            axes.append([(v,) for v in _grid(lo, hi, step)])
        elif joint_axis(model, j) is not None:
            if joint.nq == 2:
                angles = np.linspace(-math.pi, math.pi, math.ceil(2 * math.pi / angle_step), endpoint=False)
                axes.append([(math.cos(a), math.sin(a)) for a in angles])
            else:
                lo, hi = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
                axes.append([(v,) for v in _grid(lo, hi, angle_step)])
        else:
            raise MapError(f"joint '{model.names[j]}' moves every hand and is {joint.shortname()}: only revolute "
                           "and prismatic shared joints are supported")
    while math.prod(len(a) for a in axes) > MAX_SHARED:  # thin the longest axis
        k = max(range(len(axes)), key=lambda i: len(axes[i]))
        axes[k] = axes[k][::2] if len(axes[k]) > 2 else axes[k]
        if all(len(a) <= 2 for a in axes):
            break
    combos = [sum(c, ()) for c in itertools.product(*axes)] if axes else [()]
    values = np.array(combos, dtype=float).reshape(len(combos), -1)
    q_index = np.concatenate([np.arange(model.joints[j].idx_q, model.joints[j].idx_q + model.joints[j].nq)
                              for j in shared]).astype(np.int64) if shared else np.zeros(0, np.int64)
    frame = model.names[shared[-1]] if shared else mobile.base_frame
    fB, fF = robot.frame_id(mobile.base_frame), robot.frame_id(frame)
    data = model.createData()
    T_BF = np.empty((len(values), 4, 4))
    for i, v in enumerate(values):
        q = mobile.reference.copy()
        q[q_index] = v
        pin.framesForwardKinematics(model, data, q)
        T_BF[i] = data.oMf[fB].actInv(data.oMf[fF]).homogeneous
    return HandChains(frame, tuple(model.names[j] for j in shared), values, T_BF, q_index)

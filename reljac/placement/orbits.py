"""A hand's chain from the frame its map is in, and the two orbits that make a pose map cheap.

A pose map (:mod:`reljac.placement.posemap`) records where frame b (a hand) can be in frame a,
position and orientation. Two joints of b's chain are swept instead of drawn at random:

* the **first** joint after a, when it is revolute: turning it by d rotates b's pose by d about
  that joint's axis, fixed in a. In a frame A fixed in a (origin on the axis, z along it) the pose
  T_Ab' goes to ``Rz(d) T_Ab'``;
* the **last** joint before b, when it is revolute and b's origin is on its axis (a wrist roll,
  the TIAGo's arm_7, Panda's joint 7): turning it by d rotates b about that axis, fixed in b. In a
  frame b' fixed in b (same origin, z along the axis) T_Ab' goes to ``T_Ab' Rz(d)``.

So one sampled configuration, with both joints at their lower limit, stands for every pose the
two sweeps reach: a rectangle in the coordinates :func:`coordinates` gives (the azimuth phi of
b's origin about A's z and the angle gamma about b''s z shift by the sweeps, the other four do not
move). Without such a joint the corresponding sweep is empty (a range of 0) and A = a, b' = b.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..exceptions import MapError
from ..robot import Robot

TWO_PI = 2.0 * math.pi
AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
ON_AXIS = 1e-9  # [m] b's origin this close to the last joint's axis is on it


def rigid_inverse(T: np.ndarray) -> np.ndarray:
    """The inverses of rigid transforms T (..., 4, 4): (R^T, -R^T p), without a general inverse."""
    T = np.asarray(T, dtype=float)
    out = np.zeros_like(T)
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", Rt, T[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def joint_axis(model: pin.Model, j: int) -> np.ndarray | None:
    """The axis (3,) of revolute joint j in its own frame, or None for any other joint."""
    kind = model.joints[j].shortname()
    for prefix in ("JointModelRUB", "JointModelR"):
        if kind.startswith(prefix) and kind[len(prefix):] in AXES:
            return np.array(AXES[kind[len(prefix):]])
    if kind in ("JointModelRevoluteUnaligned", "JointModelRevoluteUnboundedUnaligned"):
        return np.array(model.joints[j].extract().axis, dtype=float)
    return None


def chain(model: pin.Model, frame: int) -> list[int]:
    """Joint ids from the root to the frame's parent joint."""
    path = []
    j = model.frames[frame].parentJoint
    while j > 0:
        path.append(j)
        j = model.parents[j]
    return path[::-1]


def joints_between(robot: Robot, frame_a: int, frame_b: int) -> list[int]:
    """The joints that move b relative to a when a is on b's chain (b's chain after a's parent
    joint), root first.

    Raises:
        MapError: a is not on b's chain (a pose map is of a hand in a frame its arm hangs from).
    """
    model = robot.model
    up_a, up_b = chain(model, frame_a), chain(model, frame_b)
    if up_b[:len(up_a)] != up_a:
        raise MapError(f"frame '{model.frames[frame_a].name}' is not on the chain of '{model.frames[frame_b].name}'")
    return up_b[len(up_a):]


def _frame_with_z(z: np.ndarray) -> np.ndarray:
    """A rotation (3, 3) whose third column is the unit vector z."""
    z = z / np.linalg.norm(z)
    x = np.cross((0.0, 1.0, 0.0) if abs(z[1]) < 0.9 else (1.0, 0.0, 0.0), z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _range(robot: Robot, j: int) -> tuple[float, float]:
    """(lower, upper) of revolute joint j [rad] (an unbounded one: a full turn)."""
    joint = robot.model.joints[j]
    if joint.nq == 2:
        return -math.pi, math.pi
    lo, hi = robot.model.lowerPositionLimit[joint.idx_q], robot.model.upperPositionLimit[joint.idx_q]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return -math.pi, math.pi
    return float(lo), float(hi)


@dataclass(frozen=True)
class Orbits:
    """The sweeps of a chain (module docstring).

    Attributes:
        T_aA: (4, 4) frame A in a. R_bb: (3, 3) the rotation of b' in b.
        first, last: the swept joints' names ("" when there is no such sweep).
        first_range, last_range: (lower, upper) [rad] of each swept joint ((0, 0) without it);
            a sample holds each at its lower limit.
        joints: the names of the joints between a and b, root first.
    """

    T_aA: np.ndarray
    R_bb: np.ndarray
    first: str
    last: str
    first_range: tuple[float, float]
    last_range: tuple[float, float]
    joints: tuple[str, ...]

    @property
    def spans(self) -> tuple[float, float]:
        """The sweeps' widths [rad] (phi's, gamma's)."""
        return self.first_range[1] - self.first_range[0], self.last_range[1] - self.last_range[0]

    def hold(self, robot: Robot, Q: np.ndarray) -> None:
        """Set the swept joints of configurations Q (n, nq) to their lower limits, in place."""
        for name, (lo, _) in ((self.first, self.first_range), (self.last, self.last_range)):
            if name:
                joint = robot.model.joints[robot.model.getJointId(name)]
                if joint.nq == 2:
                    Q[:, joint.idx_q], Q[:, joint.idx_q + 1] = math.cos(lo), math.sin(lo)
                else:
                    Q[:, joint.idx_q] = lo

    def to_swept(self, T_ab: np.ndarray) -> np.ndarray:
        """T_Ab' (n, 4, 4) from T_ab (n, 4, 4)."""
        M = np.eye(4)
        M[:3, :3] = self.R_bb
        return rigid_inverse(self.T_aA) @ T_ab @ M


def orbits(robot: Robot, frame_a: int, frame_b: int) -> Orbits:
    """The sweeps of b's chain from a (see the module docstring)."""
    model = robot.model
    joints = joints_between(robot, frame_a, frame_b)
    if not joints:
        raise MapError(f"no joint moves '{model.frames[frame_b].name}' relative to '{model.frames[frame_a].name}'")
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    T_wa = data.oMf[frame_a]
    T_aA, first, first_range = np.eye(4), "", (0.0, 0.0)
    j1 = joints[0]
    axis = joint_axis(model, j1)
    if axis is not None:
        T_wj = data.oMi[model.parents[j1]] * model.jointPlacements[j1]  # joint 1's frame at its zero
        T = (T_wa.actInv(T_wj)).homogeneous
        T_aA = T.copy()
        T_aA[:3, :3] = T[:3, :3] @ _frame_with_z(axis)
        first, first_range = model.names[j1], _range(robot, j1)
    R_bb, last, last_range = np.eye(3), "", (0.0, 0.0)
    jn = joints[-1]
    axis = joint_axis(model, jn)
    if axis is not None and (jn != j1 or not first):
        T_nb = data.oMi[jn].actInv(data.oMf[frame_b])  # b in the last joint's frame
        p = T_nb.translation
        off_axis = p - np.dot(p, axis) * axis
        if np.linalg.norm(off_axis) <= ON_AXIS:
            R_bb = _frame_with_z(T_nb.rotation.T @ axis)
            last, last_range = model.names[jn], _range(robot, jn)
    return Orbits(T_aA, R_bb, first, last, first_range, last_range, tuple(model.names[j] for j in joints))


@dataclass(frozen=True)
class PoseGrid:
    """The cells of a pose map: an invariant cell (rho, z, and two angles) holds, per roll bin, a
    64-bit mask over phi bins.

    rho = |p_xy| [m] and z [m] of b''s origin in A, in voxels of `voxel` (rho in [0, n_rho voxel),
    z in [-z_half, z_half)); phi = its azimuth about A's z; R_Ab' = Rz(alpha) Ry(beta) Rz(gamma)
    (ZYZ angles), psi = alpha - phi; beta binned uniformly in cos(beta) (bins of equal measure on
    SO(3)); psi, gamma and phi in equal bins over [-pi, pi).

    ZYZ angles are degenerate where b''s z is along A's z (beta 0 or pi: a hand pointing straight
    down, about a vertical first joint): there only alpha + gamma (alpha - gamma) is defined. The
    first and last beta bins are therefore *polar charts*: their two angles are the tilt vector
    u = sin(beta) (cos psi, sin psi) on an n_u x n_u grid over [-s, s]^2 (s: sin of the bin's
    edge), and their roll is ``gamma + psi`` (north) or ``gamma - psi`` (south), read from R
    without the ZYZ split (:func:`coordinates`): both are continuous through the pole and turn as
    gamma does under the last joint's sweep, and neither moves under the first joint's.
    """

    voxel: float
    n_rho: int
    n_z: int
    n_psi: int
    n_beta: int
    n_gamma: int
    n_phi: int = 64
    n_u: int = 7

    @property
    def z_half(self) -> float:
        return 0.5 * self.n_z * self.voxel

    @property
    def n_angles(self) -> int:
        """Angle cells per (rho, z) voxel: the equatorial (psi, beta) ones, then the two polar charts."""
        return self.n_psi * max(self.n_beta - 2, 0) + 2 * self.n_u * self.n_u

    @property
    def cells(self) -> int:
        """Invariant cells (rho, z, two angles)."""
        return self.n_rho * self.n_z * self.n_angles

    @property
    def pole(self) -> float:
        """sin of the polar charts' edge: |u| within it."""
        c = 1.0 - 2.0 / self.n_beta
        return math.sqrt(max(1.0 - c * c, 0.0))

    def voxel_index(self, rho: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Flat (rho, z) voxel (n,) int64, -1 outside the grid."""
        ir = np.floor(rho / self.voxel).astype(np.int64)
        iz = np.floor((z + self.z_half) / self.voxel).astype(np.int64)
        return np.where((ir >= 0) & (ir < self.n_rho) & (iz >= 0) & (iz < self.n_z), ir * self.n_z + iz, -1)

    def angle_index(self, psi: np.ndarray, cos_beta: np.ndarray, gamma: np.ndarray, roll_north: np.ndarray,
                    roll_south: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(angle cell (n,) int64 in [0, n_angles), roll (n,) [rad]: gamma, or the polar charts')."""
        ip = np.floor((psi + math.pi) * (self.n_psi / TWO_PI)).astype(np.int64) % self.n_psi
        ib = np.minimum(np.maximum(np.floor((1.0 - cos_beta) * (0.5 * self.n_beta)).astype(np.int64), 0),
                        self.n_beta - 1)
        north, south = ib == 0, ib == self.n_beta - 1
        angle = ip * (self.n_beta - 2) + ib - 1
        roll = gamma.copy()
        polar = np.flatnonzero(north | south)
        if len(polar):
            c = cos_beta[polar]
            sin_beta = np.sqrt(np.maximum(1.0 - c * c, 0.0))
            side = 2.0 * self.pole / self.n_u
            ux = np.minimum(np.maximum(np.floor((sin_beta * np.cos(psi[polar]) + self.pole) / side), 0),
                            self.n_u - 1).astype(np.int64)
            uy = np.minimum(np.maximum(np.floor((sin_beta * np.sin(psi[polar]) + self.pole) / side), 0),
                            self.n_u - 1).astype(np.int64)
            is_south = south[polar]
            angle[polar] = (self.n_psi * (self.n_beta - 2) + np.where(is_south, self.n_u * self.n_u, 0)
                            + ux * self.n_u + uy)
            roll[polar] = np.where(is_south, roll_south[polar], roll_north[polar])
        return angle, roll

    def cell(self, rho: np.ndarray, z: np.ndarray, psi: np.ndarray, cos_beta: np.ndarray, gamma: np.ndarray,
             roll_north: np.ndarray, roll_south: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(flat invariant cell (n,) int64, -1 outside the grid; roll (n,) [rad]: gamma, or the
        polar charts' roll)."""
        voxel = self.voxel_index(rho, z)
        angle, roll = self.angle_index(psi, cos_beta, gamma, roll_north, roll_south)
        return np.where(voxel >= 0, voxel * self.n_angles + angle, -1), roll

    def angle_bin(self, angle: np.ndarray, n: int) -> np.ndarray:
        """Bin (n,) int64 of angles [rad] in n equal bins over [-pi, pi)."""
        return np.floor((angle + math.pi) * (n / TWO_PI)).astype(np.int64) % n


def coordinates(T: np.ndarray) -> tuple[np.ndarray, ...]:
    """(rho, z, psi, cos_beta, phi, gamma, roll_north, roll_south), each (n,), of poses T_Ab'
    (n, 4, 4) (see :class:`PoseGrid`): roll_north = alpha + gamma - phi and roll_south =
    gamma - alpha + phi, read from R's first two rows and columns (defined at beta = 0 and at
    beta = pi respectively, where the ZYZ split is not)."""
    p, R = T[:, :3, 3], T[:, :3, :3]
    rho = np.hypot(p[:, 0], p[:, 1])
    phi = np.arctan2(p[:, 1], p[:, 0])
    alpha = np.arctan2(R[:, 1, 2], R[:, 0, 2])
    gamma = np.arctan2(R[:, 2, 1], -R[:, 2, 0])
    psi = np.mod(alpha - phi + math.pi, TWO_PI) - math.pi
    plus = np.arctan2(R[:, 1, 0] - R[:, 0, 1], R[:, 0, 0] + R[:, 1, 1])  # alpha + gamma
    minus = np.arctan2(-(R[:, 1, 0] + R[:, 0, 1]), R[:, 1, 1] - R[:, 0, 0])  # alpha - gamma
    return rho, p[:, 2], psi, np.clip(R[:, 2, 2], -1.0, 1.0), phi, gamma, plus - phi, phi - minus

"""Balance-aware capability maps: samples whose centre of mass leaves the support region are rejected.

A :class:`MapSupport` (contacts and a margin) passed as ``capability_map(..., support=...)`` keeps a
sampled configuration q only when the robot's centre of mass c(q), projected on the world's x-y
plane (gravity along -z), lies inside the convex hull of the contact points at q (each contact's
points placed by its frame at q, projected likewise) shrunk by the margin: at least `margin` [m]
from every edge of the hull. The map is then the reachable workspace of b relative to a while the
robot stands on those contacts without tipping over (static balance).

What a sample means on a floating-base robot: every free-flyer joint is held at the robot's
reference configuration (its SRDF posture, e.g. Talos' ``half_sitting``, with the soles on the
ground) instead of being drawn, because a random base pose would put the feet anywhere. Other
joints are drawn inside their limits as in any map; to hold the legs too (a standing robot whose
feet stay on the ground), lock them (``robot.locked("leg_*")``, ``reljac map --lock 'leg_*'``):
locked bodies keep their mass in the centre of mass. With the legs drawn, the feet move with
them and the region is where the soles are at q, projected on the ground: a bound, not a stance.
Held joints are drawn as usual and then overwritten, so every other joint takes the same value as
in the map without `support`: for a pair of frames whose relative pose does not depend on the
base (a hand in the other hand), the balance-aware map is a subset of the plain one, sample by
sample.

The centre of mass is the whole robot's: bodies fixed to the world (a fixed base's root link, a
locked stance) count, as in :mod:`reljac.mass`. The test runs in Python beside the compiled
kernel: Pinocchio's ``centerOfMass`` and the moving contacts' frame placements per sample
(contacts that only held joints move are placed once), then one vectorised hull test per batch
(:func:`inside_hull`); about 15 us per sample on Talos, 3 to 4 times the compiled kernel's cost
(a numpy forward kinematics over whole batches was tried: no faster than Pinocchio's C++ per
sample). Results stay a function of (seed, sample index) only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from ..exceptions import MapError, SupportError
from ..mass import mass_split, total_mass
from ..robot import Robot
from ..support import SupportContact, collinear_tolerance, support_polygon
from ..validation import as_float

PLANE = "world x-y"
_SUB_BATCH = 4096      # samples per vectorised hull test (memory: 28 pairs x 8 points x 8 bytes each)


@dataclass(frozen=True)
class MapSupport:
    """Contacts whose support region a map's samples must keep their centre of mass in.

    Args:
        contacts: :class:`~reljac.support.SupportContact` objects (a frame and points in it [m]),
            e.g. ``SupportContact.rectangle("left_sole_link", 0.2, 0.1)`` for each foot.
        margin: [m] >= 0, distance kept from every edge of the region (0: the hull itself).

    Raises:
        SupportError: no contacts, an object that is not a SupportContact, a bad margin.
    """

    contacts: tuple[SupportContact, ...]
    margin: float = 0.0

    def __post_init__(self) -> None:
        contacts = self.contacts
        if isinstance(contacts, SupportContact):
            contacts = (contacts,)
        if not isinstance(contacts, (list, tuple)) or not contacts or \
                not all(isinstance(c, SupportContact) for c in contacts):
            raise SupportError(f"contacts of a map's support must be a non-empty list of reljac.SupportContact, "
                               f"got {contacts!r}")
        object.__setattr__(self, "contacts", tuple(contacts))
        object.__setattr__(self, "margin", as_float(self.margin, "margin [m]", minimum=0.0, error=SupportError))

    @classmethod
    def from_any(cls, support: Any) -> MapSupport:
        """A MapSupport from itself, or from a :class:`reljac.ik.limits.support.SupportRegion` (anything with
        `contacts`, `margin` and `frame`: its contacts and margin; its frame must be the world's).

        Raises:
            MapError: anything else, or a region in another frame.
        """
        if isinstance(support, MapSupport):
            return support
        if all(hasattr(support, name) for name in ("contacts", "margin", "frame")):  # a SupportRegion
            frame = support.frame
            robot = getattr(support, "robot", None)  # ids, not names: "world" is the universe's too
            fid = robot.frame_id(frame) if robot is not None else 0 if frame in ("universe", 0) else -1
            if fid != 0:
                raise MapError(f"a map's support region must be in the world's x-y plane; this SupportRegion's "
                               f"frame is {frame!r}")
            return cls(tuple(support.contacts), support.margin)
        raise MapError(f"support must be a reljac.maps.MapSupport (contacts and a margin) or a "
                       f"reljac.ik.SupportRegion, not {type(support).__name__}")

    def metadata(self, robot: Robot, held: Sequence[str]) -> dict:
        """What a map file records of it (without the rejected count): contacts by frame name with
        their points [m], margin [m], the plane and the joints held at the reference."""
        return {"contacts": [{"frame": robot.model.frames[robot.frame_id(c.frame)].name,
                              "points": c.points.tolist()} for c in self.contacts],
                "margin": self.margin, "plane": PLANE, "held": list(held)}


Held = tuple[list[str], np.ndarray, np.ndarray]


def held_joints(robot: Robot) -> Held:
    """(names, q indices, values): the free-flyer joints a balance-aware map holds at the robot's
    reference configuration, with their entries of q and the values there (taken where the robot
    has its SRDF: a map's job carries them to workers, whose copy of the robot has none)."""
    model = robot.model
    names: list[str] = []
    index: list[int] = []
    q_ref = robot.reference_configuration()
    for j in range(1, model.njoints):
        joint = model.joints[j]
        if joint.shortname() == "JointModelFreeFlyer":
            names.append(model.names[j])
            index.extend(range(joint.idx_q, joint.idx_q + joint.nq))
    idx = np.array(index, dtype=np.int64)
    return names, idx, q_ref[idx].copy()


def check_support(robot: Robot, support: MapSupport) -> None:
    """SupportError now, before any sample, for a robot without mass or contacts whose region
    (shrunk by the margin) is empty at the reference configuration; FrameNotFound for a contact
    frame the robot does not have."""
    ids = [robot.frame_id(c.frame) for c in support.contacts]
    if not total_mass(robot.model) > 0:
        raise SupportError(f"robot '{robot.name}' has no mass: a balance-aware map needs its centre of mass")
    data = robot.new_data()
    pin.framesForwardKinematics(robot.model, data, robot.reference_configuration())
    points = np.vstack([c.points @ data.oMf[i].rotation.T + data.oMf[i].translation
                        for c, i in zip(support.contacts, ids, strict=True)])
    try:
        support_polygon(points).shrunk(support.margin)
    except SupportError as exc:
        raise SupportError(f"at the reference configuration of robot '{robot.name}': {exc}") from None


class BalanceCheck:
    """Which configurations keep the centre of mass inside the support region (one per chunk:
    it owns a pin.Data, and chunks run on threads)."""

    def __init__(self, robot: Robot, support: MapSupport, held: Held | None = None) -> None:
        self.model = robot.model
        self.data = robot.new_data()
        self.frame_ids = [robot.frame_id(c.frame) for c in support.contacts]
        self.points = [c.points for c in support.contacts]
        self.margin = support.margin
        self.k = sum(len(p) for p in self.points)
        self.mass = mass_split(self.model)  # bodies fixed to the world count (reljac.mass)
        # contact frames below held joints only (a locked stance, a held base) do not move: placed once
        model = self.model
        names, index, values = held if held is not None else ([], np.zeros(0, np.int64), np.zeros(0))
        held_ids = {model.getJointId(name) for name in names}

        def still(joint: int) -> bool:
            while joint != 0 and joint in held_ids:
                joint = model.parents[joint]
            return joint == 0

        q = robot.neutral()
        q[index] = values  # the frames below held joints only depend on these entries
        pin.framesForwardKinematics(model, self.data, q)
        self.fixed = {f: self.data.oMf[fid].homogeneous.copy() for f, fid in enumerate(self.frame_ids)
                      if still(model.frames[fid].parentJoint)}
        self.moving = [(f, fid) for f, fid in enumerate(self.frame_ids) if f not in self.fixed]

    def centers_and_points(self, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(c (N, 3), P (N, k, 3)): the centre of mass and the contact points [m] in the world."""
        model, data, moving = self.model, self.data, self.moving
        m, m0, c0 = self.mass
        C = np.zeros((Q.shape[0], 3))
        T = np.empty((Q.shape[0], len(self.frame_ids), 4, 4))
        for f, placement in self.fixed.items():
            T[:, f] = placement
        for s, q in enumerate(Q):
            if m > 0:
                C[s] = pin.centerOfMass(model, data, q, False)  # runs the forward kinematics
            elif moving:
                pin.forwardKinematics(model, data, q)
            for f, fid in moving:
                T[s, f] = pin.updateFramePlacement(model, data, fid).homogeneous
        P = np.concatenate([points @ np.swapaxes(T[:, f, :3, :3], 1, 2) + T[:, f, None, :3, 3]
                            for f, points in enumerate(self.points)], axis=1)
        return (m * C + m0 * c0) / (m + m0), P

    def keep(self, Q: np.ndarray) -> np.ndarray:
        """(N,) bool: the configurations Q (N, nq) whose centre of mass is inside the region."""
        C, P = self.centers_and_points(Q)
        return inside_hull(C[:, :2], P[:, :, :2], self.margin)


def _lines(P: np.ndarray) -> tuple[np.ndarray, ...]:
    """The lines through two of the points P (m, k, 2), one per pair i < j: unit direction (ux, uy)
    from i to j and offset o, so that w . x - o (w = (-uy, ux)) is x's distance left of the line;
    whether all points are left of it (forward supporting), right of it (backward), and whether the
    hull has an area. Each (m, pairs), area (m,). A point counts as on a line as in
    :func:`reljac.support.convex_hull` (:func:`~reljac.support.collinear_tolerance`: its cross
    product with the pair within COLLINEAR_TOLERANCE x the points' extent squared); two points
    nearer than the square root of that are one."""
    k = P.shape[1]
    i, j = np.triu_indices(k, 1)
    px, py = P[..., 0], P[..., 1]
    tol = collinear_tolerance(np.ptp(P, axis=1).max(axis=1))[:, None]  # (m, 1) [m^2]
    ex, ey = px[:, j] - px[:, i], py[:, j] - py[:, i]
    length = np.hypot(ex, ey)
    valid = length * length > tol
    safe = np.where(valid, length, 1.0)
    slack = tol / safe  # (m, pairs) [m]: the cross-product tolerance as a distance to each line
    ux, uy = ex / safe, ey / safe
    o = ux * py[:, i] - uy * px[:, i]
    left = ux[..., None] * py[:, None, :] - uy[..., None] * px[:, None, :] - o[..., None]  # (m, pairs, k)
    lo, hi = left.min(axis=2), left.max(axis=2)
    forward, backward = valid & (lo >= -slack), valid & (hi <= slack)
    area = ((forward & (hi > slack)) | (backward & (lo < -slack))).any(axis=1)
    return ux, uy, o, forward, backward, area


def inside_hull(c: np.ndarray, P: np.ndarray, margin: float) -> np.ndarray:
    """(N,) bool: c[s] (2,) is at least `margin` [m] inside the convex hull of the points P[s] (k, 2).

    The hull is the intersection of the half-planes on the inner side of every supporting line
    through two of the points (a line with all k points on one side, to the hull tolerance); a hull
    without area (collinear points) holds nothing. Vectorised over the N samples; when the points
    are the same for every sample (contacts that do not move: legs locked, base held), the lines
    are found once.
    """
    n = P.shape[0]
    out = np.empty(n, dtype=bool)
    fixed = n > 0 and bool(np.all(P[0] == P))
    lines = _lines(P[:1]) if fixed else None
    for lo in range(0, n, _SUB_BATCH):
        x = c[lo:lo + _SUB_BATCH]
        ux, uy, o, forward, backward, area = lines if lines is not None else _lines(P[lo:lo + _SUB_BATCH])
        d = ux * x[:, 1, None] - uy * x[:, 0, None] - o  # (m, pairs): distance left of each line
        out[lo:lo + _SUB_BATCH] = area & np.all(~forward | (d >= margin), axis=1) \
            & np.all(~backward | (-d >= margin), axis=1)
    return out


__all__ = ["BalanceCheck", "Held", "MapSupport", "check_support", "held_joints", "inside_hull"]

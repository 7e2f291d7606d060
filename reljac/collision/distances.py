"""Distances between bodies, their witness points, normals and distance Jacobians.

Conventions (checked against closed forms and finite differences in tests/test_collision*.py):

* ``distance`` d [m] is signed: the gap between two separated bodies, minus the penetration
  depth of overlapping ones (coal's EPA), 0 when they touch.
* ``point1``, ``point2`` (3,) in the world frame w [m] are the witness points on body 1 and
  body 2 (the closest points; for overlapping bodies the deepest points of each inside the
  other), and ``point2 = point1 + d * normal``.
* ``normal`` (3,) is a unit vector in w pointing from body 1 to body 2: moving body 2 along it
  increases d (also when d < 0).
* ``jacobian`` (nv,) is the distance Jacobian: ``d_dot = J_d @ v``, with
  ``J_d = n^T (J_p2 - J_p1)`` where J_pi (3, nv) is the Jacobian of the velocity of witness point
  i taken as a point of body i (LOCAL_WORLD_ALIGNED frame Jacobian moved to that point). A body
  fixed in the world (world obstacles, links of a fixed base) contributes zero.

The distance of a pair of bodies is the smallest distance between a geometry of one and a
geometry of the other. d is a smooth function of q only while the closest features stay the same
(no switch between geometries, no edge or vertex contact of boxes and meshes). Triangle meshes
kept as triangles (``convex_meshes=False``) have no penetration depth: overlapping, their d is 0
and the two points lie somewhere in the overlap.

Broad phase: Pinocchio's AABB tree (:class:`Kernel`); only the pairs it keeps reach coal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import coal
import numpy as np
import pinocchio as pin

from ..exceptions import CollisionError

WORLD = pin.ReferenceFrame.WORLD
GJK_TOLERANCE = 1e-10  # coal's default 1e-6: separated distances repeat to ~1e-10 m (EPA keeps 1e-6:
# tighter, it fails on flat faces and returns -DBL_MAX)
FAILED = 1e10  # [m] |d| beyond this is coal failing, not a distance


@dataclass(frozen=True)
class Distances:
    """Distances of the pairs of bodies nearer than a bound, one row per pair.

    Attributes (m rows):
        pairs: (body 1, body 2) names per row (link or obstacle names).
        geometries: (geometry of body 1, geometry of body 2) names per row: the closest ones.
        distance: (m,) signed distances d [m].
        point1, point2: (m, 3) witness points in the world frame w [m].
        normal: (m, 3) unit normals in w, from body 1 to body 2.
        jacobian: (m, nv) distance Jacobians, ``d_dot = jacobian @ v`` (None if not asked for).
    """

    pairs: tuple[tuple[str, str], ...]
    geometries: tuple[tuple[str, str], ...]
    distance: np.ndarray
    point1: np.ndarray
    point2: np.ndarray
    normal: np.ndarray
    jacobian: np.ndarray | None

    def __len__(self) -> int:
        return len(self.pairs)

    def index(self, body1: str, body2: str) -> int:
        """Row of the pair (either order); KeyError if it is not among the rows."""
        for i, (a, b) in enumerate(self.pairs):
            if (a, b) == (body1, body2) or (b, a) == (body1, body2):
                return i
        raise KeyError(f"pair ({body1!r}, {body2!r}) is not among these {len(self)} rows")

    def __repr__(self) -> str:
        rows = ", ".join(f"{a}/{b}: {d * 1e3:.1f} mm" for (a, b), d in zip(self.pairs, self.distance, strict=True))
        return f"Distances({len(self)} pairs{': ' if rows else ''}{rows})"


class Kernel:
    """The active geometry pairs of a collision model, ready for per-step queries.

    Built once per change of pairs or obstacles; :meth:`compute` is the per-step call. The broad
    phase is Pinocchio's (coal's dynamic AABB tree, every geometry's box inflated by half the
    bound): it lists the pairs whose inflated boxes overlap, a superset of those nearer than the
    bound, and only these reach coal's distance computation. Pinocchio 3 (e.g. the 3.8 that PlaCo
    pins) lacks the callback that collects them: there every pair reaches it (same rows, slower).

    Args:
        model: the robot's ``pin.Model``.
        geometry: the ``pin.GeometryModel`` whose ``collisionPairs`` are the active geometry pairs.
        pair_body: (n pairs,) index of the body pair each geometry pair belongs to.
        body_pairs: names (body 1, body 2) of each body pair.
    """

    def __init__(self, model: pin.Model, geometry: pin.GeometryModel, pair_body: np.ndarray,
                 body_pairs: list[tuple[str, str]]) -> None:
        self.model, self.geometry = model, geometry
        self.data = pin.GeometryData(geometry)
        for request in self.data.distanceRequests:
            request.gjk_tolerance = GJK_TOLERANCE
        self.pair_body, self.body_pairs = pair_body, body_pairs
        self.names = [o.name for o in geometry.geometryObjects]
        joints = [o.parentJoint for o in geometry.geometryObjects]
        # per geometry pair, as Python ints (fast in the per-row loop): body pair, geometries, joints
        self.rows_of = [(int(b), p.first, p.second, joints[p.first], joints[p.second])
                        for b, p in zip(pair_body, geometry.collisionPairs, strict=True)]
        self.all_pairs = list(range(len(self.rows_of)))
        self.manager = pin.BroadPhaseManager_DynamicAABBTreeCollisionManager(model, geometry, self.data)
        # Pinocchio 3 has no collecting callback: there every pair reaches the narrow phase
        collect = getattr(pin, "CollisionCallBackCollect", None)
        self.collector = None if collect is None else collect(geometry, self.data, max(1, len(self.rows_of)))
        self.margin = math.nan  # the bound the boxes are inflated for
        nv = model.nv
        empty = [np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, nv))]
        for a in empty:
            a.flags.writeable = False
        d, p1, p2, n, J = empty
        self.empty = Distances((), (), d, p1, p2, n, J)  # shared by calls with no row: read-only arrays
        self.empty_without_jacobians = Distances((), (), d, p1, p2, n, None)

    def candidates(self, data: pin.Data, within: float) -> list[int]:
        """Indices of the geometry pairs whose boxes, inflated by ``within / 2``, overlap (with
        the geometry placements updated from ``data.oMi``)."""
        pin.updateGeometryPlacements(self.model, data, self.geometry, self.data)
        if math.isinf(within) or not self.rows_of or self.collector is None:
            return self.all_pairs
        if within != self.margin:
            n = self.geometry.ngeoms
            self.data.setSecurityMargins(self.geometry, np.full((n, n), within), True, False)
            self.margin = within
        self.manager.update(False)
        self.collector.init()
        pin.computeCollisions(self.manager, self.collector)
        found = self.collector.pair_indexes
        return [found[i] for i in range(len(found))]  # faster than list(found) or found.tolist()

    def compute(self, data: pin.Data, within: float, jacobians: bool, per_geometry: bool) -> Distances:
        """The rows with d < within. `data` holds the robot's kinematics at q: joint placements
        ``oMi`` and, for Jacobians, the joint Jacobians of ``pin.computeJointJacobians``."""
        candidates = self.candidates(data, within)
        if not candidates:
            return self.empty if jacobians else self.empty_without_jacobians
        rows: dict[int, tuple] = {}  # key (body pair or geometry pair) -> (k, d, result)
        geometry, gdata, rows_of = self.geometry, self.data, self.rows_of
        for k in candidates:
            result = pin.computeDistance(geometry, gdata, k)
            d = result.min_distance
            if not -FAILED < d < FAILED:
                result = self._retry(k)
                d = result.min_distance
            if d < within:
                key = k if per_geometry else rows_of[k][0]
                best = rows.get(key)
                if best is None or d < best[1]:
                    rows[key] = (k, d, result.getNearestPoint1(), result.getNearestPoint2(), result.normal)
        if not rows:
            return self.empty if jacobians else self.empty_without_jacobians
        chosen = sorted(rows.values())
        m = len(chosen)
        pair_ids = [row[0] for row in chosen]
        distance = np.array([row[1] for row in chosen])
        point1 = np.array([row[2] for row in chosen]).reshape(m, 3)
        point2 = np.array([row[3] for row in chosen]).reshape(m, 3)
        normal = np.array([row[4] for row in chosen]).reshape(m, 3)
        # coal leaves the normal unset between triangle meshes: rebuild it where it is not a
        # unit vector with point2 = point1 + d normal
        residual = point2 - point1 - distance[:, None] * normal
        error = np.einsum("ij,ij->i", residual, residual) + np.abs(np.einsum("ij,ij->i", normal, normal) - 1.0)
        for i in np.flatnonzero(~(error < 1e-12)).tolist():
            normal[i] = _fallback_normal(point1[i], point2[i], distance[i], gdata, *rows_of[pair_ids[i]][1:3])
        return Distances(
            pairs=tuple(self.body_pairs[rows_of[k][0]] for k in pair_ids),
            geometries=tuple((self.names[rows_of[k][1]], self.names[rows_of[k][2]]) for k in pair_ids),
            distance=distance, point1=point1, point2=point2, normal=normal,
            jacobian=self._jacobians(data, pair_ids, point1, normal) if jacobians else None,
        )

    def _retry(self, k: int) -> Any:
        """coal's answer for geometry pair k with a looser, longer penetration search (EPA), for
        the rare pairs where the default one fails."""
        _, g1, g2, _, _ = self.rows_of[k]
        request = coal.DistanceRequest()
        request.gjk_tolerance, request.epa_tolerance, request.epa_max_iterations = GJK_TOLERANCE, 1e-4, 1000
        result = coal.DistanceResult()
        o1, o2 = self.geometry.geometryObjects[g1], self.geometry.geometryObjects[g2]
        M1, M2 = self.data.oMg[g1], self.data.oMg[g2]
        coal.distance(o1.geometry, coal.Transform3s(M1.rotation, M1.translation),
                      o2.geometry, coal.Transform3s(M2.rotation, M2.translation), request, result)
        if not -FAILED < result.min_distance < FAILED:
            raise CollisionError(f"coal could not compute the distance between geometries '{self.names[g1]}' and "
                                 f"'{self.names[g2]}' (it returned {result.min_distance:g}); try convex_meshes=True "
                                 "or simpler shapes")
        return result

    def _jacobians(self, data: pin.Data, pair_ids: list[int], point1: np.ndarray, normal: np.ndarray) -> np.ndarray:
        """J_d = n^T (J_p2 - J_p1), from the WORLD (spatial) joint Jacobians J = [v_0; w]: a
        point p of a body moves at v_0 + w x p, so n^T v_p = [n; p x n]^T J v; and since
        p2 = p1 + d n, p2 x n = p1 x n: J_d = [n; p1 x n]^T (J2 - J1)."""
        model, nv = self.model, self.model.nv
        out = np.zeros((len(pair_ids), nv))
        if nv == 0:
            return out
        cache: dict[int, np.ndarray] = {}

        def spatial(j: int) -> np.ndarray:
            J = cache.get(j)
            if J is None:
                J = cache[j] = pin.getJointJacobian(model, data, j, WORLD).reshape(6, nv)
            return J

        for i, k in enumerate(pair_ids):
            _, _, _, j1, j2 = self.rows_of[k]
            if j1 == j2:
                continue  # fixed to each other: the distance does not change
            nx, ny, nz = normal[i].tolist()
            px, py, pz = point1[i].tolist()
            w = np.array((nx, ny, nz, py * nz - pz * ny, pz * nx - px * nz, px * ny - py * nx))
            J = spatial(j2) if not j1 else -spatial(j1) if not j2 else spatial(j2) - spatial(j1)
            out[i] = w @ J
        return out


def _fallback_normal(p1: np.ndarray, p2: np.ndarray, d: float, gdata: Any, g1: int, g2: int) -> np.ndarray:
    """A unit normal where coal gives none: the direction p1 -> p2 (with the sign of d), or, for
    touching triangle meshes (p1 = p2), the direction between the two geometries' origins, or z."""
    candidates = [gdata.oMg[g2].translation - gdata.oMg[g1].translation]
    if abs(d) > 1e-9:
        candidates.insert(0, (p2 - p1) * (1.0 if d > 0 else -1.0))
    for direction in candidates:
        length = float(np.linalg.norm(direction))
        if np.isfinite(length) and length > 1e-12:
            return direction / length
    return np.array([0.0, 0.0, 1.0])

"""CollisionModel: a robot's collision geometry, the body pairs checked, and obstacles.

Bodies are the robot's links that carry collision geometry (URDF ``<collision>`` elements, read
by Pinocchio into ``robot.collision_model``) and the obstacles added by the user. A pair of
bodies is checked when it is *active*; its distance is the smallest distance between their
geometries (conventions in :mod:`reljac.collision.distances`).

Default pairs: every pair of links with geometry except the pairs a robot cannot keep apart,
left out as robot setup tools (MoveIt's Setup Assistant) leave them out of an SRDF:

* ``rigid``: links fixed to each other (same Pinocchio joint): their distance never changes;
* ``adjacent``: links separated by exactly one joint (parent and child links, counting links
  fixed to them): they meet at that joint. With an SRDF, its ``<disable_collisions>`` replace
  this rule;
* ``touching at the reference configuration``: pairs at most ``touching_distance`` apart
  (default 10 mm, :class:`reljac.ik.CollisionAvoidance`'s default ``min_distance``) at
  ``reference_q`` (default: :meth:`reljac.Robot.reference_configuration`);
* ``near in most sampled configurations``: pairs at most ``touching_distance`` apart in at least
  the fraction ``always_near`` (95 %, MoveIt's "always in collision") of ``samples`` random
  configurations inside the joint limits (seeded: the same pairs every time).

The last two rules also apply on top of an SRDF (written for the meshes, while reljac checks
their convex hulls by default). :attr:`CollisionModel.dropped` lists every pair left out and why;
:meth:`CollisionModel.pairs_below` names the active pairs nearer than a distance at q.
"""

from __future__ import annotations

import copy
import math
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..exceptions import CollisionError
from ..srdf import SRDF, read_srdf
from ..validation import as_count, as_float
from . import shapes
from .bodies import Bodies, Obstacle
from .default_pairs import default_pairs
from .distances import Distances, Kernel

if TYPE_CHECKING:  # pragma: no cover
    from ..robot import Robot

TOUCHING_DISTANCE = 0.01  # [m] default touching_distance: CollisionAvoidance's default min_distance
SAMPLES = 100  # default number of random configurations of the always-near rule
ALWAYS_NEAR = 0.95  # default fraction of them (MoveIt Setup Assistant's "always in collision": 95 %)


def _check_distance(x: ArrayLike, what: str, *, allow_inf: bool = False) -> float:
    valid = "a number >= 0 [m] (or inf)" if allow_inf else "a finite number >= 0 [m]"
    return as_float(x, what, minimum=0.0, allow_inf=allow_inf, valid=valid, error=CollisionError)


class CollisionModel:
    """The collision geometry of a robot, its active pairs and obstacles.

    Args:
        robot: the robot (or a ``pin.RobotWrapper``); its ``collision_model`` (URDF
            ``<collision>`` elements) is copied.
        srdf: an SRDF file (or :class:`~reljac.collision.SRDF`) whose disabled pairs are left out
            (see the module docstring); default: the robot's own SRDF (``robot.srdf``), if any.
        pairs: the link pairs to check, instead of the default ones.
        geometry: a ``pin.GeometryModel`` to use instead of ``robot.collision_model``.
        reference_q: (nq,) configuration for the touching rule (default:
            ``robot.reference_configuration()``, inside the joint limits).
        touching_distance: [m] pairs at most this far apart at reference_q, or in most sampled
            configurations, are left out (>= 0; default 0.01).
        samples: random configurations (inside the joint limits, seeded) of the always-near rule
            (>= 0; 0 turns the rule off).
        always_near: pairs at most touching_distance apart in at least this fraction of the
            samples are left out, in (0, 1].
        convex_meshes: replace every mesh by its convex hull (default): signed distances, fast
            and smooth; False keeps the triangles (distances never below 0, slower).

    Raises:
        CollisionError: the robot has no collision geometry; an unknown link in `pairs`.
        SRDFError: a bad SRDF, or one naming links the robot does not have.
        URDFError: the collision geometry cannot be loaded (e.g. meshes not found).

    Not to be shared between threads without care: calls are serialized by a lock.
    """

    def __init__(self, robot: Robot, srdf: str | os.PathLike | SRDF | None = None,
                 pairs: Iterable[Sequence[str]] | None = None, *,
                 geometry: pin.GeometryModel | None = None, reference_q: ArrayLike | None = None,
                 touching_distance: float = TOUCHING_DISTANCE, samples: int = SAMPLES,
                 always_near: float = ALWAYS_NEAR, convex_meshes: bool = True) -> None:
        from ..robot import as_robot

        self.robot = robot = as_robot(robot)
        self._lock = threading.RLock()
        source = robot.collision_model if geometry is None else geometry
        if not isinstance(source, pin.GeometryModel):
            raise CollisionError(f"geometry must be a pin.GeometryModel, not {type(source).__name__}")
        if source.ngeoms == 0:
            where = (f"no <collision> elements in its URDF {robot.urdf_path}" if robot.urdf_path else
                     "it was not loaded from a URDF and was given no collision_model")
            raise CollisionError(f"robot '{robot.name}' has no collision geometry ({where}): nothing to compute "
                                 "distances between; add <collision> shapes to its links")
        model = robot.model
        if any(o.parentJoint >= model.njoints or o.parentFrame >= model.nframes for o in source.geometryObjects):
            raise CollisionError(f"geometry is not a geometry model of robot '{robot.name}' (a parent joint "
                                 "or frame is out of range)")
        geometry = source.copy()
        for obj in geometry.geometryObjects:
            if convex_meshes:
                obj.geometry = shapes.convex_hull(obj.geometry)
        self._bodies = Bodies(robot, geometry)
        self.links: list[str] = self._bodies.links  # model order
        self.srdf: SRDF | None = getattr(robot, "srdf", None)
        if srdf is not None:
            self.srdf = srdf if isinstance(srdf, SRDF) else read_srdf(srdf, self._bodies.robot_links())
        self.dropped: list[tuple[str, str, str]] = []
        touching_distance = _check_distance(touching_distance, "touching_distance")
        samples = as_count(samples, "samples", minimum=0, error=CollisionError)
        always_near = as_float(always_near, "always_near", minimum=0.0, strict=True, error=CollisionError,
                               valid="a fraction in (0, 1]")
        if always_near > 1:
            raise CollisionError(f"always_near must be a fraction in (0, 1], not {always_near}")
        reference_q = (robot.reference_configuration() if reference_q is None
                       else robot.validate_q(reference_q, name="reference_q"))
        if pairs is not None:
            self._pairs = self._bodies.canonical(self._bodies.check_pairs(pairs, allow_obstacles=False))
        else:
            self._pairs, self.dropped = default_pairs(self, reference_q, touching_distance, samples, always_near)
        self._rebuild()

    def __getstate__(self) -> dict:
        """What a copy or a pickle keeps: the robot, bodies, pairs and SRDF; the lock and the
        distance kernel (coal's and Pinocchio's data) are made anew on the other side."""
        with self._lock:
            return {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_kernel", "_data")}

    def __copy__(self) -> CollisionModel:
        """A model of its own over the same robot (a shallow copy shared the bodies: an obstacle
        added to one broke the other)."""
        with self._lock:
            state = self.__getstate__()
            state["_bodies"] = copy.deepcopy(state["_bodies"], {id(self.robot): self.robot})
        new = object.__new__(CollisionModel)
        new.__setstate__(state)
        return new

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._rebuild()

    # ------------------------------------------------------------------ names
    @property
    def bodies(self) -> list[str]:
        """Names of the links with geometry, then of the obstacles."""
        return self._bodies.names

    @property
    def obstacles(self) -> list[str]:
        """Names of the obstacles, in the order added."""
        return self._bodies.obstacle_names

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """Active pairs (body 1, body 2) by name; normals point from body 1 to body 2."""
        return list(self._pairs)

    @property
    def geometry_model(self) -> pin.GeometryModel:
        """The geometry model in use (robot geometry, then obstacles; its ``collisionPairs`` are
        the active geometry pairs). Read it, do not modify it."""
        return self._kernel.geometry

    # ------------------------------------------------------------------ default pairs
    def joint_of(self, name: str) -> int:
        """The id of the joint a link with geometry (or an obstacle, by its frame) moves with."""
        return self._bodies.joint_of(name)

    # ------------------------------------------------------------------ editing pairs
    def check_only(self, pairs: Iterable[Sequence[str]]) -> None:
        """Check exactly these pairs of bodies from now on (:attr:`dropped` is left as it is: the
        default-pair rules measure their candidates so)."""
        with self._lock:
            self._pairs = self._bodies.canonical(self._bodies.check_pairs(pairs))
            self._rebuild()

    def add_pairs(self, pairs: Iterable[Sequence[str]]) -> None:
        """Check these pairs of bodies too (names of links with geometry or obstacles)."""
        with self._lock:
            new = self._bodies.check_pairs(pairs)
            self._pairs = self._bodies.canonical(self._pairs + new)
            active = set(self._pairs)
            self.dropped = [d for d in self.dropped if tuple(sorted(d[:2], key=self._bodies.order)) not in active]
            self._rebuild()

    def remove_pairs(self, pairs: Iterable[Sequence[str]]) -> None:
        """Stop checking these pairs.

        Raises:
            CollisionError: an unknown name, or a pair that is not active.
        """
        with self._lock:
            gone = set(self._bodies.canonical(self._bodies.check_pairs(pairs)))
            missing = gone - set(self._pairs)
            if missing:
                a, b = sorted(missing)[0]
                raise CollisionError(f"pair ({a!r}, {b!r}) is not active (see CollisionModel.pairs)")
            self._pairs = [p for p in self._pairs if p not in gone]
            self.dropped += [(a, b, "removed by the user") for a, b in sorted(gone)]
            self._rebuild()

    # ------------------------------------------------------------------ obstacles
    def add_obstacle(self, name: str, shape: Any, placement: Any = None, *, frame: Any = None,
                     links: Iterable[str] | None = None) -> None:
        """Add (or replace) an obstacle: a shape fixed in the world or to a robot frame.

        Each call rebuilds the pairs: add many obstacles with :meth:`add_obstacles`. An obstacle
        replaced is a new one: its pairs are those of `links`, any removed before back on.

        Args:
            name: its name (not a link name); it becomes a body of the pairs.
            shape: a coal geometry, e.g. ``reljac.collision.box((1.2, 0.8, 0.05))``.
            placement: T_fo, the shape's pose in `frame` (``pin.SE3`` or (4, 4)), or a
                position (3,) [m]; default identity.
            frame: the robot frame it moves with (name or id); None: fixed in the world.
            links: the links it is checked against (default: every link with geometry that is
                not fixed to `frame`).

        Raises:
            CollisionError: a bad name, shape or link. FrameNotFound: unknown frame.
        """
        with self._lock:
            kinds = self._bodies.shape_kinds()
            self._place([self._bodies.checked_obstacle(name, shape, placement, frame, links, kinds)])

    def add_obstacles(self, obstacles: Iterable[Mapping[str, Any]]) -> None:
        """Add (or replace) many obstacles with one rebuild of the pairs (n calls of
        :meth:`add_obstacle` rebuild n times: O(n^2); e.g. a point cloud as spheres).

        Args:
            obstacles: one mapping per obstacle of :meth:`add_obstacle`'s arguments: ``name`` and
                ``shape``, optionally ``placement``, ``frame`` and ``links``.

        Raises:
            CollisionError, FrameNotFound: as :meth:`add_obstacle`, the message starting with
                "obstacle i ('name')" (i from 1); two obstacles of one name. Nothing is added then.

        A thousand obstacles or so: Pinocchio's geometry model grows a table of every pair of its
        objects with each object it takes (3000 objects: 12 s); merge small ones into larger shapes.
        """
        with self._lock:
            self._place(self._bodies.checked_obstacles(obstacles))

    def _place(self, records: list[Obstacle]) -> None:
        """Put checked obstacles in (replacing those of their names) and rebuild once; all or,
        interrupted (a Ctrl-C in a long rebuild), none."""
        kept = (self._pairs, self.dropped, self._bodies.kept())
        try:
            names = {r.name for r in records}
            self._pairs = [p for p in self._pairs if p[0] not in names and p[1] not in names]
            self.dropped = [d for d in self.dropped if d[0] not in names and d[1] not in names]  # a new obstacle's
            for record in records:
                self._bodies.put_obstacle(record)
            self._pairs = self._bodies.canonical(self._pairs + [(link, r.name) for r in records for link in r.links])
            self._rebuild()
        except BaseException:
            self._pairs, self.dropped = kept[0], kept[1]
            self._bodies.restore(kept[2])
            raise

    def move_obstacle(self, name: str, placement: Any) -> None:
        """Set an obstacle's pose T_fo in its frame (cheap: no rebuild; e.g. a tracked object)."""
        with self._lock:
            g, T_jo = self._bodies.move_obstacle(name, shapes.as_placement(placement))
            self._kernel.geometry.geometryObjects[g].placement = T_jo

    def remove_obstacle(self, name: str) -> None:
        """Remove an obstacle and its pairs."""
        with self._lock:
            self._bodies.drop_obstacle(name)
            self._pairs = [p for p in self._pairs if name not in p]
            self.dropped = [d for d in self.dropped if name not in d[:2]]
            self._rebuild()

    def obstacle(self, name: str) -> Obstacle:
        """The obstacle record (geometry, frame id, T_fo, links); do not modify it."""
        return self._bodies.obstacle(name)

    # ------------------------------------------------------------------ the kernel
    def _rebuild(self) -> None:
        geometry, geoms = self._bodies.geometry_model()
        pair_body = []
        for i, (a, b) in enumerate(self._pairs):
            for ga in geoms[a]:
                for gb in geoms[b]:
                    geometry.addCollisionPair(pin.CollisionPair(ga, gb))
                    pair_body.append(i)
        self._kernel = Kernel(self.robot.model, geometry, np.array(pair_body, dtype=int), list(self._pairs))
        self._data = self.robot.model.createData()

    # ------------------------------------------------------------------ queries
    def distances_of_pairs(self, pairs: Sequence[int], distance: ArrayLike, point1: ArrayLike, point2: ArrayLike,
                           normal: ArrayLike, jacobian: ArrayLike) -> Distances:
        """:class:`Distances` of rows computed elsewhere (the compiled step's), one per geometry pair:
        `pairs` indexes ``geometry_model.collisionPairs``; distance (m,) [m]; point1, point2, normal
        (m, 3) in the world frame; jacobian (m, nv)."""
        kernel = self._kernel
        return Distances(
            pairs=tuple(kernel.body_pairs[kernel.rows_of[k][0]] for k in pairs),
            geometries=tuple((kernel.names[kernel.rows_of[k][1]], kernel.names[kernel.rows_of[k][2]]) for k in pairs),
            distance=np.array(distance), point1=np.array(point1).reshape(-1, 3),
            point2=np.array(point2).reshape(-1, 3), normal=np.array(normal).reshape(-1, 3),
            jacobian=np.array(jacobian).reshape(len(pairs), self.robot.nv))

    def compute(self, data: pin.Data, *, within: float = math.inf, jacobians: bool = True,
                per_geometry: bool = False) -> Distances:
        """Distances of the active pairs nearer than `within` [m], from kinematics already done.

        The per-step call of a controller. `data` must hold the robot's kinematics at q:
        ``pin.computeJointJacobians(model, data, q)`` (as :class:`reljac.Kinematics` does) gives
        the joint placements and, for ``jacobians``, the joint Jacobians. One row per pair of
        bodies (its closest geometries), or with `per_geometry` one per geometry pair.
        """
        within = _check_distance(within, "within", allow_inf=True)
        if not isinstance(data, pin.Data) or len(data.oMi) != self.robot.model.njoints:
            raise CollisionError(f"data must be a pin.Data of robot '{self.robot.name}' (robot.model.createData()), "
                                 f"with its kinematics computed at q; got {type(data).__name__}")
        with self._lock:
            return self._kernel.compute(data, within, bool(jacobians), bool(per_geometry))

    def distances(self, q: ArrayLike, *, within: float = math.inf, jacobians: bool = True,
                  per_geometry: bool = False) -> Distances:
        """Distances of the active pairs nearer than `within` [m] at configuration q (nq,)."""
        q = self.robot.validate_q(q)
        within = _check_distance(within, "within", allow_inf=True)
        with self._lock:
            pin.computeJointJacobians(self.robot.model, self._data, q)
            return self._kernel.compute(self._data, within, bool(jacobians), bool(per_geometry))

    def pairs_below(self, q: ArrayLike, distance: float) -> list[tuple[str, str, float]]:
        """The active pairs nearer than `distance` [m] at configuration q (nq,), as
        (body 1, body 2, d [m]), nearest first: e.g. the pairs a collision avoidance with
        ``min_distance = distance`` starts below its minimum at q."""
        rows = self.distances(q, within=_check_distance(distance, "distance", allow_inf=True), jacobians=False)
        order = np.argsort(rows.distance, kind="stable")
        return [(*rows.pairs[i], float(rows.distance[i])) for i in order]

    def pair_distance(self, q: ArrayLike, body1: str, body2: str) -> Distances:
        """The one row of the pair (body1, body2) at q, however far apart (normal from body1 to
        body2 as given), with its distance Jacobian (nv,) in ``jacobian[0]``."""
        a, b = self._bodies.check_pairs([(body1, body2)])[0]
        key = tuple(sorted((a, b), key=self._bodies.order))
        if key not in self._pairs:
            raise CollisionError(f"pair ({a!r}, {b!r}) is not active; add it with add_pairs first")
        rows = self.distances(q)
        i = rows.index(a, b)
        assert rows.jacobian is not None  # distances() computes them by default
        row = slice(i, i + 1)
        if rows.pairs[i] == (a, b):
            return Distances(((a, b),), (rows.geometries[i],), rows.distance[row].copy(), rows.point1[row].copy(),
                             rows.point2[row].copy(), rows.normal[row].copy(), rows.jacobian[row].copy())
        g1, g2 = rows.geometries[i]
        return Distances(((a, b),), ((g2, g1),), rows.distance[row].copy(), rows.point2[row].copy(),
                         rows.point1[row].copy(), -rows.normal[row], -rows.jacobian[row])

    def __repr__(self) -> str:
        return (f"CollisionModel('{self.robot.name}', {len(self.links)} links, {len(self.obstacles)} obstacles, "
                f"{len(self._pairs)} pairs, {self._kernel.geometry.ngeoms} geometries)")


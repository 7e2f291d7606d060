"""Collision geometry, distances and distance Jacobians between robot links and obstacles.

Built on Pinocchio's collision layer (coal, shipped with the ``pin`` wheel). Everything is in
the world frame w, in metres::

    from reljac.collision import CollisionModel, box

    cm = CollisionModel(robot)                       # or CollisionModel(robot, srdf="robot.srdf")
    cm.pairs                                         # active pairs (link, link) by name
    cm.dropped                                       # pairs left out, and why
    cm.add_obstacle("table", box((1.0, 1.6, 0.04)), [0.6, 0.0, 0.7])
    rows = cm.distances(q, within=0.05)              # pairs nearer than 5 cm
    rows.distance, rows.point1, rows.point2, rows.normal, rows.jacobian   # (m,), (m, 3) x 3, (m, nv)

Per control step, from kinematics already computed (``reljac.Kinematics(robot, q).data``)::

    rows = cm.compute(kin.data, within=influence_distance)

Modules: ``srdf`` (SRDF disabled pairs and named states), ``shapes`` (obstacle shapes, hulls,
bounding spheres), ``distances`` (the per-step kernel and its conventions: signed distance,
witness points, normal from body 1 to body 2, ``d_dot = J_d @ v``), ``model``
(:class:`CollisionModel`: geometry, pairs, obstacles), ``bodies`` (its bodies by name: the links with
geometry and the obstacles, :class:`Obstacle`; their order and the checks of names and pairs).
"""

from __future__ import annotations

import math
from typing import Any

from numpy.typing import ArrayLike

from ..exceptions import CollisionError, SRDFError
from ..srdf import SRDF, DisabledPair, read_srdf
from .bodies import Obstacle
from .distances import Distances
from .model import CollisionModel
from .shapes import box, capsule, cylinder, mesh, sphere

__all__ = [
    "SRDF",
    "CollisionError",
    "CollisionModel",
    "DisabledPair",
    "Distances",
    "Obstacle",
    "SRDFError",
    "box",
    "capsule",
    "cylinder",
    "distances",
    "mesh",
    "read_srdf",
    "sphere",
]

def distances(robot_or_model: Any, q: ArrayLike, *, within: float = math.inf, jacobians: bool = True) -> Distances:
    """Distances of the active pairs nearer than `within` [m] at q (nq,).

    Given a :class:`~reljac.Robot` (or a ``pin.RobotWrapper``), its :attr:`~reljac.Robot.collisions`
    model (built on first use, with its SRDF's pairs, kept by the robot) is used; give a
    CollisionModel for chosen pairs or obstacles.
    """
    if isinstance(robot_or_model, CollisionModel):
        model = robot_or_model
    else:
        import pinocchio as pin

        from ..robot import as_robot

        if not isinstance(getattr(robot_or_model, "model", robot_or_model), pin.Model):
            raise CollisionError(
                f"distances needs a reljac.Robot or a CollisionModel, not {type(robot_or_model).__name__}")
        model = as_robot(robot_or_model).collisions
    return model.distances(q, within=within, jacobians=jacobians)

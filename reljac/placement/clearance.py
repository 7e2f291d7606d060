"""Where the base itself cannot stand: its bodies against the obstacles, one placement at a time.

The pose maps know nothing of obstacles. Before they are asked, each placement is tested for the
bodies the arms cannot move: the links carried by the base joint alone, and by the shared joints
(a torso) at the reference configuration, against the collision model's obstacles fixed in the
world (coal's distances between their convex hulls), for the pairs the collision model checks (an
obstacle added for some links only, or a pair removed, is not tested: a floor slab the base may
touch blocked every placement). A placement where one of them is nearer an obstacle than
`min_distance` is blocked: no arm configuration frees it. (The arms' own collisions
are the exact check's: :mod:`reljac.placement.check`.) A bounding-sphere test first keeps coal
for the pairs that may touch.
"""

from __future__ import annotations

import coal
import numpy as np
import pinocchio as pin

from ..collision import CollisionModel
from ..collision.shapes import convex_hull
from .base import MobileBase
from .chains import HandChains
from .orbits import rigid_inverse


def carried_links(mobile: MobileBase, chains: HandChains) -> list[str]:
    """The links with geometry that only the base joint and the shared joints move."""
    model = mobile.robot.model
    allowed = {model.getJointId(mobile.joint), *(model.getJointId(name) for name in chains.shared)}
    out = []
    for obj in mobile.robot.collision_model.geometryObjects:
        frame = model.frames[obj.parentFrame]
        j, path = frame.parentJoint, set()
        while j > 0:
            path.add(j)
            j = model.parents[j]
        if path <= allowed and frame.name not in out:
            out.append(frame.name)
    return out


class Clearance:
    """Tests placements for the base's bodies against the world-fixed obstacles of `collision`.

    Args:
        mobile: the robot and its base joint; chains: the shared joints (held at the reference).
        collision: the collision model whose obstacles count (its robot is ``mobile.robot``).
        min_distance: [m] a body nearer an obstacle than this blocks the placement, where the
            collision model checks that pair.
    """

    def __init__(self, mobile: MobileBase, chains: HandChains, collision: CollisionModel, *,
                 min_distance: float = 0.0) -> None:
        robot = mobile.robot
        self.mobile, self.min_distance = mobile, float(min_distance)
        links = set(carried_links(mobile, chains))
        data = robot.model.createData()
        q = mobile.configuration((0.0, 0.0, 0.0))
        pin.framesForwardKinematics(robot.model, data, q)
        T_wB0 = mobile.base_poses([(0.0, 0.0, 0.0)])[0]
        checked = {frozenset(pair) for pair in collision.pairs}
        self.bodies = []  # (link, geometry, T_Bg (4, 4), bounding centre in B (3,), radius)
        geometry = robot.collision_model
        gdata = geometry.createData()
        pin.updateGeometryPlacements(robot.model, data, geometry, gdata, q)
        for g, obj in enumerate(geometry.geometryObjects):
            link = robot.model.frames[obj.parentFrame].name
            if link not in links:
                continue
            shape = convex_hull(obj.geometry)
            T_Bg = rigid_inverse(T_wB0) @ gdata.oMg[g].homogeneous
            self.bodies.append((link, shape, T_Bg, *_sphere(shape, T_Bg)))
        self.obstacles = []  # (name, geometry, T_wo (4, 4), bounding centre in the world (3,), radius)
        for name in collision.obstacles:
            obstacle = collision.obstacle(name)
            if obstacle.frame != 0:
                continue
            T = obstacle.T_fo.homogeneous
            self.obstacles.append((name, obstacle.geometry, T, *_sphere(obstacle.geometry, T)))
        self.checked = checked

    def free(self, placements: np.ndarray) -> np.ndarray:
        """(N,) bool: placements (N, 3) where no carried body is nearer an obstacle than min_distance."""
        T_wB = self.mobile.base_poses(placements)
        free = np.ones(len(T_wB), bool)
        request, result = coal.DistanceRequest(), coal.DistanceResult()
        for link, shape, T_Bg, centre, radius in self.bodies:
            T_wg = T_wB @ T_Bg
            c = T_wB[:, :3, :3] @ centre + T_wB[:, :3, 3]
            for name, obstacle, T_wo, o_centre, o_radius in self.obstacles:
                if frozenset((link, name)) not in self.checked:
                    continue
                near = free & (np.linalg.norm(c - o_centre, axis=1) < radius + o_radius + self.min_distance)
                tf_o = coal.Transform3s(T_wo[:3, :3], T_wo[:3, 3])
                for i in np.flatnonzero(near):
                    result.clear()
                    d = coal.distance(shape, coal.Transform3s(T_wg[i, :3, :3], T_wg[i, :3, 3]), obstacle, tf_o,
                                      request, result)
                    if d < self.min_distance:
                        free[i] = False
        return free


def _sphere(shape: coal.CollisionGeometry, T: np.ndarray) -> tuple[np.ndarray, float]:
    """A sphere (centre in the frame T places the shape in, radius [m]) holding the shape."""
    shape.computeLocalAABB()
    return T[:3, :3] @ np.asarray(shape.aabb_center) + T[:3, 3], float(shape.aabb_radius)

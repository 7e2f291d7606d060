"""The debug page's overlays: 6-DoF drag handles on task targets, and saturated joints marked.

Both are :class:`~reljac.viz.overlays.Overlay` objects of the :class:`~reljac.viz.Viewer`, drawn
with its shapes (one scene, one set of overlays). Poses are in the world frame w [m]; ``oMf``
is Pinocchio's list of frame placements T_wf.

A handle of a target of frame b in frame a is drawn at T_wh = T_wa T_ah, where T_ah is the
target (a pose, or a position with a's axes): it moves with frame a. Its parts, all in the
handle's frame and drawn over the robot: an RGB triad (drag an arrow: move along that axis),
three rings of radius ``RING_RADIUS`` times the handle's size, each around one axis (drag a ring:
turn about that axis), and a white ball at its origin (drag it: move in the plane facing the
camera). The page finds the parts by this geometry (``debug_page.js``), so the two agree on
HANDLE_PARTS below. The handle of a task with bounds also draws them, in the handle's frame (the
bounds are on the error from the target, so they move with it): the edges of the box of e's
position part, or three great circles of a ball; they are not parts to drag.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from .overlays import Overlay
from .shapes import AXIS_COLORS, FRAME_AXIS_RADIUS, OnTop, draw_axes, material, mg, translation

RING_RADIUS = 0.75  # ring radius, as a fraction of the handle's size
BALL_RADIUS = 0.12  # origin ball radius, same
RING_POINTS = 64
HANDLE_COLOR = 0xFFFFFF
MARK_COLOR = 0xE53935  # a saturated joint
MARK_RADIUS = 0.35  # of a saturated joint's ball, as a fraction of the viewer's scale
BOUNDS_COLOR = 0xFB8C00  # the edges of a task's bounds
BOX_EDGES = [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)]
HANDLE_PARTS = {"ring_radius": RING_RADIUS, "ball_radius": BALL_RADIUS}


def ring_points(radius: float, axis: int, n: int = RING_POINTS) -> np.ndarray:
    """(3, n) points of a circle of `radius` around coordinate axis `axis` (0, 1, 2)."""
    angle = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    u, v = [k for k in range(3) if k != axis]
    points = np.zeros((3, n))
    points[u], points[v] = radius * np.cos(angle), radius * np.sin(angle)
    return points


def region_lines(region: tuple) -> np.ndarray:
    """(3, 2k) float32 end points of the k segments drawing a region of bounds: a box's 12 edges
    (``("box", lower (3,), upper (3,))``) or three circles of a ball (``("ball", radius)``)."""
    if region[0] == "box":
        lo, hi = region[1], region[2]
        corners = np.array([[(hi if i & 4 else lo)[0], (hi if i & 2 else lo)[1], (hi if i & 1 else lo)[2]]
                            for i in range(8)])
        points = np.array([corners[k] for edge in BOX_EDGES for k in edge]).T
    else:
        loops = [ring_points(region[1], axis) for axis in range(3)]
        points = np.hstack([np.repeat(loop, 2, axis=1)[:, np.r_[1:2 * RING_POINTS, 0]] for loop in loops])
    far = np.finfo(np.float32).max / 4  # a huge ball's points (radius 1e300) drawn this far, without an overflow
    return np.where(np.isfinite(points), np.clip(points, -far, far), points).astype(np.float32)


class Handle(Overlay):
    """A drag handle of `size` [m] at T_wa(q) T_ah, a the frame id `frame_a` (None: the world).

    ``T_ah``: the handle's pose in a (``pin.SE3``), set with :meth:`move`; ``T_wh``: in w, as
    last drawn.
    """

    def __init__(self, node: Any, frame_a: int | None, T_ah: pin.SE3, size: float, draw: bool = True,
                 region: tuple | None = None) -> None:
        super().__init__(node)
        self.frame_a, self.T_ah, self.size = frame_a, T_ah.copy(), size
        self.region = region  # debug_state.bounds_region's: ("box", lower, upper), ("ball", radius) or None
        self.T_wh = pin.SE3.Identity()
        if draw:
            self.attach(node)

    def attach(self, node: Any) -> Handle:
        """Draw the handle's parts under `node` (a viewer's overlay node); returns self."""
        self.node = node
        draw_axes(node["axes"], self.size, FRAME_AXIS_RADIUS)
        for k, axis in enumerate("xyz"):
            loop = ring_points(RING_RADIUS * self.size, k).astype(np.float32)
            node["rings"][axis].set_object(mg.LineLoop(mg.PointsGeometry(loop), mg.LineBasicMaterial(
                color=AXIS_COLORS[axis], depthTest=False, linewidth=2)))
        node["ball"].set_object(OnTop(mg.Sphere(BALL_RADIUS * self.size), material(HANDLE_COLOR, on_top=True)))
        if self.region is not None:
            lines = mg.LineBasicMaterial(color=BOUNDS_COLOR, depthTest=False, linewidth=2)  # over the robot
            node["bounds"].set_object(mg.LineSegments(mg.PointsGeometry(region_lines(self.region)), lines))
        return self

    def move(self, T_ah: pin.SE3, oMf: Any) -> None:
        """Put the handle at T_ah in frame a and draw it there."""
        self.T_ah = T_ah.copy()
        self.update(oMf)

    def update(self, oMf: Any) -> None:
        T_wa = pin.SE3.Identity() if self.frame_a is None else oMf[self.frame_a]
        self.T_wh = T_wa * self.T_ah
        self.node.set_transform(self.T_wh.homogeneous)


class JointMarks(Overlay):
    """A red ball on each joint in ``joints`` (names), at the joint's placement T_wj; set
    ``joints`` then display. ``shown``: the names drawn last."""

    def __init__(self, node: Any, model: pin.Model, radius: float, get_joint_placements: Any) -> None:
        super().__init__(node)
        self.model, self.radius, self.placements = model, radius, get_joint_placements
        self.joints: list[str] = []
        self.shown: set[str] = set()

    def attach(self, node: Any) -> JointMarks:
        """Draw under `node` (a viewer's overlay node) from now on; returns self."""
        self.node = node
        return self

    def update(self, oMf: Any) -> None:
        oMi = self.placements()
        wanted = {name for name in self.joints if self.model.existJointName(name)}
        for name in self.shown - wanted:
            self.node[name].delete()
        for name in wanted - self.shown:
            self.node[name].set_object(OnTop(mg.Sphere(self.radius), material(MARK_COLOR, on_top=True)))
        for name in wanted:
            self.node[name].set_transform(translation(oMi[self.model.getJointId(name)].translation))
        self.shown = wanted

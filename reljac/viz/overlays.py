"""Overlays: things drawn under <root>/overlays/<name> that follow the robot on each display.

Every pose is in the world frame w [m]; ``oMf`` is Pinocchio's list of frame placements T_wf.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .shapes import (ELLIPSOID_COLOR, FRAME_AXIS_RADIUS, SEGMENT_COLOR, SEGMENT_RADIUS, TARGET_AXIS_RADIUS,
                     TARGET_SPHERE_COLOR, TARGET_SPHERE_RADIUS, TRAIL_COLOR, Sprite, draw_axes, material,
                     rotation_y_to, translation)
from ..robot import Robot
from .shapes import mg


class Overlay:
    """Something drawn under <root>/overlays/<name>; update() runs after each display."""

    def __init__(self, node) -> None:
        self.node = node

    def update(self, oMf) -> None:  # pragma: no cover - overridden
        pass


class FrameTriad(Overlay):
    def __init__(self, node, frame_id: int, scale: float, label: str | None) -> None:
        super().__init__(node)
        self.frame_id = frame_id
        draw_axes(node, scale, FRAME_AXIS_RADIUS)
        if label:
            node["label"].set_object(Sprite(label, size=scale))
            node["label"].set_transform(translation([0.0, 0.0, 1.3 * scale]))

    def update(self, oMf) -> None:
        self.node.set_transform(oMf[self.frame_id].homogeneous)


class Target(Overlay):
    def __init__(self, node, T_wt: np.ndarray, scale: float) -> None:
        super().__init__(node)
        self.scale = scale
        draw_axes(node, scale, TARGET_AXIS_RADIUS)
        node["origin"].set_object(mg.Mesh(mg.Sphere(TARGET_SPHERE_RADIUS * scale),
                                          material(TARGET_SPHERE_COLOR)))
        node.set_transform(T_wt)


class Segment(Overlay):
    def __init__(self, node, frame_a: int, frame_b: int) -> None:
        super().__init__(node)
        self.frame_a, self.frame_b = frame_a, frame_b
        node["bar"].set_object(mg.Mesh(mg.Cylinder(1.0, SEGMENT_RADIUS), material(SEGMENT_COLOR)))

    def update(self, oMf) -> None:
        p_wa, p_wb = oMf[self.frame_a].translation, oMf[self.frame_b].translation
        d = p_wb - p_wa
        length = float(np.linalg.norm(d))
        T = np.eye(4)  # the unit cylinder along y, stretched to `length` and turned onto d
        R = rotation_y_to(d / length) if length > 1e-12 else np.eye(3)
        T[:3, :3] = R @ np.diag([1.0, max(length, 1e-9), 1.0])
        T[:3, 3] = 0.5 * (p_wa + p_wb)
        self.node["bar"].set_transform(T)


class Trail(Overlay):
    def __init__(self, node, frame_id: int, length: int) -> None:
        super().__init__(node)
        self.frame_id = frame_id
        self.points: deque[np.ndarray] = deque(maxlen=length)

    def update(self, oMf) -> None:
        self.points.append(oMf[self.frame_id].translation.copy())
        positions = np.array(self.points, dtype=np.float32).T  # (3, n)
        self.node.set_object(mg.Line(mg.PointsGeometry(positions),
                                     mg.LineBasicMaterial(color=TRAIL_COLOR)))


class Ellipsoid(Overlay):
    """Manipulability ellipsoid of b's linear velocity measured in a: axes along the left
    singular vectors of J_ab[:3] (world axes), radii = scale * singular values, centred on b."""

    def __init__(self, node, robot: Robot, frame_a: int, frame_b: int, scale: float, get_q) -> None:
        super().__init__(node)
        self.robot, self.frame_a, self.frame_b, self.scale, self.get_q = robot, frame_a, frame_b, scale, get_q
        self.radii = np.zeros(3)
        node["shape"].set_object(mg.Mesh(mg.Sphere(1.0), mg.MeshLambertMaterial(
            color=ELLIPSOID_COLOR, opacity=0.35, transparent=True)))

    def update(self, oMf) -> None:
        from ..relative import Kinematics

        J = Kinematics(self.robot, self.get_q()).relative_jacobian(self.frame_a, self.frame_b, expressed_in="world")
        U, sigma, _ = np.linalg.svd(J[:3])  # U (3, 3); sigma has min(3, nv) entries
        if np.linalg.det(U) < 0:
            U[:, 2] *= -1.0
        self.radii = self.scale * np.pad(sigma, (0, 3 - sigma.size))
        T = np.eye(4)
        T[:3, :3] = U @ np.diag(np.maximum(self.radii, 1e-6))
        T[:3, 3] = oMf[self.frame_b].translation
        self.node["shape"].set_transform(T)

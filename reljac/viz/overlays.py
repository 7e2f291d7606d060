"""Overlays: things drawn under <root>/overlays/<name> that follow the robot on each display,
and the frame labels drawn under <root>/labels/<name>.

Every pose is in the world frame w [m]; ``oMf`` is Pinocchio's list of frame placements T_wf.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from ..robot import Robot
from .camera import CameraPose, view_axes
from .labels import place_labels
from .shapes import (
    ELLIPSOID_COLOR,
    FRAME_AXIS_RADIUS,
    LEADER_COLOR,
    SEGMENT_COLOR,
    SEGMENT_RADIUS,
    TARGET_AXIS_RADIUS,
    TARGET_SPHERE_COLOR,
    TARGET_SPHERE_RADIUS,
    TRAIL_COLOR,
    Label,
    draw_axes,
    material,
    mg,
    rotation_y_to,
    translation,
)


class Overlay:
    """Something drawn under <root>/overlays/<name>.

    ``place`` runs when the overlay is created, ``update`` after each display; ``label`` is the
    overlay's :class:`FrameLabel` (or None), laid out by :class:`LabelLayer`.
    """

    label: FrameLabel | None = None

    def __init__(self, node: Any) -> None:
        self.node = node

    def place(self, oMf: Any) -> None:
        self.update(oMf)

    def update(self, oMf: Any) -> None:  # pragma: no cover - overridden
        pass

    def on_camera(self, camera: CameraPose) -> None:
        """The viewer's camera was framed (at `camera`)."""

    def world_box(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(lower, upper) corners (3,) in w [m] the camera frames with the robot, or None."""
        return None

    def delete(self) -> None:
        self.node.delete()
        if self.label is not None:
            self.label.node.delete()


class FrameLabel:
    """A text label at node <root>/labels/<name>, tied to a frame's origin by a thin leader line.

    ``width``, ``height``: its size [m]; ``offset``: (3,) from the frame's origin to the label's
    centre in w [m] (None until first placed); ``image_offset``: the same in the layout's picture
    plane, reused as the preferred spot at the next layout.
    """

    def __init__(self, node: Any, frame_id: int, text: str, height: float) -> None:
        self.node, self.frame_id, self.text = node, frame_id, text
        sprite = Label(text, height)
        self.width, self.height = sprite.width, sprite.height
        node["text"].set_object(sprite)
        # The leader: a unit segment along y, turned and stretched by its node's transform at
        # each move (a transform is 16 numbers; drawing the line anew was a mesh per move).
        ends = np.array([[0.0, 0.0], [0.0, 1.0], [0.0, 0.0]], dtype=np.float32)  # (3, 2)
        node["leader"].set_object(mg.Line(mg.PointsGeometry(ends), mg.LineBasicMaterial(
            color=LEADER_COLOR, depthTest=False, transparent=True, opacity=0.8)))
        self.offset: np.ndarray | None = None
        self.image_offset = np.full(2, np.nan)

    def resize(self, height: float) -> None:
        """Draw the label `height` [m] tall (its leader is drawn again at the next move)."""
        sprite = Label(self.text, height)
        self.width, self.height = sprite.width, sprite.height
        self.node["text"].set_object(sprite)
        self.offset = None
        self.image_offset = np.full(2, np.nan)

    def move(self, anchor: np.ndarray, offset: np.ndarray) -> None:
        """Put the label's centre at anchor + offset (both (3,) in w), its leader from there to
        the anchor."""
        self.node.set_transform(translation(anchor + offset))
        if self.offset is None or np.linalg.norm(offset - self.offset) > 1e-6 * self.height:
            length = float(np.linalg.norm(offset))
            T = np.eye(4)  # the unit segment along y onto -offset (label centre -> anchor)
            R = rotation_y_to(-offset / length) if length > 1e-12 else np.eye(3)
            T[:3, :3] = R @ np.diag([1.0, max(length, 1e-9), 1.0])
            self.node["leader"].set_transform(T)
            self.offset = offset.copy()


class LabelLayer:
    """Lays the frame labels out in the picture of a camera so that none overlaps another."""

    def __init__(self, gap: float) -> None:
        self.gap = gap  # [m] clearance between a label and its frame's origin

    def update(self, labels: list[FrameLabel], oMf: Any, camera: CameraPose) -> None:
        """Place every label beside its frame's origin, in the picture seen from `camera`.

        The layout is done in the plane facing the camera with each label scaled by its depth
        (perspective), so what is drawn apart there is drawn apart on the screen.
        """
        if not labels:
            return
        right, up, back = view_axes(camera.direction)
        anchors = np.array([oMf[label.frame_id].translation for label in labels])  # (n, 3)
        depth = np.maximum((camera.position - anchors) @ back, 1e-6)  # (n,) distance ahead
        reference = camera.distance
        zoom = reference / depth  # apparent magnification of each anchor, 1 at the target
        rel = anchors - camera.target  # lateral offsets from the optical axis, scaled by depth
        anchors_2d = np.stack([rel @ right, rel @ up], axis=1) * zoom[:, None]
        sizes = np.array([[label.width, label.height] for label in labels]) * zoom[:, None]
        previous = np.array([label.image_offset for label in labels])
        centres = place_labels(anchors_2d, sizes, gap=self.gap, previous=previous)
        for label, anchor, a2, c2, z in zip(labels, anchors, anchors_2d, centres, zoom, strict=True):
            label.image_offset = c2 - a2
            d = label.image_offset / z  # back to metres at the anchor's depth
            label.move(anchor, d[0] * right + d[1] * up)


class FrameTriad(Overlay):
    def __init__(self, node: Any, frame_id: int, scale: float, label: FrameLabel | None) -> None:
        super().__init__(node)
        self.frame_id, self.scale, self.label = frame_id, scale, label
        draw_axes(node, scale, FRAME_AXIS_RADIUS)

    def update(self, oMf: Any) -> None:
        self.node.set_transform(oMf[self.frame_id].homogeneous)


class Target(Overlay):
    def __init__(self, node: Any, T_wt: np.ndarray, scale: float) -> None:
        super().__init__(node)
        self.scale = scale
        draw_axes(node, scale, TARGET_AXIS_RADIUS)
        node["origin"].set_object(mg.Mesh(mg.Sphere(TARGET_SPHERE_RADIUS * scale),
                                          material(TARGET_SPHERE_COLOR)))
        node.set_transform(T_wt)


class Segment(Overlay):
    def __init__(self, node: Any, frame_a: int, frame_b: int, scale: float) -> None:
        super().__init__(node)
        self.frame_a, self.frame_b = frame_a, frame_b
        self.radius = SEGMENT_RADIUS * scale
        node["bar"].set_object(mg.Mesh(mg.Cylinder(1.0, self.radius), material(SEGMENT_COLOR)))

    def update(self, oMf: Any) -> None:
        p_wa, p_wb = oMf[self.frame_a].translation, oMf[self.frame_b].translation
        d = p_wb - p_wa
        length = float(np.linalg.norm(d))
        T = np.eye(4)  # the unit cylinder along y, stretched to `length` and turned onto d
        R = rotation_y_to(d / length) if length > 1e-12 else np.eye(3)
        T[:3, :3] = R @ np.diag([1.0, max(length, 1e-9), 1.0])
        T[:3, 3] = 0.5 * (p_wa + p_wb)
        self.node["bar"].set_transform(T)


class Trail(Overlay):
    def __init__(self, node: Any, frame_id: int, length: int) -> None:
        super().__init__(node)
        self.frame_id = frame_id
        self.points: deque[np.ndarray] = deque(maxlen=length)

    def place(self, oMf: Any) -> None:
        """Nothing yet: the trail starts at the next display (no segment from the pose before)."""

    def update(self, oMf: Any) -> None:
        self.points.append(oMf[self.frame_id].translation.copy())
        positions = np.array(self.points, dtype=np.float32).T  # (3, n)
        self.node.set_object(mg.Line(mg.PointsGeometry(positions),
                                     mg.LineBasicMaterial(color=TRAIL_COLOR)))


class Ellipsoid(Overlay):
    """Manipulability ellipsoid of b's linear velocity measured in a: axes along the left
    singular vectors of J_ab[:3] (world axes), radii = scale * singular values, centred on b."""

    def __init__(self, node: Any, robot: Robot, frame_a: int, frame_b: int, scale: float,
                 get_q: Callable[[], np.ndarray]) -> None:
        super().__init__(node)
        self.robot, self.frame_a, self.frame_b, self.scale, self.get_q = robot, frame_a, frame_b, scale, get_q
        self.radii = np.zeros(3)
        node["shape"].set_object(mg.Mesh(mg.Sphere(1.0), mg.MeshLambertMaterial(
            color=ELLIPSOID_COLOR, opacity=0.35, transparent=True)))

    def update(self, oMf: Any) -> None:
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

"""Balance overlay: the centre of mass, its ground projection and the support region.

Drawn under <root>/overlays/<name>/ (all in the world frame w [m], updated on every display):

* ``com``: a sphere at the centre of mass c (orange while at least the margin inside the region,
  red once nearer the edge than the margin, beyond the 0.1 mm overshoot SupportRegion holds);
* ``com_ground``: a flat disc at c's projection on the ground (the contact points' mean height),
  and ``com_line``, a thin line from c down to it;
* ``polygon``: the support region (the hull of the contacts' points) as a line loop on the ground;
* ``shrunk``: the region shrunk by the margin, the line the centre of mass keeps inside.

The lines and the sphere are drawn over the robot (no depth test): the feet do not hide them.

The region is the SupportRegion limit's own (:meth:`reljac.ik.SupportRegion.polygon`), in its
reference frame's x-y plane; this overlay draws it for a world-horizontal reference (the default).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..exceptions import ConfigurationError, SupportError
from ..ik.limits.support import OVERSHOOT, SupportRegion
from ..relative import Kinematics
from ..robot import Robot
from ..support import SupportPolygon
from .overlays import Overlay
from .shapes import material, mg, translation

COM_COLOR = 0xFF8F00  # inside the shrunk region
COM_OUT_COLOR = 0xE53935  # nearer the edge than the margin
POLYGON_COLOR = 0x1E88E5
SHRUNK_COLOR = 0x43A047
COM_RADIUS = 0.3  # sphere radius, as a fraction of the viewer's scale
GROUND_LIFT = 0.002  # [m] lines drawn this far above the ground, not hidden in it


def _loop(vertices: np.ndarray, height: float, color: int) -> Any:
    """A closed line through `vertices` (n, 2) at `height` [m]."""
    points = np.column_stack((vertices, np.full(len(vertices), height))).T.astype(np.float32)  # (3, n)
    return mg.LineLoop(mg.PointsGeometry(points), mg.LineBasicMaterial(color=color, linewidth=3, depthTest=False))


class BalanceOverlay(Overlay):
    """The centre of mass and the support region of a SupportRegion limit (module docstring).

    ``com`` (3,) and ``region`` / ``shrunk_region`` (:class:`~reljac.support.SupportPolygon`) are
    what was drawn last; ``ground`` the ground's height [m].
    """

    def __init__(self, node: Any, robot: Robot, support: SupportRegion, get_q: Callable[[], np.ndarray],
                 scale: float) -> None:
        super().__init__(node)
        self.robot, self.support, self.get_q = robot, support, get_q
        self.radius = COM_RADIUS * scale
        self.color: int | None = None
        node["com_ground"].set_object(mg.Mesh(mg.Cylinder(0.1 * self.radius, 1.5 * self.radius), material(COM_COLOR)))
        self.com = np.zeros(3)
        self.ground = 0.0
        self.region: SupportPolygon | None = None
        self.shrunk_region: SupportPolygon | None = None
        self._drawn: tuple | None = None

    def update(self, oMf: Any) -> None:
        kin = Kinematics(self.robot, self.get_q())
        self.com = c = kin.center_of_mass()
        self.ground = float(np.mean(self.support.points(kin)[:, 2]))
        self.region = region = self.support.polygon(kin)
        try:
            self.shrunk_region = region.shrunk(self.support.margin)
        except SupportError:  # the margin leaves nothing: only the region is drawn
            self.shrunk_region = None
        # inside as SupportRegion keeps it: an overshoot of the shrunk edge up to OVERSHOOT is held
        inside = self.shrunk_region is not None and self.shrunk_region.signed_distance(c) >= -OVERSHOOT
        color = COM_COLOR if inside else COM_OUT_COLOR
        if color != self.color:
            self.node["com"].set_object(mg.Mesh(mg.Sphere(self.radius), material(color, on_top=True)))
            self.color = color
        self.node["com"].set_transform(translation(c.tolist()))
        ground = np.array([c[0], c[1], self.ground + GROUND_LIFT])
        T = translation(ground.tolist())
        T[:3, :3] = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])  # the cylinder's axis (y) onto z
        self.node["com_ground"].set_transform(T)
        line = np.stack([c, ground], axis=1).astype(np.float32)
        self.node["com_line"].set_object(mg.Line(mg.PointsGeometry(line), mg.LineBasicMaterial(
            color=COM_COLOR, depthTest=False)))
        lift = self.ground + GROUND_LIFT
        drawn = (lift, region.vertices.tobytes())
        if drawn != self._drawn:  # the region moves only with the contacts: drawn again then
            self.node["polygon"].set_object(_loop(region.vertices, lift, POLYGON_COLOR))
            if self.shrunk_region is not None:
                self.node["shrunk"].set_object(_loop(self.shrunk_region.vertices, lift, SHRUNK_COLOR))
            else:
                self.node["shrunk"].delete()
            self._drawn = drawn


def show_balance(viewer: Any, support: SupportRegion, *, name: str = "balance") -> str:
    """Draw a :class:`~reljac.ik.SupportRegion`'s centre of mass and support region in a
    :class:`~reljac.viz.Viewer` (module docstring), updated on every display; returns the
    overlay's name (for ``viewer.remove``).

    Raises:
        ConfigurationError: `support` is not a SupportRegion of the viewer's robot.
    """
    if not isinstance(support, SupportRegion) or list(support.robot.model.names) != list(viewer.robot.model.names):
        raise ConfigurationError(f"show_balance needs a reljac.ik.SupportRegion of robot '{viewer.robot.name}', "
                                 f"got {support!r}")
    return viewer.add_overlay(name, lambda node: BalanceOverlay(node, viewer.robot, support, lambda: viewer.q,
                                                                viewer.scale))


__all__ = ["BalanceOverlay", "show_balance"]

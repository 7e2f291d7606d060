"""Browser views of a robot, its frames, targets, segments and trails, through meshcat.

This package is the only part of reljac that imports meshcat; nothing else in reljac imports it
at import time. A :class:`Viewer` owns a meshcat server subprocess (or joins one by its ZMQ
address), shows the robot's visual geometry with Pinocchio's ``MeshcatVisualizer``, and keeps
overlays attached to robot frames up to date on every :meth:`Viewer.display`. All positions are
in the world frame w [m]; poses are ``pin.SE3`` or (4, 4) homogeneous matrices ``T_wx``.

Overlays (each has a name, unique per viewer; giving an existing name replaces that overlay):

| method | draws |
| --- | --- |
| `Viewer.show_frame` | RGB triad (x red, y green, z blue) following a robot frame |
| `Viewer.show_target` | fixed triad with thinner axes and a cyan sphere at its origin |
| `Viewer.show_segment` | yellow segment from frame a's origin to frame b's origin |
| `Viewer.show_trail` | magenta polyline through a frame origin's recent positions |
| `Viewer.show_collisions` | a CollisionModel's obstacles (teal), closest-point bars red to green |
| `Viewer.show_capability_map` | a capability map's voxels, with a colour legend |

Modules: ``server`` (the meshcat server process), ``shapes`` (triads, text labels, colours),
``overlays`` (what follows the robot, and the label layer), ``overlay_set`` (the overlays a
viewer shows, by name, and their labels' layout), ``collisions`` (the collision
overlay), ``viewer`` (:class:`Viewer`), ``bounds`` (the robot's bounding box as displayed), and
two pure-numpy modules tested without a server: ``camera`` (framing a bounding box, overlay and
grid sizes) and ``labels`` (a layout in which no label overlaps another). The blocking
``reljac view`` command is in :mod:`reljac.apps.view`.

:func:`debug` (:class:`Debugger`, in ``debugger``) opens a live debug page of a controller: drag
handles on task targets, the levels' panel, pause / step / reset and a timeline. Its server
(``debug_server``: the page, meshcat's scene relayed, a channel back to Python), overlays
(``debug_overlays``), panel data (``debug_state``) and joint sliders (``debug_sliders``) are
modules of their own.
"""

from .debugger import Debugger, debug
from .viewer import Viewer

__all__ = ["Debugger", "Viewer", "debug"]

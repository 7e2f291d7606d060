"""The Viewer: a meshcat view of a robot with overlays that follow its frames.

All positions are in the world frame w [m]; poses are ``pin.SE3`` or (4, 4) homogeneous
matrices ``T_wx``.
"""

from __future__ import annotations

import html
import webbrowser
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..exceptions import ConfigurationError
from ..poses import as_se3
from ..robot import FrameRef, Robot, as_robot
from ..validation import as_bool, as_count, as_float
from .bounds import local_corners, robot_points
from .camera import DEFAULT_DIRECTION, CameraPose, frame_box, frame_points, overlay_scale, points_leave_picture
from .framing import LABEL_HEIGHT as LABEL_HEIGHT  # (its label height: imported from here too)
from .framing import label_height, show_camera
from .meshes import RobotVisualizer
from .overlay_set import OverlaySet
from .overlays import Ellipsoid, FrameLabel, FrameTriad, Segment, Target, Trail
from .session import Session, page_iframe
from .shapes import SEGMENT_RADIUS

if TYPE_CHECKING:  # pragma: no cover
    from ..maps import CapabilityMap



def _positive(x: float, what: str) -> float:
    return as_float(x, what, minimum=0.0, strict=True, valid="a positive number", error=ConfigurationError)


# ---------------------------------------------------------------------------- the viewer
class Viewer(Session):
    """A meshcat view of a robot with overlays that follow its frames.

    Args:
        robot: the robot; its ``visual_model`` is shown (loading it may raise URDFError).
        q: configuration shown first, shape (nq,) (default: ``robot.reference_configuration()``); the
            camera and the overlay size are fitted to the robot at this configuration.
        scale: [m] axis length of frame triads and targets (default: 6 % of the diagonal of the
            robot's bounding box at q); labels are 0.7 times as tall, segments 0.04 times as thick.
        zmq_url: ZMQ address of a running meshcat server to join (e.g. ``"tcp://127.0.0.1:6000"``).
            None (default) starts a server subprocess owned by this viewer.
        host: the address the page of a server started here listens on: None (default) is
            127.0.0.1, this machine only; ``"0.0.0.0"`` (every IPv4 interface), ``"::"`` or one
            of the machine's addresses opens the scene to the network.
        open: open the page in a browser tab (never by default).
        root: name of the robot's node in the meshcat scene (default: the robot's name).
        follow: frame the camera again (from the same direction) when a :meth:`display` puts
            part of the robot out of the picture (default True).
        announce: print the page's URL (default True; the debug page prints its own instead).
        meshes: "simplified" (default: mesh files sent as binary arrays, those of more than 2,000
            triangles simplified to at most 12,000, in the geometry's own colour:
            :mod:`reljac.viz.meshes`; Baxter's 30 MB of Collada drawn in seconds) or "full" (the
            files as they are, with their own materials and textures).

    The camera looks at the robot from the front (+x), a little to the left and above, centred on
    it and as close as it can with every corner of its geometries' own boxes in 90 % of the
    picture (:func:`reljac.viz.camera.frame_points`); :meth:`frame_camera` frames it again, as does a
    :meth:`display` that puts part of the robot out of the picture (`follow`). The page is on a
    light grey background. Use as a context manager, or call :meth:`close`, to stop the server;
    it also stops when the Python process exits (even if killed). In Jupyter, a Viewer at the end
    of a cell shows the page inline.

    Attributes:
        url: the page to open, ``http://127.0.0.1:PORT/static/``.
        zmq_url: the server's ZMQ address (pass it to another Viewer to share the scene).
        viewer: the ``meshcat.Visualizer`` (scene root); ``visualizer``: Pinocchio's
            ``MeshcatVisualizer``; ``q``: the configuration shown, shape (nq,).
        scale: [m] the default triad size; ``camera``: the :class:`~reljac.viz.camera.CameraPose`
            set last (in w).

    Raises:
        URDFError: the robot's visual geometry cannot be loaded (e.g. meshes not found).
        ConfigurationError: bad q, scale, root or meshes; open, follow or announce not a boolean.
        ReljacError: the meshcat server could not be started or reached.
    """

    def __init__(
        self,
        robot: Robot,
        *,
        q: ArrayLike | None = None,
        scale: float | None = None,
        zmq_url: str | None = None,
        host: str | None = None,
        open: bool = False,
        root: str | None = None,
        follow: bool = True,
        announce: bool = True,
        meshes: str = "simplified",
    ) -> None:
        self.robot = robot = as_robot(robot)
        if root is not None and not isinstance(root, str):
            raise ConfigurationError(f"root must be a name (str) or None, got {type(root).__name__}")
        self.root = root or robot.name
        if "/" in self.root:
            raise ConfigurationError(f"root {self.root!r} must not contain '/'")
        if meshes not in ("simplified", "full"):
            raise ConfigurationError(f"meshes must be 'simplified' or 'full', not {meshes!r}")
        open, self.follow, announce = (as_bool(value, name, error=ConfigurationError) for name, value in
                                  (("open", open), ("follow", follow), ("announce", announce)))
        q = robot.reference_configuration() if q is None else robot.validate_q(q)
        scale = None if scale is None else _positive(scale, "scale")
        visual_model = robot.visual_model  # URDFError (with its message) before any server starts
        collision_model = robot.collision_model
        self._local_boxes: np.ndarray | None = None  # bounds.local_corners of the visual model
        self.q = q
        try:
            self.connect(zmq_url, host)
            self._overlays = OverlaySet(self.viewer, self.root)
            self.visualizer = RobotVisualizer(robot.model, collision_model, visual_model,
                                              full_meshes=meshes == "full")
            with self.batch():  # the scene in one round trip
                self.visualizer.initViewer(viewer=self.viewer)
                self.viewer[self.root].delete()  # a joined server may hold an older scene
                self.visualizer.loadViewerModel(rootNodeName=self.root)
                self.visualizer.setBackgroundColor("gray")  # light: black labels stay readable
            self.display(q)
            self.scale: float = scale or overlay_scale(*self.bounding_box())
            self.frame_camera()
        except BaseException:
            self.close()
            raise
        if announce:  # (the debug page says its own URL: only the page to open is printed)
            print(f"reljac viewer of robot '{robot.name}': {self.url}", flush=True)
        if open:
            webbrowser.open(self.url, new=2)

    def describe(self) -> str:
        return f"viewer of robot '{self.robot.name}'"

    # ------------------------------------------------------------------ page
    def __repr__(self) -> str:
        state = "closed" if self._closed else self.url
        return f"<reljac.viz.Viewer of robot '{self.robot.name}' ({state})>"

    def _repr_html_(self, height: int = 400) -> str:
        """The page in an iframe `height` px tall (what Jupyter shows for a Viewer)."""
        if self._closed:
            return f"<p>reljac viewer of robot '{html.escape(self.robot.name)}' (closed)</p>"
        return page_iframe(self.url, f"reljac viewer of robot '{self.robot.name}'", height)

    # ------------------------------------------------------------------ camera
    def bounding_box(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) corners (3,) in w [m] of the robot's visual geometry as displayed."""
        points = self.robot_points()
        return points.min(axis=0), points.max(axis=0)

    def robot_points(self) -> np.ndarray:
        """(n, 3) in w [m]: the corners of each visual geometry's own box as displayed (the
        frames' origins without visual geometry), what the camera frames
        (:func:`reljac.viz.bounds.robot_points`)."""
        if self._local_boxes is None:  # mesh boxes are slow to compute: once
            self._local_boxes = local_corners(self.visualizer.visual_model)
        return robot_points(self.visualizer.visual_model, self.visualizer.visual_data, self.visualizer.data.oMf,
                            self._local_boxes)

    def frame_camera(self, direction: ArrayLike | None = None, *,
                     box: tuple[ArrayLike, ArrayLike] | None = None) -> CameraPose:
        """Point the camera at the robot as displayed, from `direction` (3,) in w (default: front,
        a little left, above), centred on it and as close as every corner of its geometries' boxes
        allows (:meth:`robot_points`, :func:`~reljac.viz.camera.frame_points`); returns the pose
        set. `box`: (lower, upper) corners in w [m] to frame instead (the whole box, centred on it:
        :func:`~reljac.viz.camera.frame_box`).

        The overlays that have a box (a capability map's voxels) are framed too; the scene is
        shifted so that the mouse orbits the camera's target (:mod:`reljac.viz.framing`); labels
        are redrawn at least 3 % of the picture's height.
        """
        direction = DEFAULT_DIRECTION if direction is None else direction
        if box is None:
            points = self._scene_points()
            lower, upper = points.min(axis=0), points.max(axis=0)
            self.camera = frame_points(points, direction)
        else:
            lower, upper = np.asarray(box[0], float), np.asarray(box[1], float)
            self.camera = frame_box(lower, upper, direction)
        with self._talking():
            show_camera(self.viewer, self.camera, lower, upper, self.scale)
            self._overlays.on_camera(self.camera, label_height(self.scale, self.camera))
        self._update_labels()
        return self.camera

    def _scene_points(self) -> np.ndarray:
        """(n, 3) in w [m]: :meth:`robot_points` and the corners of the overlays that have a box."""
        return np.vstack([self.robot_points(), *self._overlays.box_corners()])

    # ------------------------------------------------------------------ robot
    def display(self, q: ArrayLike) -> None:
        """Show the robot at configuration q, shape (nq,), and move every frame overlay with it.

        Raises:
            ConfigurationError: q has a wrong shape or a non-finite entry.
        """
        q = self.robot.validate_q(q)
        with self.batch():  # one round trip to the server
            self.visualizer.display(q)
            pin.updateFramePlacements(self.robot.model, self.visualizer.data)
            self.q = q
            self._overlays.update(self.visualizer.data.oMf)
            if self.follow and hasattr(self, "camera") and points_leave_picture(self.robot_points(), self.camera):
                self.frame_camera(self.camera.direction)  # lays the labels out too
            else:
                self._update_labels()

    def _update_labels(self) -> None:
        if hasattr(self, "camera") and self._overlays.has_labels:
            with self._talking():
                self._overlays.lay_out_labels(self.visualizer.data.oMf, self.camera)

    def show_labels(self, visible: bool = True) -> None:
        """Show or hide every frame label (also a checkbox in the page: Scene > meshcat > <root>
        > labels)."""
        with self._talking():
            self._overlays.show_labels(visible)

    # ------------------------------------------------------------------ overlays
    @property
    def overlays(self) -> list[str]:
        """Names of the overlays shown, in creation order."""
        return list(self._overlays)

    def add_overlay(self, name: str, make: Callable[[Any], Any]) -> str:
        """Show an overlay of your own (or replace the one of that name): `make(node)` builds it on
        its meshcat node, an :class:`~reljac.viz.overlays.Overlay` (placed at each display from the
        frames' placements). Returns its name (for :meth:`remove`)."""
        with self._talking():
            overlay = self._overlays.add(name, make, self.visualizer.data.oMf)
        if overlay.label is not None:
            self._update_labels()
        return name

    def show_frame(self, frame: FrameRef, *, label: str | None = None, scale: float | None = None) -> str:
        """Draw an RGB triad (x red, y green, z blue) at a robot frame, following it on display.

        Args:
            frame: frame name or id.
            label: text drawn next to the triad, and the overlay's name (default: no text; the
                overlay is named after the frame). Labels are laid out beside their frames, apart
                from each other as seen from the camera set by :meth:`frame_camera`, on top of
                the robot, with a thin line to the frame; :meth:`show_labels` hides them.
            scale: axis length [m] (default: the viewer's ``scale``).

        Returns:
            the overlay's name (for :meth:`remove`).

        Raises:
            FrameNotFound: unknown frame.
        """
        fid = self.robot.frame_id(frame)
        scale = self.scale if scale is None else _positive(scale, "scale")
        name = label or self.robot.model.frames[fid].name

        def make(node):
            text = None
            if label:
                height = label_height(self.scale, self.camera)
                text = FrameLabel(self._overlays.label_node(name), fid, label, height)
            return FrameTriad(node, fid, scale, text)

        return self.add_overlay(name, make)

    def show_target(self, name: str, T_wt: pin.SE3 | ArrayLike, *, scale: float | None = None) -> str:
        """Draw (or move, if `name` exists) a fixed target triad at pose T_wt in the world.

        The target has thinner axes than :meth:`show_frame`'s triads and a cyan sphere at its
        origin; it does not move on :meth:`display`.

        Args:
            name: overlay name.
            T_wt: pose of the target in the world, ``pin.SE3`` or (4, 4) homogeneous matrix.
            scale: axis length [m] (default: the viewer's ``scale``).

        Raises:
            TaskError: T_wt is not a rigid transform.
        """
        M = as_se3(T_wt, "T_wt").homogeneous  # TaskError if not a rigid transform
        scale = self.scale if scale is None else _positive(scale, "scale")
        existing = self._overlays.get(name)
        if isinstance(existing, Target) and existing.scale == scale:
            with self._talking():
                existing.node.set_transform(M)
            return name
        return self.add_overlay(name, lambda node: Target(node, M, scale))

    def show_segment(self, frame_a: FrameRef, frame_b: FrameRef, *, name: str | None = None) -> str:
        """Draw a segment from frame a's origin to frame b's origin, updated on display (its
        thickness follows the viewer's ``scale``).

        Args:
            frame_a: frame name or id.
            frame_b: frame name or id.
            name: overlay name (default ``"<a>--<b>"`` with the frame names).

        Raises:
            FrameNotFound: unknown frame.
        """
        fa, fb = self.robot.frame_id(frame_a), self.robot.frame_id(frame_b)
        frames = self.robot.model.frames
        name = name or f"{frames[fa].name}--{frames[fb].name}"
        return self.add_overlay(name, lambda node: Segment(node, fa, fb, self.scale))

    def show_trail(self, frame: FrameRef, *, length: int = 200, name: str | None = None) -> str:
        """Draw a polyline through the last `length` positions of a frame's origin.

        The trail starts at the first :meth:`display` after its creation (no segment from the
        pose shown before); one point is added on every display.

        Args:
            frame: frame name or id.
            length: number of positions kept (>= 2).
            name: overlay name (default ``"<frame> trail"``).

        Raises:
            FrameNotFound: unknown frame.
        """
        fid = self.robot.frame_id(frame)
        length = as_count(length, "length", minimum=2, error=ConfigurationError)
        name = name or f"{self.robot.model.frames[fid].name} trail"
        return self.add_overlay(name, lambda node: Trail(node, fid, int(length)))

    def show_manipulability(
        self, frame_a: FrameRef, frame_b: FrameRef, *, scale: float = 0.1, name: str | None = None
    ) -> str:
        """Draw the manipulability ellipsoid of frame b's motion relative to frame a.

        The ellipsoid is centred on b's origin; its axes are the left singular vectors of the
        linear part of J_ab (expressed in world axes) and its radii the singular values times
        `scale` [m per (m/s) at unit joint speed]. Updated on every :meth:`display`.

        Raises:
            FrameNotFound: unknown frame.
        """
        fa, fb = self.robot.frame_id(frame_a), self.robot.frame_id(frame_b)
        scale = _positive(scale, "scale")
        frames = self.robot.model.frames
        name = name or f"manipulability {frames[fb].name} in {frames[fa].name}"
        return self.add_overlay(name, lambda node: Ellipsoid(node, self.robot, fa, fb, scale, lambda: self.q))

    def show_capability_map(self, cmap: CapabilityMap, *, color_by: str = "coverage", max_voxels: int = 30_000,
                            name: str | None = None) -> str:
        """Draw a capability map (:class:`reljac.maps.CapabilityMap`) as coloured voxels in its
        frame a, following a on display, and frame the camera on the robot and the voxels; see
        :mod:`reljac.viz.capability`.

        Raises:
            FrameNotFound: the map's frame a is not in this robot.
            ConfigurationError: not a map, a bad color_by, or max_voxels not an integer >= 1.
        """
        from .capability import CapabilityOverlay, map_frames

        max_voxels = as_count(max_voxels, "max_voxels (the most voxels drawn)", minimum=1, error=ConfigurationError)
        frame_a, frame_b = map_frames(cmap)
        fa = self.robot.frame_id(frame_a)
        name = name or f"capability map {frame_b} in {frame_a}"
        self.add_overlay(name, lambda node: CapabilityOverlay(node, cmap, fa, color_by=color_by, max_voxels=max_voxels))
        self.frame_camera(self.camera.direction)  # the robot and the voxels together; places the legend
        return name

    def show_collisions(self, model: Any, *, within: float = 0.05, name: str = "collisions") -> str:
        """Draw a :class:`~reljac.collision.CollisionModel`'s obstacles and, for every active pair
        nearer than `within` [m], a bar between its closest points coloured by the distance (red:
        touching or overlapping, yellow: within / 2, green: within); updated on display.

        Raises:
            ConfigurationError: `model` is not a CollisionModel of this robot, or a bad `within`.
        """
        from ..collision import CollisionModel
        from .collisions import CollisionOverlay

        if not isinstance(model, CollisionModel) or list(model.robot.model.names) != list(self.robot.model.names):
            raise ConfigurationError(
                f"show_collisions needs a reljac.collision.CollisionModel of robot '{self.robot.name}'")
        within = _positive(within, "within")
        return self.add_overlay(name, lambda node: CollisionOverlay(node, model, within, lambda: self.q,
                                                             SEGMENT_RADIUS * self.scale))

    def remove(self, name: str) -> None:
        """Remove one overlay by name.

        Raises:
            ConfigurationError: no overlay has this name.
        """
        with self._talking():
            self._overlays.remove(name)

    def clear_overlays(self) -> None:
        """Remove every overlay (the robot stays)."""
        with self._talking():
            self._overlays.clear()

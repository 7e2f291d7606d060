"""The Viewer: a meshcat view of a robot with overlays that follow its frames.

All positions are in the world frame w [m]; poses are ``pin.SE3`` or (4, 4) homogeneous
matrices ``T_wx``.
"""

from __future__ import annotations

import atexit
import contextlib
import weakref
import webbrowser
from typing import Iterator

import numpy as np
import pinocchio as pin
import zmq
from numpy.typing import ArrayLike

from ..exceptions import ReljacError, suggest
from ..robot import FrameRef, Robot
from ..validation import as_se3
from .overlays import Ellipsoid, FrameTriad, Overlay, Segment, Target, Trail
from .server import Server, ask_web_url, connect

from pinocchio.visualize import MeshcatVisualizer  # noqa: E402 - after .server silenced meshcat's warning

_live_viewers: "weakref.WeakSet[Viewer]" = weakref.WeakSet()


@atexit.register
def _close_all_viewers() -> None:
    for viewer in list(_live_viewers):
        viewer.close()


def _homogeneous(T, what: str) -> np.ndarray:
    """T as a (4, 4) rigid transform, from a pin.SE3 or an array; raises TaskError otherwise."""
    return as_se3(T, what).homogeneous


def _positive(x: float, what: str) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        value = float("nan")
    if not (np.isfinite(value) and value > 0):
        raise ReljacError(f"{what} must be a positive number, not {x!r}")
    return value


# ---------------------------------------------------------------------------- the viewer
class Viewer:
    """A meshcat view of a robot with overlays that follow its frames.

    Args:
        robot: the robot; its ``visual_model`` is shown (loading it may raise URDFError).
        zmq_url: ZMQ address of a running meshcat server to join (e.g. ``"tcp://127.0.0.1:6000"``).
            None (default) starts a server subprocess owned by this viewer.
        open: open the page in a browser tab (never by default).
        root: name of the robot's node in the meshcat scene (default: the robot's name).

    The robot is shown at its neutral configuration until :meth:`display` is called, on a light
    grey background, with the camera on meshcat's default direction (from +x, slightly above)
    at a distance that fits the robot; the page always looks at the world origin. Use as a
    context manager, or call :meth:`close`, to stop the server; it also stops when the Python
    process exits (even if killed).

    Attributes:
        url: the page to open, ``http://127.0.0.1:PORT/static/``.
        zmq_url: the server's ZMQ address (pass it to another Viewer to share the scene).
        viewer: the ``meshcat.Visualizer`` (scene root); ``visualizer``: Pinocchio's
            ``MeshcatVisualizer``; ``q``: the configuration shown, shape (nq,).

    Raises:
        URDFError: the robot's visual geometry cannot be loaded (e.g. meshes not found).
        ReljacError: the meshcat server could not be started or reached.
    """

    def __init__(
        self,
        robot: Robot,
        *,
        zmq_url: str | None = None,
        open: bool = False,
        root: str | None = None,
    ) -> None:
        self._closed = True  # until fully built: close() and __del__ then do nothing harmful
        self._server: Server | None = None
        self.robot = robot
        self.root = root or robot.name
        if "/" in self.root:
            raise ReljacError(f"root {self.root!r} must not contain '/'")
        visual_model = robot.visual_model  # URDFError (with its message) before any server starts
        collision_model = robot.collision_model
        if zmq_url is None:
            self._server = Server()
            zmq_url, web_url = self._server.zmq_url, self._server.web_url
        else:
            web_url = ask_web_url(zmq_url)
        self._overlays: dict[str, Overlay] = {}
        self.q = robot.neutral()
        try:
            self.viewer = connect(zmq_url, web_url)
            self.zmq_url: str = zmq_url
            self.url: str = web_url
            self._closed = False
            _live_viewers.add(self)
            self.visualizer = MeshcatVisualizer(robot.model, collision_model, visual_model)
            with self._talking():
                self.visualizer.initViewer(viewer=self.viewer)
                self.viewer[self.root].delete()  # a joined server may hold an older scene
                self.visualizer.loadViewerModel(rootNodeName=self.root)
                self.visualizer.setBackgroundColor("gray")  # light: black labels stay readable
            self.display(self.q)
            self._fit_camera()
        except BaseException:
            self.close()
            raise
        print(f"reljac viewer of robot '{robot.name}': {self.url}", flush=True)
        if open:
            webbrowser.open(self.url, new=2)

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> "Viewer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else self.url
        return f"<reljac.viz.Viewer of robot '{self.robot.name}' ({state})>"

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Disconnect, and stop the server if this viewer started it (which frees its ports).

        Idempotent. A joined server (``zmq_url`` given) keeps running and keeps the scene.
        """
        self._closed = True
        _live_viewers.discard(self)
        viewer = getattr(self, "viewer", None)
        if viewer is not None:
            with contextlib.suppress(Exception):
                viewer.window.zmq_socket.close(linger=0)
        if self._server is not None:
            self._server.stop()
            self._server = None

    @contextlib.contextmanager
    def _talking(self) -> Iterator[None]:
        """Turn meshcat's socket errors into ReljacError (a dead server would block forever)."""
        if self._closed:
            raise ReljacError(f"this viewer of robot '{self.robot.name}' is closed")
        try:
            yield
        except zmq.ZMQError as exc:
            raise ReljacError(
                f"the meshcat server at {self.zmq_url} did not answer ({exc}); "
                "it may have stopped: close this viewer and start a new one"
            ) from None

    def _fit_camera(self) -> None:
        """Set the camera distance, on meshcat's default direction, so the robot as shown fits.

        The meshcat page always looks at the world origin: the camera is put as close as it can
        be with every visual geometry's bounding sphere inside 85% of the 75-degree field of view.
        """
        spheres = []  # (centre in w (3,), radius) [m]
        for geom, oMg in zip(self.visualizer.visual_model.geometryObjects, self.visualizer.visual_data.oMg):
            scale = np.asarray(geom.meshScale, dtype=float)
            try:
                geom.geometry.computeLocalAABB()
                centre, radius = np.asarray(geom.geometry.aabb_center), float(geom.geometry.aabb_radius)
            except Exception:  # a shape type without a bounding box: use its origin
                centre, radius = np.zeros(3), 0.0
            spheres.append((oMg.act(scale * centre), radius * float(np.max(np.abs(scale)))))
        if not spheres:
            return
        half_fov = 0.85 * np.radians(37.5)
        u = np.array([3.0, 0.0, 1.0]) / np.sqrt(10.0)  # meshcat's default camera direction, in w

        def fits(distance: float) -> bool:
            camera = distance * u
            for centre, radius in spheres:
                to_centre = centre - camera
                norm = float(np.linalg.norm(to_centre))
                if norm <= radius:
                    return False
                angle = np.arccos(np.clip(-u @ to_centre / norm, -1.0, 1.0))
                if angle + np.arcsin(radius / norm) > half_fov:
                    return False
            return True

        near, far = 0.3, 50.0
        if fits(near):
            far = near
        elif fits(far):
            for _ in range(30):
                mid = 0.5 * (near + far)
                near, far = (near, mid) if fits(mid) else (mid, far)
        # y-up axes of the camera's parent node: (x, y, z)_w = (x, -z, y)
        position = far * np.array([u[0], u[2], -u[1]])
        with self._talking():
            self.viewer["/Cameras/default/rotated/<object>"].set_property("position", position.tolist())

    # ------------------------------------------------------------------ robot
    def display(self, q: ArrayLike) -> None:
        """Show the robot at configuration q, shape (nq,), and move every frame overlay with it.

        Raises:
            ConfigurationError: q has a wrong shape or a non-finite entry.
        """
        q = self.robot.validate_q(q)
        with self._talking():
            self.visualizer.display(q)
            pin.updateFramePlacements(self.robot.model, self.visualizer.data)
            self.q = q
            for overlay in self._overlays.values():
                overlay.update(self.visualizer.data.oMf)

    # ------------------------------------------------------------------ overlays
    @property
    def overlays(self) -> list[str]:
        """Names of the overlays shown, in creation order."""
        return list(self._overlays)

    def _add(self, name: str, make) -> str:
        if not isinstance(name, str) or not name or "/" in name:
            raise ReljacError(f"an overlay name must be a non-empty string without '/', not {name!r}")
        with self._talking():
            if name in self._overlays:
                self.remove(name)
            overlay = make(self.viewer[self.root]["overlays"][name])
            overlay.update(self.visualizer.data.oMf)
        self._overlays[name] = overlay
        return name

    def show_frame(self, frame: FrameRef, *, label: str | None = None, scale: float = 0.1) -> str:
        """Draw an RGB triad (x red, y green, z blue) at a robot frame, following it on display.

        Args:
            frame: frame name or id.
            label: text drawn next to the triad, and the overlay's name (default: no text; the
                overlay is named after the frame).
            scale: axis length [m].

        Returns:
            the overlay's name (for :meth:`remove`).

        Raises:
            FrameNotFound: unknown frame.
        """
        fid = self.robot.frame_id(frame)
        scale = _positive(scale, "scale")
        name = label or self.robot.model.frames[fid].name
        return self._add(name, lambda node: FrameTriad(node, fid, scale, label))

    def show_target(self, name: str, T_wt: pin.SE3 | ArrayLike, *, scale: float = 0.1) -> str:
        """Draw (or move, if `name` exists) a fixed target triad at pose T_wt in the world.

        The target has thinner axes than :meth:`show_frame`'s triads and a cyan sphere at its
        origin; it does not move on :meth:`display`.

        Args:
            name: overlay name.
            T_wt: pose of the target in the world, ``pin.SE3`` or (4, 4) homogeneous matrix.
            scale: axis length [m].

        Raises:
            TaskError: T_wt is not a rigid transform.
        """
        M = _homogeneous(T_wt, "T_wt")
        scale = _positive(scale, "scale")
        existing = self._overlays.get(name)
        if isinstance(existing, Target) and existing.scale == scale:
            with self._talking():
                existing.node.set_transform(M)
            return name
        return self._add(name, lambda node: Target(node, M, scale))

    def show_segment(self, frame_a: FrameRef, frame_b: FrameRef, *, name: str | None = None) -> str:
        """Draw a segment from frame a's origin to frame b's origin, updated on display.

        Args:
            frame_a, frame_b: frame names or ids.
            name: overlay name (default ``"<a>--<b>"`` with the frame names).

        Raises:
            FrameNotFound: unknown frame.
        """
        fa, fb = self.robot.frame_id(frame_a), self.robot.frame_id(frame_b)
        frames = self.robot.model.frames
        name = name or f"{frames[fa].name}--{frames[fb].name}"
        return self._add(name, lambda node: Segment(node, fa, fb))

    def show_trail(self, frame: FrameRef, *, length: int = 200, name: str | None = None) -> str:
        """Draw a polyline through the last `length` positions of a frame's origin.

        One point is added on creation and on every :meth:`display`.

        Args:
            frame: frame name or id.
            length: number of positions kept (>= 2).
            name: overlay name (default ``"<frame> trail"``).

        Raises:
            FrameNotFound: unknown frame.
        """
        fid = self.robot.frame_id(frame)
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 2:
            raise ReljacError(f"length must be an integer >= 2, not {length!r}")
        name = name or f"{self.robot.model.frames[fid].name} trail"
        return self._add(name, lambda node: Trail(node, fid, int(length)))

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
        return self._add(name, lambda node: Ellipsoid(node, self.robot, fa, fb, scale, lambda: self.q))

    def remove(self, name: str) -> None:
        """Remove one overlay by name.

        Raises:
            ReljacError: no overlay has this name.
        """
        if name not in self._overlays:
            shown = ", ".join(self._overlays) or "none"
            raise ReljacError(f"no overlay named {name!r}{suggest(str(name), self._overlays)} "
                              f"(overlays: {shown})")
        with self._talking():
            self._overlays.pop(name).node.delete()

    def clear_overlays(self) -> None:
        """Remove every overlay (the robot stays)."""
        with self._talking():
            self.viewer[self.root]["overlays"].delete()
        self._overlays.clear()

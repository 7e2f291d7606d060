"""Browser views of a robot, its frames, targets, segments and trails, through meshcat.

This is the only reljac module that imports meshcat; nothing else in reljac imports it at import
time. A :class:`Viewer` owns a meshcat server subprocess (or joins one by its ZMQ address), shows
the robot's visual geometry with Pinocchio's ``MeshcatVisualizer``, and keeps overlays attached to
robot frames up to date on every :meth:`Viewer.display`. All positions are in the world frame w
[m]; poses are ``pin.SE3`` or (4, 4) homogeneous matrices ``T_wx``.

Overlays (each has a name, unique per viewer; giving an existing name replaces that overlay):

=========================== ==========================================================================
:meth:`Viewer.show_frame`    RGB triad (x red, y green, z blue) following a robot frame.
:meth:`Viewer.show_target`   fixed triad with thinner axes and a cyan sphere at its origin.
:meth:`Viewer.show_segment`  yellow segment from frame a's origin to frame b's origin.
:meth:`Viewer.show_trail`    magenta polyline through a frame origin's recent positions.
=========================== ==========================================================================
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
import weakref
import webbrowser
from collections import deque
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pinocchio as pin
import zmq
from numpy.typing import ArrayLike

with warnings.catch_warnings():  # meshcat 0.3.2 imports pyzmq's deprecated zmq.eventloop.ioloop
    warnings.simplefilter("ignore", DeprecationWarning)
    import meshcat
    import meshcat.geometry as mg
    from meshcat.visualizer import ViewerWindow
from pinocchio.visualize import MeshcatVisualizer

from .exceptions import ReljacError, suggest
from .robot import FrameRef, Robot
from .validation import as_se3

SERVER_START_TIMEOUT = 30.0  # [s] for a new meshcat server to print its addresses
REPLY_TIMEOUT_MS = 15_000  # [ms] for the meshcat server to acknowledge one command

FRAME_AXIS_RADIUS = 0.04  # triad axis radius, as a fraction of the axis length
TARGET_AXIS_RADIUS = 0.015
TARGET_SPHERE_RADIUS = 0.1
SEGMENT_RADIUS = 0.004  # [m]
AXIS_COLORS = {"x": 0xFF0000, "y": 0x00C000, "z": 0x0000FF}
TARGET_SPHERE_COLOR = 0x00BCD4
SEGMENT_COLOR = 0xFFD400
TRAIL_COLOR = 0xFF00FF
ELLIPSOID_COLOR = 0x7E57C2

_Y = np.array([0.0, 1.0, 0.0])  # three.js cylinders lie along their local y axis

# A server of ours runs this: it exits by itself when the Python process that started it is gone
# (even after SIGKILL), so no meshcat server outlives its script.
_SERVER_BOOTSTRAP = """
import os, sys, threading, time
parent = int(sys.argv.pop(1))
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
from meshcat.servers.zmqserver import main
main()
"""

_live_viewers: "weakref.WeakSet[Viewer]" = weakref.WeakSet()


@atexit.register
def _close_all_viewers() -> None:
    for viewer in list(_live_viewers):
        viewer.close()


# ---------------------------------------------------------------------------- meshcat server
class _Server:
    """A meshcat server subprocess: its ZMQ address and web page address."""

    def __init__(self) -> None:
        meshcat_parent = str(Path(meshcat.__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (meshcat_parent, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-c", _SERVER_BOOTSTRAP, str(os.getpid())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # a Ctrl-C in the terminal reaches only us; we stop the server
        )
        lines: queue.Queue[str | None] = queue.Queue()
        # The thread keeps draining stdout so the server can never block on a full pipe.
        threading.Thread(target=self._pump, args=(self.proc.stdout, lines), daemon=True).start()
        found: dict[str, str] = {}
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while len(found) < 2:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                line = None
            if line is None:
                self.stop()
                raise ReljacError(
                    f"the meshcat server did not start (exit code {self.proc.returncode}); "
                    f"try `{sys.executable} -m meshcat.servers.zmqserver` to see why"
                )
            key, _, value = line.strip().partition("=")
            if key in ("zmq_url", "web_url"):
                found[key] = value
        self.zmq_url, self.web_url = found["zmq_url"], found["web_url"]

    @staticmethod
    def _pump(stream, lines: "queue.Queue[str | None]") -> None:
        with contextlib.suppress(Exception):
            for raw in stream:
                lines.put(raw.decode("utf-8", "replace"))
        lines.put(None)

    def stop(self) -> None:
        """Terminate the server and wait for it, which releases its ports."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            with contextlib.suppress(Exception):
                self.proc.stdout.close()


def _ask_web_url(zmq_url: str, timeout_ms: int = 3000) -> str:
    """The page address of the meshcat server at zmq_url; ReljacError if none answers."""
    if zmq_url.startswith("tcp://"):  # fail fast on a closed port (ZMQ would retry silently)
        host, _, port = zmq_url[len("tcp://"):].rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_ms / 1000).close()
        except (OSError, ValueError) as exc:
            raise ReljacError(
                f"no meshcat server answers at {zmq_url!r} ({exc}); start one with "
                "`meshcat-server`, or leave zmq_url=None to start one"
            ) from None
    probe = zmq.Context.instance().socket(zmq.REQ)
    probe.setsockopt(zmq.LINGER, 0)
    try:
        probe.connect(zmq_url)
        probe.send(b"url")
        if not probe.poll(timeout_ms):
            raise ReljacError(
                f"no meshcat server answers at {zmq_url!r} (waited {timeout_ms / 1000:g} s); "
                "start one with `meshcat-server`, or leave zmq_url=None to start one"
            )
        return probe.recv().decode("utf-8")
    except zmq.ZMQError as exc:
        raise ReljacError(f"cannot reach a meshcat server at {zmq_url!r}: {exc}") from None
    finally:
        probe.close()


def _connect(zmq_url: str, web_url: str) -> meshcat.Visualizer:
    """A meshcat.Visualizer on one REQ socket whose replies time out instead of blocking."""
    # meshcat's own constructor prints, and leaks a first socket when joining a server.
    window = ViewerWindow.__new__(ViewerWindow)
    window.server_proc, window.zmq_url, window.web_url = None, zmq_url, web_url
    window.connect_zmq()
    for option, value in ((zmq.LINGER, 0), (zmq.RCVTIMEO, REPLY_TIMEOUT_MS),
                          (zmq.SNDTIMEO, REPLY_TIMEOUT_MS)):
        window.zmq_socket.setsockopt(option, value)
    return meshcat.Visualizer(window=window)


# ---------------------------------------------------------------------------- shapes
def _rotation_y_to(direction: np.ndarray) -> np.ndarray:
    """A rotation matrix taking the y axis onto the unit vector `direction` (3,)."""
    return pin.Quaternion.FromTwoVectors(_Y, direction).toRotationMatrix()


def _axis_transforms(length: float) -> dict[str, np.ndarray]:
    """(4, 4) poses, in the triad's frame, of y-aligned cylinders of `length` along x, y, z."""
    poses = {}
    for k, axis in enumerate("xyz"):
        T = np.eye(4)
        e = np.zeros(3)
        e[k] = 1.0
        T[:3, :3] = _rotation_y_to(e)
        T[:3, 3] = 0.5 * length * e
        poses[axis] = T
    return poses


def _material(color: int) -> mg.MeshLambertMaterial:
    return mg.MeshLambertMaterial(color=color)


class _TextTexture(mg.Texture):
    """A canvas texture drawn by the meshcat page (its "_text" texture type)."""

    def __init__(self, text: str, font_size: int = 64, font_face: str = "sans-serif") -> None:
        super().__init__()
        self.text, self.font_size, self.font_face = text, font_size, font_face

    def lower(self, object_data):
        return {"uuid": self.uuid, "type": "_text", "text": self.text,
                "font_size": self.font_size, "font_face": self.font_face}


class _SpriteMaterial(mg.GenericMaterial):
    _type = "SpriteMaterial"


class _Sprite(mg.Object):
    """A camera-facing square of side `size` [m] (three.js Sprite; the geometry is unused)."""

    _type = "Sprite"

    def __init__(self, text: str, size: float) -> None:
        super().__init__(mg.Box([size, size, size]),
                         _SpriteMaterial(map=_TextTexture(text), transparent=True, color=0xFFFFFF))
        self.size = size

    def lower(self):
        data = super().lower()
        data["object"]["matrix"] = list(np.diag([self.size, self.size, self.size, 1.0]).flatten())
        return data


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


# ---------------------------------------------------------------------------- overlays
class _Overlay:
    """Something drawn under <root>/overlays/<name>; update() runs after each display."""

    def __init__(self, node: meshcat.Visualizer) -> None:
        self.node = node

    def update(self, oMf) -> None:  # pragma: no cover - overridden
        pass


def _draw_axes(node, scale: float, radius: float) -> None:
    """RGB axis cylinders (x red, y green, z blue) of length `scale` and radius `radius` * scale."""
    for axis, T in _axis_transforms(scale).items():
        node[axis].set_object(mg.Mesh(mg.Cylinder(scale, radius * scale), _material(AXIS_COLORS[axis])))
        node[axis].set_transform(T)


class _FrameTriad(_Overlay):
    def __init__(self, node, frame_id: int, scale: float, label: str | None) -> None:
        super().__init__(node)
        self.frame_id = frame_id
        _draw_axes(node, scale, FRAME_AXIS_RADIUS)
        if label:
            node["label"].set_object(_Sprite(label, size=scale))
            node["label"].set_transform(_translation([0.0, 0.0, 1.3 * scale]))

    def update(self, oMf) -> None:
        self.node.set_transform(oMf[self.frame_id].homogeneous)


class _Target(_Overlay):
    def __init__(self, node, T_wt: np.ndarray, scale: float) -> None:
        super().__init__(node)
        self.scale = scale
        _draw_axes(node, scale, TARGET_AXIS_RADIUS)
        node["origin"].set_object(mg.Mesh(mg.Sphere(TARGET_SPHERE_RADIUS * scale),
                                          _material(TARGET_SPHERE_COLOR)))
        node.set_transform(T_wt)


class _Segment(_Overlay):
    def __init__(self, node, frame_a: int, frame_b: int) -> None:
        super().__init__(node)
        self.frame_a, self.frame_b = frame_a, frame_b
        node["bar"].set_object(mg.Mesh(mg.Cylinder(1.0, SEGMENT_RADIUS), _material(SEGMENT_COLOR)))

    def update(self, oMf) -> None:
        p_wa, p_wb = oMf[self.frame_a].translation, oMf[self.frame_b].translation
        d = p_wb - p_wa
        length = float(np.linalg.norm(d))
        T = np.eye(4)  # the unit cylinder along y, stretched to `length` and turned onto d
        R = _rotation_y_to(d / length) if length > 1e-12 else np.eye(3)
        T[:3, :3] = R @ np.diag([1.0, max(length, 1e-9), 1.0])
        T[:3, 3] = 0.5 * (p_wa + p_wb)
        self.node["bar"].set_transform(T)


class _Trail(_Overlay):
    def __init__(self, node, frame_id: int, length: int) -> None:
        super().__init__(node)
        self.frame_id = frame_id
        self.points: deque[np.ndarray] = deque(maxlen=length)

    def update(self, oMf) -> None:
        self.points.append(oMf[self.frame_id].translation.copy())
        positions = np.array(self.points, dtype=np.float32).T  # (3, n)
        self.node.set_object(mg.Line(mg.PointsGeometry(positions),
                                     mg.LineBasicMaterial(color=TRAIL_COLOR)))


class _Ellipsoid(_Overlay):
    """Manipulability ellipsoid of b's linear velocity measured in a: axes along the left
    singular vectors of J_ab[:3] (world axes), radii = scale * singular values, centred on b."""

    def __init__(self, node, robot: Robot, frame_a: int, frame_b: int, scale: float, get_q) -> None:
        super().__init__(node)
        self.robot, self.frame_a, self.frame_b, self.scale, self.get_q = robot, frame_a, frame_b, scale, get_q
        self.radii = np.zeros(3)
        node["shape"].set_object(mg.Mesh(mg.Sphere(1.0), mg.MeshLambertMaterial(
            color=ELLIPSOID_COLOR, opacity=0.35, transparent=True)))

    def update(self, oMf) -> None:
        from .relative import Kinematics

        J = Kinematics(self.robot, self.get_q()).relative_jacobian(self.frame_a, self.frame_b, expressed_in="world")
        U, sigma, _ = np.linalg.svd(J[:3])  # U (3, 3); sigma has min(3, nv) entries
        if np.linalg.det(U) < 0:
            U[:, 2] *= -1.0
        self.radii = self.scale * np.pad(sigma, (0, 3 - sigma.size))
        T = np.eye(4)
        T[:3, :3] = U @ np.diag(np.maximum(self.radii, 1e-6))
        T[:3, 3] = oMf[self.frame_b].translation
        self.node["shape"].set_transform(T)


def _translation(p: Sequence[float]) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = p
    return T


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
        self._server: _Server | None = None
        self.robot = robot
        self.root = root or robot.name
        if "/" in self.root:
            raise ReljacError(f"root {self.root!r} must not contain '/'")
        visual_model = robot.visual_model  # URDFError (with its message) before any server starts
        collision_model = robot.collision_model
        if zmq_url is None:
            self._server = _Server()
            zmq_url, web_url = self._server.zmq_url, self._server.web_url
        else:
            web_url = _ask_web_url(zmq_url)
        self._overlays: dict[str, _Overlay] = {}
        self.q = robot.neutral()
        try:
            self.viewer = _connect(zmq_url, web_url)
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
        return self._add(name, lambda node: _FrameTriad(node, fid, scale, label))

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
        if isinstance(existing, _Target) and existing.scale == scale:
            with self._talking():
                existing.node.set_transform(M)
            return name
        return self._add(name, lambda node: _Target(node, M, scale))

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
        return self._add(name, lambda node: _Segment(node, fa, fb))

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
        return self._add(name, lambda node: _Trail(node, fid, int(length)))

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
        return self._add(name, lambda node: _Ellipsoid(node, self.robot, fa, fb, scale, lambda: self.q))

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


# ---------------------------------------------------------------------------- one-shot view
def view(
    robot: Robot | str | Path,
    frames: Sequence[FrameRef] = (),
    q: ArrayLike | None = None,
    *,
    hold: bool,
    open: bool = False,
    zmq_url: str | None = None,
) -> Viewer | None:
    """Show a robot at q with triads on `frames` and a segment between the first two.

    What ``reljac view ROBOT --frames A B ...`` runs. Prints the page's URL.

    Args:
        robot: a Robot, a bundled robot's name or a URDF path.
        frames: frame names or ids to draw triads on (labelled with their names).
        q: configuration, shape (nq,) (default: the neutral configuration).
        hold: wait until Ctrl-C (or SIGTERM), then close the viewer and return None.
            Otherwise return the open viewer.
        open: also open a browser tab.
        zmq_url: join this meshcat server instead of starting one.

    Raises:
        URDFError, FrameNotFound, ConfigurationError: bad robot, frame or q (before any server
        starts, for frames and q).
    """
    if not isinstance(robot, Robot):
        robot = Robot.load(robot)
    frame_ids = [robot.frame_id(f) for f in frames]
    q = robot.neutral() if q is None else robot.validate_q(q)
    viewer = Viewer(robot, zmq_url=zmq_url, open=open)
    try:
        viewer.display(q)
        for fid in frame_ids:
            viewer.show_frame(fid, label=robot.model.frames[fid].name)
        if len(frame_ids) >= 2:
            viewer.show_segment(frame_ids[0], frame_ids[1])
    except BaseException:
        viewer.close()
        raise
    if not hold:
        return viewer
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        print("Press Ctrl-C to stop the viewer.", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        viewer.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return None

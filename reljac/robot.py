"""Robot: a Pinocchio model with names, ids, limits, configurations and its SRDF.

Robots come in through :mod:`reljac.loading` (URDF, SRDF, Pinocchio models, mimic joints, locked
joints) and by name through :mod:`reljac.robots`; q and v by joint name come from
:class:`~reljac.configuration_space.ConfigurationSpace` (the work in :mod:`reljac.joint_space`).
Geometry (meshes) is loaded lazily, on first use of :attr:`Robot.visual_model`, so kinematics
works even where meshes are missing (:mod:`reljac.robot_geometry` keeps it, and the collision model).

Threads: a Robot may be shared. Its one-shot computations (``reljac.relative_jacobian`` and the
like) use :meth:`Robot.thread_data`, a ``pin.Data`` of the calling thread; lazily built parts
(geometry, the model without mimic joints, the collision model) are built under a lock.
"""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pinocchio as pin
from numpy.typing import ArrayLike

from . import joint_locking, loading, robots
from . import payload as payloads
from .configuration_space import ConfigurationSpace
from .exceptions import URDFError
from .loading import LoadedUrdf, MimicFree
from .model_index import FrameRef
from .payload import Payload
from .robot_geometry import RobotGeometry
from .robots import bundled_robots
from .srdf import SRDF, read_srdf

__all__ = ["FrameRef", "Robot", "as_robot", "bundled_robots"]

# q @ q overflows for entries beyond ~1e154: such a q is refused right after, without this warning.
warnings.filterwarnings("ignore", "overflow encountered in (matmul|dot)", RuntimeWarning, __name__)
_LAZY_PARTS = ("_data", "_without_mimic")  # (and the geometry loaded: see RobotGeometry)


class Robot(ConfigurationSpace):
    """A kinematic model from Pinocchio with names, limits and configuration helpers.

    Attributes:
        name: robot name (the URDF's ``<robot name>``).
        model: the ``pin.Model``; ``data``: a ``pin.Data`` for your own use (made on first use; not
            used by reljac's functions, which take :meth:`thread_data`).
        nq: size of configurations q (more than nv with floating bases and continuous joints).
        nv: size of velocities v.
        joint_names: joints with their own degrees of freedom, in q order (mimic joints excluded).
        q_names: (nq,) the joint each entry of q belongs to (a joint of several values repeats
            its name): the labels of a recorded q's columns.
        frame_names: every Pinocchio frame (links, joints, fixed frames), in model order.
        lower_limits: (nq,) lower position limits [rad or m].
        upper_limits: (nq,) upper position limits [rad or m].
        velocity_limits: (nv,) [rad/s or m/s].
        srdf: the robot's :class:`~reljac.collision.SRDF` (named configurations, disabled collision
            pairs), or None.
        reference_posture: the name of its reference configuration (an SRDF state), or None; see
            :meth:`reference_configuration`.
        locked_joints: {joint name: value} of the joints :meth:`locked` fixed (empty if none).
        payloads: the :class:`~reljac.payload.Payload` objects :meth:`with_payload` added to
            the model, oldest first (empty if none).

    ``Robot(model)`` takes a ``pin.Model`` as it is (no copy) or a ``pin.RobotWrapper`` (its
    model and geometry, copied): see :meth:`from_pinocchio`. Frame names: a name that two
    different frames carry (a joint named like a link that is not its child) is ambiguous: give
    it as ``"link:NAME"`` or ``"joint:NAME"`` (or by frame id). Names, ids, sizes and per-thread
    data come from :class:`~reljac.model_index.ModelIndex`; configurations (q and v checked, by
    joint name, neutral, random, named and reference) from
    :class:`~reljac.configuration_space.ConfigurationSpace`.
    """

    def __init__(self, model: pin.Model, *, urdf_path: str | Path | None = None,
                 package_dirs: Sequence[str | Path] = (), floating_base: bool = False, mimic: bool = True,
                 srdf: str | os.PathLike | SRDF | None = None, _loaded: LoadedUrdf | None = None,
                 _reduced: tuple | None = None) -> None:
        model, collision, visual = loading.unwrap(model)
        if collision is not None or visual is not None:  # a RobotWrapper: its own copies
            model = pin.Model(model)
        loading.check_mimic(model)
        super().__init__(model)
        self.urdf_path = Path(urdf_path) if urdf_path is not None else None
        self.package_dirs = [os.fsdecode(p) for p in package_dirs]
        self.floating_base = floating_base
        self.mimic = bool(mimic)
        self._loaded = _loaded
        self._reduced = _reduced  # (parent robot, locked joint ids, q of the parent)
        self._geometries = RobotGeometry(model, collision, visual)
        self.reference_posture: str | None = None
        self.payloads: tuple[Payload, ...] = ()
        for key in _LAZY_PARTS:
            setattr(self, key, None)
        self.srdf = None if srdf is None else srdf if isinstance(srdf, SRDF) else read_srdf(srdf, self.link_names)

    def __getstate__(self) -> dict:
        """For pickle and deepcopy: no locks, per-thread data or lazily built parts; a robot loaded
        from a URDF is rebuilt from its text, any other model with mimic joints from the model
        without them (Pinocchio 4.1 crashes on unpickled mimic joints)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_local", "model", *_LAZY_PARTS)}
        return {**state, "model": loading.model_state(self.model, self._loaded)}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock, self._local = threading.RLock(), threading.local()
        for key in _LAZY_PARTS:
            setattr(self, key, None)
        self.model = loading.restored_model(state["model"], self._loaded, floating_base=self.floating_base,
                                            mimic=self.mimic)
        self.payloads = tuple(state.get("payloads", ()))
        if state["model"] is None:  # rebuilt from its URDF text: the payloads added again
            for load in self.payloads:
                payloads.attach(self.model, load)

    @classmethod
    def from_urdf(cls, path: str | Path, *, package_dirs: Sequence[str | Path] | None = None,
                  floating_base: bool = False, mimic: bool = True,
                  srdf: str | os.PathLike | None = None) -> Robot:
        """Load a robot from a URDF file (and its SRDF).

        Args:
            path: the URDF file.
            package_dirs: folders searched for ``package://`` mesh URIs (used when the visual
                geometry is first needed). Default: the URDF's folder and its four parents.
            floating_base: add a free-flyer joint (named ``root_joint``) above the root link.
                A URDF whose root joint is already of type ``floating`` gets one without this.
            mimic: couple ``<mimic>`` joints to their leaders (Pinocchio's mimic joints: they
                take no entry of q or v). False loads them as independent joints, for URDFs
                Pinocchio cannot couple (a leader that comes after its follower in its order,
                mimic chains, a continuous joint mimicking a revolute one).
            srdf: an SRDF file: its named configurations (:meth:`configuration`) and disabled
                collision pairs (:attr:`collision_pairs`); every link it names must be the robot's.

        Raises:
            URDFError: a file that cannot be read, malformed XML, or a URDF whose structure is
                wrong (a cycle, a name defined twice, a missing <limit>, a bad number, a mimic
                leader that does not exist, ...) or that Pinocchio rejects; one line naming it.
            SRDFError: a bad SRDF, or one naming links the robot does not have.
        """
        path, floating_base, mimic = loading.urdf_options(path, floating_base, mimic)
        loaded = loading.read_checked(path, mimic=mimic, floating_base=floating_base)
        model = loading.build_model(loaded, floating_base=floating_base, mimic=mimic)
        return cls(model, urdf_path=path, package_dirs=loading.package_folders(path, package_dirs),
                   floating_base=floating_base, mimic=mimic, srdf=srdf, _loaded=loaded)

    @classmethod
    def from_pinocchio(cls, model: Any, collision_model: pin.GeometryModel | None = None,
                       visual_model: pin.GeometryModel | None = None, *,
                       srdf: str | os.PathLike | None = None) -> Robot:
        """A robot from any Pinocchio loader: a ``pin.Model`` (or ``pin.RobotWrapper``, whose
        geometry is taken unless given here) and its geometry models, all copied. Without
        geometry the viewer draws frames only and there are no collision distances.

        Raises:
            ConfigurationError: not a Pinocchio model, or geometry of another model.
        """
        model, wrapped_collision, wrapped_visual = loading.unwrap(model)
        robot = cls(pin.Model(model), srdf=srdf)
        collision_model = wrapped_collision if collision_model is None else collision_model
        visual_model = wrapped_visual if visual_model is None else visual_model
        robot._geometries = RobotGeometry(model, collision_model, visual_model)
        robot.floating_base = model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer"
        return robot

    @classmethod
    def bundled(cls, name: str, **kwargs: Any) -> Robot:
        """Load one of the robots in reljac's ``urdf/`` folder (see :func:`bundled_robots`);
        keyword arguments as for :meth:`from_urdf`."""
        _check_keywords("Robot.bundled", kwargs)
        return cls.from_urdf(robots.bundled_path(name), **kwargs)

    @classmethod
    def load(cls, name_or_path: str | Path, **kwargs: Any) -> Robot:
        """A robot by name (:func:`reljac.robots.available_robots`: bundled, then example-robot-data's
        with their SRDF, reference posture and floating base) or a URDF file by path (what the
        command line accepts; which it is: :func:`reljac.robots.names_a_file`). Keyword arguments
        as for :meth:`from_urdf` override a named robot's."""
        if not isinstance(name_or_path, (str, os.PathLike)):
            raise URDFError(f"a robot is a name or a URDF path, not {type(name_or_path).__name__}")
        _check_keywords("Robot.load", kwargs)
        text = os.fsdecode(name_or_path)
        if robots.names_a_file(text):
            return cls.from_urdf(text, **kwargs)
        source = robots.resolve(text)  # URDFError for unknown names, with near matches
        options = {"package_dirs": source.package_dirs, "floating_base": source.floating_base,
                   "mimic": source.mimic, **kwargs}
        robot = cls.from_urdf(source.urdf, **options)
        if source.srdf is not None and "srdf" not in kwargs:  # read as upstream's loader reads it
            robot.srdf = read_srdf(source.srdf).restricted(robot.link_names, robot.joint_frame_names)
            robot.reference_posture = source.posture
        return robot

    def kinematics_state(self) -> tuple:
        """What rebuilds this robot's kinematics in another process (:meth:`from_kinematics_state`):
        its model, or the URDF text it was read from, its options and payloads; no geometry, SRDF
        or parent robot (a Robot made from a pin.Model with meshes pickles to hundreds of MB)."""
        return (loading.model_state(self.model, self._loaded), self._loaded, self.floating_base, self.mimic,
                self.payloads)

    @classmethod
    def from_kinematics_state(cls, state: tuple) -> Robot:
        """A Robot of the kinematics :meth:`kinematics_state` kept (its model, payloads counted)."""
        model_state, loaded, floating_base, mimic, carried = state
        robot = cls(loading.restored_model(model_state, loaded, floating_base=floating_base, mimic=mimic))
        if model_state is None:  # rebuilt from its URDF text: the payloads added again
            for load in carried:
                payloads.attach(robot.model, load)
        robot.payloads = tuple(carried)
        return robot

    @property
    def urdf_text(self) -> str | None:
        """The URDF text the model was built from (None for a robot made from a pin.Model)."""
        return self._urdf().text if self.urdf_path is not None else None

    def _urdf(self) -> LoadedUrdf:
        if self._loaded is None:
            if self.urdf_path is None:
                raise URDFError(f"robot '{self.name}' was not loaded from a URDF")
            with self._lock:
                if self._loaded is None:
                    self._loaded = loading.read_checked(self.urdf_path, mimic=self.mimic,
                                                        floating_base=self.floating_base)
        return self._loaded

    def without_mimic(self, *, copy: bool = True) -> MimicFree:
        """The same robot with every mimic joint independent, and the maps into it (copies; with
        ``copy=False`` the robot's own, made once and shared: read them, never modify them).

        Returns a :class:`~reljac.loading.MimicFree` ``(model, G, S, o)``: ``v_full = G @ v``,
        ``q_full = S @ q + o`` (exactly: ``.configuration(q)``, which also sets a continuous
        follower's (cos, sin) from its leader's angle). Pinocchio's Jacobian time variations are wrong for models with
        mimic joints (checked by finite differences in the tests), so reljac computes them on
        that model: ``dJ = dJ_full @ G``.
        """
        if not copy:
            return self._mimic_free()
        full, G, S, o = self._mimic_free()
        return MimicFree(pin.Model(full), G.copy(), S.copy(), o.copy())

    def _mimic_free(self) -> MimicFree:
        """:meth:`without_mimic`, cached and read-only (internal use)."""
        if self._without_mimic is None:
            with self._lock:
                if self._without_mimic is None:
                    if self.urdf_path is not None:
                        self._without_mimic = loading.mimic_free_from_urdf(
                            self.model, self._urdf(), floating_base=self.floating_base)
                    else:
                        self._without_mimic = loading.expand_mimic(self.model)
        return self._without_mimic

    # ----------------------------------------------------------------- geometry and collisions
    def _geometry(self, kind: str) -> pin.GeometryModel:
        return self._geometries.model(kind, self._lock, self._load_geometry)

    def _load_geometry(self, kind: str) -> pin.GeometryModel | None:
        """The `kind` model from where the robot came from; None: the model it was given (or none)."""
        if self.urdf_path is not None:
            kinds = {"visual": pin.GeometryType.VISUAL, "collision": pin.GeometryType.COLLISION}
            return loading.load_geometry(self.model, self._urdf(), kinds[kind], self.package_dirs)
        if self._reduced is not None:
            parent, lock, q = self._reduced
            return joint_locking.reduce_model(parent.model, lock, q, [parent._geometry(kind)])[1][0]
        return None

    @property
    def visual_model(self) -> pin.GeometryModel:
        """Visual geometry (loaded on first use; meshes resolved through ``package_dirs``; empty
        for a model given without it)."""
        return self._geometry("visual")

    @property
    def collision_model(self) -> pin.GeometryModel:
        """Collision geometry (loaded on first use; empty for a model given without it)."""
        return self._geometry("collision")

    @property
    def collisions(self) -> Any:
        """The robot's :class:`~reljac.collision.CollisionModel` (built on first use, with the
        SRDF's disabled pairs left out): add or remove pairs and obstacles through it; a copy or
        pickle of the robot keeps them. The collision room, above this one, builds it and says
        what a copy keeps (:mod:`reljac.robot_parts`)."""
        return self._geometries.collisions(self, self._lock)

    @property
    def collision_pairs(self) -> list[tuple[str, str]]:
        """The active collision pairs (link 1, link 2) of :attr:`collisions`, by name."""
        return self.collisions.pairs

    def locked(self, joints: Any, q: ArrayLike | None = None) -> Robot:
        """This robot with `joints` locked: Pinocchio's reduced model, whose q and v leave them out.

        Args:
            joints: a joint name, names, or ``{name: value}`` (value None: from q); a name with
                ``*``, ``?`` or ``[`` is a shell pattern (``"hand_*"``). Mimic joints are locked
                with their leader.
            q: (nq,) configuration giving the locked joints' values (default:
                :meth:`reference_configuration`); values in `joints` win.

        The reduced robot keeps every frame (a locked joint's frame becomes a fixed one), the
        geometry (loaded lazily from this robot's), the limits and names of the other joints,
        the SRDF and reference posture; :attr:`locked_joints` lists the locked values.

        Raises:
            JointNotFound: an unknown, fixed or mimic name, or a pattern matching no joint.
            ConfigurationError: a bad value or q.
        """
        q = self.reference_configuration() if q is None else q
        lock, q, values = joint_locking.lock_plan(self, joints, q)
        model = joint_locking.reduce_model(self.model, lock, q)[0]
        locked_root = bool(self.floating_base) and self.model.names[1] in values
        reduced = Robot(model, package_dirs=self.package_dirs, floating_base=self.floating_base and not locked_root,
                        mimic=self.mimic, srdf=self.srdf, _reduced=(self, lock, q))
        reduced.reference_posture = self.reference_posture
        reduced.locked_joints = {**self.locked_joints, **values}
        reduced.payloads = tuple(payloads.renumbered(load, self.model, model) for load in self.payloads)
        return reduced

    def with_payload(self, mass: float, frame: FrameRef, offset: ArrayLike = (0.0, 0.0, 0.0),
                     inertia: ArrayLike | None = None) -> Robot:
        """This robot carrying a rigid payload (a box between the hands, a tool): a new Robot whose
        model has the payload's inertia added to the body that carries `frame`; this one is unchanged.

        Args:
            mass: [kg] the payload's mass, in (0, 1e9].
            frame: the frame it is rigidly held in (name or id), e.g. a hand's tool frame.
            offset: (3,) [m] its centre of mass from `frame`'s origin, in `frame`'s axes (within 1 km).
            inertia: (3, 3) [kg m^2] its rotational inertia about its centre of mass, in `frame`'s
                axes, symmetric positive semi-definite (default None: a point mass).

        The centre of mass, its Jacobian (:meth:`reljac.Kinematics.center_of_mass_jacobian`), the
        CoMTask and the SupportRegion limit count the payload on both backends, as does the mass
        matrix (:mod:`reljac.payload`). A box held by two hands is attached to one of them (the
        hands' relative pose held rigid, as :func:`reljac.ik.humanoid_stack` does with `hands`).
        The new robot keeps the frames, ids, limits, geometry, SRDF, reference posture, locked
        joints and collision edits; :attr:`payloads` lists what it carries. Payloads add up:
        ``robot.with_payload(...).with_payload(...)``. A copy or pickle keeps them;
        :attr:`urdf_text` is still the URDF's, without the payload.

        Raises:
            ConfigurationError: a bad mass, offset or inertia (one line naming it).
            FrameNotFound: an unknown frame.
        """
        load = payloads.payload(self, mass, frame, offset, inertia)
        model = pin.Model(self.model)
        payloads.attach(model, load)
        carrying = Robot(model, urdf_path=self.urdf_path, package_dirs=self.package_dirs,
                         floating_base=self.floating_base, mimic=self.mimic, srdf=self.srdf, _loaded=self._loaded,
                         _reduced=self._reduced)
        carrying._geometries = self._geometries.copy()  # the same joints and frames: what was loaded too
        carrying.reference_posture = self.reference_posture
        carrying.locked_joints = dict(self.locked_joints)
        carrying.payloads = (*self.payloads, load)
        return carrying

    def __repr__(self) -> str:
        locked = f", locked={len(self.locked_joints)}" if self.locked_joints else ""
        return f"Robot('{self.name}', nq={self.nq}, nv={self.nv}, frames={self.model.nframes}{locked})"


_converted: weakref.WeakKeyDictionary[Any, Robot] = weakref.WeakKeyDictionary()
_converting = threading.Lock()


def as_robot(robot: Any) -> Robot:
    """A :class:`Robot` as it is; a ``pin.RobotWrapper`` or ``pin.Model`` as the Robot made of it
    (:meth:`Robot.from_pinocchio`: copies, made once per object while it lives, so a controller
    and its posture task given the same wrapper share one Robot; later edits of the wrapper are
    not seen).

    Raises:
        ConfigurationError: anything else.
    """
    if isinstance(robot, Robot):
        return robot
    with _converting:
        try:
            converted = _converted.get(robot)
        except TypeError:  # not weakly referable: a new Robot each time
            return Robot.from_pinocchio(robot)
        if converted is None:
            converted = _converted[robot] = Robot.from_pinocchio(robot)
        return converted


FROM_URDF_KEYWORDS = ("package_dirs", "floating_base", "mimic", "srdf")  # Robot.from_urdf's keyword arguments


def _check_keywords(caller: str, kwargs: dict[str, Any]) -> None:
    """TypeError, in Python's words, naming `caller` and the keywords it takes, for a keyword
    argument that Robot.from_urdf does not take (it forwards them)."""
    for name in kwargs:
        if name not in FROM_URDF_KEYWORDS:
            raise TypeError(f"{caller}() got an unexpected keyword argument '{name}' (it takes "
                            f"{', '.join(FROM_URDF_KEYWORDS)}: as Robot.from_urdf)")

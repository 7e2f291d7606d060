"""Robots loaded from URDF through Pinocchio: model, data, names, limits and configurations.

URDF files are read and checked by :mod:`reljac.loading`. Geometry (meshes) is loaded lazily, on
first use of :attr:`Robot.visual_model`, so kinematics works even where meshes are missing.

Threads: a Robot may be shared. Its one-shot computations (``reljac.relative_jacobian`` and the
like) use :meth:`Robot.thread_data`, a ``pin.Data`` of the calling thread; lazily built parts
(geometry, the model without mimic joints) are built under a lock.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pinocchio as pin

from .exceptions import ConfigurationError, FrameNotFound, JointNotFound, URDFError, suggest
from .loading import LoadedUrdf, build_model, load_geometry, mimic_maps, package_folders, read_checked
from .memory import new_data
from .urdf_checks import exists_on_disk, shown
from .validation import as_rng, real_array

BUNDLED_DIR = Path(__file__).resolve().parent / "_urdf"
if not BUNDLED_DIR.is_dir():  # source checkout or editable install: the top-level urdf/ folder
    BUNDLED_DIR = Path(__file__).resolve().parent.parent / "urdf"

FrameRef = str | int
# q @ q overflows for entries beyond ~1e154: such a q is refused right after, without this warning.
warnings.filterwarnings("ignore", "overflow encountered in (matmul|dot)", RuntimeWarning, __name__)
#: Largest |entry| of q and v [rad, m, rad/s, m/s]: products of three such numbers stay finite.
MAX_COORDINATE = 1e100
_MAX_SQUARE = MAX_COORDINATE**2  # q @ q below this: every entry is finite and within the bound


def bundled_robots() -> list[str]:
    """Names of the robots shipped in reljac's ``urdf/`` folder, sorted."""
    return sorted(p.stem for p in BUNDLED_DIR.glob("*.urdf"))


def is_angle_pair(joint: pin.JointModel) -> bool:
    """A continuous (unbounded revolute) joint, any axis: q holds (cos, sin), v one rate."""
    return joint.nq == 2 and joint.nv == 1


def _unit_slice(joint: pin.JointModel) -> slice | None:
    """Slice (within the joint's own q block) of the components that must have unit norm."""
    kind = joint.shortname()
    if kind == "JointModelFreeFlyer":
        return slice(3, 7)
    if kind == "JointModelSpherical":
        return slice(0, 4)
    if is_angle_pair(joint):
        return slice(0, 2)
    if kind == "JointModelPlanar":
        return slice(2, 4)
    return None


def _same_frame(a: pin.Frame, b: pin.Frame) -> bool:
    """Two frames that always coincide (a joint named as its own child link gives two of these)."""
    return a.parentJoint == b.parentJoint and a.placement.isApprox(b.placement, 1e-12)


class Robot:
    """A kinematic model from Pinocchio with names, limits and configuration helpers.

    Attributes:
        name: robot name (the URDF's ``<robot name>``).
        model: the ``pin.Model``; ``data``: a ``pin.Data`` for your own use (made on first use; not
            used by reljac's functions, which take :meth:`thread_data`).
        nq, nv: sizes of configurations q and velocities v (they differ with floating bases and
            continuous joints).
        joint_names: joints with their own degrees of freedom, in q order (mimic joints excluded).
        frame_names: every Pinocchio frame (links, joints, fixed frames), in model order.
        lower_limits, upper_limits: (nq,) position limits; velocity_limits: (nv,) [rad/s or m/s].

    Frame names: a name that two different frames carry (a joint named like a link that is not
    its child) is ambiguous: give it as ``"link:NAME"`` or ``"joint:NAME"`` (or by frame id).
    """

    def __init__(
        self,
        model: pin.Model,
        *,
        urdf_path: str | Path | None = None,
        package_dirs: Sequence[str | Path] = (),
        floating_base: bool = False,
        mimic: bool = True,
        _loaded: LoadedUrdf | None = None,
    ) -> None:
        self.model = model
        self.name = model.name or "robot"
        self.urdf_path = Path(urdf_path) if urdf_path is not None else None
        self.package_dirs = [os.fsdecode(p) for p in package_dirs]
        self.floating_base = floating_base
        self.mimic = bool(mimic)
        self._loaded = _loaded
        self._lock = threading.RLock()  # lazily built parts
        self._local = threading.local()  # per-thread pin.Data
        self._data: pin.Data | None = None
        self._without_mimic: tuple | None = None
        self._visual_model: pin.GeometryModel | None = None
        self._collision_model: pin.GeometryModel | None = None
        self._frame_ids: dict[str, int] = {}
        self._ambiguous: dict[str, list[int]] = {}
        for i, frame in enumerate(model.frames):
            first = self._frame_ids.setdefault(frame.name, i)
            if first != i and not _same_frame(model.frames[first], frame):
                self._ambiguous.setdefault(frame.name, [first]).append(i)
        for name in self._ambiguous:
            del self._frame_ids[name]
        dof_joints = [j for j in range(1, model.njoints) if model.joints[j].nq > 0]
        dof_joints.sort(key=lambda j: model.joints[j].idx_q)
        self._dof_joint_ids = dof_joints
        self.joint_names = [model.names[j] for j in dof_joints]
        self._joint_ids = {model.names[j]: j for j in dof_joints}
        self._mimic_leader = {
            model.names[f]: model.names[l]
            for f, l in zip(model.mimicking_joints, model.mimicked_joints)
        }
        self._q_shape = (model.nq,)
        self._unit_blocks = []
        for j in dof_joints:
            block = _unit_slice(model.joints[j])
            if block is not None:
                start = model.joints[j].idx_q
                self._unit_blocks.append((j, slice(start + block.start, start + block.stop)))

    def __getstate__(self) -> dict:
        """For pickle and deepcopy: no locks, per-thread data or lazily built parts; a robot loaded
        from a URDF is rebuilt from its text (Pinocchio 4.1 crashes on unpickled mimic joints)."""
        state = self.__dict__.copy()
        for key in ("_lock", "_local", "_data", "_without_mimic", "_visual_model", "_collision_model"):
            state.pop(key, None)
        if self._loaded is not None:
            state.pop("model")
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock, self._local, self._data = threading.RLock(), threading.local(), None
        self._without_mimic = self._visual_model = self._collision_model = None
        if "model" not in state:
            self.model = build_model(self._loaded, floating_base=self.floating_base, mimic=self.mimic)

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_urdf(
        cls,
        path: str | Path,
        *,
        package_dirs: Sequence[str | Path] | None = None,
        floating_base: bool = False,
        mimic: bool = True,
    ) -> "Robot":
        """Load a robot from a URDF file.

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

        Raises:
            URDFError: a file that cannot be read, malformed XML, or a URDF whose structure is
                wrong (a cycle, a name defined twice, a missing <limit>, a bad number, a mimic
                leader that does not exist, ...) or that Pinocchio rejects; one line naming it.
        """
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise URDFError(f"a URDF path must be a string or a path, not {type(path).__name__}")
        if not (isinstance(floating_base, (bool, np.bool_)) and isinstance(mimic, (bool, np.bool_))):
            raise URDFError(f"floating_base and mimic must be True or False, got {floating_base!r} and {mimic!r}")
        path = Path(os.fsdecode(path))
        loaded = read_checked(path, mimic=bool(mimic), floating_base=bool(floating_base))
        model = build_model(loaded, floating_base=bool(floating_base), mimic=bool(mimic))
        package_dirs = package_folders(path, package_dirs)
        return cls(model, urdf_path=path, package_dirs=package_dirs, floating_base=bool(floating_base),
                   mimic=bool(mimic), _loaded=loaded)

    @classmethod
    def bundled(cls, name: str, **kwargs) -> "Robot":
        """Load one of the robots in reljac's ``urdf/`` folder (see :func:`bundled_robots`);
        keyword arguments as for :meth:`from_urdf`."""
        names = bundled_robots()
        if not isinstance(name, str) or name not in names:
            hint = suggest(name, names) if isinstance(name, str) else ""
            raise URDFError(f"no bundled robot named {name!r}{hint} (bundled: {', '.join(names)})")
        return cls.from_urdf(BUNDLED_DIR / f"{name}.urdf", **kwargs)

    @classmethod
    def load(cls, name_or_path: str | Path, **kwargs) -> "Robot":
        """A bundled robot by name, or a URDF file by path (what the command line accepts)."""
        if not isinstance(name_or_path, (str, os.PathLike)):
            raise URDFError(f"a robot is a bundled name or a URDF path, not {type(name_or_path).__name__}")
        text = os.fsdecode(name_or_path)
        on_disk = exists_on_disk(text)
        if text in bundled_robots() and not on_disk:
            return cls.bundled(text, **kwargs)
        if not on_disk and not text.endswith(".urdf") and os.sep not in text:
            names = bundled_robots()
            raise URDFError(
                f"'{shown(text)}' is neither a URDF file nor a bundled robot{suggest(text, names)} "
                f"(bundled: {', '.join(names)})"
            )
        return cls.from_urdf(text, **kwargs)

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
                    self._loaded = read_checked(self.urdf_path, mimic=self.mimic, floating_base=self.floating_base)
        return self._loaded

    def without_mimic(self) -> tuple[pin.Model, np.ndarray, np.ndarray, np.ndarray]:
        """The same URDF with every mimic joint independent, and the maps into it (copies).

        Returns (model_full, G, S, o): ``v_full = G @ v``, ``q_full = S @ q + o``. Pinocchio's
        Jacobian time variations are wrong for models with mimic joints (checked by finite
        differences in the tests), so reljac computes them on model_full: ``dJ = dJ_full @ G``.
        """
        full, G, S, o = self._mimic_free()
        return pin.Model(full), G.copy(), S.copy(), o.copy()

    def _mimic_free(self) -> tuple[pin.Model, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`without_mimic`, cached and read-only (internal use)."""
        if self._without_mimic is None:
            with self._lock:
                if self._without_mimic is None:
                    self._without_mimic = self._build_without_mimic()
        return self._without_mimic

    def _build_without_mimic(self) -> tuple[pin.Model, np.ndarray, np.ndarray, np.ndarray]:
        full = build_model(self._urdf(), floating_base=self.floating_base, mimic=False)
        return (full, *mimic_maps(self.model, full))

    # ----------------------------------------------------------------- pin.Data
    def new_data(self) -> pin.Data:
        """A new ``pin.Data`` of the model.

        Raises:
            ModelTooLarge: Pinocchio's data for this model (about 64 nv^3 bytes) does not fit in
                the memory available.
        """
        return new_data(self.model, self.name)

    @property
    def data(self) -> pin.Data:
        """A ``pin.Data`` for the caller's own use (made on first use; reljac's functions do not
        touch it). Not thread safe: give each thread its own (:meth:`new_data`)."""
        if self._data is None:
            with self._lock:
                if self._data is None:
                    self._data = self.new_data()
        return self._data

    def thread_data(self) -> pin.Data:
        """The calling thread's ``pin.Data`` for one-shot computations (made on the thread's first
        call; each one-shot function overwrites it)."""
        try:
            return self._local.data
        except AttributeError:
            data = self._local.data = self.new_data()
            return data

    def _thread_mimic_free_data(self) -> pin.Data:
        """The calling thread's data of :meth:`without_mimic`'s model."""
        try:
            return self._local.mimic_free_data
        except AttributeError:
            data = self._local.mimic_free_data = self._mimic_free()[0].createData()
            return data

    # ----------------------------------------------------------------- geometry
    def _load_geometry(self, kind: pin.GeometryType) -> pin.GeometryModel:
        if self.urdf_path is None:
            raise URDFError(f"robot '{self.name}' was not loaded from a URDF: it has no geometry")
        return load_geometry(self.model, self._urdf(), kind, self.package_dirs)

    @property
    def visual_model(self) -> pin.GeometryModel:
        """Visual geometry (loaded on first use; meshes resolved through ``package_dirs``)."""
        if self._visual_model is None:
            with self._lock:
                if self._visual_model is None:
                    self._visual_model = self._load_geometry(pin.GeometryType.VISUAL)
        return self._visual_model

    @property
    def collision_model(self) -> pin.GeometryModel:
        """Collision geometry (loaded on first use)."""
        if self._collision_model is None:
            with self._lock:
                if self._collision_model is None:
                    self._collision_model = self._load_geometry(pin.GeometryType.COLLISION)
        return self._collision_model

    # ----------------------------------------------------------------- sizes and names
    @property
    def nq(self) -> int:
        return self.model.nq

    @property
    def nv(self) -> int:
        return self.model.nv

    @property
    def frame_names(self) -> list[str]:
        return [f.name for f in self.model.frames]

    @property
    def lower_limits(self) -> np.ndarray:
        return self.model.lowerPositionLimit.copy()

    @property
    def upper_limits(self) -> np.ndarray:
        return self.model.upperPositionLimit.copy()

    @property
    def velocity_limits(self) -> np.ndarray:
        return self.model.velocityLimit.copy()

    def frame_id(self, frame: FrameRef) -> int:
        """Pinocchio frame id of a frame given by name or id ('world' means 'universe' unless
        the robot has a frame of that name; ``"link:NAME"`` / ``"joint:NAME"`` pick the link or
        the joint frame of a name both carry).

        Raises:
            FrameNotFound: unknown or ambiguous name (near matches are suggested) or id out of range.
        """
        if isinstance(frame, str):
            fid = self._frame_ids.get(frame)
            if fid is not None:
                return fid
            return self._frame_id_slow(frame)
        if isinstance(frame, (int, np.integer)) and not isinstance(frame, (bool, np.bool_)):
            if 0 <= frame < self.model.nframes:
                return int(frame)
            raise FrameNotFound(
                f"frame id {frame} is out of range for robot '{self.name}' "
                f"(valid ids: 0..{self.model.nframes - 1})"
            )
        raise FrameNotFound(f"a frame is given by name (str) or id (int), not {type(frame).__name__}")

    def _frame_id_slow(self, frame: str) -> int:
        """Names that are not a single frame's: 'world', ambiguous names and qualified names."""
        if frame == "world":  # Pinocchio calls the world frame 'universe'
            return 0
        kinds = {"link": (pin.FrameType.BODY,), "joint": (pin.FrameType.JOINT, pin.FrameType.FIXED_JOINT)}
        kind, sep, name = frame.partition(":")
        if sep and kind in kinds:
            ids = [i for i, f in enumerate(self.model.frames) if f.name == name and f.type in kinds[kind]]
            if ids:
                return ids[0]
        if frame in self._ambiguous:
            ids = self._ambiguous[frame]
            described = ", ".join(f"{str(self.model.frames[i].type).rsplit('.', 1)[-1].lower()} frame {i}"
                                  for i in ids)
            raise FrameNotFound(
                f"frame name '{frame}' is ambiguous in robot '{self.name}': different frames carry it "
                f"({described}); say 'link:{frame}' or 'joint:{frame}', or give the frame id"
            )
        raise FrameNotFound(
            f"frame '{shown(frame)}' is not in robot '{self.name}'{suggest(frame, self._frame_ids)}"
        )

    def joint_id(self, name: str) -> int:
        """Pinocchio joint id of a joint with its own degrees of freedom.

        Raises:
            JointNotFound: unknown name, a mimic joint (names its leader) or a fixed joint.
        """
        if not isinstance(name, str):
            raise JointNotFound(f"a joint is given by its name (str), not {name!r}")
        jid = self._joint_ids.get(name)
        if jid is not None:
            return jid
        if name in self._mimic_leader:
            raise JointNotFound(
                f"joint '{name}' of robot '{self.name}' is a mimic joint: it follows "
                f"'{self._mimic_leader[name]}'; give the value of '{self._mimic_leader[name]}' instead"
            )
        fixed = [f.name for f in self.model.frames if f.type == pin.FrameType.FIXED_JOINT]
        if name in fixed:
            raise JointNotFound(f"joint '{name}' of robot '{self.name}' is fixed: it has no value")
        listed = ", ".join(self.joint_names[:40]) + (" ..." if len(self.joint_names) > 40 else "")
        raise JointNotFound(
            f"joint '{shown(name)}' is not in robot '{self.name}'{suggest(name, self.joint_names)} "
            f"(joints: {listed})"
        )

    # ----------------------------------------------------------------- configurations
    def _q_owner(self, index: int, *, tangent: bool = False) -> str:
        for j in self._dof_joint_ids:
            joint = self.model.joints[j]
            start, size = (joint.idx_v, joint.nv) if tangent else (joint.idx_q, joint.nq)
            if start <= index < start + size:
                return self.model.names[j]
        return "?"

    def validate_q(self, q, *, name: str = "q", copy: bool = True) -> np.ndarray:
        """Return q as a float array of shape (nq,), or raise ConfigurationError.

        Checks the shape, finiteness, and unit norm of quaternion / (cos, sin) blocks
        (tolerance 1e-6; use ``robot.normalize(q)`` on a drifting q). With ``copy=False`` a
        float64 array of the right shape is returned as it is (for read-only one-shot uses).
        """
        if (not copy and type(q) is np.ndarray and q.dtype == np.float64 and q.shape == self._q_shape
                and not self._unit_blocks and q @ q < _MAX_SQUARE):
            return q  # fast path of the checks below (False for NaN, inf and huge entries)
        q = self._as_vector(q, self.nq, name, tangent=False, copy=copy)
        for j, block in self._unit_blocks:
            unit = q[block]
            norm = math.sqrt(float(unit @ unit))
            if abs(norm - 1.0) > 1e-6:
                raise ConfigurationError(
                    f"{name}[{block.start}:{block.stop}] of joint '{self.model.names[j]}' must have "
                    f"unit norm (it is a quaternion or a (cos, sin) pair); its norm is {norm:.6g}. "
                    "Use robot.normalize(q)."
                )
        return q

    def validate_v(self, v, *, name: str = "v") -> np.ndarray:
        """Return a velocity-like vector as a float array of shape (nv,), or raise."""
        return self._as_vector(v, self.nv, name, tangent=True)

    def _as_vector(self, x, size: int, name: str, *, tangent: bool, copy: bool = True) -> np.ndarray:
        arr = real_array(x, copy=copy)
        if arr is None:
            raise ConfigurationError(
                f"{name} must be an array of {size} real numbers (not booleans, text or complex), "
                f"got {_short(x)}"
            )
        if arr.shape != (size,):
            raise ConfigurationError(
                f"{name} has shape {arr.shape}, expected ({size},) for robot '{self.name}'"
                + (" (velocities have nv entries)" if tangent else " (configurations have nq entries)")
            )
        with np.errstate(over="ignore"):
            square = arr @ arr
        if not square < _MAX_SQUARE:  # dot: fast common path
            bad = ~np.isfinite(arr)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ConfigurationError(
                    f"{name}[{i}] is {arr[i]} (joint '{self._q_owner(i, tangent=tangent)}'); "
                    "all entries must be finite"
                )
            i = int(np.argmax(np.abs(arr)))
            if abs(arr[i]) > MAX_COORDINATE:
                raise ConfigurationError(
                    f"{name}[{i}] is {arr[i]:.3g} (joint '{self._q_owner(i, tangent=tangent)}'); reljac "
                    f"computes with |entries| <= {MAX_COORDINATE:g} (so no product of them overflows)"
                )
        return arr

    def normalize(self, q) -> np.ndarray:
        """q with its quaternion and (cos, sin) blocks normalized (pin.normalize).

        Raises:
            ConfigurationError: a block is zero (it has no direction to keep).
        """
        q = self._as_vector(q, self.nq, "q", tangent=False)
        for j, block in self._unit_blocks:
            if not np.any(q[block]):
                raise ConfigurationError(
                    f"q[{block.start}:{block.stop}] of joint '{self.model.names[j]}' is zero: a "
                    "quaternion or (cos, sin) pair cannot be normalized from zero"
                )
        return pin.normalize(self.model, q)

    def neutral(self) -> np.ndarray:
        """The neutral configuration (zero angles, identity quaternions), shape (nq,)."""
        return pin.neutral(self.model)

    def random_configuration(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """A random configuration inside the position limits, shape (nq,).

        Unbounded revolute and continuous joints draw angles in [-pi, pi]; unbounded translations
        (floating bases) draw in [-1, 1] m; quaternions are uniform on SO(3); limits beyond
        +-1e100 (:data:`MAX_COORDINATE`) are drawn within +-1e100.
        """
        rng = as_rng(rng)
        q = self.neutral()
        lo, hi = self.model.lowerPositionLimit, self.model.upperPositionLimit
        for j in self._dof_joint_ids:
            joint = self.model.joints[j]
            i, kind = joint.idx_q, joint.shortname()
            if joint.nq == 1:
                default = math.pi if kind.startswith("JointModelR") else 1.0
                a = max(lo[i], -MAX_COORDINATE) if np.isfinite(lo[i]) else -default
                b = min(hi[i], MAX_COORDINATE) if np.isfinite(hi[i]) else default
                q[i] = rng.uniform(a, b)
            elif is_angle_pair(joint):
                angle = rng.uniform(-math.pi, math.pi)
                q[i : i + 2] = (math.cos(angle), math.sin(angle))
            elif kind in ("JointModelFreeFlyer", "JointModelSpherical"):
                t = 3 if kind == "JointModelFreeFlyer" else 0
                for k in range(t):
                    a = max(lo[i + k], -1.0)
                    b = min(hi[i + k], 1.0)
                    q[i + k] = rng.uniform(a, b) if a < b else 0.5 * a + 0.5 * b
                quat = rng.normal(size=4)
                q[i + t : i + t + 4] = quat / np.linalg.norm(quat)
            elif kind == "JointModelPlanar":
                q[i : i + 2] = rng.uniform(-1.0, 1.0, size=2)
                angle = rng.uniform(-math.pi, math.pi)
                q[i + 2 : i + 4] = (math.cos(angle), math.sin(angle))
            else:
                raise ConfigurationError(
                    f"joint '{self.model.names[j]}' has type {kind}, which random_configuration "
                    "does not sample"
                )
        return q

    def q_from_joint_values(self, values: Mapping[str, float]) -> np.ndarray:
        """Configuration q (nq,) from one scalar per named joint (e.g. a joint-state message).

        Joints not named stay at neutral. Continuous joints take their angle [rad]. Mimic joints
        follow their leader and cannot be set; multi-DoF joints (floating base) must be set in q.

        Raises:
            JointNotFound: unknown, fixed or mimic joint name.
            ConfigurationError: a non-finite value, or a joint that has no single scalar value.
        """
        if not isinstance(values, Mapping):
            raise ConfigurationError(
                f"joint values must be a mapping {{joint name: value}}, not {type(values).__name__}"
            )
        q = self.neutral()
        for name, value in values.items():
            joint = self.model.joints[self.joint_id(name)]
            if isinstance(value, (bool, np.bool_)) or isinstance(value, (complex, np.complexfloating)):
                raise ConfigurationError(f"value of joint '{name}' must be a real number, not {value!r}")
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ConfigurationError(f"value of joint '{name}' must be a number, not {value!r}") from None
            if not abs(value) <= MAX_COORDINATE:
                raise ConfigurationError(f"value of joint '{name}' is {value:.3g}; it must be finite, with "
                                         f"|value| <= {MAX_COORDINATE:g}")
            if joint.nq == 1:
                q[joint.idx_q] = value
            elif is_angle_pair(joint):
                q[joint.idx_q : joint.idx_q + 2] = (math.cos(value), math.sin(value))
            else:
                raise ConfigurationError(
                    f"joint '{name}' has {joint.nq} configuration values ({joint.shortname()}); "
                    "it has no single scalar value: set its block of q directly"
                )
        return q

    def __repr__(self) -> str:
        return f"Robot('{self.name}', nq={self.nq}, nv={self.nv}, frames={self.model.nframes})"


def _short(x: object, limit: int = 80) -> str:
    text = " ".join(repr(x).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."

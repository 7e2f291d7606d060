"""Robots loaded from URDF through Pinocchio: model, data, names, limits and configurations.

This is the only module that reads URDF through Pinocchio. Geometry (meshes) is loaded lazily,
on first use of :attr:`Robot.visual_model`, so kinematics works even where meshes are missing.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pinocchio as pin

from .exceptions import ConfigurationError, FrameNotFound, JointNotFound, URDFError, suggest
from .urdf_checks import check_joint_values, explain_rejection, quiet_stderr
from .validation import as_rng

BUNDLED_DIR = Path(__file__).resolve().parent / "_urdf"
if not BUNDLED_DIR.is_dir():  # source checkout or editable install: the top-level urdf/ folder
    BUNDLED_DIR = Path(__file__).resolve().parent.parent / "urdf"

FrameRef = str | int


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


class Robot:
    """A kinematic model from Pinocchio with names, limits and configuration helpers.

    Attributes:
        name: robot name (the URDF's ``<robot name>``).
        model: the ``pin.Model``; ``data``: a ``pin.Data`` owned by this robot (not thread safe).
        nq, nv: sizes of configurations q and velocities v (they differ with floating bases and
            continuous joints).
        joint_names: joints with their own degrees of freedom, in q order (mimic joints excluded).
        frame_names: every Pinocchio frame (links, joints, fixed frames), in model order.
        lower_limits, upper_limits: (nq,) position limits; velocity_limits: (nv,) [rad/s or m/s].
    """

    def __init__(
        self,
        model: pin.Model,
        *,
        urdf_path: str | Path | None = None,
        package_dirs: Sequence[str | Path] = (),
        floating_base: bool = False,
    ) -> None:
        self.model = model
        self.data = model.createData()
        self.name = model.name or "robot"
        self.urdf_path = Path(urdf_path) if urdf_path is not None else None
        self.package_dirs = [str(p) for p in package_dirs]
        self.floating_base = floating_base
        self._without_mimic: tuple | None = None
        self._visual_model: pin.GeometryModel | None = None
        self._collision_model: pin.GeometryModel | None = None
        self._frame_ids: dict[str, int] = {}
        for i, frame in enumerate(model.frames):
            self._frame_ids.setdefault(frame.name, i)
        dof_joints = [j for j in range(1, model.njoints) if model.joints[j].nq > 0]
        dof_joints.sort(key=lambda j: model.joints[j].idx_q)
        self._dof_joint_ids = dof_joints
        self.joint_names = [model.names[j] for j in dof_joints]
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
                Pinocchio cannot couple (a leader that comes after its follower in its order).

        Raises:
            URDFError: missing file, malformed XML, or a URDF that Pinocchio rejects.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise URDFError(f"a URDF path must be a string or a path, not {type(path).__name__}")
        path = Path(path)
        if path.is_dir():
            raise URDFError(f"'{path}' is a directory, not a URDF file")
        if not path.is_file():
            raise URDFError(f"URDF file '{path}' does not exist")
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise URDFError(f"URDF file '{path}' is not well-formed XML: {exc}") from None
        except (OSError, UnicodeError) as exc:
            raise URDFError(f"URDF file '{path}' cannot be read: {exc}") from None
        if root.tag != "robot":
            raise URDFError(f"URDF file '{path}' has root element <{root.tag}>, expected <robot>")
        check_joint_values(path, root)
        try:
            with quiet_stderr():
                if floating_base:
                    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer(), mimic=bool(mimic))
                else:
                    model = pin.buildModelFromUrdf(str(path), mimic=bool(mimic))
        except (ValueError, RuntimeError) as exc:
            if mimic and "mimic" in str(exc):
                hint = (" (Pinocchio adds joints branch by branch, sibling branches in name order, and"
                        " needs every mimic leader before its followers; load it with mimic=False"
                        " (--no-mimic) to make the followers independent joints)")
                raise URDFError(f"Pinocchio rejected URDF '{path}': {exc}{hint}") from None
            reason = explain_rejection(path)
            detail = reason if reason else str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid URDF"
            raise URDFError(f"Pinocchio rejected URDF '{path}': {detail}") from None
        if floating_base and model.njoints > 2 and model.joints[2].shortname() == "JointModelFreeFlyer" \
                and model.parents[2] == 1:
            raise URDFError(
                f"URDF '{path}' already has a floating root joint '{model.names[2]}'; "
                "load it with floating_base=False"
            )
        if package_dirs is None:
            package_dirs = [path.resolve().parents[i] for i in range(min(5, len(path.resolve().parents)))]
        elif isinstance(package_dirs, (str, os.PathLike)):
            package_dirs = [package_dirs]
        return cls(model, urdf_path=path, package_dirs=package_dirs, floating_base=floating_base)


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
        text = str(name_or_path)
        if text in bundled_robots() and not Path(text).is_file():
            return cls.bundled(text, **kwargs)
        if not Path(text).is_file() and not text.endswith(".urdf"):
            names = bundled_robots()
            raise URDFError(
                f"'{text}' is neither a URDF file nor a bundled robot{suggest(text, names)} "
                f"(bundled: {', '.join(names)})"
            )
        return cls.from_urdf(text, **kwargs)

    def without_mimic(self) -> tuple[pin.Model, np.ndarray, np.ndarray, np.ndarray]:
        """The same URDF with every mimic joint independent, and the maps into it.

        Returns (model_full, G, S, o): ``v_full = G @ v``, ``q_full = S @ q + o``. Pinocchio's
        Jacobian time variations are wrong for models with mimic joints (checked by finite
        differences in the tests), so reljac computes them on model_full: ``dJ = dJ_full @ G``.
        """
        if self._without_mimic is None:
            if self.urdf_path is None:
                raise URDFError("a robot not loaded from a URDF cannot be rebuilt without mimic joints")
            args = (pin.JointModelFreeFlyer(),) if self.floating_base else ()
            full = pin.buildModelFromUrdf(str(self.urdf_path), *args, mimic=False)
            G = np.zeros((full.nv, self.nv))
            S = np.zeros((full.nq, self.nq))
            o = np.zeros(full.nq)
            for j in range(1, full.njoints):
                joint_full = full.joints[j]
                mine = self.model.joints[self.model.getJointId(full.names[j])]
                if full.names[j] in self._mimic_leader:
                    leader = self.model.joints[self.model.getJointId(self._mimic_leader[full.names[j]])]
                    mimic = mine.extract()
                    G[joint_full.idx_v, leader.idx_v] = mimic.scaling
                    S[joint_full.idx_q, leader.idx_q] = mimic.scaling
                    o[joint_full.idx_q] = mimic.offset
                else:
                    G[joint_full.idx_v : joint_full.idx_v + joint_full.nv, mine.idx_v : mine.idx_v + mine.nv] = np.eye(mine.nv)
                    S[joint_full.idx_q : joint_full.idx_q + joint_full.nq, mine.idx_q : mine.idx_q + mine.nq] = np.eye(mine.nq)
            self._without_mimic = (full, G, S, o)
        return self._without_mimic

    # ----------------------------------------------------------------- geometry
    def _load_geometry(self, kind: pin.GeometryType) -> pin.GeometryModel:
        if self.urdf_path is None:
            raise URDFError(f"robot '{self.name}' was not loaded from a URDF: it has no geometry")
        try:
            return pin.buildGeomFromUrdf(
                self.model, str(self.urdf_path), kind, package_dirs=self.package_dirs
            )
        except (ValueError, RuntimeError) as exc:
            raise URDFError(
                f"cannot load the geometry of '{self.urdf_path}': {exc} "
                f"(package_dirs searched: {self.package_dirs})"
            ) from None

    @property
    def visual_model(self) -> pin.GeometryModel:
        """Visual geometry (loaded on first use; meshes resolved through ``package_dirs``)."""
        if self._visual_model is None:
            self._visual_model = self._load_geometry(pin.GeometryType.VISUAL)
        return self._visual_model

    @property
    def collision_model(self) -> pin.GeometryModel:
        """Collision geometry (loaded on first use)."""
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
        the robot has a frame of that name).

        Raises:
            FrameNotFound: unknown name (near matches are suggested) or id out of range.
        """
        if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool):
            if 0 <= frame < self.model.nframes:
                return int(frame)
            raise FrameNotFound(
                f"frame id {frame} is out of range for robot '{self.name}' "
                f"(valid ids: 0..{self.model.nframes - 1})"
            )
        if isinstance(frame, str):
            fid = self._frame_ids.get(frame)
            if fid is not None:
                return fid
            if frame == "world":  # Pinocchio calls the world frame 'universe'
                return 0
            raise FrameNotFound(
                f"frame '{frame}' is not in robot '{self.name}'{suggest(frame, self._frame_ids)}"
            )
        raise FrameNotFound(f"a frame is given by name (str) or id (int), not {type(frame).__name__}")

    def joint_id(self, name: str) -> int:
        """Pinocchio joint id of a joint with its own degrees of freedom.

        Raises:
            JointNotFound: unknown name, a mimic joint (names its leader) or a fixed joint.
        """
        if not isinstance(name, str):
            raise JointNotFound(f"a joint is given by its name (str), not {name!r}")
        if name in self._mimic_leader:
            raise JointNotFound(
                f"joint '{name}' of robot '{self.name}' is a mimic joint: it follows "
                f"'{self._mimic_leader[name]}'; give the value of '{self._mimic_leader[name]}' instead"
            )
        if name in self.joint_names:
            return self.model.getJointId(name)
        fixed = [f.name for f in self.model.frames if f.type == pin.FrameType.FIXED_JOINT]
        if name in fixed:
            raise JointNotFound(f"joint '{name}' of robot '{self.name}' is fixed: it has no value")
        raise JointNotFound(
            f"joint '{name}' is not in robot '{self.name}'{suggest(name, self.joint_names)} "
            f"(joints: {', '.join(self.joint_names)})"
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
                and not self._unit_blocks and math.isfinite(q @ q)):
            return q  # fast path of the checks below
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
        try:
            if np.iscomplexobj(x):
                raise TypeError
            arr = np.array(x, dtype=float) if copy else np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise ConfigurationError(f"{name} must be an array of {size} real numbers, got {x!r}") from None
        if arr.shape != (size,):
            raise ConfigurationError(
                f"{name} has shape {arr.shape}, expected ({size},) for robot '{self.name}'"
                + (" (velocities have nv entries)" if tangent else " (configurations have nq entries)")
            )
        if not math.isfinite(arr @ arr) and not np.isfinite(arr).all():  # dot: fast common path
            i = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise ConfigurationError(
                f"{name}[{i}] is {arr[i]} (joint '{self._q_owner(i, tangent=tangent)}'); "
                "all entries must be finite"
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
        (floating bases) draw in [-1, 1] m; quaternions are uniform on SO(3).
        """
        rng = as_rng(rng)
        q = self.neutral()
        lo, hi = self.model.lowerPositionLimit, self.model.upperPositionLimit
        for j in self._dof_joint_ids:
            joint = self.model.joints[j]
            i, kind = joint.idx_q, joint.shortname()
            if joint.nq == 1:
                default = math.pi if kind.startswith("JointModelR") else 1.0
                a = lo[i] if np.isfinite(lo[i]) else -default
                b = hi[i] if np.isfinite(hi[i]) else default
                q[i] = rng.uniform(a, b)
            elif is_angle_pair(joint):
                angle = rng.uniform(-math.pi, math.pi)
                q[i : i + 2] = (math.cos(angle), math.sin(angle))
            elif kind in ("JointModelFreeFlyer", "JointModelSpherical"):
                t = 3 if kind == "JointModelFreeFlyer" else 0
                for k in range(t):
                    a = max(lo[i + k], -1.0)
                    b = min(hi[i + k], 1.0)
                    q[i + k] = rng.uniform(a, b) if a < b else 0.5 * (a + b)
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
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ConfigurationError(f"value of joint '{name}' must be a number, not {value!r}") from None
            if not math.isfinite(value):
                raise ConfigurationError(f"value of joint '{name}' is {value}; it must be finite")
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

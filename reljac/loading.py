"""Robots in: URDF text, SRDF files and Pinocchio models -> the parts a Robot is made of.

* URDF: read and checked (below), built by Pinocchio, geometry loaded on demand;
* Pinocchio models: a ``pin.Model`` or ``pin.RobotWrapper`` with its geometry (:func:`unwrap`);
* mimic joints: the same model with every mimic joint independent, as a named result
  (:class:`MimicFree`), from the URDF or from the model alone (:func:`expand_mimic`);
* (reduced models, joints locked with ``pin.buildReducedModel``: :mod:`reljac.joint_locking`).

The only module that hands URDF to Pinocchio. It reads the file itself
(:func:`~reljac.urdf_checks.read_urdf`), checks the XML (:func:`~reljac.urdf_checks.check_urdf`),
gives Pinocchio the text (never the path: any path works, whatever its bytes) with its own
printing captured, turns its exceptions into one line naming the element, and compares the model
with the file afterwards (:func:`~reljac.urdf_checks.check_loaded`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pinocchio as pin

from .cpp_output import captured_output, cpp_message
from .exceptions import ConfigurationError, URDFError
from .mimic_limits import hold_follower_limits
from .urdf_checks import Urdf, check_loaded, check_urdf
from .urdf_files import parse_xml, read_urdf, shown


@dataclass(frozen=True)
class LoadedUrdf:
    """A checked URDF: its text (what Pinocchio parses), its structure and where it came from."""

    text: str
    urdf: Urdf
    source: str  # the path, quoted and printable, for messages


def urdf_options(path: object, floating_base: object, mimic: object) -> tuple[Path, bool, bool]:
    """The arguments of :meth:`Robot.from_urdf`, checked: (path, floating_base, mimic).

    Raises:
        URDFError: a path that is not a string or a path, or options that are not True or False.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise URDFError(f"a URDF path must be a string or a path, not {type(path).__name__}")
    if not (isinstance(floating_base, (bool, np.bool_)) and isinstance(mimic, (bool, np.bool_))):
        raise URDFError(f"floating_base and mimic must be True or False, got {floating_base!r} and {mimic!r}")
    return Path(os.fsdecode(path)), bool(floating_base), bool(mimic)


def read_checked(path: str | os.PathLike, *, mimic: bool, floating_base: bool) -> LoadedUrdf:
    """Read and check a URDF file (URDFError naming the problem)."""
    data = read_urdf(path)
    source = f"'{shown(path)}'"
    root = parse_xml(data, source)
    urdf = check_urdf(root, source, mimic=mimic, floating_base=floating_base)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:  # another declared encoding: hand Pinocchio the parsed tree as UTF-8
        text = _serialized(root)
    return LoadedUrdf(text, urdf, source)


def _serialized(root: Any) -> str:
    import xml.etree.ElementTree as ET

    return ET.tostring(root, encoding="unicode")


def build_model(loaded: LoadedUrdf, *, floating_base: bool, mimic: bool) -> pin.Model:
    """Pinocchio's model of a checked URDF; URDFError if Pinocchio refuses it or drops part of it."""
    args = (pin.JointModelFreeFlyer(),) if floating_base else ()
    try:
        with captured_output() as printed:
            model = pin.buildModelFromXML(loaded.text, *args, mimic=bool(mimic))
    except (ValueError, RuntimeError) as exc:
        reason = printed.first_error() or cpp_message(exc)
        hint = ""
        if mimic and "mimic" in str(exc):
            hint = " (load it with mimic=False (--no-mimic) to make the followers independent joints)"
        raise URDFError(f"Pinocchio rejected URDF {loaded.source}: {reason}{hint}") from None
    except MemoryError:
        raise URDFError(f"URDF {loaded.source} is too large for Pinocchio's parser in this memory") from None
    if printed.first_error():  # urdfdom complained but went on: part of the file was dropped
        raise URDFError(f"URDF {loaded.source}: {printed.first_error()} (urdfdom skipped that element)")
    if floating_base and model.njoints > 2 and model.joints[2].shortname() == "JointModelFreeFlyer" \
            and model.parents[2] == 1:
        raise URDFError(f"URDF {loaded.source} already has a floating root joint '{model.names[2]}'; "
                        "load it with floating_base=False")
    frames = [(f.name, str(f.type).rsplit(".", 1)[-1]) for f in model.frames]
    check_loaded(loaded.urdf, list(model.names)[1:], frames, loaded.source, floating_base=floating_base)
    hold_follower_limits(model, loaded.urdf.xml, loaded.source)
    return model


class MimicFree(NamedTuple):
    """A model with every mimic joint made independent, and the maps into it (read-only arrays).

    ``v_full = G @ v`` (G: (full.nv, nv)), ``q_full = S @ q + o`` (S: (full.nq, nq), o: (full.nq,))
    for followers of one coordinate. A continuous follower's (cos, sin) pair is not linear in its
    leader's: its cos row holds the scaling s at the leader's cos column and o its offset, its
    sin row nothing, and :meth:`configuration` sets the pair from the angle ``s theta + o``
    (Pinocchio's mimic of an unbounded revolute joint).
    """

    model: pin.Model
    G: np.ndarray
    S: np.ndarray
    o: np.ndarray

    def configuration(self, q: np.ndarray) -> np.ndarray:
        """q_full (full.nq,) of the robot's q (nq,): ``S @ q + o``, continuous followers' pairs
        from their leaders' angles."""
        q_full = self.S @ q + self.o
        for j in range(1, self.model.njoints):
            joint = self.model.joints[j]
            row = joint.idx_q
            if (joint.nq, joint.nv) == (2, 1) and not self.S[row + 1].any():  # a continuous follower
                leader = int(np.flatnonzero(self.S[row])[0]) if self.S[row].any() else -1
                theta = 0.0 if leader < 0 else float(np.arctan2(q[leader + 1], q[leader]))
                angle = (self.S[row, leader] if leader >= 0 else 0.0) * theta + self.o[row]
                q_full[row : row + 2] = np.cos(angle), np.sin(angle)
        return q_full


def model_state(model: pin.Model, loaded: LoadedUrdf | None) -> object:
    """What a pickled Robot keeps of its model: None when it is rebuilt from its URDF text, the
    model without mimic joints and the couplings for one with them (Pinocchio 4.1 crashes on
    unpickled mimic joints), else the model itself."""
    if loaded is not None:
        return None
    if model.mimicking_joints:
        return expand_mimic(model).model, mimic_couplings(model)
    return model


def restored_model(state: object, loaded: LoadedUrdf | None, *, floating_base: bool, mimic: bool) -> pin.Model:
    """The model of a pickled Robot from :func:`model_state`'s `state`."""
    if state is None and loaded is not None:
        return build_model(loaded, floating_base=floating_base, mimic=mimic)
    if isinstance(state, tuple):
        return restore_mimic(*state)
    if not isinstance(state, pin.Model):
        raise ConfigurationError(f"a pickled Robot holds no model (got {type(state).__name__})")
    return state


def mimic_free_from_urdf(model: pin.Model, loaded: LoadedUrdf, *, floating_base: bool) -> MimicFree:
    """The URDF built again with ``mimic=False``, and the maps from `model` (built with mimic)."""
    full = build_model(loaded, floating_base=floating_base, mimic=False)
    return MimicFree(full, *mimic_maps(model, full))


def _mimic_inner(model: pin.Model, data: pin.Data, j: int) -> pin.JointModel:
    """The joint a mimic joint moves like (its own type and axis), as an independent joint."""
    text = str(model.joints[j].extract())
    found = re.search(r"Mimicking joint type: (\w+)", text)
    kind = found.group(1) if found else "?"
    scaling = model.joints[j].extract().scaling  # the mimic joint's S is scaling times its own
    S = np.asarray(data.joints[j].S, dtype=float).reshape(6, -1)[:, 0] * np.sign(scaling)
    if kind in ("JointModelRevoluteUnaligned", "JointModelPrismaticUnaligned") and scaling == 0:
        raise ConfigurationError(f"mimic joint '{model.names[j]}' has scaling 0: its axis cannot be recovered "
                                 "from the model")
    if kind == "JointModelRevoluteUnaligned":
        return pin.JointModelRevoluteUnaligned(S[3:] / np.linalg.norm(S[3:]))
    if kind == "JointModelPrismaticUnaligned":
        return pin.JointModelPrismaticUnaligned(S[:3] / np.linalg.norm(S[:3]))
    if re.fullmatch(r"JointModel(RU?B?|P)[XYZ]", kind) and hasattr(pin, kind):  # (RUB: continuous)
        return getattr(pin, kind)()
    raise ConfigurationError(f"mimic joint '{model.names[j]}' moves like a {kind}, which reljac cannot make "
                             "independent (revolute and prismatic joints, continuous ones about an axis of their "
                             "frame; a robot loaded from its URDF has no such limit)")


def expand_mimic(model: pin.Model) -> MimicFree:
    """`model` with every mimic joint made an independent joint of its own type, axis, placement
    and inertia (same joint ids, names and frames), and the maps into it.

    For models that do not come from a URDF (reduced or given models); a follower's position
    and velocity limits are left unbounded (only its leader's count). Raises ConfigurationError
    for a mimic joint of another type than revolute or prismatic, or continuous about an axis of
    its frame (Pinocchio's Python bindings cannot set an oblique continuous joint's axis).
    """
    data = model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))
    full = pin.Model()
    full.name = model.name
    full.gravity = model.gravity
    for j in range(1, model.njoints):
        joint = model.joints[j]
        if joint.shortname() == "JointModelMimic":
            new = _mimic_inner(model, data, j)
            unbounded_v, unbounded_q = np.full(new.nv, np.inf), np.full(new.nq, np.inf)
            limits = (unbounded_v, unbounded_v, -unbounded_q, unbounded_q)
        else:
            q, v = slice(joint.idx_q, joint.idx_q + joint.nq), slice(joint.idx_v, joint.idx_v + joint.nv)
            new, limits = joint, (model.effortLimit[v], model.velocityLimit[v], model.lowerPositionLimit[q],
                                  model.upperPositionLimit[q])
        full.addJoint(model.parents[j], new, model.jointPlacements[j], model.names[j], *limits)
        full.appendBodyToJoint(j, model.inertias[j], pin.SE3.Identity())
    full.inertias[0] = model.inertias[0]  # (the bodies fixed to the world: their mass counts in the CoM)
    for frame in list(model.frames)[1:]:
        full.addFrame(pin.Frame(frame), False)
    _copy_joint_values(model, full)
    return MimicFree(full, *mimic_maps(model, full))


#: a model's values per velocity entry and per configuration entry, and a follower's default
PER_VELOCITY = {"damping": 0.0, "lowerDryFrictionLimit": 0.0, "upperDryFrictionLimit": 0.0, "armature": 0.0,
                "rotorInertia": 0.0, "rotorGearRatio": 1.0}
PER_CONFIGURATION = {"positionLimitMargin": 0.0}


def _copy_joint_values(model: pin.Model, full: pin.Model) -> None:
    """`full` (:func:`expand_mimic`'s) takes `model`'s values of each joint (damping, dry
    friction, armature, rotor, limit margin); a mimic follower the defaults (Pinocchio's)."""
    followers = {model.names[f] for f in model.mimicking_joints}
    for fields, size, index in ((PER_VELOCITY, full.nv, "idx_v"), (PER_CONFIGURATION, full.nq, "idx_q")):
        for name, default in fields.items():
            mine, values = np.asarray(getattr(model, name), dtype=float), np.full(size, default)
            for j in range(1, full.njoints):
                if full.names[j] not in followers:
                    joint = model.joints[model.getJointId(full.names[j])]
                    width = joint.nv if index == "idx_v" else joint.nq
                    at, start = getattr(full.joints[j], index), getattr(joint, index)
                    values[at:at + width] = mine[start:start + width]
            setattr(full, name, values)


def mimic_couplings(model: pin.Model) -> list[tuple[int, int, float, float]]:
    """(follower id, leader id, scaling, offset) of every mimic joint."""
    return [(int(f), int(leader), float(model.joints[f].extract().scaling), float(model.joints[f].extract().offset))
            for f, leader in zip(model.mimicking_joints, model.mimicked_joints, strict=True)]


def restore_mimic(full: pin.Model, couplings: list[tuple[int, int, float, float]]) -> pin.Model:
    """The model :func:`expand_mimic` expanded, with its mimic joints back (pickling: Pinocchio 4.1
    crashes on an unpickled model with mimic joints, not on one without)."""
    for follower, leader, scaling, offset in couplings:
        full = pin.transformJointIntoMimic(full, leader, follower, scaling, offset)
    return full


def mimic_maps(model: pin.Model, full: pin.Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(G, S, o), read-only, from a model with mimic joints to the same model without them
    (`full`, every joint independent): ``v_full = G @ v``, ``q_full = S @ q + o``."""
    leaders = {model.names[f]: model.names[leader]
               for f, leader in zip(model.mimicking_joints, model.mimicked_joints, strict=True)}
    G = np.zeros((full.nv, model.nv))
    S = np.zeros((full.nq, model.nq))
    o = np.zeros(full.nq)
    for j in range(1, full.njoints):
        joint_full = full.joints[j]
        mine = model.joints[model.getJointId(full.names[j])]
        if full.names[j] in leaders:
            leader = model.joints[model.getJointId(leaders[full.names[j]])]
            mimic = mine.extract()
            G[joint_full.idx_v, leader.idx_v] = mimic.scaling
            S[joint_full.idx_q, leader.idx_q] = mimic.scaling
            o[joint_full.idx_q] = mimic.offset
        else:
            G[joint_full.idx_v : joint_full.idx_v + joint_full.nv, mine.idx_v : mine.idx_v + mine.nv] = np.eye(mine.nv)
            S[joint_full.idx_q : joint_full.idx_q + joint_full.nq, mine.idx_q : mine.idx_q + mine.nq] = np.eye(mine.nq)
    for array in (G, S, o):
        array.flags.writeable = False
    return G, S, o


def package_folders(path: Path, package_dirs: Any) -> list:
    """The folders searched for meshes: `package_dirs` (one folder or a list), by default the
    URDF's folder and its four parents."""
    if package_dirs is None:
        try:
            parents = path.resolve().parents
        except (OSError, RuntimeError):
            parents = path.absolute().parents
        return [parents[i] for i in range(min(5, len(parents)))]
    if isinstance(package_dirs, (str, bytes, os.PathLike)):
        return [package_dirs]
    try:
        folders = list(package_dirs)
    except TypeError:
        raise URDFError(f"package_dirs must be a folder or a list of folders, not {package_dirs!r}") from None
    for folder in folders:
        if not isinstance(folder, (str, bytes, os.PathLike)):
            raise URDFError(f"package_dirs must hold folder paths, got {folder!r}")
    return folders


def load_geometry(model: pin.Model, loaded: LoadedUrdf, kind: pin.GeometryType,
                  package_dirs: list[str]) -> pin.GeometryModel:
    """Visual or collision geometry; URDFError naming the link and mesh that cannot be loaded."""
    label = "visual" if kind == pin.GeometryType.VISUAL else "collision"
    try:
        with captured_output():
            return pin.buildGeomFromUrdfString(model, loaded.text, kind, package_dirs=package_dirs)
    except (ValueError, RuntimeError) as exc:
        detail = _mesh_problem(loaded.urdf, label, cpp_message(exc))
        raise URDFError(f"cannot load the {label} geometry of URDF {loaded.source}: {detail} "
                        f"(package_dirs searched: {package_dirs})") from None
    except MemoryError:
        raise URDFError(f"the {label} meshes of URDF {loaded.source} do not fit in memory") from None


def _mesh_problem(urdf: Urdf, label: str, message: str) -> str:
    """'link X: mesh Y <reason>' for a mesh named in Pinocchio's message, else the message."""
    found = re.search(r"Mesh (.+?) could not be found", message)
    resource = re.search(r"Could not load resource (\S+)", message)
    match = found or resource
    if match is None:
        return message
    name = match.group(1)
    for link in urdf.xml.findall("link"):
        for element in link.findall(label):
            mesh = element.find("geometry/mesh")
            filename = mesh.get("filename", "") if mesh is not None else ""
            if filename and (filename == name or os.path.basename(filename) == os.path.basename(name)):
                reason = "could not be found" if found else f"cannot be read ({message})"
                return f"link '{link.get('name')}' has mesh '{filename}', which {reason}"
    return message


# ----------------------------------------------------------------------------- Pinocchio models
def unwrap(robot: Any) -> tuple[pin.Model, pin.GeometryModel | None, pin.GeometryModel | None]:
    """(model, collision model, visual model) of a ``pin.Model`` (no geometry) or of a
    ``pin.RobotWrapper`` (or any object with ``model``, ``collision_model``, ``visual_model``)."""
    if isinstance(robot, pin.Model):
        return robot, None, None
    model = getattr(robot, "model", None)
    if isinstance(model, pin.Model):
        return model, getattr(robot, "collision_model", None), getattr(robot, "visual_model", None)
    raise ConfigurationError(f"a robot is a reljac.Robot, a pin.Model or a pin.RobotWrapper, not "
                             f"{type(robot).__name__}")


def check_mimic(model: pin.Model) -> None:
    """ConfigurationError for a mimic joint of scaling 0 (as a URDF's multiplier 0 is refused):
    it never moves, and its axis cannot be recovered to make it independent; and for a continuous
    one whose scaling is not a whole number (as a URDF's): Pinocchio reads its leader's angle in
    (-pi, pi], so it would jump by a fraction of a turn where the leader passes pi."""
    for j in model.mimicking_joints:
        mimic = model.joints[j].extract()
        scaling = float(mimic.scaling)
        if scaling == 0:
            raise ConfigurationError(f"mimic joint '{model.names[j]}' has scaling 0: it never moves; make it a "
                                     "fixed joint (reljac refuses mimic joints of scaling 0)")
        if re.search(r"Mimicking joint type: JointModelRevoluteUnbounded|Mimicking joint type: JointModelRUB",
                     str(mimic)) and scaling != round(scaling):
            raise ConfigurationError(f"mimic joint '{model.names[j]}' is continuous with scaling {scaling:g}: "
                                     "Pinocchio reads its leader's angle in (-pi, pi], so a scaling that is not a "
                                     "whole number makes it jump where the leader passes pi")


def check_geometry(geometry: Any, model: pin.Model, kind: str) -> pin.GeometryModel | None:
    """A copy of a geometry model of `model` (None stays None); ConfigurationError otherwise."""
    if geometry is None:
        return None
    if not isinstance(geometry, pin.GeometryModel):
        raise ConfigurationError(f"{kind}_model must be a pin.GeometryModel, not {type(geometry).__name__}")
    for obj in geometry.geometryObjects:
        if obj.parentJoint >= model.njoints or obj.parentFrame >= model.nframes:
            raise ConfigurationError(f"{kind}_model is not a geometry model of robot '{model.name}': geometry "
                                     f"'{obj.name}' has parent joint {obj.parentJoint} and frame {obj.parentFrame}, "
                                     f"the model has {model.njoints} joints and {model.nframes} frames")
    return geometry.copy()

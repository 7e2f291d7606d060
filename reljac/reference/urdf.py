"""A small URDF reader (xml.etree only) producing the plain description the reference tree is built from.

Supported: ``<link>``; ``<joint>`` of type revolute, continuous, prismatic, fixed, floating and
planar; ``<origin xyz rpy>`` (defaults 0; ``rpy`` is fixed-axis roll-pitch-yaw,
``R = Rz(y) Ry(p) Rx(r)``); ``<axis xyz>`` (default ``1 0 0``, normalized; a zero axis is an error;
a planar joint moves in its frame's x-y plane, so its axis, the plane's normal, must be ``0 0 1``
or absent, as Pinocchio reads it); ``<limit lower upper>``
(defaults 0 as in the URDF spec; a revolute or prismatic joint without ``<limit>`` is unbounded);
``<mimic joint multiplier offset>`` (defaults 1 and 0). Everything else (visuals, inertias,
transmissions, gazebo tags) is ignored. Only direct children of ``<robot>`` are read, so the
``<joint>`` elements nested in ``<transmission>`` are not mistaken for joints.

The structural checks (links exist, one parent per link, exactly one root, no cycle, mimic leaders
exist) are done here; every failure raises :class:`URDFError` naming the offending element.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reljac.exceptions import URDFError, suggest
from reljac.reference.lie import make_transform, rpy_to_rotation

#: Joint types this reader accepts.
SUPPORTED_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
#: Joint types that move with one scalar (and may lead or follow a mimic).
ONE_DOF_JOINT_TYPES = ("revolute", "continuous", "prismatic")


@dataclass(frozen=True)
class UrdfMimic:
    """``q_follower = multiplier * q_leader + offset`` (leader named by `leader`)."""

    leader: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True, eq=False)
class UrdfJoint:
    """One ``<joint>`` element.

    Attributes:
        origin: T_parent_joint, the joint frame in the parent link frame at zero motion, (4, 4).
        axis: unit joint axis in the joint frame, (3,) (``[1, 0, 0]`` for fixed/floating joints; a
            planar joint's plane normal ``[0, 0, 1]``).
        lower: lower position limit [rad] or [m]; -inf when the joint has no ``<limit>``.
        upper: upper position limit [rad] or [m]; inf when the joint has no ``<limit>``.
    """

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    mimic: UrdfMimic | None


@dataclass(frozen=True)
class UrdfRobot:
    """A parsed URDF: links and joints in document order and the unique root link."""

    name: str
    links: tuple[str, ...]
    joints: tuple[UrdfJoint, ...]
    root: str
    source: str


def parse_urdf_file(path: str | Path) -> UrdfRobot:
    """Read and check the URDF file at `path`.

    Raises:
        URDFError: if the file is missing, is not well-formed XML or describes something unsupported.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise URDFError(f"a URDF path must be a str or a path, got {path!r}")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise URDFError(f"URDF file '{path}' does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise URDFError(f"cannot read URDF file '{path}': {error}") from error
    return parse_urdf_string(text, source=str(path))


def parse_urdf_string(text: str, *, source: str = "<string>") -> UrdfRobot:
    """Parse and check URDF text; `source` names it in error messages.

    Raises:
        URDFError: if the text is not well-formed XML or describes something unsupported.
    """
    if not isinstance(text, (str, bytes)):
        raise URDFError(f"{source}: URDF text must be a str (or bytes), got {type(text).__name__}")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        raise URDFError(f"{source}: not well-formed XML ({error})") from None
    if root.tag != "robot":
        raise URDFError(f"{source}: the root element is <{root.tag}>, expected <robot>")
    links = _read_links(root, source)
    joints = tuple(_read_joint(element, source) for element in root.findall("joint"))
    robot_root = _check_tree(links, joints, source)
    _check_mimics(joints, source)
    return UrdfRobot(root.get("name") or "robot", links, joints, robot_root, source)


def _read_links(root: ET.Element, source: str) -> tuple[str, ...]:
    names: list[str] = []
    for element in root.findall("link"):
        name = element.get("name")
        if not name:
            raise URDFError(f"{source}: a <link> has no name attribute")
        if name in names:
            raise URDFError(f"{source}: link '{name}' is defined twice")
        names.append(name)
    if not names:
        raise URDFError(f"{source}: the robot has no <link>")
    return tuple(names)


def _read_joint(element: ET.Element, source: str) -> UrdfJoint:
    name = element.get("name")
    if not name:
        raise URDFError(f"{source}: a <joint> has no name attribute")
    where = f"{source}: joint '{name}'"
    kind = element.get("type")
    if kind not in SUPPORTED_JOINT_TYPES:
        raise URDFError(
            f"{where} has type {kind!r}, which is not supported; "
            f"supported types: {', '.join(SUPPORTED_JOINT_TYPES)}"
        )
    parent, child = (_link_reference(element, tag, where) for tag in ("parent", "child"))

    origin_element = element.find("origin")
    xyz = _vector(origin_element, "xyz", (0.0, 0.0, 0.0), where)
    rpy = _vector(origin_element, "rpy", (0.0, 0.0, 0.0), where)
    origin = make_transform(rpy_to_rotation(rpy), xyz)

    axis = np.array([1.0, 0.0, 0.0])
    if kind in ONE_DOF_JOINT_TYPES:
        axis = _vector(element.find("axis"), "xyz", (1.0, 0.0, 0.0), where)
        norm = float(np.linalg.norm(axis))
        if norm < 1e-12:
            raise URDFError(f"{where} has a zero <axis xyz>; the axis must be a non-zero 3-vector")
        axis = axis / norm
    elif kind == "planar":  # it moves in its frame's x-y plane: the normal is +z
        normal = _vector(element.find("axis"), "xyz", (0.0, 0.0, 1.0), where)
        if not (normal[2] > 0 and abs(normal[0]) <= 1e-9 * normal[2] and abs(normal[1]) <= 1e-9 * normal[2]):
            raise URDFError(f"{where} is planar with <axis xyz=\"{' '.join(f'{a:g}' for a in normal)}\">; a planar "
                            "joint moves in its frame's x-y plane (normal +z): give axis 0 0 1 and turn the joint's "
                            "<origin> so that z is the plane's normal")
        axis = np.array([0.0, 0.0, 1.0])

    lower, upper = -math.inf, math.inf
    limit = element.find("limit")
    if kind in ("revolute", "prismatic") and limit is not None:
        lower = _number(limit, "lower", 0.0, where)
        upper = _number(limit, "upper", 0.0, where)
        if lower > upper:
            raise URDFError(f"{where} has <limit lower={lower} upper={upper}> with lower > upper")

    mimic = None
    mimic_element = element.find("mimic")
    if mimic_element is not None:
        leader = mimic_element.get("joint")
        if not leader:
            raise URDFError(f"{where} has a <mimic> without a joint attribute")
        mimic = UrdfMimic(
            leader,
            _number(mimic_element, "multiplier", 1.0, where),
            _number(mimic_element, "offset", 0.0, where),
        )
    return UrdfJoint(name, kind, parent, child, origin, axis, lower, upper, mimic)


def _link_reference(element: ET.Element, tag: str, where: str) -> str:
    sub = element.find(tag)
    link = sub.get("link") if sub is not None else None
    if not link:
        raise URDFError(f"{where} has no <{tag} link=...>")
    return link


def _vector(element: ET.Element | None, attribute: str, default: tuple[float, ...], where: str) -> np.ndarray:
    text = element.get(attribute) if element is not None else None
    if text is None:
        return np.array(default)
    try:
        values = [float(word) for word in text.split()]
    except ValueError:
        values = []
    if len(values) != len(default) or not all(math.isfinite(v) for v in values):
        raise URDFError(f"{where}: {attribute}={text!r} must be {len(default)} finite numbers")
    return np.array(values)


def _number(element: ET.Element, attribute: str, default: float, where: str) -> float:
    text = element.get(attribute)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise URDFError(f"{where}: <{element.tag} {attribute}={text!r}> must be a finite number")
    return value


def _check_tree(links: tuple[str, ...], joints: tuple[UrdfJoint, ...], source: str) -> str:
    """Check the links and joints form one tree; return its root link."""
    joint_names: set[str] = set()
    parent_joint: dict[str, str] = {}
    for joint in joints:
        if joint.name in joint_names:
            raise URDFError(f"{source}: joint '{joint.name}' is defined twice")
        joint_names.add(joint.name)
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise URDFError(
                    f"{source}: joint '{joint.name}' has {role} link '{link}', which is not a <link>"
                    f"{suggest(link, links)}"
                )
        if joint.child == joint.parent:
            raise URDFError(f"{source}: joint '{joint.name}' connects link '{joint.child}' to itself")
        if joint.child in parent_joint:
            raise URDFError(
                f"{source}: link '{joint.child}' is the child of two joints, "
                f"'{parent_joint[joint.child]}' and '{joint.name}' (closed loops are not supported)"
            )
        parent_joint[joint.child] = joint.name

    roots = [link for link in links if link not in parent_joint]
    if not roots:
        raise URDFError(f"{source}: every link has a parent joint, so the joints form a cycle")
    if len(roots) > 1:
        raise URDFError(
            f"{source}: several root links {roots}; exactly one link must have no parent joint"
        )
    # With one root and one parent per link, a link is unreachable only if it sits on a cycle.
    children: dict[str, list[str]] = {}
    for joint in joints:
        children.setdefault(joint.parent, []).append(joint.child)
    reached, stack = {roots[0]}, [roots[0]]
    while stack:
        for child in children.get(stack.pop(), []):
            reached.add(child)
            stack.append(child)
    cut_off = [link for link in links if link not in reached]
    if cut_off:
        loop = [parent_joint[link] for link in cut_off]
        raise URDFError(f"{source}: joints {loop} form a cycle through links {cut_off}")
    return roots[0]


def _check_mimics(joints: tuple[UrdfJoint, ...], source: str) -> None:
    by_name = {joint.name: joint for joint in joints}
    for joint in joints:
        if joint.mimic is None:
            continue
        where = f"{source}: joint '{joint.name}'"
        if joint.type == "fixed":  # a fixed joint stays fixed (as urdfdom does): its <mimic> is ignored
            continue
        if joint.type not in ONE_DOF_JOINT_TYPES:
            raise URDFError(
                f"{where} of type '{joint.type}' has a <mimic>; only {', '.join(ONE_DOF_JOINT_TYPES)} "
                "joints can mimic"
            )
        leader = by_name.get(joint.mimic.leader)
        if leader is None:
            valid = [j.name for j in joints if j.type in ONE_DOF_JOINT_TYPES and j is not joint]
            raise URDFError(
                f"{where} mimics joint '{joint.mimic.leader}', which is not in the robot"
                f"{suggest(joint.mimic.leader, valid)}; one-DoF joints: {valid}"
            )
        if leader.type not in ONE_DOF_JOINT_TYPES:
            raise URDFError(
                f"{where} mimics joint '{leader.name}' of type '{leader.type}'; "
                f"a mimic leader must be {', '.join(ONE_DOF_JOINT_TYPES)}"
            )
    for joint in joints:  # a leader may itself mimic: the chains must end
        chain = [joint.name]
        while (mimic := by_name[chain[-1]].mimic) is not None:
            if mimic.leader in chain:
                raise URDFError(f"{source}: the mimic chain {[*chain, mimic.leader]} is a cycle")
            chain.append(mimic.leader)

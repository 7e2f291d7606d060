"""The Pinocchio layer's own URDF checks, before and after Pinocchio parses a file (stdlib only).

Pinocchio (through urdfdom) accepts some URDFs it then gets wrong without a word (joints on a
cycle silently dropped, a floating joint's <mimic> ignored, an inertial block with a bad number
read as zero mass) and rejects others with multi-line C++ messages that name no element. So:

* :mod:`reljac.urdf_files` reads the file itself (FIFOs, symbolic-link loops, folders and
  unreadable paths get their own message; nothing is handed to C++ by path) and parses its XML;
* :func:`check_urdf` checks the XML first (names, joint types, numbers, limits, the tree, the mimic
  graph, inertial and geometry elements), each failure one line naming the element;
* :func:`check_loaded` compares Pinocchio's model with the file afterwards (nothing dropped);
* :mod:`reljac.loading` calls Pinocchio with its printing captured (never on the terminal).

The in-house reference (:mod:`reljac.reference`) has its own parser and checks; this module does
not use them (the two layers stay independent).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from .exceptions import URDFError, suggest

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
ONE_DOF = ("revolute", "continuous", "prismatic")
WORLD_JOINT = "universe"  # Pinocchio's name for the world joint and frame
#: Largest |number| in origins, axes, shapes, inertials and mimics (limits excepted): products of
#: three such numbers stay finite (reljac.robot.MAX_COORDINATE bounds q and v the same way).
MAX_NUMBER = 1e100

MIN_AXIS = 1e-100  # the largest entry of a joint axis at least this: Pinocchio normalizes by its squared norm


# ----------------------------------------------------------------------------- the file's structure
@dataclass(frozen=True)
class Joint:
    name: str
    type: str
    parent: str
    child: str
    leader: str | None  # the <mimic joint=...>, if any
    multiplier: float = 1.0  # the <mimic multiplier=...>


@dataclass(frozen=True)
class Urdf:
    """What the checks learned from a URDF: links and joints in document order, the root link."""

    name: str
    links: tuple[str, ...]
    joints: tuple[Joint, ...]
    root: str
    xml: ET.Element


def check_urdf(root: ET.Element, source: str, *, mimic: bool = True, floating_base: bool = False) -> Urdf:
    """Check a <robot> element as the Pinocchio layer will load it; URDFError at the first problem.

    `mimic` as for :meth:`reljac.Robot.from_urdf`: with False, <mimic> elements are only checked
    for well-formed numbers (Pinocchio then ignores them).
    """
    where = f"URDF {source}"
    if not root.get("name"):
        raise URDFError(f"{where}: <robot> has no name attribute")
    links: dict[str, ET.Element] = {}
    for element in root.findall("link"):
        name = element.get("name")
        if not name:
            raise URDFError(f"{where}: a <link> has no name attribute")
        if name in links:
            raise URDFError(f"{where}: link '{name}' is defined twice")
        links[name] = element
        _check_inertial(element, f"{where}: link '{name}'")
        _check_shapes(element, f"{where}: link '{name}'")
    if not links:
        raise URDFError(f"{where}: the robot has no <link>")
    joints = [_check_joint(element, where, links) for element in root.findall("joint")]
    names: set[str] = set()
    for joint in joints:
        if joint.name in names:
            raise URDFError(f"{where}: joint '{joint.name}' is defined twice")
        names.add(joint.name)
        if joint.name == WORLD_JOINT or (floating_base and joint.name == "root_joint"):
            raise URDFError(f"{where}: joint name '{joint.name}' is reserved for the joint Pinocchio adds "
                            + ("above the root (floating_base=True)" if joint.name != WORLD_JOINT else "as the world"))
    robot_root = _check_tree(tuple(links), joints, where)
    urdf = Urdf(root.get("name", ""), tuple(links), tuple(joints), robot_root, root)
    if mimic:
        _check_mimic_graph(urdf, where)
    return urdf


def _number(element: ET.Element, attribute: str, where: str, default: float | None = None, *,
            minimum: float | None = None, largest: float = MAX_NUMBER) -> float:
    text = element.get(attribute)
    if text is None:
        if default is None:
            raise URDFError(f"{where}: <{element.tag}> has no {attribute} attribute")
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and abs(value) <= largest):
        raise URDFError(f"{where}: <{element.tag} {attribute}={text!r}> must be a finite number"
                        + (f" with |x| <= {largest:g}" if largest < math.inf else ""))
    if minimum is not None and value < minimum:
        raise URDFError(f"{where}: <{element.tag} {attribute}={text!r}> must be >= {minimum:g}")
    return value


def _numbers(element: ET.Element | None, attribute: str, where: str, *, required: bool = False,
             minimum: float | None = None) -> tuple[float, ...] | None:
    """3 finite numbers from an attribute ("x y z"), each |x| <= MAX_NUMBER."""
    text = None if element is None else element.get(attribute)
    if element is None or text is None:
        if required:
            tag = "?" if element is None else element.tag
            raise URDFError(f"{where}: <{tag}> has no {attribute} attribute")
        return None
    try:
        values = tuple(float(word) for word in text.split())
    except ValueError:
        values = ()
    if len(values) != 3 or not all(abs(v) <= MAX_NUMBER for v in values):
        raise URDFError(f"{where}: <{element.tag} {attribute}={text!r}> must be 3 finite numbers "
                        f"with |x| <= {MAX_NUMBER:g}")
    if minimum is not None and min(values) < minimum:
        raise URDFError(f"{where}: <{element.tag} {attribute}={text!r}> must be >= {minimum:g}")
    return values


def _check_origin(element: ET.Element, where: str) -> None:
    origin = element.find("origin")
    _numbers(origin, "xyz", where)
    _numbers(origin, "rpy", where)


def _check_inertial(link: ET.Element, where: str) -> None:
    inertial = link.find("inertial")
    if inertial is None:
        return
    _check_origin(inertial, f"{where} <inertial>")
    mass, inertia = inertial.find("mass"), inertial.find("inertia")
    if mass is None or inertia is None:
        raise URDFError(f"{where}: <inertial> needs a <mass value> and an <inertia ixx ... izz>")
    _number(mass, "value", f"{where} <inertial>", minimum=0.0)
    for attribute in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
        _number(inertia, attribute, f"{where} <inertial>")


def _check_shapes(link: ET.Element, where: str) -> None:
    for tag in ("visual", "collision"):
        for index, element in enumerate(link.findall(tag)):
            here = f"{where} <{tag}> #{index + 1}"
            _check_origin(element, here)
            geometry = element.find("geometry")
            shapes = [] if geometry is None else list(geometry)
            if not shapes:
                raise URDFError(f"{here} has no <geometry> shape (box, cylinder, sphere or mesh)")
            shape = shapes[0]
            if shape.tag == "box":
                _numbers(shape, "size", here, required=True, minimum=0.0)
            elif shape.tag == "cylinder":
                _number(shape, "radius", here, minimum=0.0)
                _number(shape, "length", here, minimum=0.0)
            elif shape.tag == "sphere":
                _number(shape, "radius", here, minimum=0.0)
            elif shape.tag == "mesh":
                if not shape.get("filename"):
                    raise URDFError(f"{here} has a <mesh> without a filename")
                _numbers(shape, "scale", here)
            else:
                raise URDFError(f"{here} has shape <{shape.tag}>; URDF shapes are box, cylinder, sphere and mesh")


def _along_z(axis: tuple[float, ...]) -> bool:
    """The axis is +z (to 1e-9 once normalized)."""
    norm = math.sqrt(sum(a * a for a in axis))
    return abs(axis[0]) <= 1e-9 * norm and abs(axis[1]) <= 1e-9 * norm and axis[2] > 0


def _check_joint(element: ET.Element, where: str, links: dict[str, ET.Element]) -> Joint:
    name = element.get("name")
    if not name:
        raise URDFError(f"{where}: a <joint> has no name attribute")
    here = f"{where}: joint '{name}'"
    kind = element.get("type")
    if kind not in JOINT_TYPES:
        raise URDFError(f"{here} has type {kind!r}; URDF joint types are {', '.join(JOINT_TYPES)}")
    ends = []
    for tag in ("parent", "child"):
        sub = element.find(tag)
        link = sub.get("link") if sub is not None else None
        if not link:
            raise URDFError(f"{here} has no <{tag} link=...>")
        if link not in links:
            raise URDFError(f"{here} has {tag} link '{link}', which is not a <link>{suggest(link, links)}")
        ends.append(link)
    if ends[0] == ends[1]:
        raise URDFError(f"{here} connects link '{ends[0]}' to itself")
    _check_origin(element, here)
    if kind in ONE_DOF or kind == "planar":
        axis = _numbers(element.find("axis"), "xyz", here, required=element.find("axis") is not None)
        if axis is not None and not any(axis):
            raise URDFError(f"{here} has <axis xyz=\"0 0 0\">; the axis must be a non-zero 3-vector")
        if axis is not None and max(abs(a) for a in axis) < MIN_AXIS:  # its squared norm underflows in Pinocchio
            raise URDFError(f"{here} has <axis xyz=\"{' '.join(f'{a:g}' for a in axis)}\">, too small to normalize "
                            f"(each entry below {MIN_AXIS:g}); give the axis as a unit vector")
        if kind == "planar" and axis is not None and not _along_z(axis):  # Pinocchio reads no planar axis
            raise URDFError(f"{here} is planar with <axis xyz=\"{' '.join(f'{a:g}' for a in axis)}\">; Pinocchio "
                            "moves a planar joint in its frame's x-y plane (normal +z) whatever the axis: give "
                            "axis 0 0 1 and turn the joint's <origin> so that z is the plane's normal")
    limit = element.find("limit")
    if limit is None and kind in ("revolute", "prismatic"):
        raise URDFError(f"{here} of type {kind} has no <limit>; the URDF format requires "
                        "<limit lower upper effort velocity> for revolute and prismatic joints")
    if limit is not None:
        lower = _number(limit, "lower", here, 0.0, largest=math.inf)  # limits: any finite number
        upper = _number(limit, "upper", here, 0.0, largest=math.inf)
        _number(limit, "effort", here, minimum=0.0, largest=math.inf)
        _number(limit, "velocity", here, minimum=0.0, largest=math.inf)
        if kind in ("revolute", "prismatic") and lower > upper:
            raise URDFError(f"{here} has lower limit {lower:g} > upper limit {upper:g}")
    dynamics = element.find("dynamics")
    if dynamics is not None:
        _number(dynamics, "damping", here, 0.0)
        _number(dynamics, "friction", here, 0.0)
    leader = None
    multiplier = 1.0
    mimic = element.find("mimic")
    if mimic is not None:
        leader = mimic.get("joint")
        if not leader:
            raise URDFError(f"{here} has a <mimic> without a joint attribute")
        multiplier = _number(mimic, "multiplier", here, 1.0)
        if multiplier == 0:  # -0.0 too
            raise URDFError(f"{here} has <mimic multiplier={mimic.get('multiplier')!r}>: a mimic joint that follows "
                            f"its leader times 0 never moves; make it a fixed joint (reljac refuses multiplier 0)")
        _number(mimic, "offset", here, 0.0)
    return Joint(name, kind, ends[0], ends[1], leader, multiplier)


def _check_tree(links: tuple[str, ...], joints: list[Joint], where: str) -> str:
    """One parent per link, one root, every link reachable from it (no cycle); returns the root."""
    parent_joint: dict[str, Joint] = {}
    for joint in joints:
        if joint.child in parent_joint:
            raise URDFError(f"{where}: link '{joint.child}' is the child of two joints, "
                            f"'{parent_joint[joint.child].name}' and '{joint.name}' (a URDF is a tree)")
        parent_joint[joint.child] = joint
    roots = [link for link in links if link not in parent_joint]
    if len(roots) > 1:
        shown_roots = ", ".join(f"'{r}'" for r in roots[:5]) + (" ..." if len(roots) > 5 else "")
        raise URDFError(f"{where}: {len(roots)} links have no parent joint ({shown_roots}); "
                        "a URDF has exactly one root link")
    reached = _reachable(roots[0] if roots else None, joints)
    for link in links:
        if link not in reached:  # it hangs below a cycle: walk up until a link repeats
            path: list[str] = []
            while link not in path:
                path.append(link)
                link = parent_joint[link].parent
            cycle = path[path.index(link):][::-1]  # parent -> child order
            names = ", ".join(f"'{parent_joint[c].name}'" for c in cycle)
            links_text = " -> ".join(f"'{c}'" for c in cycle + cycle[:1])
            raise URDFError(f"{where}: joints {names} form a cycle through links {links_text}; a URDF is a tree")
    return roots[0]


def _reachable(root: str | None, joints: list[Joint]) -> set[str]:
    children: dict[str, list[str]] = {}
    for joint in joints:
        children.setdefault(joint.parent, []).append(joint.child)
    reached, stack = set(), [root] if root is not None else []
    while stack:
        link = stack.pop()
        reached.add(link)
        stack.extend(children.get(link, ()))
    return reached


def pinocchio_order(urdf: Urdf) -> list[Joint]:
    """Joints in the order Pinocchio adds them: depth first from the root, sibling joints sorted
    by name (urdfdom keeps joints in a name-sorted map)."""
    children: dict[str, list[Joint]] = {}
    for joint in urdf.joints:
        children.setdefault(joint.parent, []).append(joint)
    order: list[Joint] = []
    stack = sorted(children.get(urdf.root, []), key=lambda j: j.name.encode(), reverse=True)
    while stack:
        joint = stack.pop()
        order.append(joint)
        stack.extend(sorted(children.get(joint.child, []), key=lambda j: j.name.encode(), reverse=True))
    return order


def _check_mimic_graph(urdf: Urdf, where: str) -> None:
    """Mimics Pinocchio couples: 1-DoF followers of 1-DoF leaders of the same kind, no chains,
    each leader added before its followers."""
    by_name = {joint.name: joint for joint in urdf.joints}
    hint = "; load it with mimic=False (--no-mimic) to make the followers independent joints"
    position = {joint.name: i for i, joint in enumerate(pinocchio_order(urdf))}
    for joint in urdf.joints:
        if joint.leader is None or joint.type == "fixed":  # a fixed joint stays fixed
            continue
        here = f"{where}: joint '{joint.name}'"
        if joint.type not in ONE_DOF:
            raise URDFError(f"{here} of type {joint.type} has a <mimic>; only revolute, continuous and "
                            "prismatic joints can mimic")
        leader = by_name.get(joint.leader)
        if leader is None:
            valid = [j.name for j in urdf.joints if j.type in ONE_DOF and j is not joint]
            raise URDFError(f"{here} mimics joint '{joint.leader}', which is not in the robot"
                            f"{suggest(joint.leader, valid)}")
        if leader is joint:
            raise URDFError(f"{here} mimics itself")
        if leader.type not in ONE_DOF:
            raise URDFError(f"{here} mimics joint '{leader.name}' of type {leader.type}; a mimic leader "
                            "must be revolute, continuous or prismatic")
        if (leader.type == "continuous") != (joint.type == "continuous"):
            raise URDFError(f"{here} ({joint.type}) mimics '{leader.name}' ({leader.type}); Pinocchio couples "
                            f"a continuous joint only with a continuous one{hint}")
        if joint.type == "continuous" and joint.multiplier != round(joint.multiplier):
            raise URDFError(f"{here} (continuous) mimics '{leader.name}' with multiplier {joint.multiplier:g}; "
                            "Pinocchio reads the leader's angle in (-pi, pi], so a multiplier that is not a whole "
                            f"number makes the follower jump where the leader passes pi{hint}")
        if leader.leader is not None and leader.type != "fixed":
            raise URDFError(f"{here} mimics '{leader.name}', which itself mimics '{leader.leader}'; Pinocchio "
                            f"cannot chain mimic joints (make both mimic the first leader){hint}")
        if position[leader.name] > position[joint.name]:
            raise URDFError(f"{here} mimics '{leader.name}', which Pinocchio adds after it (depth first, "
                            f"sibling branches in joint-name order; a leader must come first){hint}")


# ----------------------------------------------------------------------------- after Pinocchio
def check_loaded(urdf: Urdf, joint_names: list[str], frames: list[tuple[str, str]], source: str, *,
                 floating_base: bool) -> None:
    """Pinocchio's model has every joint and link of the file, and nothing else.

    joint_names: the model's joints without the world joint; frames: (name, type) of every frame,
    type one of "BODY", "JOINT", "FIXED_JOINT", ...
    """
    expected = {j.name for j in urdf.joints if j.type != "fixed"} | ({"root_joint"} if floating_base else set())
    got = set(joint_names)
    bodies = {name for name, kind in frames if kind == "BODY"}
    fixed = {name for name, kind in frames if kind == "FIXED_JOINT"}
    missing = sorted(expected - got) + sorted(set(urdf.links) - bodies) \
        + sorted({j.name for j in urdf.joints if j.type == "fixed"} - fixed)
    extra = sorted(got - expected)
    if missing or extra or len(joint_names) != len(expected):
        raise URDFError(f"URDF {source}: Pinocchio's model does not match the file (missing: "
                        f"{missing[:8] or 'none'}; unexpected: {extra[:8] or 'none'}); reljac refuses "
                        "a model that dropped part of the robot")

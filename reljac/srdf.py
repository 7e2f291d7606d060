"""SRDF files: the collision pairs they disable and their named configurations (stdlib XML only).

An SRDF (MoveIt's Semantic Robot Description Format) sits beside a URDF. reljac reads:

* ``<disable_collisions link1="a" link2="b" reason="Adjacent"/>``: the pair (a, b) is never
  checked;
* ``<disable_default_collisions link="a"/>``: no pair with a is checked, except those an
  ``<enable_collisions link1 link2/>`` names again;
* ``<group_state name group><joint name value/>...</group_state>``: named configurations, as
  joint name -> value [rad or m], a tuple for joints with several values (a floating base's
  x y z qx qy qz qw); read, not checked against the robot's joints.

Every link named must be a link of the robot (a URDF ``<link>``); an unknown one is an error that
names it, so that an SRDF written for another robot, or another version of it, is noticed.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from .exceptions import SRDFError, suggest
from .files import regular_file


@dataclass(frozen=True)
class DisabledPair:
    """A pair of links an SRDF takes out of collision checking, with the SRDF's reason."""

    link1: str
    link2: str
    reason: str


@dataclass(frozen=True)
class SRDF:
    """What reljac reads from an SRDF file.

    Attributes:
        path: the file.
        robot_name: the ``<robot name>`` of the SRDF ('' if absent).
        disabled: pairs disabled by ``<disable_collisions>``, in file order.
        disabled_links: links every pair of which is disabled (``<disable_default_collisions>``).
        enabled: pairs re-enabled by ``<enable_collisions>`` (they win over ``disabled_links``).
        group_states: ``{state name: {joint name: value}}`` from ``<group_state>`` elements;
            ``state_groups`` maps each state name to its group. States of one name in several
            groups (MoveIt's "home" of each arm) are one state holding every group's joints, its
            groups joined by ", "; a joint given two different values is an SRDFError.
    """

    path: Path
    robot_name: str = ""
    disabled: tuple[DisabledPair, ...] = ()
    disabled_links: tuple[str, ...] = ()
    enabled: tuple[tuple[str, str], ...] = ()
    group_states: dict[str, dict[str, float | tuple[float, ...]]] = field(default_factory=dict)
    state_groups: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        """One short line (the dataclass's would list every pair: thousands of characters)."""
        name = f" of robot '{self.robot_name}'" if self.robot_name else ""
        states = ", ".join(self.group_states)
        states = states if len(states) <= 60 else states[:57] + "..."
        return (f"SRDF('{self.path}'{name}: {len(self.disabled)} disabled pairs, {len(self.disabled_links)} "
                f"disabled links, {len(self.enabled)} enabled pairs, {len(self.group_states)} named "
                f"configurations{f' ({states})' if states else ''})")

    def restricted(self, links: Iterable[str], joints: Iterable[str]) -> SRDF:
        """This SRDF without what it says about links not in `links` and joints not in `joints`
        (for an SRDF shared by variants of a robot, as example-robot-data's loader reads them)."""
        links, joints = set(links), set(joints)
        return replace(
            self,
            disabled=tuple(p for p in self.disabled if p.link1 in links and p.link2 in links),
            disabled_links=tuple(link for link in self.disabled_links if link in links),
            enabled=tuple(p for p in self.enabled if p[0] in links and p[1] in links),
            group_states={name: {j: v for j, v in state.items() if j in joints}
                          for name, state in self.group_states.items()})

    @cached_property
    def _lookup(self) -> tuple[dict[frozenset, str], set[frozenset], set[str]]:
        reasons = {frozenset((p.link1, p.link2)): p.reason or "disabled" for p in self.disabled}
        return reasons, {frozenset(p) for p in self.enabled}, set(self.disabled_links)

    def is_disabled(self, link1: str, link2: str) -> str | None:
        """The SRDF's reason why the pair (link1, link2) is not checked, or None if it is."""
        reasons, enabled, links = self._lookup
        key = frozenset((link1, link2))
        if key in enabled:
            return None
        if key in reasons:
            return reasons[key]
        for link in (link1, link2):
            if link in links:
                return f"default collisions of '{link}' disabled"
        return None


def _attribute(element: ET.Element, key: str, path: Path) -> str:
    value = element.get(key)
    if value is None or not value.strip():
        raise SRDFError(f"SRDF '{path}': a <{element.tag}> element has no '{key}' attribute")
    return value.strip()


def read_srdf(path: str | os.PathLike, links: Iterable[str] | None = None) -> SRDF:
    """Read an SRDF file.

    Args:
        path: the SRDF file.
        links: the robot's link names; when given, every link the SRDF names must be one of them.

    Raises:
        SRDFError: missing or unreadable file, malformed XML, a root other than <robot>, an
            element without its link attribute, a non-numeric joint value, or an unknown link
            (named, with near matches).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise SRDFError(f"an SRDF path must be a string or a path, not {type(path).__name__}")
    regular_file(path, "SRDF file", SRDFError, article="an")  # missing, a FIFO, a link loop, ...: named
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise SRDFError(f"SRDF file '{path}' is not well-formed XML: {exc}") from None
    except (OSError, UnicodeError) as exc:
        raise SRDFError(f"SRDF file '{path}' cannot be read: {exc}") from None
    if root.tag != "robot":
        raise SRDFError(f"SRDF file '{path}' has root element <{root.tag}>, expected <robot>")

    disabled = tuple(
        DisabledPair(_attribute(e, "link1", path), _attribute(e, "link2", path), (e.get("reason") or "").strip())
        for e in root.iter("disable_collisions")
    )
    disabled_links = tuple(_attribute(e, "link", path) for e in root.iter("disable_default_collisions"))
    enabled = tuple((_attribute(e, "link1", path), _attribute(e, "link2", path))
                    for e in root.iter("enable_collisions"))
    states: dict[str, dict[str, float | tuple[float, ...]]] = {}
    groups: dict[str, str] = {}
    for e in root.iter("group_state"):
        name = _attribute(e, "name", path)
        group = (e.get("group") or "").strip()
        values = states.setdefault(name, {})  # (a state of this name in another group: merged)
        for joint in e.iter("joint"):
            joint_name = _attribute(joint, "name", path)
            text = _attribute(joint, "value", path)
            try:
                numbers = tuple(float(x) for x in text.split())
            except ValueError:
                numbers = (math.nan,)
            if not all(math.isfinite(x) for x in numbers):
                raise SRDFError(f"SRDF '{path}': group_state '{name}' gives joint '{joint_name}' "
                                f"the value {text!r}; expected finite numbers")
            value = numbers[0] if len(numbers) == 1 else numbers
            if joint_name in values and values[joint_name] != value:
                raise SRDFError(f"SRDF '{path}': group_state '{name}' gives joint '{joint_name}' two values, "
                                f"{values[joint_name]!r} and {value!r} (groups {groups.get(name) or group!r}); give "
                                "each joint one value per state")
            values[joint_name] = value
        groups[name] = group if name not in groups or groups[name] in ("", group) else f"{groups[name]}, {group}"

    srdf = SRDF(path, (root.get("name") or "").strip(), disabled, disabled_links, enabled, states, groups)
    if links is not None:
        _check_links(srdf, set(links))
    return srdf


def _check_links(srdf: SRDF, links: set[str]) -> None:
    named = [(p.link1, "disable_collisions") for p in srdf.disabled]
    named += [(p.link2, "disable_collisions") for p in srdf.disabled]
    named += [(link, "disable_default_collisions") for link in srdf.disabled_links]
    named += [(link, "enable_collisions") for pair in srdf.enabled for link in pair]
    unknown = sorted({(link, tag) for link, tag in named if link not in links})
    if unknown:
        link, tag = unknown[0]
        others = sorted({u for u, _ in unknown} - {link})
        more = f" (also unknown: {', '.join(others[:5])}{', ...' if len(others) > 5 else ''})" if others else ""
        robot = f" (SRDF robot name '{srdf.robot_name}')" if srdf.robot_name else ""
        raise SRDFError(
            f"SRDF '{srdf.path}'{robot}: <{tag}> names link '{link}', which the robot does not "
            f"have{suggest(link, links)}{more}; is this SRDF written for another robot?"
        )

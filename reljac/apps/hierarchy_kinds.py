"""A ``[[task]]`` table of a hierarchy file for any registered kind (:mod:`reljac.ik.kinds`) that
has no reader of its own in :mod:`reljac.apps.hierarchy_tasks`: its keys are its constructor's
parameters, read by their annotations (a frame, a number, numbers, text, a flag, a list of
contacts), beside the keys every task has (level, type, name, gain, weight, max_speed) and, where
the kind takes them, ``lower`` / ``upper`` bounds and a ``target`` (default: the value at the
start configuration, ``set_target_from_configuration``). A limit (collision avoidance, the
support region) is put in its level as its task (``as_task``: gain [1/s], weight, max_speed).
"""

from __future__ import annotations

import inspect
from typing import Any

from ..exceptions import ConfigurationError
from ..ik import Limit, SupportRegion, Task
from ..ik.kinds import kinds
from ..relative import Kinematics
from ..robot import Robot
from ..support import SupportContact
from .hierarchy_values import number, number_array, table, text, unknown_keys, within

#: constructor parameters never read from a file (the robot; a collision model object)
NOT_IN_FILES = {"self", "robot", "model"}


def file_kinds(custom: dict[str, Any]) -> dict[str, type]:
    """{type: class} of the registered kinds a hierarchy file can put in a level, but those with a
    reader in `custom` (tasks, and limits that become a level's task)."""
    return {key: cls for key, cls in kinds().items() if key not in custom and
            (issubclass(cls, Task) or (issubclass(cls, Limit) and hasattr(cls, "as_task")))}


def limits_no_level_holds() -> set[str]:
    """The registered limit kinds a level cannot hold (no ``as_task``): the controller's own."""
    return {key for key, cls in kinds().items() if issubclass(cls, Limit) and not hasattr(cls, "as_task")}


def parameters(cls: type) -> dict[str, inspect.Parameter]:
    """The constructor's parameters a file can give, by name (a limit's own gain is its task's)."""
    out = {name: p for name, p in inspect.signature(cls).parameters.items()
           if name not in NOT_IN_FILES and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    if issubclass(cls, Limit):
        out.pop("gain", None)  # (a limit's gain is a fraction per step; the file's is its task's [1/s])
    for common in ("gain", "weight", "max_speed", "name"):
        out.pop(common, None)
    return out


def takes_bounds(cls: type) -> bool:
    """A task whose bounds a file may set (its own set_bounds not overridden to refuse them)."""
    return issubclass(cls, Task) and cls.set_bounds is Task.set_bounds


def takes_target(cls: type) -> bool:
    return issubclass(cls, Task) and callable(getattr(cls, "set_target", None))


def keys(cls: type) -> tuple[str, ...]:
    """The keys of a table of this kind, but the common ones."""
    return (*parameters(cls), *(("lower", "upper") if takes_bounds(cls) else ()),
            *(("target",) if takes_target(cls) else ()))


def _value(robot: Robot, p: inspect.Parameter, value: Any, where: str) -> Any:
    """A file's value for constructor parameter `p`, by its annotation."""
    note = str(p.annotation)
    what = p.name
    if "FrameRef" in note:
        name = text(value, where, what)
        within(where, lambda: robot.frame_id(name))
        return name
    if note in ("float", "int"):
        return number(value, where, what)
    if note == "bool":
        if not isinstance(value, bool):
            raise ConfigurationError(f"{where}: {what} must be true or false, got {value!r}")
        return value
    if note == "str":
        return text(value, where, what)
    if "SupportContact" in note:
        return [_contact(item, f"{where} {what}[{i}]") for i, item in enumerate(value if isinstance(value, list)
                                                                                    else [value])]
    if "ArrayLike" in note:
        return number_array(value, where, what)
    return value  # (Any: the constructor checks it)


def _contact(item: Any, where: str) -> SupportContact:
    """A contact from {frame, length, width[, center]} (a rectangle) or {frame, points}."""
    spec = table(item, where, "a contact ({frame, length, width} or {frame, points})")
    unknown_keys(spec, ("frame", "points") if "points" in spec else ("frame", "length", "width", "center"), where)
    frame = text(spec.get("frame"), where, "frame")
    if "points" in spec:
        points = number_array(spec["points"], where, "points")
        return within(where, lambda: SupportContact(frame, points))
    center = spec.get("center", [0.0, 0.0, 0.0])
    return within(where, lambda: SupportContact.rectangle(frame, number(spec.get("length"), where, "length [m]"),
                                                          number(spec.get("width"), where, "width [m]"), center))


def read_kind(robot: Robot, cls: type, spec: dict, where: str, options: dict[str, Any], kin: Kinematics) -> Task:
    """The task of a table of kind `cls` (keys checked by the caller), its target and bounds set."""
    given: dict[str, Any] = {}
    positional: list[Any] = []
    for name, p in parameters(cls).items():
        if name in spec:
            given[name] = _value(robot, p, spec[name], where)
        elif p.default is p.empty:
            raise ConfigurationError(f"{where}: a {spec['type']} task needs {name}")
    for name, p in inspect.signature(cls).parameters.items():
        if name == "robot":
            positional.append(robot)
        elif p.kind is p.POSITIONAL_OR_KEYWORD and name in given:
            positional.append(given.pop(name))
        elif p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty:
            break
    if issubclass(cls, Limit):
        limit = within(where, lambda: cls(*positional, **given))
        if isinstance(limit, SupportRegion):  # its polygon at the start (an error naming the task, not the file)
            within(where, lambda: limit.polygon(kin).shrunk(limit.margin))
        return within(where, lambda: limit.as_task(**options))  # type: ignore[attr-defined]
    task: Any = within(where, lambda: cls(*positional, **given, **options))
    if "target" in spec:
        target = number_array(spec["target"], where, "target")
        within(where, lambda: task.set_target(target))
    elif takes_target(cls) and hasattr(task, "set_target_from_configuration"):
        method = task.set_target_from_configuration  # (q) or (robot, q)
        two = len(inspect.signature(method).parameters) == 2
        within(where, lambda: method(robot, kin.q) if two else method(kin.q))
    elif takes_target(cls):
        raise ConfigurationError(f"{where}: a {spec['type']} task needs target")
    return task


__all__ = ["file_kinds", "keys", "limits_no_level_holds", "read_kind", "takes_bounds"]

"""Exceptions raised by reljac, and nothing else.

Every error a user can trigger with bad input is a :class:`ReljacError`; the ones about a *value*
(a name, an array, a file's content) are also :class:`ValueError` so generic handlers catch them.
Which class a mistake raises is ruled in :mod:`reljac.validation`.
This module imports nothing heavy so that every layer (including the pure-numpy reference) can
use it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ReljacError(Exception):
    """Base class of every error raised on purpose by reljac.

    Its message is one line: line breaks (from the repr of an array, say) are joined by spaces.
    """

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str) and "\n" in args[0]:
            args = (" ".join(part.strip() for part in args[0].splitlines() if part.strip()),)
        super().__init__(*args)


class URDFError(ReljacError, ValueError):
    """A URDF file is missing, is not well-formed XML, or describes something unsupported."""


class FrameNotFound(ReljacError, ValueError):
    """A frame name or id is not in the robot."""


class JointNotFound(ReljacError, ValueError):
    """A joint name is not in the robot (or names a joint without its own degree of freedom)."""


class ConfigurationError(ReljacError, ValueError):
    """A configuration q, a velocity v or another joint-space array has a wrong shape or value, or
    a setting of what moves or shows the robot (a controller, its limits, a viewer) is wrong."""


class TaskError(ReljacError, ValueError):
    """What is asked of the robot is ill-formed: a task, cost or target (wrong shape, NaN,
    non-unit rotation, unknown option) or a parameter of a solve or an analysis (tol, samples)."""


class UnsupportedJoint(ReljacError, ValueError):
    """A joint type a part of reljac does not handle (the capability maps' sampler names it)."""


class MapError(ReljacError, ValueError):
    """A capability map's parameters or file are wrong (voxel, samples, directions, format)."""


class SchedulerError(ReljacError):
    """A Dask scheduler cannot be used: Dask not installed, bad address, or no answer in time."""


class SchedulerAddressError(SchedulerError, ValueError):
    """A scheduler address that is not one: a value, so also a ValueError."""


class ModelTooLarge(ReljacError, MemoryError):
    """A model whose Pinocchio data (about 64 nv^3 bytes) does not fit in the memory available."""


class CollisionError(ReljacError, ValueError):
    """Collision geometry, a collision pair, an obstacle or a distance bound is wrong or missing."""


class SRDFError(ReljacError, ValueError):
    """An SRDF file is missing, is not well-formed XML, or names links the robot does not have."""


class SupportError(ReljacError, ValueError):
    """A support region cannot be formed: contact points that span no area, a margin that leaves
    nothing of the region, or a robot without mass (no centre of mass)."""


class RequestError(ReljacError, ValueError):
    """A message of the debug page (or a request to a ``Debugger``) is malformed: an unknown kind,
    a field of the wrong type or out of range (answered on the page; the debugger goes on)."""


class FixedAttribute(ReljacError, AttributeError):
    """An attribute a task or limit is built from (a position limit's limits, an avoidance task's
    limit) set again after it was made: make a new one instead."""


def suggest(name: str, valid: Iterable[str], *, limit: int = 3) -> str:
    """Return a '; did you mean ...?' hint for `name` among `valid` names ('' if none is close)."""
    valid = list(valid)
    close = difflib.get_close_matches(name, valid, n=limit, cutoff=0.6)
    if not close:
        lowered = name.lower()
        close = [v for v in valid if lowered and (lowered in v.lower() or v.lower() in lowered)][:limit]
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"


def caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether `exc` is, or was raised while handling or because of (at any depth), an exception
    of type `kind`: a Ctrl-C that an extension turned into an ImportError, a closed pipe under
    another error."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def prefixed(exc: ReljacError, where: str, *, separator: str = ": ") -> ReljacError:
    """`exc` with its message prefixed by `where` ("where: message"), of the same class (a
    ConfigurationError when that class takes other arguments): raise it ``from None``."""
    message = f"{where}{separator}{exc}"
    try:
        return type(exc)(message)
    except TypeError:
        return ConfigurationError(message)


class ReljacWarning(UserWarning):
    """Something works, but probably not as the user meant (e.g. collision avoidance starting with
    pairs below its minimum distance)."""

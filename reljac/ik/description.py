"""What a task or limit tells the compiled core: a :class:`Description`, the name of one of the
core's kinds and that kind's fields by name.

Every built-in task and limit answers ``description(robot)`` with one; the compiled step
(:mod:`reljac.ik.compiled_step`) runs what it describes in C++, and the Python classes'
``compute`` / ``rows`` / ``constraint`` remain the specification it is tested against. Each kind's
fields are written once, in C++ beside the kind (``src/core/task_*.cpp``, their schema); the core
lists them (``reljac.ik._core.kinds()``: names, types, docs), fills a description in by keyword
and refuses a missing or unknown field by name. A task or limit that answers None (the default,
and any subclass that overrides how its rows are computed without describing itself) runs in
Python every step, beside the compiled parts, on either backend.

Tasks and limits are :class:`Observable`: every public setter announces the change to the
controllers that use the object, which push the new description into their compiled step before
their next step. Frames are Pinocchio frame ids, arrays are copies (read-only).
"""

from __future__ import annotations

import weakref
from typing import Any, ClassVar

import numpy as np

from ..exceptions import FixedAttribute


class Observable:
    """An object whose changes the controllers using it hear about (:meth:`_changed`): a listener
    is any object with a method ``heard(changed)`` (a controller's compiled step; a task built on
    another, as a BallTask on its inner task)."""

    _version = 0

    def listen(self, listener: Any) -> None:
        """`listener.heard(self)` is called after each change (held weakly)."""
        listeners = self.__dict__.get("_listeners")
        if listeners is None:
            listeners = self.__dict__["_listeners"] = weakref.WeakSet()
        listeners.add(listener)

    def listened_by(self, listener: Any) -> bool:
        """True when `listener` hears this object's changes."""
        return listener in self.__dict__.get("_listeners", ())

    def drop_listeners(self) -> None:
        """From now on nothing hears this object's changes (a copy made to stand alone)."""
        self.__dict__.pop("_listeners", None)

    def _changed(self) -> None:
        self._version += 1
        for listener in list(self.__dict__.get("_listeners", ())):
            listener.heard(self)

    def __getstate__(self) -> dict:
        """What a copy or a pickle keeps: the object's state and the Observables built on it (a
        BallTask on its inner task: a deep copy of both still hears the inner copy), not the
        controllers that listen to it (a copy is heard by none; the original's controllers
        keep hearing the original only)."""
        state = self.__dict__.copy()
        listeners = state.pop("_listeners", None)
        built_on = [x for x in listeners or () if isinstance(x, Observable)]
        if built_on:
            state["_listeners"] = built_on
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        built_on = state.pop("_listeners", None)
        self.__dict__.update(state)
        for listener in built_on or ():
            self.listen(listener)


class FixedAttributes:
    """Attributes named in ``fixed_attributes`` are set once, by the constructor (what the rows
    and the compiled step are built from): setting one again raises AttributeError saying so,
    rather than changing the Python rows alone (:class:`~reljac.exceptions.FixedAttribute`, an
    AttributeError)."""

    fixed_attributes: ClassVar[frozenset[str]] = frozenset()

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.fixed_attributes and name in self.__dict__:
            kind = type(self).__name__
            raise FixedAttribute(f"{name} of a {kind} is fixed when it is made (the compiled step is built from it): "
                                 f"make a new {kind}")
        super().__setattr__(name, value)


def frozen(array: Any) -> np.ndarray:
    """A read-only float copy of `array`."""
    out = np.array(array, dtype=float)
    out.flags.writeable = False
    return out


class Description:
    """One kind's description: ``kind``, the name of the core's kind (``reljac.ik._core.kinds()``),
    and its fields by name (``fields``; each readable as an attribute too: ``d.target``). A field
    may hold another Description (a BallTask's inner task, a region task's limit)."""

    __slots__ = ("fields", "kind")

    def __init__(self, kind: str, /, **fields: Any) -> None:
        self.kind = kind
        self.fields = fields

    def __getattr__(self, name: str) -> Any:
        if name in Description.__slots__:  # (not yet set: unpickling, copying)
            raise AttributeError(name)
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(f"a {self.kind} has no field '{name}' (its fields: "
                                 f"{', '.join(self.fields)})") from None

    def __repr__(self) -> str:
        return f"Description({self.kind!r}, {', '.join(self.fields)})"


__all__ = ["Description", "Observable", "frozen"]

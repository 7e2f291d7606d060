"""Every kind of task and limit of :mod:`reljac.ik`, registered where it is defined.

A class registers itself with a keyword of its class statement, ``class ConeTask(Task,
kind="cone")`` (``Task.__init_subclass__``, ``Limit.__init_subclass__``); its key is its
``type`` in a hierarchy file (``reljac debug``). What reads the registry: hierarchy files (a kind
without a reader of its own is built from its constructor's parameters), the API reference's list
of kinds (``docs/_hooks``), and the tests that walk every kind (each compiled, each described to
the core field by field). A new kind is its class (with ``kind=``), its C++ file if compiled, and
its test: nothing else lists it.
"""

from __future__ import annotations

from typing import Any

_KINDS: dict[str, type] = {}


def register(key: str, cls: type) -> None:
    """Register `cls` under `key` (a class statement's ``kind=``; ValueError for a key taken)."""
    if not isinstance(key, str) or not key.isidentifier():
        raise ValueError(f"a kind's key must be an identifier, got {key!r} for {cls.__name__}")
    other = _KINDS.get(key)
    if other is not None and other.__qualname__ != cls.__qualname__:
        raise ValueError(f"kind {key!r} is {other.__module__}.{other.__qualname__}'s, not {cls.__name__}'s")
    _KINDS[key] = cls


def kinds() -> dict[str, Any]:
    """{key: class} of every registered task and limit kind, in registration order (a copy):
    the built-in ones once :mod:`reljac.ik` is imported (their modules register them)."""
    return dict(_KINDS)


def key_of(cls: type) -> str | None:
    """The key `cls` is registered under, or None."""
    return next((key for key, c in _KINDS.items() if c is cls), None)


__all__ = ["key_of", "kinds", "register"]

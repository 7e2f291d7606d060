"""The values of a hierarchy file (:mod:`reljac.apps.hierarchy_file`), checked one by one.

TOML gives strings, booleans, integers, floats, lists and tables; each reader here accepts only
what its key means (a number is never read from a string or a boolean) and raises
ConfigurationError whose one line starts with `where` (the file, and the task or table) and says
what is valid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

from ..exceptions import ConfigurationError, ReljacError, prefixed, suggest
from ..validation import is_real_number, short_repr

T = TypeVar("T")


def unknown_keys(keys: Iterable[Any], valid: Iterable[str], where: str) -> None:
    """ConfigurationError for the first key not in `valid` (with a suggestion)."""
    valid = set(valid)
    for key in keys:
        if key not in valid:
            hint = suggest(str(key), valid)
            raise ConfigurationError(f"{where}: unknown key {key!r}{hint} (valid: {', '.join(sorted(valid))})")


def table(value: Any, where: str, what: str) -> dict:
    """`value` as a TOML table, or ConfigurationError."""
    if not isinstance(value, dict):
        raise ConfigurationError(f"{where}: {what} must be a table, got {short_repr(value)}")
    return value


def _finite(x: Any) -> bool:
    """A real number (not a boolean) that is finite as a float (an integer beyond floats is not)."""
    try:
        return is_real_number(x) and bool(np.isfinite(float(x)))
    except OverflowError:
        return False


def number(value: Any, where: str, what: str, *, minimum: float | None = None, strict: bool = False) -> float:
    """A finite real number (not a boolean, not text), > or >= `minimum`."""
    bound = "" if minimum is None else f" {'>' if strict else '>='} {minimum:g}"
    if not _finite(value) or \
            (minimum is not None and (value <= minimum if strict else value < minimum)):
        raise ConfigurationError(f"{where}: {what} must be a finite number{bound}, got {short_repr(value)}")
    return float(value)


def numbers(value: Any, where: str, what: str, sizes: tuple[int, ...]) -> np.ndarray:
    """A list of finite real numbers (no text, booleans or nested lists) of one of `sizes`."""
    counts = " or ".join(str(n) for n in sizes)
    if not isinstance(value, list) or len(value) not in sizes or \
            not all(_finite(x) for x in value):
        raise ConfigurationError(f"{where}: {what} must be a list of {counts} finite numbers, got {short_repr(value)}")
    return np.array(value, dtype=float)


def number_array(value: Any, where: str, what: str) -> np.ndarray:
    """A finite real number, or (nested) lists of them of a rectangular shape (no text, booleans
    or ragged lists): a task's target, a contact's points, an array argument of a task kind."""
    def flat(x: Any) -> bool:
        return all(flat(y) for y in x) if isinstance(x, list) else _finite(x)

    array = None
    if flat(value):
        try:
            array = np.array(value, dtype=float)
        except ValueError:  # ragged nested lists
            array = None
    if array is None:
        raise ConfigurationError(f"{where}: {what} must be a finite number or a list (of lists) of finite numbers "
                                 f"of one shape, got {short_repr(value)}")
    return array


def number_or_numbers(value: Any, where: str, what: str, size: int, *, minimum: float = 0.0,
                      strict: bool = False) -> float | np.ndarray:
    """One number, or a list of `size` numbers, each >= (or > with `strict`) `minimum`."""
    if isinstance(value, list):
        values = numbers(value, where, f"{what} (one number or a list of {size})", (size,))
        if (values <= minimum).any() if strict else (values < minimum).any():
            raise ConfigurationError(f"{where}: every {what} must be {'>' if strict else '>='} {minimum:g}, "
                                     f"got {short_repr(value)}")
        return values
    return number(value, where, f"{what} (one number or a list of {size})", minimum=minimum, strict=strict)


def bound(value: Any, where: str, what: str, size: int, side: str, count: str = "") -> np.ndarray:
    """A `side` ("lower" or "upper") bound on a task's error: one number or a list of `size`,
    each a real number or TOML's ``-inf`` (lower) / ``inf`` (upper), which leaves that side of
    the component open; never NaN, text or a boolean. Returns (size,). `count` says the size
    in the message (default: the number)."""
    open_side = -np.inf if side == "lower" else np.inf
    valid = (f"{side} {what} must be one number or a list of {count or size}, each a finite number or "
             f"{'-inf' if side == 'lower' else 'inf'} (TOML's, without quotes) for an open side")

    def entry(x: Any) -> bool:
        return _finite(x) or (isinstance(x, float) and x == open_side)

    values = value if isinstance(value, list) else [value] * size
    if len(values) != size or not all(entry(x) for x in values):
        raise ConfigurationError(f"{where}: {valid}, got {short_repr(value)}")
    return np.array(values, dtype=float)


def text(value: Any, where: str, what: str) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{where}: {what} must be a non-empty string in quotes, got {short_repr(value)}")
    return value


def texts(value: Any, where: str, what: str) -> list[str]:
    """A string or a non-empty list of non-empty strings."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ConfigurationError(f"{where}: {what} must be a list of names in quotes, got {short_repr(value)}")
    return [text(v, where, f"each of {what}") for v in value]


def joint_value(value: Any, where: str, name: str) -> float | list[float]:
    """A joint's value in [start] or lock: a number [rad or m], or a list of them (a floating base)."""
    if isinstance(value, list):
        return list(numbers(value, where, f"joint {name!r}'s values", (len(value) or 1,)))
    return number(value, where, f"joint {name!r} [rad or m]")


def within(where: str, build: Callable[[], T]) -> T:
    """build(), with a reljac error's message prefixed by `where` (same class, one line)."""
    try:
        return build()
    except ReljacError as exc:
        if str(exc).startswith(where):  # already says where
            raise
        raise prefixed(exc, where) from None

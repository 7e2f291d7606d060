"""Numbers written as text in decimal: a command line's, a joint value given as a string.

Python's ``float()`` reads more than a user means by a number: "1_0" as 10, "nan", "infinity",
digits of other scripts ("\uff11" as 1); ``int()`` the same. :func:`decimal_number` and
:func:`decimal_integer` read ASCII decimal only. No numpy: the
command line's parser imports it.
"""

from __future__ import annotations

import re
from typing import Any

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def held_text(value: Any) -> str | bytes | None:
    """The text a user's value holds: a str or bytes, or that of a 0-d numpy array of text (read
    without numpy); None for anything else (a number, to be read by float())."""
    if getattr(value, "ndim", None) == 0 and getattr(getattr(value, "dtype", None), "kind", None) in ("U", "S"):
        value = value.item()
    return value if isinstance(value, (str, bytes)) else None


def decimal_number(text: str | bytes) -> float:
    """`text` (bytes: read as Latin-1) as a number if it is one written in decimal: ASCII digits
    with an optional sign, point and exponent ("-0.5", "2.", "1e-3"), spaces around it allowed;
    else ValueError. An exponent beyond float's range gives +-inf: the caller's range check names it."""
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    if not _DECIMAL.fullmatch(text.strip(" ")):
        raise ValueError(f"not a decimal number: {text!r}")
    return float(text)


def decimal_integer(text: str) -> int:
    """`text` as an integer if it is one written in decimal: ASCII digits with an optional sign,
    spaces around it allowed; else ValueError (int() also reads "1_0" as 10 and other scripts'
    digits)."""
    if not _INTEGER.fullmatch(text.strip(" ")):
        raise ValueError(f"not a decimal integer: {text!r}")
    return int(text)


__all__ = ["decimal_integer", "decimal_number", "held_text"]

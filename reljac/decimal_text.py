"""Numbers written as text in decimal: a command line's, a joint value given as a string.

Python's ``float()`` reads more than a user means by a number: "1_0" as 10, "nan", "infinity",
digits of other scripts ("\uff11" as 1). :func:`decimal_number` reads ASCII decimal only. No numpy: the
command line's parser imports it.
"""

from __future__ import annotations

import re

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def decimal_number(text: str) -> float:
    """`text` as a number if it is one written in decimal: ASCII digits with an optional sign,
    point and exponent ("-0.5", "2.", "1e-3"), spaces around it allowed; else ValueError. An
    exponent beyond float's range gives +-inf: the caller's range check names it."""
    if not _DECIMAL.fullmatch(text.strip()):
        raise ValueError(f"not a decimal number: {text!r}")
    return float(text)


__all__ = ["decimal_number"]

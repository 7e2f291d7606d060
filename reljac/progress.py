"""When a progress bar is drawn: the rule shared by the library and the command line.

A bar belongs on a terminal, or where it is asked for: ``asked`` True or False decides; None (the
default) draws one only when the stream (standard error by default) is a terminal and the
environment variable ``CI`` is unset or empty. Pipes and log files get no bar unless asked.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def progress_wanted(asked: bool | None = None, stream: Any = None) -> bool:
    """Draw a progress bar? `asked` True or False decides; None: only when `stream` (default
    ``sys.stderr``) is a terminal and the environment variable ``CI`` is unset or empty."""
    if asked is not None:
        return bool(asked)
    stream = sys.stderr if stream is None else stream
    try:
        terminal = stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        terminal = False
    return terminal and not os.environ.get("CI")

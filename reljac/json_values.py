"""JSON-ready plain Python values: what the ``to_dict`` methods of results return.

Library results (:class:`~reljac.analysis.Manipulability`, :class:`~reljac.workspace.WorkspaceSummary`)
and the command line's ``--json`` documents share this one conversion.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pinocchio as pin

__all__ = ["json_ready"]


def json_ready(value: Any) -> Any:
    """`value` as JSON-ready Python: dicts, lists, str, bool, int, float and None only.

    numpy arrays become nested lists, numpy scalars Python numbers, tuples lists, ``pin.SE3``
    its (4, 4) homogeneous matrix; NaN, inf and -inf become None (JSON has no such numbers).
    """
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, pin.SE3):
        value = value.homogeneous
    if isinstance(value, np.ndarray):
        return json_ready(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot put a {type(value).__name__} into a JSON document")

"""Relative capability maps: where frame b can be in frame a, how dexterous it is there, and a
configuration that gets it there, from millions of samples on threads or a Dask cluster.

========================================= ==================================================================
:func:`capability_map`                     sample, bin and reduce (threads, Dask LocalCluster or cluster)
:class:`CapabilityMap`, :func:`load_map`   the result: counts, coverage, best manipulability, best q (.npz)
:func:`seed_for`                           a map's best_q near a target T_ab, to seed ``reljac.ik.solve``
:func:`relative_kinematics`                T_ab (N, 4, 4) and J_ab (N, 6, nv) for N configurations at once
:class:`MapSupport`                        contacts and margin: keep samples whose centre of mass is inside
========================================= ==================================================================

Modules: ``compiled`` (batched T_ab, J_ab: Pinocchio's C++ in the compiled core, or the
Pinocchio-layer loop it is tested against), ``sampling`` (reproducible per-sample configurations), ``grid`` (voxels,
directions, rated rows), ``kernel`` (one chunk's reduction and the order-independent merge),
``scheduling`` (threads or Dask; the bounded connection to Dask is ``reljac.dask_client``), ``capability``
(the driver), ``balance`` (rejecting samples whose centre of mass leaves a support region),
``result`` (the map and its file), ``mapfile`` (reading a file that may be
corrupted or hostile), ``seeding`` (IK seeds).
"""

from .balance import MapSupport
from .capability import MAX_SAMPLES, capability_map
from .compiled import compiled_available, relative_kinematics
from .grid import MAX_DIRECTIONS, MAX_VOXELS
from .mapfile import load_map
from .result import CapabilityMap
from .seeding import seed_for

__all__ = [
    "MAX_DIRECTIONS",
    "MAX_SAMPLES",
    "MAX_VOXELS",
    "CapabilityMap",
    "MapSupport",
    "capability_map",
    "compiled_available",
    "load_map",
    "relative_kinematics",
    "seed_for",
]

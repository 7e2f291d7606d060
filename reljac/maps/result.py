"""CapabilityMap: the arrays and metadata of a relative capability map, saved as .npz.

File layout (``numpy.savez_compressed``): the arrays below, plus ``metadata``, a JSON string
(format, format_version, reljac version, robot, nq, nv, frame_a, frame_b, samples, seed, voxel,
origin, dims, axis, rows, outside, block, backend; and ``support`` for a balance-aware map:
contacts (frame, points [m]), margin [m], plane, held joints, rejected count).
:func:`reljac.maps.load_map`
(:mod:`reljac.maps.mapfile`) reads it back, checking sizes before inflating anything.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..exceptions import MapError
from ..files import open_for_writing
from .grid import Grid

if TYPE_CHECKING:  # pragma: no cover
    from ..robot import Robot

FORMAT = "reljac.capability_map"
FORMAT_VERSION = 1
ARRAYS = ("counts", "coverage", "best_manipulability", "best_index", "best_q", "directions")


@dataclass(eq=False)
class CapabilityMap:
    """Where frame b's origin can be in frame a, how dexterous b is there, and a q that gets it there.

    Arrays over the voxel grid (shape ``dims`` = (nx, ny, nz), in a's axes; voxel (i, j, k) spans
    ``origin + [i, i+1) * voxel`` in x, and likewise in y and z):

    Attributes:
        counts: int64, samples that put b's origin in the voxel.
        coverage: uint64 bit masks; bit d set when b's approach axis (its ``axis``) was closest to
            ``directions[d]`` (in a) for some sample there.
        best_manipulability: float64, the largest ``sqrt(det(J_r J_r^T))`` over the voxel's samples,
            J_r the ``rows`` of J_ab (0 where unreached).
        best_index: int64, the global index of the sample that achieved it (-1 where unreached).
        best_q: (n_reached, nq), that sample's configuration for each reached voxel in flat
            (C-order) index order; :meth:`best_q_at` looks one up.
        directions: (n, 3) unit approach directions in a.
        metadata: dict (see the module docstring).
    """

    counts: np.ndarray
    coverage: np.ndarray
    best_manipulability: np.ndarray
    best_index: np.ndarray
    best_q: np.ndarray
    directions: np.ndarray
    metadata: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ grid
    @property
    def grid(self) -> Grid:
        m = self.metadata
        return Grid(origin=tuple(m["origin"]), voxel=float(m["voxel"]), dims=tuple(m["dims"]))

    @property
    def reached(self) -> np.ndarray:
        """Boolean (nx, ny, nz): voxels some sample reached."""
        return self.counts > 0

    def reached_voxels(self) -> np.ndarray:
        """Flat indices of the reached voxels, increasing (the row order of best_q)."""
        return np.flatnonzero(self.counts.ravel())

    def coverage_index(self) -> np.ndarray:
        """Zacharias' reachability index per voxel: the fraction of directions reached, (nx, ny, nz)."""
        bits = np.unpackbits(self.coverage.astype("<u8").view(np.uint8).reshape(*self.coverage.shape, 8),
                             axis=-1)
        return bits.sum(axis=-1) / len(self.directions)

    def best_q_at(self, flat_index: int) -> np.ndarray:
        """The configuration (nq,) that achieved a reached voxel's best manipulability."""
        reached = self.reached_voxels()
        row = int(np.searchsorted(reached, flat_index))
        if row >= reached.size or reached[row] != flat_index:
            raise MapError(f"voxel {flat_index} was not reached")
        return self.best_q[row].copy()

    # ------------------------------------------------------------------ balance
    @property
    def support(self) -> dict | None:
        """The support region a balance-aware map kept its samples' centre of mass in (contacts
        with their frame and points [m], margin [m], plane, held joints, rejected count); None for
        a plain map."""
        return self.metadata.get("support")

    @property
    def rejected(self) -> int:
        """Samples rejected because their centre of mass left the support region (0 for a plain map)."""
        support = self.support
        return 0 if support is None else int(support["rejected"])

    # ------------------------------------------------------------------ comparison
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CapabilityMap):
            return NotImplemented
        return self.metadata == other.metadata and self.same_reduction(other)

    def same_reduction(self, other: CapabilityMap) -> bool:
        """True when both maps hold identical arrays (metadata such as the backend aside)."""
        return all(np.array_equal(getattr(self, name), getattr(other, name)) for name in ARRAYS)

    def __repr__(self) -> str:
        m = self.metadata
        return (f"CapabilityMap(robot={m.get('robot')!r}, {m.get('frame_a')!r} -> {m.get('frame_b')!r}, "
                f"samples={m.get('samples')}, voxel={m.get('voxel')}, dims={tuple(m.get('dims', ()))}, "
                f"reached={int(self.reached.sum())}"
                + (f", balance-aware: {self.rejected} rejected" if self.support is not None else "") + ")")

    # ------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike) -> Path:
        """Write the map to `path` (.npz; the suffix is added when missing). Returns the path.

        Raises:
            MapError: the path names a folder, a FIFO or a device (never opened: a FIFO would
                block until a reader comes), a missing folder, or a file that cannot be written.
        """
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        arrays = {name: getattr(self, name) for name in ARRAYS}
        with open_for_writing(path, "capability map", MapError) as f:
            np.savez_compressed(f, metadata=np.array(json.dumps(self.metadata, sort_keys=True)), **arrays)
        return path


def robot_joints(robot: Robot) -> dict[str, Any]:
    """What a map records of its robot's joints: the joint of each column of q (``q_names``) and
    the values of its locked joints (``locked``; :func:`check_robot` compares them)."""
    return {"q_names": list(robot.q_names),
            "locked": {name: np.asarray(value, dtype=float).tolist() for name, value in robot.locked_joints.items()}}


def check_recorded_joints(m: dict[str, Any], robot: Robot, what: str) -> None:
    """A map's metadata `m` against the robot's joints (:func:`robot_joints`), where it records
    them (older maps do not).

    Raises:
        MapError: the map is of the robot with other joints locked, or locked elsewhere.
    """
    joints = robot_joints(robot)
    if "q_names" in m and m["q_names"] != joints["q_names"]:
        other = [n for n in m["q_names"] if n not in joints["q_names"]]
        raise MapError(f"{what} is of robot '{robot.name}' with other joints free: its q holds "
                       f"{other or m['q_names']}, which this one does not (locked joints differ)")
    if "locked" in m and (set(m["locked"]) != set(joints["locked"]) or not all(
            np.allclose(m["locked"][n], joints["locked"][n], rtol=0.0, atol=1e-12) for n in joints["locked"])):
        raise MapError(f"{what} is of robot '{robot.name}' with its joints locked at {m['locked']}, "
                       f"not at {joints['locked']}")


def check_robot(cmap: CapabilityMap, robot: Robot) -> CapabilityMap:
    """The map, after checking it was made for this robot (name, nq and both frames; for maps
    that record them, the joints of q's columns and the locked joints' values).

    Raises:
        MapError: the map is of another robot, of this one with other joints locked or locked
            elsewhere, or names frames the robot does not have.
    """
    m = cmap.metadata
    if m.get("robot") != robot.name or m.get("nq") != robot.nq:
        raise MapError(f"the capability map is of robot '{m.get('robot')}' (nq={m.get('nq')}), not of "
                       f"'{robot.name}' (nq={robot.nq})")
    check_recorded_joints(m, robot, "the capability map")
    missing = [f for f in (m.get("frame_a"), m.get("frame_b")) if f not in robot.frame_names]
    if missing:
        raise MapError(f"the capability map names frames {missing} that robot '{robot.name}' does not have")
    return cmap


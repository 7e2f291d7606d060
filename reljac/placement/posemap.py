"""PoseMap: where frame b (a hand) can be in frame a, position and orientation, queried in
microseconds.

Built by :func:`reljac.placement.pose_map` (:mod:`reljac.placement.posemap_build`) from random
configurations, each standing for the poses its two sweeps reach (:mod:`reljac.placement.orbits`).
The map holds, per invariant cell (rho, z, psi, beta) of :class:`~reljac.placement.orbits.PoseGrid`
and per gamma bin, a 64-bit mask of the phi bins reached (``keys``, ``masks``), and per invariant
cell the best position manipulability of its samples, that sample's index and its joints
(``best_q``: the chain's entries of q, to seed IK).

A pose is *reached* when its cell's bit is set: some sampled configuration puts b in the same
cell, within a voxel [m] in rho and z, a bin in each angle. The map errs at the boundary of what
b can reach (a cell partly reachable counts whole) and misses cells no sample fell in: the exact
check (:mod:`reljac.placement.check`) closes both.

Files (``numpy.savez_compressed``: :func:`write_maps`, :meth:`PoseMap.save`; read by
:mod:`reljac.placement.mapfile`) hold one map or several: the arrays of map i as ``m{i}_keys``,
..., and ``metadata``, a JSON string listing each map's metadata (robot, nq, frames, samples,
seed, the grid's bins, the sweeps, the chain's joints and q indices, outside, backend).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import MapError
from ..files import open_for_writing
from ..maps.result import check_recorded_joints
from .orbits import TWO_PI, Orbits, PoseGrid, coordinates, rigid_inverse

FORMAT = "reljac.pose_maps"
FORMAT_VERSION = 1
ARRAYS = ("keys", "masks", "cells", "best_manipulability", "best_index", "best_q", "best_start")

if hasattr(np, "bitwise_count"):  # numpy >= 2.0
    def popcount(x: np.ndarray) -> np.ndarray:
        """Set bits of each uint64, (n,) int64."""
        return np.bitwise_count(x).astype(np.int64)
else:  # pragma: no cover - numpy 1.x
    _BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], np.int64)

    def popcount(x: np.ndarray) -> np.ndarray:
        """Set bits of each uint64, (n,) int64."""
        return _BYTE_BITS[np.ascontiguousarray(x, dtype="<u8").view(np.uint8).reshape(-1, 8)].sum(axis=1)


@dataclass(eq=False)
class PoseMap:
    """A pose map of frame b in frame a (module docstring).

    Attributes:
        keys: (k,) int64, increasing: invariant cell * n_gamma + gamma bin, for each one reached.
        masks: (k,) uint64: the phi bins reached there (bit i: bin i).
        cells: (m,) int64, increasing: the invariant cells reached.
        best_manipulability: (m,) the largest sqrt(det(J_p J_p^T)) of a sample in each cell (J_p
            the position rows of J_ab; the sweeps do not change it).
        best_index: (m,) that sample's index (the smallest on ties).
        best_q: (m, sum(metadata["joint_nq"])) that sample's q entries of the chain's joints
            (metadata["joints"], in order), with the swept joints at their lower limits.
        best_start: (m, 2) that sample's phi and roll [rad] (gamma, or a polar chart's roll: where
            the sweeps start).
        metadata: dict (see the module docstring).
    """

    keys: np.ndarray
    masks: np.ndarray
    cells: np.ndarray
    best_manipulability: np.ndarray
    best_index: np.ndarray
    best_q: np.ndarray
    best_start: np.ndarray
    metadata: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lookup: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._grid: PoseGrid | None = None
        self._orbits: Orbits | None = None

    def __getstate__(self) -> dict:  # the query tables are built again where needed
        return {**self.__dict__, "_lookup": None, "_grid": None, "_orbits": None}

    # ------------------------------------------------------------------ structure
    @property
    def grid(self) -> PoseGrid:
        """The cells (from the metadata, made once)."""
        if self._grid is None:
            m = self.metadata
            self._grid = PoseGrid(float(m["voxel"]), int(m["n_rho"]), int(m["n_z"]), int(m["n_psi"]),
                                  int(m["n_beta"]), int(m["n_gamma"]), int(m["n_phi"]), int(m["n_u"]))
        return self._grid

    @property
    def orbits(self) -> Orbits:
        """The sweeps (from the metadata, made once)."""
        if self._orbits is None:
            m = self.metadata
            self._orbits = Orbits(np.array(m["T_aA"], dtype=float), np.array(m["R_bb"], dtype=float), m["first"],
                                  m["last"], tuple(m["first_range"]), tuple(m["last_range"]), tuple(m["joints"]))
        return self._orbits

    @property
    def frame_a(self) -> str:
        return str(self.metadata["frame_a"])

    @property
    def frame_b(self) -> str:
        return str(self.metadata["frame_b"])

    @property
    def columns(self) -> np.ndarray:
        """(sum(joint_nq),) int64: where the chain's joints' entries (best_q's columns) are in the
        robot's q."""
        m = self.metadata
        return np.concatenate([np.arange(at, at + width) for at, width in zip(m["joint_q"], m["joint_nq"],
                                                                              strict=True)]).astype(np.int64)

    @property
    def nbytes(self) -> int:
        """Bytes of the map's arrays in memory."""
        return sum(getattr(self, name).nbytes for name in ARRAYS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PoseMap):
            return NotImplemented
        return self.metadata == other.metadata and self.same_arrays(other)

    def same_arrays(self, other: PoseMap) -> bool:
        """True when both maps hold identical arrays (metadata such as the backend aside)."""
        return all(np.array_equal(getattr(self, name), getattr(other, name)) for name in ARRAYS)

    def __repr__(self) -> str:
        m = self.metadata
        return (f"PoseMap(robot={m.get('robot')!r}, {m.get('frame_a')!r} -> {m.get('frame_b')!r}, "
                f"samples={m.get('samples')}, voxel={m.get('voxel')}, cells={len(self.cells)}, "
                f"entries={len(self.keys)})")

    # ------------------------------------------------------------------ queries
    def _tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per invariant cell of the grid: the row of `cells` (-1: unreached), the index of its first
        key, a mask of its gamma bins (bit g: bin g has a key); and (n_rho, n_z) bool, a cell
        reached at that rho and z. Built on first use."""
        if self._lookup is None:
            grid = self.grid
            n_gamma = grid.n_gamma
            row = np.full(grid.cells, -1, np.int64)
            row[self.cells] = np.arange(len(self.cells))
            cell_of_key, gamma_of_key = np.divmod(self.keys, n_gamma)
            first = np.zeros(grid.cells, np.int64)
            gammas = np.zeros(grid.cells, np.uint64)
            if len(self.keys):  # keys increase: each cell's keys are a run
                starts = np.flatnonzero(np.r_[True, cell_of_key[1:] != cell_of_key[:-1]])
                first[cell_of_key[starts]] = starts
                bits = np.left_shift(np.uint64(1), gamma_of_key.astype(np.uint64))
                gammas[cell_of_key[starts]] = np.bitwise_or.reduceat(bits, starts)
            near = np.zeros(grid.n_rho * grid.n_z, bool)
            near[self.cells // grid.n_angles] = True
            self._lookup = row, first, gammas, near.reshape(grid.n_rho, grid.n_z)
        return self._lookup

    def prepare(self) -> PoseMap:
        """Build the query tables now (they are built by the first query otherwise: about 0.1-0.5 s
        for a map of millions of entries). Returns the map."""
        self._tables()
        return self

    def locate(self, T_ab: np.ndarray, shifts: np.ndarray | None = None,
               margin: tuple[float, ...] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(reached, sure, row) of poses T_ab (n, 4, 4) [m] of b in a: reached (n,) bool; sure (n,)
        bool, reached and so are the points `margin` away along each coordinate; row (n,) int64,
        the pose's invariant cell in `cells` (-1 where unreached).

        shifts: (S,) [m]: of the poses moved by each shift along A's z (a lift below a); then each
            result is (n, S).
        margin: (rho, z, psi, beta, phi, gamma), fractions of a bin; a coordinate with 0 is not
            tested (None: sure is reached).

        Poses whose (rho, z) no cell reaches are answered from their position alone.
        """
        grid = self.grid
        T_ab = np.asarray(T_ab, dtype=float)
        lifts = np.zeros(1) if shifts is None else np.asarray(shifts, dtype=float)
        n, S = len(T_ab), len(lifts)
        reached, sure, rows = np.zeros((n, S), bool), np.zeros((n, S), bool), np.full((n, S), -1, np.int64)
        T_Aa = rigid_inverse(self.orbits.T_aA)
        p = T_ab[:, :3, 3] @ T_Aa[:3, :3].T + T_Aa[:3, 3]
        near = self._tables()[3]
        ir = np.floor(np.hypot(p[:, 0], p[:, 1]) / grid.voxel).astype(np.int64)
        iz = np.floor((p[:, 2, None] + lifts[None, :] + grid.z_half) / grid.voxel).astype(np.int64)
        inside = (ir[:, None] < grid.n_rho) & (iz >= 0) & (iz < grid.n_z)
        close = inside & near[np.minimum(ir, grid.n_rho - 1)[:, None], np.clip(iz, 0, grid.n_z - 1)]
        todo = np.flatnonzero(close.any(axis=1))
        if len(todo):
            found = self._locate(T_ab[todo], lifts, margin)
            reached[todo], sure[todo], rows[todo] = found
        if shifts is None:
            return reached[:, 0], sure[:, 0], rows[:, 0]
        return reached, sure, rows

    def _locate(self, T_ab: np.ndarray, lifts: np.ndarray,
                margin: tuple[float, ...] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`locate` of every pose, each result (n, S)."""
        grid = self.grid
        coords = coordinates(self.orbits.to_swept(T_ab))
        steps = (grid.voxel, grid.voxel, TWO_PI / grid.n_psi, 2.0 / grid.n_beta, TWO_PI / grid.n_phi,
                 TWO_PI / grid.n_gamma)
        points = [coords]
        for i, fraction in enumerate(margin or ()):
            for sign in (-1.0, 1.0) if fraction else ():
                moved = list(coords)
                delta = sign * fraction * steps[i]
                moved[i] = moved[i] + delta
                if i == 3:
                    moved[i] = np.clip(moved[i], -1.0, 1.0)
                if i in (2, 5):  # the polar rolls: gamma + psi and gamma - psi
                    moved[6] = moved[6] + delta
                    moved[7] = moved[7] + (delta if i == 5 else -delta)
                points.append(tuple(moved))
        found = []  # per point: (rho, z, angle cell, gamma bin, phi bit), all but z independent of the lift
        for rho, z, psi, cos_beta, phi, gamma, north, south in points:
            angle, roll = grid.angle_index(psi, cos_beta, gamma, north, south)
            found.append((rho, z, angle, grid.angle_bin(roll, grid.n_gamma).astype(np.uint64),
                          grid.angle_bin(phi, grid.n_phi).astype(np.uint64)))
        hit, row = self._find(grid, found[0], lifts)  # (n, S): every lift at once
        every = hit.copy()
        for point in found[1:]:
            every &= self._find(grid, point, lifts)[0]
        return hit, every, row

    def _find(self, grid: PoseGrid, point: tuple[np.ndarray, ...], lifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(reached, row), each (n, S), of one point's poses at every lift."""
        rho, z, angle, g, bit = point
        n, S = len(rho), len(lifts)
        voxel = grid.voxel_index(np.repeat(rho, S), (z[:, None] + lifts[None, :]).ravel())
        cell = np.where(voxel >= 0, voxel * grid.n_angles + np.repeat(angle, S), -1)
        hit, row = self._lookup_bits(cell, np.repeat(g, S), np.repeat(bit, S))
        return hit.reshape(n, S), row.reshape(n, S)

    def _lookup_bits(self, cell: np.ndarray, g: np.ndarray, bit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        row_of, first, gammas, _ = self._tables()
        safe = np.maximum(cell, 0)
        row = np.where(cell >= 0, row_of[safe], -1)
        have = gammas[safe]
        has_gamma = (row >= 0) & ((have >> g) & np.uint64(1)).astype(bool)
        below = have & ((np.uint64(1) << g) - np.uint64(1))
        index = np.where(has_gamma, first[safe] + popcount(below), 0)
        mask = self.masks[index] if len(self.masks) else np.zeros(len(index), np.uint64)
        reached = has_gamma & ((mask >> bit) & np.uint64(1)).astype(bool)
        return reached, np.where(reached, row, -1)

    def reached(self, T_ab: np.ndarray) -> np.ndarray:
        """(n,) bool: poses T_ab (n, 4, 4) [m] of b in a the map has reached."""
        return self.locate(np.asarray(T_ab, dtype=float).reshape(-1, 4, 4))[0]

    def manipulability(self, rows: np.ndarray) -> np.ndarray:
        """The best manipulability (n,) of invariant cells given by row (0 for row -1)."""
        rows = np.asarray(rows, dtype=np.int64)
        return np.where(rows >= 0, self.best_manipulability[np.maximum(rows, 0)], 0.0) if len(self.cells) else \
            np.zeros(len(rows))

    def seeds(self, T_ab: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """(n, len(best_q[0])) the chain's joint values of each row's best sample, its swept joints
        turned to put b at T_ab's azimuth phi and angle gamma (within their limits): a start for
        IK towards T_ab (n, 4, 4). A row of -1 gives NaN."""
        m = self.metadata
        rows = np.asarray(rows, dtype=np.int64)
        out = np.full((len(rows), self.best_q.shape[1]), np.nan)
        ok = rows >= 0
        if not ok.any():
            return out
        out[ok] = self.best_q[rows[ok]]
        grid = self.grid
        rho, z, psi, cos_beta, phi, gamma, north, south = coordinates(
            self.orbits.to_swept(np.asarray(T_ab, dtype=float)[ok]))
        roll = grid.cell(rho, z, psi, cos_beta, gamma, north, south)[1]
        orbits = self.orbits
        columns = np.cumsum([0, *m["joint_nq"]])
        for k, (name, value, (lo, hi)) in enumerate(((orbits.first, phi, orbits.first_range),
                                                     (orbits.last, roll, orbits.last_range))):
            if not name:
                continue
            turn = lo + np.mod(value - self.best_start[rows[ok], k], TWO_PI)
            turn = np.where(turn > hi, np.where(turn - hi < lo + TWO_PI - turn, hi, lo), turn)
            j = list(m["joints"]).index(name)
            at = columns[j]
            if m["joint_nq"][j] == 2:
                out[ok, at], out[ok, at + 1] = np.cos(turn), np.sin(turn)
            else:
                out[ok, at] = turn
        return out

    # ------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike) -> Path:
        """Write the map to `path` (.npz added when missing; :func:`write_maps` of this map alone).
        Returns the path."""
        return write_maps(path, [self])


def write_maps(path: str | os.PathLike, maps: list[PoseMap]) -> Path:
    """Write pose maps to one file (.npz added when missing): arrays ``m{i}_{name}`` and a JSON
    ``metadata`` {format: "reljac.pose_maps", format_version, maps: [each map's metadata]}.
    :func:`reljac.placement.load_maps` reads it. Returns the path.

    Raises:
        MapError: the path cannot be written (a folder, a FIFO, a device, a missing folder, no
            permission).
    """
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    document = {"format": FORMAT, "format_version": FORMAT_VERSION, "maps": [m.metadata for m in maps]}
    arrays = {f"m{i}_{name}": getattr(m, name) for i, m in enumerate(maps) for name in ARRAYS}
    with open_for_writing(path, "pose map file", MapError) as f:
        np.savez_compressed(f, metadata=np.array(json.dumps(document, sort_keys=True)), **arrays)
    return path


def check_robot(pmap: PoseMap, robot: Any) -> PoseMap:
    """The map, after checking it was made for this robot: its name, nq, frames, the chain's
    joints at the same q indices and (maps that record them) the joints of q's columns and the
    locked joints' values.

    Raises:
        MapError: the map is of another robot, or of this one with other joints locked or locked
            elsewhere.
    """
    m = pmap.metadata
    if m.get("robot") != robot.name or m.get("nq") != robot.nq:
        raise MapError(f"the pose map is of robot '{m.get('robot')}' (nq={m.get('nq')}), not of '{robot.name}' "
                       f"(nq={robot.nq})")
    missing = [f for f in (m.get("frame_a"), m.get("frame_b")) if f not in robot.frame_names]
    if missing:
        raise MapError(f"the pose map names frames {missing} that robot '{robot.name}' does not have")
    model = robot.model
    for name, at in zip(m["joints"], m["joint_q"], strict=True):
        if name not in model.names or model.joints[model.getJointId(name)].idx_q != at:
            raise MapError(f"the pose map's joint {name!r} is not at q[{at}] of robot '{robot.name}' (a map of the "
                           "robot with other joints locked?)")
    check_recorded_joints(m, robot, "the pose map")
    return pmap


def cell_sizes(pmap: PoseMap) -> dict[str, float]:
    """The map's resolution: voxel [m] in rho and z; psi, gamma and phi bins [deg]; beta bins
    [deg] at the equator (they widen towards the poles: equal areas); the polar charts' reach
    from the pole [deg] and their cells per side."""
    grid = pmap.grid
    return {"voxel": grid.voxel, "psi": 360.0 / grid.n_psi, "gamma": 360.0 / grid.n_gamma,
            "phi": 360.0 / grid.n_phi, "beta": math.degrees(2.0 / grid.n_beta),
            "pole": math.degrees(math.asin(grid.pole)), "pole_cells": grid.n_u}

"""Reading pose map files (.npz, :func:`~reljac.placement.posemap.write_maps`) that may be
truncated, corrupted or hostile.

The small ``metadata`` member is read and checked first (a JSON object of the format and version,
each map's grid within :data:`~reljac.placement.posemap_build.MAX_CELLS` cells, its frames, sweeps
and joints); every array's uncompressed size, from the zip's directory, is then compared with what
the metadata allows, and their total with the memory available, before anything is inflated.
Each ``.npy`` header (dtype, shape) is checked before its data is read, and the keys and cells
must increase inside the grid (the queries index with them). Any defect is one MapError naming
the file.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..exceptions import MapError
from ..files import shown
from ..maps.mapfile import check_joint_fields, int_within, npy_header, npy_member, read_archive
from ..memory import available_bytes
from ..validation import is_real_number
from .posemap import ARRAYS, FORMAT, FORMAT_VERSION, PoseMap, write_maps
from .posemap_build import MAX_CELLS

HEADER_BYTES = 10_240
METADATA_CHARS = 2**20
MAX_MAPS = 64


def save_maps(path: str | os.PathLike, maps: Any) -> Path:
    """Write pose maps to one file (.npz added when missing): a list or {hand: PoseMap}, or a
    :class:`~reljac.placement.PlacementMaps` (its maps). Returns the path written."""
    maps = getattr(maps, "maps", maps)
    listed = list(maps.values()) if isinstance(maps, dict) else list(maps)
    if not listed or not all(isinstance(m, PoseMap) for m in listed):
        raise MapError(f"save_maps needs pose maps (a list, a dict or PlacementMaps), got {type(maps).__name__}")
    return write_maps(path, listed)


def load_maps(path: str | os.PathLike) -> dict[str, PoseMap]:
    """The pose maps of a file, {hand frame (frame b): map}.

    Raises:
        MapError: a missing file (or a folder, a FIFO), one that is not a reljac pose map file, or
            is truncated, corrupted or larger than the memory available.
    """
    maps = _load(path)
    out: dict[str, PoseMap] = {}
    for pmap in maps:
        if pmap.frame_b in out:
            raise MapError(f"'{shown(path)}' holds two maps of '{pmap.frame_b}'")
        out[pmap.frame_b] = pmap
    return out


def load_pose_map(path: str | os.PathLike) -> PoseMap:
    """The pose map of a file holding one (:meth:`PoseMap.save`).

    Raises:
        MapError: as :func:`load_maps`, or a file of several maps.
    """
    maps = _load(path)
    if len(maps) != 1:
        raise MapError(f"'{shown(path)}' holds {len(maps)} pose maps; use load_maps")
    return maps[0]


def _load(path: str | os.PathLike) -> list[PoseMap]:
    return read_archive(path, "pose map file", _read)


def _read(archive: zipfile.ZipFile, name: str) -> list[PoseMap]:
    members = {info.filename: info for info in archive.infolist()}
    if "metadata.npy" not in members:
        raise MapError(f"{name} is not a reljac pose map file (no metadata)")
    document = _metadata(archive, members["metadata.npy"], name)
    bounds = []
    for i, m in enumerate(document["maps"]):
        cells = m["n_rho"] * m["n_z"] * _angles(m)
        width = sum(m["joint_nq"])
        most = {"keys": cells * m["n_gamma"] * 8, "masks": cells * m["n_gamma"] * 8, "cells": cells * 8,
                "best_manipulability": cells * 8, "best_index": cells * 8, "best_q": cells * width * 8,
                "best_start": cells * 16}
        for array in ARRAYS:
            info = members.get(f"m{i}_{array}.npy")
            if info is None:
                raise MapError(f"{name} is not a complete pose map file (no m{i}_{array})")
            if info.file_size > most[array] + HEADER_BYTES:
                raise MapError(f"{name}: map {i}'s {array} inflates to {info.file_size:,} bytes, more than the "
                               f"{most[array]:,} its metadata allows; the file is corrupted or hostile")
        bounds.append(cells)
    total = sum(members[f"m{i}_{a}.npy"].file_size for i in range(len(document["maps"])) for a in ARRAYS)
    room = available_bytes()
    if room is not None and total > room:
        raise MapError(f"{name} holds {total:,} bytes of arrays, more than the {room:,} bytes of memory available")
    out = []
    for i, (m, cells) in enumerate(zip(document["maps"], bounds, strict=True)):
        def member(key: str, dtype: Any, shape_ok: Any, i: int = i) -> np.ndarray:
            return npy_member(archive, members[f"m{i}_{key}.npy"], np.dtype(dtype), shape_ok, name)

        keys = member("keys", np.int64, lambda s: len(s) == 1)
        k = len(keys)
        masks = member("masks", np.uint64, lambda s, k=k: s == (k,))
        found = member("cells", np.int64, lambda s: len(s) == 1)
        n, width = len(found), sum(m["joint_nq"])
        arrays = dict(keys=keys, masks=masks, cells=found,
                      best_manipulability=member("best_manipulability", np.float64, lambda s, n=n: s == (n,)),
                      best_index=member("best_index", np.int64, lambda s, n=n: s == (n,)),
                      best_q=member("best_q", np.float64, lambda s, n=n, w=width: s == (n, w)),
                      best_start=member("best_start", np.float64, lambda s, n=n: s == (n, 2)))
        _check_order(keys, cells * m["n_gamma"], f"{name}: map {i}'s keys")
        _check_order(found, cells, f"{name}: map {i}'s cells")
        if not (np.isfinite(arrays["best_q"]).all() and np.isfinite(arrays["best_start"]).all()):
            raise MapError(f"{name}: map {i} has configurations that are not finite")
        best = arrays["best_manipulability"]
        if len(best) and not (np.isfinite(best).all() and best.min() >= 0.0):
            raise MapError(f"{name}: map {i} has manipulabilities that are not finite numbers >= 0; the file is "
                           "corrupted")
        out.append(PoseMap(**arrays, metadata=m))
    return out


def _check_order(values: np.ndarray, bound: int, what: str) -> None:
    if len(values) and (values[0] < 0 or values[-1] >= bound or np.any(np.diff(values) <= 0)):
        raise MapError(f"{what} do not increase inside the grid; the file is corrupted")


def _metadata(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> dict:
    if info.file_size > 4 * METADATA_CHARS + HEADER_BYTES:
        raise MapError(f"{name}: its metadata inflates to {info.file_size:,} bytes; a pose map file's takes a few kB")
    with archive.open(info) as file:
        _, _, dtype = npy_header(file, name, "metadata")
    if dtype.kind != "U" or dtype.itemsize > 4 * METADATA_CHARS:
        raise MapError(f"{name}: its metadata is {dtype}, not a JSON text")
    text = npy_member(archive, info, dtype, lambda s: s == (), name)
    try:
        document = json.loads(str(text[()]))
    except ValueError:
        raise MapError(f"{name} has unreadable metadata (not JSON)") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise MapError(f"{name} is not a reljac pose map file (format {_short(document)})")
    if document.get("format_version") != FORMAT_VERSION:
        raise MapError(f"{name} has format version {_short(document.get('format_version'))}; this reljac reads "
                       f"version {FORMAT_VERSION}")
    maps = document.get("maps")
    if not isinstance(maps, list) or not 1 <= len(maps) <= MAX_MAPS:
        raise MapError(f"{name}: its metadata lists {_short(maps)} maps, expected 1 to {MAX_MAPS}")
    for i, m in enumerate(maps):
        _check_fields(m, f"{name}: map {i}")
    return document


def _short(value: Any) -> str:
    text = repr(value.get("format") if isinstance(value, dict) else value)
    return text if len(text) <= 60 else text[:57] + "..."


def _finite(x: Any) -> bool:
    return is_real_number(x) and math.isfinite(x)


def _matrix(x: Any, n: int) -> bool:
    return isinstance(x, list) and len(x) == n and all(isinstance(r, list) and len(r) == n and
                                                        all(_finite(v) for v in r) for r in x)


def _check_fields(m: Any, where: str) -> None:
    if not isinstance(m, dict):
        raise MapError(f"{where}: its metadata is not an object")
    checks = {
        "robot": lambda s: isinstance(s, str), "frame_a": lambda s: isinstance(s, str),
        "frame_b": lambda s: isinstance(s, str), "nq": lambda n: int_within(n, 0, 10**5),
        "samples": lambda n: int_within(n, 1, 10**12), "seed": lambda n: int_within(n, 0, 2**63 - 1),
        "voxel": lambda v: _finite(v) and v > 0, "n_rho": lambda n: int_within(n, 1, MAX_CELLS),
        "n_z": lambda n: int_within(n, 1, MAX_CELLS), "n_psi": lambda n: int_within(n, 1, 1024),
        "n_beta": lambda n: int_within(n, 3, 1024), "n_gamma": lambda n: int_within(n, 1, 64),
        "n_phi": lambda n: n == 64,
        "n_u": lambda n: int_within(n, 1, 1024),
        "T_aA": lambda x: _matrix(x, 4), "R_bb": lambda x: _matrix(x, 3),
        "first": lambda s: isinstance(s, str), "last": lambda s: isinstance(s, str),
        "first_range": lambda r: isinstance(r, list) and len(r) == 2 and all(_finite(v) for v in r),
        "last_range": lambda r: isinstance(r, list) and len(r) == 2 and all(_finite(v) for v in r),
        "joints": lambda j: isinstance(j, list) and 1 <= len(j) <= 10**4 and all(isinstance(s, str) for s in j),
        "joint_q": lambda j: isinstance(j, list) and all(int_within(v, 0, 10**5) for v in j),
        "joint_nq": lambda j: isinstance(j, list) and all(int_within(v, 0, 7) for v in j),
    }
    for key, ok in checks.items():
        if key not in m or not ok(m[key]):
            raise MapError(f"{where}: its metadata field {key!r} is {_short(m.get(key, 'missing'))}")
    if len(m["joint_q"]) != len(m["joints"]) or len(m["joint_nq"]) != len(m["joints"]):
        raise MapError(f"{where}: its joints, joint_q and joint_nq differ in length")
    check_joint_fields(m, where)
    if m["n_rho"] * m["n_z"] * _angles(m) > MAX_CELLS:
        raise MapError(f"{where}: its grid has more than {MAX_CELLS:,} cells")


def _angles(m: dict) -> int:
    """Angle cells per voxel of a map's metadata (as :attr:`PoseGrid.n_angles`)."""
    return m["n_psi"] * (m["n_beta"] - 2) + 2 * m["n_u"] * m["n_u"]

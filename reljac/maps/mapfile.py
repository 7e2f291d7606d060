"""Reading a capability map file (.npz) that may be truncated, corrupted or hostile.

A map file is a zip of ``.npy`` members (:meth:`~reljac.maps.CapabilityMap.save`). Before any
array is inflated, this module reads the small ``metadata`` member, checks it (a JSON object with
3 positive integer dims of at most MAX_VOXELS voxels, nq, voxel, origin, frames) and compares every
member's uncompressed size, from the zip's central directory, with the size the metadata
implies, and their total with the memory available: a decompression bomb is refused from its
headers. Each ``.npy`` header (dtype, shape) is then checked before its data is read, exactly as
many bytes as it needs (the zip reader stops at the declared size and checks the CRC). Any
defect is one :class:`~reljac.exceptions.MapError` naming the file.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
import zlib
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

from ..exceptions import MapError
from ..files import regular_file, shown
from ..memory import available_bytes
from ..validation import is_real_number
from .grid import AXES, MAX_DIRECTIONS, MAX_VOXEL, MAX_VOXELS
from .result import ARRAYS, FORMAT, FORMAT_VERSION, CapabilityMap

HEADER_BYTES = 10_240        # an .npy header (numpy reads at most 10,000 bytes of one)
METADATA_CHARS = 2**16       # the metadata JSON is a few hundred characters
MAX_NQ = 10**5
GRID_ARRAYS = {"counts": np.int64, "coverage": np.uint64, "best_manipulability": np.float64, "best_index": np.int64}
T = TypeVar("T")
MAX_ORIGIN = 1e6  # [m] the largest |coordinate| of a map's origin (as obstacles' and placements')
_READ = 2**24                # bytes inflated per read


def load_map(path: str | os.PathLike) -> CapabilityMap:
    """Read a map written by :meth:`CapabilityMap.save`.

    Raises:
        MapError: a missing file (or a FIFO, a folder, a link loop: named as such), one that is not
            a zip of .npy arrays or is truncated or corrupted, metadata that is not a reljac map's,
            arrays whose sizes or shapes differ from what the metadata says, or arrays larger
            than the memory available.
    """
    return read_archive(path, "capability map file", _read)


def read_archive(path: str | os.PathLike, what: str, read: Callable[[zipfile.ZipFile, str], T]) -> T:
    """`read(archive, name)` on the zip file at `path`, a `what` ("capability map file"), named
    `name` in errors: a file that is not a regular one, not a zip, truncated or corrupted is a
    one-line MapError, as is what `read` raises of MapError."""
    regular_file(path, what, MapError)
    name = f"'{shown(path)}'"
    try:
        with zipfile.ZipFile(path) as archive:
            return read(archive, name)
    except MapError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError, NotImplementedError,
            RuntimeError) as exc:  # RuntimeError: an encrypted member
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else "no detail"
        raise MapError(f"{name} is not a readable {what} ({type(exc).__name__}: {detail})") from None


def _read(archive: zipfile.ZipFile, name: str) -> CapabilityMap:
    members = {info.filename: info for info in archive.infolist()}
    missing = [a for a in (*ARRAYS, "metadata") if f"{a}.npy" not in members]
    if missing:
        raise MapError(f"{name} is not a reljac capability map (missing: {', '.join(missing)})")
    metadata = _metadata(archive, members["metadata.npy"], name)
    dims, nq = tuple(metadata["dims"]), metadata["nq"]
    voxels = math.prod(dims)
    bounds = {a: voxels * 8 for a in GRID_ARRAYS} | {"directions": MAX_DIRECTIONS * 3 * 8, "best_q": voxels * nq * 8}
    for array, most in bounds.items():
        declared = members[f"{array}.npy"].file_size
        if declared > most + HEADER_BYTES:
            raise MapError(f"{name}: its {array} array inflates to {declared:,} bytes, more than the {most:,} its "
                           f"metadata (dims {list(dims)}, nq {nq}) allows; the file is corrupted or hostile")
    total = sum(members[f"{a}.npy"].file_size for a in ARRAYS)
    room = available_bytes()
    if room is not None and total > room:
        raise MapError(f"{name} holds {total:,} bytes of arrays, more than the {room:,} bytes of memory available")
    arrays = {a: npy_member(archive, members[f"{a}.npy"], np.dtype(dtype), lambda s: s == dims, name)
              for a, dtype in GRID_ARRAYS.items()}
    reached = int(np.count_nonzero(arrays["counts"]))
    arrays["best_q"] = npy_member(archive, members["best_q.npy"], np.dtype(np.float64),
                              lambda s: s == (reached, nq), name)
    arrays["directions"] = npy_member(archive, members["directions.npy"], np.dtype(np.float64),
                                  lambda s: len(s) == 2 and s[1] == 3 and 1 <= s[0] <= MAX_DIRECTIONS, name)
    _check_values(arrays, name)
    return CapabilityMap(**arrays, metadata=metadata)


def _check_values(arrays: dict[str, np.ndarray], name: str) -> None:
    """MapError for values no map holds: negative counts, coverage bits beyond its directions,
    manipulabilities not finite or negative, configurations not finite."""
    directions = len(arrays["directions"])
    unused = np.uint64(0) if directions >= 64 else ~np.uint64((1 << directions) - 1)
    best = arrays["best_manipulability"]
    if (arrays["counts"] < 0).any():
        raise MapError(f"{name}: its counts array has negative counts; the file is corrupted")
    if (arrays["coverage"] & unused).any():
        raise MapError(f"{name}: its coverage array has bits beyond its {directions} directions; the file is corrupted")
    if not (np.isfinite(best).all() and (best >= 0).all()) or not np.isfinite(arrays["best_q"]).all():
        raise MapError(f"{name}: its manipulabilities or configurations are not finite (or negative); the file is "
                       "corrupted")


def npy_header(file: Any, name: str, array_name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran order, dtype) of an .npy member; MapError for anything numpy cannot parse
    (a corrupted header raises ValueError, SyntaxError or tokenize errors from numpy)."""
    try:
        version = np.lib.format.read_magic(file)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        return read(file)
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError):
        raise
    except Exception as exc:  # numpy parses the header with ast and tokenize
        raise MapError(f"{name}: its {array_name} array has a corrupted .npy header ({type(exc).__name__})") from None


def npy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, dtype: np.dtype, shape_ok: Any,
               name: str) -> np.ndarray:
    """One .npy member of `dtype` whose shape passes `shape_ok`, read without inflating more."""
    array_name = info.filename[:-4]
    with archive.open(info) as file:
        shape, fortran, found = npy_header(file, name, array_name)
        if found != dtype or not shape_ok(shape):
            raise MapError(f"{name}: its {array_name} array is {found} of shape {shape}, which does not match "
                           "its metadata")
        out = np.empty(shape[::-1] if fortran else shape, dtype)
        view, done = memoryview(out.reshape(-1).view(np.uint8).data), 0
        while done < out.nbytes:
            got = cast(Any, file).readinto(view[done:done + _READ])  # a ZipExtFile (typed IO[bytes])
            if not got:
                raise MapError(f"{name}: its {array_name} array is truncated ({done:,} of {out.nbytes:,} bytes)")
            done += got
        if file.read(1):  # reads to the member's end, which checks its CRC
            raise MapError(f"{name}: its {array_name} array has bytes after its data")
    return out.T if fortran else out


def _metadata(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> dict:
    if info.file_size > 4 * METADATA_CHARS + HEADER_BYTES:
        raise MapError(f"{name}: its metadata inflates to {info.file_size:,} bytes; a map's takes a few hundred")
    chars = max(1, _metadata_chars(archive, info, name))
    text = npy_member(archive, info, np.dtype(f"<U{chars}"), lambda s: s == (), name)
    try:
        metadata = json.loads(str(text[()]))
    except ValueError:
        raise MapError(f"{name} has unreadable metadata (not JSON)") from None
    if not isinstance(metadata, dict):
        raise MapError(f"{name}: its metadata is a JSON {type(metadata).__name__}, not an object; "
                       "it is not a reljac capability map")
    if metadata.get("format") != FORMAT:
        raise MapError(f"{name} is not a reljac capability map (format {short(metadata.get('format'))})")
    if metadata.get("format_version") != FORMAT_VERSION:
        raise MapError(f"{name} has format version {short(metadata.get('format_version'))}; this reljac reads "
                       f"version {FORMAT_VERSION}")
    _check_fields(metadata, name)
    return metadata


def _metadata_chars(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> int:
    with archive.open(info) as file:
        _, _, dtype = npy_header(file, name, "metadata")
    if dtype.kind != "U" or dtype.itemsize > 4 * METADATA_CHARS:
        raise MapError(f"{name}: its metadata is {dtype}, not a JSON text of at most {METADATA_CHARS:,} characters")
    return dtype.itemsize // 4


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def int_within(x: Any, lo: int, hi: int) -> bool:
    """x is an int (not a bool) in [lo, hi] (a map file's metadata field)."""
    return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi


def _check_fields(m: dict, name: str) -> None:
    """MapError naming the first metadata field that is missing or wrong."""
    checks = {
        "dims": lambda d: isinstance(d, list) and len(d) == 3 and all(int_within(n, 1, MAX_VOXELS) for n in d)
        and math.prod(d) <= MAX_VOXELS,
        "nq": lambda n: int_within(n, 0, MAX_NQ),
        "nv": lambda n: int_within(n, 0, MAX_NQ),
        "voxel": lambda v: is_real_number(v) and math.isfinite(v) and 0 < v <= MAX_VOXEL,
        "origin": lambda o: isinstance(o, list) and len(o) == 3 and all(is_real_number(x) and math.isfinite(x)
                                                                         and abs(x) <= MAX_ORIGIN for x in o),
        "robot": lambda s: isinstance(s, str),
        "frame_a": lambda s: isinstance(s, str),
        "frame_b": lambda s: isinstance(s, str),
        "samples": lambda n: int_within(n, 1, 10**12),
        "axis": lambda a: a in AXES,
        "rows": lambda r: isinstance(r, list) and 1 <= len(r) <= 6 and all(int_within(i, 0, 5) for i in r),
        "outside": lambda n: int_within(n, 0, 10**12),
    }
    valid = {"dims": f"3 positive integers with at most {MAX_VOXELS:,} voxels in all", "nq": "an integer >= 0",
             "nv": "an integer >= 0", "voxel": f"a positive number of at most {MAX_VOXEL:g} [m]",
             "origin": "3 numbers within 1e6 m",
             "samples": "an integer >= 1", "axis": "'x', 'y' or 'z'", "rows": "row indices 0..5",
             "outside": "an integer >= 0"}
    for field_name, ok in checks.items():
        if field_name not in m or not ok(m[field_name]):
            raise MapError(f"{name}: its metadata field {field_name!r} is {short(m.get(field_name, 'missing'))}, "
                           f"expected {valid.get(field_name, 'text')}")
    check_joint_fields(m, name)
    if "support" in m and not _support_ok(m["support"], m["samples"]):
        raise MapError(f"{name}: its metadata field 'support' is {short(m['support'])}, expected null or "
                       "{contacts: [{frame, points: [[x, y, z], ...]}, ...], margin >= 0, plane, held: [names], "
                       "rejected: 0..samples}")


def check_joint_fields(m: dict[str, Any], name: str) -> None:
    """The fields a map records of its robot's joints, where present (``q_names``: nq names;
    ``locked``: {joint: a finite number or a list of them}); `name` names the file in the error.
    `m["nq"]` has been checked.

    Raises:
        MapError: naming the field and what it should be.
    """
    if "q_names" in m and not (isinstance(m["q_names"], list) and len(m["q_names"]) == m["nq"]
                               and all(isinstance(n, str) for n in m["q_names"])):
        raise MapError(f"{name}: its metadata field 'q_names' is {short(m['q_names'])}, expected nq names")
    if "locked" in m and not (isinstance(m["locked"], dict) and all(map(joint_value_ok, m["locked"].values()))):
        raise MapError(f"{name}: its metadata field 'locked' is {short(m['locked'])}, expected {{joint: value}}")


def joint_value_ok(value: Any) -> bool:
    """A locked joint's recorded value: a finite number, or a non-empty list of them."""
    values = value if isinstance(value, list) else [value]
    return bool(values) and all(is_real_number(x) and math.isfinite(x) for x in values)


def _support_ok(s: Any, samples: int) -> bool:
    """A balance-aware map's support entry (:mod:`reljac.maps.balance`), or null."""
    if s is None:
        return True

    def finite(x: Any) -> bool:
        return is_real_number(x) and math.isfinite(x)

    def contact_ok(c: Any) -> bool:
        return isinstance(c, dict) and isinstance(c.get("frame"), str) and isinstance(c.get("points"), list) \
            and 1 <= len(c["points"]) <= 10_000 \
            and all(isinstance(p, list) and len(p) == 3 and all(finite(x) for x in p) for p in c["points"])

    return isinstance(s, dict) and isinstance(s.get("contacts"), list) and 1 <= len(s["contacts"]) <= 1_000 \
        and all(contact_ok(c) for c in s["contacts"]) and finite(s.get("margin")) and s["margin"] >= 0 \
        and isinstance(s.get("plane"), str) and isinstance(s.get("held"), list) \
        and all(isinstance(h, str) for h in s["held"]) and int_within(s.get("rejected"), 0, samples)


"""Capability map files that are truncated, corrupted or hostile, files that are not files (FIFOs,
link loops) given as map, SRDF or mesh, and the `reljac map` command's output (--out, --json)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import zipfile

import numpy as np
import pytest

import reljac
from reljac.apps.cli import main
from reljac.exceptions import CollisionError, MapError, SRDFError
from reljac.maps import capability_map, load_map, mapfile, seed_for
from reljac.maps.result import ARRAYS


@pytest.fixture(scope="module")
def small_map(planar):
    return capability_map(planar, "base_link", "tip", samples=5_000, voxel=0.2, seed=1, directions=8)


@pytest.fixture
def saved(small_map, tmp_path):
    return small_map.save(tmp_path / "good.npz")


def write_map(path, arrays: dict, metadata) -> None:
    """An .npz like CapabilityMap.save writes, with any arrays and metadata (JSON of anything)."""
    np.savez_compressed(path, metadata=np.array(json.dumps(metadata)), **arrays)


def arrays_of(cmap) -> dict:
    return {name: getattr(cmap, name) for name in ARRAYS}


# ----------------------------------------------------------------------------- corrupted files
def test_a_truncated_file_is_one_map_error(saved):
    data = saved.read_bytes()
    for keep in (10, len(data) // 3, len(data) // 2, len(data) - 30):
        saved.write_bytes(data[:keep])
        with pytest.raises(MapError, match=r"is not a readable capability map file \(BadZipFile"):
            load_map(saved)


@pytest.mark.slow
def test_every_flipped_byte_gives_the_same_map_or_one_map_error(saved, small_map):
    """A bit flip anywhere is caught (zip structure, CRC, .npy header, metadata), or it fell in a
    field that does not change the map (a time stamp): never another exception, never a wrong map."""
    data = bytearray(saved.read_bytes())
    caught = 0
    for position in range(0, len(data), max(1, len(data) // 300)):
        flipped = data.copy()
        flipped[position] ^= 0x10
        saved.write_bytes(bytes(flipped))
        try:
            loaded = load_map(saved)
        except MapError as exc:
            assert "\n" not in str(exc)
            caught += 1
        else:
            assert loaded == small_map, position
    assert caught > 250


@pytest.mark.parametrize("metadata, message", [
    ([1, 2, 3], "its metadata is a JSON list, not an object"),
    (42, "its metadata is a JSON int, not an object"),
    ("text", "its metadata is a JSON str, not an object"),
    (None, "its metadata is a JSON NoneType, not an object"),
])
def test_metadata_that_is_not_an_object_is_named(small_map, tmp_path, metadata, message):
    write_map(tmp_path / "m.npz", arrays_of(small_map), metadata)
    with pytest.raises(MapError, match=message):
        load_map(tmp_path / "m.npz")


@pytest.mark.parametrize("field, value, message", [
    ("dims", 5, r"field 'dims' is 5, expected 3 positive integers"),
    ("dims", [5, 5], r"field 'dims' is \[5, 5\]"),
    ("dims", [5, 5, -1], r"field 'dims' is \[5, 5, -1\]"),
    ("dims", [4096, 4096, 4096], r"field 'dims' is \[4096, 4096, 4096\], expected .* at most 33,554,432 voxels"),
    ("dims", [True, 5, 5], r"field 'dims' is \[True, 5, 5\]"),
    ("nq", "2", r"field 'nq' is '2', expected an integer >= 0"),
    ("voxel", -0.1, r"field 'voxel' is -0.1, expected a positive number"),
    ("voxel", 1e37, r"field 'voxel' is 1e\+37, expected a positive number of at most 1000"),  # (drawn as inf)
    ("origin", [0, 0], r"field 'origin' is \[0, 0\]"),
    ("frame_a", 3, r"field 'frame_a' is 3, expected text"),
    ("axis", "w", r"field 'axis' is 'w'"),
    ("format_version", 99, r"has format version 99; this reljac reads version 1"),
    ("format", "other", r"is not a reljac capability map \(format 'other'\)"),
    ("locked", [0.3], r"field 'locked' is \[0.3\], expected \{joint: value\}"),
    ("locked", {"j": []}, r"field 'locked' is \{'j': \[\]\}"),
    ("locked", {"j": [0.1, "x"]}, r"field 'locked' is \{'j': \[0.1, 'x'\]\}"),
    ("locked", {"j": True}, r"field 'locked' is \{'j': True\}"),
    ("locked", {"j": 1e400}, r"field 'locked' is \{'j': inf\}"),
])
def test_wrong_metadata_fields_are_named(small_map, tmp_path, field, value, message):
    write_map(tmp_path / "m.npz", arrays_of(small_map), {**small_map.metadata, field: value})
    with pytest.raises(MapError, match=message):
        load_map(tmp_path / "m.npz")


def _changed(array: np.ndarray, value) -> np.ndarray:
    out = array.copy()
    out.reshape(-1)[np.flatnonzero(out.reshape(-1) != 0)[0] if out.any() else 0] = value
    return out


@pytest.mark.parametrize("name, value, match", [
    ("best_q", np.nan, "not finite"), ("best_manipulability", np.nan, "not finite"),
    ("best_manipulability", -1.0, "not finite"), ("counts", -5, "negative counts"),
    ("coverage", np.uint64(1) << np.uint64(40), "bits beyond its 8 directions"),
])
def test_values_no_map_holds_are_refused(small_map, tmp_path, name, value, match):
    """An adversarial pass: a NaN configuration was a seed of NaN, coverage bits beyond the
    directions gave a reachability index of 2, negative counts made reached voxels unreached."""
    arrays = arrays_of(small_map)
    write_map(tmp_path / "m.npz", {**arrays, name: _changed(arrays[name], value)}, small_map.metadata)
    with pytest.raises(MapError, match=match):
        load_map(tmp_path / "m.npz")


def test_an_origin_beyond_1e6_m_is_refused(small_map, tmp_path):
    write_map(tmp_path / "m.npz", arrays_of(small_map), {**small_map.metadata, "origin": [1e308, 0.0, 0.0]})
    with pytest.raises(MapError, match="origin"):
        load_map(tmp_path / "m.npz")


def test_arrays_that_do_not_match_the_metadata_are_refused(small_map, tmp_path):
    arrays = arrays_of(small_map)
    for name, bad in (("counts", arrays["counts"][:-1]), ("best_q", arrays["best_q"][:-1]),
                      ("coverage", arrays["coverage"].astype(np.float64)), ("directions", np.zeros((65, 3))),
                      ("best_manipulability", np.zeros(3))):
        write_map(tmp_path / "m.npz", {**arrays, name: bad}, small_map.metadata)
        with pytest.raises(MapError, match=rf"its {name} array (is .* which does not match|inflates to)"):
            load_map(tmp_path / "m.npz")


def _bomb(path, small_map, inflated: int) -> None:
    """A valid small map whose counts member inflates to `inflated` bytes of zeros."""
    write_map(path, arrays_of(small_map), small_map.metadata)
    with zipfile.ZipFile(path) as archive:
        members = {i.filename: archive.read(i) for i in archive.infolist() if i.filename != "counts.npy"}
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<i8", "fortran_order": False,
                                                  "shape": (inflated // 8,)})
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        with archive.open("counts.npy", "w", force_zip64=True) as member:
            member.write(header.getvalue())
            block = bytes(2**20)
            for _ in range(inflated // len(block)):
                member.write(block)


@pytest.mark.slow
def test_a_decompression_bomb_is_refused_from_the_zip_headers(small_map, tmp_path, monkeypatch):
    path = tmp_path / "bomb.npz"
    _bomb(path, small_map, 64 * 2**20)
    assert path.stat().st_size < 2**20  # 64 MB of zeros in well under 1 MB
    inflated = []
    real_read = mapfile.npy_member

    def watched(archive, info, *args):
        inflated.append(info.filename)
        return real_read(archive, info, *args)

    monkeypatch.setattr(mapfile, "npy_member", watched)
    limit = small_map.counts.size * 8
    with pytest.raises(MapError, match=rf"its counts array inflates to 67,10\d,\d\d\d bytes, more than the "
                                       rf"{limit:,} its metadata \(dims \[\d+, \d+, \d+\], nq 2\) allows"):
        load_map(path)
    assert inflated == ["metadata.npy"]  # the metadata only: no array was inflated


def test_a_map_larger_than_the_memory_available_is_refused_before_reading(saved, monkeypatch):
    monkeypatch.setattr(mapfile, "available_bytes", lambda: 1000)
    with pytest.raises(MapError, match=r"holds [\d,]+ bytes of arrays, more than the 1,000 bytes of memory available"):
        load_map(saved)


def test_a_map_saved_and_loaded_is_unchanged_and_writable(saved, small_map):
    loaded = load_map(saved)
    assert loaded == small_map
    loaded.counts[0, 0, 0] += 1  # arrays of its own, not read-only views of a buffer


# ----------------------------------------------------------------------------- not regular files
def _not_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    return [(fifo, "is a FIFO \\(named pipe\\)"), (loop, "is a symbolic link loop"),
            (dangling, "is a symbolic link to a file that does not exist"), (tmp_path / "none", "does not exist"),
            (tmp_path, "is a directory")]


def test_a_fifo_or_a_link_loop_given_as_a_map_file_is_named(tmp_path):
    for path, what in _not_files(tmp_path):
        with pytest.raises(MapError, match=what):
            load_map(path)


def test_a_map_is_saved_only_into_a_regular_file(small_map, tmp_path):
    """CapabilityMap.save into a FIFO (it blocked until a reader came) or a missing folder (a bare
    FileNotFoundError): one MapError each."""
    os.mkfifo(tmp_path / "pipe.npz")
    with pytest.raises(MapError, match="pipe.npz' is a FIFO"):
        small_map.save(tmp_path / "pipe.npz")
    with pytest.raises(MapError, match="capability map"):
        small_map.save(tmp_path / "missing" / "m.npz")


@pytest.mark.slow
def test_a_fifo_or_a_link_loop_given_as_an_srdf_is_named(tmp_path):
    for path, what in _not_files(tmp_path):
        with pytest.raises(SRDFError, match=what):
            reljac.Robot.load("dual_arm", srdf=path)


def test_a_fifo_or_a_link_loop_given_as_a_mesh_is_named(tmp_path):
    from reljac.collision.shapes import mesh

    for path, what in _not_files(tmp_path):
        with pytest.raises(CollisionError, match=what):
            mesh(path)


# ----------------------------------------------------------------------------- the command
def run_main(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


MAP_ARGS = ("map", "planar_2link", "base_link", "tip", "--samples", "4000", "--voxel", "0.2", "--no-progress")


@pytest.mark.parametrize("out, message", [
    ("missing/m.npz", "--out: folder '{tmp}/missing' does not exist"),
    ("m.npz/", "--out: '{tmp}/m.npz/' is not a file name; give a file name ending in .npz"),
    ("m.npz", "--out: '{tmp}/m.npz' is not a file name; give a file name ending in .npz"),  # a folder
    ("", "--out: '{tmp}/' is not a file name; give a file name ending in .npz"),  # FOLDER.npz was written beside it
    ("notes.txt", "--out: '{tmp}/notes.txt' is a file that is not a map (.npz); give a file name ending in .npz"),
    # the map was computed, then its writing waited for a reader forever
    ("pipe.npz", "--out: '{tmp}/pipe.npz' is not a regular file (a FIFO, a socket or a device); give a file name "
                 "ending in .npz"),
])
def test_map_out_is_checked_before_any_sample(tmp_path, monkeypatch, out, message):
    import reljac.apps.capability as app

    (tmp_path / "m.npz").mkdir()
    (tmp_path / "notes.txt").write_text("kept")
    os.mkfifo(tmp_path / "pipe.npz")

    def never(*args, **kwargs):
        raise AssertionError("the map was computed")

    monkeypatch.setattr(app, "capability_map", never)
    code, stdout, err = run_main(*MAP_ARGS, "--out", f"{tmp_path}/{out}")
    assert code == 2 and stdout == "", err
    assert err == f"reljac: error: ReljacError: {message.format(tmp=tmp_path)}\n"


def test_map_json_prints_one_document_matching_the_saved_map(tmp_path):
    code, stdout, err = run_main(*MAP_ARGS, "--out", tmp_path / "m", "--json", "--workers", "2")
    assert code == 0 and err == "", err
    assert stdout.count("\n") == 1
    summary = json.loads(stdout)
    cmap = load_map(tmp_path / "m.npz")
    reached = cmap.reached
    assert summary["path"] == str(tmp_path / "m.npz")
    assert summary["reached"] == int(reached.sum()) > 10 and summary["voxels"] == reached.size
    assert summary["dims"] == cmap.metadata["dims"] and summary["voxel"] == 0.2 and summary["samples"] == 4000
    assert summary["coverage_index"]["max"] == float(cmap.coverage_index()[reached].max())
    assert summary["best_manipulability"]["median"] == float(np.median(cmap.best_manipulability[reached]))
    assert summary["scheduler"] == "2 threads" and summary["rows"] == [0, 1, 2] and summary["directions"] == 32
    assert summary["samples_per_second"] == pytest.approx(4000 / summary["seconds"])
    assert summary["outside"] == cmap.metadata["outside"] == 0


# ----------------------------------------------------------------------------- seed_for
@pytest.mark.parametrize("candidates", ["abc", float("nan"), 0, -3, 2.5, True, None])
def test_seed_for_refuses_bad_candidates(small_map, planar, candidates):
    T = reljac.relative_placement(planar, planar.neutral(), "base_link", "tip")
    with pytest.raises(MapError, match="candidates must be an integer >= 1"):
        seed_for(small_map, T, robot=planar, candidates=candidates)


def test_seed_for_takes_a_robot_by_name(small_map, planar):
    T = reljac.relative_placement(planar, [0.3, -0.4], "base_link", "tip")
    by_name = seed_for(small_map, T, robot="planar_2link", candidates=5)
    np.testing.assert_array_equal(by_name, seed_for(small_map, T, robot=planar, candidates=5))
    with pytest.raises(MapError, match="not of 'dual_arm'"):
        seed_for(small_map, T, robot="dual_arm")
    with pytest.raises(MapError, match="cmap must be a CapabilityMap"):
        seed_for("map.npz", T)


def test_a_map_of_the_robot_with_other_joints_locked_is_refused(tmp_path):
    """A map records the joint of each column of q and the locked joints' values: a map of the
    dual arm with left_joint1 locked was taken for one with right_joint1 locked (same name and
    nq), and its seeds put the tool 1 m from the target; locked elsewhere, as far."""
    arm = reljac.Robot.bundled("dual_arm")
    cmap = capability_map(arm.locked({"left_joint1": 0.0}), "left_tool", "right_tool", samples=2000, voxel=0.2, seed=1)
    loaded = load_map(cmap.save(tmp_path / "m.npz"))
    assert loaded.metadata["q_names"] == list(arm.locked(["left_joint1"]).q_names)
    T = reljac.relative_placement(arm, arm.neutral(), "left_tool", "right_tool")
    seed_for(loaded, T, robot=arm.locked({"left_joint1": 0.0}))  # the same robot: taken
    with pytest.raises(MapError, match="other joints free: its q holds \\['right_joint1'\\]"):
        seed_for(loaded, T, robot=arm.locked({"right_joint1": 0.0}))
    with pytest.raises(MapError, match="locked at \\{'left_joint1': 0.0\\}, not at \\{'left_joint1': 0.5\\}"):
        seed_for(loaded, T, robot=arm.locked({"left_joint1": 0.5}))
    metadata = dict(loaded.metadata)
    del metadata["q_names"], metadata["locked"]  # a map made before they were recorded: name and nq only
    old = tmp_path / "old.npz"
    np.savez_compressed(old, metadata=np.array(json.dumps(metadata)),
                        **{name: getattr(loaded, name) for name in ARRAYS})
    seed_for(load_map(old), T, robot=arm.locked({"right_joint1": 0.0}))

"""Scale: long chains, huge limits, Pinocchio data that does not fit, and check/analyze whose
memory does not grow with the number of samples."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import reljac
import reljac.apps.check
import reljac.memory
import reljac.workspace
from reljac.apps.cli import main
from reljac.exceptions import ModelTooLarge

pytestmark = pytest.mark.slow

ENV = dict(os.environ)  # subprocesses import the installed reljac (see conftest.py)


def chain_urdf(path: Path, n: int, *, lower: str = "-1", upper: str = "1", kind: str = "revolute") -> Path:
    links = "".join(f'<link name="l{i}"/>' for i in range(n + 1))
    joints = "".join(
        f'<joint name="j{i}" type="{kind}"><parent link="l{i - 1}"/><child link="l{i}"/>'
        f'<origin xyz="0 0 0.1" rpy="0.1 0 0"/><axis xyz="0 1 1"/>'
        f'<limit lower="{lower}" upper="{upper}" effort="1" velocity="1"/></joint>'
        for i in range(1, n + 1))
    path.write_text(f'<robot name="chain{n}">{links}{joints}</robot>')
    return path


def test_a_3000_link_chain_loads_and_prints_without_recursion(tmp_path, capsys):
    path = chain_urdf(tmp_path / "long.urdf", 3000)
    assert sys.getrecursionlimit() < 3000 * 2  # a recursive walk of the frame tree would fail
    robot = reljac.Robot.from_urdf(path)
    assert robot.nv == 3000
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "nq = 3000, nv = 3000" in out and out.rstrip().endswith("l3000 (BODY)")
    assert "[depth 6002] l3000" in out  # deep frames show their depth instead of 6000 spaces
    assert max(len(line) for line in out.splitlines()) < 400


def test_pinocchio_data_that_cannot_fit_is_a_clear_error(tmp_path):
    """pin.Data takes ~64 nv^3 bytes: 512 GB at nv = 2000."""
    robot = reljac.Robot.from_urdf(chain_urdf(tmp_path / "c.urdf", 2000))
    for make in (lambda: reljac.Kinematics(robot, robot.neutral()),
                 lambda: reljac.relative_jacobian(robot, robot.neutral(), "l0", "l2000"),
                 lambda: robot.data):
        with pytest.raises(ModelTooLarge, match=r"nv = 2000: .* about 5\d\d GB") as info:
            make()
        assert isinstance(info.value, MemoryError) and isinstance(info.value, reljac.ReljacError)
    code = subprocess.run([sys.executable, "-m", "reljac.apps.cli", "jacobian", str(tmp_path / "c.urdf"), "l0", "l9"],
                          capture_output=True, text=True, env=ENV, timeout=120)
    assert code.returncode == 2 and code.stderr.count("\n") == 1 and "ModelTooLarge" in code.stderr


def test_the_data_size_estimate_matches_pinocchio_and_is_enforced(tmp_path, monkeypatch):
    import resource

    robot = reljac.Robot.from_urdf(chain_urdf(tmp_path / "c.urdf", 60))
    estimate = reljac.memory.data_bytes(robot.nv, robot.model.nframes)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    datas = [robot.new_data() for _ in range(20)]  # 20 of them: RSS grows by 20 x the real size
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    if grown > 0:  # when the peak was already higher, nothing to learn
        assert 0.5 * grown < 20 * estimate < 3 * grown + 20 * 2**20, (grown, estimate)
    del datas
    big = reljac.Robot.from_urdf(chain_urdf(tmp_path / "b.urdf", 120))  # ~110 MB: above the check threshold
    monkeypatch.setattr(reljac.memory, "available_bytes", lambda: 50 * 2**20)
    with pytest.raises(ModelTooLarge, match=r"nv = 120: .*MB.*more than the 52.4 MB of memory available"):
        big.new_data()


def test_limits_near_the_float_range_give_finite_configurations(tmp_path):
    robot = reljac.Robot.from_urdf(chain_urdf(tmp_path / "wide.urdf", 6, lower="-1.7e308", upper="1.7e308",
                                              kind="prismatic"))
    rng = np.random.default_rng(3)
    for _ in range(50):
        q = robot.random_configuration(rng)
        assert np.isfinite(q).all() and np.all(np.abs(q) <= 1e100)
        J = reljac.relative_jacobian(robot, q, "l0", "l6")
        T = reljac.relative_placement(robot, q, "l0", "l6")
        assert np.isfinite(J).all() and np.isfinite(T.homogeneous).all()
    summary = reljac.workspace.workspace_summary(robot, "l0", "l6", samples=20, backend="pinocchio")
    assert all(np.isfinite(v) for v in summary.smallest_singular_value.values())


def _peak_rss_of_check(path: Path, samples: int) -> int:
    code = ("import resource, sys; from reljac.apps.cli import main; "
            f"rc = main(['check', {str(path)!r}, '--samples', '{samples}', '--frames', 'l0', 'l80']); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return int(proc.stdout.strip().splitlines()[-1])


def test_check_memory_does_not_grow_with_the_samples(tmp_path):
    """nv = 80: one pin.Data is ~33 MB; with one Data per sample, 16 samples took 16 of them."""
    path = chain_urdf(tmp_path / "c80.urdf", 80)
    few, many = _peak_rss_of_check(path, 2), _peak_rss_of_check(path, 16)
    assert many < few * 1.25 + 20_000, (few, many)  # kB


def test_streamed_chunks_give_the_same_summary_as_one_chunk(monkeypatch):
    """The Pinocchio backend draws the same configurations whatever the chunk size."""
    robot = reljac.Robot.bundled("dual_arm")
    whole = reljac.workspace.workspace_summary(robot, "left_tool", "right_tool", samples=60, seed=4, worst=7,
                                              backend="pinocchio")
    monkeypatch.setattr(reljac.workspace, "CHUNK_BYTES", 1)  # one sample per chunk
    streamed = reljac.workspace.workspace_summary(robot, "left_tool", "right_tool", samples=60, seed=4, worst=7,
                                                 backend="pinocchio")
    assert streamed.index == whole.index and streamed.condition_number == whole.condition_number
    assert [s.smallest_singular_value for s in streamed.closest_to_singular] == \
        [s.smallest_singular_value for s in whole.closest_to_singular]
    for a, b in zip(streamed.closest_to_singular, whole.closest_to_singular, strict=True):
        np.testing.assert_array_equal(a.q, b.q)


def test_check_in_chunks_still_compares_every_sample(monkeypatch):
    monkeypatch.setattr(reljac.apps.check, "CHUNK_BYTES", 1)
    report = reljac.apps.check.check_urdf("hand", samples=5, max_pairs=20)
    assert report.ok and report.samples == 5
    assert reljac.apps.check.chunk_size(reljac.Robot.bundled("hand"), _ref("hand"), 40, 5) == 1


def _ref(name):
    from reljac.reference import ReferenceRobot

    return ReferenceRobot.from_urdf_string(reljac.Robot.bundled(name).urdf_text)


def test_sample_counts_beyond_the_documented_range_are_refused():
    robot = reljac.Robot.bundled("planar_2link")
    with pytest.raises(reljac.TaskError, match="at most 10000000"):
        reljac.workspace.workspace_summary(robot, "universe", "tip", samples=10**9)
    with pytest.raises(reljac.ReljacError, match="at most 1000000"):
        reljac.apps.check.check_urdf("planar_2link", samples=10**9)

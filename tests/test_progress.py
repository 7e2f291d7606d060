"""Progress bars: on stderr only from a terminal (CI unset) or with --progress, never on stdout,
never in pipes by default, and erased before an error or interruption line (which stays one)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import reljac
from reljac.apps import bench
from reljac.apps.check import check_urdf
from reljac.workspace import workspace_summary

pytestmark = pytest.mark.slow

RELJAC = [sys.executable, "-m", "reljac.apps.cli"]


def env(**extra) -> dict:
    out = {k: v for k, v in os.environ.items() if k != "CI"}
    out.update(extra)
    return out


def screen(raw: str) -> list[str]:
    """The non-blank lines a terminal shows for `raw`: '\\r' returns to column 0 and later text
    overwrites earlier text (what a progress bar relies on)."""
    lines = []
    for line in raw.split("\n"):
        shown: list[str] = []
        for segment in line.split("\r"):
            shown[: len(segment)] = segment
        text = "".join(shown).rstrip()
        if text:
            lines.append(text)
    return lines


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run reljac; stdout and stderr decoded without newline translation (keeps every '\r')."""
    result = subprocess.run(RELJAC + args, capture_output=True, timeout=120, **kwargs)
    result.stdout, result.stderr = result.stdout.decode(), result.stderr.decode()
    return result


def run_with_terminal_stderr(args: list[str], environment: dict) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (stdout a pipe); returns (code, stdout, stderr).
    The terminal is read while the command runs (its buffer is gone once the command exits)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a new pty has 0 columns
    proc = subprocess.Popen(RELJAC + args, stdout=subprocess.PIPE, stderr=follower, env=environment)
    os.close(follower)
    chunks: list[bytes] = []
    reader = threading.Thread(target=read_terminal, args=(leader, chunks))
    reader.start()
    out = proc.stdout.read()
    code = proc.wait(timeout=120)
    reader.join(timeout=10)
    os.close(leader)
    return code, out.decode(), b"".join(chunks).decode(errors="replace")


def read_terminal(fd: int, chunks: list[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the command closed its end
            return
        if not data:
            return
        chunks.append(data)


# ---------------------------------------------------------------------------- the hooks count their work
def test_check_and_analyze_report_every_sample():
    done = []
    check_urdf("hand", samples=13, progress=done.append)
    assert sum(done) == 13
    done.clear()
    robot = reljac.Robot.bundled("planar_2link")
    workspace_summary(robot, "base_link", "tip", 1234, backend="pinocchio", progress=done.append)
    assert sum(done) == 1234


def test_bench_reports_the_units_it_announces():
    done = []
    for what in ("jacobian", "reference"):
        bench.results(what, quick=True, progress=done.append)
    assert sum(done) == bench.units("jacobian", quick=True) + bench.units("reference", quick=True) == 8  # jacobian: 5 cases and the per-robot table; reference: 2 paths


# ---------------------------------------------------------------------------- when bars show
def test_no_bar_in_a_pipe_by_default():
    result = run(["check", "planar_2link", "--samples", "3", "--json"], env=env())
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["ok"] is True


def test_asked_bar_goes_to_stderr_and_leaves_stdout_clean():
    result = run(["check", "planar_2link", "--samples", "7", "--json", "--progress"], env=env(CI="true"))
    assert result.returncode == 0
    assert "check:" in result.stderr and "/7 [" in result.stderr and "sample/s" in result.stderr
    assert screen(result.stderr) == []  # erased when done
    assert json.loads(result.stdout)["samples"] == 7


def test_a_terminal_gets_a_bar_unless_ci_is_set_or_no_progress():
    args = ["analyze", "dual_arm", "left_tool", "right_tool", "--samples", "120000", "--json"]  # > 1 s: past the 0.5 s delay
    runs = [(args, env()), (args, env(CI="1")), (args + ["--no-progress"], env())]
    with ThreadPoolExecutor(len(runs)) as pool:  # three commands, each on its own terminal, side by side
        (code, out, err), *quiet = pool.map(lambda run: run_with_terminal_stderr(*run), runs)
    assert code == 0 and json.loads(out)["samples"] == 120000
    assert "analyze:" in err and "/120000 [" in err and screen(err) == []  # drawn, then erased
    for code, out, err in quiet:  # CI set; --no-progress
        assert code == 0 and err == "" and json.loads(out)["samples"] == 120000


def test_bench_tables_are_printed_apart_from_the_bar():
    result = run(["bench", "jacobian", "--quick", "--progress"], env=env())
    assert result.returncode == 0
    assert "6/6" in result.stderr and "it/s" not in result.stdout and "unit/s" not in result.stdout
    assert result.stdout.startswith("relative Jacobians on dual_arm")


def test_headless_demo_bar_counts_steps_and_keeps_its_table_on_stdout():
    result = run(["demo", "hand", "--headless", "--duration", "2", "--progress"], env=env())
    assert result.returncode == 0, result.stderr
    assert "demo hand" in result.stderr and "step/s" in result.stderr and screen(result.stderr) == []
    assert "200 steps, 2.00 s simulated" in result.stdout and "step/s" not in result.stdout
    plain = run(["demo", "hand", "--headless", "--duration", "2"], env=env())
    assert plain.returncode == 0 and plain.stderr == ""


def test_dual_arm_demo_bar_counts_the_crossing_phase():
    result = run(["demo", "dual-arm", "--headless", "--duration", "1", "--crossing", "0.5", "--progress"], env=env())
    assert result.returncode == 0, result.stderr
    assert "/150 [" in result.stderr and "150 steps, 1.50 s simulated" in result.stdout


# ---------------------------------------------------------------------------- errors stay one line
def test_an_error_after_the_bar_appeared_is_one_line():
    result = run(["analyze", "dual_arm", "left_tool", "right_tol", "--progress"], env=env())
    assert result.returncode == 2
    assert "analyze" in result.stderr  # the bar was drawn before the frames were looked up
    lines = screen(result.stderr)
    assert len(lines) == 1 and lines[0].startswith("reljac: error: FrameNotFound:"), lines


def test_ctrl_c_during_a_bar_is_one_line():
    proc = subprocess.Popen(RELJAC + ["check", "dual_arm", "--samples", "10000", "--progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    seen = b""
    deadline = time.monotonic() + 60
    while b"sample/s" not in seen and time.monotonic() < deadline:  # the bar has moved
        seen += os.read(proc.stderr.fileno(), 4096)
    proc.send_signal(signal.SIGINT)
    out, rest = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert screen((seen + rest).decode()) == ["reljac: interrupted"]
    assert out == b""


@pytest.mark.parametrize("argv", [["check", "planar_2link", "--progress", "--samples", "0"],
                                  ["bench", "--progress=yes"]])
def test_bad_progress_options_are_one_line(argv):
    result = run(argv, env=env())
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1

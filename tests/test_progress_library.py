"""The library draws a progress bar on a terminal or where asked, never by default into a pipe
or a log (issue 43: ``solve_many`` with 1,000 problems drew its bar into pipes and logs).

Each case runs the library calls in a fresh interpreter whose standard error is a pipe, or a
pseudo-terminal, and reads what reached it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from test_progress import env, read_terminal, screen

pytestmark = pytest.mark.slow

SOLVE_MANY = textwrap.dedent("""
    import sys
    import numpy as np
    import reljac
    from reljac.ik import Solver, RelativePositionTask
    progress = eval(sys.argv[1])
    robot = reljac.Robot.bundled("planar_2link")
    task = RelativePositionTask("base_link", "tip")
    task.set_target(np.array([1.0, 0.5, 0.0]))
    solver = Solver(robot, [[task]], max_iters=3, restarts=0)
    angles = np.linspace(0.0, 1.0, 1000)
    targets = [np.array([1.2 * np.cos(a), 1.2 * np.sin(a), 0.0]) for a in angles]
    results = solver.solve_many(None, targets, workers=2, progress=progress)
    print(len(results), "solved")
""")

# Every library call that does long work with a count to report (the command line draws their
# bars from their `progress` hooks): none writes to stderr by itself.
LONG_CALLS = textwrap.dedent("""
    import numpy as np
    import reljac
    from reljac.maps import capability_map
    from reljac.workspace import workspace_summary
    robot = reljac.Robot.bundled("dual_arm")
    capability_map(robot, "left_tool", "right_tool", samples=50_000, voxel=0.05, workers=2)
    workspace_summary(robot, "left_tool", "right_tool", 2000)
    print("done")
""")


def run_python(code: str, *args: str, terminal: bool, **extra_env: str) -> tuple[int, str, str]:
    """Run `code` in a fresh interpreter, stderr a pipe or a pseudo-terminal: (code, stdout, stderr)."""
    argv = [sys.executable, "-c", code, *args]
    environment = env(**extra_env)
    if not terminal:
        proc = subprocess.run(argv, capture_output=True, timeout=300, env=environment)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    import fcntl
    import pty
    import struct
    import termios
    import threading

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc2 = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=follower, env=environment)
    os.close(follower)
    chunks: list[bytes] = []
    reader = threading.Thread(target=read_terminal, args=(leader, chunks))
    reader.start()
    out = proc2.stdout.read()
    code = proc2.wait(timeout=300)
    reader.join(timeout=10)
    os.close(leader)
    return code, out.decode(), b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_solve_many_draws_no_bar_into_a_pipe_by_default(backend):
    code, out, err = run_python(SOLVE_MANY, "None", terminal=False, RELJAC_BACKEND=backend)
    assert code == 0 and out.strip() == "1000 solved", err
    assert err == "", err[:300]


def test_solve_many_draws_its_bar_on_a_terminal_unless_ci_is_set():
    code, out, err = run_python(SOLVE_MANY, "None", terminal=True)
    assert code == 0 and out.strip() == "1000 solved"
    assert any(line.startswith("solve_many: 100%") and "1000/1000" in line for line in screen(err)), err[-300:]
    code, out, err = run_python(SOLVE_MANY, "None", terminal=True, CI="true")
    assert code == 0 and err.strip() == "", err[-300:]


def test_solve_many_draws_its_bar_where_asked_and_never_when_told_not_to():
    code, _, err = run_python(SOLVE_MANY, "True", terminal=False)
    assert code == 0 and "1000/1000" in err, err[-300:]
    code, _, err = run_python(SOLVE_MANY, "False", terminal=True)
    assert code == 0 and err.strip() == "", err[-300:]


def test_no_long_library_call_writes_to_a_pipe():
    code, out, err = run_python(LONG_CALLS, terminal=False)
    assert code == 0 and out.strip() == "done", err
    assert err == "", err[:300]

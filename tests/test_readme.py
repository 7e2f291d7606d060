"""Every snippet of README.md runs as written.

* Each ```python block runs alone in a fresh interpreter (a reader copies one block, not the
  page), from a scratch folder, and must exit 0 without writing to stderr anything but
  warnings. The browser-view block starts a real local meshcat server, as tests/test_viz.py does.
* Each ```bash block is either run here (the virtual-environment step) or run verbatim by
  .ci/run (the Quick start's commands, the docs build): a new bash block must be added to one.
* Blocks without a language (the command-line synopsis) are not code.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
BLOCKS = [(m.group(1), m.group(2), README.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(README)]
PYTHON = [(code, line) for lang, code, line in BLOCKS if lang == "python"]
BASH = [(code, line) for lang, code, line in BLOCKS if lang == "bash"]
RUN_HERE = {"python3 -m venv .venv && . .venv/bin/activate"}


def test_the_readme_has_its_snippets():
    assert len(PYTHON) >= 5 and len(BASH) >= 3
    assert {lang for lang, _, _ in BLOCKS} <= {"python", "bash", ""}, "a block in a language nobody runs"


@pytest.mark.parametrize("code, line", PYTHON, ids=[f"line{line}" for _, line in PYTHON])
def test_python_snippet_runs_as_written(code, line, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELJAC_")}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, f"README.md line {line}:\n{result.stderr}"
    problems = [s for s in result.stderr.splitlines() if s.strip() and "Warning" not in s
                and not s.startswith("reljac viewer of robot")]
    assert not problems, f"README.md line {line} wrote to stderr:\n{result.stderr}"


@pytest.mark.parametrize("code, line", BASH, ids=[f"line{line}" for _, line in BASH])
def test_bash_snippet_is_run_here_or_by_ci(code, line):
    ci = (ROOT / ".ci" / "run").read_text()
    command = code.strip()
    assert command in RUN_HERE or command in ci, (
        f"README.md line {line}: {command!r} is neither run by tests/test_readme.py nor by .ci/run")


def test_the_virtual_environment_step_works_as_written(tmp_path):
    """The set-up line, then the environment's Python is the one on PATH."""
    (command,) = RUN_HERE
    script = f"{command} && python -c 'import sys; print(sys.prefix)'"
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).resolve() == (tmp_path / ".venv").resolve()
    assert (tmp_path / ".venv" / "bin" / "pip").exists()


def test_the_quick_start_is_two_commands_run_by_ci():
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [code.strip() for lang, code in re.findall(r"^```(\w*)\n(.*?)^```$", quick, re.S | re.M)]
    assert commands == ['pip install . && reljac demo dual-arm', 'pip install ".[test]" && pytest']
    ci = (ROOT / ".ci" / "run").read_text()
    assert all(c in ci for c in commands)


@pytest.mark.parametrize("dt", [0.01, 0.002])
@pytest.mark.parametrize("k", [0.3, 1.0])
def test_a_per_step_gain_k_is_reljac_gain_k_over_dt(k, dt):
    """The README's gains paragraph: with gain k / dt [1/s], one step removes the fraction k of a
    task's error (a small error: the first-order step is exact to O(e^2); nothing saturates)."""
    import numpy as np

    import reljac
    from reljac.ik import Controller, RelativePositionTask

    robot = reljac.Robot.bundled("dual_arm")
    q0 = robot.random_configuration(3)
    kin = reljac.Kinematics(robot, q0)
    task = RelativePositionTask("left_tool", "right_tool", gain=k / dt)
    task.set_target(kin.relative_placement("left_tool", "right_tool").translation + np.array([1e-4, -2e-4, 1e-4]))
    before = task.error_norms(kin)["position"]
    after = task.error_norms(reljac.Kinematics(robot, Controller(robot, [[task]], dt=dt).step(q0)))["position"]
    assert after / before == pytest.approx(1 - k, abs=1e-3)

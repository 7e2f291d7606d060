"""Every snippet of README.md and of the documentation's pages (docs/**/*.md: the guide) runs as written.

* Each ```python block runs alone in a fresh interpreter (a reader copies one block, not the
  page), from a scratch folder, and must exit 0 without writing to stderr anything but
  warnings. The browser-view block starts a real local meshcat server, as tests/test_viz.py does.
* Each ```bash block is either run here (the virtual-environment step) or run verbatim by
  .ci/run (the Quick start's commands, the docs build): a new bash block must be added to one.
* Blocks without a language (the command-line synopsis) and ```text and ```toml blocks (a
  command's output, a file's contents) are not code.

The python blocks and the virtual-environment step start together when the module's first test
runs (helpers.SideBySide: each still alone in a fresh interpreter and scratch folder); each test
checks its own.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from helpers import SideBySide, selected_tests

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
# docs/guide/carrying.md's blocks build on each other: tests/test_docs_balance.py runs them in order
# in one namespace
IN_ORDER = {ROOT / "docs" / "guide" / "carrying.md"}
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if p not in IN_ORDER)]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)


def blocks(path: Path) -> list[tuple[str, str, str]]:
    """(language, code, "PAGE:LINE") of every fenced block of a page."""
    text, name = path.read_text(), path.relative_to(ROOT).as_posix()
    return [(m.group(1), m.group(2), f"{name}:{text.count(chr(10), 0, m.start()) + 1}") for m in FENCE.finditer(text)]


BLOCKS = [block for page in PAGES for block in blocks(page)]
PYTHON = [(code, where) for lang, code, where in BLOCKS if lang == "python"]
BASH = [(code, where) for lang, code, where in BLOCKS if lang == "bash"]
RUN_HERE = {"python3 -m venv .venv && . .venv/bin/activate"}


def test_the_pages_have_their_snippets():
    """Issue 27 moved the README's guide into docs/guide/: its 13 python blocks are there, the README
    keeps two of its own; none may go missing unnoticed."""
    readme = [where for _, where in PYTHON if where.startswith("README.md:")]
    guide = [where for _, where in PYTHON if where.startswith("docs/guide/")]
    assert len(readme) >= 2 and len(guide) >= 13 and len(BASH) >= 3, (readme, guide, BASH)
    assert {lang for lang, _, _ in BLOCKS} <= {"python", "bash", "", "text", "toml"}, "a block in a language nobody runs"


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    """The runs of the snippets selected in this module, started side by side: {key: scratch folder}
    and their results."""
    started, folders = SideBySide(), {}
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELJAC_")}
    for item in selected_tests(request):
        if item.originalname == "test_python_snippet_runs_as_written":
            code, where = item.callspec.params["code"], item.callspec.params["where"]
            folders[where] = tmp_path_factory.mktemp(re.sub(r"\W", "_", where))
            started.start(where, [sys.executable, "-c", code], cwd=folders[where], env=env, timeout=120)
        elif item.originalname == "test_the_virtual_environment_step_works_as_written":
            (command,) = RUN_HERE
            folders["venv"] = tmp_path_factory.mktemp("venv")
            script = f"{command} && python -c 'import sys; print(sys.prefix)'"
            started.start("venv", ["bash", "-c", script], cwd=folders["venv"], timeout=300)
    yield started, folders
    started.close()


@pytest.mark.parametrize("code, where", PYTHON, ids=[where for _, where in PYTHON])
def test_python_snippet_runs_as_written(code, where, runs):
    result = runs[0].result(where)  # `code` run in a fresh interpreter, from its own scratch folder
    assert result.returncode == 0, f"{where}:\n{result.stderr}"
    problems = [s for s in result.stderr.splitlines() if s.strip() and "Warning" not in s
                and not s.startswith("reljac viewer of robot")]
    assert not problems, f"{where} wrote to stderr:\n{result.stderr}"


@pytest.mark.parametrize("code, where", BASH, ids=[where for _, where in BASH])
def test_bash_snippet_is_run_here_or_by_ci(code, where):
    ci = (ROOT / ".ci" / "run").read_text()
    command = code.strip()
    assert command in RUN_HERE or command in ci, (
        f"{where}: {command!r} is neither run by tests/test_readme.py nor by .ci/run")


def test_the_virtual_environment_step_works_as_written(runs):
    """The set-up line, then the environment's Python is the one on PATH."""
    result, tmp_path = runs[0].result("venv"), runs[1]["venv"]
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
    """The gains paragraph (docs/guide/controller.md): with gain k / dt [1/s], one step removes the fraction k of a
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

"""Every example runs headless in a subprocess, ends by itself, and prints what it promises.

The examples' subprocesses start together when the module's first test runs (helpers.SideBySide:
each still a fresh process with its own arguments) and each test checks its own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from helpers import SideBySide, selected_tests

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXPECTED = {  # example -> (extra arguments, text its output must contain)
    "dual_arm_tracking.py": ([], "max position error of 'pose of left_tool'"),
    "hand_pinch.py": ([], "middle_tip: pinched"),
    "analyze_urdf.py": ([], "singular values of J_ab"),
    "self_check.py": ([], "all checks passed"),
    "tiago_dual_carry.py": ([], "with 84 joints locked: nv = 17"),
    "tiago_dual_bounded_carry.py": ([], "level 0 (grip): met; rows on a bound: grip[0]"),
    "talos_carry.py": ([], "reference posture 'half_sitting' from talos.srdf"),
    "allegro_pinch.py": ([], "ring: pinched"),
    "arm_analysis.py": ([], "panda_joint1: "),
    "talos_balance.py": ([], "reach limited by: support region (edge"),
    "talos_bounded_levels.py": ([], "closest collision pair"),
}
NEEDS_ROBOTS = {"tiago_dual_carry.py", "tiago_dual_bounded_carry.py", "talos_carry.py", "allegro_pinch.py",
                "arm_analysis.py", "talos_balance.py", "talos_bounded_levels.py"}


def test_every_example_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


def have_robots() -> bool:
    from reljac.robots import example_robot_data_dir

    return example_robot_data_dir() is not None


# Examples whose headless run is the one with --headless (not RELJAC_HEADLESS=1; the other viewer
# examples keep that path tested): the run tests/test_docs_figures.py quotes and the carried box's
# check reads too (helpers.run_once_per_session: one run for the three tests and both modules).
FLAG_RUNS = {"tiago_dual_carry.py", "talos_carry.py", "talos_balance.py", "talos_bounded_levels.py"}


def commands(test: str, name: str | None) -> tuple[object, list, dict] | None:
    """(key, argv, subprocess.run keywords) of the run a test checks; None for a test without one.
    A key ("flag", name) is the example's run with --headless, shared with tests/test_docs_figures.py."""
    if test == "test_example_runs_headless" and name not in FLAG_RUNS:  # headless through the environment
        argv = [sys.executable, str(EXAMPLES / name), *EXPECTED[name][0]]
        return ("env", name), argv, {"env": dict(os.environ, RELJAC_HEADLESS="1"), "timeout": 60}
    if test in ("test_example_runs_headless", "test_carried_boxes_stay_rigid",
                "test_examples_without_a_viewer_take_the_headless_flag"):
        return ("flag", name), [sys.executable, str(EXAMPLES / name), "--headless"], {"timeout": 600}
    if test == "test_analyze_urdf_takes_a_path":
        urdf = Path(__file__).resolve().parent.parent / "urdf" / "hand.urdf"
        return "path", [sys.executable, str(EXAMPLES / "analyze_urdf.py"), str(urdf)], {"timeout": 60}
    return None


@pytest.fixture(scope="module")
def runs(request):
    """The example runs of the tests selected in this module, started side by side."""
    started = SideBySide()
    robots = have_robots()
    for item in selected_tests(request):
        name = item.callspec.params.get("name") if hasattr(item, "callspec") else None
        command = commands(item.originalname, name)
        if command is not None and (name not in NEEDS_ROBOTS or robots):
            key, argv, kwargs = command
            if key in started:
                continue
            if key[0] == "flag":
                started.start_shared(key, argv, **kwargs)
            else:
                started.start(key, argv, **kwargs)
    yield started
    started.close()


def check_run(runs, key: tuple[str, str]) -> None:
    """The run `key` (how, example) ended well and printed what its example promises."""
    if key[1] in NEEDS_ROBOTS and not have_robots():
        pytest.skip("needs example-robot-data")
    result = runs.result(key)
    assert result.returncode == 0, result.stderr
    assert EXPECTED[key[1]][1] in result.stdout


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_headless(name, runs):
    check_run(runs, ("flag" if name in FLAG_RUNS else "env", name))


@pytest.mark.parametrize("name", ["analyze_urdf.py", "arm_analysis.py"])
def test_examples_without_a_viewer_take_the_headless_flag(name, runs):
    """The README says every example takes --headless: these two read it as a robot name."""
    check_run(runs, ("flag", name))


def test_analyze_urdf_takes_a_path(runs):
    result = runs.result("path")
    assert result.returncode == 0, result.stderr
    assert "robot 'hand'" in result.stdout


@pytest.mark.parametrize("name", ["tiago_dual_carry.py", "talos_carry.py"])
def test_carried_boxes_stay_rigid(name, runs):
    """The box's relative pose is held at the top level: its error stays far below a millimetre
    while the lead hand moves by 10-15 cm."""
    if not have_robots():
        pytest.skip("needs example-robot-data")
    result = runs.result(("flag", name))
    assert result.returncode == 0, result.stderr
    box = [line for line in result.stdout.splitlines() if " in " in line and "max" in line]
    assert box and all(float(line.split(": ")[1].split(" mm")[0]) < 0.1 for line in box), result.stdout
    if name == "talos_carry.py":
        assert "the box rose by 150.0 mm" in result.stdout

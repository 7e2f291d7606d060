"""Every example runs headless in a subprocess, ends by itself, and prints what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXPECTED = {  # example -> (extra arguments, text its output must contain)
    "dual_arm_tracking.py": ([], "max position error of 'pose of left_tool'"),
    "hand_pinch.py": ([], "middle_tip: pinched"),
    "analyze_urdf.py": ([], "singular values of J_ab"),
    "self_check.py": ([], "all checks passed"),
    "tiago_dual_carry.py": ([], "with 84 joints locked: nv = 17"),
    "talos_carry.py": ([], "reference posture 'half_sitting' from talos.srdf"),
    "allegro_pinch.py": ([], "ring: pinched"),
    "arm_analysis.py": ([], "panda_joint1: "),
    "talos_balance.py": ([], "reach limited by: support region (edge"),
}
NEEDS_ROBOTS = {"tiago_dual_carry.py", "talos_carry.py", "allegro_pinch.py", "arm_analysis.py", "talos_balance.py"}


def test_every_example_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_headless(name):
    if name in NEEDS_ROBOTS:
        from reljac.robots import example_robot_data_dir

        if example_robot_data_dir() is None:
            pytest.skip("needs example-robot-data")
    args, expected = EXPECTED[name]
    env = dict(os.environ, RELJAC_HEADLESS="1")
    result = subprocess.run([sys.executable, str(EXAMPLES / name), *args], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout


def test_analyze_urdf_takes_a_path():
    urdf = Path(__file__).resolve().parent.parent / "urdf" / "hand.urdf"
    result = subprocess.run([sys.executable, str(EXAMPLES / "analyze_urdf.py"), str(urdf)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "robot 'hand'" in result.stdout


@pytest.mark.parametrize("name", ["tiago_dual_carry.py", "talos_carry.py"])
def test_carried_boxes_stay_rigid(name):
    """The box's relative pose is held at the top level: its error stays far below a millimetre
    while the lead hand moves by 10-15 cm."""
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    result = subprocess.run([sys.executable, str(EXAMPLES / name), "--headless"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    box = [line for line in result.stdout.splitlines() if " in " in line and "max" in line]
    assert box and all(float(line.split(": ")[1].split(" mm")[0]) < 0.1 for line in box), result.stdout
    if name == "talos_carry.py":
        assert "the box rose by 150.0 mm" in result.stdout

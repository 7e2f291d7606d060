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
}


def test_every_example_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_headless(name):
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

"""The command line: outputs carry the library's numbers, benches print their tables."""

from __future__ import annotations

import re

import numpy as np

import reljac
from reljac.apps.cli import main


def test_info_lists_joints_limits_and_the_frame_tree(capsys):
    assert main(["info", "hand"]) == 0
    out = capsys.readouterr().out
    assert "nq = 12, nv = 12" in out
    assert "mimic: index_dip = 0.8 * index_pip + 0" in out
    assert re.search(r"^\s+palm \(BODY\)$", out, re.M)
    assert main(["info", "--list"]) == 0
    assert "dual_arm" in capsys.readouterr().out


def test_jacobian_prints_the_relative_jacobian(capsys):
    assert main(["jacobian", "planar_2link", "base_link", "tip", "--q", "0.3", "0.9", "--precision", "6"]) == 0
    out = capsys.readouterr().out
    J = reljac.relative_jacobian(reljac.Robot.bundled("planar_2link"), np.array([0.3, 0.9]), "base_link", "tip")
    rows = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in out.splitlines()
            if line.startswith("joint")}
    np.testing.assert_allclose(rows["joint1"], J[:, 0], atol=1e-6)
    np.testing.assert_allclose(rows["joint2"], J[:, 1], atol=1e-6)


def test_jacobian_of_a_joint_state_and_bad_names(capsys):
    assert main(["jacobian", "dual_arm", "left_tool", "right_tool", "--joint", "torso_yaw=0.2"]) == 0
    assert main(["jacobian", "dual_arm", "left_tool", "right_tool", "--joint", "torso_yow=0.2"]) == 2
    assert "did you mean 'torso_yaw'" in capsys.readouterr().err


def test_bench_quick_prints_its_tables(capsys):
    assert main(["bench", "jacobian", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "pin.computeFrameJacobian, 1 frame (baseline)" in out
    ratios = [float(line.split()[-1]) for line in out.splitlines() if line.startswith(("pin.", "reljac."))]
    assert len(ratios) == 5 and ratios[0] == 1.0 and all(r > 0 for r in ratios)
    assert main(["bench", "reference", "--quick"]) == 0
    assert "ratio to batched" in capsys.readouterr().out

"""The command line: outputs carry the library's numbers, benches print their tables."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

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


def test_the_synopsis_is_the_docs_block_and_names_every_command_once():
    """The synopsis (reljac.apps.cli.SYNOPSIS) is the block the docs show (docs/cli.md's), and every
    command of the parser has a line of it: its --help summary."""
    from reljac.apps.cli import SYNOPSIS, build_parser, summary, synopsis

    root = Path(__file__).resolve().parent.parent
    assert f"```\n{synopsis()}\n```" in (root / "docs" / "cli.md").read_text()
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert {usage.split()[1] for usage, _ in SYNOPSIS if usage.startswith("reljac ")} == set(commands.choices)
    shown = " ".join(parser.format_help().split())  # reljac --help, its line wraps undone
    for name in commands.choices:
        assert summary(name) and f"{name} {summary(name)}" in shown, name



def test_expressed_in_a_keyword_that_names_a_frame_warns(tmp_path, capsys):
    """An adversarial pass: --expressed-in b on a robot with a link 'b' silently meant frame B."""
    path = tmp_path / "ab.urdf"
    path.write_text("""<robot name="ab"><link name="base"/><link name="b"/><link name="c"/>
<joint name="j1" type="revolute"><parent link="base"/><child link="b"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0.5 0 0" rpy="1 0 0"/>
<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>""")
    assert main(["jacobian", str(path), "base", "c", "--expressed-in", "b"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "reljac: warning: --expressed-in b is the keyword (frame B's axes)" in err
    assert main(["jacobian", str(path), "base", "c"]) == 0
    assert capsys.readouterr().err == ""
    # a frame 'world' whose axes are the world's (tree30's floating base is a free flyer: at q = 0)
    assert main(["jacobian", "tree30", "root", "tail_site", "--expressed-in", "world"]) == 0
    assert capsys.readouterr().err == ""


def test_after_ctrl_c_an_error_in_a_finalizer_prints_nothing(monkeypatch, capsys):
    """A fresh-clone CI run: Ctrl-C during `reljac map --scheduler` printed "reljac: interrupted"
    and then dask's "Exception ignored in: Future.__del__ ... no attribute '_cleared'" (a Future
    the interrupt left half made). After Ctrl-C such reports are dropped; before it they are not."""
    import sys

    from reljac.apps import cli

    class HalfMade:
        def __del__(self):
            raise AttributeError("'Future' object has no attribute '_cleared'")

    monkeypatch.setattr(sys, "unraisablehook", cli._quiet_after_an_interrupt)
    monkeypatch.setattr(cli, "interrupt_received", lambda: True)
    HalfMade()  # (collected at once: its finalizer's error goes to the hook)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(cli, "interrupt_received", lambda: False)
    HalfMade()
    assert "no attribute '_cleared'" in capsys.readouterr().err

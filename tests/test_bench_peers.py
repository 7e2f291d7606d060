"""``reljac bench ik --peers``: every library is handed the same targets; the chatter count; the
notes when a peer is not installed; the flag on the command line. No timing is asserted.

Oracles: the targets recomputed by reljac's one-shot ``relative_placement`` from the
configuration each was drawn from (the reached poses of every library must agree with them);
hand-made velocity sequences for the chatter count.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.apps import bench, bench_peers
from reljac.apps.bench_peer_libs import MIN_DISTANCE, PEERS
from reljac.apps.cli import main
from reljac.apps.report import json_document

pytestmark = pytest.mark.slow

installed = all(importlib.util.find_spec(m) is not None for m in PEERS.values())
needs_peers = pytest.mark.skipif(not installed, reason="needs the peers: PlaCo and pink (PlaCo's wheels need pin 3.8: build it from source on pin 4.1)")


def _pose_errors(T_target: pin.SE3, T: pin.SE3) -> tuple[float, float]:
    return (float(np.linalg.norm(T.translation - T_target.translation)),
            float(np.linalg.norm(pin.log3(T_target.rotation.T @ T.rotation))))


@needs_peers
@pytest.mark.parametrize("collision", [False, True])
def test_every_library_reaches_the_same_targets(collision):
    """Each library's reached pose of the top level (measured by reljac's one-shot kinematics on
    its final q) agrees with the target recomputed from the configuration it was drawn from; so
    does the second level's where the library met it."""
    robot = reljac.Robot.bundled("dual_arm")
    case = bench_peers.CASES[0]
    r = bench_peers.compare(case, robot, targets=2, collision=collision, max_steps=300, hold=5)
    assert list(r["runs"]) == ["reljac", "PlaCo", "pink"]
    a, b = case.top
    for problem in r["problems"]:
        T_ab = reljac.relative_placement(robot, problem.q_target, a, b)
        assert _pose_errors(T_ab, problem.T_ab) == pytest.approx((0, 0), abs=1e-12)
    for name, run in r["runs"].items():
        met = 0
        for problem, episode in zip(r["problems"], run["episodes"], strict=True):
            assert episode["failure"] is None, name
            T_target = reljac.relative_placement(robot, problem.q_target, a, b)
            position, orientation = _pose_errors(T_target, reljac.relative_placement(robot, episode["q"], a, b))
            assert (position < bench_peers.POSITION_TOL and orientation < bench_peers.ORIENTATION_TOL) == \
                episode["top_met"], name
            met += episode["top_met"]
            if episode["second_met"] and episode["top_met"]:
                T_second = reljac.relative_placement(robot, problem.q_target, "universe", case.second)
                reached = reljac.relative_placement(robot, episode["q"], "universe", case.second)
                position, orientation = _pose_errors(T_second, reached)
                assert position < bench_peers.POSITION_TOL and orientation < bench_peers.ORIENTATION_TOL, name
        assert met >= 1, f"{name} reached no target: the check above would be vacuous"
    assert all(e["top_met"] for e in r["runs"]["reljac"]["episodes"])
    if collision:
        assert r["runs"]["reljac"]["min_distance"] >= MIN_DISTANCE - 1e-4


@needs_peers
def test_the_pinch_hands_the_same_position_targets_to_each_library():
    """A position-only top level (the hand case's kind) on dual_arm's tools: every library ends
    with the right tool where the target configuration puts it in the left tool's frame."""
    robot = reljac.Robot.bundled("dual_arm")
    case = bench_peers.Case("pinch", "dual_arm", ("left_tool", "right_tool"), None, True)
    r = bench_peers.compare(case, robot, targets=2, collision=False, max_steps=300, hold=5)
    for name, run in r["runs"].items():
        for problem, episode in zip(r["problems"], run["episodes"], strict=True):
            p_target = reljac.relative_placement(robot, problem.q_target, *case.top).translation
            p = reljac.relative_placement(robot, episode["q"], *case.top).translation
            assert (np.linalg.norm(p - p_target) < bench_peers.POSITION_TOL) == episode["top_met"], name
        assert any(e["top_met"] for e in run["episodes"]), name


def test_chatter_counts_two_step_oscillations_not_smooth_crossings():
    v = np.zeros((6, 2))
    v[:, 0] = [0.1, -0.1, 0.1, -0.1, 0.1, -0.1]  # joint 0 oscillates: every window of 3 flips twice
    np.testing.assert_array_equal(bench_peers.chatter_steps(v), [True] * 4)
    v[:, 0] = [0.3, 0.2, 0.1, -0.1, -0.2, -0.3]  # a smooth zero crossing: one flip
    np.testing.assert_array_equal(bench_peers.chatter_steps(v), [False] * 4)
    v[:, 1] = [5e-4, -5e-4, 5e-4, -5e-4, 5e-4, -5e-4]  # below 1e-3: at rest
    np.testing.assert_array_equal(bench_peers.chatter_steps(v), [False] * 4)
    v[2:5, 1] = [2e-3, -2e-3, 2e-3]  # joint 1: fast on steps 2-4 only, so only the window 2-4 counts
    np.testing.assert_array_equal(bench_peers.chatter_steps(v), [False, False, True, False])


def test_a_missing_peer_is_skipped_with_a_one_line_note(monkeypatch):
    notes = {"PlaCo": "PlaCo not installed (pip install \".[peers]\" in a clone of reljac; PlaCo by hand: its wheels need pin 3.8, so build it from source on pin 4.1): skipped",
             "pink": "pink not installed (pip install \".[peers]\" in a clone of reljac; PlaCo by hand: its wheels need pin 3.8, so build it from source on pin 4.1): skipped"}
    monkeypatch.setattr(bench_peers, "missing_peers", lambda: notes)
    monkeypatch.setattr(bench_peers, "peer_cases", lambda quick: [(bench_peers.CASES[0], 1)])
    counted = []
    r = bench_peers.peers_results(progress=counted.append)
    assert sum(counted) == bench_peers.peers_units() == 2  # one target, reljac only, collision off and on
    assert r["skipped"] == list(notes.values())
    assert [[x["library"] for x in c["libraries"]] for c in r["cases"]] == [["reljac"], ["reljac"]]
    text = bench_peers.peers_text(r)
    assert "note: PlaCo not installed" in text and "note: pink not installed" in text
    assert "\nPlaCo " not in text and "\npink " not in text
    document = json.loads(json_document(r))  # what --json prints: plain numbers, null for inf
    row = document["cases"][1]["libraries"][0]
    assert document["cases"][1]["collision"] and row["library"] == "reljac" and row["top_met"] == 1.0
    assert row["min_distance_m"] is None or row["min_distance_m"] >= MIN_DISTANCE - 1e-4


def test_the_peers_section_comes_only_with_the_flag():
    assert bench._names("ik") == ["ik"] and bench._names("ik", peers=True) == ["ik", "peers"]
    assert "peers" not in bench._names("all")
    assert bench._names("all", peers=True) == ["jacobian", "reference", "ik", "peers", "map", "kinds", "solve+peers"]
    assert bench._names("solve", peers=True) == ["solve+peers"] and bench._names("solve") == ["solve"]


def test_peers_flag_outside_ik_is_a_usage_error(capsys):
    assert main(["bench", "jacobian", "--peers"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--peers" in err and "'ik', 'solve' or 'all'" in err

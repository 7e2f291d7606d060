"""`reljac place ROBOT TASKFILE`: a task file made from the maps' own samples finds a placement
whose configurations reach the file's poses (checked here by Pinocchio's placements), its JSON
document has the keys docs/cli.md lists, and a bad file is one `reljac: error:` line, exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from reljac import Kinematics, Robot
from reljac.apps.cli import main
from reljac.placement import mobile_base, placement_maps, save_maps

HANDS = ["left_tool", "right_tool"]
DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _pose(T: pin.SE3) -> str:
    return f"{{position = {_list(T.translation)}, rpy = {_list(pin.rpy.matrixToRpy(T.rotation))}}}"


def _list(values) -> str:
    return repr([float(v) for v in values])


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A maps file of dual_arm's hands and a task file whose two poses its samples reach from
    (0.1, 0.0, 0.2)."""
    folder = tmp_path_factory.mktemp("place")
    mobile = mobile_base(Robot.bundled("dual_arm"))
    maps = placement_maps(mobile, HANDS, samples=4000, seed=5, workers=2)
    save_maps(folder / "maps.npz", maps)
    q = mobile.configuration((0.1, 0.0, 0.2))
    q[maps.chains.q_index] = maps.chains.values[15]
    for hand, row in zip(HANDS, (7, 11), strict=True):
        m = maps.maps[hand].metadata
        columns = np.concatenate([np.arange(a, a + n) for a, n in zip(m["joint_q"], m["joint_nq"], strict=True)])
        q[columns] = maps.maps[hand].best_q[row]
        for name, (lo, hi) in ((m["first"], m["first_range"]), (m["last"], m["last_range"])):
            q[mobile.robot.model.joints[mobile.robot.model.getJointId(name)].idx_q] = 0.5 * (lo + hi)
    kin = Kinematics(mobile.robot, q)
    left, grasp = kin.placement(HANDS[0]), kin.placement(HANDS[0]).actInv(kin.placement(HANDS[1]))
    text = f"""
[object]
poses = [{_pose(left)}, {_pose(left)}]

[[hand]]
frame = "left_tool"

[[hand]]
frame = "right_tool"
position = {_list(grasp.translation)}
rpy = {_list(pin.rpy.matrixToRpy(grasp.rotation))}

[floor]
x = [0.0, 0.2]
y = [-0.1, 0.1]
yaw = [0.0, 0.4]
step = 0.1
yaw_step = 0.2

[collision]
enabled = false

[check]
candidates = 1
timeout = 0.2
"""
    (folder / "task.toml").write_text(text)
    return folder, mobile, left, grasp


@pytest.mark.slow
def test_the_command_finds_a_placement_reaching_the_file_poses(setup, capsys):
    folder, mobile, left, grasp = setup
    assert main(["place", "dual_arm", str(folder / "task.toml"), "--maps", str(folder / "maps.npz"), "--json",
                 "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    best = doc["best"]
    assert best is not None and len(best["q"]) == 2 and doc["maps"]["built"] is False
    for q in best["q"]:
        kin = Kinematics(mobile.robot, np.array(q))
        assert np.linalg.norm(pin.log6(left.actInv(kin.placement(HANDS[0]))).vector) < 1e-3
        assert np.linalg.norm(pin.log6((left * grasp).actInv(kin.placement(HANDS[1]))).vector) < 1e-3
    section = DOCS.read_text().split("### `reljac place ROBOT TASKFILE --json`")[1].split("\n### ")[0]
    documented = set(re.findall(r"`(\w+)`", section))
    assert set(doc) <= documented and set(doc["maps"]) <= documented, set(doc) - documented
    assert main(["place", "dual_arm", str(folder / "task.toml"), "--maps", str(folder / "maps.npz"),
                 "--no-progress"]) == 0
    assert "best: x" in capsys.readouterr().out


TASK = """
[object]
poses = [{position = [0.5, 0.0, 0.8], rpy = [0.0, 0.0, 0.0]}]

[[hand]]
frame = "left_tool"

[[hand]]
frame = "right_tool"
position = [0.0, -0.3, 0.0]

[floor]
x = [0.0, 0.2]
y = [-0.1, 0.1]
step = 0.1

[check]
timeout = 0.2
"""


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.replace("[floor]", "[flor]"), "unknown key 'flor'"),
    (lambda t: t.replace('frame = "right_tool"', 'frame = "right_tol"'), "', hand 2: frame 'right_tol' is not in"),
    (lambda t: 'lock = ["nosuch*"]\n' + t, "', lock: pattern 'nosuch*' matches no joint"),
    (lambda t: t.replace("step = 0.1", "step = -0.1"), "step must be"),
    (lambda t: t.replace("timeout = 0.2", "timeout = 0.2\nmargin = 9.0"), "margin"),
    (lambda t: t.replace("[check]", "[collision]\nignore = ['nothing_*']\n[check]"), "matches no link"),
    (lambda t: t.replace("[object]\nposes", "[object]\nsamples = 3\nposes"), "samples goes with waypoints"),
    (lambda t: t + "\n[[obstacle]]\nname = 'crate'\nshape = 'cube'\n", "shape must be one of"),
    (lambda t: t + "\n[[obstacle]]\nname = 'crate'\nshape = 'sphere'\nradius = 0.1\nposition = [2, 0, 0]\n" * 2,
     "obstacles 1 and 2 are both named 'crate'"),  # (the second replaced the first, silently)
    (lambda t: t.replace("[[hand]]", "[[hand]]\ngrip = 1", 1), "unknown key 'grip'"),
    (lambda t: "x = [", "not valid TOML"),
    # an uncaught error each before ("a reljac bug"), or a silent change of the task
    (lambda t: "[base]\nheight = 1e300\n" + t, "height [m] must be within 1e+06 m of the floor, got 1e+300"),
    (lambda t: t.replace("[0.5, 0.0, 0.8]", "[1e50, 0.0, 0.8]"), "positions of object poses must be within 1e+06 m"),
    (lambda t: t.replace("[0.0, -0.3, 0.0]", "[0.0, -1e50, 0.0]"),
     "positions of the grasp of 'right_tool' must be within 1e+06 m"),
    (lambda t: t.replace('frame = "right_tool"', 'frame = "left_tool"'),
     "hand 2: frame 'left_tool' has a [[hand]] already (one grasp per hand)"),
    (lambda t: t.replace("timeout = 0.2", "timeout = 1e300"), "timeout [s] (of one search) must be at most 10"),
    (lambda t: t.replace("timeout = 0.2", "timeout = 0.2\ncandidates = 1001"), "candidates must be an integer in 1..1,000"),
    (lambda t: t.replace("x = [0.0, 0.2]", "x = [0.2, 0.0]"), "lower <= upper, got (0.2, 0.0)"),  # (not np.float64(...))
    (lambda t: t + "\n[maps]\nfile = 'no such folder/maps.npz'\n", "[maps] file: folder"),
    (lambda t: t + "\n[maps]\nfile = '.'\n", "[maps] file: "),
    # not naming the file before, or only once the maps were built (an adversarial pass)
    (lambda t: t.replace("[check]", "[collision]\nmin_distance = 1e300\n[check]"),
     "[collision]: min_distance must be a distance in [0, 1e+06] m, got 1e+300"),
    (lambda t: t + "\n[maps]\nbins = [36, 2, 24]\n", "[maps]: bins must be 3 integers (psi, beta, gamma) in 1..1024, "
                                                     "beta at least 3"),
    (lambda t: t + "\n[maps]\nvoxel = 1e300\n", "[maps]: voxel must be at most 1000 m, got 1e+300"),  # (a pass: ran 55 s)
    (lambda t: t.replace("step = 0.1", "step = 0.1\npolygon = [[5, 5], [6, 5], [6, 6]]"),
     "[floor]: the floor region is empty: no point of its grid"),  # (rc 0 and 'floor: 0 placements')
    (lambda t: t + "".join(f"\n[[obstacle]]\nname = 'o{i}'\nshape = 'sphere'\nradius = 0.01\nposition = [5, 0, 0]\n"
                           for i in range(1001)), "1,001 [[obstacle]] tables; at most 1000"),
])
def test_a_bad_task_file_is_one_error_line(capsys, tmp_path, change, message):
    bad = tmp_path / "bad.toml"
    bad.write_text(change(TASK))
    assert main(["place", "dual_arm", str(bad), "--samples", "10", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("reljac: error:") and message in err, err
    assert list(tmp_path.iterdir()) == [bad]  # refused before any map was built and saved


@pytest.mark.parametrize(("args", "message"), [
    (["--maps", "{folder}"], "is not a file name"),
    (["--maps", "{folder}/"], "is not a file name"),
    (["--maps", "{task}"], "is a file that is not a map (.npz)"),
    (["--maps", "{folder}/none/maps.npz"], "does not exist"),
    (["--view", "--no-hold", "--host", "nosuch.invalid", "--json"], "the viewer cannot listen on host 'nosuch.invalid'"),
    (["--open", "--host", "0.0.0.0"], "--open, --host go with --view"),  # (accepted and ignored before)
])
def test_bad_outputs_are_refused_before_any_work(capsys, tmp_path, args, message):
    """Maps paths that name a folder or another file (a folder's name + ".npz" was written beside
    it), and a viewer host that cannot be used (the JSON document was printed, then the error)."""
    task = tmp_path / "task.toml"
    task.write_text(TASK)
    args = [a.format(folder=tmp_path, task=task) for a in args]
    assert main(["place", "dual_arm", str(task), "--samples", "10", "--no-progress", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and message in err, err
    assert list(tmp_path.iterdir()) == [task] and not Path(f"{tmp_path}.npz").exists()


@pytest.mark.slow
def test_view_without_a_host_serves_on_the_loopback_address(capsys, tmp_path):
    """--host defaults to 127.0.0.1 (its help says so): --view without it was refused, 'not None'."""
    task = tmp_path / "task.toml"
    task.write_text(TASK)
    assert main(["place", "dual_arm", str(task), "--samples", "100", "--candidates", "1", "--no-progress",
                 "--view", "--no-hold"]) == 0
    assert "http://127.0.0.1:" in capsys.readouterr().out


@pytest.mark.slow
def test_a_maps_file_of_other_hands_is_refused(capsys, tmp_path):
    (tmp_path / "task.toml").write_text(TASK)
    assert main(["place", "dual_arm", str(tmp_path / "task.toml"), "--maps", str(tmp_path / "maps.npz"),
                 "--samples", "100", "--candidates", "1", "--no-progress"]) == 0  # builds and saves the maps
    assert (tmp_path / "maps.npz").exists()
    capsys.readouterr()
    (tmp_path / "other.toml").write_text(TASK.replace('frame = "left_tool"', 'frame = "left_link7"'))
    assert main(["place", "dual_arm", str(tmp_path / "other.toml"), "--maps", str(tmp_path / "maps.npz"),
                 "--no-progress"]) == 2
    assert "no map of left_link7" in capsys.readouterr().err


@pytest.mark.slow
def test_a_maps_file_of_other_maps_than_asked_is_refused(capsys, tmp_path):
    """Maps read from a file are the ones asked for (--samples; the file's [maps] samples, voxel,
    bins, seed), or the run stops naming what differs; the file's defaults ask for nothing."""
    task, maps = tmp_path / "task.toml", tmp_path / "maps.npz"
    task.write_text(TASK)
    common = ["--maps", str(maps), "--candidates", "1", "--no-progress"]
    assert main(["place", "dual_arm", str(task), "--samples", "100", *common]) == 0  # builds and saves the maps
    assert main(["place", "dual_arm", str(task), *common]) == 0  # no [maps]: what the file holds
    assert main(["place", "dual_arm", str(task), "--samples", "100", *common]) == 0
    capsys.readouterr()
    assert main(["place", "dual_arm", str(task), "--samples", "200", *common]) == 2
    err = capsys.readouterr().err
    assert "holds maps of 100 samples per hand; this run asks for 200 samples per hand" in err, err
    for maps_table, said in (("voxel = 0.1", "cells of 0.04 m; this run asks for cells of 0.1 m"),
                             ("bins = [36, 12, 12]", "bins [36, 12, 24]; this run asks for bins [36, 12, 12]"),
                             ("seed = 3", "seed 0; this run asks for seed 3"),
                             ("samples = 100\nvoxel = 0.04\nseed = 0", None)):
        task.write_text(TASK + f"\n[maps]\n{maps_table}\n")
        assert main(["place", "dual_arm", str(task), *common]) == (0 if said is None else 2)
        err = capsys.readouterr().err
        assert said is None or (said in err and len(err.splitlines()) == 1), err


@pytest.mark.parametrize("name", ["tiago_dual_place.toml", "panda_cart_place.toml"])
def test_the_example_task_files_read(name):
    from reljac.apps.place_file import read_place_file

    spec = read_place_file(Path(__file__).resolve().parent.parent / "examples" / name)
    task = spec.task()
    assert len(task) in (12, 20) and spec.region.placements().size and spec.maps["file"].endswith(".npz")


def test_a_yaw_rounded_below_zero_reads_zero():
    """A grid's yaw of -1e-17 rad (from -60 degrees in steps) is printed 0.0, not -0.0."""
    from reljac.apps.place import text

    candidate = {"x": 0.3, "y": 0.0, "yaw": -1e-17, "map_score": 0.1, "map_poses_reached": 2, "map_poses_sure": 2,
                 "map_poses_witnessed": 2, "feasible": True, "poses_reached": 2, "score": 0.1}
    doc = {"robot": "r", "base_joint": "base_joint", "base_kind": "planar", "hands": ["h"], "frame": "base",
           "shared": [], "shared_values": 1, "poses": 2, "placements": 1, "clear": 1, "reach_all": 1, "sure_all": 1,
           "maps": {"built": False, "file": "m.npz", "seconds": 0.1, "samples": 10, "bytes": 10,
                    "resolution": {"voxel": 0.04, "psi": 10.0, "beta": 10.0, "gamma": 15.0}},
           "seconds": {"maps": 0.1, "check": 0.1, "total": 0.2}, "query_us_per_pair": 1.0, "checked": 1,
           "check_problems": 0, "score": "manipulability", "best": candidate, "candidates": [candidate]}
    out = text(doc)
    assert "yaw 0.0 deg" in out and "-0.0" not in out


def test_an_arm_with_a_mimic_joint_is_placed(capsys, tmp_path):
    """j2 mimics j1 (its map lists both joints, the robot's q only j1): the check compared the two
    lists and failed with a MapError on every run."""
    urdf = tmp_path / "mimic.urdf"
    urdf.write_text(
        '<robot name="mimic"><link name="base"/><link name="a"/><link name="b"/>'
        '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        '<joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="1 0 0"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="j1" multiplier="2" offset="0.1"/></joint>'
        '</robot>')
    task = tmp_path / "task.toml"
    task.write_text('[object]\nposes = [{position = [1.5, 0.2, 0.0]}]\n[[hand]]\nframe = "b"\n'
                    '[floor]\nx = [-0.2, 0.2]\ny = [-0.2, 0.2]\nstep = 0.1\nyaw_step = 0.5\n[collision]\nenabled = false\n')
    assert main(["place", str(urdf), str(task), "--samples", "20000", "--no-progress", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["hands"] == ["b"]


def test_no_placement_clear_of_the_obstacles_reports_no_time_per_pair(capsys, tmp_path):
    """An adversarial pass: with no (placement, pose) pair asked, the JSON gave ~564 us per pair
    (the maps' time over max(pairs, 1)) and the text '638 us per (placement, pose) pair'."""
    task = tmp_path / "task.toml"
    task.write_text(TASK + "\n[[obstacle]]\nname = 'wall'\nshape = 'sphere'\nradius = 3.0\nposition = [0, 0, 0]\n")
    assert main(["place", "dual_arm", str(task), "--samples", "2000", "--no-progress", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["clear"] == 0 and doc["best"] is None and doc["query_us_per_pair"] is None
    assert main(["place", "dual_arm", str(task), "--samples", "2000", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "0 clear of the obstacles" in out and "per (placement, pose) pair" not in out, out

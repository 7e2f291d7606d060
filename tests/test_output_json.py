"""--json: one document on stdout, numbers (never strings, never NaN or Infinity) equal to the
library's own answers; Manipulability's text and dict forms carry its numbers."""

from __future__ import annotations

import json
import math

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.analysis import Manipulability, manipulability, relative_manipulability
from reljac.apps.check import CheckReport, CheckRow, check_urdf
from reljac.apps.cli import main
from reljac.apps.report import json_document
from reljac.json_values import json_ready
from reljac.relative import Kinematics
from reljac.workspace import workspace_summary


def strict_json(text: str):
    """json.loads that refuses NaN, Infinity and -Infinity (not JSON, although Python writes them)."""

    def refuse(name):
        raise AssertionError(f"{name} in a JSON document")

    return json.loads(text, parse_constant=refuse)


def run_json(capsys, argv: list[str], code: int = 0):
    assert main(argv) == code
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.endswith("\n"), "one document on one line"
    return strict_json(out)


# ---------------------------------------------------------------------------- json_ready / json_document
def test_json_ready_turns_arrays_and_non_finite_numbers_into_json_values():
    value = {"a": np.array([[1.0, np.nan], [np.inf, -np.inf]]), "b": (np.int64(3), np.float32(0.5)),
             "c": np.bool_(True), "d": pin.SE3.Identity(), "e": None, 4: "x"}
    got = json_ready(value)
    assert got == {"a": [[1.0, None], [None, None]], "b": [3, 0.5], "c": True, "d": np.eye(4).tolist(),
                   "e": None, "4": "x"}
    assert type(got["b"][0]) is int and type(got["c"]) is bool
    assert strict_json(json_document(value)) == got
    with pytest.raises(TypeError, match="cannot put a object"):
        json_ready(object())


# ---------------------------------------------------------------------------- jacobian
@pytest.mark.parametrize("expressed_in", ["a", "b", "world", "torso"])
def test_jacobian_json_equals_the_library(capsys, expressed_in):
    robot = reljac.Robot.bundled("dual_arm")
    doc = run_json(capsys, ["jacobian", "dual_arm", "left_tool", "right_tool", "--seed", "7",
                            "--expressed-in", expressed_in, "--json"])
    q = robot.random_configuration(7)
    np.testing.assert_array_equal(doc["q"], q)  # JSON floats round-trip exactly
    J = reljac.relative_jacobian(robot, q, "left_tool", "right_tool", expressed_in=expressed_in)
    np.testing.assert_allclose(np.array(doc["J"]), J, rtol=0, atol=1e-14)
    T_ab = reljac.relative_placement(robot, q, "left_tool", "right_tool")
    np.testing.assert_allclose(np.array(doc["T_ab"]), T_ab.homogeneous, rtol=0, atol=1e-14)
    assert (doc["robot"], doc["nq"], doc["nv"]) == ("dual_arm", robot.nq, robot.nv)
    assert (doc["frame_a"], doc["frame_b"], doc["expressed_in"]) == ("left_tool", "right_tool", expressed_in)
    assert doc["rows"] == ["vx", "vy", "vz", "wx", "wy", "wz"]
    assert doc["columns"] == [name for name in robot.joint_names]  # one-DoF joints: one column each


def test_jacobian_json_of_a_floating_base_labels_every_velocity_index(capsys):
    robot = reljac.Robot.bundled("tree30")
    a, b = "left_hand_site", "right_foot_site"
    doc = run_json(capsys, ["jacobian", "tree30", a, b, "--seed", "3", "--json"])
    assert len(doc["q"]) == robot.nq != robot.nv == len(doc["columns"])
    assert doc["columns"][:6] == [f"root[{k}]" for k in range(6)]
    J = reljac.relative_jacobian(robot, robot.random_configuration(3), a, b)
    np.testing.assert_allclose(np.array(doc["J"]), J, rtol=0, atol=1e-14)


# ---------------------------------------------------------------------------- info
def test_info_json_equals_the_model(capsys):
    robot = reljac.Robot.bundled("hand")
    model = robot.model
    doc = run_json(capsys, ["info", "hand", "--json"])
    assert (doc["robot"], doc["nq"], doc["nv"]) == ("hand", robot.nq, robot.nv)
    assert doc["bundled_robots"] == reljac.bundled_robots()
    assert doc["ik_solver"] in ("compiled", "python") and isinstance(doc["compiled_core_built"], bool)
    assert [j["name"] for j in doc["joints"]] == robot.joint_names
    for j in doc["joints"]:
        joint = model.joints[model.getJointId(j["name"])]
        assert j["q"] == [joint.idx_q, joint.idx_q + joint.nq] and j["v"] == [joint.idx_v, joint.idx_v + joint.nv]
        assert j["lower"] == model.lowerPositionLimit[joint.idx_q]
        assert j["upper"] == model.upperPositionLimit[joint.idx_q]
        assert j["velocity_limits"] == list(model.velocityLimit[joint.idx_v : joint.idx_v + joint.nv])
    mimic = {(m["follower"], m["leader"]): (m["scaling"], m["offset"]) for m in doc["mimic"]}
    assert mimic[("index_dip", "index_pip")] == (0.8, 0.0) and len(mimic) == 4
    assert [f["name"] for f in doc["frames"]] == [f.name for f in model.frames]
    for f, frame in zip(doc["frames"][1:], list(model.frames)[1:], strict=True):
        assert f["parent"] == model.frames[frame.parentFrame].name
        assert f["joint"] == model.names[frame.parentJoint]
    assert doc["frames"][0]["parent"] is None


def test_info_json_gives_null_for_unbounded_and_multi_coordinate_joints(capsys):
    doc = run_json(capsys, ["info", "tree30", "--json"])
    by_name = {j["name"]: j for j in doc["joints"]}
    root = by_name["root"]
    assert root["type"] == "FreeFlyer" and root["lower"] is None and root["upper"] is None
    assert root["q"] == [0, 7] and root["v"] == [0, 6]
    robot = reljac.Robot.bundled("tree30")
    continuous = [n for n in robot.joint_names if robot.model.joints[robot.model.getJointId(n)].nq == 2]
    assert continuous and all(by_name[n]["lower"] is None for n in continuous)


def test_info_json_without_a_robot_lists_the_bundled_robots(capsys):
    doc = run_json(capsys, ["info", "--json"])
    assert set(doc) == {"bundled_robots", "ik_solver", "compiled_core_built"}
    assert doc["bundled_robots"] == reljac.bundled_robots()


# ---------------------------------------------------------------------------- check
@pytest.mark.slow
def test_check_json_equals_the_library_report(capsys):
    doc = run_json(capsys, ["check", "hand", "--samples", "4", "--seed", "5", "--json"])
    report = check_urdf("hand", samples=4, seed=5)
    assert doc == report.to_dict()
    assert doc["ok"] is True and doc["samples"] == 4 and doc["tolerance"] == 1e-9
    assert [r["max_error"] for r in doc["rows"]] == [r.max_error for r in report.rows]
    assert all(isinstance(r["max_error"], float) and r["max_error"] < 1e-9 for r in doc["rows"])


def test_check_json_reports_a_mismatch_with_exit_1(capsys, monkeypatch):
    def wrong(self, frame_a, frame_b, *, expressed_in="a"):
        return 2.0 * Kinematics.__dict__["_original"](self, frame_a, frame_b, expressed_in=expressed_in)

    monkeypatch.setattr(Kinematics, "_original", Kinematics.relative_jacobian, raising=False)
    monkeypatch.setattr(Kinematics, "relative_jacobian", wrong)
    doc = run_json(capsys, ["check", "planar_2link", "--samples", "3", "--json"], code=1)
    assert doc["ok"] is False
    bad = [r for r in doc["rows"] if r["max_error"] > doc["tolerance"]]
    assert bad and all("relative Jacobians" in r["quantity"] for r in bad)


def test_check_report_non_finite_errors_become_null():
    report = CheckReport("r", 1, 0, rows=[CheckRow("q", math.inf, "f"), CheckRow("p", 0.0, "-")])
    doc = strict_json(json_document(report.to_dict()))
    assert doc["ok"] is False and doc["rows"][0]["max_error"] is None and doc["rows"][1]["max_error"] == 0.0


# ---------------------------------------------------------------------------- analyze
def test_analyze_json_equals_the_library_summary(capsys):
    robot = reljac.Robot.bundled("dual_arm")
    doc = run_json(capsys, ["analyze", "dual_arm", "left_tool", "right_tool", "--samples", "200", "--seed", "2",
                            "--part", "orientation", "--json"])
    s = workspace_summary(robot, "left_tool", "right_tool", 200, 2, part="orientation")
    assert doc == s.to_dict()
    assert doc["part"] == [3, 4, 5] and doc["rows"] == ["wx", "wy", "wz"] and doc["samples"] == 200
    assert doc["index"] == s.index and doc["condition_number"] == s.condition_number
    worst = doc["closest_to_singular"][0]
    np.testing.assert_array_equal(worst["q"], s.closest_to_singular[0].q)
    # the kept configuration's own sigma_min, recomputed with the Pinocchio layer
    m = relative_manipulability(robot, np.array(worst["q"]), "left_tool", "right_tool", part="orientation")
    assert worst["smallest_singular_value"] == pytest.approx(m.smallest_singular_value, rel=1e-9, abs=1e-12)


def test_analyze_json_of_an_always_singular_task_has_null_condition_numbers(capsys):
    doc = run_json(capsys, ["analyze", "planar_2link", "tip", "tip", "--samples", "5", "--json"])
    assert all(v is None for v in doc["condition_number"].values())  # infinite: J = 0
    assert all(v == 0.0 for v in doc["index"].values())


# ---------------------------------------------------------------------------- bench
def test_bench_json_gives_numbers(capsys):
    doc = run_json(capsys, ["bench", "jacobian", "--quick", "--json"])
    cases = doc["sections"]["jacobian"]["cases"]
    assert doc["quick"] is True and len(cases) == 5 and cases[0]["ratio_to_baseline"] == 1.0
    for c in cases:
        assert c["time_s"] > 0 and c["ratio_to_baseline"] == pytest.approx(c["time_s"] / cases[0]["time_s"])


@pytest.mark.slow
def test_bench_ik_json_matches_the_solvers_own_bench():
    from reljac.apps import bench
    from reljac.apps.bench_solvers import nlp_bench_rows

    done = []
    doc = strict_json(json_document(bench.results("ik", quick=True, progress=done.append)))["sections"]["ik"]
    assert sum(done) == bench.units("ik", quick=True)  # the progress bar's total is right
    protocol = doc["protocol"]
    assert protocol["targets"] == 5 and protocol["gain"] == pytest.approx(1 / protocol["dt"])
    for s in protocol["solvers"]:
        assert 0 <= s["top_level_met"] <= 1 and 0 <= s["chatter"] <= 1
        assert s["step_median_units"] == pytest.approx(s["step_median_s"] / protocol["unit_s"])
    assert 0 <= doc["hand"]["success"] <= 1 and doc["hand"]["pinches"] == 10
    for case in doc["collision"]["cases"]:
        assert case["added"] == pytest.approx(case["with_s"] / case["without_s"] - 1)
        assert case["active_pairs"] > 0
    # one target at a time from a shared generator: the same targets as one call
    expected = [(name, ok) for name, ok, _ in nlp_bench_rows(n_targets=5, seed=0)]
    assert [(f"{r['problem']}: {r['solver']}", r["success_rate"]) for r in doc["nlp"]["rows"]] == expected
    inequality = doc["inequality"]  # the bounded Talos stack's solves (when Talos is installed)
    for row in inequality["rows"] if inequality["robot"] else []:
        assert row["units"] == pytest.approx(row["time_s"] / inequality["unit_s"]) and row["time_s"] > 0


# ---------------------------------------------------------------------------- Manipulability
def test_manipulability_formats_its_numbers():
    J = np.array([[1.0, 0.5, 0.0], [0.0, 2.0, 0.25]])
    m = manipulability(J)
    sigma = np.linalg.svd(J, compute_uv=False)
    text = f"{m:.17g}"
    numbers = [float(x) for x in text.replace("[", " ").replace("]", " ").replace(",", " ").split()
               if x[0].isdigit()]
    assert numbers == [m.index, m.condition_number, *m.singular_values]
    np.testing.assert_allclose(numbers[2:], sigma, rtol=1e-14)
    assert str(m) == format(m, ".4g") == format(m, "") == m.format()
    assert f"{m.index:.4g}" in str(m) and "condition number" in str(m)
    with pytest.raises(reljac.TaskError, match="not a float format"):
        format(m, "x")


def test_manipulability_to_dict_is_json_ready():
    robot = reljac.Robot.bundled("planar_2link")
    m = relative_manipulability(robot, np.array([0.4, 0.0]), "universe", "tip", part="full")  # 6 rows > 2 joints
    d = m.to_dict()
    assert strict_json(json.dumps(d)) == d
    assert d["condition_number"] is None and m.condition_number == math.inf
    assert d["index"] == 0.0 and d["singular_values"] == m.singular_values.tolist()
    np.testing.assert_array_equal(np.array(d["directions"]), m.directions)
    assert d["smallest_singular_value"] == 0.0
    assert isinstance(m, Manipulability) and "inf" in str(m)

"""``reljac demo --record FILE`` and ``--plot FILE``: what is saved is the run, checked against
Pinocchio's own forward kinematics; the plot is a picture; bad files and a missing matplotlib
give one clear error before anything runs."""

from __future__ import annotations

import json
import sys

import numpy as np
import pinocchio as pin
import pytest
from helpers import placements

from reljac import Robot
from reljac.apps.cli import main as cli_main
from reljac.apps.demo import DUAL_ARM_MEETING, HAND_RELAXED

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dual_arm_records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("record")
    npz, js = folder / "run.npz", folder / "run.json"
    assert cli_main(["demo", "dual-arm", "--headless", "--duration", "1", "--crossing", "0", "--record", str(npz)]) == 0
    assert cli_main(["demo", "dual-arm", "--headless", "--duration", "1", "--crossing", "0", "--record", str(js)]) == 0
    return np.load(npz), json.loads(js.read_text())


def test_npz_record_holds_the_run_as_the_kinematics_sees_it(dual_arm_records):
    data, _ = dual_arm_records
    robot = Robot.bundled("dual_arm")
    n = 100  # 1 s at 10 ms
    assert str(data["demo"]) == "dual-arm" and float(data["dt"]) == 0.01
    np.testing.assert_allclose(data["t"], 0.01 * np.arange(n), atol=1e-12)
    assert data["q"].shape == (n, robot.nq)
    np.testing.assert_allclose(data["q"][0], robot.q_from_joint_values(DUAL_ARM_MEETING))
    assert list(data["joint_names"]) == list(robot.model.names)[1:]
    assert data["target/left"].shape == data["target/relative"].shape == (n, 4, 4)
    left, right = robot.frame_id("left_tool"), robot.frame_id("right_tool")
    for k in (0, 37, n - 1):  # errors recomputed from q and the targets with Pinocchio alone
        oMf = placements(robot, data["q"][k])
        T_target = pin.SE3(data["target/left"][k])
        assert data["position_error/left"][k] == pytest.approx(
            np.linalg.norm(oMf[left].translation - T_target.translation), abs=1e-12)
        assert data["orientation_error/left"][k] == pytest.approx(
            np.linalg.norm(pin.log3(T_target.rotation.T @ oMf[left].rotation)), abs=1e-9)
        T_lr = oMf[left].actInv(oMf[right])
        T_rel = pin.SE3(data["target/relative"][k])
        assert data["position_error/relative"][k] == pytest.approx(
            np.linalg.norm(T_lr.translation - T_rel.translation), abs=1e-12)
    # the left tool's target goes round its circle in the y-z plane (facing the camera)
    p = data["target/left"][:, :3, 3]
    assert np.ptp(p[:, 0]) < 1e-12 and np.ptp(p[:, 1]) > 0.01 and np.ptp(p[:, 2]) > 0.005


def test_dual_arm_circle_is_seen_open_from_the_viewers_camera(tmp_path):
    """Not edge-on: seen from the default camera direction, one full turn of the left tool's
    target spans at least 70 % as much across as up and down, and vice versa."""
    from reljac.viz.camera import DEFAULT_DIRECTION, view_axes

    path = tmp_path / "turn.npz"
    assert cli_main(["demo", "dual-arm", "--headless", "--duration", "6", "--crossing", "0", "--record", str(path)]) == 0
    p = np.load(path)["target/left"][100:, :3, 3]  # after the 1 s speed ramp: one 5 s turn
    right, up, _ = view_axes(DEFAULT_DIRECTION)
    across, upward = np.ptp(p @ right), np.ptp(p @ up)
    assert min(across, upward) / max(across, upward) > 0.7, (across, upward)


def test_json_record_has_the_same_content(dual_arm_records):
    data, doc = dual_arm_records
    np.testing.assert_allclose(doc["t"], data["t"])
    np.testing.assert_allclose(doc["q"], data["q"])
    np.testing.assert_allclose(doc["target"]["relative"], data["target/relative"])
    np.testing.assert_allclose(doc["position_error"]["left"], data["position_error/left"])
    assert doc["demo"] == "dual-arm" and doc["joint_names"] == list(data["joint_names"])


def test_record_of_the_hand_marks_inactive_tasks_with_nan(tmp_path):
    path = tmp_path / "hand.json"
    assert cli_main(["demo", "hand", "--headless", "--duration", "1", "--record", str(path)]) == 0
    doc = json.loads(path.read_text())
    robot = Robot.bundled("hand")
    np.testing.assert_allclose(doc["q"][0], robot.q_from_joint_values(HAND_RELAXED))
    index, middle = doc["target"]["thumb-index"], doc["target"]["thumb-middle"]
    assert all(v is not None for v in index[0]) and all(v is None for v in middle[0])  # first half
    assert all(v is not None for v in middle[-1]) and all(v is None for v in index[-1])  # second half
    assert all(v is None for v in doc["orientation_error"]["thumb-index"])  # a position task
    # the hand's fingers have mimic joints (16 joints, 12 values): one name per column of q,
    # each naming the joint whose value the column is (read back by joint name)
    assert len(robot.model.names) - 1 > robot.nq == len(doc["q"][0]) == len(doc["joint_names"])
    for k in (0, 10, len(doc["q"]) - 1):
        values = robot.joint_values(np.array(doc["q"][k]))
        assert [values[name] for name in doc["joint_names"]] == pytest.approx(doc["q"][k], abs=0)
    k = 10  # thumb tip in the index tip, from q with Pinocchio alone
    oMf = placements(robot, np.array(doc["q"][k]))
    p = oMf[robot.frame_id("index_tip")].actInv(oMf[robot.frame_id("thumb_tip")]).translation
    assert doc["position_error"]["thumb-index"][k] == pytest.approx(
        np.linalg.norm(p - np.array(index[k])), abs=1e-12)


def test_plot_draws_the_tracking_errors(tmp_path):
    pytest.importorskip("matplotlib")
    from test_viz import read_png

    path = tmp_path / "errors.png"
    assert cli_main(["demo", "hand", "--headless", "--duration", "1", "--plot", str(path)]) == 0
    img = read_png(path.read_bytes())
    assert img.shape == (550, 800, 3)
    colours = img.reshape(-1, 3)
    # two task curves in matplotlib's first two colours (blue, orange), on a white figure
    for rgb in ((31, 119, 180), (255, 127, 14)):
        assert np.sum(np.all(np.abs(colours.astype(int) - rgb) < 30, axis=1)) > 200, rgb


def test_plot_without_matplotlib_is_one_clear_error_before_running(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert cli_main(["demo", "hand", "--headless", "--plot", str(tmp_path / "e.png")]) == 2
    out, err = capsys.readouterr()
    assert err.strip().count("\n") == 0 and "pip install matplotlib" in err and err.startswith("reljac: error:")
    assert "hand demo" not in out and not (tmp_path / "e.png").exists()


@pytest.mark.parametrize("option, name, message", [
    ("--record", "run.csv", r"\.npz or \.json"),
    ("--plot", "plot.txt", r"\.png or \.pdf or \.svg"),
    ("--record", "missing/run.npz", "does not exist"),
])
def test_bad_output_files_are_refused_before_running(tmp_path, capsys, option, name, message):
    assert cli_main(["demo", "hand", "--headless", option, str(tmp_path / name)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("reljac: error:") and err.strip().count("\n") == 0
    import re

    assert re.search(message, err) and "hand demo" not in out

"""The command line's balance options: `reljac map --support/--sole/--margin` gives the library's
balance-aware map, `reljac analyze --com/--com-frame` prints Pinocchio's centre of mass and its
Jacobian (floating Talos, a frame, locked joints), and bad values are one line with exit 2."""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest
from test_maps_balance import FOOT, URDF, foot_support

import reljac
from reljac.apps.cli import main
from reljac.maps import capability_map, load_map


@pytest.fixture(scope="module")
def stand_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("stand") / "stand.urdf"
    path.write_text(URDF)
    return str(path)


def run_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_map_with_support_is_the_librarys_balance_aware_map(capsys, stand_path, tmp_path):
    out = tmp_path / "stand.npz"
    summary = run_json(capsys, "map", stand_path, "base_link", "tip", "--samples", "3000", "--voxel", "0.1",
                       "--out", str(out), "--seed", "2", "--support", "foot", "--sole", f"{FOOT[0]}x{FOOT[1]}",
                       "--margin", "0.02", "--no-progress")
    expected = capability_map(reljac.Robot.load(stand_path), "base_link", "tip", samples=3000, voxel=0.1, seed=2,
                              support=foot_support(0.02))
    loaded = load_map(out)
    assert loaded.same_reduction(expected) and loaded.support == expected.support
    assert summary["rejected_fraction"] == expected.rejected / 3000 > 0
    assert summary["support"]["margin"] == 0.02 and summary["support"]["contacts"][0]["frame"] == "foot"
    assert main(["map", stand_path, "base_link", "tip", "--samples", "3000", "--voxel", "0.1", "--out", str(out),
                 "--seed", "2", "--support", "foot", "--sole", "0.4x0.2", "--margin", "0.02", "--no-progress"]) == 0
    assert f"balance-aware: {expected.rejected:,} of 3,000 samples rejected" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--support", "foot", "--sole", "0.4"], "reljac: error: argument --sole: expected LENGTHxWIDTH"),
    (["--support", "foot", "--sole", "0.4x0"], "argument --sole"),
    (["--support", "foot", "--sole", "nanx1"], "argument --sole"),
    (["--support", "foot", "--sole", "0.4x0.2", "--margin", "-0.1"], "argument --margin: must be a distance >= 0"),
    (["--margin", "0.1"], "--sole and --margin describe the contacts of --support"),
    (["--support", "fot", "--sole", "0.4x0.2"], "reljac: error: FrameNotFound: frame 'fot'"),
    (["--support", "foot"], "reljac: error: SupportError: at the reference configuration"),
    (["--support", "foot,", "--sole", "0.4x0.2"], "reljac: error: SupportError: --support expects contact frame"),
    (["--support", "foot", "--sole", "0.4x0.2", "--margin", "0.2"], "leaves nothing of the support region"),
], ids=["sole-one-number", "sole-zero", "sole-nan", "margin-negative", "margin-alone", "unknown-frame",
        "point-contact", "empty-name", "margin-too-large"])
def test_map_bad_support_values_are_one_line(capsys, stand_path, tmp_path, extra, message):
    code = main(["map", stand_path, "base_link", "tip", "--samples", "10", "--voxel", "0.1",
                 "--out", str(tmp_path / "m.npz"), "--no-progress", *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.npz").exists()


def test_analyze_com_of_floating_talos_is_pinocchios(capsys, talos):
    report = run_json(capsys, "analyze", "talos", "--com")["com"]
    q = talos.configuration("half_sitting")  # Talos' reference configuration
    data = talos.model.createData()
    np.testing.assert_allclose(report["q"], q)
    np.testing.assert_allclose(report["position"], pin.centerOfMass(talos.model, data, q), atol=1e-12)
    np.testing.assert_allclose(report["jacobian"], pin.jacobianCenterOfMass(talos.model, data, q), atol=1e-12)
    assert report["frame"] == "universe" and report["mass"] == pytest.approx(pin.computeTotalMass(talos.model))
    assert report["columns"][:7] == [f"root_joint[{k}]" for k in range(6)] + ["leg_left_1_joint"]
    assert main(["analyze", "talos", "--com"]) == 0
    text = capsys.readouterr().out
    line = next(s for s in text.splitlines() if s.strip().startswith("p [m]:"))
    np.testing.assert_allclose([float(x) for x in line.split("[")[-1].rstrip("]").split()], report["position"],
                               atol=1e-4)


def test_analyze_com_in_a_frame_against_finite_differences(capsys, talos):
    q = talos.configuration("half_sitting")
    q[talos.model.joints[talos.model.getJointId("arm_left_4_joint")].idx_q] = -1.2
    values = [str(x) for x in q]
    report = run_json(capsys, "analyze", "talos", "--com-frame", "left_sole_link", "--q", *values)["com"]
    model, data, fid = talos.model, talos.model.createData(), talos.model.getFrameId("left_sole_link")

    def p_ac(x: np.ndarray) -> np.ndarray:
        c = pin.centerOfMass(model, data, x)
        pin.updateFramePlacements(model, data)
        T = data.oMf[fid]
        return T.rotation.T @ (c - T.translation)

    np.testing.assert_allclose(report["position"], p_ac(q), atol=1e-12)
    eps, J_fd = 1e-6, np.empty((3, model.nv))
    for i in range(model.nv):
        dv = np.zeros(model.nv)
        dv[i] = eps
        J_fd[:, i] = (p_ac(pin.integrate(model, q, dv)) - p_ac(pin.integrate(model, q, -dv))) / (2 * eps)
    np.testing.assert_allclose(report["jacobian"], J_fd, atol=1e-7)
    assert report["frame"] == "left_sole_link"


def test_analyze_com_with_locked_joints_counts_the_locked_bodies(capsys, talos):
    report = run_json(capsys, "analyze", "talos", "--lock", "leg_*", "--lock", "root_joint", "--com",
                      "--q-named", "half_sitting")["com"]
    q = talos.configuration("half_sitting")
    data = talos.model.createData()
    np.testing.assert_allclose(report["position"], pin.centerOfMass(talos.model, data, q), atol=1e-12)
    J = pin.jacobianCenterOfMass(talos.model, data, q)
    columns = [talos.model.joints[talos.model.getJointId(name)].idx_v for name in report["columns"]]
    assert len(columns) == 38 - 6 - 12
    np.testing.assert_allclose(report["jacobian"], J[:, columns], atol=1e-12)
    assert report["mass"] == pytest.approx(pin.computeTotalMass(talos.model))
    assert len(report["locked_joints"]) == 13


def test_analyze_with_frames_and_com_reports_both_and_the_fixed_base_link_counts(capsys):
    """planar_2link's base_link (2 kg) is fixed to the world: Pinocchio keeps it in
    model.inertias[0] and its centerOfMass leaves it out; the whole robot's centre of mass has it."""
    document = run_json(capsys, "analyze", "planar_2link", "base_link", "tip", "--samples", "20", "--com",
                        "--q", "0.3", "0.9")
    plain = run_json(capsys, "analyze", "planar_2link", "base_link", "tip", "--samples", "20")
    assert {k: v for k, v in document.items() if k != "com"} == plain and plain["samples"] == 20
    model = reljac.Robot.bundled("planar_2link").model
    data, q, base = model.createData(), np.array([0.3, 0.9]), model.inertias[0]
    m = pin.computeTotalMass(model)
    c = (m * pin.centerOfMass(model, data, q) + base.mass * base.lever) / (m + base.mass)
    J = m / (m + base.mass) * pin.jacobianCenterOfMass(model, data, q)
    assert base.mass == document["com"]["fixed_mass"] == 2.0
    np.testing.assert_allclose(document["com"]["position"], c, atol=1e-12)
    np.testing.assert_allclose(document["com"]["jacobian"], J, atol=1e-12)


@pytest.mark.parametrize("argv, message", [
    (["analyze", "talos"], "reljac: error: give frames A and B"),
    (["analyze", "talos", "base_link"], "give frames A and B"),
    (["analyze", "talos", "--com-frame", "left_sole_lnk"], "reljac: error: FrameNotFound: frame 'left_sole_lnk'"),
    (["analyze", "planar_2link", "base_link", "tip", "--q", "0.1", "0.2"], "choose the configuration of --com"),
    (["analyze", "planar_2link", "--com", "--q", "0.1"], "reljac: error: ConfigurationError"),
    (["analyze", "planar_2link", "--com", "--q-named", "home"], "reljac: error:"),
], ids=["nothing", "one-frame", "unknown-frame", "q-without-com", "short-q", "unknown-posture"])
def test_analyze_bad_com_input_is_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1

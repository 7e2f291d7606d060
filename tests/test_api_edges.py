"""Edges of the public API found by a hostile pass (issue 28, "the rest of the API"): each is a
clear reljac error or the right value, on both backends where they differ; expected values come
from Pinocchio directly or from closed forms."""

from __future__ import annotations

import copy
import gc
import inspect
import json
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

import reljac
from reljac import Kinematics, Robot
from reljac.compiled_core import Core
from reljac.exceptions import ConfigurationError, MapError, SupportError, TaskError
from reljac.ik import Controller, FrameTask
from reljac.ik.solvers.hierarchy import DampingPolicy
from reljac.ik.tasks.base import Task
from reljac.support import SupportContact, support_polygon


@pytest.fixture(scope="module")
def dual_arm():
    return Robot.bundled("dual_arm")


@pytest.fixture(params=BACKENDS)
def kinematics_backend(request, monkeypatch):
    """The relative kinematics on the compiled core or on its Python path."""
    if request.param == "python":
        monkeypatch.setattr(Core, "module", None)
        monkeypatch.setattr(Core, "loaded", True)
    else:
        monkeypatch.setattr(Core, "loaded", False)
        if Core.get() is None:
            pytest.skip("the compiled core is not loaded (RELJAC_BACKEND=python)")
    return request.param


def pinocchio_placements(robot, q):
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return data.oMf


# ---------------------------------------------------------------------------- Kinematics' data
@pytest.mark.parametrize("make", [lambda r: pin.Data(), lambda r: Robot.bundled("hand").model.createData(),
                                  lambda r: {}, lambda r: r.model])
def test_a_data_of_another_model_is_refused_before_pinocchio_sees_it(dual_arm, make, kinematics_backend):
    with pytest.raises(ConfigurationError, match="pin.Data") as info:
        Kinematics(dual_arm, dual_arm.reference_configuration(), data=make(dual_arm))
    assert "createData()" in str(info.value)


@pytest.mark.parametrize("name, frame", [("dual_arm", "left_tool"), ("hand", "index_tip")])  # hand: mimic joints
def test_a_data_of_the_robots_model_is_used(name, frame):
    robot = Robot.bundled(name)
    data = robot.model.createData()
    q = robot.random_configuration(1)
    kin = Kinematics(robot, q, data=data)
    assert kin.data is data
    np.testing.assert_allclose(data.oMf[robot.frame_id(frame)].homogeneous,
                               pinocchio_placements(robot, q)[robot.frame_id(frame)].homogeneous)


def test_a_copied_kinematics_has_its_own_data_and_later_ones_do_not_share(dual_arm):
    q0, q1, q2 = (dual_arm.random_configuration(seed) for seed in (1, 2, 3))
    kin = Kinematics(dual_arm, q0)
    twin = copy.copy(kin)
    assert twin.data is not kin.data
    np.testing.assert_array_equal(twin.q, kin.q)
    del kin, twin
    gc.collect()  # both give their data back: two different ones
    a, b = Kinematics(dual_arm, q1), Kinematics(dual_arm, q2)
    for kin, q in ((a, q1), (b, q2)):
        oMf = pinocchio_placements(dual_arm, q)
        fa, fb = dual_arm.frame_id("left_tool"), dual_arm.frame_id("right_tool")
        np.testing.assert_allclose(kin.relative_placement("left_tool", "right_tool").homogeneous,
                                   oMf[fa].actInv(oMf[fb]).homogeneous, atol=1e-12)


# ---------------------------------------------------------------------------- expressed_in
def test_a_numpy_string_names_the_axes_on_both_backends(dual_arm, kinematics_backend):
    q = dual_arm.random_configuration(4)
    kin = Kinematics(dual_arm, q)
    for keyword in ("a", "b", "world", "torso"):
        expected = kin.relative_jacobian("left_tool", "right_tool", expressed_in=keyword)
        np.testing.assert_array_equal(
            kin.relative_jacobian("left_tool", "right_tool", expressed_in=np.str_(keyword)), expected)
        np.testing.assert_array_equal(
            kin.relative_jacobians([("left_tool", "right_tool")], expressed_in=np.str_(keyword))[0], expected)
        np.testing.assert_allclose(reljac.relative_jacobian(dual_arm, q, "left_tool", "right_tool",
                                                            expressed_in=np.str_(keyword)), expected, atol=1e-12)
    # "b": the body Jacobian, R_ba J_ab (an independent rotation from Pinocchio's placements)
    oMf = pinocchio_placements(dual_arm, q)
    R_ab = oMf[dual_arm.frame_id("left_tool")].rotation.T @ oMf[dual_arm.frame_id("right_tool")].rotation
    J_a = kin.relative_jacobian("left_tool", "right_tool")
    np.testing.assert_allclose(kin.relative_jacobians([("left_tool", "right_tool")], expressed_in=np.str_("b"))[0],
                               np.vstack((R_ab.T @ J_a[:3], R_ab.T @ J_a[3:])), atol=1e-12)


# ---------------------------------------------------------------------------- the solver's overflow
def far_task(robot, q, weight=1.0, offset=0.0) -> FrameTask:
    task = FrameTask("left_tool", weight=weight)
    T = Kinematics(robot, q).placement("left_tool")
    task.set_target(pin.SE3(T.rotation, T.translation + offset))
    return task


@pytest.mark.parametrize("backend", BACKENDS)
def test_rows_that_overflow_are_a_task_error_on_both_backends(dual_arm, backend):
    q = dual_arm.reference_configuration()
    with pytest.raises(TaskError, match=r"1e\+155: reljac computes with \|entries\| <= 1e\+100"):
        far_task(dual_arm, q, 1e155, 0.1)  # (a weight whose rows' Gram matrix overflows: refused when set)
    controller = Controller(dual_arm, [[far_task(dual_arm, q, 1e100, 1e100)]], dt=0.01, backend=backend)
    with pytest.raises(TaskError, match="overflow"):
        controller.step(q)


def test_a_target_beyond_what_reljac_computes_with_is_refused_when_set(dual_arm):
    with pytest.raises(TaskError, match=r"1e\+100"):
        far_task(dual_arm, dual_arm.reference_configuration(), 1.0, 1e155)


@pytest.mark.parametrize("max_damping", [1e200, 1e155, 2e150])
def test_a_damping_whose_square_overflows_is_refused_with_what_is_valid(max_damping):
    """Issue 28: DampingPolicy(threshold=1e300, max_damping=1e200) gave an OverflowError; lambda_max^2
    must be finite: max_damping at most 1e150, refused by the policy both backends take."""
    with pytest.raises(ConfigurationError, match=r"max_damping must be at most 1e\+150 .*got"):
        DampingPolicy(threshold=1e300, max_damping=max_damping)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_largest_damping_allowed_damps_a_singular_level_to_nothing(dual_arm, backend):
    """max_damping = 1e150 (lambda^2 = 1e300) under threshold 1e300: every level is below the
    threshold, so its step is b / (sigma^2 + 1e300) times sigma: zero to double precision."""
    q = dual_arm.reference_configuration()
    controller = Controller(dual_arm, [[far_task(dual_arm, q, offset=0.05)]], dt=0.01,
                            damping=DampingPolicy(threshold=1e300, max_damping=1e150), backend=backend)
    np.testing.assert_allclose(controller.velocity(q), np.zeros(dual_arm.nv), atol=1e-200)


# ---------------------------------------------------------------------------- support polygons
SQUARE = support_polygon([[0, 0], [1, 0], [1, 1], [0, 1]])


@pytest.mark.parametrize("x", [[0.5], [0.5, 0.5, 0.5, 0.5], [np.nan, 0.5], "ab", None, [True, False],
                               [[0.5, 0.5]], [0.5, np.inf]])
def test_a_point_that_is_not_two_or_three_numbers_is_a_support_error(x):
    with pytest.raises(SupportError, match="2 or 3 finite numbers"):
        SQUARE.signed_distance(x)
    with pytest.raises(SupportError, match="2 or 3 finite numbers"):
        SQUARE.contains(x)


@pytest.mark.parametrize("margin", [-1, np.nan, "0.1", None, True])
def test_a_bad_margin_is_a_support_error(margin):
    with pytest.raises(SupportError, match="margin"):
        SQUARE.contains([0.5, 0.5], margin)


def test_points_inside_and_out_of_the_unit_square():
    assert SQUARE.signed_distance([0.25, 0.5]) == pytest.approx(0.25)  # nearest edge x = 0
    assert SQUARE.signed_distance((2.0, 0.5, 7.0)) == pytest.approx(-1.0)  # z ignored
    assert SQUARE.contains([0.25, 0.5], 0.2) and not SQUARE.contains([0.25, 0.5], 0.3)


# ---------------------------------------------------------------------------- maps and the world frame
def test_a_support_region_in_the_world_by_any_name_is_taken_by_a_map():
    from reljac.ik import SupportRegion
    from reljac.maps.balance import MapSupport

    robot = Robot.bundled("dual_arm")
    contact = SupportContact.rectangle("torso", 0.4, 0.4)
    for world in ("world", "universe", 0):
        support = MapSupport.from_any(SupportRegion(robot, [contact], margin=0.01, frame=world))
        assert support.margin == 0.01 and support.contacts == (contact,)
    with pytest.raises(MapError, match="frame is 'torso'"):
        MapSupport.from_any(SupportRegion(robot, [contact], frame="torso"))


# ---------------------------------------------------------------------------- the command line
@pytest.mark.parametrize("demo", ["hand", "talos-balance"])
def test_crossing_is_refused_outside_the_dual_arm_demo(demo, capsys):
    from reljac.apps.demo import main

    with pytest.raises(SystemExit) as exc:
        main([demo, "--crossing", "2", "--headless"])
    assert exc.value.code == 2 and "--crossing is for the dual-arm demo only" in capsys.readouterr().err


def test_info_json_prints_unbounded_limits_as_null(capsys):
    from reljac.apps.cli import main

    robot = Robot.load("talos")
    assert main(["info", "talos", "--json"]) == 0
    joints = {j["name"]: j for j in json.loads(capsys.readouterr().out)["joints"]}
    assert joints["root_joint"]["velocity_limits"] == [None] * 6
    limit = robot.model.velocityLimit[robot.model.joints[robot.joint_id("leg_left_1_joint")].idx_v]
    assert joints["leg_left_1_joint"]["velocity_limits"] == [limit] and 0 < limit < 100


def structural_rank(robot, a, b, rows, samples=5) -> int:
    """The largest rank of J_ab's rows over random q, from finite differences of Pinocchio's
    placements (p_ab moved along each velocity coordinate)."""
    fa, fb = robot.frame_id(a), robot.frame_id(b)
    rng = np.random.default_rng(0)
    best = 0
    for _ in range(samples):
        q = pin.randomConfiguration(robot.model)
        J = np.empty((3, robot.nv))
        for k in range(robot.nv):
            dv = np.zeros(robot.nv)
            dv[k] = 1e-6
            p = [pinocchio_placements(robot, pin.integrate(robot.model, q, s * dv)) for s in (1, -1)]
            J[:, k] = (p[0][fa].actInv(p[0][fb]).translation - p[1][fa].actInv(p[1][fb]).translation) / 2e-6
        best = max(best, int(np.linalg.matrix_rank(J[rows], tol=1e-6)))
        rng.random()
    return best


def test_a_structurally_rank_deficient_pair_says_so_instead_of_noise():
    from reljac.workspace import format_workspace_summary

    ur5 = Robot.load("ur5")
    assert structural_rank(ur5, "forearm_link", "tool0", [0, 1, 2]) == 2  # the independent count
    summary = reljac.workspace_summary(ur5, "forearm_link", "tool0", samples=300, seed=0)
    assert summary.rank == 2 and summary.closest_to_singular == []
    assert summary.index["max"] == 0.0 and summary.smallest_singular_value["max"] == 0.0
    assert summary.condition_number["min"] == np.inf and summary.to_dict()["rank"] == 2
    assert "rank 2 < 3 at every sample" in format_workspace_summary(summary)
    full_rank = reljac.workspace_summary(ur5, "base_link", "tool0", samples=300, seed=0)
    assert full_rank.rank is None and full_rank.index["median"] > 1e-3


def test_reljac_map_says_rank_2_below_3(tmp_path):
    out = subprocess.run([sys.executable, "-m", "reljac.apps.cli", "map", "ur5", "forearm_link", "tool0",
                          "--samples", "500", "--voxel", "0.05", "--out", str(tmp_path / "m.npz"), "--no-progress"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "best manipulability (position): 0: rank 2 < 3 at every sample" in out.stdout


# ---------------------------------------------------------------------------- help() of the tasks
TASKS = [getattr(reljac.ik, name) for name in reljac.ik.__all__
         if isinstance(getattr(reljac.ik, name), type) and issubclass(getattr(reljac.ik, name), Task)]


@pytest.mark.parametrize("cls", TASKS, ids=lambda c: c.__name__)
def test_every_public_task_shows_its_keyword_arguments(cls):
    parameters = inspect.signature(cls).parameters
    assert {"gain", "weight", "max_speed", "name"} <= set(parameters)
    assert not any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    assert all(parameters[k].kind is inspect.Parameter.KEYWORD_ONLY for k in ("gain", "weight", "max_speed", "name"))
    import pydoc

    assert "max_speed" in pydoc.render_doc(cls)


def test_the_shown_keywords_are_the_ones_taken():
    task = reljac.ik.RelativePositionTask("a", "b", gain=3.0, weight=[1, 0, 1], max_speed=0.5, name="p")
    assert (task.gain, task.name) == (3.0, "p") and task.max_speed.tolist() == [0.5, 0.5]
    with pytest.raises(TypeError):
        reljac.ik.RelativePositionTask("a", "b", gian=3.0)


def test_a_task_reads_as_its_kind_and_name():
    """A REPL line like `stack.levels` showed <... object at 0x7f...> for every task."""
    from reljac.ik import FrameTask, PostureTask

    robot = Robot.bundled("dual_arm")
    assert repr([[FrameTask("left_tool")], [PostureTask(robot, name="rest")]]) == \
        "[[<FrameTask 'pose of left_tool'>], [<PostureTask 'rest'>]]"

"""Robots by name: the bundled ones and example-robot-data's, each as its upstream loader gives it.

Oracles: Pinocchio's own URDF parser (joint names and root joint), Pinocchio's SRDF readers
(``loadReferenceConfigurations`` for the reference postures, ``removeCollisionPairs`` for the
disabled pairs), and the files of the installed package.
"""

from __future__ import annotations

import inspect
import os

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac import URDFError, robots
from reljac.apps.cli import main
from reljac.robot import FROM_URDF_KEYWORDS

ERD = robots.example_robot_data_dir()
needs_erd = pytest.mark.skipif(ERD is None, reason="example-robot-data is not installed")
INSTALLED = robots.example_robots()


def test_bundled_names_come_first_then_the_installed_example_robots():
    names = robots.available_robots()
    bundled = reljac.bundled_robots()
    assert names[: len(bundled)] == bundled
    assert names[len(bundled):] == sorted(names[len(bundled):])
    assert set(names[len(bundled):]) <= set(robots.EXAMPLE_ROBOTS)
    if ERD is not None:  # every table entry whose URDF is installed, and only those
        on_disk = {n for n, e in robots.EXAMPLE_ROBOTS.items() if (ERD / e.urdf).is_file()}
        assert set(names[len(bundled):]) == on_disk
        assert {"panda", "ur5", "talos", "tiago_dual", "allegro_right_hand"} <= on_disk


@needs_erd
@pytest.mark.parametrize("name", INSTALLED)
@pytest.mark.slow
def test_every_installed_name_loads_as_pinocchio_parses_its_urdf(name):
    source = robots.resolve(name)
    robot = reljac.Robot.load(name)
    root = [pin.JointModelFreeFlyer()] if source.floating_base else []
    oracle = pin.buildModelFromUrdf(str(source.urdf), *root, mimic=source.mimic)
    assert list(robot.model.names) == list(oracle.names)
    assert (robot.nq, robot.nv) == (oracle.nq, oracle.nv)
    assert robot.floating_base == source.floating_base and robot.mimic == source.mimic
    assert robot.urdf_path == source.urdf and source.urdf.is_file()
    if source.srdf is not None:
        assert robot.srdf is not None and robot.srdf.path == source.srdf
        assert source.posture is None or source.posture in robot.srdf.group_states


@needs_erd
@pytest.mark.parametrize("name", [n for n in INSTALLED if robots.resolve(n).posture])
@pytest.mark.slow
def test_reference_postures_equal_pinocchios_reference_configurations(name):
    robot = reljac.Robot.load(name)
    source = robots.resolve(name)
    model = pin.Model(robot.model)
    pin.loadReferenceConfigurations(model, str(source.srdf), False)
    expected = pin.normalize(model, model.referenceConfigurations[source.posture])
    q = robot.reference_configuration()
    lo, hi = robot.lower_limits, robot.upper_limits
    inside = (expected >= lo) & (expected <= hi)
    np.testing.assert_allclose(q[inside], expected[inside], atol=1e-12)
    assert np.all((q >= lo) & (q <= hi))  # the rest (unnamed joints at 0, postures past a limit) is put inside
    put_back = (q == np.clip(expected, lo, hi)) | (q == 0.5 * (lo + hi))
    assert np.all(put_back[~inside])
    robot.validate_q(q)


@needs_erd
@pytest.mark.parametrize("name", ["panda", "ur5", "talos"])
@pytest.mark.slow
def test_srdf_pairs_are_pinocchios_pairs_without_the_rigid_ones(name):
    """Active pairs = Pinocchio's all pairs minus the SRDF's (removeCollisionPairs), by link, less
    the pairs of links fixed to each other (their distance never changes)."""
    robot = reljac.Robot.load(name)
    geometry = robot.collision_model.copy()
    geometry.addAllCollisionPairs()
    pin.removeCollisionPairs(robot.model, geometry, str(robot.srdf.path), False)
    frames, objects = robot.model.frames, geometry.geometryObjects
    expected = set()
    for pair in geometry.collisionPairs:
        a, b = objects[pair.first], objects[pair.second]
        if a.parentJoint != b.parentJoint:
            expected.add(frozenset((frames[a.parentFrame].name, frames[b.parentFrame].name)))
    assert {frozenset(p) for p in robot.collision_pairs} == expected
    dropped = {frozenset(d[:2]) for d in robot.collisions.dropped if d[2].startswith("SRDF")}
    assert dropped and not dropped & expected


@needs_erd
def test_collision_pairs_are_edited_through_the_robots_collision_model():
    robot = reljac.Robot.load("panda")
    pair = robot.collision_pairs[0]
    assert robot.collisions is robot.collisions  # built once
    robot.collisions.remove_pairs([pair])
    assert pair not in robot.collision_pairs
    assert reljac.collision.distances(robot, robot.neutral()).pairs.count(pair) == 0
    robot.collisions.add_pairs([pair])
    assert pair in robot.collision_pairs


@needs_erd
@pytest.mark.slow
def test_named_robots_keep_options_given_and_shared_srdfs_are_restricted():
    fixed = reljac.Robot.load("talos", floating_base=False)
    assert fixed.nq == reljac.Robot.load("talos").nq - 7 and not fixed.floating_base
    arm = reljac.Robot.load("talos_arm")  # talos.srdf, written for the whole robot
    links = set(arm.link_names)
    assert arm.srdf.disabled and all({p.link1, p.link2} <= links for p in arm.srdf.disabled)
    q = arm.reference_configuration()  # half_sitting's values of the arm's own joints
    expected = reljac.Robot.load("talos").configuration("half_sitting")
    talos = reljac.Robot.load("talos")
    for name, value in arm.joint_values(q).items():
        assert value == pytest.approx(talos.joint_values(expected)[name])
    no_srdf = reljac.Robot.load("panda", srdf=None)
    assert no_srdf.srdf is None and no_srdf.reference_posture is None


def test_unknown_names_get_near_matches_and_a_list(tmp_path, monkeypatch):
    with pytest.raises(URDFError, match="no robot named 'dual_armm'; did you mean 'dual_arm'"):
        reljac.Robot.load("dual_armm")
    with pytest.raises(URDFError, match=r"\(robots: dual_arm, hand"):
        reljac.Robot.load("nothing_like_it")
    with pytest.raises(URDFError, match="does not exist"):
        reljac.Robot.load(str(tmp_path / "panda.urdf"))
    with pytest.raises(URDFError, match="a robot is a name or a URDF path, not int"):
        reljac.Robot.load(3)


def test_without_example_robot_data_its_names_say_how_to_install_it(monkeypatch):
    monkeypatch.setattr(robots, "example_robot_data_dir", lambda: None)
    assert robots.available_robots() == reljac.bundled_robots()
    with pytest.raises(URDFError, match=r"comes from example-robot-data, which is not installed: pip install"):
        reljac.Robot.load("panda")
    assert reljac.Robot.load("hand").name == "hand"


def test_a_file_on_disk_wins_over_a_name(tmp_path, monkeypatch):
    (tmp_path / "panda").write_text(
        '<robot name="mine"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
        '<parent link="a"/><child link="b"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    monkeypatch.chdir(tmp_path)
    assert reljac.Robot.load("panda").name == "mine"


def test_reljac_robots_lists_the_names_that_resolve(capsys):
    assert main(["robots"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = [line.split()[0] for line in lines[1:] if line and not line.startswith((" ", "\t")) and "robots" not in line
              and "example-robot-data is" not in line]
    assert listed == robots.available_robots()
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.strip()}
    assert rows["dual_arm"][1:] == ["bundled", "fixed", "-", "-"]
    if ERD is not None:
        assert rows["talos"][1:] == ["example-robot-data", "floating", "yes", "half_sitting"]
        assert rows["tiago_dual"][1:] == ["example-robot-data", "fixed", "-", "-"]


@needs_erd
@pytest.mark.slow
def test_every_command_line_robot_argument_takes_a_name(capsys):
    assert main(["info", "panda"]) == 0
    out = capsys.readouterr().out
    assert "robot 'panda'" in out and "nq = 8" in out
    assert main(["jacobian", "ur5", "base_link", "tool0", "--seed", "3"]) == 0
    capsys.readouterr()
    assert main(["check", "talos_full", "--samples", "2"]) == 0  # mimic=False as its table says
    assert "the layers agree" in capsys.readouterr().out
    assert main(["info", "pand"]) == 2
    assert "did you mean 'panda'" in capsys.readouterr().err


@needs_erd
def test_path_names_of_example_robots_match_the_loader_folders():
    """The table's files are those of the package, under upstream's folder layout."""
    for name in INSTALLED:
        entry = robots.EXAMPLE_ROBOTS[name]
        folder, sub, _ = entry.urdf.split("/")
        assert sub in ("robots", "urdf") and (ERD / folder).is_dir()
        if entry.srdf:
            assert entry.srdf.startswith(f"{folder}/srdf/")
    assert os.path.basename(robots.EXAMPLE_ROBOTS["ur3"].urdf) == "ur3_robot.urdf"


def test_the_reference_configuration_is_neutral_with_joints_outside_their_limits_at_the_middle():
    """dual_arm (no SRDF): q = 0 lies outside some limits; those joints take (lower + upper) / 2."""
    robot = reljac.Robot.bundled("dual_arm")
    lo, hi, zero = robot.lower_limits, robot.upper_limits, robot.neutral()
    outside = (zero < lo) | (zero > hi)
    assert outside.any()
    q = robot.reference_configuration()
    np.testing.assert_array_equal(q[~outside], zero[~outside])
    np.testing.assert_allclose(q[outside], 0.5 * (lo + hi)[outside], rtol=0, atol=0)


@needs_erd
@pytest.mark.parametrize("name, posture", [("allegro_right_hand", None), ("panda", "default")])
def test_allegro_and_panda_posture_tasks_aim_inside_the_joint_limits(name, posture):
    """Issue 18: neutral() is outside the limits of both; PostureTask aimed at it by default."""
    from reljac.ik import PostureTask

    robot = reljac.Robot.load(name)
    lo, hi = robot.lower_limits, robot.upper_limits
    assert not np.all((robot.neutral() >= lo) & (robot.neutral() <= hi))
    assert robot.reference_posture == posture
    q = robot.reference_configuration()
    assert np.all((q >= lo) & (q <= hi))
    if posture:  # the SRDF's values where it names the joint
        state = robot.srdf.group_states[posture]
        for joint, value in state.items():
            if joint in robot.joint_names:
                assert robot.joint_values(q)[joint] == pytest.approx(value, abs=1e-12)
    np.testing.assert_array_equal(PostureTask(robot).target, q)


def test_an_unknown_keyword_names_the_loader_and_what_it_takes():
    # was: "from_urdf() got an unexpected keyword argument 'nonsense'" from Robot.load
    for load in (lambda: reljac.Robot.load("panda", nonsense=1), lambda: reljac.Robot.bundled("dual_arm", nonsense=1)):
        with pytest.raises(TypeError, match=r"^Robot\.(load|bundled)\(\) got an unexpected keyword argument 'nonsense' "
                                            r"\(it takes package_dirs, floating_base, mimic, srdf"):
            load()
    taken = [name for name, p in inspect.signature(reljac.Robot.from_urdf).parameters.items()
             if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert tuple(taken) == FROM_URDF_KEYWORDS  # the list the check reads is from_urdf's own


def test_a_folder_named_like_a_robot_does_not_hide_it(tmp_path, monkeypatch):
    """An adversarial pass: a folder 'dual_arm' in the working folder gave "'dual_arm' is a
    directory, not a URDF file"; a folder is not a URDF, so the name is the robot's."""
    (tmp_path / "dual_arm").mkdir()
    monkeypatch.chdir(tmp_path)
    assert reljac.Robot.load("dual_arm").nq == reljac.Robot.bundled("dual_arm").nq

"""URDF structure the Pinocchio layer checks itself, before and after Pinocchio parses a file.

Each malformed file must give one URDFError line naming the element (never a C++ dump, never a
robot with part of the file silently gone), and nothing from urdfdom, Pinocchio or coal may reach
the terminal (checked on file descriptors 1 and 2 with capfd).
"""

from __future__ import annotations

import ast
import errno
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from helpers import example_robot_data_dir

import reljac
from reljac import Robot
from reljac.exceptions import FrameNotFound, URDFError
from reljac.urdf_checks import Joint, Urdf, check_loaded, pinocchio_order

LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def joint(name, parent, child, kind="revolute", extra=LIMIT, axis="0 0 1", origin=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'{origin}<axis xyz="{axis}"/>{extra}</joint>')


def robot_text(links, *joints, name="r"):
    return f'<robot name="{name}">' + "".join(f'<link name="{link}"/>' for link in links) + "".join(joints) + "</robot>"


def chain(*extra_joints, links=("a", "b", "c")):
    """a -j1-> b -j2-> c plus extra joints."""
    return robot_text(links, joint("j1", "a", "b"), joint("j2", "b", "c"), *extra_joints)


def load(tmp_path, text, **kwargs):
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    return Robot.from_urdf(path, **kwargs)


def assert_rejected(tmp_path, capfd, text, *fragments, **kwargs):
    capfd.readouterr()
    with pytest.raises(URDFError) as info:
        load(tmp_path, text, **kwargs)
    message = str(info.value)
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == "", printed
    return message


MIMIC = '<mimic joint="{}" multiplier="0.5"/>'

CASES = {  # id: (URDF text, fragments the message must contain, keyword arguments)
    "cycle apart from the tree": (
        robot_text("abcd", joint("j1", "a", "b"), joint("j2", "c", "d"), joint("j3", "d", "c")),
        ["cycle", "'j2'", "'j3'"], {}),
    "cycle through every link": (
        robot_text("ab", joint("j1", "a", "b"), joint("j2", "b", "a")), ["cycle", "'j1'", "'j2'"], {}),
    "link child of two joints": (
        robot_text("abc", joint("j1", "a", "c"), joint("j2", "b", "c")), ["link 'c'", "'j1'", "'j2'"], {}),
    "two roots": (robot_text("abc", joint("j1", "a", "b")), ["root", "'a'", "'c'"], {}),
    "joint to itself": (chain(joint("j3", "c", "c")), ["'j3'", "itself"], {}),
    "unknown parent": (chain(joint("j3", "cc", "c")), ["'j3'", "'cc'"], {}),
    "duplicate link": (robot_text("aab", joint("j1", "a", "b")), ["link 'a'", "twice"], {}),
    "duplicate joint": (robot_text("abc", joint("j1", "a", "b"), joint("j1", "b", "c")), ["'j1'", "twice"], {}),
    "joint named universe": (robot_text("ab", joint("universe", "a", "b")), ["'universe'", "reserved"], {}),
    "root_joint with floating base": (robot_text("ab", joint("root_joint", "a", "b")), ["'root_joint'"],
                                      {"floating_base": True}),
    "no robot name": ('<robot><link name="a"/></robot>', ["no name"], {}),
    "no link": ('<robot name="r"/>', ["no <link>"], {}),
    "link without name": ('<robot name="r"><link/></robot>', ["<link> has no name"], {}),
    "unknown joint type": (chain(joint("j3", "c", "d", kind="spherical"), links="abcd"), ["'j3'", "spherical"], {}),
    "revolute without limit": (chain(joint("j3", "c", "d", extra=""), links="abcd"), ["'j3'", "<limit>"], {}),
    "prismatic without limit": (chain(joint("j3", "c", "d", kind="prismatic", extra=""), links="abcd"),
                                ["'j3'", "<limit>"], {}),
    "limit without effort": (chain(joint("j3", "c", "d", extra='<limit lower="0" upper="1" velocity="1"/>'),
                                   links="abcd"), ["'j3'", "effort"], {}),
    "limit nan": (chain(joint("j3", "c", "d", extra='<limit lower="nan" upper="1" effort="1" velocity="1"/>'),
                        links="abcd"), ["'j3'", "lower", "finite"], {}),
    "limit inf": (chain(joint("j3", "c", "d", extra='<limit lower="-inf" upper="inf" effort="1" velocity="1"/>'),
                        links="abcd"), ["'j3'", "finite"], {}),
    "limit text": (chain(joint("j3", "c", "d", extra='<limit lower="x" upper="1" effort="1" velocity="1"/>'),
                         links="abcd"), ["'j3'", "lower"], {}),
    "negative velocity limit": (chain(joint("j3", "c", "d", extra='<limit lower="0" upper="1" effort="1" velocity="-1"/>'),
                                      links="abcd"), ["'j3'", "velocity", ">= 0"], {}),
    "lower above upper": (chain(joint("j3", "c", "d", extra='<limit lower="1" upper="0" effort="1" velocity="1"/>'),
                                links="abcd"), ["'j3'", "lower limit 1 > upper limit 0"], {}),
    "origin of two numbers": (chain(joint("j3", "c", "d", origin='<origin xyz="1 2"/>'), links="abcd"),
                              ["'j3'", "xyz", "3 finite numbers"], {}),
    "origin nan": (chain(joint("j3", "c", "d", origin='<origin rpy="0 nan 0"/>'), links="abcd"), ["'j3'", "rpy"], {}),
    "zero axis": (chain(joint("j3", "c", "d", axis="0 0 0"), links="abcd"), ["'j3'", "axis"], {}),
    # Pinocchio moves any planar joint in its x-y plane: this one was modelled in the wrong plane
    "planar not about z": (chain(joint("j3", "c", "d", kind="planar", axis="1 0 0", extra=""), links="abcd"),
                           ["'j3'", "planar", "axis 0 0 1", "<origin>"], {}),
    "planar about -z": (chain(joint("j3", "c", "d", kind="planar", axis="0 0 -1", extra=""), links="abcd"),
                        ["'j3'", "planar", "normal +z"], {}),
    "axis text": (chain(joint("j3", "c", "d", axis="x y z"), links="abcd"), ["'j3'", "axis"], {}),
    "axis without xyz": (chain(joint("j3", "c", "d").replace('<axis xyz="0 0 1"/>', "<axis/>"), links="abcd"),
                         ["'j3'", "<axis> has no xyz"], {}),  # urdfdom reads it as a zero axis
    "mimic unknown leader": (chain(joint("j3", "c", "d", extra=LIMIT + MIMIC.format("j22")), links="abcd"),
                             ["'j3'", "'j22'", "not in the robot", "did you mean 'j2'"], {}),
    "mimic chain": (chain(joint("j3", "c", "d", extra=LIMIT + MIMIC.format("j2")), links="abcd").replace(
        f'{LIMIT}</joint><joint name="j3"', f'{LIMIT}{MIMIC.format("j1")}</joint><joint name="j3"'),
        ["'j3'", "'j2'", "itself mimics 'j1'", "mimic=False"], {}),
    "mimic cycle": (robot_text("abc", joint("j1", "a", "b", extra=LIMIT + MIMIC.format("j2")),
                               joint("j2", "b", "c", extra=LIMIT + MIMIC.format("j1"))), ["mimics", "mimic=False"], {}),
    "mimic itself": (chain(joint("j3", "c", "d", extra=LIMIT + MIMIC.format("j3")), links="abcd"),
                     ["'j3'", "itself"], {}),
    "mimic of a fixed joint": (robot_text("abc", joint("j1", "a", "b", kind="fixed", extra=""),
                                          joint("j2", "b", "c", extra=LIMIT + MIMIC.format("j1"))),
                               ["'j2'", "'j1'", "type fixed"], {}),
    "floating joint with mimic": (chain(joint("j3", "c", "d", kind="floating", extra=MIMIC.format("j1")), links="abcd"),
                                  ["'j3'", "floating", "only revolute, continuous and prismatic"], {}),
    "continuous mimics revolute": (chain(joint("j3", "c", "d", kind="continuous", extra=MIMIC.format("j1")),
                                         links="abcd"), ["'j3'", "continuous", "'j1'"], {}),
    "mimic without joint": (chain(joint("j3", "c", "d", extra=LIMIT + "<mimic/>"), links="abcd"),
                            ["'j3'", "<mimic> without a joint"], {"mimic": False}),
    "mimic multiplier text": (chain(joint("j3", "c", "d", extra=LIMIT + '<mimic joint="j1" multiplier="x"/>'),
                                    links="abcd"), ["'j3'", "multiplier"], {"mimic": False}),
    "inertial mass text": ('<robot name="r"><link name="a"><inertial><mass value="x"/>'
                           '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>',
                           ["link 'a'", "mass", "value"], {}),
    "negative mass": ('<robot name="r"><link name="a"><inertial><mass value="-1"/>'
                      '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>',
                      ["link 'a'", ">= 0"], {}),
    "inertia missing": ('<robot name="r"><link name="a"><inertial><mass value="1"/></inertial></link></robot>',
                        ["link 'a'", "<inertia"], {}),
    "box of two numbers": ('<robot name="r"><link name="a"><visual><geometry><box size="1 2"/></geometry>'
                           '</visual></link></robot>', ["link 'a'", "<visual>", "size"], {}),
    "unknown shape": ('<robot name="r"><link name="a"><collision><geometry><capsule radius="1" length="1"/>'
                      '</geometry></collision></link></robot>', ["link 'a'", "<collision>", "capsule"], {}),
    "mesh without filename": ('<robot name="r"><link name="a"><visual><geometry><mesh/></geometry>'
                              '</visual></link></robot>', ["link 'a'", "filename"], {}),
    "empty geometry": ('<robot name="r"><link name="a"><visual><geometry/></visual></link></robot>',
                       ["link 'a'", "no <geometry> shape"], {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_structure_is_one_line_naming_the_element(tmp_path, capfd, case):
    text, fragments, kwargs = CASES[case]
    assert_rejected(tmp_path, capfd, text, *fragments, **kwargs)


def test_what_pinocchio_would_silently_drop_is_refused_not_lost(tmp_path):
    """Pinocchio itself loads a cycle apart from the tree as a robot without those joints."""
    text = CASES["cycle apart from the tree"][0]
    model = pin.buildModelFromXML(text)  # the silent loss reljac guards against
    assert list(model.names) == ["universe", "j1"]
    with pytest.raises(URDFError, match="cycle"):
        load(tmp_path, text)


def test_check_loaded_names_what_pinocchio_dropped():
    urdf = Urdf("r", ("a", "b", "c"), (Joint("j1", "revolute", "a", "b", None),
                                       Joint("j2", "revolute", "b", "c", None)), "a", None)
    frames = [("universe", "FIXED_JOINT"), ("a", "BODY"), ("j1", "JOINT"), ("b", "BODY")]
    with pytest.raises(URDFError, match=r"missing: \['j2', 'c'\]"):
        check_loaded(urdf, ["j1"], frames, "'r.urdf'", floating_base=False)
    check_loaded(urdf, ["j1", "j2"], frames + [("j2", "JOINT"), ("c", "BODY")], "'r.urdf'", floating_base=False)


def test_mimic_false_loads_what_only_pinocchios_coupling_refuses(tmp_path):
    for case in ("mimic chain", "mimic cycle", "continuous mimics revolute", "mimic unknown leader"):
        robot = load(tmp_path, CASES[case][0], mimic=False)
        assert not robot.model.mimicking_joints


def test_supported_mimics_still_load(tmp_path):
    text = chain(joint("j3", "c", "d", kind="prismatic", extra=LIMIT + MIMIC.format("j1")), links="abcd")
    robot = load(tmp_path, text)
    assert robot.joint_names == ["j1", "j2"] and robot._mimic_leader == {"j3": "j1"}
    cont = robot_text("abc", joint("j1", "a", "b", kind="continuous", extra=""),
                      joint("j2", "b", "c", kind="continuous", extra='<mimic joint="j1" multiplier="2"/>'))
    assert load(tmp_path, cont).nv == 1  # (a whole multiplier: 0.5 x a continuous leader is refused, test_mimic_limits)


# ----------------------------------------------------------------------------- names across joints and links
def test_a_joint_named_like_another_link_is_ambiguous_not_silently_the_joint(tmp_path):
    """Link 'c' and joint 'c' (whose child is link 'b') are different frames."""
    text = robot_text("abc", joint("c", "a", "b", origin='<origin xyz="0 0 1"/>'),
                      joint("j2", "b", "c", origin='<origin xyz="1 0 0"/>'))
    robot = load(tmp_path, text)
    with pytest.raises(FrameNotFound, match="ambiguous") as info:
        robot.frame_id("c")
    assert "'link:c'" in str(info.value) and "'joint:c'" in str(info.value)
    with pytest.raises(FrameNotFound, match="ambiguous"):
        reljac.relative_jacobian(robot, np.zeros(2), "a", "c")
    link, jnt = robot.frame_id("link:c"), robot.frame_id("joint:c")
    assert robot.model.frames[link].type == pin.FrameType.BODY and robot.model.frames[jnt].type == pin.FrameType.JOINT
    q = np.array([0.3, -0.7])
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    np.testing.assert_allclose(reljac.relative_placement(robot, q, "universe", "link:c").homogeneous,
                               data.oMf[link].homogeneous, atol=1e-12)
    np.testing.assert_allclose(reljac.relative_placement(robot, q, "universe", "joint:c").homogeneous,
                               data.oMf[jnt].homogeneous, atol=1e-12)
    assert not np.allclose(data.oMf[link].homogeneous, data.oMf[jnt].homogeneous)
    np.testing.assert_array_equal(reljac.relative_jacobian(robot, q, "a", "link:c"),
                                  reljac.relative_jacobian(robot, q, "a", link))


def test_a_joint_named_like_its_own_child_link_is_one_frame(tmp_path):
    robot = load(tmp_path, robot_text("ab", joint("b", "a", "b")))
    ids = [i for i, f in enumerate(robot.model.frames) if f.name == "b"]
    assert len(ids) == 2 and robot.frame_id("b") == ids[0]


@pytest.mark.skipif(example_robot_data_dir() is None, reason="example-robot-data is not installed")
def test_anymal_c_loads_and_its_shared_names_are_ambiguous():
    path = example_robot_data_dir() / "anymal_c_simple_description/urdf/anymal.urdf"
    robot = Robot.from_urdf(path)
    with pytest.raises(FrameNotFound, match="ambiguous"):
        robot.frame_id("LF_HAA")
    assert robot.model.frames[robot.frame_id("joint:LF_HAA")].type == pin.FrameType.JOINT
    assert robot.frame_id("LF_FOOT") > 0


# ----------------------------------------------------------------------------- Pinocchio's order, every example robot
@pytest.mark.skipif(example_robot_data_dir() is None, reason="example-robot-data is not installed")
@pytest.mark.slow
def test_every_example_robot_loads_or_gets_one_named_line(capfd):
    """All of example-robot-data's URDFs: loaded (with reljac's predicted joint order equal to
    Pinocchio's), or refused in one line; nothing printed by C++."""
    root = example_robot_data_dir()
    refused = {}
    for path in sorted(root.rglob("*.urdf")):
        for mimic in (True, False):
            try:
                robot = Robot.from_urdf(path, mimic=mimic)
            except URDFError as exc:
                assert "\n" not in str(exc)
                refused[(path.name, mimic)] = str(exc)
                continue
            movable = [j.name for j in pinocchio_order(robot._urdf().urdf) if j.type != "fixed"]
            assert movable == list(robot.model.names)[1:], path
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == ""
    assert "no name attribute" in refused[("ur3.urdf", False)]
    assert "Pinocchio adds after it" in refused[("romeo.urdf", True)]
    assert ("romeo.urdf", False) not in refused
    assert len(refused) <= 8, refused


# ----------------------------------------------------------------------------- files
def test_files_that_are_not_regular_urdf_files_are_named(tmp_path):
    fifo = tmp_path / "pipe.urdf"
    os.mkfifo(fifo)
    with pytest.raises(URDFError, match="FIFO"):
        Robot.from_urdf(fifo)  # must not block on open()
    loop = tmp_path / "loop.urdf"
    loop.symlink_to(loop)
    with pytest.raises(URDFError, match="symbolic link loop"):
        Robot.from_urdf(loop)
    dangling = tmp_path / "dangling.urdf"
    dangling.symlink_to(tmp_path / "nowhere.urdf")
    with pytest.raises(URDFError, match="symbolic link to a file that does not exist"):
        Robot.from_urdf(dangling)
    (tmp_path / "folder.urdf").mkdir()
    with pytest.raises(URDFError, match="is a directory"):
        Robot.from_urdf(tmp_path / "folder.urdf")
    (tmp_path / "file").write_text("x")
    with pytest.raises(URDFError, match="not a folder"):
        Robot.from_urdf(tmp_path / "file" / "robot.urdf")
    with pytest.raises(URDFError, match="device"):
        Robot.from_urdf("/dev/null")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_folder_is_not_reported_as_missing(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "r.urdf").write_text(robot_text("ab", joint("j", "a", "b")))
    folder.chmod(0)
    try:
        with pytest.raises(URDFError, match="permission denied"):
            Robot.from_urdf(folder / "r.urdf")
    finally:
        folder.chmod(stat.S_IRWXU)


@pytest.mark.parametrize("code, message", [(errno.EACCES, "permission denied"), (errno.ELOOP, "link loop"),
                                           (errno.ENAMETOOLONG, "too long"), (errno.EIO, "cannot be read")])
def test_each_reason_a_path_cannot_be_reached_has_its_message(monkeypatch, code, message):
    """What os.stat says, as root cannot provoke EACCES (the test above is skipped there)."""
    def refuse(path, *args, **kwargs):
        raise OSError(code, os.strerror(code), path)

    monkeypatch.setattr(os, "stat", refuse)
    with pytest.raises(URDFError, match=message):
        Robot.from_urdf("/somewhere/robot.urdf")


def test_a_path_that_is_not_utf8_loads_and_is_printable(tmp_path):
    raw = os.path.join(os.fsencode(tmp_path), b"\xff\xfe robot.urdf")
    with open(raw, "w") as file:
        file.write(robot_text("ab", joint("j", "a", "b")))
    robot = Robot.from_urdf(os.fsdecode(raw))
    assert robot.nq == 1
    robot = Robot.from_urdf(raw)  # bytes paths too
    assert robot.nq == 1
    missing = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"\xff missing.urdf"))
    with pytest.raises(URDFError) as info:
        Robot.from_urdf(missing)
    str(info.value).encode("utf-8")  # printable: the undecodable byte is escaped
    assert "\\xff" in str(info.value)


def test_a_latin1_urdf_with_its_declaration_loads(tmp_path):
    path = tmp_path / "latin.urdf"
    text = '<?xml version="1.0" encoding="ISO-8859-1"?>\n' + robot_text(["a", "b\u00e9"], joint("j\u00e9", "a", "b\u00e9"))
    path.write_bytes(text.encode("latin-1"))
    robot = Robot.from_urdf(path)
    assert robot.joint_names == ["j\u00e9"]


# ----------------------------------------------------------------------------- meshes
MESH_ROBOT = ('<robot name="m"><link name="base"><visual><geometry><mesh filename="{}"/></geometry></visual>'
              '</link><link name="arm"/>' + joint("j", "base", "arm") + "</robot>")


def test_a_missing_mesh_names_its_link_and_nothing_is_printed(tmp_path, capfd):
    robot = load(tmp_path, MESH_ROBOT.format("package://nopkg/arm.stl"))
    capfd.readouterr()
    with pytest.raises(URDFError) as info:
        robot.visual_model
    message = str(info.value)
    assert "\n" not in message and "link 'base'" in message and "package://nopkg/arm.stl" in message
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == ""


def test_an_unreadable_mesh_names_its_link_in_one_line(tmp_path, capfd):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "arm.stl").write_text("not a mesh\n")
    robot = load(tmp_path, MESH_ROBOT.format("package://meshes/arm.stl"))
    capfd.readouterr()
    with pytest.raises(URDFError) as info:
        robot.collision_model  # no collision elements: loads
        robot.visual_model
    message = str(info.value)
    assert "\n" not in message and "link 'base'" in message and "arm.stl" in message, message
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == ""


# ----------------------------------------------------------------------------- independence of the layers
@pytest.mark.slow
def test_urdf_checks_is_stdlib_only_and_independent_of_the_reference():
    source = Path(reljac.__file__).with_name("urdf_checks.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
    assert imported <= set(sys.stdlib_module_names) | {"__future__", ".exceptions"}, imported
    loading = Path(reljac.__file__).with_name("loading.py").read_text()
    for text in (source, loading):
        assert "reference" not in "".join(line for line in text.splitlines() if "import" in line)

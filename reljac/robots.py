"""Robots by name: reljac's bundled robots and those of example-robot-data.

``Robot.load(NAME)`` and every command-line ROBOT argument look a name up here (a path to a URDF
file is used as it is). Two sources, bundled first:

* the robots shipped in reljac's ``urdf/`` folder (:func:`bundled_robots`);
* the robots of `example-robot-data <https://github.com/Gepetto/example-robot-data>`_ when it is
  installed (``pip install example-robot-data``, or the ``robots`` extra), under the names of its
  upstream Python loader (``panda``, ``ur5``, ``talos``, ``tiago_dual``, ...), each with the
  URDF, SRDF, reference posture and free-flyer choice that loader gives it. The PyPI package ships the files without
  that loader; the table below restates its facts (a robot the loader builds by code, such as
  ``talos_legs``, ``human``, ``panda_collision`` or the SDF ``cassie``, is left out).

:func:`available_robots` lists the names that resolve here (the files are installed), and
:meth:`Robot.load <reljac.Robot.load>` loads them (:func:`reljac.robot.as_robot` takes a Robot or any Pinocchio model
wherever reljac expects a Robot).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from .exceptions import URDFError, suggest
from .urdf_files import exists_on_disk

BUNDLED_DIR = Path(__file__).resolve().parent / "_urdf"
if not BUNDLED_DIR.is_dir():  # source checkout or editable install: the top-level urdf/ folder
    BUNDLED_DIR = Path(__file__).resolve().parent.parent / "urdf"

#: Where example-robot-data keeps its robots, below an install prefix.
ERD_SUBDIR = Path("share") / "example-robot-data" / "robots"


class _Entry(NamedTuple):
    """One robot of example-robot-data's loader: files relative to its robots/ folder."""

    urdf: str
    srdf: str | None = None
    posture: str | None = None  # the loader's reference posture (a group_state of the SRDF)
    free_flyer: bool = False
    mimic: bool = True  # False: Pinocchio cannot couple its mimic joints


def _entries() -> dict[str, _Entry]:
    """The loader's table: folder, URDF subfolder (default robots/), SRDF in srdf/, posture
    (default half_sitting, used only with an SRDF; None: the neutral configuration)."""
    table: dict[str, _Entry] = {}

    def add(name, folder, urdf, srdf=None, posture="half_sitting", ff=False, sub="robots", mimic=True):
        table[name] = _Entry(f"{folder}/{sub}/{urdf}", f"{folder}/srdf/{srdf}" if srdf else None,
                             posture if srdf else None, ff, mimic)

    for name, urdf, srdf, posture in (("b1", "b1.urdf", "b1.srdf", "standing"),
                                      ("b1_z1", "b1-z1.urdf", "b1-z1.srdf", "standing_with_arm_home")):
        add(name, "b1_description", urdf, srdf, posture, True, "urdf")
    for name, folder in (("go1", "go1_description"), ("go2", "go2_description"), ("a1", "a1_description")):
        add(name, folder, f"{name}.urdf", f"{name}.srdf", "standing", True, "urdf")
    add("g1", "g1_description", "g1_29dof_rev_1_0.urdf", None, ff=True, sub="urdf")
    add("g1_with_hands", "g1_description", "g1_29dof_with_hand_rev_1_0.urdf", None, ff=True, sub="urdf")
    add("z1", "z1_description", "z1.urdf", "z1.srdf", "arm_up", sub="urdf")
    add("centauro", "centauro_description", "centauro.urdf", "centauro.srdf", "homing_balanced", True, "urdf")
    add("anymal", "anymal_b_simple_description", "anymal.urdf", "anymal.srdf", "standing", True)
    add("anymal_kinova", "anymal_b_simple_description", "anymal-kinova.urdf", "anymal-kinova.srdf",
        "standing_with_arm_up", True)
    add("anymal_c", "anymal_c_simple_description", "anymal.urdf", "anymal.srdf", "standing", True, "urdf")
    add("laikago", "laikago_description", "laikago.urdf", ff=True, sub="urdf")
    add("asr_twodof", "asr_twodof_description", "TwoDofs.urdf", sub="urdf")
    add("baxter", "baxter_description", "baxter.urdf", "baxter_manipulation.srdf", "neutral", sub="urdf")
    for name, urdf in (("double_pendulum", "double_pendulum.urdf"),
                       ("double_pendulum_continuous", "double_pendulum_continuous.urdf"),
                       ("double_pendulum_simple", "double_pendulum_simple.urdf")):
        add(name, "double_pendulum_description", urdf, sub="urdf")
    add("hector", "hector_description", "quadrotor_base.urdf", ff=True)
    add("hextilt", "hextilt_description", "hextilt_flying_arm_5.urdf", "hextilt_flying_arm_5.srdf", "home",
        True, "urdf")
    add("borinot", "borinot_description", "borinot_flying_arm_2.urdf", "borinot_flying_arm_2.srdf", "home",
        True, "urdf")
    add("hyq", "hyq_description", "hyq_no_sensors.urdf", "hyq.srdf", "standing", True)
    add("bolt", "bolt_description", "bolt.urdf", "bolt.srdf", "standing", True)
    add("solo8", "solo_description", "solo.urdf", "solo.srdf", "standing", True)
    add("solo12", "solo_description", "solo12.urdf", "solo.srdf", "standing", True)
    add("finger_edu", "finger_edu_description", "finger_edu.urdf", "finger_edu.srdf", "hanging")
    add("kinova", "kinova_description", "kinova.urdf", "kinova.srdf", "arm_up")
    add("icub", "icub_description", "icub.urdf", "icub.srdf", ff=True)
    add("icub_reduced", "icub_description", "icub_reduced.urdf", "icub.srdf", ff=True)
    add("iris", "iris_description", "iris_simple.urdf", ff=True)
    add("quadruped", "quadruped_description", "quadruped.urdf", ff=True, sub="urdf")
    # Pinocchio cannot couple the mimic joints of romeo, talos_full(_box) (a follower before its
    # leader) and alex_psyonic_hands (leaders that do not exist): they load with mimic=False,
    # as upstream's loader loads every robot.
    add("romeo", "romeo_description", "romeo.urdf", ff=True, sub="urdf", mimic=False)
    add("simple_humanoid", "simple_humanoid_description", "simple_humanoid.urdf", "simple_humanoid.srdf",
        ff=True, sub="urdf")
    add("simple_humanoid_classical", "simple_humanoid_description", "simple_humanoid_classical.urdf",
        "simple_humanoid_classical.srdf", ff=True, sub="urdf")
    add("pr2", "pr2_description", "pr2.urdf", "pr2.srdf", "tuck_left_arm", True, "urdf")
    add("xarm7", "xarm_description", "xarm7.urdf", "xarm7.srdf", "home", sub="urdf")
    for name in ("so100", "so101"):
        add(name, "so_arm_description", f"{name}.urdf", ff=True, sub="urdf")
    add("panda", "panda_description", "panda.urdf", "panda.srdf", "default", sub="urdf")
    add("alexander", "alexander_description", "alexander_v1.lowerBodyOnly.urdf", "alexander.srdf", "default",
        True, "urdf")
    add("alex_nub_hands", "alex_description", "alex_nub_hands.urdf", sub="urdf")
    for hands in ("psyonic", "sake"):
        add(f"alex_{hands}_hands", "alex_description", f"alex_{hands}_hands.urdf", f"alex_{hands}_hands.srdf",
            "default", sub="urdf", mimic=hands != "psyonic")
    for side in ("right", "left"):
        add(f"allegro_{side}_hand", "allegro_hand_description", f"allegro_{side}_hand.urdf", sub="urdf")
    for name, urdf in (("talos", "talos_reduced.urdf"), ("talos_box", "talos_reduced_box.urdf"),
                       ("talos_full", "talos_full_v2.urdf"), ("talos_full_box", "talos_full_v2_box.urdf")):
        add(name, "talos_data", urdf, "talos.srdf", ff=True, mimic="full" not in name)
    add("talos_arm", "talos_data", "talos_left_arm.urdf", "talos.srdf")
    for name in ("tiago", "tiago_dual", "tiago_no_hand"):
        add(name, "tiago_description", f"{name}.urdf")
    add("tiago_pro", "tiago_pro_description", "tiago_pro.urdf")
    # UR arms: no reference posture (neutral). Upstream's table sends 'ur3' to the UR5 loader, an
    # evident slip: here 'ur3' is the UR3.
    arms: tuple[tuple[str, str | None], ...] = (("ur3", None), ("ur5", "ur5.srdf"), ("ur10", None))
    for arm, arm_srdf in arms:
        add(arm, "ur_description", f"{arm}_robot.urdf", arm_srdf, None, sub="urdf")
        add(f"{arm}_limited", "ur_description", f"{arm}_joint_limited_robot.urdf", arm_srdf, None, sub="urdf")
    for arm in ("ur3", "ur5"):
        add(f"{arm}_gripper", "ur_description", f"{arm}_gripper.urdf", f"{arm}_gripper.srdf", None, sub="urdf")
    return table


EXAMPLE_ROBOTS: dict[str, _Entry] = _entries()


@dataclass(frozen=True)
class RobotSource:
    """Where a named robot comes from and how to load it.

    Attributes:
        name: the name asked for.
        origin: ``"bundled"`` or ``"example-robot-data"``.
        urdf: the URDF file; srdf: its SRDF file (or None).
        package_dirs: folders searched for ``package://`` meshes (None: the URDF's folders).
        floating_base: add a free-flyer root joint.
        posture: the reference posture, a group_state of the SRDF (None: neutral).
        mimic: couple mimic joints (False where Pinocchio cannot).

    example-robot-data shares some SRDFs between variants of a robot (``talos_arm`` and
    ``solo8`` use ``talos.srdf`` and ``solo.srdf``): like upstream's loader, reljac leaves out
    what such an SRDF names that the robot does not have.
    """

    name: str
    origin: str
    urdf: Path
    srdf: Path | None = None
    package_dirs: tuple[Path, ...] | None = None
    floating_base: bool = False
    posture: str | None = None
    mimic: bool = True


def bundled_robots() -> list[str]:
    """Names of the robots shipped in reljac's ``urdf/`` folder, sorted."""
    return sorted(p.stem for p in BUNDLED_DIR.glob("*.urdf"))


def bundled_path(name: str) -> Path:
    """The URDF file of the bundled robot `name`.

    Raises:
        URDFError: no bundled robot has that name (near matches and the bundled names listed).
    """
    names = bundled_robots()
    if not isinstance(name, str) or name not in names:
        hint = suggest(name, names) if isinstance(name, str) else ""
        raise URDFError(f"no bundled robot named {name!r}{hint} (bundled: {', '.join(names)})")
    return BUNDLED_DIR / f"{name}.urdf"


def example_robot_data_dir() -> Path | None:
    """example-robot-data's ``robots/`` folder (from its PyPI wheel's ``cmeel.prefix``, or an
    install prefix such as conda's or ROS's), or None when it is not installed."""
    roots = [Path(entry) / "cmeel.prefix" for entry in sys.path if entry]
    roots += [Path(prefix) for prefix in (sys.prefix, os.environ.get("CONDA_PREFIX"), "/opt/openrobots") if prefix]
    for root in roots:
        candidate = root / ERD_SUBDIR
        if candidate.is_dir():
            return candidate
    return None


def example_robots() -> list[str]:
    """Names of the example-robot-data robots whose files are installed, sorted."""
    root = example_robot_data_dir()
    if root is None:
        return []
    return sorted(name for name, entry in EXAMPLE_ROBOTS.items() if (root / entry.urdf).is_file())


def available_robots() -> list[str]:
    """Every name :func:`resolve` accepts here: the bundled robots, then example-robot-data's."""
    bundled = bundled_robots()
    return bundled + [name for name in example_robots() if name not in bundled]


def is_known_name(text: str) -> bool:
    """A bundled name or a name of example-robot-data's table (installed or not)."""
    return text in EXAMPLE_ROBOTS or text in bundled_robots()


def names_a_file(text: str) -> bool:
    """Whether :meth:`reljac.Robot.load` reads `text` as a URDF path rather than a robot's name: a
    file on disk wins over a name, a folder does not (a folder 'panda' in the working folder hid
    the robot); an unknown name ending in .urdf or holding a path separator is a path."""
    known = is_known_name(text)
    if exists_on_disk(text) and not (known and os.path.isdir(text)):
        return True
    return not known and (text.endswith(".urdf") or os.sep in text)


def resolve(name: str) -> RobotSource:
    """The files and options of a named robot (bundled first).

    Raises:
        URDFError: an unknown name (with near matches and the names available), or a name of
            example-robot-data when the package is not installed or lacks that robot.
    """
    if not isinstance(name, str):
        raise URDFError(f"a robot name is a string, not {type(name).__name__}")
    if name in bundled_robots():
        return RobotSource(name, "bundled", BUNDLED_DIR / f"{name}.urdf")
    entry = EXAMPLE_ROBOTS.get(name)
    root = example_robot_data_dir()
    if entry is None:
        names = available_robots()
        known = names + [n for n in EXAMPLE_ROBOTS if n not in names]
        listed = ", ".join(names[:12]) + (f", ... ({len(names)} in all: reljac robots)" if len(names) > 12 else "")
        raise URDFError(f"no robot named '{name}'{suggest(name, known)} (robots: {listed})")
    if root is None:
        raise URDFError(f"robot '{name}' comes from example-robot-data, which is not installed: "
                        "pip install example-robot-data")
    urdf = root / entry.urdf
    if not urdf.is_file():
        raise URDFError(f"robot '{name}' is not in the installed example-robot-data (no {entry.urdf} under "
                        f"{root}); its robots: reljac robots")
    srdf = root / entry.srdf if entry.srdf and (root / entry.srdf).is_file() else None
    # URIs are package://example-robot-data/robots/...: the package folder is share/.
    return RobotSource(name, "example-robot-data", urdf, srdf, (root.parent.parent,), entry.free_flyer,
                       entry.posture if srdf is not None else None, entry.mimic)

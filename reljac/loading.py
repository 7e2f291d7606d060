"""URDF text -> Pinocchio models and geometry, with reljac's checks around Pinocchio's parser.

The only module that hands URDF to Pinocchio. It reads the file itself
(:func:`~reljac.urdf_checks.read_urdf`), checks the XML (:func:`~reljac.urdf_checks.check_urdf`),
gives Pinocchio the text (never the path: any path works, whatever its bytes) with its own
printing captured, turns its exceptions into one line naming the element, and compares the model
with the file afterwards (:func:`~reljac.urdf_checks.check_loaded`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pinocchio as pin

from .exceptions import URDFError
from .urdf_checks import Urdf, check_loaded, check_urdf, parse_xml, read_urdf, shown


@dataclass(frozen=True)
class LoadedUrdf:
    """A checked URDF: its text (what Pinocchio parses), its structure and where it came from."""

    text: str
    urdf: Urdf
    source: str  # the path, quoted and printable, for messages


def read_checked(path: str | os.PathLike, *, mimic: bool, floating_base: bool) -> LoadedUrdf:
    """Read and check a URDF file (URDFError naming the problem)."""
    data = read_urdf(path)
    source = f"'{shown(path)}'"
    root = parse_xml(data, source)
    urdf = check_urdf(root, source, mimic=mimic, floating_base=floating_base)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:  # another declared encoding: hand Pinocchio the parsed tree as UTF-8
        text = _serialized(root)
    return LoadedUrdf(text, urdf, source)


def _serialized(root) -> str:
    import xml.etree.ElementTree as ET

    return ET.tostring(root, encoding="unicode")


def build_model(loaded: LoadedUrdf, *, floating_base: bool, mimic: bool) -> pin.Model:
    """Pinocchio's model of a checked URDF; URDFError if Pinocchio refuses it or drops part of it."""
    args = (pin.JointModelFreeFlyer(),) if floating_base else ()
    try:
        with captured_output() as printed:
            model = pin.buildModelFromXML(loaded.text, *args, mimic=bool(mimic))
    except (ValueError, RuntimeError) as exc:
        reason = printed.first_error() or cpp_message(exc)
        hint = ""
        if mimic and "mimic" in str(exc):
            hint = " (load it with mimic=False (--no-mimic) to make the followers independent joints)"
        raise URDFError(f"Pinocchio rejected URDF {loaded.source}: {reason}{hint}") from None
    except MemoryError:
        raise URDFError(f"URDF {loaded.source} is too large for Pinocchio's parser in this memory") from None
    if printed.first_error():  # urdfdom complained but went on: part of the file was dropped
        raise URDFError(f"URDF {loaded.source}: {printed.first_error()} (urdfdom skipped that element)")
    if floating_base and model.njoints > 2 and model.joints[2].shortname() == "JointModelFreeFlyer" \
            and model.parents[2] == 1:
        raise URDFError(f"URDF {loaded.source} already has a floating root joint '{model.names[2]}'; "
                        "load it with floating_base=False")
    frames = [(f.name, str(f.type).rsplit(".", 1)[-1]) for f in model.frames]
    check_loaded(loaded.urdf, list(model.names)[1:], frames, loaded.source, floating_base=floating_base)
    return model


def mimic_maps(model: pin.Model, full: pin.Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(G, S, o), read-only, from a model with mimic joints to the same URDF without them
    (`full`, every joint independent): ``v_full = G @ v``, ``q_full = S @ q + o``."""
    leaders = {model.names[f]: model.names[l] for f, l in zip(model.mimicking_joints, model.mimicked_joints)}
    G = np.zeros((full.nv, model.nv))
    S = np.zeros((full.nq, model.nq))
    o = np.zeros(full.nq)
    for j in range(1, full.njoints):
        joint_full = full.joints[j]
        mine = model.joints[model.getJointId(full.names[j])]
        if full.names[j] in leaders:
            leader = model.joints[model.getJointId(leaders[full.names[j]])]
            mimic = mine.extract()
            G[joint_full.idx_v, leader.idx_v] = mimic.scaling
            S[joint_full.idx_q, leader.idx_q] = mimic.scaling
            o[joint_full.idx_q] = mimic.offset
        else:
            G[joint_full.idx_v : joint_full.idx_v + joint_full.nv, mine.idx_v : mine.idx_v + mine.nv] = np.eye(mine.nv)
            S[joint_full.idx_q : joint_full.idx_q + joint_full.nq, mine.idx_q : mine.idx_q + mine.nq] = np.eye(mine.nq)
    for array in (G, S, o):
        array.flags.writeable = False
    return G, S, o


def cpp_message(exc: BaseException) -> str:
    """One line from a C++ exception: its 'message:' line when it is Pinocchio's multi-line dump."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("message:"):
            return " ".join([line[len("message:"):].strip()] + lines[i + 1 : i + 2])
    return lines[0] if lines else type(exc).__name__


def package_folders(path: Path, package_dirs) -> list:
    """The folders searched for meshes: `package_dirs` (one folder or a list), by default the
    URDF's folder and its four parents."""
    if package_dirs is None:
        try:
            parents = path.resolve().parents
        except (OSError, RuntimeError):
            parents = path.absolute().parents
        return [parents[i] for i in range(min(5, len(parents)))]
    if isinstance(package_dirs, (str, bytes, os.PathLike)):
        return [package_dirs]
    try:
        folders = list(package_dirs)
    except TypeError:
        raise URDFError(f"package_dirs must be a folder or a list of folders, not {package_dirs!r}") from None
    for folder in folders:
        if not isinstance(folder, (str, bytes, os.PathLike)):
            raise URDFError(f"package_dirs must hold folder paths, got {folder!r}")
    return folders


def load_geometry(model: pin.Model, loaded: LoadedUrdf, kind: pin.GeometryType,
                  package_dirs: list[str]) -> pin.GeometryModel:
    """Visual or collision geometry; URDFError naming the link and mesh that cannot be loaded."""
    label = "visual" if kind == pin.GeometryType.VISUAL else "collision"
    try:
        with captured_output():
            return pin.buildGeomFromUrdfString(model, loaded.text, kind, package_dirs=package_dirs)
    except (ValueError, RuntimeError) as exc:
        detail = _mesh_problem(loaded.urdf, label, cpp_message(exc))
        raise URDFError(f"cannot load the {label} geometry of URDF {loaded.source}: {detail} "
                        f"(package_dirs searched: {package_dirs})") from None
    except MemoryError:
        raise URDFError(f"the {label} meshes of URDF {loaded.source} do not fit in memory") from None


def _mesh_problem(urdf: Urdf, label: str, message: str) -> str:
    """'link X: mesh Y <reason>' for a mesh named in Pinocchio's message, else the message."""
    found = re.search(r"Mesh (.+?) could not be found", message)
    resource = re.search(r"Could not load resource (\S+)", message)
    if not (found or resource):
        return message
    name = found.group(1) if found else resource.group(1)
    for link in urdf.xml.findall("link"):
        for element in link.findall(label):
            mesh = element.find("geometry/mesh")
            filename = mesh.get("filename", "") if mesh is not None else ""
            if filename and (filename == name or os.path.basename(filename) == os.path.basename(name)):
                reason = "could not be found" if found else f"cannot be read ({message})"
                return f"link '{link.get('name')}' has mesh '{filename}', which {reason}"
    return message


# ----------------------------------------------------------------------------- C++ output
class Captured:
    """Text printed by C++ code inside :func:`captured_output` (available after the block)."""

    text = ""

    def first_error(self) -> str:
        """urdfdom's first 'Error:' message as one line ('' if none)."""
        for line in self.text.splitlines():
            if line.strip().startswith("Error:"):
                return line.strip()[len("Error:"):].strip()
        return ""


_REDIRECTING = threading.RLock()  # descriptors 1 and 2 belong to the process: one redirection at a time


@contextlib.contextmanager
def captured_output() -> Iterator[Captured]:
    """Redirect file descriptors 1 and 2 to a temporary file (what C++ libraries print there
    never reaches the terminal); its text is in the yielded object after the block.

    Process-wide: other threads' output during the block goes to the same file (blocks of
    several threads take turns)."""
    with _REDIRECTING:
        with _redirected() as captured:
            yield captured


@contextlib.contextmanager
def _redirected() -> Iterator[Captured]:
    captured = Captured()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        saved = [os.dup(1), os.dup(2)]
    except OSError:  # no usable descriptors: nothing to silence
        yield captured
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                yield captured
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                sink.seek(0)
                captured.text = sink.read(1 << 16).decode("utf-8", "replace")
    finally:
        for fd in saved:
            os.close(fd)

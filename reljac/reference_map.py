"""A robot beside its in-house reference: the same URDF in both layers, q and v mapped by joint name.

The Pinocchio layer (:class:`~reljac.Robot`) and the pure-numpy reference
(:class:`~reljac.reference.ReferenceRobot`) never import each other; this module is where the two
meet, for the comparisons that use both (``reljac check``, the batched path of
:func:`~reljac.workspace.workspace_summary`, the benches).

Layouts: joints are matched by name. A continuous joint is one angle in the reference and a
(cos, sin) pair in Pinocchio, a planar joint [x, y, angle] in the reference and [x, y, cos, sin] in
Pinocchio; free joints share the layout [x, y, z, qx, qy, qz, qw]; mimic joints
have no entry in either (Pinocchio couples them, the reference too unless both load the URDF
without its ``<mimic>`` elements).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from .exceptions import FrameNotFound, ReljacError, URDFError
from .reference import ReferenceRobot
from .robot import Robot

__all__ = ["LayerMap", "reference_robot", "without_mimic_elements"]


def _names_a_frame(robot: Robot, name: str) -> bool:
    """The robot has a frame of that name ("link:NAME" / "joint:NAME" too, as both layers name a
    joint and a link that share a name)."""
    try:
        robot.frame_id(name)
    except FrameNotFound:
        return False
    return True


class LayerMap:
    """Maps the reference's q and v layouts onto the Pinocchio robot's.

    Raises:
        ReljacError: the layers do not have the same joints, or a joint of different size.
    """

    def __init__(self, robot: Robot, ref: ReferenceRobot) -> None:
        model = robot.model
        self.robot, self.ref = robot, ref
        pin_joints = set(robot.joint_names)
        missing = [n for n in ref.joint_names if n not in pin_joints]
        extra = [n for n in robot.joint_names if n not in set(ref.joint_names)]
        if missing or extra:
            raise ReljacError(
                f"the layers do not have the same joints: only in the reference {missing}, "
                f"only in Pinocchio {extra}"
            )
        self.v_pin = np.zeros(ref.nv, dtype=int)  # Pinocchio v index of each reference v index
        self.blocks: list[tuple[slice, int, str]] = []  # (ref q slice, pin q index, kind)
        for name in ref.joint_names:
            joint = model.joints[model.getJointId(name)]
            q_ref, v_ref = ref.q_slices[name], ref.v_slices[name]
            self.v_pin[v_ref] = np.arange(joint.idx_v, joint.idx_v + joint.nv)
            kind = "planar" if joint.shortname() == "JointModelPlanar" else "angle" if (joint.nq, joint.nv) == (2, 1) \
                else "copy"
            if kind == "copy" and joint.nq != q_ref.stop - q_ref.start:
                raise ReljacError(f"joint '{name}': Pinocchio has nq={joint.nq}, the reference "
                                  f"{q_ref.stop - q_ref.start}; cannot map it")
            self.blocks.append((q_ref, joint.idx_q, kind))
        self.frames = [f for f in ref.frame_names if _names_a_frame(robot, f)]

    def q_to_pinocchio(self, q_ref: np.ndarray) -> np.ndarray:
        """Configurations in the reference layout, (ref.nq,) or (N, ref.nq), to the robot's
        layout, (nq,) or (N, nq): continuous and planar angles become (cos, sin) pairs."""
        q_ref = np.asarray(q_ref, dtype=float)
        batch = np.atleast_2d(q_ref)
        q = np.tile(self.robot.neutral(), (batch.shape[0], 1))
        for block, start, kind in self.blocks:
            if kind == "angle":
                angle = batch[:, block.start]
                q[:, start], q[:, start + 1] = np.cos(angle), np.sin(angle)
            elif kind == "planar":  # [x, y, theta] -> [x, y, cos, sin]
                angle = batch[:, block.start + 2]
                q[:, start : start + 2] = batch[:, block.start : block.start + 2]
                q[:, start + 2], q[:, start + 3] = np.cos(angle), np.sin(angle)
            else:
                q[:, start : start + block.stop - block.start] = batch[:, block]
        return q if q_ref.ndim == 2 else q[0]

    def columns(self, J_pin: np.ndarray) -> np.ndarray:
        """Pinocchio Jacobian columns reordered into the reference's v layout."""
        return J_pin[..., self.v_pin]


def without_mimic_elements(text: str) -> str:
    """URDF text with every <mimic> element removed (the reference's view of mimic=False)."""
    root = ET.fromstring(text)
    for joint in root.findall("joint"):
        for mimic in joint.findall("mimic"):
            joint.remove(mimic)
    return ET.tostring(root, encoding="unicode")


def reference_robot(robot: Robot) -> ReferenceRobot:
    """The in-house reference loaded from the robot's own URDF text, with the robot's choices
    (floating base; mimic joints coupled or, for ``mimic=False``, independent in both layers).

    Raises:
        URDFError: the robot was not loaded from a URDF, or the reference cannot read it.
    """
    text = robot.urdf_text
    if text is None:
        raise URDFError(f"robot '{robot.name}' was not loaded from a URDF: the reference reads URDF text only")
    text = text if robot.mimic else without_mimic_elements(text)
    return ReferenceRobot.from_urdf_string(text, floating_base=robot.floating_base,
                                           source=f"the in-house reference, reading robot '{robot.name}'")

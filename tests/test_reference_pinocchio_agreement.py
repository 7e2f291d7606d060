"""The reference agrees with raw Pinocchio on placements and LOCAL_WORLD_ALIGNED frame Jacobians.

This is the only reference test that imports Pinocchio (the reference package never does). It also
documents how to map the reference layout onto Pinocchio's: joints matched by name (Pinocchio orders
sibling branches differently), a continuous joint's angle t stored as (cos t, sin t), the free-joint
layouts identical, a planar joint's [x, y, t] stored as [x, y, cos t, sin t], mimic joints loaded
with ``mimic=True``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reljac.reference import ReferenceRobot

pin = pytest.importorskip("pinocchio")

TESTS = Path(__file__).parent
NAMES = ["planar_2link", "rotated_origins", "mimic", "deep_tree", "floating_joint", "planar_joint"]
PATHS = [pytest.param(TESTS / "reference_urdfs" / f"{n}.urdf", id=n) for n in NAMES] + [
    pytest.param(TESTS.parent / "urdf" / f"{n}.urdf", id=f"bundled-{n}") for n in ["dual_arm", "hand", "tree30"]
]


def pinocchio_configuration(reference: ReferenceRobot, model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pinocchio's q for the reference's q, and the (model.nv, reference.nv) velocity permutation."""
    q_pin = pin.neutral(model)
    permutation = np.zeros((model.nv, reference.nv))
    for name in reference.joint_names:
        joint = model.joints[model.getJointId(name)]
        q_slice, v_slice = reference.q_slices[name], reference.v_slices[name]
        if reference.tree.joint_types[name] == "continuous":
            q_pin[joint.idx_q : joint.idx_q + 2] = np.cos(q[q_slice.start]), np.sin(q[q_slice.start])
        elif reference.tree.joint_types[name] == "planar":  # [x, y, theta] -> [x, y, cos, sin]
            x, y, angle = q[q_slice]
            q_pin[joint.idx_q : joint.idx_q + 4] = x, y, np.cos(angle), np.sin(angle)
        else:
            q_pin[joint.idx_q : joint.idx_q + joint.nq] = q[q_slice]
        permutation[joint.idx_v : joint.idx_v + joint.nv, v_slice] = np.eye(joint.nv)
    return q_pin, permutation


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed-base", "floating-base"])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.slow
def test_placements_and_frame_jacobians_match_pinocchio(path, floating_base):
    if not path.exists():
        pytest.skip(f"{path} not written yet")
    reference = ReferenceRobot.from_urdf(path, floating_base=floating_base)
    root = (pin.JointModelFreeFlyer(),) if floating_base else ()
    model = pin.buildModelFromUrdf(str(path), *root, mimic=True)
    data = model.createData()
    assert model.nv == reference.nv
    for q in reference.random_configuration(np.random.default_rng(41), 3):
        q_pin, permutation = pinocchio_configuration(reference, model, q)
        pin.computeJointJacobians(model, data, q_pin)
        pin.updateFramePlacements(model, data)
        kinematics = reference.kinematics(q)
        for frame in reference.frame_names[1:]:
            frame_id = model.getFrameId(frame)
            np.testing.assert_allclose(kinematics.placement(frame), data.oMf[frame_id].homogeneous, atol=1e-12)
            jacobian = pin.getFrameJacobian(model, data, frame_id, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            np.testing.assert_allclose(kinematics.jacobian(frame), jacobian @ permutation, atol=1e-12, err_msg=frame)

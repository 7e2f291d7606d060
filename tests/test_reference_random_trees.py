"""Property tests on random URDF trees (hypothesis): random shapes, joint types, origins, oblique
axes and mimic joints; the two Jacobian constructions must agree, and the relative Jacobian must
match finite differences."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reljac.reference import ReferenceRobot

JOINT_TYPES = ["revolute", "continuous", "prismatic", "fixed", "floating"]
EPS = 1e-6


@st.composite
def urdf_trees(draw) -> str:
    count = draw(st.integers(min_value=2, max_value=12))
    rng = np.random.default_rng(draw(st.integers(min_value=0, max_value=2**32 - 1)))
    links = "".join(f'<link name="l{i}"/>' for i in range(count))
    joints, one_dof = [], []
    for i in range(1, count):
        kind = draw(st.sampled_from(JOINT_TYPES))
        xyz = " ".join(f"{x:.4f}" for x in rng.uniform(-0.5, 0.5, 3))
        rpy = " ".join(f"{x:.4f}" for x in rng.uniform(-np.pi, np.pi, 3))
        axis = rng.normal(size=3)
        axis = " ".join(f"{x:.4f}" for x in axis * rng.uniform(0.2, 3.0) / np.linalg.norm(axis))
        mimic = ""
        if kind in ("revolute", "continuous", "prismatic") and one_dof and draw(st.booleans()):
            leader = draw(st.sampled_from(one_dof))
            mimic = f'<mimic joint="{leader}" multiplier="{rng.uniform(-2, 2):.3f}" offset="{rng.uniform(-1, 1):.3f}"/>'
        if kind in ("revolute", "continuous", "prismatic"):
            one_dof.append(f"j{i}")
        parent = draw(st.integers(min_value=0, max_value=i - 1))
        joints.append(
            f'<joint name="j{i}" type="{kind}"><parent link="l{parent}"/><child link="l{i}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            f'<limit lower="-2" upper="2" effort="1" velocity="1"/>{mimic}</joint>'
        )
    return f'<robot name="random">{links}{"".join(joints)}</robot>'


def so3_log_small(rotation: np.ndarray) -> np.ndarray:
    """Rotation vectors of small rotations (..., 3, 3) (the angle is about 2 eps here)."""
    angle = np.arccos(np.clip((np.trace(rotation, axis1=-2, axis2=-1) - 1) / 2, -1, 1))
    vee = np.stack((rotation[..., 2, 1] - rotation[..., 1, 2], rotation[..., 0, 2] - rotation[..., 2, 0],
                    rotation[..., 1, 0] - rotation[..., 0, 1]), axis=-1)
    return 0.5 * (1 + angle**2 / 6)[..., None] * vee


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=urdf_trees(), floating_base=st.booleans(), seed=st.integers(0, 1000))
def test_random_trees(text, floating_base, seed):
    robot = ReferenceRobot.from_urdf_string(text, floating_base=floating_base)
    rng = np.random.default_rng(seed)
    q = robot.random_configuration(rng)
    kinematics = robot.kinematics(q)
    for frame in robot.frame_names:
        np.testing.assert_allclose(
            kinematics.jacobian(frame, method="cross"), kinematics.jacobian(frame, method="poe"), rtol=0, atol=1e-10
        )

    a, b = (robot.frame_names[i] for i in rng.integers(0, len(robot.frame_names), 2))
    steps = EPS * np.eye(robot.nv)
    plus = robot.relative_placement(robot.integrate(q, steps), a, b)
    minus = robot.relative_placement(robot.integrate(q, -steps), a, b)
    linear = (plus[:, :3, 3] - minus[:, :3, 3]).T / (2 * EPS)  # d/dt p_ab in a
    angular_in_b = so3_log_small(np.swapaxes(minus[:, :3, :3], 1, 2) @ plus[:, :3, :3]).T / (2 * EPS)
    rotation_ab = kinematics.relative_placement(a, b)[:3, :3]
    expected = np.vstack((linear, rotation_ab @ angular_in_b))
    np.testing.assert_allclose(kinematics.relative_jacobian(a, b), expected, rtol=0, atol=1e-7)

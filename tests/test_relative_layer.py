"""The relative layer as a pure function: fed Jacobians that never saw Pinocchio.

The in-house reference (its own URDF parser and kinematics) gives frame Jacobians and placements;
the layer turns them into J_ab, compared with the reference's own relative Jacobian (computed
directly from the joints, by the cross-product method) and, for the time variation, with finite
differences of the layer itself along q + t v.
"""

from __future__ import annotations

import numpy as np
import pytest

from reljac import ConfigurationError
from reljac.reference import ReferenceRobot
from reljac.relative_layer import relative_jacobian_from_frames, relative_jacobian_time_variation_from_frames
from reljac.robots import BUNDLED_DIR

PAIRS = [("dual_arm", "left_tool", "right_tool"), ("dual_arm", "torso", "right_link5"),
         ("hand", "index_tip", "thumb_tip"), ("tree30", "left_hand_site", "right_foot_site")]


@pytest.mark.parametrize("name, a, b", PAIRS)
@pytest.mark.parametrize("expressed_in", ["a", "b", "world"])
def test_layer_on_reference_jacobians_equals_the_reference(name, a, b, expressed_in):
    ref = ReferenceRobot.from_urdf(BUNDLED_DIR / f"{name}.urdf")
    rng = np.random.default_rng(1)
    for q in ref.random_configuration(rng, n=5):
        J_a, J_b = ref.frame_jacobian(q, a), ref.frame_jacobian(q, b)
        T_wa, T_wb = ref.frame_placement(q, a), ref.frame_placement(q, b)  # (4, 4) arrays
        J = relative_jacobian_from_frames(J_a, J_b, T_wa, T_wb, expressed_in=expressed_in)
        np.testing.assert_allclose(J, ref.relative_jacobian(q, a, b, expressed_in), atol=1e-12)


def test_layer_in_the_axes_of_any_rotation():
    ref = ReferenceRobot.from_urdf(BUNDLED_DIR / "dual_arm.urdf")
    q = ref.random_configuration(np.random.default_rng(2))
    args = (ref.frame_jacobian(q, "left_tool"), ref.frame_jacobian(q, "right_tool"),
            ref.frame_placement(q, "left_tool"), ref.frame_placement(q, "right_tool"))
    R_wc = ref.frame_placement(q, "torso")[:3, :3]
    expected = ref.relative_jacobian(q, "left_tool", "right_tool", "torso")
    np.testing.assert_allclose(relative_jacobian_from_frames(*args, expressed_in=R_wc), expected, atol=1e-12)
    with pytest.raises(ConfigurationError, match="expressed_in"):
        relative_jacobian_from_frames(*args, expressed_in="c")
    with pytest.raises(ConfigurationError, match="T_wa"):
        relative_jacobian_from_frames(args[0], args[1], np.eye(3), args[3])


@pytest.mark.parametrize("expressed_in", ["a", "b", "world"])
def test_layer_time_variation_matches_finite_differences(expressed_in):
    """dJ_ab/dt along v from the reference's dJ (finite differences of its own frame Jacobians)."""
    ref = ReferenceRobot.from_urdf(BUNDLED_DIR / "dual_arm.urdf")
    rng = np.random.default_rng(3)
    q, v = ref.random_configuration(rng), rng.normal(size=ref.nv)
    a, b, h = "left_tool", "right_link5", 1e-6

    def frames(t):
        qt = q + t * v  # dual_arm has only revolute joints: q and v share the layout
        return (ref.frame_jacobian(qt, a), ref.frame_jacobian(qt, b), ref.frame_placement(qt, a),
                ref.frame_placement(qt, b))

    def jacobian(t):
        return relative_jacobian_from_frames(*frames(t), expressed_in=expressed_in)

    dJ_a = (frames(h)[0] - frames(-h)[0]) / (2 * h)
    dJ_b = (frames(h)[1] - frames(-h)[1]) / (2 * h)
    J_a, J_b, T_wa, T_wb = frames(0.0)
    dJ = relative_jacobian_time_variation_from_frames(J_a, J_b, dJ_a, dJ_b, T_wa, T_wb, v, expressed_in=expressed_in)
    np.testing.assert_allclose(dJ, (jacobian(h) - jacobian(-h)) / (2 * h), atol=1e-7)

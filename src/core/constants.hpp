// The core's constants that have a Python twin, in one list; bind_constants.cpp exposes each
// under its Python name and tests/test_core_constants.py checks them equal. (The solver's are in
// hierarchy.hpp, exposed the same way.)
#pragma once

namespace reljac {

// reljac.joint_space.UNIT_TOLERANCE: a quaternion or (cos, sin) block of q has unit norm within
// this (configuration_ok accepts a hair less and leaves the borderline to the Python check).
constexpr double kUnitTolerance = 1e-6;
// reljac.joint_space.MAX_SQUARE: q's squared norm below this (every entry finite, within 1e100).
constexpr double kMaxSquare = 1e200;
// reljac.support.COLLINEAR_TOLERANCE: |cross| below this x scale^2 counts as collinear.
constexpr double kCollinearTolerance = 1e-12;
// reljac.ik.limits.support.OVERSHOOT: overshoot of the shrunk edge held rather than pushed back [m].
constexpr double kOvershoot = 1e-4;
// reljac.collision.distances.GJK_TOLERANCE: coal's GJK tolerance in the step's distances.
constexpr double kGjkTolerance = 1e-10;
// reljac.collision.distances.FAILED: |d| beyond this is coal failing, not a distance [m].
constexpr double kFailed = 1e10;

}  // namespace reljac

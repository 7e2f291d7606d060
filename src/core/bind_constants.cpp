// The core's constants that have a Python twin (constants.hpp, and the solver's in hierarchy.hpp),
// exposed under their Python names; tests/test_core_constants.py checks each equal to Python's.
#include "bindings.hpp"
#include "constants.hpp"
#include "hierarchy.hpp"

namespace py = pybind11;

void bind_constants(py::module_& m) {
  m.attr("RANK_TOLERANCE") = reljac::kRankTolerance;  // reljac.ik.solvers.hierarchy
  m.attr("BOUND_TOLERANCE") = reljac::kBoundTolerance;
  m.attr("PIVOT_TOLERANCE") = reljac::kPivotTolerance;
  m.attr("PIVOT_REPROJECT") = reljac::kPivotReproject;
  m.attr("REACHED_AT_ONCE") = reljac::kReachedAtOnce;
  m.attr("PIN_TOLERANCE") = reljac::kPinTolerance;
  m.attr("MAX_TIE_PATHS") = reljac::kMaxTiePaths;
  m.attr("TIE_PATH_GAIN") = reljac::kTiePathGain;
  m.attr("MAX_STALE_SATURATIONS") = reljac::kMaxStaleSaturations;
  m.attr("MET_TOLERANCE") = reljac::kMetTolerance;
  m.attr("AMPLIFIED") = reljac::kAmplified;
  m.attr("UNIT_TOLERANCE") = reljac::kUnitTolerance;  // reljac.joint_space
  m.attr("MAX_SQUARE") = reljac::kMaxSquare;
  m.attr("COLLINEAR_TOLERANCE") = reljac::kCollinearTolerance;  // reljac.support
  m.attr("OVERSHOOT") = reljac::kOvershoot;                      // reljac.ik.limits.support
  m.attr("GJK_TOLERANCE") = reljac::kGjkTolerance;              // reljac.collision.distances
  m.attr("FAILED") = reljac::kFailed;
}

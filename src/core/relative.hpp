// T_ab and J_ab in C++ on the robot's own pin.Model: the compiled twin of reljac/relative.py
// (Kinematics.relative_placement / relative_jacobian and the one-shot functions), its oracle.
#pragma once

#include <Python.h>

#include <Eigen/Dense>

#include "constants.hpp"
#include "kind.hpp"

namespace reljac {

using Matrix4 = Eigen::Matrix<double, 4, 4, Eigen::RowMajor>;

// relative_linear_velocity (J_ab's linear rows from a column of J_b - J_a) is kind.hpp's.

// Axes J_ab is expressed in: frame a, frame b, the world, or another frame c.
enum Axes { kAxesA = 0, kAxesB = 1, kAxesWorld = 2, kAxesFrame = 3 };

// From kinematics already in `data` (pin.computeJointJacobians and the placements of the frames
// used: updated here): T_ab, and J_ab in the given axes.
Matrix4 relative_placement_in(PyObject* model, PyObject* data, int frame_a, int frame_b);
// J_ab for `count` pairs (a, b) = frames[2k], frames[2k + 1], all in the same axes: J_ab of pair k
// into out[k] (count x 6 x columns, row-major; columns checked to be nv).
void relative_jacobians_in(PyObject* model, PyObject* data, const int* frames, long count, int axes, int frame_c,
                           double* out, long columns);

// The model's nv (the width of the Jacobians).
long velocity_size(PyObject* model);

// True when q (`size` values) passes reljac's checks of a configuration of this model
// (ConfigurationSpace.validate_q): size nq, a sum of squares below 1e200 (every entry finite and
// within 1e100) and every quaternion and (cos, sin) block of unit norm within 1e-6 (a hair less:
// the borderline cases are left to the Python check, which then decides and names the error).
bool configuration_ok(PyObject* model, const double* q, long size);

// One-shot: the kinematics of the frames' supports at q (nq), then as above.
using ConfigurationRef = Eigen::Ref<const Eigen::VectorXd>;
Matrix4 relative_placement(PyObject* model, PyObject* data, const ConfigurationRef& q, int frame_a, int frame_b);
// J_ab into out (6 x columns, row-major; columns checked to be nv).
void relative_jacobian(PyObject* model, PyObject* data, const ConfigurationRef& q, int frame_a, int frame_b,
                       int axes, int frame_c, double* out, long columns);

}  // namespace reljac

namespace reljac {
// The versions of Pinocchio and coal whose headers the core was compiled against.
const char* built_with_pinocchio();
const char* built_with_coal();
}  // namespace reljac

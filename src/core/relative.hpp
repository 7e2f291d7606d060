// T_ab and J_ab in C++ on the robot's own pin.Model: the compiled twin of reljac/relative.py
// (Kinematics.relative_placement / relative_jacobian and the one-shot functions), its oracle.
#pragma once

#include <Python.h>

#include <Eigen/Dense>

#include "constants.hpp"

namespace reljac {

using Matrix4 = Eigen::Matrix<double, 4, 4, Eigen::RowMajor>;

// The velocity of a point moving with frame b, at p_wb, measured in frame a and expressed in frame
// c's axes, from one column of D = J_b - J_a, the difference of the frames' WORLD Jacobians
// (d_v: its linear rows, d_w: its angular rows): R_wc^T (d_v - p_wb x d_w). J_ab's linear rows
// (Kinematics.relative_jacobian; its angular rows are R_wc^T d_w), written once for the one-shot
// and batched J_ab (relative.cpp), the step's frame tasks (step_tasks.cpp) and the centre of mass
// measured in a frame (balance.cpp: b the centre of mass, d_w = -w_a).
inline Eigen::Vector3d relative_linear_velocity(const Eigen::Matrix3d& R_wc, const Eigen::Vector3d& p_wb,
                                                const Eigen::Vector3d& d_v, const Eigen::Vector3d& d_w) {
  return R_wc.transpose() * (d_v - p_wb.cross(d_w));
}

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

// T_ab and J_ab in C++ on the robot's own pin.Model: the compiled twin of reljac/relative.py
// (Kinematics.relative_placement / relative_jacobian and the one-shot functions), its oracle.
#pragma once

#include <Python.h>

#include <Eigen/Dense>

namespace reljac {

using Matrix4 = Eigen::Matrix<double, 4, 4, Eigen::RowMajor>;
using Jacobian = Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>;

// Axes J_ab is expressed in: frame a, frame b, the world, or another frame c.
enum Axes { kAxesA = 0, kAxesB = 1, kAxesWorld = 2, kAxesFrame = 3 };

// From kinematics already in `data` (pin.computeJointJacobians and the placements of the frames
// used: updated here): T_ab, and J_ab in the given axes.
Matrix4 relative_placement_in(PyObject* model, PyObject* data, int frame_a, int frame_b);
Jacobian relative_jacobian_in(PyObject* model, PyObject* data, int frame_a, int frame_b, int axes, int frame_c);

// One-shot: the kinematics of the frames' supports at q (nq), then as above.
using ConfigurationRef = Eigen::Ref<const Eigen::VectorXd>;
Matrix4 relative_placement(PyObject* model, PyObject* data, const ConfigurationRef& q, int frame_a, int frame_b);
// J_ab into J (6 x nv, row-major, the caller's; `columns` its width, checked to be nv).
void relative_jacobian(PyObject* model, PyObject* data, const ConfigurationRef& q, int frame_a, int frame_b,
                       int axes, int frame_c, double* J, long columns);

}  // namespace reljac

namespace reljac {
// The versions of Pinocchio and coal whose headers the core was compiled against.
const char* built_with_pinocchio();
const char* built_with_coal();
}  // namespace reljac

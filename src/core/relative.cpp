// Relative kinematics on Pinocchio; see relative.hpp.
#include "relative.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio_objects.hpp"

namespace reljac {

namespace {

struct Objects {
  PinModel& model;
  PinData& data;
};

Objects objects(PyObject* model, PyObject* data, int frame_a, int frame_b, int axes, int frame_c) {
  Objects o{pinocchio_object<PinModel>(model, "pin.Model"), pinocchio_object<PinData>(data, "pin.Data")};
  if (o.data.oMi.size() != static_cast<size_t>(o.model.njoints))
    throw std::invalid_argument("data is not a pin.Data of this model");
  for (int f : {frame_a, frame_b, axes == kAxesFrame ? frame_c : 0})
    if (f < 0 || f >= o.model.nframes) throw std::invalid_argument("frame id out of range");
  if (axes < kAxesA || axes > kAxesFrame) throw std::invalid_argument("axes must be 0 (a), 1 (b), 2 (world) or 3");
  return o;
}

Matrix4 placement(const pinocchio::SE3& T_wa, const pinocchio::SE3& T_wb) {
  return T_wa.actInv(T_wb).toHomogeneousMatrix();
}

// A frame Jacobian (6 x nv, col-major): Pinocchio's own Matrix6x, so that getFrameJacobian is the
// library's instance and computeFrameJacobian's the same one kinematics.cpp compiles (a Map q):
// each other type instantiated every joint's visitors once more (build time, not run time).
using FrameJacobian = Eigen::Matrix<double, 6, Eigen::Dynamic>;

// Column k of J_ab (row-major 6 x nv at J) from (lin, w) in world axes: [R_wc^T lin; R_wc^T w].
inline void put_column(const Eigen::Matrix3d& R_wc, const Eigen::Vector3d& lin, const Eigen::Vector3d& w, double* J,
                       long nv, long k) {
  const Eigen::Vector3d l = R_wc.transpose() * lin, a = R_wc.transpose() * w;
  for (int r = 0; r < 3; ++r) {
    J[r * nv + k] = l[r];
    J[(r + 3) * nv + k] = a[r];
  }
}

// True when column k of both frame Jacobians (col-major 6 x nv) is zero: a joint neither frame
// moves with (most columns of a big tree), whose column of J_ab is zero.
inline bool both_zero(const double* a, const double* b) {
  for (int i = 0; i < 6; ++i)
    if (a[i] != 0.0 || b[i] != 0.0) return false;
  return true;
}

// Column k of J_ab (row-major 6 x nv at J) from column k of the WORLD frame Jacobians J_a, J_b
// (col-major 6 x nv) and the placements: the motion of b's origin measured in a,
// [R_wc^T (Dv - p_wb x Dw); R_wc^T Dw] with D = J_b - J_a.
inline void world_column(const FrameJacobian& Ja, const FrameJacobian& Jb, const Eigen::Matrix3d& R_wc,
                         const Eigen::Vector3d& p_wb, double* J, long nv, long k) {
  const double *a = Ja.data() + 6 * k, *b = Jb.data() + 6 * k;
  const Eigen::Vector3d w(b[3] - a[3], b[4] - a[4], b[5] - a[5]);
  const Eigen::Vector3d l = relative_linear_velocity(R_wc, p_wb, Eigen::Vector3d(b[0] - a[0], b[1] - a[1], b[2] - a[2]), w);
  const Eigen::Vector3d angular = R_wc.transpose() * w;
  for (int r = 0; r < 3; ++r) {
    J[r * nv + k] = l[r];
    J[(r + 3) * nv + k] = angular[r];
  }
}

// Every column of J_ab that way (those neither frame moves with are zero).
void combine(const FrameJacobian& Ja, const FrameJacobian& Jb, const Eigen::Matrix3d& R_wc,
             const Eigen::Vector3d& p_wb, double* J) {
  const long nv = Ja.cols();
  for (long k = 0; k < nv; ++k) {
    if (both_zero(Ja.data() + 6 * k, Jb.data() + 6 * k)) {
      for (int r = 0; r < 6; ++r) J[r * nv + k] = 0.0;
      continue;
    }
    world_column(Ja, Jb, R_wc, p_wb, J, nv, k);
  }
}

// The same from the LOCAL_WORLD_ALIGNED frame Jacobians (linear rows: the velocity of the frame's
// origin): [R_wc^T (Jv_b - Jv_a + (p_wb - p_wa) x Jw_a); R_wc^T (Jw_b - Jw_a)].
void combine_aligned(const FrameJacobian& Ja, const FrameJacobian& Jb, const Eigen::Matrix3d& R_wc,
                     const Eigen::Vector3d& p_wa, const Eigen::Vector3d& p_wb, double* J) {
  const long nv = Ja.cols();
  const Eigen::Vector3d r = p_wb - p_wa;
  for (long k = 0; k < nv; ++k) {
    const double *a = Ja.data() + 6 * k, *b = Jb.data() + 6 * k;
    if (both_zero(a, b)) {
      for (int row = 0; row < 6; ++row) J[row * nv + k] = 0.0;
      continue;
    }
    const Eigen::Vector3d wa(a[3], a[4], a[5]);
    const Eigen::Vector3d w = Eigen::Vector3d(b[3], b[4], b[5]) - wa;
    const Eigen::Vector3d lin = Eigen::Vector3d(b[0] - a[0], b[1] - a[1], b[2] - a[2]) + r.cross(wa);
    put_column(R_wc, lin, w, J, nv, k);
  }
}

// Per-thread buffers of the frame Jacobians (no allocation once sized), zeroed for each use
// (Pinocchio fills only the columns of the joints a frame moves with).
struct Buffers {
  FrameJacobian Ja, Jb, Jc;
  Eigen::VectorXd q;  // the configuration as Pinocchio's own instance of computeFrameJacobian takes it
  bool zero = false;  // Ja and Jb hold zeros (left so by the support-column path)
};
Buffers& buffers(long nv) {
  thread_local Buffers b;
  if (!b.zero || b.Ja.cols() != nv) {
    b.Ja.setZero(6, nv);
    b.Jb.setZero(6, nv);
  }
  b.zero = false;  // the caller fills them
  return b;
}

// Calls column(c) for each velocity column c of the joints supporting `frame` (those its WORLD
// Jacobian fills, in a model without mimic joints).
template <typename Column>
void for_support_columns(const PinModel& model, int frame, Column&& column) {
  for (const auto joint : model.supports[model.frames[frame].parentJoint]) {
    if (joint == 0) continue;  // the universe: no column (its joint model is a placeholder)
    const int first = model.joints[joint].idx_v(), count = model.joints[joint].nv();
    for (int c = first; c < first + count; ++c) column(c);
  }
}

Eigen::Matrix3d axes_rotation(const PinData& data, int axes, int frame_a, int frame_b, int frame_c) {
  switch (axes) {
    case kAxesA: return data.oMf[frame_a].rotation();
    case kAxesB: return data.oMf[frame_b].rotation();
    case kAxesWorld: return Eigen::Matrix3d::Identity();
    default: return data.oMf[frame_c].rotation();
  }
}

// [start, stop) in q of every block that must have unit norm: a free flyer's quaternion, a
// spherical joint's, a continuous joint's (cos, sin), a planar joint's (cos, sin) (as
// reljac.joint_space.unit_slice). Remembered for the last model object, with a reference held on
// it (its address cannot be reused while it is remembered). Called with the GIL held.
const std::vector<std::pair<int, int>>& unit_blocks(PyObject* object, const PinModel& model) {
  static PyObject* last_object = nullptr;
  static std::vector<std::pair<int, int>> blocks;
  if (object == last_object) return blocks;
  std::vector<std::pair<int, int>> found;
  for (int j = 1; j < model.njoints; ++j) {
    const auto& joint = model.joints[j];
    const int nq = joint.nq(), nv = joint.nv(), start = joint.idx_q();
    if (nq == nv) continue;  // revolute, prismatic, mimic (0, 0), ...
    const std::string kind = joint.shortname();
    if (kind == "JointModelFreeFlyer") found.emplace_back(start + 3, start + 7);
    else if (kind == "JointModelSpherical") found.emplace_back(start, start + 4);
    else if (nq == 2 && nv == 1) found.emplace_back(start, start + 2);
    else if (kind == "JointModelPlanar") found.emplace_back(start + 2, start + 4);
  }
  Py_INCREF(object);
  Py_XDECREF(last_object);
  last_object = object;
  blocks = std::move(found);
  return blocks;
}

}  // namespace

bool configuration_ok(PyObject* model, const double* q, long size) {
  constexpr double kUnitBelow = kUnitTolerance * (1 - 1e-9);  // a hair less: the Python check decides the borderline
  const PinModel& m = pinocchio_object<PinModel>(model, "pin.Model");
  if (size != m.nq) return false;
  const Eigen::Map<const Eigen::VectorXd> x(q, size);
  if (!(x.squaredNorm() < kMaxSquare)) return false;  // false for NaN too
  for (const auto& [start, stop] : unit_blocks(model, m))
    if (!(std::abs(x.segment(start, stop - start).norm() - 1.0) <= kUnitBelow)) return false;
  return true;
}

Matrix4 relative_placement_in(PyObject* model, PyObject* data, int frame_a, int frame_b) {
  Objects o = objects(model, data, frame_a, frame_b, kAxesA, 0);
  return placement(pinocchio::updateFramePlacement(o.model, o.data, frame_a),
                   pinocchio::updateFramePlacement(o.model, o.data, frame_b));
}

void relative_jacobians_in(PyObject* model, PyObject* data, const int* frames, long count, int axes, int frame_c,
                           double* out, long columns) {
  for (long k = 0; k < count; ++k) {
    const int frame_a = frames[2 * k], frame_b = frames[2 * k + 1];
    Objects o = objects(model, data, frame_a, frame_b, axes, frame_c);
    if (columns != o.model.nv) throw std::invalid_argument("the Jacobians must have nv columns");
    Buffers& b = buffers(columns);
    for (int f : {frame_a, frame_b, axes == kAxesFrame ? frame_c : frame_a}) pinocchio::updateFramePlacement(o.model, o.data, f);
    pinocchio::getFrameJacobian(o.model, o.data, frame_a, pinocchio::WORLD, b.Ja);
    pinocchio::getFrameJacobian(o.model, o.data, frame_b, pinocchio::WORLD, b.Jb);
    const Eigen::Matrix3d R_wc = axes_rotation(o.data, axes, frame_a, frame_b, frame_c);
    const Eigen::Vector3d& p_wb = o.data.oMf[frame_b].translation();
    double* J = out + k * 6 * columns;
    if (!o.model.mimicking_joints.empty()) {  // a mimic joint's Jacobian also fills its leader's column
      combine(b.Ja, b.Jb, R_wc, p_wb, J);
      continue;
    }
    // only the columns of the joints a or b moves with (a big tree's other columns are zero), and
    // the buffers left zero for the next pair
    std::fill(J, J + 6 * columns, 0.0);
    const auto column = [&](int c) { world_column(b.Ja, b.Jb, R_wc, p_wb, J, columns, c); };
    for_support_columns(o.model, frame_a, column);
    for_support_columns(o.model, frame_b, column);
    const auto clear = [&](int c) {
      b.Ja.col(c).setZero();
      b.Jb.col(c).setZero();
    };
    for_support_columns(o.model, frame_a, clear);
    for_support_columns(o.model, frame_b, clear);
    b.zero = true;
  }
}

long velocity_size(PyObject* model) { return pinocchio_object<PinModel>(model, "pin.Model").nv; }

Matrix4 relative_placement(PyObject* model, PyObject* data, const ConfigurationRef& q, int frame_a, int frame_b) {
  Objects o = objects(model, data, frame_a, frame_b, kAxesA, 0);
  if (q.size() != o.model.nq) throw std::invalid_argument("q has the wrong size");
  pinocchio::forwardKinematics(o.model, o.data, q);
  return placement(pinocchio::updateFramePlacement(o.model, o.data, frame_a),
                   pinocchio::updateFramePlacement(o.model, o.data, frame_b));
}

void relative_jacobian(PyObject* model, PyObject* data, const ConfigurationRef& q, int frame_a, int frame_b,
                       int axes, int frame_c, double* out, long columns) {
  Objects o = objects(model, data, frame_a, frame_b, axes, frame_c);
  if (q.size() != o.model.nq) throw std::invalid_argument("q has the wrong size");
  if (columns != o.model.nv) throw std::invalid_argument("the Jacobian must have nv columns");
  Buffers& b = buffers(columns);
  // each call runs the kinematics of its frame's supporting joints only, and places the frame; q as
  // a VectorXd: the library's instance (one compiled here costs the build its joint visitors, and
  // ran 5 % slower: 0.78 against 0.74 us for two Talos grippers, 2026-12-04)
  b.q = q;
  const Eigen::VectorXd& x = b.q;
  pinocchio::computeFrameJacobian(o.model, o.data, x, frame_a, pinocchio::LOCAL_WORLD_ALIGNED, b.Ja);
  pinocchio::computeFrameJacobian(o.model, o.data, x, frame_b, pinocchio::LOCAL_WORLD_ALIGNED, b.Jb);
  if (axes == kAxesFrame && frame_c != frame_a && frame_c != frame_b) {  // placed by its own pass
    b.Jc.setZero(6, columns);
    pinocchio::computeFrameJacobian(o.model, o.data, x, frame_c, pinocchio::LOCAL_WORLD_ALIGNED, b.Jc);
  }
  combine_aligned(b.Ja, b.Jb, axes_rotation(o.data, axes, frame_a, frame_b, frame_c),
                  o.data.oMf[frame_a].translation(), o.data.oMf[frame_b].translation(), out);
}

}  // namespace reljac

namespace reljac {
const char* built_with_pinocchio() { return PINOCCHIO_VERSION; }
const char* built_with_coal() { return COAL_VERSION; }
}  // namespace reljac

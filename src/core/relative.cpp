// Relative kinematics on Pinocchio; see relative.hpp.
#include "relative.hpp"

#include <stdexcept>

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

// J_ab from the WORLD frame Jacobians J_a, J_b (6 x nv) and the placements: the motion of b's
// origin measured in a, [R_wc^T (Dv - p_wb x Dw); R_wc^T Dw] with D = J_b - J_a.
Jacobian combine(const Eigen::MatrixXd& Ja, const Eigen::MatrixXd& Jb, const Eigen::Matrix3d& R_wc,
                 const Eigen::Vector3d& p_wb) {
  const long nv = Ja.cols();
  Jacobian J(6, nv);
  for (long k = 0; k < nv; ++k) {
    const Eigen::Vector3d w = Jb.col(k).tail<3>() - Ja.col(k).tail<3>();
    const Eigen::Vector3d lin = Jb.col(k).head<3>() - Ja.col(k).head<3>() - p_wb.cross(w);
    J.col(k).head<3>() = R_wc.transpose() * lin;
    J.col(k).tail<3>() = R_wc.transpose() * w;
  }
  return J;
}

// The same from the LOCAL_WORLD_ALIGNED frame Jacobians (linear rows: the velocity of the frame's
// origin): [R_wc^T (Jv_b - Jv_a + (p_wb - p_wa) x Jw_a); R_wc^T (Jw_b - Jw_a)].
Jacobian combine_aligned(const Eigen::MatrixXd& Ja, const Eigen::MatrixXd& Jb, const Eigen::Matrix3d& R_wc,
                         const Eigen::Vector3d& p_wa, const Eigen::Vector3d& p_wb) {
  const long nv = Ja.cols();
  const Eigen::Vector3d r = p_wb - p_wa;
  Jacobian J(6, nv);
  for (long k = 0; k < nv; ++k) {
    const Eigen::Vector3d wa = Ja.col(k).tail<3>();
    const Eigen::Vector3d lin = Jb.col(k).head<3>() - Ja.col(k).head<3>() + r.cross(wa);
    J.col(k).head<3>() = R_wc.transpose() * lin;
    J.col(k).tail<3>() = R_wc.transpose() * (Jb.col(k).tail<3>() - wa);
  }
  return J;
}

Eigen::Matrix3d axes_rotation(const PinData& data, int axes, int frame_a, int frame_b, int frame_c) {
  switch (axes) {
    case kAxesA: return data.oMf[frame_a].rotation();
    case kAxesB: return data.oMf[frame_b].rotation();
    case kAxesWorld: return Eigen::Matrix3d::Identity();
    default: return data.oMf[frame_c].rotation();
  }
}

}  // namespace

Matrix4 relative_placement_in(PyObject* model, PyObject* data, int frame_a, int frame_b) {
  Objects o = objects(model, data, frame_a, frame_b, kAxesA, 0);
  return placement(pinocchio::updateFramePlacement(o.model, o.data, frame_a),
                   pinocchio::updateFramePlacement(o.model, o.data, frame_b));
}

Jacobian relative_jacobian_in(PyObject* model, PyObject* data, int frame_a, int frame_b, int axes, int frame_c) {
  Objects o = objects(model, data, frame_a, frame_b, axes, frame_c);
  const long nv = o.model.nv;
  Eigen::MatrixXd Ja = Eigen::MatrixXd::Zero(6, nv), Jb = Eigen::MatrixXd::Zero(6, nv);
  for (int f : {frame_a, frame_b, axes == kAxesFrame ? frame_c : frame_a}) pinocchio::updateFramePlacement(o.model, o.data, f);
  pinocchio::getFrameJacobian(o.model, o.data, frame_a, pinocchio::WORLD, Ja);
  pinocchio::getFrameJacobian(o.model, o.data, frame_b, pinocchio::WORLD, Jb);
  return combine(Ja, Jb, axes_rotation(o.data, axes, frame_a, frame_b, frame_c), o.data.oMf[frame_b].translation());
}

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
  const long nv = o.model.nv;
  thread_local Eigen::MatrixXd Ja, Jb;
  Ja.setZero(6, nv);
  Jb.setZero(6, nv);
  // each call runs the kinematics of its frame's supporting joints only, and places the frame
  pinocchio::computeFrameJacobian(o.model, o.data, q, frame_a, pinocchio::LOCAL_WORLD_ALIGNED, Ja);
  pinocchio::computeFrameJacobian(o.model, o.data, q, frame_b, pinocchio::LOCAL_WORLD_ALIGNED, Jb);
  if (axes == kAxesFrame && frame_c != frame_a && frame_c != frame_b) {
    Eigen::MatrixXd Jc = Eigen::MatrixXd::Zero(6, nv);
    pinocchio::computeFrameJacobian(o.model, o.data, q, frame_c, pinocchio::LOCAL_WORLD_ALIGNED, Jc);
  }
  Eigen::Map<Jacobian>(out, 6, nv) = combine_aligned(Ja, Jb, axes_rotation(o.data, axes, frame_a, frame_b, frame_c),
                                                     o.data.oMf[frame_a].translation(), o.data.oMf[frame_b].translation());
}

}  // namespace reljac

namespace reljac {
const char* built_with_pinocchio() { return PINOCCHIO_VERSION; }
const char* built_with_coal() { return COAL_VERSION; }
}  // namespace reljac

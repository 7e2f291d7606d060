// Collision avoidance rows of one step, in C++ on Pinocchio's geometry data and coal: the
// compiled twin of reljac/ik/collision_avoidance.py (CollisionAvoidance.constraint / observe)
// and reljac/collision/distances.py (Kernel.compute with per_geometry=True), its oracle.
#pragma once

#include <memory>
#include <vector>

#include "pinocchio_objects.hpp"
#include "step.hpp"

namespace reljac {

class CollisionLimit {
 public:
  CollisionLimit(const PinModel& model, PyObject* geometry, const CollisionDescription& d);
  ~CollisionLimit();
  // New parameters; a new geometry model (pairs or obstacles changed) resets the predictions.
  void set(PyObject* geometry, const CollisionDescription& d);
  // The rows C v <= d at the kinematics in `data` (joint placements and WORLD joint Jacobians).
  void compute(const PinData& data, double dt);
  // Predict each row's distance after the step v (nv) just commanded.
  void observe(const Vector& v);
  void reset();

  const CollisionRows& rows() const { return rows_; }
  const RowMatrix& C() const { return C_; }
  const Vector& d() const { return d_; }

 private:
  void bind(PyObject* geometry);
  const coal::DistanceResult& distance(std::size_t k);
  const Matrix& joint_jacobian(const PinData& data, int joint);

  const PinModel& model_;
  PyObject* geometry_object_ = nullptr;  // a reference held on Python's pin.GeometryModel
  pinocchio::GeometryModel* geometry_ = nullptr;
  std::unique_ptr<pinocchio::GeometryData> gdata_;
  CollisionDescription desc_;
  std::vector<double> radius_;              // bounding sphere of each geometry (broad phase)
  std::vector<Eigen::Vector3d> centre_;     // its centre in the geometry's frame
  std::vector<double> predicted_, margin_;  // per geometry pair
  std::vector<long> predicted_at_, margin_at_;
  long step_ = 0;
  double dt_ = 0.0;
  std::vector<Matrix> jacobians_;  // per joint, this step's WORLD Jacobian (6 x nv)
  std::vector<long> jacobian_at_;
  CollisionRows rows_;
  RowMatrix C_;
  Vector d_;
};

}  // namespace reljac

// Collision avoidance rows of one step, in C++ on Pinocchio's geometry data and coal: the
// compiled twin of reljac/ik/limits/collision.py (CollisionAvoidance.constraint / observe)
// and reljac/collision/distances.py (Kernel.compute with per_geometry=True), its oracle.
#pragma once

#include <memory>
#include <vector>

#include "constants.hpp"
#include "limit_descriptions.hpp"
#include "pinocchio_objects.hpp"
#include "step.hpp"

namespace reljac {

class CollisionLimit {
 public:
  CollisionLimit(const PinModel& model, PyObject* geometry, const CollisionAvoidanceDescription& d);
  ~CollisionLimit();
  // New parameters; a new geometry model (pairs or obstacles changed) resets the predictions.
  void set(PyObject* geometry, const CollisionAvoidanceDescription& d);
  // The rows C v <= d at the kinematics in `data` (joint placements and WORLD joint Jacobians).
  void compute(const PinData& data, double dt);
  // Predict each row's distance after the step v (nv) just commanded.
  void observe(const Vector& v);
  void reset();

  // The last rows (a copy, for reports and tests).
  CollisionRows rows() const;
  int count() const { return static_cast<int>(pair_.size()); }  // rows of the last compute
  int room() const { return static_cast<int>(C_.rows()); }  // the most rows a step can have: one per pair
  Eigen::Block<const RowMatrix, Eigen::Dynamic, Eigen::Dynamic, true> C() const { return C_.topRows(count()); }
  Eigen::VectorBlock<const Vector> d() const { return d_.head(count()); }
  // This step's rows' distances [m] and distance Jacobians (count x nv), one per pair in pairs().
  Eigen::VectorBlock<const Vector> distances() const { return distance_.head(count()); }
  Eigen::Block<const RowMatrix, Eigen::Dynamic, Eigen::Dynamic, true> jacobians() const { return jacobian_.topRows(count()); }
  const std::vector<int>& pairs() const { return pair_; }  // geometry pair indices in collisionPairs
  const CollisionAvoidanceDescription& description() const { return desc_; }

 private:
  void bind(PyObject* geometry);
  const coal::DistanceResult& distance(std::size_t k);
  const Matrix& joint_jacobian(const PinData& data, int joint);
  bool separated(std::size_t g1, std::size_t g2, double within) const;

  const PinModel& model_;
  PyObject* geometry_object_ = nullptr;  // a reference held on Python's pin.GeometryModel
  pinocchio::GeometryModel* geometry_ = nullptr;
  std::unique_ptr<pinocchio::GeometryData> gdata_;
  CollisionAvoidanceDescription desc_;
  std::vector<double> radius_;              // bounding sphere of each geometry (broad phase)
  std::vector<Eigen::Vector3d> centre_;     // its centre in the geometry's frame
  std::vector<Eigen::Vector3d> box_centre_, box_half_;  // its local AABB (second broad phase)
  // first broad phase: the pairs grouped by their two joints, each joint's geometries in one sphere
  struct JointPairGroup {
    int joint1 = 0, joint2 = 0;
  };
  std::vector<JointPairGroup> groups_;
  std::vector<Eigen::Vector3d> joint_centre_;  // per joint, in its frame
  std::vector<double> joint_radius_;           // (-1: no geometry)
  std::vector<Eigen::Vector3d> joint_centre_now_;  // per joint, this step: its sphere's centre in the world
  std::vector<int> group_of_pair_;             // per geometry pair, its group
  std::vector<char> near_;                     // per group, this step: its joints' spheres within reach
  std::vector<double> predicted_, margin_;  // per geometry pair
  std::vector<long> predicted_at_, margin_at_;
  long step_ = 0;
  double dt_ = 0.0;
  std::vector<Matrix> jacobians_;  // per joint, this step's WORLD Jacobian (6 x nv)
  std::vector<long> jacobian_at_;
  // the last rows, in buffers with room for one row per pair (sized by bind(): no allocation per
  // step); the first count() rows, one per pair in pair_, are this step's
  std::vector<int> pair_;
  Vector distance_, d_;
  RowMatrix point1_, point2_, normal_, jacobian_, C_;
  std::vector<Eigen::Vector3d> centres_, normals_;  // per geometry: its sphere's centre; per row: coal's normal
  Eigen::Matrix<double, 1, Eigen::Dynamic> jacobian_row_;  // w^T J of one joint (Eigen's temporary's type)
};

}  // namespace reljac

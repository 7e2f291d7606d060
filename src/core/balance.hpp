// Balance in the compiled step: the centre of mass in any frame (CoMTask's rows) and the support
// region's rows (SupportRegion). The compiled twins of reljac/ik/limits/support.py and reljac/support.py,
// their specification and oracle; Pinocchio's own jacobianCenterOfMass gives c and J_c.
#pragma once

#include <vector>

#include "constants.hpp"
#include "limit_descriptions.hpp"
#include "pinocchio_model.hpp"
#include "step.hpp"

namespace reljac {

// The whole robot's centre of mass c (3) and its Jacobian J_c (3 x nv) in the world, on the
// kinematics pass already in `data` (joint placements): Pinocchio's jacobianCenterOfMass for the
// moving bodies, with the bodies fixed to the world (the inertia of joint 0) added back
// (Kinematics._com_world).
void compute_center_of_mass(const PinModel& model, PinData& data, Eigen::Vector3d& c, Matrix& J_c);

// p_ac (3) and J_ac (3 x nv): the centre of mass c, J_c measured and expressed in frame a, with
// T_wa = data.oMf[frame] and J_a (6 x nv), a's WORLD Jacobian (zero for the world):
// J_ac = R_wa^T (J_c - J^v_a + [c]x J^w_a) (Kinematics.center_of_mass_jacobian).
void center_of_mass_in(const PinData& data, const Eigen::Vector3d& c, const Matrix& J_c, int frame, const Matrix& J_a,
                       Eigen::Vector3d& p, Matrix& J);

// The support region's rows C v <= d of one step (SupportRegion.constraint). Its buffers are
// sized by the description (one row per contact point at most): no allocation per step.
class SupportLimit {
 public:
  explicit SupportLimit(const SupportRegionDescription& d) { set(d); }
  void set(const SupportRegionDescription& d);
  const SupportRegionDescription& description() const { return desc_; }
  // p, J: the centre of mass in the region's frame (center_of_mass_in); the frames' placements
  // in data.oMf. Throws SupportFailure when the region has no area, or none left by the margin.
  void compute(const PinData& data, const Eigen::Vector3d& p, const Matrix& J, double dt);
  int count() const { return count_; }  // rows of the last compute (the hull's edges)
  int room() const { return static_cast<int>(C_.rows()); }  // the most rows: one per contact point
  Eigen::Block<const RowMatrix, Eigen::Dynamic, Eigen::Dynamic, true> C() const { return C_.topRows(count_); }
  Eigen::VectorBlock<const Vector> d() const { return d_.head(count_); }
  // s_i [m], the centre of mass's distance to each edge of the shrunk region (>= 0 inside), this step
  Eigen::VectorBlock<const Vector> to_shrunk() const { return to_shrunk_.head(count_); }

 private:
  SupportRegionDescription desc_;
  std::vector<Eigen::Vector2d> points_, hull_, sorted_, lower_, upper_, normals_, shrunk_, clipped_;
  std::vector<double> offsets_, inside_;
  int count_ = 0;
  RowMatrix C_;  // (room x nv), the first count_ rows this step's
  Vector d_, to_shrunk_;
};

}  // namespace reljac

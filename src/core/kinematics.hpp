// Batched relative kinematics of a frame b in a frame a (T_ab, J_ab) and the per-chunk reduction of
// a capability map, on the robot's pin.Model: the compiled twins of python_relative_kinematics
// in reljac/maps/compiled.py and python_reduce in reljac/maps/kernel.py (their specifications and
// test oracles). Pinocchio computes the kinematics (every joint type it models, mimic joints
// included); J_ab's columns come from the frames' WORLD Jacobians through relative.hpp's
// relative_linear_velocity, as the one-shot reljac::relative_jacobians_in does.
//
// Conventions as in reljac/__init__.py: T_ab is the pose of b in a; J_ab (6 x nv) maps v to
// [d/dt p_ab; w_ab] expressed in a.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "pinocchio/multibody/data.hpp"
#include "pinocchio/multibody/model.hpp"

namespace reljac::kin {

using Matrix3 = Eigen::Matrix3d;
using Vector3 = Eigen::Vector3d;

struct Pose {
  Matrix3 R;
  Vector3 p;
};

// T_ab and J_ab of one frame pair, configuration after configuration, on a copy of the robot's
// model with a pin.Data of its own (one per thread): no allocation per configuration. On a model without mimic joints, Pinocchio runs on
// the pair's model: the robot's with every joint that does not move b relative to a locked
// (pinocchio::buildReducedModel: the joints above a's and b's common ancestor and those of other
// branches; T_ab does not depend on them and their columns of J_ab are zero). With mimic joints, on a
// copy of the robot's model (a mimic joint and its leader may sit on either side of that line).
class PairKinematics {
 public:
  // std::invalid_argument when a frame id is out of range.
  PairKinematics(const pinocchio::Model& robot, int frame_a, int frame_b);

  // T_ab for one configuration q of the robot (nq values), and, when J is not null, J_ab's columns
  // of the pair's joints into J (6 x columns(), row-major): J_ab's column column_of()[k] is column k.
  void evaluate(const double* q, Pose& T_ab, double* J);
  int columns() const { return model_.nv; }
  const std::vector<int>& column_of() const { return column_of_; }

 private:
  pinocchio::Model model_;  // the pair's model
  pinocchio::Data data_;
  int frame_a_, frame_b_;          // in model_
  std::vector<int> q_from_;        // model_'s q[i] is the robot's q[q_from_[i]]
  std::vector<int> column_of_;     // model_'s velocity column k is the robot's column column_of_[k]
  Eigen::VectorXd x_;              // model_'s configuration
  Eigen::Matrix<double, 6, Eigen::Dynamic> Ja_, Jb_;  // WORLD frame Jacobians
  bool mimic_;  // Pinocchio adds a mimic joint's column into its leader's: zeroed per configuration
  bool one_pass_ = false;  // the reduced pair model: computeJointJacobians once instead of a frame Jacobian per frame
  std::vector<double> sign_;  // per column of model_: +1 on b's branch only, -1 on a's only, 0 on both or neither
};

// Sample -> voxel binning and reduction for a capability map (see reljac/maps/capability.py).
struct Grid {
  Vector3 origin;   // corner of voxel (0, 0, 0) in a's frame [m]
  double voxel;     // edge length [m]
  int64_t dims[3];  // voxels along x, y, z
};

struct ChunkResult {  // one entry per voxel reached in the chunk
  std::vector<int64_t> voxel;      // flat index i * ny * nz + j * nz + k
  std::vector<int64_t> count;      // samples that put b's origin in it
  std::vector<uint64_t> coverage;  // bit d set: approach direction d reached there
  std::vector<double> best;        // largest manipulability found there
  std::vector<int64_t> best_index; // global index of the sample that found it (smallest on ties)
  int64_t outside = 0;             // samples outside the grid
};

// How sample uniforms become a configuration (the twin of reljac/maps/sampling.py's Sampler.draw):
// kind 0: q[q] = lo + (hi - lo) u[u]; kind 1: angle t = (2 u[u] - 1) pi, q[q..q+1] = (cos t, sin t);
// kind 2: a quaternion uniform on SO(3) from u[u..u+2] (Shoemake) at q[q..q+3] (x, y, z, w).
struct SampleColumn {
  int kind, q, u;
  double lo, hi;
};

// Q (n x nq) from U (n x k), both row-major; entries no column writes keep `neutral`.
void configurations_from_uniforms(const std::vector<SampleColumn>& plan, const double* neutral, int nq, const double* U,
                                  int k, int64_t n, double* Q);

// Manipulability sqrt(det(J_r J_r^T)) of the rows `rows` of J (6 x columns, row-major); 0 when
// singular or when rows outnumber `joints` (the robot's nv: J may hold only its nonzero columns).
double manipulability(const double* J, int columns, int joints, const std::vector<int>& rows);

// Per-voxel results keyed by voxel (open addressing, linear probing): counts add, coverage bits
// OR, the best manipulability is kept with the smallest global sample index on ties, so the
// result does not depend on the order in which samples or partial results arrive.
class VoxelTable {
 public:
  VoxelTable() { rehash(1024); }
  void add(int64_t voxel, int64_t count, uint64_t coverage, double best, int64_t best_index);
  const ChunkResult& result() const { return out_; }
  ChunkResult& result() { return out_; }

 private:
  void rehash(size_t capacity);
  size_t slot_of(int64_t voxel) const;

  ChunkResult out_;
  std::vector<int64_t> keys_;    // -1: empty
  std::vector<size_t> entries_;  // index into out_ of the voxel in the same slot
  size_t mask_ = 0;
  int shift_ = 54;
};

// The reduction of samples into per-voxel results for one chunk of a capability map.
class CapabilityReduction {
 public:
  // directions: (ndirs x 3, 1 <= ndirs <= 64) unit vectors in a's frame; axis: 0, 1, 2 = b's x, y,
  // z axis is the approach direction, binned to the direction of largest dot product (smallest
  // index on ties); rows: the rows of J_ab whose manipulability is kept.
  CapabilityReduction(const pinocchio::Model& model, int frame_a, int frame_b, const Grid& grid,
                      std::vector<double> directions, int axis, std::vector<int> rows);
  // Add samples Q (n x nq, row-major); sample s has global index first_index + s.
  void add(const double* Q, int64_t n, int64_t first_index);
  const ChunkResult& result() const { return table_.result(); }

 private:
  PairKinematics pair_;
  int nq_, nv_;  // the robot's
  Grid grid_;
  std::vector<double> directions_;
  int axis_;
  std::vector<int> rows_;
  std::vector<double> J_;  // J_ab's nonzero columns (PairKinematics::evaluate), row-major
  VoxelTable table_;
};

}  // namespace reljac::kin

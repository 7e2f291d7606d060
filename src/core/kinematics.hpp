// Batched relative kinematics of a frame b in a frame a (T_ab, J_ab) and the per-chunk reduction of
// a capability map: the compiled twin of python_relative_kinematics in reljac/maps/compiled.py and
// python_reduce in reljac/maps/kernel.py (their specifications and test oracles). It has its own
// forward kinematics over a joint tree exported once from a pin.Model by reljac/maps/compiled.py:
// Pinocchio's C++ is not a build dependency.
//
// Conventions as in reljac/__init__.py: T_ab is the pose of b in a; J_ab (6 x nv) maps v to
// [d/dt p_ab; w_ab] expressed in a. Only the joints below the common ancestor c of a and b move b
// relative to a; everything is computed in c's frame and rotated into a's axes at the end.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

namespace reljac::kin {

using Matrix3 = Eigen::Matrix3d;
using Vector3 = Eigen::Vector3d;
using JacobianMap = Eigen::Map<Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>>;

// Joint kinds; q layout and velocity (in the joint's own frame, after its motion) as in Pinocchio.
enum Kind : int {
  kRevolute = 0,           // q: angle (x scaling + offset for mimic joints); v: rate about axis
  kPrismatic = 1,          // q: displacement along axis (x scaling + offset); v: its rate
  kRevoluteUnbounded = 2,  // q: (cos, sin) used as they are; v: rate about axis
  kFreeFlyer = 3,          // q: (x, y, z, qx, qy, qz, qw); v: (linear, angular) in the joint frame
  kSpherical = 4,          // q: (qx, qy, qz, qw); v: angular in the joint frame
  kPlanar = 5,             // q: (x, y, cos, sin); v: (vx, vy, wz) in the joint frame
};

struct Joint {
  int parent = 0;  // parent joint id (0: the universe); joint 0 itself is the universe
  Kind kind = kRevolute;
  Vector3 axis = Vector3::UnitZ();  // unit axis of revolute / prismatic kinds, in the joint frame
  int aligned = -1;                 // 0, 1, 2 when axis is +x, +y, +z exactly; -1 otherwise
  Matrix3 R = Matrix3::Identity();  // placement of the joint in its parent joint's frame
  Vector3 p = Vector3::Zero();
  int idx_q = 0, idx_v = 0;          // first entries of q and v (a mimic joint: its leader's)
  double scaling = 1.0, offset = 0;  // 1-DoF kinds: value = scaling * q[idx_q] + offset
  int nv() const;
};

struct Frame {
  int joint = 0;  // parent joint
  Matrix3 R = Matrix3::Identity();
  Vector3 p = Vector3::Zero();
};

struct Model {
  int nq = 0, nv = 0;
  std::vector<Joint> joints;  // joints[0]: the universe (never moves)
  std::vector<Frame> frames;
  void check() const;  // throws std::invalid_argument on an inconsistent tree
};

struct Pose {
  Matrix3 R;
  Vector3 p;
};

// The joints that move frame b relative to frame a: from their common ancestor down to each.
class PairPlan {
 public:
  PairPlan(const Model& model, int frame_a, int frame_b);

  // T_ab, and J_ab into J (6 x nv, row-major) when J is not null, for one configuration q (nq).
  void evaluate(const double* q, Pose& T_ab, double* J) const;
  const Model& model() const { return model_; }

 private:
  const Model& model_;
  Frame frame_a_, frame_b_;
  std::vector<int> chain_a_, chain_b_;  // joint ids below c, top-down
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

// Manipulability sqrt(det(J_r J_r^T)) of the rows `rows` of J (6 x nv, row-major); 0 when singular.
double manipulability(const double* J, int nv, const std::vector<int>& rows);

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
  CapabilityReduction(const Model& model, int frame_a, int frame_b, const Grid& grid, std::vector<double> directions,
                      int axis, std::vector<int> rows);
  // Add samples Q (n x nq, row-major); sample s has global index first_index + s.
  void add(const double* Q, int64_t n, int64_t first_index);
  const ChunkResult& result() const { return table_.result(); }

 private:
  PairPlan plan_;
  Grid grid_;
  std::vector<double> directions_;
  int axis_;
  std::vector<int> rows_;
  VoxelTable table_;
};

}  // namespace reljac::kin

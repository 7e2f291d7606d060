// The descriptions of the built-in limit kinds (their classes: step_limits.cpp; collision rows:
// collision.hpp; the support region's: balance.hpp), light to include: a task kind that is a limit
// put in a level (task_regions.cpp) holds one of them. Their schemas are in step_limits.cpp.
#pragma once

#include <memory>
#include <vector>

#include "kind.hpp"
#include "schema.hpp"

namespace reljac {

// A constant box lo <= v <= hi (JointVelocityLimit and other VelocityBox limits).
struct VelocityBoxDescription : LimitDescription {
  Vector lo, hi;  // (nv)
  std::unique_ptr<CompiledLimit> make() const override;
};

// JointPositionLimit: velocity bounds that keep q inside [q_min, q_max], and its guard.
struct PositionLimitDescription : LimitDescription {
  Eigen::VectorXi q_index, v_index;
  Vector q_min, q_max, urdf_min, urdf_max;
  double gain = 0.5;
  std::unique_ptr<CompiledLimit> make() const override;
};

// ReversalDamping: Rprop's step-size control on each velocity; a cap grows back only while the
// joint goes somewhere (its running mean velocity at least `progress` times its mean speed).
struct ReversalDampingDescription : LimitDescription {
  Vector velocity_limits, floor;
  double shrink = 0.5, grow = 1.2, window = 10.0, progress = 0.25;
  std::unique_ptr<CompiledLimit> make() const override;
};

// CollisionAvoidance: velocity dampers on the pairs of `geometry` (Python's pin.GeometryModel,
// whose collisionPairs are the pairs kept apart).
struct CollisionAvoidanceDescription : LimitDescription {
  PyRef geometry;
  double min_distance = 0.01, influence_distance = 0.05, gain = 0.3, margin = 0.001;
  std::unique_ptr<CompiledLimit> make() const override;
};

// SupportRegion: the horizontal centre of mass inside the hull of the contact points, shrunk by
// margin, as rows n_i . J_xy v <= d_i in frame `frame`'s x-y plane (d_i: SupportRegion's damper).
struct SupportRegionDescription : LimitDescription {
  int frame = 0;
  Eigen::VectorXi contact_frames;  // (k) frame ids
  std::vector<RowMatrix> points;   // k arrays (p_j x 3), in their frames [m]
  double margin = 0.02, gain = 0.5;
  std::unique_ptr<CompiledLimit> make() const override;
};

// A limit whose box or rows Python computes each step (ExternalRows).
struct ExternalLimitDescription : LimitDescription {
  std::unique_ptr<CompiledLimit> make() const override;
};

}  // namespace reljac

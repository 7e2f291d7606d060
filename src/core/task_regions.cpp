// Two limits put in a level as tasks (reljac/ik/limits/support.py's SupportRegionTask and
// reljac/ik/limits/collision.py's CollisionAvoidanceTask, RegionRowsTask's kinds: their
// specification and oracle; tests/test_compiled_kinds.py): one-sided rows whose number changes
// from step to step, computed by the limits' own row makers (balance.cpp's SupportLimit,
// collision.cpp's CollisionLimit) on the step's kinematics.
//
// Support region: one row per edge i of the region shrunk by its margin, e_i = -s_i <= 0 [m]
// (s_i the centre of mass's distance to the shrunk edge, >= 0 inside), J_i = n_i . J_xy.
// Collision: one row per geometry pair nearer than the influence distance, e_i = d_i - d_s -
// margin >= 0 [m] (the fixed margin, not the limit's learnt ones), J_i the distance Jacobian.
// The task parameters' weight is one number for every row; their bounds are the kind's own.
#include <algorithm>
#include <cmath>

#include "balance.hpp"
#include "collision.hpp"
#include "schema.hpp"
#include "step_impl.hpp"

namespace reljac {

namespace {

struct SupportRegionTaskDescription : TaskDescription {
  std::shared_ptr<const LimitDescription> region;  // a SupportRegionDescription
  TaskParameters parameters;                       // weight (1): every row's
  std::unique_ptr<CompiledTask> make() const override;
};

struct CollisionAvoidanceTaskDescription : TaskDescription {
  std::shared_ptr<const LimitDescription> limit;  // a CollisionAvoidanceDescription
  TaskParameters parameters;                      // weight (1): every row's
  std::unique_ptr<CompiledTask> make() const override;
};

const KindSchema support_task_schema =
    task_kind<SupportRegionTaskDescription>("SupportRegionTaskDescription",
                                            "A support region as a level's rows (SupportRegionTask).")
        .field("region", &SupportRegionTaskDescription::region, "the region's SupportRegionDescription")
        .parameters(&SupportRegionTaskDescription::parameters);
const KindSchema collision_task_schema =
    task_kind<CollisionAvoidanceTaskDescription>("CollisionAvoidanceTaskDescription",
                                                 "Collision avoidance as a level's rows (CollisionAvoidanceTask).")
        .field("limit", &CollisionAvoidanceTaskDescription::limit, "the limit's CollisionAvoidanceDescription")
        .parameters(&CollisionAvoidanceTaskDescription::parameters);

// What both kinds share: one weight for every row, checked once.
double row_weight(const TaskParameters& p) {
  if (p.weight.size() != 1 || !(p.weight(0) >= 0)) throw std::invalid_argument("a region task has one weight >= 0");
  if (p.bounded()) throw std::invalid_argument("a region task keeps its own bounds");
  return p.weight(0);
}

// RegionRowsTask.error_norms at the last rows, e their violation (0 inside): the largest distance of
// a row past its bound, not the rows' norm (rows of weight 0 decide nothing).
void largest_outside(const TaskParameters& p, const Vector& e, double& first, double& second) {
  first = second = 0.0;
  for (long i = 0; i < e.size(); ++i)
    if (p.weight(i) > 0) first = std::max(first, std::abs(e(i)));
}

class SupportRegionTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {
    const auto& d = described_as<SupportRegionTaskDescription>(description, "support region task");
    const auto* region = d.region ? dynamic_cast<const SupportRegionDescription*>(d.region.get()) : nullptr;
    if (region == nullptr) throw std::invalid_argument("a support region task needs a SupportRegionDescription");
    if (static_cast<size_t>(region->contact_frames.size()) != region->points.size() || region->points.empty())
      throw std::invalid_argument("one points array per contact frame");
    for (long j = 0; j < region->contact_frames.size(); ++j) {
      if (region->points[j].cols() != 3 || region->points[j].rows() < 1)
        throw std::invalid_argument("contact points must be (k x 3)");
      s.use_placement(region->contact_frames(j));
    }
    s.use_frame(region->frame);
    s.use_center_of_mass();
    weight_ = row_weight(d.parameters);
    parameters.gain = d.parameters.gain;
    parameters.has_max_speed = d.parameters.has_max_speed;
    parameters.max_speed[0] = d.parameters.max_speed[0];
    parameters.max_speed[1] = d.parameters.max_speed[1];
    if (limit_)
      limit_->set(*region);
    else
      limit_ = std::make_unique<SupportLimit>(*region);
    resize_rows(0, weight_, -std::numeric_limits<double>::infinity(), 0.0);
  }

  bool compute(StepContext& s, const Vector&, Rows& out) override {  // SupportRegionTask.measure
    s.center_of_mass(limit_->description().frame, p_, J_);
    limit_->compute(static_cast<Step::Impl&>(s).data, p_, J_, s.period());
    const int m = limit_->count();
    resize_rows(m, weight_, -std::numeric_limits<double>::infinity(), 0.0);
    out.e = -limit_->to_shrunk();
    out.J = limit_->C();
    out.ff.setZero(m);
    sources_.resize(m);
    for (int i = 0; i < m; ++i) sources_[i] = i;
    return true;
  }

  const std::vector<int>* row_sources() const override { return &sources_; }

  void error_norms(const StepContext&, const Vector& e, double& first, double& second) const override {
    largest_outside(parameters, e, first, second);
  }

 private:
  std::unique_ptr<SupportLimit> limit_;
  double weight_ = 1.0;
  Vector3 p_;
  Matrix J_;
  std::vector<int> sources_;  // edge i of the hull, for row i
};

class CollisionAvoidanceTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {
    const auto& d = described_as<CollisionAvoidanceTaskDescription>(description, "collision avoidance task");
    const auto* limit = d.limit ? dynamic_cast<const CollisionAvoidanceDescription*>(d.limit.get()) : nullptr;
    if (limit == nullptr) throw std::invalid_argument("a collision avoidance task needs a CollisionAvoidanceDescription");
    weight_ = row_weight(d.parameters);
    parameters.gain = d.parameters.gain;
    parameters.has_max_speed = d.parameters.has_max_speed;
    parameters.max_speed[0] = d.parameters.max_speed[0];
    parameters.max_speed[1] = d.parameters.max_speed[1];
    Step::Impl& impl = static_cast<Step::Impl&>(s);
    auto* geometry = static_cast<PyObject*>(limit->geometry.get());
    if (limit_)
      limit_->set(geometry, *limit);
    else
      limit_ = std::make_unique<CollisionLimit>(impl.model, geometry, *limit);
    resize_rows(0, weight_, 0.0, std::numeric_limits<double>::infinity());
  }

  bool compute(StepContext& s, const Vector&, Rows& out) override {  // CollisionAvoidanceTask.measure
    limit_->compute(static_cast<Step::Impl&>(s).data, s.period());
    const CollisionAvoidanceDescription& d = limit_->description();
    const int m = limit_->count();
    resize_rows(m, weight_, 0.0, std::numeric_limits<double>::infinity());
    out.e = limit_->distances().array() - (d.min_distance + d.margin);
    out.J = limit_->jacobians();
    out.ff.setZero(m);
    return true;
  }

  const std::vector<int>* row_sources() const override { return &limit_->pairs(); }

  void error_norms(const StepContext&, const Vector& e, double& first, double& second) const override {
    largest_outside(parameters, e, first, second);
  }
  bool collision_rows(CollisionRows& out) const override {
    out = limit_->rows();
    return true;
  }

 private:
  std::unique_ptr<CollisionLimit> limit_;
  double weight_ = 1.0;
};

std::unique_ptr<CompiledTask> SupportRegionTaskDescription::make() const {
  return std::make_unique<SupportRegionTask>();
}
std::unique_ptr<CompiledTask> CollisionAvoidanceTaskDescription::make() const {
  return std::make_unique<CollisionAvoidanceTask>();
}

}  // namespace

}  // namespace reljac

// The limit kinds of the compiled step (one CompiledLimit class each), their intersection and
// the state they keep between steps; see step_impl.hpp. Each class names the Python limit it
// mirrors, its specification and oracle.
#include "step_limits.hpp"

#include "balance.hpp"
#include "step_impl.hpp"

namespace reljac {

namespace {

// The limit kinds' descriptions, field by field (schema.hpp; limit_descriptions.hpp holds the structs).
const KindSchema box_schema =
    limit_kind<VelocityBoxDescription>("VelocityBoxDescription", "A constant box lo <= v <= hi (VelocityBox limits).")
        .field("lo", &VelocityBoxDescription::lo, "(nv,) [rad/s, m/s]")
        .field("hi", &VelocityBoxDescription::hi, "(nv,) [rad/s, m/s]");
const KindSchema position_schema =
    limit_kind<PositionLimitDescription>("PositionLimitDescription", "Position limits as velocity bounds (JointPositionLimit).")
        .field("q_index", &PositionLimitDescription::q_index, "(k,) q indices of the limited joints")
        .field("v_index", &PositionLimitDescription::v_index, "(k,) their v indices")
        .field("q_min", &PositionLimitDescription::q_min, "(k,) limits kept")
        .field("q_max", &PositionLimitDescription::q_max, "(k,) limits kept")
        .field("urdf_min", &PositionLimitDescription::urdf_min, "(k,) the URDF's limits")
        .field("urdf_max", &PositionLimitDescription::urdf_max, "(k,) the URDF's limits")
        .field("limit_gain", &PositionLimitDescription::gain, "gamma in (0, 1]");
const KindSchema reversal_schema =
    limit_kind<ReversalDampingDescription>("ReversalDampingDescription", "Rprop's step-size control (ReversalDamping).")
        .field("velocity_limits", &ReversalDampingDescription::velocity_limits, "(nv,) [rad/s, m/s]")
        .field("floor", &ReversalDampingDescription::floor, "(nv,) speeds below which a reversal does not count")
        .field("shrink", &ReversalDampingDescription::shrink, "factor on the last speed after a reversal")
        .field("grow", &ReversalDampingDescription::grow, "factor by which a cap grows back per step")
        .field("window", &ReversalDampingDescription::window, "the running means' horizon [steps]")
        .field("progress", &ReversalDampingDescription::progress,
               "fraction of its mean speed a joint's mean velocity must reach for its cap to grow");
const KindSchema collision_schema =
    limit_kind<CollisionAvoidanceDescription>("CollisionAvoidanceDescription",
                                              "Velocity dampers on a geometry model's pairs (CollisionAvoidance).")
        .field("geometry", &CollisionAvoidanceDescription::geometry,
               "the pin.GeometryModel whose collisionPairs are kept apart")
        .field("min_distance", &CollisionAvoidanceDescription::min_distance, "[m]")
        .field("influence_distance", &CollisionAvoidanceDescription::influence_distance, "[m]")
        .field("gain", &CollisionAvoidanceDescription::gain, "the dampers' gain")
        .field("margin", &CollisionAvoidanceDescription::margin, "[m]");
const KindSchema support_schema =
    limit_kind<SupportRegionDescription>("SupportRegionDescription",
                                         "The horizontal centre of mass inside the contacts' hull (SupportRegion).")
        .field("frame", &SupportRegionDescription::frame, "Pinocchio frame id of the region's plane")
        .field("contact_frames", &SupportRegionDescription::contact_frames, "(k,) frame ids")
        .field("contact_points", &SupportRegionDescription::points, "k arrays (p_j, 3) in their frames [m]")
        .field("margin", &SupportRegionDescription::margin, "[m]")
        .field("gain", &SupportRegionDescription::gain, "the dampers' gain");
const KindSchema external_limit_schema = limit_kind<ExternalLimitDescription>(
    "ExternalLimitDescription", "A limit whose box or rows Python computes each step (passed to Step.velocity).");

// A constant box (JointVelocityLimit and the other VelocityBox limits).
class VelocityBox : public CompiledLimit {
 public:
  void update(StepContext& s, const LimitDescription& description) override {
    const auto& d = described_as<VelocityBoxDescription>(description, "velocity box");
    check_size(d.lo, s.nv(), "lo");
    check_size(d.hi, s.nv(), "hi");
    lo_ = d.lo;
    hi_ = d.hi;
  }
  bool constrain(StepContext&, const Vector&, Vector& lo, Vector& hi) override {
    lo = lo_;
    hi = hi_;
    return true;
  }

 private:
  Vector lo_, hi_;
};

// JointPositionLimit: joint_bounds as a box, and the guard after the integration.
class PositionLimit : public CompiledLimit {
 public:
  void update(StepContext& s, const LimitDescription& description) override {
    const auto& d = described_as<PositionLimitDescription>(description, "position limit");
    const long n = d.q_index.size();
    if (d.v_index.size() != n || d.q_min.size() != n || d.q_max.size() != n || d.urdf_min.size() != n ||
        d.urdf_max.size() != n)
      throw std::invalid_argument("position limit arrays must have the same size");
    for (long k = 0; k < n; ++k)
      if (d.q_index(k) < 0 || d.q_index(k) >= s.nq() || d.v_index(k) < 0 || d.v_index(k) >= s.nv())
        throw std::invalid_argument("position limit index out of range");
    p_ = d;
  }

  bool constrain(StepContext& s, const Vector& q, Vector& l, Vector& h) override {  // JointPositionLimit.joint_bounds
    l.setConstant(-kInf);
    h.setConstant(kInf);
    const double g = p_.gain, dt = s.period();
    for (int k = 0; k < p_.q_index.size(); ++k) {
      const double qj = q(p_.q_index(k));
      const double to_min = (p_.q_min(k) - qj) / dt, to_max = (p_.q_max(k) - qj) / dt;
      const bool below = to_min > 0, above = to_max < 0;
      const int j = p_.v_index(k);
      l(j) = below ? to_min : (above ? std::min(g * to_min, to_max) : g * to_min);
      h(j) = above ? to_max : (below ? std::max(g * to_max, to_min) : g * to_max);
    }
    return true;
  }

  void guard(const Vector& q, Vector& out) const override {  // JointPositionLimit.guard
    for (int pass = 0; pass < 2; ++pass) {
      const Vector& low = pass == 0 ? p_.q_min : p_.urdf_min;
      const Vector& high = pass == 0 ? p_.q_max : p_.urdf_max;
      for (int k = 0; k < p_.q_index.size(); ++k) {
        const int i = p_.q_index(k);
        if (q(i) >= low(k) && q(i) <= high(k)) out(i) = std::min(std::max(out(i), low(k)), high(k));
      }
    }
  }

 private:
  PositionLimitDescription p_;
};

// SupportRegion: the centre of mass inside the contacts' hull (balance.hpp's SupportLimit).
class SupportPart : public CompiledLimit {
 public:
  void update(StepContext& s, const LimitDescription& description) override {
    const auto& d = described_as<SupportRegionDescription>(description, "support region");
    if (static_cast<size_t>(d.contact_frames.size()) != d.points.size() || d.points.empty())
      throw std::invalid_argument("one points array per contact frame");
    for (long j = 0; j < d.contact_frames.size(); ++j) {
      if (d.points[j].cols() != 3 || d.points[j].rows() < 1) throw std::invalid_argument("contact points must be (k x 3)");
      s.use_placement(d.contact_frames(j));
    }
    s.use_frame(d.frame);
    s.use_center_of_mass();
    if (limit_)
      limit_->set(d);
    else
      limit_ = std::make_unique<SupportLimit>(d);
  }
  bool constrain(StepContext& s, const Vector&, Vector&, Vector&) override {
    s.center_of_mass(limit_->description().frame, p_, J_);
    limit_->compute(static_cast<Step::Impl&>(s).data, p_, J_, s.period());
    return false;
  }
  int count() const override { return limit_->count(); }
  int room() const override { return limit_->room(); }
  void copy_rows(Matrix& C, Vector& d, int at) const override {
    C.middleRows(at, count()) = limit_->C();
    d.segment(at, count()) = limit_->d();
  }

 private:
  std::unique_ptr<SupportLimit> limit_;
  Vector3 p_;  // the centre of mass in the region's frame, and its Jacobian (3 x nv)
  Matrix J_;
};

// A Python limit: its box and rows, computed in Python this step (ExternalRows).
class ExternalLimit : public CompiledLimit {
 public:
  void update(StepContext& s, const LimitDescription& description) override {
    described_as<ExternalLimitDescription>(description, "Python limit");
    if (index_ < 0) index_ = s.add_external_limit();
  }
  bool constrain(StepContext& s, const Vector&, Vector& lo, Vector& hi) override {
    x_ = &s.external_limit(index_);
    if (x_->lo == nullptr) return false;
    lo = Eigen::Map<const Vector>(x_->lo, s.nv());
    hi = Eigen::Map<const Vector>(x_->hi, s.nv());
    return true;
  }
  int count() const override { return x_ == nullptr ? 0 : x_->rows; }
  void copy_rows(Matrix& C, Vector& d, int at) const override {
    const int m = count();
    if (m == 0) return;
    C.middleRows(at, m) = Eigen::Map<const RowMatrix>(x_->A, m, C.cols());
    d.segment(at, m) = Eigen::Map<const Vector>(x_->b, m);
  }
  bool external() const override { return true; }

 private:
  int index_ = -1;                   // among the external limits
  const ExternalRows* x_ = nullptr;  // this step's
};

}  // namespace

std::unique_ptr<CompiledLimit> VelocityBoxDescription::make() const { return std::make_unique<VelocityBox>(); }
std::unique_ptr<CompiledLimit> PositionLimitDescription::make() const { return std::make_unique<PositionLimit>(); }
std::unique_ptr<CompiledLimit> ReversalDampingDescription::make() const { return std::make_unique<ReversalLimit>(); }
std::unique_ptr<CompiledLimit> CollisionAvoidanceDescription::make() const { return std::make_unique<CollisionPart>(); }
std::unique_ptr<CompiledLimit> SupportRegionDescription::make() const { return std::make_unique<SupportPart>(); }
std::unique_ptr<CompiledLimit> ExternalLimitDescription::make() const { return std::make_unique<ExternalLimit>(); }

// ReversalDamping: its caps as a box, updated by each velocity commanded.
void ReversalLimit::update(StepContext& s, const LimitDescription& description) {
  const auto& d = described_as<ReversalDampingDescription>(description, "reversal damping");
  check_size(d.velocity_limits, s.nv(), "velocity limits");
  check_size(d.floor, s.nv(), "floor");
  if (cap_.size() != s.nv()) {
    cap_ = Vector::Constant(s.nv(), kInf);
    mean_ = Vector::Zero(s.nv());
    speed_ = Vector::Zero(s.nv());
  }
  desc_ = d;
}

bool ReversalLimit::constrain(StepContext&, const Vector&, Vector& lo, Vector& hi) {
  lo = -cap_;
  hi = cap_;
  return true;
}

void ReversalLimit::observe(const Vector& velocity) {  // ReversalDamping.observe
  const ReversalDampingDescription& r = desc_;
  const double rate = 1.0 / r.window;
  for (int j = 0; j < velocity.size(); ++j) {  // the running means of v and |v|
    mean_(j) += rate * (velocity(j) - mean_(j));
    speed_(j) += rate * (std::abs(velocity(j)) - speed_(j));
  }
  if (has_last_) {
    for (int j = 0; j < velocity.size(); ++j) {
      const bool reversed = std::abs(velocity(j)) > r.floor(j) && std::abs(last_(j)) > r.floor(j) &&
                            velocity(j) * last_(j) < 0;
      const bool going = std::abs(mean_(j)) >= r.progress * speed_(j);  // (at rest: 0 >= 0, it grows)
      cap_(j) = reversed ? r.shrink * std::abs(velocity(j)) : going ? cap_(j) * r.grow : cap_(j);
      if (cap_(j) > r.velocity_limits(j)) cap_(j) = kInf;
    }
  }
  last_ = velocity;
  has_last_ = true;
}

void ReversalLimit::reset() {
  cap_.setConstant(kInf);
  mean_.setZero();
  speed_.setZero();
  has_last_ = false;
}

// CollisionAvoidance: its rows (collision.hpp's CollisionLimit).
void CollisionPart::update(StepContext& s, const LimitDescription& description) {
  const auto& d = described_as<CollisionAvoidanceDescription>(description, "collision limit");
  if (limit_)
    limit_->set(static_cast<PyObject*>(d.geometry.get()), d);
  else
    limit_ = std::make_unique<CollisionLimit>(static_cast<Step::Impl&>(s).model, static_cast<PyObject*>(d.geometry.get()), d);
}

bool CollisionPart::constrain(StepContext& s, const Vector&, Vector&, Vector&) {
  limit_->compute(static_cast<Step::Impl&>(s).data, s.period());
  return false;
}

void CollisionPart::copy_rows(Matrix& C, Vector& d, int at) const {
  C.middleRows(at, count()) = limit_->C();
  d.segment(at, count()) = limit_->d();
}

// intersect() over the limits' constraints, in order (earlier limits win), and their rows.
void Step::Impl::constraints(const Vector& q, const std::vector<ExternalRows>& external) {
  const int nv = model.nv;
  external_limit_rows = &external;
  cons.lo.setConstant(nv, -kInf);
  cons.hi.setConstant(nv, kInf);
  Vector& l = box_lo;
  Vector& h = box_hi;
  l.resize(nv);
  h.resize(nv);
  int total = 0;
  for (const auto& limit : limits) {
    const bool has_box = limit->constrain(*this, q, l, h);
    total += limit->count();
    if (has_box) {
      clipped_lo = l.cwiseMax(cons.lo).cwiseMin(cons.hi);  // np.clip(c.lo, lo, hi)
      cons.hi = h.cwiseMax(cons.lo).cwiseMin(cons.hi);
      cons.lo = clipped_lo;
    }
  }
  if (cons.C.rows() < total || cons.C.cols() != nv) {  // room for every row the limits can give
    int room = 0;
    for (const auto& limit : limits) room += limit->room();
    cons.C.resize(room, nv);
    cons.d.resize(room);
    sources.reserve(room);
  }
  cons.count = total;
  sources.clear();
  int at = 0;
  for (size_t i = 0; i < limits.size(); ++i) {
    const int m = limits[i]->count();
    if (m) limits[i]->copy_rows(cons.C, cons.d, at);
    for (int r = 0; r < m; ++r) sources.push_back({static_cast<int>(i), r});
    at += m;
  }
}

void Step::Impl::observe(const Vector& velocity) {  // Limit.observe of the limits that keep state
  for (const auto& limit : limits) limit->observe(velocity);
}

void Step::Impl::guard(const Vector& q, Vector& out) const {
  for (const auto& limit : limits) limit->guard(q, out);
}

}  // namespace reljac

// The compiled controller step: the Step object, the kinematics pass, the solve and the
// integration; see step.hpp and step_impl.hpp. Each function names the Python code it mirrors.
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "step_impl.hpp"

namespace reljac {

Step::Impl::Impl(PinModel& m, PinData& d) : model(m), data(d) {
  curved.assign(model.nv, 0);
  for (int j = 1; j < model.njoints; ++j) {
    const int nvj = model.joints[j].nv();
    if (nvj > 1) {
      euclidean = false;
      for (int i = 0; i < nvj; ++i) curved[model.joints[j].idx_v() + i] = 1;
    }
  }
  frame_jacobians.resize(model.nframes);
  v = Vector::Zero(model.nv);
}

void Step::Impl::use_frame(int frame) {
  if (frame < 0 || frame >= model.nframes) throw std::invalid_argument("frame id out of range");
  if (frame != 0 && std::find(frames.begin(), frames.end(), frame) == frames.end()) frames.push_back(frame);
}

void Step::Impl::kinematics(const Vector& q, bool all_frames) {
  pinocchio::computeJointJacobians(model, data, q);
  if (all_frames) pinocchio::updateFramePlacements(model, data);
  for (int f : frames) {
    if (!all_frames) pinocchio::updateFramePlacement(model, data, f);
    Matrix& J = frame_jacobians[f];
    J.setZero(6, model.nv);
    pinocchio::getFrameJacobian(model, data, f, pinocchio::WORLD, J);
  }
  frame_jacobians[0].setZero(6, model.nv);
  if (!all_frames)
    for (int f : placed) pinocchio::updateFramePlacement(model, data, f);
  if (needs_com) compute_center_of_mass(model, data, com_world, com_J_world);
}

Step::Step(PyObject* model, PyObject* data)
    : impl_(std::make_unique<Impl>(pinocchio_object<PinModel>(model, "pin.Model"),
                                   pinocchio_object<PinData>(data, "pin.Data"))) {
  if (impl_->data.oMi.size() != static_cast<size_t>(impl_->model.njoints))
    throw std::invalid_argument("data is not a pin.Data of this model");
}

Step::~Step() = default;

int Step::nq() const { return impl_->model.nq; }
int Step::nv() const { return impl_->model.nv; }

int Step::add_frame_task(const FrameTaskDescription& d) {
  Task t;
  impl_->set_frame(t, d);
  impl_->tasks.push_back(t);
  return static_cast<int>(impl_->tasks.size()) - 1;
}

int Step::add_posture(const PostureDescription& d) {
  Task t;
  impl_->set_posture(t, d);
  impl_->tasks.push_back(t);
  return static_cast<int>(impl_->tasks.size()) - 1;
}

int Step::add_com_task(const CoMTaskDescription& d) {
  Task t;
  impl_->set_com(t, d);
  impl_->tasks.push_back(t);
  return static_cast<int>(impl_->tasks.size()) - 1;
}

void Step::set_com_task(int index, const CoMTaskDescription& d) {
  Task& t = impl_->tasks.at(index);
  if (t.kind != TaskKind::kCoM) throw std::invalid_argument("not a CoM task");
  impl_->set_com(t, d);
}

int Step::add_external_task(int size) {
  Task t;
  t.kind = TaskKind::kExternal;
  t.size = size;
  t.external = impl_->external_tasks++;
  impl_->tasks.push_back(t);
  return static_cast<int>(impl_->tasks.size()) - 1;
}

void Step::set_frame_task(int index, const FrameTaskDescription& d) {
  Task& t = impl_->tasks.at(index);
  if (t.kind == TaskKind::kPosture || t.kind == TaskKind::kExternal || t.kind == TaskKind::kCoM)
    throw std::invalid_argument("not a frame task");
  impl_->set_frame(t, d);
}

void Step::set_posture(int index, const PostureDescription& d) {
  Task& t = impl_->tasks.at(index);
  if (t.kind != TaskKind::kPosture) throw std::invalid_argument("not a posture task");
  impl_->set_posture(t, d);
}

void Step::set_levels(const std::vector<std::vector<int>>& levels) {
  for (const auto& level : levels)
    for (int index : level)
      if (index < 0 || index >= static_cast<int>(impl_->tasks.size())) throw std::invalid_argument("no such task");
  impl_->levels = levels;
}

int Step::add_velocity_box(const Vector& lo, const Vector& hi) {
  impl_->limits.emplace_back();
  set_velocity_box(static_cast<int>(impl_->limits.size()) - 1, lo, hi);
  return static_cast<int>(impl_->limits.size()) - 1;
}

void Step::set_velocity_box(int index, const Vector& lo, const Vector& hi) {
  check_size(lo, nv(), "lo");
  check_size(hi, nv(), "hi");
  Limit& limit = impl_->limits.at(index);
  limit.type = LimitType::kBox;
  limit.lo = lo;
  limit.hi = hi;
}

int Step::add_position_limit(const PositionLimitDescription& d) {
  impl_->limits.emplace_back();
  set_position_limit(static_cast<int>(impl_->limits.size()) - 1, d);
  return static_cast<int>(impl_->limits.size()) - 1;
}

void Step::set_position_limit(int index, const PositionLimitDescription& d) {
  const long n = d.q_index.size();
  if (d.v_index.size() != n || d.q_min.size() != n || d.q_max.size() != n || d.urdf_min.size() != n ||
      d.urdf_max.size() != n)
    throw std::invalid_argument("position limit arrays must have the same size");
  for (long k = 0; k < n; ++k)
    if (d.q_index(k) < 0 || d.q_index(k) >= nq() || d.v_index(k) < 0 || d.v_index(k) >= nv())
      throw std::invalid_argument("position limit index out of range");
  Limit& limit = impl_->limits.at(index);
  limit.type = LimitType::kPosition;
  limit.position = d;
}

int Step::add_reversal(const ReversalDescription& d) {
  impl_->limits.emplace_back();
  const int index = static_cast<int>(impl_->limits.size()) - 1;
  Limit& limit = impl_->limits.back();
  limit.type = LimitType::kReversal;
  limit.cap = Vector::Constant(nv(), kInf);
  set_reversal(index, d);
  return index;
}

void Step::set_reversal(int index, const ReversalDescription& d) {
  check_size(d.velocity_limits, nv(), "velocity limits");
  check_size(d.floor, nv(), "floor");
  Limit& limit = impl_->limits.at(index);
  if (limit.type != LimitType::kReversal) throw std::invalid_argument("not a reversal damping");
  limit.reversal = d;
}

int Step::add_collision(PyObject* geometry, const CollisionDescription& d) {
  impl_->limits.emplace_back();
  Limit& limit = impl_->limits.back();
  limit.type = LimitType::kCollision;
  limit.collision = std::make_unique<CollisionLimit>(impl_->model, geometry, d);
  return static_cast<int>(impl_->limits.size()) - 1;
}

void Step::set_collision(int index, PyObject* geometry, const CollisionDescription& d) {
  Limit& limit = impl_->limits.at(index);
  if (limit.type != LimitType::kCollision) throw std::invalid_argument("not a collision limit");
  limit.collision->set(geometry, d);
}

int Step::add_support_region(const SupportRegionDescription& d) {
  Limit limit;
  limit.type = LimitType::kSupport;
  impl_->set_support(limit, d);
  impl_->limits.push_back(std::move(limit));
  return static_cast<int>(impl_->limits.size()) - 1;
}

void Step::set_support_region(int index, const SupportRegionDescription& d) {
  Limit& limit = impl_->limits.at(index);
  if (limit.type != LimitType::kSupport) throw std::invalid_argument("not a support region");
  impl_->set_support(limit, d);
}

int Step::add_external_limit() {
  impl_->limits.emplace_back();
  Limit& limit = impl_->limits.back();
  limit.type = LimitType::kExternal;
  limit.external = impl_->external_limits++;
  return static_cast<int>(impl_->limits.size()) - 1;
}

void Step::set_dt(double dt) { impl_->dt = dt; }

void Step::set_policy(double threshold, double max_damping, double error_damping, double step_threshold) {
  impl_->policy = Policy{threshold, max_damping};
  impl_->error_damping = error_damping;
  impl_->step_threshold = step_threshold;
}

void Step::kinematics(const Vector& q) {
  check_size(q, nq(), "q");
  impl_->kinematics(q, true);
}

const Vector& Step::velocity(const Vector& q, bool kinematics_done, const std::vector<ExternalRows>& tasks,
                             const std::vector<ExternalRows>& limits, int& failing) {
  Impl& s = *impl_;
  check_size(q, nq(), "q");
  if (static_cast<int>(tasks.size()) != s.external_tasks || static_cast<int>(limits.size()) != s.external_limits)
    throw std::invalid_argument("one set of rows per external task and limit");
  failing = -1;
  if (!kinematics_done) s.kinematics(q, false);
  s.assemble(q, tasks, failing);
  if (failing >= 0) return s.v;
  s.constraints(q, limits);
  s.v = solve_hierarchy(s.level_systems, s.cons, s.policy, s.reports, s.workspace);
  if (!s.v.allFinite()) {
    failing = -2;
    return s.v;
  }
  s.observe(s.v);
  return s.v;
}

// Controller.step after the velocity: integrate on the configuration manifold, then the guard.
void Step::Impl::advance(const Vector& q, Vector& out) {
  v_dt.noalias() = v * dt;
  out.resize(model.nq);
  pinocchio::integrate(model, q, v_dt, out);
  guard(q, out);
}

void Step::Impl::guard(const Vector& q, Vector& out) const {
  for (const Limit& limit : limits) {  // JointPositionLimit.guard
    if (limit.type != LimitType::kPosition) continue;
    const PositionLimitDescription& p = limit.position;
    for (int pass = 0; pass < 2; ++pass) {
      const Vector& low = pass == 0 ? p.q_min : p.urdf_min;
      const Vector& high = pass == 0 ? p.q_max : p.urdf_max;
      for (int k = 0; k < p.q_index.size(); ++k) {
        const int i = p.q_index(k);
        if (q(i) >= low(k) && q(i) <= high(k)) out(i) = std::min(std::max(out(i), low(k)), high(k));
      }
    }
  }
}

Vector Step::integrate(const Vector& q) const {
  check_size(q, nq(), "q");
  Vector out(nq());
  impl_->advance(q, out);
  return out;
}

Vector Step::guard(const Vector& q_next, const Vector& q) const {
  check_size(q_next, nq(), "q_next");
  check_size(q, nq(), "q");
  Vector out = q_next;
  impl_->guard(q, out);
  return out;
}

const Vector& Step::run(const Vector& q, int n, const std::vector<ExternalRows>& tasks,
                        const std::vector<ExternalRows>& limits, int& failing) {
  Impl& s = *impl_;
  s.q_run = q;
  failing = -1;
  for (int i = 0; i < n; ++i) {
    velocity(s.q_run, false, tasks, limits, failing);
    if (failing != -1) break;
    s.advance(s.q_run, s.q_next);
    s.q_run.swap(s.q_next);
  }
  return s.q_run;
}

const std::vector<Level>& Step::system(const Vector& q, const std::vector<RowMatrix>*& storage, Vector& lo,
                                       Vector& hi, int& failing) {
  Impl& s = *impl_;
  check_size(q, nq(), "q");
  if (s.external_tasks || s.external_limits) throw std::invalid_argument("system() needs built-in parts only");
  static const std::vector<ExternalRows> none;
  failing = -1;
  s.kinematics(q, false);
  s.assemble(q, none, failing);
  if (failing < 0) s.constraints(q, none);
  storage = &s.level_storage;
  lo = s.cons.lo;
  hi = s.cons.hi;
  return s.level_systems;
}

void Step::reset() {
  for (Limit& limit : impl_->limits) {
    if (limit.type == LimitType::kReversal) {
      limit.cap.setConstant(kInf);
      limit.has_last = false;
    } else if (limit.type == LimitType::kCollision) {
      limit.collision->reset();
    }
  }
  impl_->reports.clear();
}

const std::vector<LevelReport>& Step::reports() const {
  finish_reports(impl_->reports, impl_->workspace);
  return impl_->reports;
}
const std::vector<RowSource>& Step::row_sources() const { return impl_->sources; }
const Vector& Step::last_velocity() const { return impl_->v; }

CollisionRows Step::collision_rows(int limit) const {
  const Limit& l = impl_->limits.at(limit);
  if (l.type != LimitType::kCollision) throw std::invalid_argument("not a collision limit");
  return l.collision->rows();
}

const Vector& Step::reversal_cap(int limit) const {
  const Limit& l = impl_->limits.at(limit);
  if (l.type != LimitType::kReversal) throw std::invalid_argument("not a reversal damping");
  return l.cap;
}

}  // namespace reljac

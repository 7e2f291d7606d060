// The compiled controller step: the Step object, the kinematics pass, the solve and the
// integration; see step.hpp and step_impl.hpp. Each function names the Python code it mirrors.
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "active_set.hpp"
#include "balance.hpp"
#include "pinocchio_objects.hpp"
#include "step_impl.hpp"
#include "step_limits.hpp"

namespace reljac {

Step::Impl::Impl(PinModel& m, PinData& d) : model(m), data(d) {
  curved_rows.assign(model.nv, 0);
  for (int j = 1; j < model.njoints; ++j) {
    const int nvj = model.joints[j].nv();
    if (nvj > 1) {
      all_euclidean = false;
      for (int i = 0; i < nvj; ++i) curved_rows[model.joints[j].idx_v() + i] = 1;
    }
  }
  frame_jacobians.resize(model.nframes);
  v = Vector::Zero(model.nv);
}

void Step::Impl::use_frame(int frame) {
  if (frame < 0 || frame >= model.nframes) throw std::invalid_argument("frame id out of range");
  if (frame != 0 && std::find(frames.begin(), frames.end(), frame) == frames.end()) frames.push_back(frame);
}

void Step::Impl::use_placement(int frame) {
  if (frame < 0 || frame >= model.nframes) throw std::invalid_argument("frame id out of range");
  if (std::find(placed.begin(), placed.end(), frame) == placed.end()) placed.push_back(frame);
}

void Step::Impl::center_of_mass(int frame, Vector3& p, Matrix& J) {
  center_of_mass_in(data, com_world, com_J_world, frame, jacobian(frame), p, J);
}

// The velocity columns where the WORLD Jacobian of frame a or b can be non-zero, ascending: those
// of the joints supporting either frame (every column in a model with mimic joints, whose
// Jacobians also fill a leader's column).
void Step::Impl::support_columns(int frame_a, int frame_b, std::vector<int>& out) const {
  std::vector<char> used(model.nv, model.mimicking_joints.empty() ? 0 : 1);
  for (int frame : {frame_a, frame_b})
    for (const auto joint : model.supports[model.frames[frame].parentJoint]) {
      if (joint == 0) continue;  // the universe: no column
      for (int c = model.joints[joint].idx_v(); c < model.joints[joint].idx_v() + model.joints[joint].nv(); ++c)
        used[c] = 1;
    }
  out.clear();
  for (int c = 0; c < model.nv; ++c)
    if (used[c]) out.push_back(c);
}

void Step::Impl::difference(const Vector& q0, const Vector& q1, Vector& out) const {
  pinocchio::difference(model, q0, q1, out);
}

void Step::Impl::difference_jacobian(const Vector& q0, const Vector& q1, Matrix& out) const {
  pinocchio::dDifference(model, q0, q1, out, pinocchio::ARG1);
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

namespace {

// The fields the bounded solver fills in, back to a LevelReport's defaults after an equality solve
// (which leaves them as they were: the step's reports are reused from step to step).
void clear_bound_reports(std::vector<LevelReport>& reports) {
  for (LevelReport& r : reports) {
    r.active.clear();
    r.held.clear();
    r.margins.resize(0);
    r.changes = 0;
    r.capped = false;
    r.limit_level = -1;
  }
}

}  // namespace

Step::Step(PyObject* model, PyObject* data)
    : impl_(std::make_unique<Impl>(pinocchio_object<PinModel>(model, "pin.Model"),
                                   pinocchio_object<PinData>(data, "pin.Data"))) {
  if (impl_->data.oMi.size() != static_cast<size_t>(impl_->model.njoints))
    throw std::invalid_argument("data is not a pin.Data of this model");
  lex::lex_space(impl_->workspace).warm_start = true;  // bounded levels: warm-started from step to step
}

Step::~Step() = default;

int Step::nq() const { return impl_->model.nq; }
int Step::nv() const { return impl_->model.nv; }

int Step::add(const TaskDescription& d) {
  std::unique_ptr<CompiledTask> task = d.make();
  task->update(*impl_, d);
  impl_->tasks.push_back(std::move(task));
  return static_cast<int>(impl_->tasks.size()) - 1;
}

int Step::add(const LimitDescription& d) {
  std::unique_ptr<CompiledLimit> limit = d.make();
  limit->update(*impl_, d);
  impl_->limits.push_back(std::move(limit));
  return static_cast<int>(impl_->limits.size()) - 1;
}

void Step::update(int index, const TaskDescription& d) {
  if (index < 0 || index >= static_cast<int>(impl_->tasks.size())) throw std::out_of_range("no such task");
  std::unique_ptr<CompiledTask>& task = impl_->tasks[index];
  if (task->pending()) {  // its first description
    std::unique_ptr<CompiledTask> described = d.make();
    if (described->pending()) throw std::invalid_argument("a task cannot become pending");
    if (described->external()) throw std::invalid_argument("a pending task cannot become a Python task");
    described->update(*impl_, d);
    task = std::move(described);
    return;
  }
  task->update(*impl_, d);
}

void Step::update(int index, const LimitDescription& d) {
  if (index < 0 || index >= static_cast<int>(impl_->limits.size())) throw std::out_of_range("no such limit");
  impl_->limits[index]->update(*impl_, d);
}

void Step::set_levels(const std::vector<std::vector<int>>& levels) {
  for (const auto& level : levels)
    for (int index : level)
      if (index < 0 || index >= static_cast<int>(impl_->tasks.size())) throw std::invalid_argument("no such task");
  impl_->levels = levels;
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
  if (!s.bounded_levels) clear_bound_reports(s.reports);
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
  for (const auto& limit : impl_->limits) limit->reset();
  lex::lex_space(impl_->workspace).forget_warm();
  impl_->reports.clear();
}

const std::vector<LevelReport>& Step::reports() const {
  finish_reports(impl_->reports, impl_->workspace);
  return impl_->reports;
}
const std::vector<RowSource>& Step::row_sources() const { return impl_->sources; }
const Vector& Step::last_velocity() const { return impl_->v; }

CollisionRows Step::collision_rows(int limit) const {
  const auto* part = dynamic_cast<const CollisionPart*>(impl_->limits.at(limit).get());
  if (part == nullptr) throw std::invalid_argument("not a collision limit");
  return part->rows();
}

const std::vector<int>* Step::task_row_sources(int task) const { return impl_->tasks.at(task)->row_sources(); }

CollisionRows Step::task_collision_rows(int task) const {
  CollisionRows out;
  if (!impl_->tasks.at(task)->collision_rows(out)) throw std::invalid_argument("not a collision avoidance task");
  return out;
}

const Vector& Step::reversal_cap(int limit) const {
  const auto* part = dynamic_cast<const ReversalLimit*>(impl_->limits.at(limit).get());
  if (part == nullptr) throw std::invalid_argument("not a reversal damping");
  return part->cap();
}

}  // namespace reljac

// The compiled step's parts (step.cpp: the Step object, the kinematics pass and the solve;
// step_tasks.cpp: the task kinds; step_rows.cpp: their rows and each level's system;
// step_limits.cpp: the limits' box, rows and state between steps). Private; public: step.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "balance.hpp"
#include "collision.hpp"
#include "hierarchy.hpp"
#include "pinocchio_objects.hpp"
#include "step.hpp"

namespace reljac {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Matrix3 = Eigen::Matrix3d;
using Vector3 = Eigen::Vector3d;
using Matrix6 = Eigen::Matrix<double, 6, 6>;
using Vector6 = Eigen::Matrix<double, 6, 1>;

struct Rows {  // TaskRows
  Matrix A;    // (m x nv); empty for the identity form
  Vector b, feedback;
  bool identity = false;
  // a task with bounds (search mode too, at gain 1): lower <= A v <= upper, as b (for the identity form:
  // (nv), +-inf on masked rows, as TaskRows.lower / upper)
  bool bounded = false;
  Vector lower, upper;
  // the task's own buffers (their sizes are the task's: kept from step to step)
  Matrix J;          // (size x nv) unweighted Jacobian
  Vector e, f, ff;   // (size) error, gain e capped, feed-forward
  // a task with bounds: n the nearest point of the bounds to e, e - n, and Task.bound_rates' b,
  // lower and upper (size)
  Vector nearest, gap, rate, rate_lower, rate_upper;
};

// One task kind in the compiled step (PlaCo's Task::update, reljac.ik.Task.compute): built from
// its description (TaskDescription::make), it keeps what it needs between steps and gives its
// rows. A new kind is a description, a class and the description's binding (tests/core_example_task.cpp).
class CompiledTask {
 public:
  virtual ~CompiledTask() = default;
  // A new description of this task (throws std::invalid_argument for another kind's or bad sizes);
  // its frames registered with s.use_frame.
  virtual void update(Step::Impl& s, const TaskDescription& d) = 0;
  // This step's terms at q, after the kinematics pass: the error out.e, the unweighted Jacobian
  // out.J and the feed-forward out.ff, all sized `size` (true: the step then weights them, as
  // Task.rows does), or the whole rows out.A, out.b, out.feedback (false: the identity form of a
  // posture, or rows computed in Python).
  virtual bool compute(Step::Impl& s, const Vector& q, Rows& out) = 0;
  // Task._feedback's cap on gain e (f, in place): by default |f| <= max_speed[0].
  virtual void cap(Vector& f) const;
  // The target from `values` (Step::set_task_target); by default the task has none the core holds.
  virtual void set_target(const Step::Impl& s, const Vector& values);
  // Task.error_norms at the last rows: (first, second) norms of the rows of e kept by the
  // weights, e being out.e, or out.gap (Task.violation) for a task with bounds; by default (|e|, 0).
  virtual void error_norms(const Step::Impl& s, const Vector& e, double& first, double& second) const;
  virtual bool external() const { return false; }  // rows from Python (ExternalRows)
  virtual bool pending() const { return false; }   // not described yet (PendingTaskDescription)

  int size = 0;               // rows of e
  TaskParameters parameters;
  std::vector<int> kept;      // rows with weight > 0
  bool unit_weights = true;   // every weight is 1
  double identity_scale = 0;  // the identity form: A = identity_scale diag(mask) (0: dense rows)
  Vector mask;                // (nv) 1 kept, 0 masked, for the identity form

 protected:
  // Task.set_weight: the parameters of a task of `rows` rows (weight checked).
  void set_parameters(const TaskParameters& p, int rows);
};

// One limit kind in the compiled step (PlaCo's Constraint, reljac.ik.Limit.constraint): a
// velocity box, rows C v <= d, or both, and its state between steps.
class CompiledLimit {
 public:
  virtual ~CompiledLimit() = default;
  virtual void update(Step::Impl& s, const LimitDescription& d) = 0;  // as CompiledTask::update
  // This step's constraint at q after the kinematics pass: true with its box in lo, hi (sized
  // nv), false without one; its rows are computed here (count()).
  virtual bool constrain(Step::Impl& s, const Vector& q, Vector& lo, Vector& hi) = 0;
  virtual int count() const { return 0; }  // rows C v <= d this step
  virtual int room() const { return count(); }  // the most rows a step can give (buffers' size)
  // This step's rows into C's rows [at, at + count()) and d's.
  virtual void copy_rows(Matrix& C, Vector& d, int at) const {
    (void)C, (void)d, (void)at;
  }
  virtual void observe(const Vector& v) { (void)v; }  // Limit.observe: the velocity commanded
  virtual void reset() {}                               // forget the state of earlier steps
  // JointPositionLimit.guard on q_next (in place), from q.
  virtual void guard(const Vector& q, Vector& q_next) const { (void)q, (void)q_next; }
  virtual bool external() const { return false; }  // box and rows from Python (ExternalRows)
};

// The description a part was given, as its kind's (std::invalid_argument naming `kind` else).
template <typename Description, typename Base>
const Description& described_as(const Base& d, const char* kind) {
  const auto* mine = dynamic_cast<const Description*>(&d);
  if (mine == nullptr) throw std::invalid_argument(std::string("not a ") + kind);
  return *mine;
}

// The state-keeping kinds whose state the bindings read (step_limits.cpp).
class ReversalLimit : public CompiledLimit {
 public:
  void update(Step::Impl& s, const LimitDescription& d) override;
  bool constrain(Step::Impl& s, const Vector& q, Vector& lo, Vector& hi) override;
  void observe(const Vector& v) override;
  void reset() override;
  const Vector& cap() const { return cap_; }

 private:
  ReversalDampingDescription desc_;
  Vector cap_, last_;
  bool has_last_ = false;
};

class CollisionPart : public CompiledLimit {
 public:
  void update(Step::Impl& s, const LimitDescription& d) override;
  bool constrain(Step::Impl& s, const Vector& q, Vector& lo, Vector& hi) override;
  int count() const override { return limit_->count(); }
  int room() const override { return limit_->room(); }
  void copy_rows(Matrix& C, Vector& d, int at) const override;
  void observe(const Vector& v) override { limit_->observe(v); }
  void reset() override { limit_->reset(); }
  CollisionRows rows() const { return limit_->rows(); }

 private:
  std::unique_ptr<CollisionLimit> limit_;
};

// The size check of every description's arrays (std::invalid_argument naming `what`).
void check_size(const Vector& x, long size, const char* what);

struct Step::Impl {
  PinModel& model;
  PinData& data;
  double dt = 0.01;
  Policy policy;
  double error_damping = 1.0, step_threshold = 0.01;
  bool newton = false;  // search mode (Step::search)
  std::vector<std::unique_ptr<CompiledTask>> tasks;
  std::vector<std::vector<int>> levels;
  std::vector<std::unique_ptr<CompiledLimit>> limits;
  std::vector<int> frames;                 // frame ids the tasks read (placements and Jacobians)
  std::vector<int> placed;                 // frame ids whose placements only are read (contacts)
  bool needs_com = false;                  // a CoM task or support region: jacobianCenterOfMass per step
  std::vector<char> curved;                // (nv) rows of joints with nv > 1 (posture: not identity)
  bool euclidean = true;
  int external_tasks = 0, external_limits = 0;
  // this step's rows of the Python tasks and limits (set by velocity() and the search)
  const std::vector<ExternalRows>* external_task_rows = nullptr;
  const std::vector<ExternalRows>* external_limit_rows = nullptr;
  // per step
  std::vector<Matrix> frame_jacobians;     // by frame id: WORLD (6 x nv), for frames in `frames`
  std::vector<Rows> rows;                  // per task
  std::vector<Level> level_systems;
  std::vector<RowMatrix> level_storage;
  Constraints cons;
  std::vector<RowSource> sources;
  std::vector<LevelReport> reports;
  bool bounded_levels = false;             // a level has bounds this step (assemble)
  Workspace workspace;                     // the solver's buffers, kept across steps
  Vector v, q_last;
  Vector v_dt, q_run, q_next;              // integrate(): v dt; run(): the configurations
  Matrix com_J, com_J_world;  // com_J: (3 x nv) in a task's or region's frame
  Vector box_lo, box_hi, clipped_lo;      // constraints(): one limit's box, the intersection's new lo
  Eigen::Vector3d com_p, com_world;       // the centre of mass in that frame, and in the world

  Impl(PinModel& m, PinData& d);
  void use_frame(int frame);   // a frame whose placement and WORLD Jacobian the tasks read
  void use_placement(int frame);  // a frame whose placement only they read
  // The WORLD Jacobian of frame f (zero for the universe).
  const Matrix& jacobian(int f) { return frame_jacobians[f]; }
  // The centre of mass in frame `frame` into com_p, com_J (center_of_mass_in, balance.hpp).
  void center_of_mass(int frame);
  // Task._feedback: gain e, capped (CompiledTask::cap), into f; in search mode e itself.
  void feedback(const CompiledTask& t, const Vector& e, Vector& f) const;
  // Task.rows: the task's terms weighted (rows[i] for task i).
  void task_rows(CompiledTask& t, const Vector& q, Rows& out);
  // Task.bound_rates of a task with bounds, from out.e and ff (sized `size`): out.f (the feedback
  // gain (e - n), capped, n the nearest point of the bounds), out.rate (ff - f), out.rate_lower,
  // out.rate_upper (+-inf on open sides).
  void bound_rates(const CompiledTask& t, const Vector& ff, Rows& out) const;
  void kinematics(const Vector& q, bool all_frames);
  // Controller._level for every level; failing: a task whose rows are not finite.
  void assemble(const Vector& q, const std::vector<ExternalRows>& external, int& failing);
  // intersect() over the limits' constraints, in order (earlier limits win), and their rows.
  void constraints(const Vector& q, const std::vector<ExternalRows>& external);
  void observe(const Vector& velocity);  // Limit.observe of ReversalDamping and CollisionAvoidance
  // Controller.step after the velocity: out = integrate(q, v dt), guarded (no allocation once
  // out and v_dt have their sizes).
  void advance(const Vector& q, Vector& out);
  // JointPositionLimit.guard of every position limit on q_next (in place), from q.
  void guard(const Vector& q, Vector& q_next) const;
};

}  // namespace reljac

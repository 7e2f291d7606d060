// What a task or limit kind of the compiled step is written against: its description (the fields
// Python fills in by name: schema.hpp), the rows it gives (Rows), the step as it sees it
// (StepContext: frames' placements and WORLD Jacobians, the centre of mass, configuration-space
// differences) and the two interfaces (CompiledTask, CompiledLimit). A kind's file includes this
// header and schema.hpp only: Eigen and Pinocchio's SE3, not Pinocchio's model, Boost.Python nor
// pybind11 (a kind compiles in seconds). The step that runs the kinds is step_impl.hpp.
//
// A new kind is one file: its description struct, its class and its schema (task_cone.cpp is a
// short example), its Python class beside the other tasks (reljac/ik/tasks/) and its test.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hierarchy.hpp"
#include "pinocchio/spatial/se3.hpp"

namespace reljac {

using Matrix3 = Eigen::Matrix3d;
using Vector3 = Eigen::Vector3d;
using Matrix6 = Eigen::Matrix<double, 6, 6>;
using Vector6 = Eigen::Matrix<double, 6, 1>;
using SE3 = pinocchio::SE3;

class CompiledTask;   // a task kind's rows (below)
class CompiledLimit;  // a limit kind's box and rows (below)

// Every description: the fields of one kind, filled in by name from Python (schema.hpp).
struct Description {
  virtual ~Description() = default;
};

// What a task gives the step; make() builds its kind's CompiledTask, which the step hands every
// new description of the task (CompiledTask::update).
struct TaskDescription : Description {
  virtual std::unique_ptr<CompiledTask> make() const = 0;
};

// What a limit gives the step, the same way (CompiledLimit).
struct LimitDescription : Description {
  virtual std::unique_ptr<CompiledLimit> make() const = 0;
};

// What every task kind shares, one field of its description (schema.hpp: gain, weight, max_speed,
// lower and upper in Python): rows W (-gain e + feed-forward) with W = diag(weight), or, for a
// task with bounds (Task.set_bounds), rows W lower_rate <= W J v <= W upper_rate: the rates that
// keep lower <= e <= upper and come back to them at the gain (Task.bound_rates).
struct TaskParameters {
  double gain = 1.0;  // [1/s]
  Vector weight;      // (size); zeros mask rows out
  bool has_max_speed = false;
  double max_speed[2] = {0, 0};  // (linear, angular) caps on |gain e|
  Vector lower, upper;  // (size) bounds on e (+-inf: an open side), or empty: e driven to 0
  bool with_bounds = false;  // a kind with bounds of its own, even on a step where it has no rows
  bool bounded() const { return with_bounds || lower.size() > 0; }
};

// Rows a Python task or limit computed for this step (row-major arrays owned by the caller).
struct ExternalRows {
  const double* A = nullptr;  // task: (m x nv); limit: C (m x nv)
  const double* b = nullptr;  // task: b (m); limit: d (m)
  const double* feedback = nullptr;  // task: (m), for the error-dependent damping
  const double* lower = nullptr;  // task with bounds: lower <= A v <= upper, (m) each, or null
  const double* upper = nullptr;
  const double* lo = nullptr;  // limit: box (nv) or null
  const double* hi = nullptr;
  int rows = 0;
};

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

// The step as a kind sees it: at each step, after the kinematics pass at q, the placements and
// WORLD Jacobians of the frames the kinds asked for (use_frame), the centre of mass, and the
// configuration space's operations. Implemented by the step (step_impl.hpp).
class StepContext {
 public:
  virtual ~StepContext() = default;
  virtual int nq() const = 0;
  virtual int nv() const = 0;
  // Registration, in update(): a frame whose placement and WORLD Jacobian a kind reads at each
  // step, one whose placement only it reads, the centre of mass (std::invalid_argument: no such frame).
  virtual void use_frame(int frame) = 0;
  virtual void use_placement(int frame) = 0;
  virtual void use_center_of_mass() = 0;
  // At a step: T_wf, and frame f's WORLD Jacobian (6 x nv; zero for the universe, frame 0).
  virtual const SE3& placement(int frame) const = 0;
  virtual const Matrix& jacobian(int frame) const = 0;
  // The centre of mass c measured and expressed in frame a: p_ac (3) [m] and J_ac (3 x nv).
  virtual void center_of_mass(int frame, Vector3& p, Matrix& J) = 0;
  // The velocity columns where the WORLD Jacobian of frame a or b can be non-zero, ascending.
  virtual void support_columns(int frame_a, int frame_b, std::vector<int>& out) const = 0;
  // Pinocchio's difference(q0, q1) (nv) and its Jacobian with respect to q1 (nv x nv).
  virtual void difference(const Vector& q0, const Vector& q1, Vector& out) const = 0;
  virtual void difference_jacobian(const Vector& q0, const Vector& q1, Matrix& out) const = 0;
  // No joint of more than one velocity (difference is q1 - q0), and which velocity rows belong to one.
  virtual bool euclidean() const = 0;
  virtual bool curved(int velocity_index) const = 0;
  // Search mode (Step::search): task rows at gain 1, no cap, no feed-forward.
  virtual bool search_mode() const = 0;
  virtual double period() const = 0;  // dt [s]
  // Task._feedback (gain e capped; search mode: e) and Task.bound_rates from out.e and ff (see step_rows.cpp).
  virtual void feedback(const CompiledTask& t, const Vector& e, Vector& f) const = 0;
  virtual void bound_rates(const CompiledTask& t, const Vector& ff, Rows& out) const = 0;
  // The Python tasks' rows of this step: an index for a new one (in update), its rows (in compute).
  virtual int add_external_task() = 0;
  virtual const ExternalRows& external_task(int index) const = 0;
  virtual int add_external_limit() = 0;
  virtual const ExternalRows& external_limit(int index) const = 0;
};

// The last collision rows of one CollisionAvoidance limit (or task) (per geometry pair within reach).
struct CollisionRows {
  std::vector<int> pair;  // geometry pair index in the geometry model's collisionPairs
  Vector distance;        // (m)
  RowMatrix point1, point2, normal;  // (m x 3) world frame
  RowMatrix jacobian;                // (m x nv)
};

// One task kind in the compiled step (PlaCo's Task::update, reljac.ik.Task.compute): built from
// its description (TaskDescription::make), it keeps what it needs between steps and gives its rows.
class CompiledTask {
 public:
  virtual ~CompiledTask() = default;
  // A new description of this task (throws std::invalid_argument for another kind's or bad sizes);
  // its frames registered with s.use_frame.
  virtual void update(StepContext& s, const TaskDescription& d) = 0;
  // This step's terms at q, after the kinematics pass: the error out.e, the unweighted Jacobian
  // out.J and the feed-forward out.ff, all sized `size` (true: the step then weights them, as
  // Task.rows does), or the whole rows out.A, out.b, out.feedback (false: the identity form of a
  // posture, or rows computed in Python). A kind whose row count changes from step to step
  // (a region's) sets `size`, `kept` and its parameters' weight and bounds here (resize_rows).
  virtual bool compute(StepContext& s, const Vector& q, Rows& out) = 0;
  // Task._feedback's cap on gain e (f, in place): by default |f| <= max_speed[0].
  virtual void cap(Vector& f) const;
  // The target from `values` (Step::set_task_target); by default the task has none the core holds.
  virtual void set_target(const StepContext& s, const Vector& values);
  // Task.error_norms at the last rows: (first, second) norms of the rows of e kept by the
  // weights, e being out.e, or out.gap (Task.violation) for a task with bounds; by default (|e|, 0).
  virtual void error_norms(const StepContext& s, const Vector& e, double& first, double& second) const;
  virtual bool external() const { return false; }  // rows from Python (ExternalRows)
  virtual bool pending() const { return false; }   // not described yet
  // Its rows even where it would give them in an identity form (a posture inside a BallTask).
  virtual void dense_rows() {}
  // A kind whose rows change in number: where each row of the last step comes from (a support
  // region's edge index, a collision pair's index in collisionPairs), else nullptr.
  virtual const std::vector<int>* row_sources() const { return nullptr; }
  // A collision kind: its last rows into `out` (true), else false.
  virtual bool collision_rows(CollisionRows& out) const { (void)out; return false; }

  int size = 0;               // rows of e
  TaskParameters parameters;
  std::vector<int> kept;      // rows with weight > 0
  bool unit_weights = true;   // every weight is 1
  double identity_scale = 0;  // the identity form: A = identity_scale diag(mask) (0: dense rows)
  Vector mask;                // (nv) 1 kept, 0 masked, for the identity form

 protected:
  // Task.set_weight: the parameters of a task of `rows` rows (weight checked).
  void set_parameters(const TaskParameters& p, int rows);
  // A task whose rows change in number from step to step, `rows` this step, each row weighted
  // `weight` (> 0: kept) and bounded by (lower, upper) (RegionRowsTask.compute).
  void resize_rows(int rows, double weight, double lower, double upper);
};

// One limit kind in the compiled step (PlaCo's Constraint, reljac.ik.Limit.constraint): a
// velocity box, rows C v <= d, or both, and its state between steps.
class CompiledLimit {
 public:
  virtual ~CompiledLimit() = default;
  virtual void update(StepContext& s, const LimitDescription& d) = 0;  // as CompiledTask::update
  // This step's constraint at q after the kinematics pass: true with its box in lo, hi (sized
  // nv), false without one; its rows are computed here (count()).
  virtual bool constrain(StepContext& s, const Vector& q, Vector& lo, Vector& hi) = 0;
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
template <typename Described, typename Base>
const Described& described_as(const Base& d, const char* kind) {
  const auto* mine = dynamic_cast<const Described*>(&d);
  if (mine == nullptr) throw std::invalid_argument(std::string("not a ") + kind);
  return *mine;
}

// The size check of every description's arrays (std::invalid_argument naming `what`).
void check_size(const Vector& x, long size, const char* what);

// Task._feedback's cap of a pose's rows: |f[:3]| <= max_speed[0], |f[3:]| <= max_speed[1].
void cap_pose(Vector& f, const TaskParameters& p);

// The velocity of a point moving with frame b, at p_wb, measured in frame a and expressed in frame
// c's axes, from one column of D = J_b - J_a, the difference of the frames' WORLD Jacobians
// (d_v: its linear rows, d_w: its angular rows): R_wc^T (d_v - p_wb x d_w). J_ab's linear rows
// (Kinematics.relative_jacobian; its angular rows are R_wc^T d_w), written once for the one-shot
// and batched J_ab (relative.cpp), the step's frame tasks and the centre of mass measured in a
// frame (balance.cpp: b the centre of mass, d_w = -w_a).
inline Vector3 relative_linear_velocity(const Matrix3& R_wc, const Vector3& p_wb, const Vector3& d_v,
                                        const Vector3& d_w) {
  return R_wc.transpose() * (d_v - p_wb.cross(d_w));
}

}  // namespace reljac

// One controller step in compiled code, on Pinocchio's own C++ and the robot's own pin.Model:
// the kinematics pass, every built-in task's rows, the joint limits' box, reversal damping,
// collision distances and their Jacobians (coal), the strict-priority solve, integration and the
// position guard. Python hands q in and gets q out.
//
// The compiled twin of reljac/ik/controller.py's step with the descriptions the tasks and limits
// give (reljac/ik/description.py): those Python classes are its specification and oracle.
// Custom Python tasks and limits run beside it: their rows are passed in (`External`).
//
// Its buffers are sized when the structure changes (tasks, levels, limits, nv, contacts; room for
// every collision pair's row and every contact point's): a step allocates nothing on the heap
// (tests/test_step_allocations.py), except inside coal (see that test) and for levels of more
// than 12 rows (hierarchy.hpp).
//
// This header names no Pinocchio type (the bindings stay light to compile): the objects of
// Python's pin.Model, pin.Data and pin.GeometryModel are handed over as PyObject*.
#pragma once

#include <Python.h>

#include <Eigen/Dense>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hierarchy.hpp"

namespace reljac {

class CompiledTask;   // a task kind's rows (step_impl.hpp)
class CompiledLimit;  // a limit kind's box and rows (step_impl.hpp)

// What a task gives the step: one description per task kind, each bound to Python with named
// fields (bind_descriptions.cpp) whose names are the fields of reljac/ik/description.py's record
// of the same name (tests/test_core_schema.py). make() builds the kind's CompiledTask; the step
// hands it every new description of the task (CompiledTask::update).
struct TaskDescription {
  virtual ~TaskDescription() = default;
  virtual std::unique_ptr<CompiledTask> make() const = 0;
};

// What a limit gives the step, the same way (CompiledLimit).
struct LimitDescription {
  virtual ~LimitDescription() = default;
  virtual std::unique_ptr<CompiledLimit> make() const = 0;
};

// A reference held on a Python object (taken and dropped with the GIL held, as descriptions are).
class PyRef {
 public:
  PyRef() = default;
  explicit PyRef(PyObject* object) : object_(object) { Py_XINCREF(object_); }
  PyRef(const PyRef& other) : PyRef(other.object_) {}
  PyRef& operator=(const PyRef& other) {
    Py_XINCREF(other.object_);
    Py_XDECREF(object_);
    object_ = other.object_;
    return *this;
  }
  ~PyRef() { Py_XDECREF(object_); }
  PyObject* get() const { return object_; }

 private:
  PyObject* object_ = nullptr;
};

// What every task kind shares: rows W (-gain e + feed-forward) with W = diag(weight), or, for a
// task with bounds (Task.set_bounds), rows W lower_rate <= W J v <= W upper_rate: the rates that
// keep lower <= e <= upper and come back to them at the gain (Task.bound_rates).
struct TaskParameters {
  double gain = 1.0;
  Vector weight;  // (size); zeros mask rows out
  bool has_max_speed = false;
  double max_speed[2] = {0, 0};  // (linear, angular) caps on |gain e|
  Vector lower, upper;  // (size) bounds on e (+-inf: an open side), or empty: e driven to 0
  bool bounded() const { return lower.size() > 0; }
};

enum class FrameKind { kPose = 0, kPosition = 1, kOrientation = 2 };

// RelativeFrameTask (kPose), RelativePositionTask, RelativeOrientationTask.
struct FrameTaskDescription : TaskDescription {
  FrameKind kind = FrameKind::kPose;
  int frame_a = 0, frame_b = 0;  // Pinocchio frame ids (0: the universe)
  TaskParameters parameters;
  Eigen::Matrix4d target = Eigen::Matrix4d::Identity();  // homogeneous T_ab target (parts unused by the kind: identity)
  Vector velocity;                                       // (size) target velocity for feed-forward
  std::unique_ptr<CompiledTask> make() const override;
};

// PostureTask: e = difference(target, q).
struct PostureDescription : TaskDescription {
  TaskParameters parameters;
  Vector target;  // (nq)
  std::unique_ptr<CompiledTask> make() const override;
};

// CoMTask: e = p_ac[axes] - target, the centre of mass measured and expressed in frame a.
struct CoMTaskDescription : TaskDescription {
  int frame = 0;          // Pinocchio frame id of a (0: the world)
  Eigen::VectorXi axes;   // (size) indices among x, y, z
  TaskParameters parameters;
  Vector target, velocity;  // (size) [m, m/s]
  std::unique_ptr<CompiledTask> make() const override;
};

// A task whose rows Python computes each step (ExternalRows), of `size` rows.
struct ExternalTaskDescription : TaskDescription {
  int size = 0;
  std::unique_ptr<CompiledTask> make() const override;
};

// A task not described yet (its first description comes before the first step): `size` rows.
struct PendingTaskDescription : TaskDescription {
  int size = 0;
  std::unique_ptr<CompiledTask> make() const override;
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

// A search for a configuration (src/core/search.cpp; its specification is reljac/ik/search.py):
// local searches of Newton steps on the hierarchy (gain 1, no feed-forward, dt 1) with
// Levenberg-Marquardt damping adapted by lexicographic acceptance, restarted from random
// configurations until one converges, the restarts run out or the time does.
struct SearchOptions {
  double tol = 1e-4;              // every counted task's error norms at most this [m, rad]
  int max_iters = 100;            // iterations of one local search
  int restarts = 20;              // local searches after the first (< 0: no cap, the timeout ends it)
  double timeout = -1;            // wall-clock budget [s] (< 0: none)
  unsigned long long seed = 0;    // of the restarts' random configurations (splitmix64)
  double mu_initial = 1e-2, mu_grow = 10, mu_shrink = 0.5, mu_min = 1e-12, mu_max = 1e4;
  int stall_iters = 10;           // iterations in a row rejected or improving by less than stall_ratio end a search
  double stall_ratio = 1e-3;
  double floor = 1e-8;            // level costs below this tie, a level under it is met (tol^2) [m^2, rad^2]
  double max_step = -1;           // a Newton step's largest joint displacement |v_i| at most this [rad or m] (<= 0: no cap)
  std::vector<int> counted;       // the tasks whose errors decide convergence
  Eigen::VectorXi sample_kind;    // (nq) 0: uniform in [lower, upper]; 1: the seed's; 2: an angle's (cos, sin) here and next
  Vector lower, upper;            // (nq)
};

enum class SearchReason { kConverged = 0, kTimeout = 1, kExhausted = 2, kFailed = 3 };

struct SearchResult {
  Vector q;                       // the converged configuration, or the best one found
  bool converged = false;
  SearchReason reason = SearchReason::kExhausted;
  int iterations = 0, searches = 0;  // Newton iterations in all; local searches (1 + restarts)
  Vector level_costs;             // |W e|^2 per level at q
  double seconds = 0;
  int failing = -1;               // as Step::velocity's, when reason is kFailed
};

// The support region cannot be formed this step (its message says why, as SupportError's).
struct SupportFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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

// ReversalDamping: Rprop's step-size control on each velocity.
struct ReversalDampingDescription : LimitDescription {
  Vector velocity_limits, floor;
  double shrink = 0.5, grow = 1.2;
  std::unique_ptr<CompiledLimit> make() const override;
};

// CollisionAvoidance: velocity dampers on the pairs of `geometry` (Python's pin.GeometryModel,
// whose collisionPairs are the pairs kept apart).
struct CollisionAvoidanceDescription : LimitDescription {
  PyRef geometry;
  double min_distance = 0.01, influence_distance = 0.05, gain = 0.3, margin = 0.001;
  std::unique_ptr<CompiledLimit> make() const override;
};

// A limit whose box or rows Python computes each step (ExternalRows).
struct ExternalLimitDescription : LimitDescription {
  std::unique_ptr<CompiledLimit> make() const override;
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

// A row of C: which limit (its index among the limits) and which of its rows.
struct RowSource {
  int limit = 0, index = 0;
};

// The last collision rows of one CollisionAvoidance limit (per geometry pair within reach).
struct CollisionRows {
  std::vector<int> pair;  // geometry pair index in the geometry model's collisionPairs
  Vector distance;        // (m)
  RowMatrix point1, point2, normal;  // (m x 3) world frame
  RowMatrix jacobian;                // (m x nv)
};

class Step {
 public:
  // model, data: Python's pin.Model and a pin.Data of it (kept alive by the caller).
  Step(PyObject* model, PyObject* data);
  ~Step();
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  int nq() const;
  int nv() const;
  Vector last_q;  // the q of the last step made by the bindings' step or step_checked (sized once)
  Vector next_q;  // the q of the step under way: it becomes last_q when the step succeeds

  // A task or limit of the kind its description names: its index among the tasks (or limits).
  int add(const TaskDescription& d);
  int add(const LimitDescription& d);
  // A new description of task (limit) `index`, of its kind (a pending task takes its first).
  void update(int index, const TaskDescription& d);
  void update(int index, const LimitDescription& d);
  void set_levels(const std::vector<std::vector<int>>& levels);

  void set_dt(double dt);
  // The target of task `index` from `values` (CompiledTask::set_target): a frame task's (4 x 4,
  // row-major), a CoM task's (size) or a posture's (nq).
  void set_task_target(int index, const Vector& values);
  // A search from q0 (search.cpp); built-in tasks and limits only. Leaves search mode on: task
  // rows with gain 1, no speed cap and no feed-forward, the search's damping per level.
  SearchResult search(const Vector& q0, const SearchOptions& options);
  void set_policy(double threshold, double max_damping, double error_damping, double step_threshold);

  // The kinematics pass at q (nq) into the pin.Data given at construction.
  void kinematics(const Vector& q);
  // v (nv) at q; `kinematics_done`: kinematics(q) was called already. failing >= 0 names a task
  // whose rows are not finite, -2 an overflowing solution; -1 all is well.
  const Vector& velocity(const Vector& q, bool kinematics_done, const std::vector<ExternalRows>& tasks,
                         const std::vector<ExternalRows>& limits, int& failing);
  // q_next = integrate(q, v dt), guarded by the position limits; v from the last velocity().
  Vector integrate(const Vector& q) const;
  // q_next corrected as the position limits' guard does (JointPositionLimit.guard).
  Vector guard(const Vector& q_next, const Vector& q) const;
  // n whole steps from q (velocity, then integrate) with no Python in between, the same rows of
  // the external tasks and limits at every step; the last q_next, held by the step until the
  // next run. For the allocation test (tests/test_step_allocations.py): a step allocates nothing
  // on the heap once its workspaces have seen the stack's sizes. failing as velocity().
  const Vector& run(const Vector& q, int n, const std::vector<ExternalRows>& tasks,
                    const std::vector<ExternalRows>& limits, int& failing);
  // The system the step would solve at q, built-in parts only (for tests): one Level per
  // priority level (their A in `storage`) and the box; failing as velocity().
  const std::vector<Level>& system(const Vector& q, const std::vector<RowMatrix>*& storage, Vector& lo, Vector& hi,
                                   int& failing);
  void reset();

  const std::vector<LevelReport>& reports() const;
  const std::vector<RowSource>& row_sources() const;
  CollisionRows collision_rows(int limit) const;  // a copy of the last rows
  const Vector& last_velocity() const;
  const Vector& reversal_cap(int limit) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace reljac

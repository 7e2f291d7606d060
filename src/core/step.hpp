// One controller step in compiled code, on Pinocchio's own C++ and the robot's own pin.Model:
// the kinematics pass, every built-in task's rows, the joint limits' box, reversal damping,
// collision distances and their Jacobians (coal), the strict-priority solve, integration and the
// position guard. Python hands q in and gets q out.
//
// The compiled twin of reljac/ik/controller.py's step with the descriptions the tasks and limits
// give (their description() methods): those Python classes are its specification and oracle.
// Custom Python tasks and limits run beside it: their rows are passed in (`External`).
//
// Its buffers are sized when the structure changes (tasks, levels, limits, nv, contacts; room for
// every collision pair's row and every contact point's): a step allocates nothing on the heap
// (tests/test_step_allocations.py), except inside coal (see that test) and for levels of more
// than 12 rows (hierarchy.hpp).
//
// This header names no Pinocchio type but SE3 (the bindings stay light to compile): the objects
// of Python's pin.Model, pin.Data and pin.GeometryModel are handed over as PyObject*. The
// descriptions of the task and limit kinds are in their own files (kind.hpp, schema.hpp).
#pragma once

#include <Python.h>

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hierarchy.hpp"
#include "kind.hpp"

namespace reljac {

// A search for a configuration (src/core/search.cpp; its specification is
// reljac/ik/search/local_search.py): its options and result are declared in search_options.hpp.
struct SearchOptions;
struct SearchResult;

// A search stopped because its caller said so (Step::search's `interrupted`: Ctrl-C).
struct SearchInterrupted : std::exception {
  const char* what() const noexcept override { return "the search was interrupted"; }
};

// The support region cannot be formed this step (its message says why, as SupportError's).
struct SupportFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A row of C: which limit (its index among the limits) and which of its rows.
struct RowSource {
  int limit = 0, index = 0;
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
  // `interrupted` (if any) is asked between two iterations, at most every `every` seconds [s]:
  // true stops the search with SearchInterrupted (the Step is left as after any search).
  SearchResult search(const Vector& q0, const SearchOptions& options,
                      const std::function<bool()>& interrupted = {}, double every = 0.1);
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
  // A task whose rows change in number: where its last rows come from (CompiledTask::row_sources), or nullptr.
  const std::vector<int>* task_row_sources(int task) const;
  CollisionRows task_collision_rows(int task) const;  // a collision avoidance task's last rows
  const Vector& last_velocity() const;
  const Vector& reversal_cap(int limit) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace reljac

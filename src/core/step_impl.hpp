// The compiled step's parts (step.cpp: the Step object, the kinematics pass and the solve;
// step_rows.cpp: each task's rows and each level's system; step_limits.cpp: the limit kinds; the
// task kinds in task_*.cpp, written against kind.hpp). Private; public: step.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "hierarchy.hpp"
#include "kind.hpp"
#include "pinocchio_model.hpp"
#include "step.hpp"

namespace reljac {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Step::Impl final : StepContext {
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
  std::vector<char> curved_rows;           // (nv) rows of joints with nv > 1 (posture: not identity)
  bool all_euclidean = true;
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
  Matrix com_J_world;                     // (3 x nv) the centre of mass's WORLD Jacobian
  Vector box_lo, box_hi, clipped_lo;      // constraints(): one limit's box, the intersection's new lo
  Eigen::Vector3d com_world;              // the centre of mass in the world

  Impl(PinModel& m, PinData& d);

  // StepContext (kind.hpp): what the task and limit kinds read
  int nq() const override { return model.nq; }
  int nv() const override { return model.nv; }
  void use_frame(int frame) override;
  void use_placement(int frame) override;
  void use_center_of_mass() override { needs_com = true; }
  const SE3& placement(int frame) const override { return data.oMf[frame]; }
  const Matrix& jacobian(int frame) const override { return frame_jacobians[frame]; }
  void center_of_mass(int frame, Vector3& p, Matrix& J) override;  // center_of_mass_in, balance.hpp
  void support_columns(int frame_a, int frame_b, std::vector<int>& out) const override;
  void difference(const Vector& q0, const Vector& q1, Vector& out) const override;
  void difference_jacobian(const Vector& q0, const Vector& q1, Matrix& out) const override;
  bool euclidean() const override { return all_euclidean; }
  bool curved(int velocity_index) const override { return curved_rows[velocity_index] != 0; }
  bool search_mode() const override { return newton; }
  double period() const override { return dt; }
  // Task._feedback: gain e, capped (CompiledTask::cap), into f; in search mode e itself.
  void feedback(const CompiledTask& t, const Vector& e, Vector& f) const override;
  // Task.bound_rates of a task with bounds, from out.e and ff (sized `size`): out.f (the feedback
  // gain (e - n), capped, n the nearest point of the bounds), out.rate (ff - f), out.rate_lower,
  // out.rate_upper (+-inf on open sides).
  void bound_rates(const CompiledTask& t, const Vector& ff, Rows& out) const override;
  int add_external_task() override { return external_tasks++; }
  const ExternalRows& external_task(int index) const override { return external_task_rows->at(index); }
  int add_external_limit() override { return external_limits++; }
  const ExternalRows& external_limit(int index) const override { return external_limit_rows->at(index); }

  // Task.rows: the task's terms weighted (rows[i] for task i).
  void task_rows(CompiledTask& t, const Vector& q, Rows& out);
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

// One controller step in compiled code: the rows of the built-in tasks, the boxes of the built-in
// limits and the hierarchy solve, from the frame placements and WORLD Jacobians Pinocchio
// computed in Python. The compiled twin of reljac/ik/tasks.py (Task.rows), reljac/ik/limits.py
// and Controller._velocity: same formulas, same order; those Python classes are its oracle.
#pragma once

#include <Eigen/Dense>
#include <variant>
#include <vector>

#include "hierarchy.hpp"

namespace reljac {

using Matrix3 = Eigen::Matrix3d;
using Vector3 = Eigen::Vector3d;

enum class TaskKind { kRelativeFrame = 0, kRelativePosition = 1, kRelativeOrientation = 2, kPosture = 3 };

struct TaskSpec {
  TaskKind kind = TaskKind::kRelativeFrame;
  int slot_a = -1, slot_b = -1;  // frame slots of the step's inputs; -1: the world (identity, J = 0)
  int size = 6;                  // rows of e: 6, 3, or nv (posture)
  double gain = 1.0;
  Vector weight;                 // (size)
  bool has_max_speed = false;
  double max_speed[2] = {0, 0};  // (linear, angular)
  Matrix3 R_t = Matrix3::Identity();
  Vector3 p_t = Vector3::Zero();
  Vector velocity;               // (size) target velocity for feed-forward (frame tasks)
  double identity_scale = 0.0;   // posture: c of the identity form A = c diag(mask)
  Vector mask;                   // posture: (nv) 1 kept, 0 masked
  // derived from weight
  std::vector<int> kept;
  bool unit_weights = true;
  void update_weights();
};

struct VelocityBox {
  Vector lo, hi;
};

struct PositionLimit {
  Eigen::VectorXi q_index, v_index;
  Vector q_min, q_max, urdf_min, urdf_max;
  double gain = 0.5;
};

struct ReversalDamping {
  Vector vmax, floor, cap, last;
  bool has_last = false;
  double shrink = 0.5, grow = 1.2;
};

using LimitSpec = std::variant<VelocityBox, PositionLimit, ReversalDamping>;

struct FrameInputs {
  std::vector<Matrix3> R;                // per slot: R_wf
  std::vector<Vector3> p;                // per slot: p_wf
  std::vector<const double*> J;          // per slot: (6 x nv) row-major WORLD Jacobian
  std::vector<const double*> posture_e;  // per posture task: (nv) e = difference(target, q)
  const double* C = nullptr;              // (rows x nv) row-major one-sided rows C v <= d from
  const double* d = nullptr;              // the limits evaluated in Python (collision avoidance)
  int rows = 0;
};

class Program {
 public:
  Program(int nq, int nv, double dt, double threshold, double max_damping, double error_damping,
          double step_threshold);

  int add_task(const TaskSpec& spec);
  TaskSpec& task(int index) { return tasks_.at(index); }
  void set_levels(const std::vector<std::vector<int>>& levels) { levels_ = levels; }
  void add_limit(const LimitSpec& limit) { limits_.push_back(limit); }

  // The step's system: one Level per priority level (their dense A in `storage`, row-major
  // (rows x nv)) and the constraints; failing_task >= 0 names a task whose rows are not finite.
  void assemble(const Vector& q, const FrameInputs& in, std::vector<Level>& levels,
                std::vector<RowMatrix>& storage, Constraints& cons, int& failing_task) const;
  // v (nv) for configuration q (nq); failing_task >= 0 names a task whose rows are not finite,
  // -2 says v is not finite (overflow).
  Vector velocity(const Vector& q, const FrameInputs& in, int& failing_task);
  // q_next corrected as the position limits' guard does (rounding).
  Vector guard(const Vector& q_next, const Vector& q) const;
  void reset();

  const std::vector<LevelReport>& reports() const { return reports_; }
  int nq() const { return nq_; }
  int nv() const { return nv_; }

 private:
  struct Rows {
    Matrix A;  // (m x nv); empty when identity
    Vector b, feedback;
    bool identity = false;
  };
  Rows rows(const TaskSpec& t, const FrameInputs& in, int posture_slot) const;
  void box(Vector& lo, Vector& hi, const Vector& q) const;
  void observe(const Vector& v);

  int nq_, nv_;
  double dt_;
  Policy policy_;
  double error_damping_, step_threshold_;
  std::vector<TaskSpec> tasks_;
  std::vector<std::vector<int>> levels_;
  std::vector<LimitSpec> limits_;
  std::vector<LevelReport> reports_;
};

}  // namespace reljac

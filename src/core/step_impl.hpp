// The compiled step's parts (step.cpp: the Step object, the kinematics pass and the solve;
// step_tasks.cpp: the tasks' rows and each level's system; step_limits.cpp: the limits' box and
// rows, and their state between steps). Private to src/core; the public header is step.hpp.
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

struct Task {
  TaskKind kind = TaskKind::kPose;
  int size = 6;
  FrameTaskDescription frame;
  PostureDescription posture;
  CoMTaskDescription com;
  pinocchio::SE3 target;
  std::vector<int> kept;        // rows with weight > 0
  bool unit_weights = true;     // every weight is 1
  double identity_scale = 0.0;  // posture: c when A = c diag(mask) (0: dense rows)
  Vector mask;                  // posture: (nv) 1 kept, 0 masked
  bool moving_target = false;   // a non-zero target velocity
  int external = -1;            // index among the external tasks
  const TaskParameters& parameters() const {
    return kind == TaskKind::kPosture ? posture.parameters : kind == TaskKind::kCoM ? com.parameters : frame.parameters;
  }
};

struct Rows {  // TaskRows
  Matrix A;    // (m x nv); empty for the identity form
  Vector b, feedback;
  bool identity = false;
  // the task's own buffers (their sizes are the task's: kept from step to step)
  Matrix J;          // (size x nv) unweighted Jacobian
  Vector e, f, ff;   // (size) error, gain e capped, feed-forward
};

enum class LimitType { kBox, kPosition, kReversal, kCollision, kSupport, kExternal };

struct Limit {
  LimitType type = LimitType::kBox;
  Vector lo, hi;
  PositionLimitDescription position;
  ReversalDescription reversal;
  Vector cap, last;  // reversal state
  bool has_last = false;
  std::unique_ptr<CollisionLimit> collision;
  std::unique_ptr<SupportLimit> support;
  int external = -1;
};

// The size check of every description's arrays (std::invalid_argument naming `what`).
void check_size(const Vector& x, long size, const char* what);
// Task._feedback: gain e, each part capped by max_speed (into f).
// In search mode (`newton`): e itself.
void feedback_of(const Task& t, const Vector& e, Vector& f, bool newton);

struct Step::Impl {
  PinModel& model;
  PinData& data;
  double dt = 0.01;
  Policy policy;
  double error_damping = 1.0, step_threshold = 0.01;
  bool newton = false;  // search mode (Step::set_search_mode)
  double lm = 0.0;      // its Levenberg-Marquardt damping, added to every level's lambda^2
  std::vector<Task> tasks;
  std::vector<std::vector<int>> levels;
  std::vector<Limit> limits;
  std::vector<int> frames;                 // frame ids the tasks read (placements and Jacobians)
  std::vector<int> placed;                 // frame ids whose placements only are read (contacts)
  bool needs_com = false;                  // a CoM task or support region: jacobianCenterOfMass per step
  std::vector<char> curved;                // (nv) rows of joints with nv > 1 (posture: not identity)
  bool euclidean = true;
  int external_tasks = 0, external_limits = 0;
  // per step
  std::vector<Matrix> frame_jacobians;     // by frame id: WORLD (6 x nv), for frames in `frames`
  std::vector<Rows> rows;                  // per task
  std::vector<Level> level_systems;
  std::vector<RowMatrix> level_storage;
  Constraints cons;
  std::vector<RowSource> sources;
  std::vector<LevelReport> reports;
  Workspace workspace;                     // the solver's buffers, kept across steps
  Vector v, q_last;
  Vector v_dt, q_run, q_next;              // integrate(): v dt; run(): the configurations
  Matrix D, moved, com_J, com_J_world;  // com_J: (3 x nv) in a task's or region's frame
  // what Eigen would evaluate in temporaries of these types (the same arithmetic, no allocation)
  Eigen::Matrix<double, 6, Eigen::Dynamic> product6;
  Eigen::Matrix<double, 3, Eigen::Dynamic> product3, rotated3;
  Vector box_lo, box_hi, clipped_lo;      // constraints(): one limit's box, the intersection's new lo
  Eigen::Vector3d com_p, com_world;       // the centre of mass in that frame, and in the world

  Impl(PinModel& m, PinData& d);
  void use_frame(int frame);
  // The WORLD Jacobian of frame f (zero for the universe).
  const Matrix& jacobian(int f) { return frame_jacobians[f]; }
  void set_parameters(Task& t, const TaskParameters& p);  // Task.set_weight
  void set_frame(Task& t, const FrameTaskDescription& d);
  void set_com(Task& t, const CoMTaskDescription& d);  // CoMTask
  void set_support(Limit& limit, const SupportRegionDescription& d);
  void set_posture(Task& t, const PostureDescription& d);  // PostureTask.set_weight
  // Ad((R_wc, p_wb)^-1) D: the relative motion at b's origin in c's axes (Kinematics.relative_jacobian).
  void move(const Matrix3& R_wc, const Vector3& p_wb, const Matrix& Dm, Matrix& out) const;
  // Task.rows with the built-in tasks' compute (RelativeFrameTask, RelativePositionTask,
  // RelativeOrientationTask, PostureTask).
  void task_rows(const Task& t, const Vector& q, Rows& out);
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

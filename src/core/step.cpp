// The compiled controller step; see step.hpp. Each function names the Python code it mirrors.
#include "step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "balance.hpp"
#include "collision.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/kinematics.hpp"

namespace reljac {

namespace {

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

void check_size(const Vector& x, long size, const char* what) {
  if (x.size() != size) throw std::invalid_argument(std::string(what) + " has the wrong size");
}

// Task._feedback: gain e, each part capped by max_speed.
void feedback_of(const Task& t, const Vector& e, Vector& f) {
  const TaskParameters& p = t.parameters();
  f = p.gain * e;
  if (!p.has_max_speed) return;
  auto cap_part = [&](int start, int length, double cap) {
    const double norm = f.segment(start, length).norm();
    if (norm > cap) f.segment(start, length) *= cap / norm;
  };
  switch (t.kind) {
    case TaskKind::kPose:
      cap_part(0, 3, p.max_speed[0]);
      cap_part(3, 3, p.max_speed[1]);
      break;
    case TaskKind::kOrientation:
      cap_part(0, static_cast<int>(f.size()), p.max_speed[1]);
      break;
    default:
      cap_part(0, static_cast<int>(f.size()), p.max_speed[0]);
  }
}

}  // namespace

struct Step::Impl {
  PinModel& model;
  PinData& data;
  double dt = 0.01;
  Policy policy;
  double error_damping = 1.0, step_threshold = 0.01;
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
  Vector v, e, f, q_last;
  Matrix D, moved, com_J;
  Eigen::Vector3d com_p;

  Impl(PinModel& m, PinData& d) : model(m), data(d) {
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

  void use_frame(int frame) {
    if (frame < 0 || frame >= model.nframes) throw std::invalid_argument("frame id out of range");
    if (frame != 0 && std::find(frames.begin(), frames.end(), frame) == frames.end()) frames.push_back(frame);
  }

  void set_parameters(Task& t, const TaskParameters& p) {  // Task.set_weight
    check_size(p.weight, t.size, "weight");
    t.kept.clear();
    t.unit_weights = true;
    for (int i = 0; i < p.weight.size(); ++i) {
      if (p.weight(i) > 0) t.kept.push_back(i);
      if (p.weight(i) != 1.0) t.unit_weights = false;
    }
  }

  void set_frame(Task& t, const FrameTaskDescription& d) {
    t.kind = d.kind;
    t.size = d.kind == TaskKind::kPose ? 6 : 3;
    set_parameters(t, d.parameters);
    check_size(d.velocity, t.size, "target velocity");
    use_frame(d.frame_a);
    use_frame(d.frame_b);
    t.frame = d;
    t.target = pinocchio::SE3(Matrix3(d.target.topLeftCorner<3, 3>()), Vector3(d.target.topRightCorner<3, 1>()));
    t.moving_target = d.velocity.cwiseAbs().maxCoeff() > 0;
  }

  void set_com(Task& t, const CoMTaskDescription& d) {  // CoMTask
    t.kind = TaskKind::kCoM;
    t.size = static_cast<int>(d.axes.size());
    if (t.size < 1 || t.size > 3 || (d.axes.array() < 0).any() || (d.axes.array() > 2).any())
      throw std::invalid_argument("CoM axes must be 1 to 3 indices among 0, 1, 2");
    set_parameters(t, d.parameters);
    check_size(d.target, t.size, "CoM target");
    check_size(d.velocity, t.size, "CoM target velocity");
    use_frame(d.frame);
    t.com = d;
    needs_com = true;
  }

  void set_support(Limit& limit, const SupportRegionDescription& d) {
    if (static_cast<size_t>(d.contact_frames.size()) != d.points.size() || d.points.empty())
      throw std::invalid_argument("one points array per contact frame");
    for (long j = 0; j < d.contact_frames.size(); ++j) {
      const int f = d.contact_frames(j);
      if (f < 0 || f >= model.nframes) throw std::invalid_argument("frame id out of range");
      if (d.points[j].cols() != 3 || d.points[j].rows() < 1) throw std::invalid_argument("contact points must be (k x 3)");
      if (std::find(placed.begin(), placed.end(), f) == placed.end()) placed.push_back(f);
    }
    use_frame(d.frame);
    needs_com = true;
    if (limit.support)
      limit.support->set(d);
    else
      limit.support = std::make_unique<SupportLimit>(d);
  }

  void set_posture(Task& t, const PostureDescription& d) {  // PostureTask.set_weight
    t.kind = TaskKind::kPosture;
    t.size = model.nv;
    set_parameters(t, d.parameters);
    check_size(d.target, model.nq, "posture target");
    t.posture = d;
    t.mask = (d.parameters.weight.array() > 0).cast<double>();
    t.identity_scale = 0.0;
    bool uniform = !t.kept.empty(), curved_kept = false;
    for (int i : t.kept) {
      uniform = uniform && d.parameters.weight(i) == d.parameters.weight(t.kept[0]);
      curved_kept = curved_kept || curved[i];
    }
    if (uniform && !curved_kept) t.identity_scale = d.parameters.weight(t.kept[0]);
  }

  // The WORLD Jacobian of frame f (zero for the universe).
  const Matrix& jacobian(int f) { return frame_jacobians[f]; }

  // Ad((R_wc, p_wb)^-1) D: the relative motion at b's origin in c's axes (Kinematics.relative_jacobian).
  void move(const Matrix3& R_wc, const Vector3& p_wb, const Matrix& Dm, Matrix& out) const {
    const int nv = static_cast<int>(Dm.cols());
    out.resize(6, nv);
    for (int k = 0; k < nv; ++k) {
      const Vector3 w = Dm.col(k).tail<3>();
      out.col(k).head<3>() = R_wc.transpose() * (Vector3(Dm.col(k).head<3>()) - p_wb.cross(w));
      out.col(k).tail<3>() = R_wc.transpose() * w;
    }
  }

  // Task.rows with the built-in tasks' compute (RelativeFrameTask, RelativePositionTask,
  // RelativeOrientationTask, PostureTask).
  void task_rows(const Task& t, const Vector& q, Rows& out) {
    const int nv = model.nv;
    Matrix J;
    Vector ff;
    if (t.kind == TaskKind::kPosture) {
      e.resize(nv);
      pinocchio::difference(model, t.posture.target, q, e);
      if (t.identity_scale != 0.0) {  // PostureTask.rows, identity form
        feedback_of(t, e, f);
        out.feedback = t.mask.cwiseProduct(t.identity_scale * f);
        out.b = -out.feedback;
        out.identity = true;
        return;
      }
      if (euclidean) {
        J = Matrix::Identity(nv, nv);
      } else {
        J.setZero(nv, nv);
        pinocchio::dDifference(model, t.posture.target, q, J, pinocchio::ARG1);
      }
      ff = Vector::Zero(nv);
    } else if (t.kind == TaskKind::kCoM) {  // CoMTask.compute
      center_of_mass_in(data, t.com.frame, jacobian(t.com.frame), com_p, com_J);
      e.resize(t.size);
      J.resize(t.size, nv);
      for (int i = 0; i < t.size; ++i) {
        e(i) = com_p(t.com.axes(i)) - t.com.target(i);
        J.row(i) = com_J.row(t.com.axes(i));
      }
      ff = t.com.velocity;
    } else {
      const int a = t.frame.frame_a, b = t.frame.frame_b;
      const pinocchio::SE3& T_wa = data.oMf[a];
      const pinocchio::SE3& T_wb = data.oMf[b];
      const pinocchio::SE3 T_ab = T_wa.actInv(T_wb);
      D = jacobian(b) - jacobian(a);
      if (t.kind == TaskKind::kPose) {  // RelativeFrameTask.compute
        const pinocchio::SE3 T_err = t.target.actInv(T_ab);
        e = pinocchio::log6(T_err).toVector();
        Matrix6 Jlog;
        pinocchio::Jlog6(T_err, Jlog);
        move(T_wb.rotation(), T_wb.translation(), D, moved);
        J = Jlog * moved;
        ff = Vector::Zero(6);
        if (t.moving_target) ff = Jlog * (T_err.inverse().toActionMatrix() * Vector6(t.frame.velocity));
      } else if (t.kind == TaskKind::kPosition) {  // RelativePositionTask.compute
        e = T_ab.translation() - t.target.translation();
        move(T_wa.rotation(), T_wb.translation(), D, moved);
        J = moved.topRows<3>();
        ff = t.frame.velocity;
      } else {  // RelativeOrientationTask.compute
        const Matrix3 R_err = t.target.rotation().transpose() * T_ab.rotation();
        double theta;
        const Vector3 w = pinocchio::log3(R_err, theta);
        Matrix3 Jlog;
        pinocchio::Jlog3(theta, w, Jlog);
        J = Jlog * (T_wb.rotation().transpose() * D.bottomRows<3>());
        ff = Jlog * (R_err.transpose() * Vector3(t.frame.velocity));
        e = w;
      }
    }
    feedback_of(t, e, f);
    out.identity = false;
    if (t.unit_weights) {
      out.A = J;
      out.b = ff - f;
      out.feedback = f;
      return;
    }
    const Vector& weight = t.parameters().weight;
    const int m = static_cast<int>(t.kept.size());
    out.A.resize(m, nv);
    out.b.resize(m);
    out.feedback.resize(m);
    for (int i = 0; i < m; ++i) {
      const int r = t.kept[i];
      out.A.row(i) = weight(r) * J.row(r);
      out.feedback(i) = weight(r) * f(r);
      out.b(i) = weight(r) * ff(r) - out.feedback(i);
    }
  }

  void kinematics(const Vector& q, bool all_frames) {
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
    if (needs_com) compute_center_of_mass(model, data);
  }

  // Controller._level for every level; failing: a task whose rows are not finite.
  void assemble(const Vector& q, const std::vector<ExternalRows>& external, int& failing) {
    const int nv = model.nv;
    rows.resize(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
      const Task& t = tasks[i];
      if (t.kind != TaskKind::kExternal) {
        task_rows(t, q, rows[i]);
        continue;
      }
      const ExternalRows& x = external.at(t.external);
      Rows& r = rows[i];
      r.identity = false;
      r.A = Eigen::Map<const RowMatrix>(x.A, x.rows, nv);
      r.b = Eigen::Map<const Vector>(x.b, x.rows);
      r.feedback = Eigen::Map<const Vector>(x.feedback, x.rows);
    }
    level_systems.assign(levels.size(), Level());
    level_storage.resize(levels.size());
    for (size_t k = 0; k < levels.size(); ++k) {
      Level& level = level_systems[k];
      const std::vector<int>& members = levels[k];
      if (members.size() == 1 && rows[members[0]].identity) {
        const Task& t = tasks[members[0]];
        level.b = rows[members[0]].b;
        level.identity_scale = t.identity_scale;
        level.mask = t.mask;
      } else {
        int m = 0;
        for (int index : members) {
          const Rows& r = rows[index];
          if (!r.b.allFinite() || (!r.identity && !r.A.allFinite())) {
            failing = index;
            return;
          }
          m += r.identity ? static_cast<int>(tasks[index].kept.size()) : static_cast<int>(r.b.size());
        }
        RowMatrix& A = level_storage[k];
        A.resize(m, nv);
        level.b.resize(m);
        int at = 0;
        for (int index : members) {  // TaskRows.dense, stacked
          const Rows& r = rows[index];
          if (r.identity) {
            for (int row : tasks[index].kept) {
              A.row(at).setZero();
              A(at, row) = tasks[index].identity_scale;
              level.b(at++) = r.b(row);
            }
          } else {
            A.middleRows(at, r.b.size()) = r.A;
            level.b.segment(at, r.b.size()) = r.b;
            at += static_cast<int>(r.b.size());
          }
        }
        level.A = A.data();
      }
      if (error_damping > 0) {
        double asked = 0.0;
        for (int index : members) asked += rows[index].feedback.squaredNorm();
        asked *= dt * dt;
        level.extra_damping = error_damping * std::max(asked - step_threshold * step_threshold, 0.0);
      }
    }
  }

  // intersect() over the limits' constraints, in order (earlier limits win), and their rows.
  void constraints(const Vector& q, const std::vector<ExternalRows>& external) {
    const int nv = model.nv;
    cons.lo.setConstant(nv, -kInf);
    cons.hi.setConstant(nv, kInf);
    Vector l(nv), h(nv);
    int total = 0;
    for (size_t i = 0; i < limits.size(); ++i) {
      Limit& limit = limits[i];
      bool has_box = true;
      switch (limit.type) {
        case LimitType::kBox:
          l = limit.lo;
          h = limit.hi;
          break;
        case LimitType::kPosition: {  // JointPositionLimit.joint_bounds
          const PositionLimitDescription& p = limit.position;
          l.setConstant(-kInf);
          h.setConstant(kInf);
          const double g = p.gain;
          for (int k = 0; k < p.q_index.size(); ++k) {
            const double qj = q(p.q_index(k));
            const double to_min = (p.q_min(k) - qj) / dt, to_max = (p.q_max(k) - qj) / dt;
            const bool below = to_min > 0, above = to_max < 0;
            const int j = p.v_index(k);
            l(j) = below ? to_min : (above ? std::min(g * to_min, to_max) : g * to_min);
            h(j) = above ? to_max : (below ? std::max(g * to_max, to_min) : g * to_max);
          }
          break;
        }
        case LimitType::kReversal:
          l = -limit.cap;
          h = limit.cap;
          break;
        case LimitType::kCollision:
          has_box = false;
          limit.collision->compute(data, dt);
          total += static_cast<int>(limit.collision->d().size());
          break;
        case LimitType::kSupport: {
          has_box = false;
          const int frame = limit.support->description().frame;
          center_of_mass_in(data, frame, jacobian(frame), com_p, com_J);
          limit.support->compute(data, com_p, com_J, dt);
          total += static_cast<int>(limit.support->d().size());
          break;
        }
        case LimitType::kExternal: {
          const ExternalRows& x = external.at(limit.external);
          has_box = x.lo != nullptr;
          if (has_box) {
            l = Eigen::Map<const Vector>(x.lo, nv);
            h = Eigen::Map<const Vector>(x.hi, nv);
          }
          total += x.rows;
          break;
        }
      }
      if (has_box) {
        const Vector new_lo = l.cwiseMax(cons.lo).cwiseMin(cons.hi);  // np.clip(c.lo, lo, hi)
        cons.hi = h.cwiseMax(cons.lo).cwiseMin(cons.hi);
        cons.lo = new_lo;
      }
    }
    cons.C.resize(total, nv);
    cons.d.resize(total);
    sources.clear();
    int at = 0;
    for (size_t i = 0; i < limits.size(); ++i) {
      const Limit& limit = limits[i];
      int m = 0;
      if (limit.type == LimitType::kCollision) {
        m = static_cast<int>(limit.collision->d().size());
        cons.C.middleRows(at, m) = limit.collision->C();
        cons.d.segment(at, m) = limit.collision->d();
      } else if (limit.type == LimitType::kSupport) {
        m = static_cast<int>(limit.support->d().size());
        cons.C.middleRows(at, m) = limit.support->C();
        cons.d.segment(at, m) = limit.support->d();
      } else if (limit.type == LimitType::kExternal) {
        const ExternalRows& x = external.at(limit.external);
        m = x.rows;
        if (m) {
          cons.C.middleRows(at, m) = Eigen::Map<const RowMatrix>(x.A, m, nv);
          cons.d.segment(at, m) = Eigen::Map<const Vector>(x.b, m);
        }
      }
      for (int r = 0; r < m; ++r) sources.push_back({static_cast<int>(i), r});
      at += m;
    }
  }

  void observe(const Vector& velocity) {  // Limit.observe of ReversalDamping and CollisionAvoidance
    for (Limit& limit : limits) {
      if (limit.type == LimitType::kCollision) {
        limit.collision->observe(velocity);
        continue;
      }
      if (limit.type != LimitType::kReversal) continue;
      const ReversalDescription& r = limit.reversal;
      if (limit.has_last) {
        for (int j = 0; j < model.nv; ++j) {
          const bool reversed = std::abs(velocity(j)) > r.floor(j) && std::abs(limit.last(j)) > r.floor(j) &&
                                velocity(j) * limit.last(j) < 0;
          limit.cap(j) = reversed ? r.shrink * std::abs(velocity(j)) : limit.cap(j) * r.grow;
          if (limit.cap(j) > r.velocity_limits(j)) limit.cap(j) = kInf;
        }
      }
      limit.last = velocity;
      limit.has_last = true;
    }
  }
};

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
Vector Step::integrate(const Vector& q) const {
  const Impl& s = *impl_;
  check_size(q, nq(), "q");
  Vector out(nq());
  pinocchio::integrate(s.model, q, s.v * s.dt, out);
  return guard(out, q);
}

Vector Step::guard(const Vector& q_next, const Vector& q) const {
  check_size(q_next, nq(), "q_next");
  check_size(q, nq(), "q");
  Vector out = q_next;
  for (const Limit& limit : impl_->limits) {  // JointPositionLimit.guard
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
  return out;
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

const CollisionRows& Step::collision_rows(int limit) const {
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

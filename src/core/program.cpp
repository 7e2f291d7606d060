// The compiled controller step; see program.hpp. Each function names the Python code it mirrors.
#include "program.hpp"

#include <cmath>
#include <limits>

#include "lie.hpp"

namespace reljac {

using lie::Matrix6;
using lie::Vector6;

void TaskSpec::update_weights() {  // Task.set_weight
  kept.clear();
  unit_weights = true;
  for (int i = 0; i < weight.size(); ++i) {
    if (weight(i) > 0) kept.push_back(i);
    if (weight(i) != 1.0) unit_weights = false;
  }
}

Program::Program(int nq, int nv, double dt, double threshold, double max_damping, double error_damping,
                 double step_threshold)
    : nq_(nq), nv_(nv), dt_(dt), policy_{threshold, max_damping}, error_damping_(error_damping),
      step_threshold_(step_threshold) {}

int Program::add_task(const TaskSpec& spec) {
  tasks_.push_back(spec);
  tasks_.back().update_weights();
  return static_cast<int>(tasks_.size()) - 1;
}

namespace {

// Task._feedback: gain e, each part capped by max_speed.
Vector feedback_of(const TaskSpec& t, const Vector& e) {
  Vector f = t.gain * e;
  if (!t.has_max_speed) return f;
  auto cap_part = [&](int start, int length, double cap) {
    const double norm = f.segment(start, length).norm();
    if (norm > cap) f.segment(start, length) *= cap / norm;
  };
  switch (t.kind) {
    case TaskKind::kRelativeFrame:
      cap_part(0, 3, t.max_speed[0]);
      cap_part(3, 3, t.max_speed[1]);
      break;
    case TaskKind::kRelativeOrientation:
      cap_part(0, static_cast<int>(f.size()), t.max_speed[1]);
      break;
    default:
      cap_part(0, static_cast<int>(f.size()), t.max_speed[0]);
  }
  return f;
}

// (6 x nv) spatial Jacobian of slot b minus slot a (world slots have J = 0).
Matrix spatial_difference(const FrameInputs& in, int a, int b, int nv) {
  Matrix D = Matrix::Zero(6, nv);
  if (b >= 0) D += Eigen::Map<const RowMatrix>(in.J[b], 6, nv);
  if (a >= 0) D -= Eigen::Map<const RowMatrix>(in.J[a], 6, nv);
  return D;
}

// Ad((R_wc, p_wb)^-1) D: the relative motion at b's origin in c's axes (Kinematics.relative_jacobian).
Matrix moved_to(const Matrix3& R_wc, const Vector3& p_wb, const Matrix& D) {
  Matrix out(6, D.cols());
  const auto Dv = D.topRows<3>();
  const auto Dw = D.bottomRows<3>();
  Matrix pxDw(3, D.cols());
  for (int k = 0; k < D.cols(); ++k) pxDw.col(k) = p_wb.cross(Dw.col(k));
  out.topRows<3>() = R_wc.transpose() * (Dv - pxDw);
  out.bottomRows<3>() = R_wc.transpose() * Dw;
  return out;
}

}  // namespace

// Task.rows / PostureTask.rows with the subclasses' compute.
Program::Rows Program::rows(const TaskSpec& t, const FrameInputs& in, int posture_slot) const {
  Rows out;
  if (t.kind == TaskKind::kPosture) {  // identity form only (the controller checks)
    const Vector e = Eigen::Map<const Vector>(in.posture_e[posture_slot], nv_);
    out.feedback = t.mask.cwiseProduct(t.identity_scale * feedback_of(t, e));
    out.b = -out.feedback;
    out.identity = true;
    return out;
  }
  const Matrix3 Ra = t.slot_a >= 0 ? in.R[t.slot_a] : Matrix3::Identity();
  const Vector3 pa = t.slot_a >= 0 ? in.p[t.slot_a] : Vector3::Zero();
  const Matrix3 Rb = t.slot_b >= 0 ? in.R[t.slot_b] : Matrix3::Identity();
  const Vector3 pb = t.slot_b >= 0 ? in.p[t.slot_b] : Vector3::Zero();
  const Matrix3 R_ab = Ra.transpose() * Rb;
  const Vector3 p_ab = Ra.transpose() * (pb - pa);
  const Matrix D = spatial_difference(in, t.slot_a, t.slot_b, nv_);
  Vector e, ff;
  Matrix J;
  if (t.kind == TaskKind::kRelativeFrame) {  // RelativeFrameTask.compute
    const Matrix3 R_err = t.R_t.transpose() * R_ab;
    const Vector3 p_err = t.R_t.transpose() * (p_ab - t.p_t);
    e = lie::log6(R_err, p_err);
    const Matrix6 Jlog = lie::Jlog6(R_err, p_err);
    J = Jlog * moved_to(Rb, pb, D);
    ff = Vector::Zero(6);
    if (t.velocity.cwiseAbs().maxCoeff() > 0) ff = Jlog * lie::act_inverse(R_err, p_err, Vector6(t.velocity));
  } else if (t.kind == TaskKind::kRelativePosition) {  // RelativePositionTask.compute
    e = p_ab - t.p_t;
    J = moved_to(Ra, pb, D).topRows<3>();
    ff = t.velocity;
  } else {  // RelativeOrientationTask.compute
    const Matrix3 R_err = t.R_t.transpose() * R_ab;
    double theta;
    const Vector3 w = lie::log3(R_err, theta);
    const Matrix3 Jlog = lie::Jlog3(theta, w);
    J = Jlog * (Rb.transpose() * D.bottomRows<3>());
    ff = Jlog * (R_err.transpose() * Vector3(t.velocity));
    e = w;
  }
  const Vector feedback = feedback_of(t, e);
  if (t.unit_weights) {
    out.A = J;
    out.b = ff - feedback;
    out.feedback = feedback;
    return out;
  }
  const int m = static_cast<int>(t.kept.size());
  out.A.resize(m, nv_);
  out.b.resize(m);
  out.feedback.resize(m);
  for (int i = 0; i < m; ++i) {
    const int r = t.kept[i];
    const double w = t.weight(r);
    out.A.row(i) = w * J.row(r);
    out.feedback(i) = w * feedback(r);
    out.b(i) = w * ff(r) - out.feedback(i);
  }
  return out;
}

// intersect() over the limits' constraints (JointVelocityLimit, JointPositionLimit, ReversalDamping).
void Program::box(Vector& lo, Vector& hi, const Vector& q) const {
  const double inf = std::numeric_limits<double>::infinity();
  lo = Vector::Constant(nv_, -inf);
  hi = Vector::Constant(nv_, inf);
  Vector l(nv_), h(nv_);
  for (const LimitSpec& spec : limits_) {
    if (const auto* box = std::get_if<VelocityBox>(&spec)) {
      l = box->lo;
      h = box->hi;
    } else if (const auto* pos = std::get_if<PositionLimit>(&spec)) {  // JointPositionLimit.joint_bounds
      l.setConstant(-inf);
      h.setConstant(inf);
      const double g = pos->gain;
      for (int k = 0; k < pos->q_index.size(); ++k) {
        const double qj = q(pos->q_index(k));
        const double to_min = (pos->q_min(k) - qj) / dt_, to_max = (pos->q_max(k) - qj) / dt_;
        const bool below = to_min > 0, above = to_max < 0;
        const int j = pos->v_index(k);
        l(j) = below ? to_min : (above ? std::min(g * to_min, to_max) : g * to_min);
        h(j) = above ? to_max : (below ? std::max(g * to_max, to_min) : g * to_max);
      }
    } else {
      const auto& rev = std::get<ReversalDamping>(spec);
      l = -rev.cap;
      h = rev.cap;
    }
    const Vector new_lo = l.cwiseMax(lo).cwiseMin(hi);  // np.clip(c.lo, lo, hi): earlier limits win
    hi = h.cwiseMax(lo).cwiseMin(hi);
    lo = new_lo;
  }
}

// ReversalDamping.observe.
void Program::observe(const Vector& v) {
  for (LimitSpec& spec : limits_) {
    auto* rev = std::get_if<ReversalDamping>(&spec);
    if (!rev) continue;
    if (rev->has_last) {
      for (int j = 0; j < nv_; ++j) {
        const bool reversed =
            std::abs(v(j)) > rev->floor(j) && std::abs(rev->last(j)) > rev->floor(j) && v(j) * rev->last(j) < 0;
        rev->cap(j) = reversed ? rev->shrink * std::abs(v(j)) : rev->cap(j) * rev->grow;
        if (rev->cap(j) > rev->vmax(j)) rev->cap(j) = std::numeric_limits<double>::infinity();
      }
    }
    rev->last = v;
    rev->has_last = true;
  }
}

void Program::reset() {
  for (LimitSpec& spec : limits_) {
    if (auto* rev = std::get_if<ReversalDamping>(&spec)) {
      rev->cap.setConstant(std::numeric_limits<double>::infinity());
      rev->has_last = false;
    }
  }
  reports_.clear();
}

// Controller._level for every level and intersect() of the limits.
void Program::assemble(const Vector& q, const FrameInputs& in, std::vector<Level>& levels,
                       std::vector<RowMatrix>& row_major, Constraints& cons, int& failing_task) const {
  failing_task = -1;
  levels.assign(levels_.size(), Level());
  row_major.assign(levels_.size(), RowMatrix());
  int posture_slot = 0;
  for (size_t k = 0; k < levels_.size(); ++k) {
    std::vector<Rows> rows;
    for (int index : levels_[k]) {
      const TaskSpec& t = tasks_[index];
      rows.push_back(this->rows(t, in, t.kind == TaskKind::kPosture ? posture_slot++ : 0));
    }
    Level& level = levels[k];
    if (rows.size() == 1 && rows[0].identity) {
      const TaskSpec& t = tasks_[levels_[k][0]];
      level.b = rows[0].b;
      level.identity_scale = t.identity_scale;
      level.mask = t.mask;
    } else {
      int m = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        const Rows& r = rows[i];
        if (!r.b.allFinite() || (!r.identity && !r.A.allFinite())) {
          failing_task = levels_[k][i];
          return;
        }
        m += r.identity ? static_cast<int>(tasks_[levels_[k][i]].kept.size()) : static_cast<int>(r.b.size());
      }
      RowMatrix& A = row_major[k];
      A.resize(m, nv_);
      level.b.resize(m);
      int at = 0;
      for (size_t i = 0; i < rows.size(); ++i) {  // TaskRows.dense, stacked
        const Rows& r = rows[i];
        if (r.identity) {
          const TaskSpec& t = tasks_[levels_[k][i]];
          for (int row : t.kept) {
            A.row(at).setZero();
            A(at, row) = t.identity_scale;
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
    if (error_damping_ > 0) {
      double asked = 0.0;
      for (const Rows& r : rows) asked += r.feedback.dot(r.feedback);
      asked *= std::pow(dt_, 2.0);
      level.extra_damping = error_damping_ * std::max(asked - std::pow(step_threshold_, 2.0), 0.0);
    }
  }
  box(cons.lo, cons.hi, q);
  cons.C = Eigen::Map<const RowMatrix>(in.C, in.rows, nv_);
  cons.d = Eigen::Map<const Vector>(in.d, in.rows);
}

// Controller._velocity: the system, one solve, the limits told the velocity.
Vector Program::velocity(const Vector& q, const FrameInputs& in, int& failing_task) {
  std::vector<Level> levels;
  std::vector<RowMatrix> storage;  // the dense A of each level, alive during the solve
  Constraints cons;
  assemble(q, in, levels, storage, cons, failing_task);
  if (failing_task >= 0) return Vector();
  Vector v = solve_hierarchy(levels, cons, policy_, reports_);
  if (!v.allFinite()) {
    failing_task = -2;
    return v;
  }
  observe(v);
  return v;
}

// JointPositionLimit.guard.
Vector Program::guard(const Vector& q_next, const Vector& q) const {
  Vector out = q_next;
  for (const LimitSpec& spec : limits_) {
    const auto* pos = std::get_if<PositionLimit>(&spec);
    if (!pos) continue;
    for (int pass = 0; pass < 2; ++pass) {
      const Vector& low = pass == 0 ? pos->q_min : pos->urdf_min;
      const Vector& high = pass == 0 ? pos->q_max : pos->urdf_max;
      for (int k = 0; k < pos->q_index.size(); ++k) {
        const int i = pos->q_index(k);
        if (q(i) >= low(k) && q(i) <= high(k)) out(i) = std::min(std::max(out(i), low(k)), high(k));
      }
    }
  }
  return out;
}

}  // namespace reljac

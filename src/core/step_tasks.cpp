// The tasks' rows and each level's system of the compiled step; see step_impl.hpp. Each function
// names the Python it mirrors.
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "step_impl.hpp"

namespace reljac {

void check_size(const Vector& x, long size, const char* what) {
  if (x.size() != size) throw std::invalid_argument(std::string(what) + " has the wrong size");
}

// Task._feedback: gain e, each part capped by max_speed (search mode: e).
void feedback_of(const Task& t, const Vector& e, Vector& f, bool newton) {
  const TaskParameters& p = t.parameters();
  if (newton) {
    f = e;
    return;
  }
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

void Step::Impl::set_parameters(Task& t, const TaskParameters& p) {  // Task.set_weight
  check_size(p.weight, t.size, "weight");
  t.kept.clear();
  t.unit_weights = true;
  for (int i = 0; i < p.weight.size(); ++i) {
    if (p.weight(i) > 0) t.kept.push_back(i);
    if (p.weight(i) != 1.0) t.unit_weights = false;
  }
}

void Step::Impl::set_frame(Task& t, const FrameTaskDescription& d) {
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

void Step::Impl::set_com(Task& t, const CoMTaskDescription& d) {  // CoMTask
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

void Step::Impl::set_posture(Task& t, const PostureDescription& d) {  // PostureTask.set_weight
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

// Ad((R_wc, p_wb)^-1) D: the relative motion at b's origin in c's axes (Kinematics.relative_jacobian).
void Step::Impl::move(const Matrix3& R_wc, const Vector3& p_wb, const Matrix& Dm, Matrix& out) const {
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
void Step::Impl::task_rows(const Task& t, const Vector& q, Rows& out) {
  const int nv = model.nv;
  Matrix& J = out.J;
  Vector &e = out.e, &f = out.f, &ff = out.ff;
  if (t.kind == TaskKind::kPosture) {
    e.resize(nv);
    pinocchio::difference(model, t.posture.target, q, e);
    if (t.identity_scale != 0.0) {  // PostureTask.rows, identity form
      feedback_of(t, e, f, newton);
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
    center_of_mass_in(data, com_world, com_J_world, t.com.frame, jacobian(t.com.frame), com_p, com_J);
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
      product6.noalias() = Jlog * moved;  // J = Jlog moved, through Eigen's temporary's type
      J = product6;
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
      rotated3.noalias() = T_wb.rotation().transpose() * D.bottomRows<3>();
      product3.noalias() = Jlog * rotated3;  // J = Jlog (R_wb^T D_w), through Eigen's temporaries' types
      J = product3;
      ff = Jlog * (R_err.transpose() * Vector3(t.frame.velocity));
      e = w;
    }
  }
  if (newton) ff.setZero();
  feedback_of(t, e, f, newton);
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

// Controller._level for every level; failing: a task whose rows are not finite.
void Step::Impl::assemble(const Vector& q, const std::vector<ExternalRows>& external, int& failing) {
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
  level_systems.resize(levels.size());  // kept from step to step: their vectors keep their memory
  level_storage.resize(levels.size());
  for (size_t k = 0; k < levels.size(); ++k) {
    Level& level = level_systems[k];
    level.A = nullptr;
    level.identity_scale = level.extra_damping = 0.0;
    const std::vector<int>& members = levels[k];
    if (members.size() == 1 && rows[members[0]].identity) {
      const Task& t = tasks[members[0]];
      level.b = rows[members[0]].b;
      level.identity_scale = t.identity_scale;
      level.mask = t.mask;
    } else {
      level.mask.resize(0);
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
    if (newton) {
      level.extra_damping = lm;
    } else if (error_damping > 0 && level.A != nullptr) {  // (an identity level: undamped)
      double asked = 0.0;
      for (int index : members) asked += rows[index].feedback.squaredNorm();
      asked *= dt * dt;
      level.extra_damping = error_damping * std::max(asked - step_threshold * step_threshold, 0.0);
    }
  }
}

}  // namespace reljac

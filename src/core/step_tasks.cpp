// The task kinds of the compiled step (one CompiledTask class each; each level's system from their
// rows is step_rows.cpp); see step_impl.hpp. Each class names the Python task it mirrors, its specification and oracle.
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "relative.hpp"
#include "step_impl.hpp"

namespace reljac {

void check_size(const Vector& x, long size, const char* what) {
  if (x.size() != size) throw std::invalid_argument(std::string(what) + " has the wrong size");
}

namespace {

// f.segment(start, length) scaled down to norm `cap` when longer (Task._feedback).
void cap_part(Vector& f, int start, int length, double cap) {
  const double norm = f.segment(start, length).norm();
  if (norm > cap) f.segment(start, length) *= cap / norm;
}

}  // namespace

void CompiledTask::set_parameters(const TaskParameters& p, int rows) {  // Task.set_weight
  check_size(p.weight, rows, "weight");
  if (p.bounded() || p.upper.size()) {  // Task.set_bounds' checks
    check_size(p.lower, rows, "lower bound");
    check_size(p.upper, rows, "upper bound");
    for (int i = 0; i < rows; ++i)
      if (std::isnan(p.lower(i)) || std::isnan(p.upper(i)) || p.lower(i) > p.upper(i))
        throw std::invalid_argument("bounds must be numbers (+-inf: open) with lower <= upper");
  }
  size = rows;
  parameters = p;
  kept.clear();
  unit_weights = true;
  for (int i = 0; i < p.weight.size(); ++i) {
    if (p.weight(i) > 0) kept.push_back(i);
    if (p.weight(i) != 1.0) unit_weights = false;
  }
}

void CompiledTask::cap(Vector& f) const { cap_part(f, 0, static_cast<int>(f.size()), parameters.max_speed[0]); }

void CompiledTask::set_target(const Step::Impl&, const Vector&) {
  throw std::invalid_argument("this task has no target the core holds");
}

void CompiledTask::error_norms(const Step::Impl&, const Vector& e, double& first, double& second) const {
  first = second = 0.0;  // squared, then their roots
  for (int i = 0; i < e.size(); ++i)
    if (parameters.weight(i) > 0) first += e(i) * e(i);
  first = std::sqrt(first);
}

namespace {

// RelativeFrameTask (pose), RelativePositionTask, RelativeOrientationTask: the motion of frame b
// measured in frame a.
class FrameTask : public CompiledTask {
 public:
  void update(Step::Impl& s, const TaskDescription& description) override {
    const auto& d = described_as<FrameTaskDescription>(description, "frame task");
    set_parameters(d.parameters, d.kind == FrameKind::kPose ? 6 : 3);
    check_size(d.velocity, size, "target velocity");
    s.use_frame(d.frame_a);
    s.use_frame(d.frame_b);
    support_columns(s.model, d.frame_a, d.frame_b, columns_);
    d_ = d;
    set_target_matrix(d.target);
    moving_target_ = d.velocity.cwiseAbs().maxCoeff() > 0;
  }

  bool compute(Step::Impl& s, const Vector&, Rows& out) override {
    Vector &e = out.e, &ff = out.ff;
    const int a = d_.frame_a, b = d_.frame_b;
    const pinocchio::SE3& T_wa = s.data.oMf[a];
    const pinocchio::SE3& T_wb = s.data.oMf[b];
    const pinocchio::SE3 T_ab = T_wa.actInv(T_wb);
    // J's columns outside the frames' supports are zero (D = J_b - J_a is): only the others are computed
    const int nv = s.model.nv;
    const Matrix &J_a = s.jacobian(a), &J_b = s.jacobian(b);
    if (d_.kind == FrameKind::kPose) {  // RelativeFrameTask.compute
      const pinocchio::SE3 T_err = target_.actInv(T_ab);
      e = pinocchio::log6(T_err).toVector();
      Matrix6 Jlog;
      pinocchio::Jlog6(T_err, Jlog);
      const Matrix3& R = T_wb.rotation();
      const Vector3& p = T_wb.translation();
      out.J.setZero(6, nv);
      for (int k : columns_) {  // J = Jlog moved, column by column
        Vector6 moved;
        move_column(R, p, J_b.col(k) - J_a.col(k), moved);
        out.J.col(k).noalias() = Jlog * moved;
      }
      ff = Vector::Zero(6);
      if (moving_target_) ff = Jlog * (T_err.inverse().toActionMatrix() * Vector6(d_.velocity));
    } else if (d_.kind == FrameKind::kPosition) {  // RelativePositionTask.compute
      e = T_ab.translation() - target_.translation();
      const Matrix3& R = T_wa.rotation();
      const Vector3& p = T_wb.translation();
      out.J.setZero(3, nv);
      for (int k : columns_) {
        Vector6 moved;
        move_column(R, p, J_b.col(k) - J_a.col(k), moved);
        out.J.col(k) = moved.head<3>();
      }
      ff = d_.velocity;
    } else {  // RelativeOrientationTask.compute
      const Matrix3 R_err = target_.rotation().transpose() * T_ab.rotation();
      double theta;
      const Vector3 w = pinocchio::log3(R_err, theta);
      Matrix3 Jlog;
      pinocchio::Jlog3(theta, w, Jlog);
      const Matrix3& R = T_wb.rotation();
      out.J.setZero(3, nv);
      for (int k : columns_) {  // J = Jlog (R_wb^T D_w)
        const Vector3 rotated = R.transpose() * Vector3(J_b.col(k).tail<3>() - J_a.col(k).tail<3>());
        out.J.col(k).noalias() = Jlog * rotated;
      }
      ff = Jlog * (R_err.transpose() * Vector3(d_.velocity));
      e = w;
    }
    return true;
  }

  void cap(Vector& f) const override {
    if (d_.kind == FrameKind::kPose) {
      cap_part(f, 0, 3, parameters.max_speed[0]);
      cap_part(f, 3, 3, parameters.max_speed[1]);
    } else {
      cap_part(f, 0, static_cast<int>(f.size()), parameters.max_speed[d_.kind == FrameKind::kOrientation ? 1 : 0]);
    }
  }

  void set_target(const Step::Impl&, const Vector& values) override {
    check_size(values, 16, "frame target (4 x 4)");
    d_.target = Eigen::Map<const Eigen::Matrix<double, 4, 4, Eigen::RowMajor>>(values.data());
    set_target_matrix(d_.target);
  }

  // A pose's (position, orientation) norms: |p_err| of T_err = T_t^-1 T_ab and |log3(R_err)|;
  // with bounds, the norms of the halves of the violation e (RelativeFrameTask.error_norms).
  void error_norms(const Step::Impl& s, const Vector& e, double& first, double& second) const override {
    if (d_.kind != FrameKind::kPose) return CompiledTask::error_norms(s, e, first, second);
    const Vector& w = parameters.weight;
    const pinocchio::SE3 T_err = target_.actInv(s.data.oMf[d_.frame_a].actInv(s.data.oMf[d_.frame_b]));
    const Vector3 p = parameters.bounded() ? Vector3(e.head<3>()) : Vector3(T_err.translation());
    first = second = 0.0;
    for (int i = 0; i < 3; ++i) {
      if (w(i) > 0) first += p(i) * p(i);
      if (w(3 + i) > 0) second += e(3 + i) * e(3 + i);
    }
    first = std::sqrt(first);
    second = std::sqrt(second);
  }

 private:
  void set_target_matrix(const Eigen::Matrix4d& T) {
    target_ = pinocchio::SE3(Matrix3(T.topLeftCorner<3, 3>()), Vector3(T.topRightCorner<3, 1>()));
  }

  // A column of J_ab at b's origin in c's axes from that column d of D = J_b - J_a
  // (Kinematics.relative_jacobian).
  static void move_column(const Matrix3& R_wc, const Vector3& p_wb, const Vector6& d, Vector6& out) {
    const Vector3 w = d.tail<3>();
    out.head<3>() = relative_linear_velocity(R_wc, p_wb, Vector3(d.head<3>()), w);
    out.tail<3>() = R_wc.transpose() * w;
  }

  // The velocity columns where the WORLD Jacobian of frame a or b can be non-zero, ascending: those
  // of the joints supporting either frame (every column in a model with mimic joints, whose
  // Jacobians also fill a leader's column).
  static void support_columns(const PinModel& model, int frame_a, int frame_b, std::vector<int>& out) {
    std::vector<char> used(model.nv, model.mimicking_joints.empty() ? 0 : 1);
    for (int frame : {frame_a, frame_b})
      for (const auto joint : model.supports[model.frames[frame].parentJoint]) {
        if (joint == 0) continue;  // the universe: no column
        for (int c = model.joints[joint].idx_v(); c < model.joints[joint].idx_v() + model.joints[joint].nv(); ++c)
          used[c] = 1;
      }
    out.clear();
    for (int c = 0; c < model.nv; ++c)
      if (used[c]) out.push_back(c);
  }

  FrameTaskDescription d_;
  std::vector<int> columns_;  // support_columns of the task's frames
  pinocchio::SE3 target_;
  bool moving_target_ = false;  // a non-zero target velocity
};

// PostureTask: e = difference(target, q), nv rows; the identity form A = c diag(mask) when its
// kept rows have one weight c and no joint of more than one velocity.
class PostureTask : public CompiledTask {
 public:
  void update(Step::Impl& s, const TaskDescription& description) override {  // PostureTask.set_weight
    const auto& d = described_as<PostureDescription>(description, "posture task");
    set_parameters(d.parameters, s.model.nv);
    check_size(d.target, s.model.nq, "posture target");
    target_ = d.target;
    mask = (d.parameters.weight.array() > 0).cast<double>();
    identity_scale = 0.0;
    bool uniform = !kept.empty(), curved_kept = false;
    for (int i : kept) {
      uniform = uniform && d.parameters.weight(i) == d.parameters.weight(kept[0]);
      curved_kept = curved_kept || s.curved[i];
    }
    if (uniform && !curved_kept) identity_scale = d.parameters.weight(kept[0]);
  }

  bool compute(Step::Impl& s, const Vector& q, Rows& out) override {
    const int nv = s.model.nv;
    Vector& e = out.e;
    e.resize(nv);
    pinocchio::difference(s.model, target_, q, e);
    if (identity_scale != 0.0 && parameters.bounded()) {  // PostureTask.rows, a band
      out.ff.setZero(nv);
      s.bound_rates(*this, out.ff, out);
      out.feedback = mask.cwiseProduct(identity_scale * out.f);
      out.b = mask.cwiseProduct(identity_scale * out.rate);
      out.lower.resize(nv);
      out.upper.resize(nv);
      for (int i = 0; i < nv; ++i) {  // open on masked rows
        out.lower(i) = mask(i) > 0 ? identity_scale * out.rate_lower(i) : -kInf;
        out.upper(i) = mask(i) > 0 ? identity_scale * out.rate_upper(i) : kInf;
      }
      out.bounded = out.identity = true;
      return false;
    }
    if (identity_scale != 0.0) {  // PostureTask.rows, identity form
      s.feedback(*this, e, out.f);
      out.feedback = mask.cwiseProduct(identity_scale * out.f);
      out.b = -out.feedback;
      out.identity = true;
      return false;
    }
    if (s.euclidean) {
      out.J = Matrix::Identity(nv, nv);
    } else {
      out.J.setZero(nv, nv);
      pinocchio::dDifference(s.model, target_, q, out.J, pinocchio::ARG1);
    }
    out.ff = Vector::Zero(nv);
    return true;
  }

  void set_target(const Step::Impl& s, const Vector& values) override {
    check_size(values, s.model.nq, "posture target");
    target_ = values;
  }

 private:
  Vector target_;  // (nq)
};

// CoMTask: e = p_ac[axes] - target, the centre of mass measured and expressed in frame a.
class CoMTask : public CompiledTask {
 public:
  void update(Step::Impl& s, const TaskDescription& description) override {
    const auto& d = described_as<CoMTaskDescription>(description, "CoM task");
    const int rows = static_cast<int>(d.axes.size());
    if (rows < 1 || rows > 3 || (d.axes.array() < 0).any() || (d.axes.array() > 2).any())
      throw std::invalid_argument("CoM axes must be 1 to 3 indices among 0, 1, 2");
    set_parameters(d.parameters, rows);
    check_size(d.target, size, "CoM target");
    check_size(d.velocity, size, "CoM target velocity");
    s.use_frame(d.frame);
    d_ = d;
    s.needs_com = true;
  }

  bool compute(Step::Impl& s, const Vector&, Rows& out) override {  // CoMTask.compute
    s.center_of_mass(d_.frame);
    out.e.resize(size);
    out.J.resize(size, s.model.nv);
    for (int i = 0; i < size; ++i) {
      out.e(i) = s.com_p(d_.axes(i)) - d_.target(i);
      out.J.row(i) = s.com_J.row(d_.axes(i));
    }
    out.ff = d_.velocity;
    return true;
  }

  void set_target(const Step::Impl&, const Vector& values) override {
    check_size(values, size, "CoM target");
    d_.target = values;
  }

 private:
  CoMTaskDescription d_;
};

// A Python task: its rows, computed in Python this step (ExternalRows).
class ExternalTask : public CompiledTask {
 public:
  void update(Step::Impl& s, const TaskDescription& description) override {
    size = described_as<ExternalTaskDescription>(description, "Python task").size;
    if (index_ < 0) index_ = s.external_tasks++;
  }
  bool compute(Step::Impl& s, const Vector&, Rows& out) override {
    const ExternalRows& x = s.external_task_rows->at(index_);
    out.identity = false;
    out.A = Eigen::Map<const RowMatrix>(x.A, x.rows, s.model.nv);
    out.b = Eigen::Map<const Vector>(x.b, x.rows);
    out.feedback = Eigen::Map<const Vector>(x.feedback, x.rows);
    out.bounded = x.lower != nullptr && !s.newton;
    if (out.bounded) {
      out.lower = Eigen::Map<const Vector>(x.lower, x.rows);
      out.upper = Eigen::Map<const Vector>(x.upper, x.rows);
    }
    return false;
  }
  bool external() const override { return true; }

 private:
  int index_ = -1;  // among the external tasks
};

// A task whose first description has not come yet (it comes before the first step).
class PendingTask : public CompiledTask {
 public:
  void update(Step::Impl&, const TaskDescription& description) override {
    size = described_as<PendingTaskDescription>(description, "pending task").size;
  }
  bool compute(Step::Impl&, const Vector&, Rows&) override {
    throw std::logic_error("a task was not described before the step");
  }
  bool pending() const override { return true; }
};

}  // namespace

std::unique_ptr<CompiledTask> FrameTaskDescription::make() const { return std::make_unique<FrameTask>(); }
std::unique_ptr<CompiledTask> PostureDescription::make() const { return std::make_unique<PostureTask>(); }
std::unique_ptr<CompiledTask> CoMTaskDescription::make() const { return std::make_unique<CoMTask>(); }
std::unique_ptr<CompiledTask> ExternalTaskDescription::make() const { return std::make_unique<ExternalTask>(); }
std::unique_ptr<CompiledTask> PendingTaskDescription::make() const { return std::make_unique<PendingTask>(); }

}  // namespace reljac

// RelativeFrameTask (pose), RelativePositionTask, RelativeOrientationTask: the motion of frame b
// measured in frame a (reljac/ik/tasks/frames.py, the specification and oracle). Pinocchio's
// log6/Jlog6, log3/Jlog3.
#include "pinocchio/spatial/explog.hpp"
#include "schema.hpp"

namespace reljac {

namespace {

enum FrameKind { kPose = 0, kPosition = 1, kOrientation = 2 };

struct FrameTaskDescription : TaskDescription {
  int kind = kPose;
  int frame_a = 0, frame_b = 0;  // Pinocchio frame ids (0: the universe)
  TaskParameters parameters;
  Eigen::Matrix4d target = Eigen::Matrix4d::Identity();  // homogeneous T_ab target (parts unused by the kind: identity)
  Vector velocity;                                       // (size) target velocity for feed-forward
  std::unique_ptr<CompiledTask> make() const override;
};

const KindSchema frame_schema =
    task_kind<FrameTaskDescription>("FrameTaskDescription",
                                    "The motion of frame b measured in frame a (RelativeFrameTask, "
                                    "RelativePositionTask, RelativeOrientationTask, FrameTask).")
        .choice("kind", &FrameTaskDescription::kind, {"pose", "position", "orientation"},
                "'pose' (6 rows: log6), 'position' (3: p_ab) or 'orientation' (3: log3)")
        .field("frame_a", &FrameTaskDescription::frame_a, "Pinocchio frame id of a")
        .field("frame_b", &FrameTaskDescription::frame_b, "Pinocchio frame id of b")
        .field("target", &FrameTaskDescription::target, "(4, 4) homogeneous T_ab target")
        .field("target_velocity", &FrameTaskDescription::velocity, "(size,) target velocity [m/s, rad/s]")
        .parameters(&FrameTaskDescription::parameters);

// A column of J_ab at b's origin in c's axes from that column d of D = J_b - J_a
// (Kinematics.relative_jacobian).
void move_column(const Matrix3& R_wc, const Vector3& p_wb, const Vector6& d, Vector6& out) {
  const Vector3 w = d.tail<3>();
  out.head<3>() = relative_linear_velocity(R_wc, p_wb, Vector3(d.head<3>()), w);
  out.tail<3>() = R_wc.transpose() * w;
}

class FrameTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {
    const auto& d = described_as<FrameTaskDescription>(description, "frame task");
    if (d.kind < kPose || d.kind > kOrientation) throw std::invalid_argument("frame task kind out of range");
    set_parameters(d.parameters, d.kind == kPose ? 6 : 3);
    check_size(d.velocity, size, "target velocity");
    s.use_frame(d.frame_a);
    s.use_frame(d.frame_b);
    s.support_columns(d.frame_a, d.frame_b, columns_);
    d_ = d;
    set_target_matrix(d.target);
    moving_target_ = d.velocity.cwiseAbs().maxCoeff() > 0;
  }

  bool compute(StepContext& s, const Vector&, Rows& out) override {
    Vector &e = out.e, &ff = out.ff;
    const int a = d_.frame_a, b = d_.frame_b;
    const SE3& T_wa = s.placement(a);
    const SE3& T_wb = s.placement(b);
    const SE3 T_ab = T_wa.actInv(T_wb);
    // J's columns outside the frames' supports are zero (D = J_b - J_a is): only the others are computed
    const int nv = s.nv();
    const Matrix &J_a = s.jacobian(a), &J_b = s.jacobian(b);
    if (d_.kind == kPose) {  // RelativeFrameTask.compute
      const SE3 T_err = target_.actInv(T_ab);
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
    } else if (d_.kind == kPosition) {  // RelativePositionTask.compute
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
    if (d_.kind == kPose) return cap_pose(f, parameters);
    const double limit = parameters.max_speed[d_.kind == kOrientation ? 1 : 0];
    const double norm = f.norm();
    if (norm > limit) f *= limit / norm;
  }

  void set_target(const StepContext&, const Vector& values) override {
    check_size(values, 16, "frame target (4 x 4)");
    d_.target = Eigen::Map<const Eigen::Matrix<double, 4, 4, Eigen::RowMajor>>(values.data());
    set_target_matrix(d_.target);
  }

  // A pose's (position, orientation) norms: |p_err| of T_err = T_t^-1 T_ab and |log3(R_err)|;
  // with bounds, the norms of the halves of the violation e (RelativeFrameTask.error_norms).
  void error_norms(const StepContext& s, const Vector& e, double& first, double& second) const override {
    if (d_.kind != kPose) return CompiledTask::error_norms(s, e, first, second);
    const Vector& w = parameters.weight;
    const SE3 T_err = target_.actInv(s.placement(d_.frame_a).actInv(s.placement(d_.frame_b)));
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
    target_ = SE3(Matrix3(T.topLeftCorner<3, 3>()), Vector3(T.topRightCorner<3, 1>()));
  }

  FrameTaskDescription d_;
  std::vector<int> columns_;  // support_columns of the task's frames
  SE3 target_;
  bool moving_target_ = false;  // a non-zero target velocity
};

std::unique_ptr<CompiledTask> FrameTaskDescription::make() const { return std::make_unique<FrameTask>(); }

}  // namespace

}  // namespace reljac

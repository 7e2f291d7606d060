// The distance between two frames' origins (DistanceTask, reljac/ik/tasks/distance.py, its
// specification and oracle; tests/test_distance_task.py): a task kind in one file, its
// description, its class and its schema (kind.hpp, schema.hpp).
//
// e = |p_ab| - d (1 row) [m], with p_ab b's origin measured and expressed in a; J = u^T J_ab^v,
// u = p_ab / |p_ab| (zero where the origins coincide), J_ab^v J_ab's linear rows in a's axes.
#include "schema.hpp"

namespace reljac {

namespace {

struct DistanceTaskDescription : TaskDescription {
  int frame_a = 0, frame_b = 0;  // Pinocchio frame ids
  TaskParameters parameters;
  double target = 0.0, velocity = 0.0;  // [m, m/s]
  std::unique_ptr<CompiledTask> make() const override;
};

const KindSchema distance_schema =
    task_kind<DistanceTaskDescription>("DistanceTaskDescription", "The distance between two frames' origins (DistanceTask).")
        .field("frame_a", &DistanceTaskDescription::frame_a, "Pinocchio frame id of a")
        .field("frame_b", &DistanceTaskDescription::frame_b, "Pinocchio frame id of b")
        .field("target", &DistanceTaskDescription::target, "target distance [m]")
        .field("target_velocity", &DistanceTaskDescription::velocity, "its rate [m/s]")
        .parameters(&DistanceTaskDescription::parameters);

class DistanceTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {
    d_ = described_as<DistanceTaskDescription>(description, "distance task");
    set_parameters(d_.parameters, 1);
    s.use_frame(d_.frame_a);
    s.use_frame(d_.frame_b);
  }

  bool compute(StepContext& s, const Vector&, Rows& out) override {  // DistanceTask.compute
    const SE3& T_wa = s.placement(d_.frame_a);
    const SE3& T_wb = s.placement(d_.frame_b);
    const Vector3 p_ab = T_wa.actInv(T_wb).translation();
    const double distance = p_ab.norm();
    const Vector3 u = distance > 0 ? Vector3(p_ab / distance) : Vector3::Zero();
    const Matrix& J_a = s.jacobian(d_.frame_a);
    const Matrix& J_b = s.jacobian(d_.frame_b);
    const int nv = s.nv();
    out.J.resize(1, nv);
    for (int k = 0; k < nv; ++k) {
      const Vector3 d_v = J_b.col(k).head<3>() - J_a.col(k).head<3>();
      const Vector3 d_w = J_b.col(k).tail<3>() - J_a.col(k).tail<3>();
      out.J(0, k) = u.dot(relative_linear_velocity(T_wa.rotation(), T_wb.translation(), d_v, d_w));
    }
    out.e.resize(1);
    out.e(0) = distance - d_.target;
    out.ff.resize(1);
    out.ff(0) = d_.velocity;
    return true;
  }

  void set_target(const StepContext&, const Vector& values) override {
    check_size(values, 1, "distance target");
    d_.target = values(0);
  }

 private:
  DistanceTaskDescription d_;
};

std::unique_ptr<CompiledTask> DistanceTaskDescription::make() const { return std::make_unique<DistanceTask>(); }

}  // namespace

}  // namespace reljac

// The origin of frame b in the intersection of k half-spaces of frame a, N p_ab <= c (HalfSpaceTask,
// reljac/ik/tasks/regions.py, its specification and oracle; tests/test_compiled_kinds.py).
//
// e = N p_ab - c (k rows) [m], N (k x 3) the unit outward normals in a's axes; J = N J_ab^v
// (J_ab's linear rows in a's axes: 3 x nv, formed once whatever k). Its bounds (e <= 0) come with
// the task parameters.
#include "schema.hpp"

namespace reljac {

namespace {

struct HalfSpaceTaskDescription : TaskDescription {
  int frame_a = 0, frame_b = 0;  // Pinocchio frame ids
  RowMatrix normals;             // (k x 3) unit outward normals, in a's axes
  Vector offsets;                // (k) [m]
  TaskParameters parameters;
  std::unique_ptr<CompiledTask> make() const override;
};

const KindSchema half_space_schema =
    task_kind<HalfSpaceTaskDescription>("HalfSpaceTaskDescription",
                                        "The origin of frame b in k half-spaces of frame a, N p_ab <= c (HalfSpaceTask).")
        .field("frame_a", &HalfSpaceTaskDescription::frame_a, "Pinocchio frame id of a")
        .field("frame_b", &HalfSpaceTaskDescription::frame_b, "Pinocchio frame id of b")
        .field("normals", &HalfSpaceTaskDescription::normals, "(k, 3) unit outward normals, in a's axes")
        .field("offsets", &HalfSpaceTaskDescription::offsets, "(k,) the planes' offsets c [m]")
        .parameters(&HalfSpaceTaskDescription::parameters);

class HalfSpaceTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {
    const auto& d = described_as<HalfSpaceTaskDescription>(description, "half-space task");
    if (d.normals.cols() != 3 || d.normals.rows() != d.offsets.size() || d.offsets.size() < 1)
      throw std::invalid_argument("a half-space task needs normals (k x 3) and k offsets");
    set_parameters(d.parameters, static_cast<int>(d.offsets.size()));
    s.use_frame(d.frame_a);
    s.use_frame(d.frame_b);
    d_ = d;
  }

  bool compute(StepContext& s, const Vector&, Rows& out) override {  // HalfSpaceTask.compute
    const SE3& T_wa = s.placement(d_.frame_a);
    const SE3& T_wb = s.placement(d_.frame_b);
    const Matrix3& R_wa = T_wa.rotation();
    const Vector3 p_ab = R_wa.transpose() * (T_wb.translation() - T_wa.translation());
    const Matrix& J_a = s.jacobian(d_.frame_a);
    const Matrix& J_b = s.jacobian(d_.frame_b);
    const int nv = s.nv();
    linear_.resize(3, nv);
    for (int k = 0; k < nv; ++k)
      linear_.col(k) = relative_linear_velocity(R_wa, T_wb.translation(), J_b.col(k).head<3>() - J_a.col(k).head<3>(),
                                                J_b.col(k).tail<3>() - J_a.col(k).tail<3>());
    out.e.noalias() = d_.normals * p_ab;
    out.e -= d_.offsets;
    out.J.resize(size, nv);
    out.J.noalias() = d_.normals * linear_;
    out.ff.setZero(size);
    return true;
  }

 private:
  HalfSpaceTaskDescription d_;
  Matrix linear_;  // (3 x nv) J_ab's linear rows
};

std::unique_ptr<CompiledTask> HalfSpaceTaskDescription::make() const { return std::make_unique<HalfSpaceTask>(); }

}  // namespace

}  // namespace reljac

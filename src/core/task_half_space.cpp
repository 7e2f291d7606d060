// The origin of frame b in the intersection of k half-spaces of frame a, N p_ab <= c (HalfSpaceTask,
// reljac/ik/tasks/regions.py, its specification and oracle; tests/test_compiled_kinds.py).
//
// e = N p_ab - c (k rows) [m], N (k x 3) the unit outward normals in a's axes; J = N J_ab^v
// (J_ab's linear rows in a's axes), as one (k x 6) matrix times J_b - J_a's columns in the frames'
// supports (compute). Its bounds
// (e <= 0) come with the task parameters.
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
    s.support_columns(d.frame_a, d.frame_b, columns_);
    d_ = d;
  }

  bool compute(StepContext& s, const Vector&, Rows& out) override {  // HalfSpaceTask.compute
    const SE3& T_wa = s.placement(d_.frame_a);
    const SE3& T_wb = s.placement(d_.frame_b);
    const Matrix3& R_wa = T_wa.rotation();
    const Vector3 p_ab = R_wa.transpose() * (T_wb.translation() - T_wa.translation());
    const Matrix& J_a = s.jacobian(d_.frame_a);
    const Matrix& J_b = s.jacobian(d_.frame_b);
    const int nv = s.nv(), k = static_cast<int>(d_.offsets.size());
    // row i of N J_ab^v: n_i^T R_wa^T (d_v - p_wb x d_w) = u_i^T d_v - (u_i x p_wb)^T d_w, u_i = R_wa n_i
    // the normal in the world's axes and d = J_b - J_a a column (relative_linear_velocity), so
    // J = C (J_b - J_a) with C's row i [u_i^T, -(u_i x p_wb)^T] (k x 6): one product, no 3 x nv rows
    coefficients_.resize(k, 6);
    for (int i = 0; i < k; ++i) {
      const Vector3 u = R_wa * d_.normals.row(i).transpose();
      coefficients_.row(i).head<3>() = u.transpose();
      coefficients_.row(i).tail<3>() = -u.cross(T_wb.translation()).transpose();
    }
    out.e.noalias() = d_.normals * p_ab;
    out.e -= d_.offsets;
    out.J.setZero(k, nv);  // (J_b - J_a is zero outside the frames' supports)
    for (int c : columns_) {
      const Vector6 d = J_b.col(c) - J_a.col(c);
      out.J.col(c).noalias() = coefficients_ * d;
    }
    out.ff.setZero(k);
    return true;
  }

 private:
  HalfSpaceTaskDescription d_;
  RowMatrix coefficients_;    // (k x 6) C above
  std::vector<int> columns_;  // support_columns of the task's frames
};

std::unique_ptr<CompiledTask> HalfSpaceTaskDescription::make() const { return std::make_unique<HalfSpaceTask>(); }

}  // namespace

}  // namespace reljac

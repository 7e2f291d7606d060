// An axis of frame b within a cone about an axis of frame a (ConeTask, reljac/ik/tasks/regions.py,
// its specification and oracle; tests/test_compiled_kinds.py): a task kind in one file.
//
// e = theta = atan2(|w x a|, w . a) [rad] (1 row), w = R_ab u_b the axis of b in a's axes, a the
// cone's axis; J = -n^T J_ab^w (J_ab's angular rows, measured and expressed in a) with
// n = (w x a) / |w x a|; a zero row where the axes are aligned; where they are opposite, n a fixed
// unit vector perpendicular to a. Its bound (the half-angle) comes with the task parameters.
#include <cmath>

#include "schema.hpp"

namespace reljac {

namespace {

constexpr double kTinySine = 1e-9;  // reljac.ik.tasks.regions.TINY_SINE

struct ConeTaskDescription : TaskDescription {
  int frame_a = 0, frame_b = 0;        // Pinocchio frame ids
  Vector3 axis_a = Vector3::UnitZ();   // the cone's axis, unit, in a's axes
  Vector3 axis_b = Vector3::UnitZ();   // b's axis, unit, in b's axes
  TaskParameters parameters;           // the half-angle is the upper bound [rad]
  std::unique_ptr<CompiledTask> make() const override;
};

const KindSchema cone_schema =
    task_kind<ConeTaskDescription>("ConeTaskDescription", "An axis of frame b within a cone about an axis of frame a (ConeTask).")
        .field("frame_a", &ConeTaskDescription::frame_a, "Pinocchio frame id of a")
        .field("frame_b", &ConeTaskDescription::frame_b, "Pinocchio frame id of b")
        .field("axis_a", &ConeTaskDescription::axis_a, "(3,) the cone's axis, unit, in a's axes")
        .field("axis_b", &ConeTaskDescription::axis_b, "(3,) b's axis, unit, in b's axes")
        .parameters(&ConeTaskDescription::parameters);

class ConeTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {
    d_ = described_as<ConeTaskDescription>(description, "cone task");
    if (std::abs(d_.axis_a.norm() - 1.0) > 1e-9 || std::abs(d_.axis_b.norm() - 1.0) > 1e-9)
      throw std::invalid_argument("a cone's axes must be unit vectors");
    set_parameters(d_.parameters, 1);
    s.use_frame(d_.frame_a);
    s.use_frame(d_.frame_b);
    s.support_columns(d_.frame_a, d_.frame_b, columns_);
    // the perpendicular used where the axes are opposite: a x the basis vector least along a
    int k = 0;
    for (int i = 1; i < 3; ++i)
      if (std::abs(d_.axis_a(i)) < std::abs(d_.axis_a(k))) k = i;
    opposite_ = d_.axis_a.cross(Vector3::Unit(k)).normalized();
  }

  bool compute(StepContext& s, const Vector&, Rows& out) override {  // ConeTask.compute
    const SE3& T_wa = s.placement(d_.frame_a);
    const SE3& T_wb = s.placement(d_.frame_b);
    const Matrix3& R_wa = T_wa.rotation();
    const Vector3 w = R_wa.transpose() * (T_wb.rotation() * d_.axis_b);  // b's axis in a's axes
    const Vector3 cross = w.cross(d_.axis_a);
    const double sine = cross.norm(), cosine = w.dot(d_.axis_a);
    const int nv = s.nv();
    out.e.resize(1);
    out.e(0) = std::atan2(sine, cosine);
    out.ff.setZero(1);
    out.J.setZero(1, nv);
    Vector3 n;
    if (sine > kTinySine)
      n = cross / sine;
    else if (cosine > 0)
      return true;  // aligned: the angle's gradient vanishes (a zero row)
    else
      n = opposite_;
    const Vector3 n_world = R_wa * n;  // -n . R_wa^T (w_b - w_a), column by column
    const Matrix& J_a = s.jacobian(d_.frame_a);
    const Matrix& J_b = s.jacobian(d_.frame_b);
    for (int c : columns_)  // (zero outside the frames' supports)
      out.J(0, c) = -n_world.dot(J_b.col(c).tail<3>() - J_a.col(c).tail<3>());
    return true;
  }

 private:
  ConeTaskDescription d_;
  Vector3 opposite_;
  std::vector<int> columns_;  // support_columns of the task's frames
};

std::unique_ptr<CompiledTask> ConeTaskDescription::make() const { return std::make_unique<ConeTask>(); }

}  // namespace

}  // namespace reljac

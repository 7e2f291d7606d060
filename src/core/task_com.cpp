// CoMTask: e = p_ac[axes] - target, the centre of mass measured and expressed in frame a
// (reljac/ik/tasks/com.py, the specification and oracle).
#include "schema.hpp"

namespace reljac {

namespace {

struct CoMTaskDescription : TaskDescription {
  int frame = 0;          // Pinocchio frame id of a (0: the world)
  Eigen::VectorXi axes;   // (size) indices among x, y, z
  TaskParameters parameters;
  Vector target, velocity;  // (size) [m, m/s]
  std::unique_ptr<CompiledTask> make() const override;
};

const KindSchema com_schema =
    task_kind<CoMTaskDescription>("CoMTaskDescription", "The centre of mass measured in frame a (CoMTask).")
        .field("frame", &CoMTaskDescription::frame, "Pinocchio frame id of a (0: the world)")
        .field("axes", &CoMTaskDescription::axes, "(size,) indices among x, y, z")
        .field("target", &CoMTaskDescription::target, "(size,) target [m]")
        .field("target_velocity", &CoMTaskDescription::velocity, "(size,) target velocity [m/s]")
        .parameters(&CoMTaskDescription::parameters);

class CoMTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {
    const auto& d = described_as<CoMTaskDescription>(description, "CoM task");
    const int rows = static_cast<int>(d.axes.size());
    if (rows < 1 || rows > 3 || (d.axes.array() < 0).any() || (d.axes.array() > 2).any())
      throw std::invalid_argument("CoM axes must be 1 to 3 indices among 0, 1, 2");
    set_parameters(d.parameters, rows);
    check_size(d.target, size, "CoM target");
    check_size(d.velocity, size, "CoM target velocity");
    s.use_frame(d.frame);
    s.use_center_of_mass();
    d_ = d;
  }

  bool compute(StepContext& s, const Vector&, Rows& out) override {  // CoMTask.compute
    s.center_of_mass(d_.frame, p_, J_);
    out.e.resize(size);
    out.J.resize(size, s.nv());
    for (int i = 0; i < size; ++i) {
      out.e(i) = p_(d_.axes(i)) - d_.target(i);
      out.J.row(i) = J_.row(d_.axes(i));
    }
    out.ff = d_.velocity;
    return true;
  }

  void set_target(const StepContext&, const Vector& values) override {
    check_size(values, size, "CoM target");
    d_.target = values;
  }

 private:
  CoMTaskDescription d_;
  Vector3 p_;
  Matrix J_;  // (3 x nv)
};

std::unique_ptr<CompiledTask> CoMTaskDescription::make() const { return std::make_unique<CoMTask>(); }

}  // namespace

}  // namespace reljac

// A compiled task kind in one file: the distance between two frames' origins (DistanceTask,
// reljac/ik/distance.py, its specification and oracle; tests/test_distance_task.py). Its
// description, its CompiledTask class and its binding; the step, the bindings of the step and
// the Python compiled step know no kind by name, so nothing else changes for it.
//
// e = |p_ab| - d (1 row) [m], with p_ab b's origin measured and expressed in a; J = u^T J_ab^v,
// u = p_ab / |p_ab| (zero where the origins coincide), J_ab^v J_ab's linear rows in a's axes.
#include "bind_descriptions.hpp"
#include "relative.hpp"
#include "step_impl.hpp"

namespace reljac {

namespace {

struct DistanceTaskDescription : TaskDescription {
  int frame_a = 0, frame_b = 0;  // Pinocchio frame ids
  TaskParameters parameters;
  double target = 0.0, velocity = 0.0;  // [m, m/s]
  std::unique_ptr<CompiledTask> make() const override;
};

class DistanceTask : public CompiledTask {
 public:
  void update(Step::Impl& s, const TaskDescription& description) override {
    d_ = described_as<DistanceTaskDescription>(description, "distance task");
    set_parameters(d_.parameters, 1);
    s.use_frame(d_.frame_a);
    s.use_frame(d_.frame_b);
  }

  bool compute(Step::Impl& s, const Vector&, Rows& out) override {  // DistanceTask.compute
    const pinocchio::SE3& T_wa = s.data.oMf[d_.frame_a];
    const pinocchio::SE3& T_wb = s.data.oMf[d_.frame_b];
    const Vector3 p_ab = T_wa.actInv(T_wb).translation();
    const double distance = p_ab.norm();
    const Vector3 u = distance > 0 ? Vector3(p_ab / distance) : Vector3::Zero();
    const Matrix& J_a = s.jacobian(d_.frame_a);
    const Matrix& J_b = s.jacobian(d_.frame_b);
    const int nv = s.model.nv;
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

  void set_target(const Step::Impl&, const Vector& values) override {
    check_size(values, 1, "distance target");
    d_.target = values(0);
  }

 private:
  DistanceTaskDescription d_;
};

std::unique_ptr<CompiledTask> DistanceTaskDescription::make() const { return std::make_unique<DistanceTask>(); }

namespace py = pybind11;

const ModulePart binding([](py::module_& m) {
  py::class_<DistanceTaskDescription, TaskDescription> c(
      m, "DistanceTaskDescription", "The distance between two frames' origins (reljac.ik.distance.DistanceTaskDescription).");
  c.def(py::init([](int frame_a, int frame_b, double gain, const Vector& weight, const std::optional<Vector>& max_speed,
                       double target, double target_velocity, const std::optional<Vector>& lower, const std::optional<Vector>& upper) {
             DistanceTaskDescription d;
             d.frame_a = frame_a;
             d.frame_b = frame_b;
             d.parameters = parameters(gain, weight, max_speed, lower, upper);
             d.target = target;
             d.velocity = target_velocity;
             return d;
           }),
           py::arg("frame_a"), py::arg("frame_b"), py::arg("gain"), py::arg("weight"), py::arg("max_speed"),
           py::arg("target"), py::arg("target_velocity"), py::arg("lower") = py::none(), py::arg("upper") = py::none())
      .def_readonly("frame_a", &DistanceTaskDescription::frame_a, "Pinocchio frame id of a")
      .def_readonly("frame_b", &DistanceTaskDescription::frame_b, "Pinocchio frame id of b")
      .def_readonly("target", &DistanceTaskDescription::target, "target distance [m]")
      .def_readonly("target_velocity", &DistanceTaskDescription::velocity, "its rate [m/s]");
  parameter_fields(c);
});

}  // namespace

}  // namespace reljac

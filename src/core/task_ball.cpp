// A compiled task kind in one file: the norm of another task's error (BallTask, reljac/ik/bounds.py,
// its specification and oracle; tests/test_bounded_compiled_step.py). Its description (the inner
// task's description, held as the Python object it was given as), its CompiledTask class and its
// binding, as task_distance.cpp's.
//
// e = |e_in| over the rows the inner task keeps (weight > 0), 1 row [units of e_in]; J = u^T J_in,
// feed-forward u . ff_in with u = e_in / |e_in| (a zero row at |e_in| <= kTinyNorm). The inner
// task's own gain, weights and bounds are not used; the ball's bounds (0 <= |e| <= radius) are.
#include "bind_descriptions.hpp"
#include "step_impl.hpp"

namespace reljac {

namespace {

constexpr double kTinyNorm = 1e-12;  // reljac.ik.bounds.TINY_NORM

struct BallTaskDescription : TaskDescription {
  PyRef inner_object;                      // the inner task's description (a core object)
  const TaskDescription* inner = nullptr;  // ... as the C++ object it holds
  TaskParameters parameters;
  std::unique_ptr<CompiledTask> make() const override;
};

class BallTask : public CompiledTask {
 public:
  void update(Step::Impl& s, const TaskDescription& description) override {
    const auto& d = described_as<BallTaskDescription>(description, "ball task");
    if (d.inner == nullptr) throw std::invalid_argument("a ball task needs its inner task's description");
    std::unique_ptr<CompiledTask> inner = d.inner->make();
    if (inner->external() || inner->pending()) throw std::invalid_argument("a ball's inner task must be compiled");
    inner->update(s, *d.inner);
    set_parameters(d.parameters, 1);
    inner_ = std::move(inner);
  }

  bool compute(Step::Impl& s, const Vector& q, Rows& out) override {  // BallTask.compute
    if (!inner_->compute(s, q, inner_rows_))
      throw std::logic_error("a ball's inner task gave no Jacobian (a posture in its identity form)");
    const Vector& e = inner_rows_.e;
    const std::vector<int>& kept = inner_->kept;
    double squared = 0.0;
    for (int r : kept) squared += e(r) * e(r);
    const double norm = std::sqrt(squared);
    const int nv = s.model.nv;
    out.e.resize(1);
    out.e(0) = norm;
    out.J.setZero(1, nv);
    out.ff.setZero(1);
    if (norm <= kTinyNorm) return true;
    for (int r : kept) {
      const double u = e(r) / norm;
      out.J.row(0) += u * inner_rows_.J.row(r);
      out.ff(0) += u * inner_rows_.ff(r);
    }
    return true;
  }

 private:
  std::unique_ptr<CompiledTask> inner_;
  Rows inner_rows_;  // the inner task's terms (its buffers, kept from step to step)
};

std::unique_ptr<CompiledTask> BallTaskDescription::make() const { return std::make_unique<BallTask>(); }

namespace py = pybind11;

const ModulePart binding([](py::module_& m) {
  py::class_<BallTaskDescription, TaskDescription> c(
      m, "BallTaskDescription", "The norm of another task's error (reljac.ik.bounds.BallTaskDescription).");
  c.def(py::init([](const py::object& inner, double gain, const Vector& weight, const std::optional<Vector>& max_speed,
                    const std::optional<Vector>& lower, const std::optional<Vector>& upper) {
          BallTaskDescription d;
          d.inner = inner.cast<const TaskDescription*>();
          d.inner_object = PyRef(inner.ptr());
          d.parameters = parameters(gain, weight, max_speed, lower, upper);
          return d;
        }),
        py::arg("inner"), py::arg("gain"), py::arg("weight"), py::arg("max_speed"), py::arg("lower") = py::none(),
        py::arg("upper") = py::none())
      .def_property_readonly("inner", [](const BallTaskDescription& d) {
        return py::reinterpret_borrow<py::object>(d.inner_object.get());
      }, "the inner task's description (a core description object)");
  parameter_fields(c);
});

}  // namespace

}  // namespace reljac

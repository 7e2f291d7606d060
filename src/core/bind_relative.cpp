// Python bindings of the relative kinematics on Pinocchio (relative.hpp); see reljac/relative.py.
// Names and shapes only.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relative.hpp"

namespace py = pybind11;
using Vector = Eigen::VectorXd;

namespace {

// q of a one-shot function: with `check`, its values when it passes reljac's checks of a
// configuration (reljac::configuration_ok), else nullptr (the Python side then validates it and
// names what is wrong); without, q was validated in Python and must only be a float64 vector.
const double* configuration(const py::object& model, py::handle q, bool check, long& size) {
  const double* values = plain_vector(q, size);
  if (values == nullptr) {
    if (check) return nullptr;
    throw py::value_error("q must be a contiguous float64 vector");
  }
  return !check || reljac::configuration_ok(model.ptr(), values, size) ? values : nullptr;
}

}  // namespace

void bind_relative(py::module_& m) {
  m.def("built_with", [] { return py::make_tuple(reljac::built_with_pinocchio(), reljac::built_with_coal()); },
        "(Pinocchio, coal) versions the core was compiled against");
  m.def("configuration_ok", [](const py::object& model, py::handle q) {
    long size = 0;
    const double* values = plain_vector(q, size);
    return values != nullptr && reljac::configuration_ok(model.ptr(), values, size);
  }, py::arg("model"), py::arg("q"),
        "True when q is a float64 (nq,) array passing ConfigurationSpace.validate_q's checks (else let it say why)");
  m.def("relative_placement_in", [](const py::object& model, const py::object& data, int a, int b) {
    return reljac::relative_placement_in(model.ptr(), data.ptr(), a, b);
  }, py::arg("model"), py::arg("data"), py::arg("frame_a"), py::arg("frame_b"),
        "T_ab (4, 4) from the kinematics in data (the frames' placements updated)");
  m.def("relative_jacobian_in", [](const py::object& model, const py::object& data, int a, int b, int axes, int c) {
    const long nv = reljac::velocity_size(model.ptr());
    py::array_t<double> J({py::ssize_t{6}, static_cast<py::ssize_t>(nv)});
    const int frames[2] = {a, b};
    reljac::relative_jacobians_in(model.ptr(), data.ptr(), frames, 1, axes, c, J.mutable_data(), nv);
    return J;
  }, py::arg("model"), py::arg("data"), py::arg("frame_a"), py::arg("frame_b"), py::arg("axes"), py::arg("frame_c"),
        "J_ab (6, nv) in the given axes (0 a, 1 b, 2 world, 3 frame_c) from the kinematics in data");
  m.def("relative_jacobians_in", [](const py::object& model, const py::object& data, const std::vector<int>& frames,
                                    int axes, int c, int nv) {
    if (frames.size() % 2) throw py::value_error("frames must hold (a, b) pairs");
    const auto count = static_cast<py::ssize_t>(frames.size() / 2);
    py::array_t<double> J({count, py::ssize_t{6}, static_cast<py::ssize_t>(nv)});
    reljac::relative_jacobians_in(model.ptr(), data.ptr(), frames.data(), count, axes, c, J.mutable_data(), nv);
    return J;
  }, py::arg("model"), py::arg("data"), py::arg("frames"), py::arg("axes"), py::arg("frame_c"), py::arg("nv"),
        "J_ab (k, 6, nv) of k pairs [a0, b0, a1, b1, ...] in the same axes, from the kinematics in data");
  m.def("relative_placement", [](const py::object& model, const py::object& data, py::handle q, int a, int b,
                                 bool check) -> py::object {
    long size = 0;
    const double* values = configuration(model, q, check, size);
    if (values == nullptr) return py::none();
    return py::cast(reljac::relative_placement(model.ptr(), data.ptr(), Eigen::Map<const Vector>(values, size), a, b));
  }, py::arg("model"), py::arg("data"), py::arg("q"), py::arg("frame_a"), py::arg("frame_b"), py::arg("check"),
        "T_ab (4, 4) at q, or None when q is not a valid configuration (with check)");
  m.def("relative_jacobian", [](const py::object& model, const py::object& data, py::handle q, int a, int b,
                                int axes, int c, bool check) -> py::object {
    long size = 0;
    const double* values = configuration(model, q, check, size);
    if (values == nullptr) return py::none();
    const long nv = reljac::velocity_size(model.ptr());
    py::array_t<double> J({py::ssize_t{6}, static_cast<py::ssize_t>(nv)});
    reljac::relative_jacobian(model.ptr(), data.ptr(), Eigen::Map<const Vector>(values, size), a, b, axes, c,
                              J.mutable_data(), nv);
    return std::move(J);
  }, py::arg("model"), py::arg("data"), py::arg("q"), py::arg("frame_a"), py::arg("frame_b"), py::arg("axes"),
        py::arg("frame_c"), py::arg("check"), "J_ab (6, nv) at q, or None when q is not a valid configuration (with check)");
}

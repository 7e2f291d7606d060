// Python bindings of the relative kinematics on Pinocchio (relative.hpp); see reljac/relative.py.
// Names and shapes only.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>

#include "bindings.hpp"
#include "relative.hpp"

namespace py = pybind11;
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Vector = Eigen::VectorXd;

void bind_relative(py::module_& m) {
  m.def("built_with", [] { return py::make_tuple(reljac::built_with_pinocchio(), reljac::built_with_coal()); },
        "(Pinocchio, coal) versions the core was compiled against");
  m.def("relative_placement_in", [](const py::object& model, const py::object& data, int a, int b) {
    return reljac::relative_placement_in(model.ptr(), data.ptr(), a, b);
  });
  m.def("relative_jacobian_in", [](const py::object& model, const py::object& data, int a, int b, int axes, int c) {
    return reljac::relative_jacobian_in(model.ptr(), data.ptr(), a, b, axes, c);
  });
  m.def("relative_placement", [](const py::object& model, const py::object& data, const Array& q, int a, int b) {
    if (q.ndim() != 1) throw py::value_error("q must be (nq,)");
    return reljac::relative_placement(model.ptr(), data.ptr(), Eigen::Map<const Vector>(q.data(), q.shape(0)), a, b);
  });
  m.def("relative_jacobian", [](const py::object& model, const py::object& data, const Array& q, int a, int b,
                                int axes, int c, int nv) {
    if (q.ndim() != 1) throw py::value_error("q must be (nq,)");
    py::array_t<double> J({6, nv});
    reljac::relative_jacobian(model.ptr(), data.ptr(), Eigen::Map<const Vector>(q.data(), q.shape(0)), a, b, axes, c,
                              J.mutable_data(), nv);
    return J;
  });
}

// Python bindings of the SO(3)/SE(3) logarithms (reljac.ik._core.log3, Jlog3, log6, Jlog6), for tests.
#include <pybind11/eigen.h>

#include "bindings.hpp"
#include "lie.hpp"

namespace py = pybind11;
using Matrix4 = Eigen::Matrix<double, 4, 4, Eigen::RowMajor>;

void bind_lie(py::module_& m) {
  using namespace reljac::lie;
  m.def("log3", [](const Matrix3& R) { return Vector3(log3(R)); }, py::arg("R"));
  m.def("Jlog3", [](const Matrix3& R) { return Matrix3(Jlog3(R)); }, py::arg("R"));
  m.def("log6", [](const Matrix4& T) { return Vector6(log6(T.topLeftCorner<3, 3>(), T.topRightCorner<3, 1>())); },
        py::arg("T"));
  m.def("Jlog6", [](const Matrix4& T) { return Matrix6(Jlog6(T.topLeftCorner<3, 3>(), T.topRightCorner<3, 1>())); },
        py::arg("T"));
}

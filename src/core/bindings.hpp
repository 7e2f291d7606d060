// One function per topic registers its part of the extension module reljac.ik._core.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

// q's values when it is exactly a numpy array (no subclass) of native float64, 1-D and
// contiguous; else nullptr.
inline const double* plain_vector(pybind11::handle q, long& size) {
  namespace py = pybind11;
  if (Py_TYPE(q.ptr()) != py::detail::npy_api::get().PyArray_Type_) return nullptr;
  const auto a = py::reinterpret_borrow<py::array>(q);
  // (an empty vector's stride is any: numpy 2 gives 0, as for q of a robot with no joint)
  if (a.ndim() != 1 || (a.shape(0) > 0 && a.strides(0) != static_cast<py::ssize_t>(sizeof(double)))) return nullptr;
  const py::dtype type = a.dtype();
  if (type.kind() != 'f' || type.itemsize() != 8 || type.byteorder() == '>') return nullptr;
  size = static_cast<long>(a.shape(0));
  return static_cast<const double*>(a.data());
}

void bind_constants(pybind11::module_& m);
void bind_descriptions(pybind11::module_& m);  // before bind_step: Step.add names them
void bind_hierarchy(pybind11::module_& m);
void bind_kinematics(pybind11::module_& m);
void bind_relative(pybind11::module_& m);
void bind_step(pybind11::module_& m);
void bind_search(pybind11::module_& m);  // after bind_step: it adds to Step

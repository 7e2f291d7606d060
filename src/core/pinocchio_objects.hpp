// Python's Pinocchio objects (pin.Model, pin.Data, pin.GeometryModel) as references to the C++
// objects they wrap, through Boost.Python's registry (the one the pin wheel's bindings filled):
// no copy, the robot's own model. Only the translation units that compute with Pinocchio
// include this header (it is heavy to compile).
#pragma once

#include <Python.h>

#include <boost/python.hpp>
#include <stdexcept>
#include <string>

#include "pinocchio/multibody.hpp"
#include "pinocchio/spatial.hpp"
#include "pinocchio/geometry.hpp"
#include "pinocchio_model.hpp"

namespace reljac {

// The last object pinocchio_object<T> looked up, with a reference held on it (so its address
// cannot be reused by another object), and the C++ object it wraps.
template <typename T>
struct LastLookedUp {
  static inline PyObject* object = nullptr;
  static inline T* wrapped = nullptr;
};

// The C++ object `object` wraps; std::invalid_argument naming `what` when it is not a T.
// The last object looked up per type is remembered (LastLookedUp<T>): the one-shot functions'
// repeated calls on the same robot skip Boost.Python's registry. Called with the GIL held.
template <typename T>
T& pinocchio_object(PyObject* object, const char* what) {
  namespace bp = boost::python;
  using Last = LastLookedUp<T>;
  if (object == Last::object) return *Last::wrapped;
  bp::object wrapped{bp::handle<>(bp::borrowed(object))};
  bp::extract<T&> extracted(wrapped);
  if (!extracted.check()) throw std::invalid_argument(std::string("expected a ") + what);
  Py_INCREF(object);
  Py_XDECREF(Last::object);
  Last::object = object;
  Last::wrapped = &extracted();
  return *Last::wrapped;
}

}  // namespace reljac

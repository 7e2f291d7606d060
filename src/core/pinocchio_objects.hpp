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

namespace reljac {

using PinModel = pinocchio::Model;
using PinData = pinocchio::Data;

// The C++ object `object` wraps; std::invalid_argument naming `what` when it is not a T.
template <typename T>
T& pinocchio_object(PyObject* object, const char* what) {
  namespace bp = boost::python;
  bp::object wrapped{bp::handle<>(bp::borrowed(object))};
  bp::extract<T&> extracted(wrapped);
  if (!extracted.check()) throw std::invalid_argument(std::string("expected a ") + what);
  return extracted();
}

}  // namespace reljac

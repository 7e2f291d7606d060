// What the bindings of the task descriptions share (bind_descriptions.cpp and the kinds bound in
// files of their own): TaskParameters from and to Python's gain, weight, max_speed, lower and upper.
#pragma once

#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <optional>

#include "bindings.hpp"
#include "step.hpp"

namespace reljac {

// lower, upper: the bounds on e of a task with bounds ((size,) each, +-inf open), or both None.
inline TaskParameters parameters(double gain, const Vector& weight, const std::optional<Vector>& max_speed,
                                 const std::optional<Vector>& lower, const std::optional<Vector>& upper) {
  TaskParameters p;
  p.gain = gain;
  p.weight = weight;
  if (lower.has_value() != upper.has_value()) throw pybind11::value_error("lower and upper: both arrays or both None");
  if (lower) {
    if (lower->size() != weight.size() || upper->size() != weight.size())
      throw pybind11::value_error("lower and upper must have one bound per row of e");
    p.lower = *lower;
    p.upper = *upper;
  }
  p.has_max_speed = max_speed.has_value();
  if (max_speed) {
    if (max_speed->size() != 2) throw pybind11::value_error("max_speed must be (linear, angular)");
    p.max_speed[0] = (*max_speed)(0);
    p.max_speed[1] = (*max_speed)(1);
  }
  return p;
}

inline std::optional<Vector> bound_of(const TaskParameters& p, bool upper) {
  if (!p.bounded()) return std::nullopt;
  return upper ? p.upper : p.lower;
}

inline std::optional<Vector> max_speed_of(const TaskParameters& p) {
  if (!p.has_max_speed) return std::nullopt;
  return Vector(Eigen::Vector2d(p.max_speed[0], p.max_speed[1]));
}

// The fields a task kind shares (TaskParameters), read back under their Python names.
template <typename Class>
void parameter_fields(Class& c) {
  using D = typename Class::type;
  c.def_property_readonly("gain", [](const D& d) { return d.parameters.gain; }, "gain [1/s]")
      .def_property_readonly("weight", [](const D& d) { return d.parameters.weight; }, "(size,) row weights")
      .def_property_readonly("max_speed", [](const D& d) { return max_speed_of(d.parameters); },
                             "(linear, angular) caps on |gain e| [m/s, rad/s], or None")
      .def_property_readonly("lower", [](const D& d) { return bound_of(d.parameters, false); },
                             "(size,) lower bounds on e (-inf: open), or None: no bounds")
      .def_property_readonly("upper", [](const D& d) { return bound_of(d.parameters, true); },
                             "(size,) upper bounds on e (inf: open), or None: no bounds");
}

}  // namespace reljac

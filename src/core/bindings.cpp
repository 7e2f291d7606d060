// The extension module reljac.ik._core: each topic registers its own functions and classes.
#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "reljac's compiled core on Pinocchio and coal (see reljac/ik/solvers/hierarchy.py for the solver it mirrors)";
  bind_constants(m);
  bind_hierarchy(m);
  bind_kinematics(m);
  bind_relative(m);
  bind_descriptions(m);
  bind_step(m);
  bind_search(m);
}

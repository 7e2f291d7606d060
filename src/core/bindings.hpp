// One function per topic registers its part of the extension module reljac.ik._core.
#pragma once

#include <pybind11/pybind11.h>

void bind_hierarchy(pybind11::module_& m);
void bind_kinematics(pybind11::module_& m);
void bind_relative(pybind11::module_& m);
void bind_step(pybind11::module_& m);

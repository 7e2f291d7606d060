// Pinocchio's model and data, the types the step works on (pinocchio_objects.hpp finds them behind
// Python's objects). Heavier than kind.hpp: the step's own files include it, a task kind does not.
#pragma once

#include "pinocchio/multibody/data.hpp"
#include "pinocchio/multibody/model.hpp"

namespace reljac {

using PinModel = pinocchio::Model;
using PinData = pinocchio::Data;

}  // namespace reljac

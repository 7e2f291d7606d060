// A description as Python holds it (bind_descriptions.cpp): its kind's schema, the description, and
// the Description objects given for its fields that hold descriptions (read back as given).
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <string>

#include "bindings.hpp"
#include "schema.hpp"

namespace reljac {

struct DescriptionObject {
  const KindSchema* kind = nullptr;
  std::shared_ptr<Description> object;
  std::map<std::string, pybind11::object> nested;
};

}  // namespace reljac

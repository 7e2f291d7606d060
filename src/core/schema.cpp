// The registry of kinds (schema.hpp): each kind's file registers its schema at load time.
#include "schema.hpp"

#include <stdexcept>

namespace reljac {

std::vector<KindSchema>& kind_schemas() {
  static std::vector<KindSchema> schemas;
  return schemas;
}

const KindSchema* find_kind(const std::string& name) {
  for (const KindSchema& k : kind_schemas())
    if (k.name == name) return &k;
  return nullptr;
}

const KindSchema& register_kind(KindSchema schema) {
  if (find_kind(schema.name) != nullptr) throw std::logic_error("kind " + schema.name + " registered twice");
  kind_schemas().push_back(std::move(schema));
  return kind_schemas().back();
}

}  // namespace reljac

// Each kind's description written once: its C++ struct, and beside it the list of its fields by
// name (type, doc), registered by the kind's file. Python fills a description in by keyword
// (`_core.describe(name, **fields)`, bind_descriptions.cpp, the only file that converts the values)
// and reads it back by name; `_core.kinds()` lists every kind and its fields (the docs' table and
// tests/test_core_schema.py read it). No pybind11 here: a kind's file stays light.
//
//   struct ConeTaskDescription : TaskDescription { int frame_a = 0; ...; TaskParameters parameters; };
//   const KindSchema cone = task_kind<ConeTaskDescription>("ConeTaskDescription", "doc")
//       .field("frame_a", &ConeTaskDescription::frame_a, "Pinocchio frame id of a")
//       .parameters(&ConeTaskDescription::parameters);
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kind.hpp"

namespace reljac {

// A reference held on a Python object (taken and dropped with the GIL held, as descriptions are).
// Declared here without Python.h; defined in bind_descriptions.cpp.
class PyRef {
 public:
  PyRef() = default;
  explicit PyRef(void* object);
  PyRef(const PyRef& other);
  PyRef& operator=(const PyRef& other);
  ~PyRef();
  void* get() const { return object_; }

 private:
  void* object_ = nullptr;  // a PyObject*
};

// What a field holds, for the conversion to and from Python (bind_descriptions.cpp).
enum class FieldType {
  kInt,          // int
  kDouble,       // double
  kBool,         // bool
  kIntVector,    // Eigen::VectorXi
  kVector,       // Vector (any size)
  kVector3,      // Eigen::Vector3d
  kMatrix4,      // Eigen::Matrix4d (a homogeneous transform)
  kMatrix,       // RowMatrix (any shape)
  kMatrices,     // std::vector<RowMatrix>
  kChoice,       // int: the index of a name among Field::choices (Python: the name)
  kObject,       // PyRef: any Python object
  kTask,         // std::shared_ptr<const TaskDescription>: a description within (Python: a Description)
  kLimit,        // std::shared_ptr<const LimitDescription>
  kParameters,   // TaskParameters: the keys gain, weight, max_speed, lower, upper
};

struct Field {
  std::string name, doc;
  FieldType type = FieldType::kDouble;
  bool required = true;              // false: may be left out (or None), keeping the struct's default
  std::vector<std::string> choices;  // kChoice
  std::function<void*(Description&)> address;  // the field in a description of this kind
};

// One kind: its name in Python (the class name of reljac's records), its doc, a new description
// with the struct's defaults, and its fields in order.
struct KindSchema {
  std::string name, doc;
  bool task = true;  // else a limit
  std::function<std::shared_ptr<Description>()> create;
  std::vector<Field> fields;
};

// Every registered kind (in registration order: a kind's file registers its own at load time).
std::vector<KindSchema>& kind_schemas();
// The kind of that name, or nullptr.
const KindSchema* find_kind(const std::string& name);

template <typename T>
constexpr FieldType field_type();
template <> constexpr FieldType field_type<int>() { return FieldType::kInt; }
template <> constexpr FieldType field_type<double>() { return FieldType::kDouble; }
template <> constexpr FieldType field_type<bool>() { return FieldType::kBool; }
template <> constexpr FieldType field_type<Eigen::VectorXi>() { return FieldType::kIntVector; }
template <> constexpr FieldType field_type<Vector>() { return FieldType::kVector; }
template <> constexpr FieldType field_type<Eigen::Vector3d>() { return FieldType::kVector3; }
template <> constexpr FieldType field_type<Eigen::Matrix4d>() { return FieldType::kMatrix4; }
template <> constexpr FieldType field_type<RowMatrix>() { return FieldType::kMatrix; }
template <> constexpr FieldType field_type<std::vector<RowMatrix>>() { return FieldType::kMatrices; }
template <> constexpr FieldType field_type<PyRef>() { return FieldType::kObject; }
template <> constexpr FieldType field_type<std::shared_ptr<const TaskDescription>>() { return FieldType::kTask; }
template <> constexpr FieldType field_type<std::shared_ptr<const LimitDescription>>() { return FieldType::kLimit; }
template <> constexpr FieldType field_type<TaskParameters>() { return FieldType::kParameters; }

// Builds a kind's schema field by field; registered when it goes out of scope into a
// `const KindSchema` (or `const Registered`) at namespace scope of the kind's file.
template <typename D>
class KindBuilder {
 public:
  KindBuilder(const char* name, const char* doc, bool task) {
    schema_.name = name;
    schema_.doc = doc;
    schema_.task = task;
    schema_.create = [] { return std::make_shared<D>(); };
  }
  // A field the caller must give (required) or may leave out (optional: the struct's default).
  template <typename T>
  KindBuilder& field(const char* name, T D::*member, const char* doc, bool required = true) {
    Field f;
    f.name = name;
    f.doc = doc;
    f.type = field_type<T>();
    f.required = required;
    f.address = [member](Description& d) -> void* { return &(static_cast<D&>(d).*member); };
    schema_.fields.push_back(std::move(f));
    return *this;
  }
  // An int field given in Python as one of `choices` (its index).
  KindBuilder& choice(const char* name, int D::*member, std::vector<std::string> choices, const char* doc) {
    field(name, member, doc);
    schema_.fields.back().type = FieldType::kChoice;
    schema_.fields.back().choices = std::move(choices);
    return *this;
  }
  // The task parameters (gain, weight, max_speed, lower, upper): one line for every task kind.
  KindBuilder& parameters(TaskParameters D::*member) {
    return field("parameters", member, "gain [1/s], weight (size,), max_speed (linear, angular) or None, and the "
                                       "bounds lower, upper (size,) on e or None");
  }
  operator KindSchema() const;  // registers the kind (see schema.cpp)

 private:
  KindSchema schema_;
};

// Register `schema` (std::logic_error on a name registered twice); returns it.
const KindSchema& register_kind(KindSchema schema);

template <typename D>
KindBuilder<D>::operator KindSchema() const {
  return register_kind(schema_);
}

template <typename D>
KindBuilder<D> task_kind(const char* name, const char* doc) {
  return KindBuilder<D>(name, doc, true);
}

template <typename D>
KindBuilder<D> limit_kind(const char* name, const char* doc) {
  return KindBuilder<D>(name, doc, false);
}

}  // namespace reljac

// Python bindings of the descriptions (schema.hpp): one class, Description, filled in by keyword
// from a kind's schema (`_core.describe(kind, **fields)`) and read back by field name; the list of
// kinds and their fields (`_core.kinds()`). The only file that converts a field's value between
// Python and C++: a kind's file lists its fields and stays free of pybind11.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>

#include "bind_descriptions.hpp"

namespace py = pybind11;

namespace reljac {

PyRef::PyRef(void* object) : object_(object) { Py_XINCREF(static_cast<PyObject*>(object_)); }
PyRef::PyRef(const PyRef& other) : PyRef(other.object_) {}
PyRef& PyRef::operator=(const PyRef& other) {
  Py_XINCREF(static_cast<PyObject*>(other.object_));
  Py_XDECREF(static_cast<PyObject*>(object_));
  object_ = other.object_;
  return *this;
}
PyRef::~PyRef() { Py_XDECREF(static_cast<PyObject*>(object_)); }

namespace {

const char* type_name(FieldType type) {
  switch (type) {
    case FieldType::kInt: return "int";
    case FieldType::kDouble: return "float";
    case FieldType::kBool: return "bool";
    case FieldType::kIntVector: return "int array (k,)";
    case FieldType::kVector: return "float array (k,)";
    case FieldType::kVector3: return "float array (3,)";
    case FieldType::kMatrix4: return "float array (4, 4)";
    case FieldType::kMatrix: return "float array (k, n)";
    case FieldType::kMatrices: return "float arrays (k_j, n)";
    case FieldType::kChoice: return "str";
    case FieldType::kObject: return "object";
    case FieldType::kTask: return "task Description";
    case FieldType::kLimit: return "limit Description";
    case FieldType::kParameters: return "gain, weight, max_speed, lower, upper";
  }
  return "?";
}

// lower, upper: the bounds on e of a task with bounds ((size,) each, +-inf open), or both None.
TaskParameters parameters(double gain, const Vector& weight, const std::optional<Vector>& max_speed,
                          const std::optional<Vector>& lower, const std::optional<Vector>& upper) {
  TaskParameters p;
  p.gain = gain;
  p.weight = weight;
  if (lower.has_value() != upper.has_value()) throw py::value_error("lower and upper: both arrays or both None");
  if (lower) {
    if (lower->size() != weight.size() || upper->size() != weight.size())
      throw py::value_error("lower and upper must have one bound per row of e");
    p.lower = *lower;
    p.upper = *upper;
  }
  p.has_max_speed = max_speed.has_value();
  if (max_speed) {
    if (max_speed->size() != 2) throw py::value_error("max_speed must be (linear, angular)");
    p.max_speed[0] = (*max_speed)(0);
    p.max_speed[1] = (*max_speed)(1);
  }
  return p;
}

const char* const kParameterKeys[] = {"gain", "weight", "max_speed", "lower", "upper"};

template <typename T>
void set(const Field& f, Description& d, py::handle value) {
  *static_cast<T*>(f.address(d)) = value.cast<T>();
}

// The description a Description object holds, as a task's or a limit's.
template <typename Base>
std::shared_ptr<const Base> nested(const Field& f, py::handle value) {
  const auto& inner = value.cast<const DescriptionObject&>();
  auto out = std::dynamic_pointer_cast<const Base>(inner.object);
  if (!out) throw py::type_error(f.name + " must be a " + type_name(f.type) + ", got a " + inner.kind->name);
  return out;
}

void assign(const Field& f, Description& d, py::handle value) {
  switch (f.type) {
    case FieldType::kInt: return set<int>(f, d, value);
    case FieldType::kDouble: return set<double>(f, d, value);
    case FieldType::kBool: return set<bool>(f, d, value);
    case FieldType::kIntVector: return set<Eigen::VectorXi>(f, d, value);
    case FieldType::kVector: return set<Vector>(f, d, value);
    case FieldType::kVector3: return set<Eigen::Vector3d>(f, d, value);
    case FieldType::kMatrix4: return set<Eigen::Matrix4d>(f, d, value);
    case FieldType::kMatrix: return set<RowMatrix>(f, d, value);
    case FieldType::kMatrices: return set<std::vector<RowMatrix>>(f, d, value);
    case FieldType::kObject:
      *static_cast<PyRef*>(f.address(d)) = PyRef(value.ptr());
      return;
    case FieldType::kTask:
      *static_cast<std::shared_ptr<const TaskDescription>*>(f.address(d)) = nested<TaskDescription>(f, value);
      return;
    case FieldType::kLimit:
      *static_cast<std::shared_ptr<const LimitDescription>*>(f.address(d)) = nested<LimitDescription>(f, value);
      return;
    case FieldType::kChoice: {
      const auto name = value.cast<std::string>();
      for (size_t i = 0; i < f.choices.size(); ++i)
        if (f.choices[i] == name) {
          *static_cast<int*>(f.address(d)) = static_cast<int>(i);
          return;
        }
      std::string valid;
      for (const auto& c : f.choices) valid += (valid.empty() ? "'" : ", '") + c + "'";
      throw py::value_error(f.name + " must be one of " + valid + ", got '" + name + "'");
    }
    case FieldType::kParameters: break;  // (describe() reads its keys)
  }
}

py::object read(const Field& f, Description& d) {
  void* at = f.address(d);
  switch (f.type) {
    case FieldType::kInt: return py::cast(*static_cast<int*>(at));
    case FieldType::kDouble: return py::cast(*static_cast<double*>(at));
    case FieldType::kBool: return py::cast(*static_cast<bool*>(at));
    case FieldType::kIntVector: return py::cast(*static_cast<Eigen::VectorXi*>(at));
    case FieldType::kVector: return py::cast(*static_cast<Vector*>(at));
    case FieldType::kVector3: return py::cast(*static_cast<Eigen::Vector3d*>(at));
    case FieldType::kMatrix4: return py::cast(*static_cast<Eigen::Matrix4d*>(at));
    case FieldType::kMatrix: return py::cast(*static_cast<RowMatrix*>(at));
    case FieldType::kMatrices: return py::cast(*static_cast<std::vector<RowMatrix>*>(at));
    case FieldType::kChoice: return py::cast(f.choices.at(*static_cast<int*>(at)));
    case FieldType::kObject: {
      void* object = static_cast<PyRef*>(at)->get();
      return object ? py::reinterpret_borrow<py::object>(static_cast<PyObject*>(object)) : py::none();
    }
    case FieldType::kTask:
    case FieldType::kLimit: return py::none();  // (a Description object keeps its nested ones: fields())
    case FieldType::kParameters: break;
  }
  return py::none();
}

std::vector<std::string> field_names(const KindSchema& kind) {
  std::vector<std::string> out;
  for (const Field& f : kind.fields)
    if (f.type == FieldType::kParameters)
      out.insert(out.end(), std::begin(kParameterKeys), std::end(kParameterKeys));
    else
      out.push_back(f.name);
  return out;
}

// A description of kind `name` from keyword arguments: every required field given, no other key.
DescriptionObject describe(const std::string& name, const py::kwargs& values) {
  const KindSchema* kind = find_kind(name);
  if (kind == nullptr) throw py::value_error("the compiled core has no kind '" + name + "'");
  DescriptionObject out;
  out.kind = kind;
  out.object = kind->create();
  Description& d = *out.object;
  for (auto item : values) {  // an unknown key first (a misspelt field is also a missing one)
    const auto key = item.first.cast<std::string>();
    bool known = false;
    for (const Field& f : kind->fields)
      known = known || f.name == key ||
              (f.type == FieldType::kParameters &&
               std::find(std::begin(kParameterKeys), std::end(kParameterKeys), key) != std::end(kParameterKeys));
    if (!known) {
      std::string fields;
      for (const auto& name : field_names(*kind)) fields += (fields.empty() ? "" : ", ") + name;
      throw py::type_error(name + " has no field '" + key + "'; its fields: " + fields);
    }
  }
  for (const Field& f : kind->fields) {
    if (f.type == FieldType::kParameters) {
      for (const char* key : {"gain", "weight"})
        if (!values.contains(key)) throw py::type_error(name + " needs the field '" + key + "'");
      auto optional = [&](const char* key) -> std::optional<Vector> {
        if (!values.contains(key)) return std::nullopt;
        const py::handle v = values[key];
        return v.is_none() ? std::nullopt : std::optional<Vector>(v.cast<Vector>());
      };
      const std::optional<Vector> max_speed = optional("max_speed"), lower = optional("lower"), upper = optional("upper");
      *static_cast<TaskParameters*>(f.address(d)) =
          parameters(values["gain"].cast<double>(), values["weight"].cast<Vector>(), max_speed, lower, upper);
      continue;
    }
    if (!values.contains(f.name.c_str())) {
      if (f.required) throw py::type_error(name + " needs the field '" + f.name + "'");
      continue;
    }
    const py::handle value = values[f.name.c_str()];
    if (f.type == FieldType::kTask || f.type == FieldType::kLimit) out.nested[f.name] = py::reinterpret_borrow<py::object>(value);
    if (value.is_none() && !f.required) continue;
    try {
      assign(f, d, value);
    } catch (const py::cast_error&) {
      throw py::type_error(name + "." + f.name + " must be " + type_name(f.type) + ", got " +
                           std::string(py::str(py::type::of(value).attr("__name__"))));
    }
  }
  return out;
}

// A field's value by name (the task parameters' keys too).
py::object field_value(const DescriptionObject& self, const std::string& key) {
  Description& d = *self.object;
  for (const Field& f : self.kind->fields) {
    if (f.type == FieldType::kParameters) {
      const auto& p = *static_cast<const TaskParameters*>(f.address(d));
      if (key == "gain") return py::cast(p.gain);
      if (key == "weight") return py::cast(p.weight);
      if (key == "max_speed") return p.has_max_speed ? py::cast(Vector(Eigen::Vector2d(p.max_speed[0], p.max_speed[1]))) : py::none();
      if (key == "lower") return p.bounded() ? py::cast(p.lower) : py::none();
      if (key == "upper") return p.bounded() ? py::cast(p.upper) : py::none();
      continue;
    }
    if (f.name != key) continue;
    if (f.type == FieldType::kTask || f.type == FieldType::kLimit) {
      const auto it = self.nested.find(key);
      return it == self.nested.end() ? py::none() : it->second;
    }
    return read(f, d);
  }
  throw py::attribute_error(self.kind->name + " has no field '" + key + "'");
}


}  // namespace

}  // namespace reljac

void bind_descriptions(py::module_& m) {
  using namespace reljac;
  py::class_<DescriptionObject>(m, "Description",
                                "What a task or limit gives the compiled step: one kind's fields, by name "
                                "(describe(); the kinds and their fields: kinds()).")
      .def_property_readonly("kind", [](const DescriptionObject& d) { return d.kind->name; }, "the kind's name")
      .def_property_readonly("is_task", [](const DescriptionObject& d) { return d.kind->task; },
                             "a task's description (else a limit's)")
      .def("field", &field_value, py::arg("name"), "The value of field `name` (a copy; a description within: itself).")
      .def("fields", [](const DescriptionObject& d) {
        py::dict out;
        for (const auto& name : field_names(*d.kind)) out[py::str(name)] = field_value(d, name);
        return out;
      }, "Every field by name (copies), in the schema's order.")
      .def("__repr__", [](const DescriptionObject& d) { return "<Description " + d.kind->name + ">"; });
  m.def("describe", &describe, py::arg("_kind"), py::pos_only(),
        "A Description of kind `kind` (positional) from its fields by keyword (every field its schema requires; "
        "a task's: gain, weight, max_speed, lower, upper too). TypeError names a missing or unknown field.");
  m.def("kinds", [] {
    py::list out;
    for (const KindSchema& k : kind_schemas()) {
      py::list fields;
      for (const Field& f : k.fields) {
        if (f.type == FieldType::kParameters) {
          fields.append(py::make_tuple("gain", "float", "[1/s]", true));
          fields.append(py::make_tuple("weight", "float array (size,)", "row weights (0: masked)", true));
          fields.append(py::make_tuple("max_speed", "float array (2,) or None",
                                       "(linear, angular) caps on |gain e| [m/s, rad/s]", false));
          fields.append(py::make_tuple("lower", "float array (size,) or None", "bounds on e (-inf: open)", false));
          fields.append(py::make_tuple("upper", "float array (size,) or None", "bounds on e (inf: open)", false));
          continue;
        }
        std::string type = type_name(f.type);
        if (f.type == FieldType::kChoice) {
          type += " in {";
          for (size_t i = 0; i < f.choices.size(); ++i) type += (i ? ", '" : "'") + f.choices[i] + "'";
          type += "}";
        }
        fields.append(py::make_tuple(f.name, type, f.doc, f.required));
      }
      out.append(py::dict(py::arg("name") = k.name, py::arg("role") = k.task ? "task" : "limit",
                          py::arg("doc") = k.doc, py::arg("fields") = fields));
    }
    return out;
  }, "Every kind of the core: dicts of name, role ('task' or 'limit'), doc and fields, each field a tuple "
     "(name, type, doc, required), in the order its schema lists them.");
}

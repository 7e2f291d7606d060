// Python bindings of the compiled controller step (reljac.ik._core.Step); see reljac/ik/compiled_step.py.
// Names and shapes only.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>

#include "bind_descriptions.hpp"
#include "bindings.hpp"
#include "relative.hpp"
#include "step.hpp"

namespace py = pybind11;
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using reljac::Step;
using reljac::Vector;

namespace {

struct StepFailure : std::exception {
  int task;
  explicit StepFailure(int t) : task(t) {}
  const char* what() const noexcept override { return "step failure"; }
};

const double* data_of(const Array& a, long rows, long cols, const char* what) {
  if (a.ndim() != (cols < 0 ? 1 : 2) || a.shape(0) != rows || (cols >= 0 && rows && a.shape(1) != cols))
    throw py::value_error(std::string(what) + " has the wrong shape");
  return a.data();
}

// Rows of the Python tasks (A, b, feedback[, lower, upper]: a task with bounds) and limits (lo or None, hi or None, C, d); `keep`
// holds the arrays they point into during the call.
void external_rows(const Step& step, const py::list& tasks, const py::list& limits,
                   std::vector<reljac::ExternalRows>& task_rows, std::vector<reljac::ExternalRows>& limit_rows,
                   std::vector<Array>& keep) {
  const long nv = step.nv();
  keep.reserve(5 * tasks.size() + 4 * limits.size());
  auto array = [&](const py::handle& h) -> const Array& {
    keep.push_back(Array::ensure(h));
    if (!keep.back()) throw py::value_error("rows must be arrays of floats");
    return keep.back();
  };
  for (const auto& item : tasks) {
    const auto t = item.cast<py::tuple>();
    reljac::ExternalRows x;
    const Array& b = array(t[1]);
    x.rows = static_cast<int>(b.ndim() == 1 ? b.shape(0) : -1);
    x.b = data_of(b, x.rows, -1, "b");
    x.A = data_of(array(t[0]), x.rows, nv, "A");
    x.feedback = data_of(array(t[2]), x.rows, -1, "feedback");
    if (t.size() == 5) {
      x.lower = data_of(array(t[3]), x.rows, -1, "lower");
      x.upper = data_of(array(t[4]), x.rows, -1, "upper");
    }
    task_rows.push_back(x);
  }
  for (const auto& item : limits) {
    const auto t = item.cast<py::tuple>();
    reljac::ExternalRows x;
    if (!t[0].is_none()) {
      x.lo = data_of(array(t[0]), nv, -1, "lo");
      x.hi = data_of(array(t[1]), nv, -1, "hi");
    }
    const Array& d = array(t[3]);
    x.rows = static_cast<int>(d.ndim() == 1 ? d.shape(0) : -1);
    x.b = data_of(d, x.rows, -1, "d");
    x.A = data_of(array(t[2]), x.rows, nv, "C");
    limit_rows.push_back(x);
  }
}

Vector as_q(const Step& step, const Array& q) {
  if (q.ndim() != 1 || q.shape(0) != step.nq()) throw py::value_error("q must be (nq,)");
  return Eigen::Map<const Vector>(q.data(), q.shape(0));
}

// call(q, task rows, limit rows, failing) on q and the rows of the Python tasks and limits; its
// failure as StepFailure.
template <typename Call>
const Vector& with_rows(Step& step, const Array& q_array, const py::list& tasks, const py::list& limits, Call call) {
  const Vector q = as_q(step, q_array);
  std::vector<reljac::ExternalRows> task_rows, limit_rows;
  std::vector<Array> keep;
  external_rows(step, tasks, limits, task_rows, limit_rows, keep);
  int failing = -1;
  const Vector& out = call(q, task_rows, limit_rows, failing);
  if (failing != -1) throw StepFailure(failing);
  return out;
}

using Rows = std::vector<reljac::ExternalRows>;

// A new float64 (n,) array (owning its data) holding x: numpy's own constructor, without
// pybind11's general one (shape and stride containers, a dtype object, a capsule): at dual_arm's
// sizes that was about 2,000 instructions of a step's 89,000.
py::object new_array(const Vector& x) {
  const auto& api = py::detail::npy_api::get();
  const Py_intptr_t size = x.size();
  PyObject* descr = api.PyArray_DescrFromType_(py::detail::npy_api::NPY_DOUBLE_);
  if (descr == nullptr) throw py::error_already_set();
  PyObject* out = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, 1, &size, nullptr, nullptr, 0, nullptr);
  if (out == nullptr) throw py::error_already_set();  // (descr is stolen either way)
  if (size) std::memcpy(py::detail::array_proxy(out)->data, x.data(), sizeof(double) * size);
  return py::reinterpret_steal<py::object>(out);
}

// The whole step of a controller of built-in parts from s.next_q, which becomes s.last_q when the
// step succeeds (a failed step leaves last_q as it was); its failure as StepFailure.
Vector whole_step(Step& s) {
  int failing = -1;
  static const Rows none;
  s.velocity(s.next_q, false, none, none, failing);
  if (failing != -1) throw StepFailure(failing);
  s.last_q.swap(s.next_q);
  return s.integrate(s.last_q);
}

const Vector& velocity(Step& step, const Array& q, bool kinematics_done, const py::list& tasks,
                       const py::list& limits) {
  return with_rows(step, q, tasks, limits,
                   [&](const Vector& x, const Rows& t, const Rows& l, int& failing) -> const Vector& {
                     return step.velocity(x, kinematics_done, t, l, failing);
                   });
}

// n whole steps in C++ (tests/test_step_allocations.py): the last q_next.
const Vector& run(Step& step, const Array& q, int n, const py::list& tasks, const py::list& limits) {
  return with_rows(step, q, tasks, limits,
                   [&](const Vector& x, const Rows& t, const Rows& l, int& failing) -> const Vector& {
                     return step.run(x, n, t, l, failing);
                   });
}

}  // namespace

void bind_step(py::module_& m) {
  static py::exception<StepFailure> failure(m, "StepFailure");
  py::register_exception<reljac::SupportFailure>(m, "SupportFailure", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StepFailure& e) {
      failure(std::to_string(e.task).c_str());
    }
  });
  py::class_<reljac::LevelReport>(m, "LevelReport",
                                  "What happened to one level (reljac.ik.solvers.hierarchy.LevelReport: the same fields).")
      .def_readonly("scale", &reljac::LevelReport::scale, "factor s in [0, 1] applied to the level's correction")
      .def_readonly("saturated", &reljac::LevelReport::saturated, "velocity indices of the joints saturated for it")
      .def_readonly("saturated_rows", &reljac::LevelReport::saturated_rows, "rows of C saturated for it")
      .def_readonly("damping", &reljac::LevelReport::damping, "lambda^2 used")
      .def_readonly("smallest_singular_value", &reljac::LevelReport::smallest,
                    "of the level inside the null space it got")
      .def_readonly("residual", &reljac::LevelReport::residual, "|A v - b| at the solution")
      .def_readonly("met", &reljac::LevelReport::met, "residual <= MET_TOLERANCE (1 + |b|)")
      .def_readonly("limit_kind", &reljac::LevelReport::limit_kind,
                    "what stopped it: 0 a joint's bound, 1 a row of C, 2 no freedom left, -1 nothing")
      .def_readonly("limit_index", &reljac::LevelReport::limit_index, "its velocity index or row of C (or of a level)")
      .def_readonly("exact", &reljac::LevelReport::exact,
                    "no damping at this level nor above: its residual is the least the levels above leave it")
      // a hierarchy with bounded levels (reljac.ik.solvers.inequality says what they mean)
      .def_readonly("active", &reljac::LevelReport::active, "the level's inequality rows at or beyond a bound")
      .def_property_readonly("margins", [](const reljac::LevelReport& r) -> std::optional<Vector> {
        if (r.margins.size() == 0) return std::nullopt;
        return r.margins;
      }, "(m,) each row's margin to its interval (negative: violated), or None (an equality hierarchy)")
      .def_readonly("changes", &reljac::LevelReport::changes, "active-set changes")
      .def_readonly("capped", &reljac::LevelReport::capped, "the cap on active-set changes stopped it")
      .def_readonly("held", &reljac::LevelReport::held, "(level, row) inequality rows of levels above held on their bound")
      .def_readonly("limit_level", &reljac::LevelReport::limit_level, "the level of limit_kind 3's row");
  py::class_<reljac::RowSource>(m, "RowSource", "Where a row of C comes from.")
      .def_readonly("limit", &reljac::RowSource::limit, "the limit's index among the step's limits")
      .def_readonly("index", &reljac::RowSource::index, "the row among that limit's rows");
  py::class_<reljac::CollisionRows>(m, "CollisionRows", "The last rows of a collision limit, one per geometry pair in reach.")
      .def_readonly("pair", &reljac::CollisionRows::pair, "(m,) geometry pair indices in collisionPairs")
      .def_readonly("distance", &reljac::CollisionRows::distance, "(m,) [m]")
      .def_readonly("point1", &reljac::CollisionRows::point1, "(m, 3) closest points on the first geometry, world [m]")
      .def_readonly("point2", &reljac::CollisionRows::point2, "(m, 3) closest points on the second geometry, world [m]")
      .def_readonly("normal", &reljac::CollisionRows::normal, "(m, 3) unit normals from the first to the second")
      .def_readonly("jacobian", &reljac::CollisionRows::jacobian, "(m, nv) d distance / dv");

  py::class_<Step>(m, "Step", "A controller's whole step in one call, on Pinocchio and coal (reljac/ik/compiled_step.py).")
      .def(py::init([](const py::object& model, const py::object& data) {
             return std::make_unique<Step>(model.ptr(), data.ptr());
           }),
           py::arg("model"), py::arg("data"), py::keep_alive<1, 2>(), py::keep_alive<1, 3>(),
           "A step on Python's pin.Model and a pin.Data of it (both kept alive).")
      .def_property_readonly("nq", &Step::nq, "the model's nq")
      .def_property_readonly("nv", &Step::nv, "the model's nv")
      .def("add", [](Step& s, const reljac::DescriptionObject& d) {
             return d.kind->task ? s.add(static_cast<const reljac::TaskDescription&>(*d.object))
                                 : s.add(static_cast<const reljac::LimitDescription&>(*d.object));
           }, py::arg("description"),
           "A task or limit of the kind its description names: its index among the tasks (or the limits).")
      .def("update", [](Step& s, int index, const reljac::DescriptionObject& d) {
             if (d.kind->task)
               s.update(index, static_cast<const reljac::TaskDescription&>(*d.object));
             else
               s.update(index, static_cast<const reljac::LimitDescription&>(*d.object));
           }, py::arg("index"), py::arg("description"),
           "A new description of task (or limit) `index`, of its kind (a pending task takes its first).")
      .def("task_row_sources", [](const Step& s, int task) -> std::optional<std::vector<int>> {
             const std::vector<int>* sources = s.task_row_sources(task);
             if (sources == nullptr) return std::nullopt;
             return *sources;
           }, py::arg("task"),
           "Where each row of task `task`'s last step comes from (a support region's edge, a collision pair's "
           "index in collisionPairs), for a kind whose rows change in number; else None.")
      .def("task_collision_rows", &Step::task_collision_rows, py::arg("task"),
           "The last CollisionRows of collision avoidance task `task`.")
      .def("set_levels", &Step::set_levels, py::arg("levels"), "The priority levels: task indices, highest first.")
      .def("set_dt", &Step::set_dt, py::arg("dt"), "The control period [s].")
      .def("set_policy", &Step::set_policy, py::arg("threshold"), py::arg("max_damping"), py::arg("error_damping"),
           py::arg("step_threshold"), "The damping policy (reljac.ik.solvers.damping.DampingPolicy's fields).")
      .def("kinematics", [](Step& s, const Array& q) { s.kinematics(as_q(s, q)); }, py::arg("q"),
           "The kinematics pass at q (nq,) into the step's pin.Data (for the Python tasks' rows).")
      .def("velocity", &velocity, py::arg("q"), py::arg("kinematics_done"), py::arg("tasks"), py::arg("limits"),
           "v (nv,) at q; tasks: (A, b, feedback), or (A, b, feedback, lower, upper) for a task with bounds, per "
           "Python task; limits: (lo or None, hi or None, C, d) per "
           "Python limit; kinematics_done: kinematics(q) was called. StepFailure names a task whose rows overflow.")
      .def("step", [](Step& s, const Array& q_array) {  // the whole step of a controller of built-in parts
        s.next_q = as_q(s, q_array);  // q validated by the caller
        return whole_step(s);
      }, py::arg("q"), "q_next (nq,) from a validated q: the whole step of a controller of built-in parts.")
      .def("step_checked", [](Step& s, const py::object& model, py::handle q_object) -> py::object {
        // step() for a q that passes ConfigurationSpace.validate_q's checks as it is (a float64
        // (nq,) array, checked in C++); None for any other q, which the caller then validates
        long size = 0;
        const double* values = plain_vector(q_object, size);
        if (values == nullptr || size != s.nq() || !reljac::configuration_ok(model.ptr(), values, size))
          return py::none();
        s.next_q = Eigen::Map<const Vector>(values, size);  // (the caller may change its array later)
        return new_array(whole_step(s));
      }, py::arg("model"), py::arg("q"),
         "step(q) when q is a float64 (nq,) array passing validate_q's checks (in C++), else None.")
      .def_property_readonly("last_q", [](const Step& s) { return Vector(s.last_q); },
                             "the q of the last step or step_checked (a copy)")
      .def("run", &run, py::arg("q"), py::arg("n"), py::arg("tasks") = py::list(), py::arg("limits") = py::list(),
           "n whole steps from q in C++, the same Python rows at each (tests/test_step_allocations.py): the last q.")
      .def("integrate", [](const Step& s, const Array& q) { return s.integrate(as_q(s, q)); }, py::arg("q"),
           "integrate(q, v dt) with the last velocity, guarded by the position limits.")
      .def("guard", [](const Step& s, const Array& q_next, const Array& q) {
        return s.guard(as_q(s, q_next), as_q(s, q));
      }, py::arg("q_next"), py::arg("q"), "q_next corrected by the position limits' guard, from q.")
      .def("system", [](Step& s, const Array& q) {  // (levels, lo, hi, failing) for tests
        const std::vector<reljac::RowMatrix>* storage = nullptr;
        Vector lo, hi;
        int failing = -1;
        const auto& levels = s.system(as_q(s, q), storage, lo, hi, failing);
        py::list out;
        for (size_t k = 0; k < levels.size() && failing == -1; ++k) {
          const auto& level = levels[k];
          py::object A = py::none(), mask = py::none(), lower = py::none(), upper = py::none();
          if (level.A) A = py::cast(reljac::RowMatrix((*storage)[k]));
          if (level.mask.size()) mask = py::cast(Vector(level.mask));
          if (level.bounded()) lower = py::cast(Vector(level.lower)), upper = py::cast(Vector(level.upper));
          out.append(py::make_tuple(A, py::cast(Vector(level.b)), level.identity_scale, mask, level.extra_damping,
                                    lower, upper));
        }
        return py::make_tuple(out, lo, hi, failing);
      }, py::arg("q"),
         "(levels, lo, hi, failing) the step would solve at q, per level (A or None, b, identity scale, mask or "
         "None, extra damping, lower or None, upper or None); built-in parts only, for tests.")
      .def("reset", &Step::reset, "Forget the limits' state of earlier steps.")
      .def("reports", [](const Step& s) { return s.reports(); }, "A LevelReport per level of the last step.")
      .def("row_sources", &Step::row_sources, "A RowSource per row of C of the last step.")
      .def("collision_rows", &Step::collision_rows, py::arg("limit"), "The last CollisionRows of collision limit `limit`.")
      .def("reversal_cap", &Step::reversal_cap, py::arg("limit"),
           "(nv,) the speed caps of reversal damping `limit` for the next step (inf: none).")
      .def_property_readonly("last_velocity", &Step::last_velocity, "(nv,) the velocity of the last step");
}

// Python bindings of the compiled controller step (reljac.ik._core.Step); see reljac/ik/compiled.py.
// Names and shapes only.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

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

reljac::TaskParameters parameters(double gain, const Vector& weight, const std::optional<Vector>& max_speed) {
  reljac::TaskParameters p;
  p.gain = gain;
  p.weight = weight;
  p.has_max_speed = max_speed.has_value();
  if (max_speed) {
    if (max_speed->size() != 2) throw py::value_error("max_speed must be (linear, angular)");
    p.max_speed[0] = (*max_speed)(0);
    p.max_speed[1] = (*max_speed)(1);
  }
  return p;
}

reljac::FrameTaskDescription frame_task(int kind, int frame_a, int frame_b, double gain, const Vector& weight,
                                        const std::optional<Vector>& max_speed, const Eigen::Matrix4d& target,
                                        const Vector& velocity) {
  if (kind < 0 || kind > 2) throw py::value_error("kind must be 0 (pose), 1 (position) or 2 (orientation)");
  reljac::FrameTaskDescription d;
  d.kind = static_cast<reljac::TaskKind>(kind);
  d.frame_a = frame_a;
  d.frame_b = frame_b;
  d.parameters = parameters(gain, weight, max_speed);
  d.target = target;
  d.velocity = velocity;
  return d;
}

reljac::PostureDescription posture(double gain, const Vector& weight, const std::optional<Vector>& max_speed,
                                   const Vector& target) {
  return reljac::PostureDescription{parameters(gain, weight, max_speed), target};
}

reljac::CoMTaskDescription com_task(int frame, const Eigen::VectorXi& axes, double gain, const Vector& weight,
                                    const std::optional<Vector>& max_speed, const Vector& target, const Vector& velocity) {
  return reljac::CoMTaskDescription{frame, axes, parameters(gain, weight, max_speed), target, velocity};
}

reljac::SupportRegionDescription support_region(int frame, const Eigen::VectorXi& contact_frames,
                                                const std::vector<reljac::RowMatrix>& points, double margin,
                                                double gain) {
  return reljac::SupportRegionDescription{frame, contact_frames, points, margin, gain};
}

reljac::PositionLimitDescription position_limit(const Eigen::VectorXi& q_index, const Eigen::VectorXi& v_index,
                                                const Vector& q_min, const Vector& q_max, const Vector& urdf_min,
                                                const Vector& urdf_max, double gain) {
  return reljac::PositionLimitDescription{q_index, v_index, q_min, q_max, urdf_min, urdf_max, gain};
}

const double* data_of(const Array& a, long rows, long cols, const char* what) {
  if (a.ndim() != (cols < 0 ? 1 : 2) || a.shape(0) != rows || (cols >= 0 && rows && a.shape(1) != cols))
    throw py::value_error(std::string(what) + " has the wrong shape");
  return a.data();
}

// Rows of the Python tasks (A, b, feedback) and limits (lo or None, hi or None, C, d); `keep`
// holds the arrays they point into during the call.
void external_rows(const Step& step, const py::list& tasks, const py::list& limits,
                   std::vector<reljac::ExternalRows>& task_rows, std::vector<reljac::ExternalRows>& limit_rows,
                   std::vector<Array>& keep) {
  const long nv = step.nv();
  keep.reserve(3 * tasks.size() + 4 * limits.size());
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

py::list reports(const Step& step) {
  py::list out;
  for (const auto& r : step.reports())
    out.append(py::make_tuple(r.scale, r.saturated, r.saturated_rows, r.damping, r.smallest, r.residual, r.met,
                              r.limit_kind, r.limit_index));
  return out;
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
  py::class_<Step>(m, "Step")
      .def(py::init([](const py::object& model, const py::object& data) {
             return std::make_unique<Step>(model.ptr(), data.ptr());
           }),
           py::arg("model"), py::arg("data"), py::keep_alive<1, 2>(), py::keep_alive<1, 3>())
      .def_property_readonly("nq", &Step::nq)
      .def_property_readonly("nv", &Step::nv)
      .def("add_frame_task", [](Step& s, int kind, int a, int b, double gain, const Vector& w,
                                const std::optional<Vector>& ms, const Eigen::Matrix4d& T, const Vector& vel) {
        return s.add_frame_task(frame_task(kind, a, b, gain, w, ms, T, vel));
      })
      .def("set_frame_task", [](Step& s, int index, int kind, int a, int b, double gain, const Vector& w,
                                const std::optional<Vector>& ms, const Eigen::Matrix4d& T, const Vector& vel) {
        s.set_frame_task(index, frame_task(kind, a, b, gain, w, ms, T, vel));
      })
      .def("add_posture", [](Step& s, double gain, const Vector& w, const std::optional<Vector>& ms,
                             const Vector& target) { return s.add_posture(posture(gain, w, ms, target)); })
      .def("set_posture", [](Step& s, int index, double gain, const Vector& w, const std::optional<Vector>& ms,
                             const Vector& target) { s.set_posture(index, posture(gain, w, ms, target)); })
      .def("add_com_task", [](Step& s, int frame, const Eigen::VectorXi& axes, double gain, const Vector& w,
                              const std::optional<Vector>& ms, const Vector& target, const Vector& vel) {
        return s.add_com_task(com_task(frame, axes, gain, w, ms, target, vel));
      })
      .def("set_com_task", [](Step& s, int index, int frame, const Eigen::VectorXi& axes, double gain, const Vector& w,
                              const std::optional<Vector>& ms, const Vector& target, const Vector& vel) {
        s.set_com_task(index, com_task(frame, axes, gain, w, ms, target, vel));
      })
      .def("add_external_task", &Step::add_external_task)
      .def("set_levels", &Step::set_levels)
      .def("add_velocity_box", &Step::add_velocity_box)
      .def("set_velocity_box", &Step::set_velocity_box)
      .def("add_position_limit", [](Step& s, const Eigen::VectorXi& qi, const Eigen::VectorXi& vi, const Vector& q_min,
                                    const Vector& q_max, const Vector& u_min, const Vector& u_max, double gain) {
        return s.add_position_limit(position_limit(qi, vi, q_min, q_max, u_min, u_max, gain));
      })
      .def("set_position_limit", [](Step& s, int index, const Eigen::VectorXi& qi, const Eigen::VectorXi& vi,
                                    const Vector& q_min, const Vector& q_max, const Vector& u_min, const Vector& u_max,
                                    double gain) {
        s.set_position_limit(index, position_limit(qi, vi, q_min, q_max, u_min, u_max, gain));
      })
      .def("add_reversal", [](Step& s, const Vector& vmax, const Vector& floor, double shrink, double grow) {
        return s.add_reversal(reljac::ReversalDescription{vmax, floor, shrink, grow});
      })
      .def("set_reversal", [](Step& s, int index, const Vector& vmax, const Vector& floor, double shrink,
                              double grow) { s.set_reversal(index, reljac::ReversalDescription{vmax, floor, shrink, grow}); })
      .def("add_collision", [](Step& s, const py::object& geometry, double min_distance, double influence, double gain,
                               double margin) {
        return s.add_collision(geometry.ptr(), reljac::CollisionDescription{min_distance, influence, gain, margin});
      })
      .def("set_collision", [](Step& s, int index, const py::object& geometry, double min_distance, double influence,
                               double gain, double margin) {
        s.set_collision(index, geometry.ptr(), reljac::CollisionDescription{min_distance, influence, gain, margin});
      })
      .def("add_support_region", [](Step& s, int frame, const Eigen::VectorXi& frames,
                                    const std::vector<reljac::RowMatrix>& points, double margin, double gain) {
        return s.add_support_region(support_region(frame, frames, points, margin, gain));
      })
      .def("set_support_region", [](Step& s, int index, int frame, const Eigen::VectorXi& frames,
                                    const std::vector<reljac::RowMatrix>& points, double margin, double gain) {
        s.set_support_region(index, support_region(frame, frames, points, margin, gain));
      })
      .def("add_external_limit", &Step::add_external_limit)
      .def("set_dt", &Step::set_dt)
      .def("set_policy", &Step::set_policy)
      .def("kinematics", [](Step& s, const Array& q) { s.kinematics(as_q(s, q)); })
      .def("velocity", &velocity, py::arg("q"), py::arg("kinematics_done"), py::arg("tasks"), py::arg("limits"))
      .def("step", [](Step& s, const Array& q_array) {  // the whole step of a controller of built-in parts
        s.next_q = as_q(s, q_array);  // q validated by the caller
        return whole_step(s);
      })
      .def("step_checked", [](Step& s, const py::object& model, py::handle q_object) -> py::object {
        // step() for a q that passes ConfigurationSpace.validate_q's checks as it is (a float64
        // (nq,) array, checked in C++); None for any other q, which the caller then validates
        long size = 0;
        const double* values = plain_vector(q_object, size);
        if (values == nullptr || size != s.nq() || !reljac::configuration_ok(model.ptr(), values, size))
          return py::none();
        s.next_q = Eigen::Map<const Vector>(values, size);  // (the caller may change its array later)
        return py::cast(whole_step(s));
      })
      .def_property_readonly("last_q", [](const Step& s) { return Vector(s.last_q); })
      .def("run", &run, py::arg("q"), py::arg("n"), py::arg("tasks") = py::list(), py::arg("limits") = py::list())
      .def("integrate", [](const Step& s, const Array& q) { return s.integrate(as_q(s, q)); })
      .def("guard", [](const Step& s, const Array& q_next, const Array& q) {
        return s.guard(as_q(s, q_next), as_q(s, q));
      })
      .def("system", [](Step& s, const Array& q) {  // (levels, lo, hi, failing) for tests
        const std::vector<reljac::RowMatrix>* storage = nullptr;
        Vector lo, hi;
        int failing = -1;
        const auto& levels = s.system(as_q(s, q), storage, lo, hi, failing);
        py::list out;
        for (size_t k = 0; k < levels.size() && failing == -1; ++k) {
          const auto& level = levels[k];
          py::object A = py::none(), mask = py::none();
          if (level.A) A = py::cast(reljac::RowMatrix((*storage)[k]));
          if (level.mask.size()) mask = py::cast(Vector(level.mask));
          out.append(py::make_tuple(A, py::cast(Vector(level.b)), level.identity_scale, mask, level.extra_damping));
        }
        return py::make_tuple(out, lo, hi, failing);
      })
      .def("reset", &Step::reset)
      .def("reports", &reports)
      .def("row_sources", [](const Step& s) {
        py::list out;
        for (const auto& r : s.row_sources()) out.append(py::make_tuple(r.limit, r.index));
        return out;
      })
      .def("collision_rows", [](const Step& s, int limit) {
        const auto& r = s.collision_rows(limit);
        return py::make_tuple(r.pair, r.distance, r.point1, r.point2, r.normal, r.jacobian);
      })
      .def("reversal_cap", &Step::reversal_cap)
      .def_property_readonly("last_velocity", &Step::last_velocity);
}

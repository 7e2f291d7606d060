// Python bindings of the compiled controller step (reljac.ik._core.Program); see reljac/ik/compiled.py.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "program.hpp"

namespace py = pybind11;
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using reljac::Program;
using reljac::TaskKind;
using reljac::TaskSpec;
using reljac::Vector;

namespace {

Vector to_vector(const Array& a, long size, const char* what) {
  if (a.ndim() != 1 || (size >= 0 && a.shape(0) != size))
    throw py::value_error(std::string(what) + " has the wrong shape");
  return Eigen::Map<const Vector>(a.data(), a.shape(0));
}

void set_common(TaskSpec& t, double gain, const Array& weight, const std::optional<Array>& max_speed) {
  t.gain = gain;
  t.weight = to_vector(weight, t.size, "weight");
  t.update_weights();
  t.has_max_speed = max_speed.has_value();
  if (max_speed) {
    const Vector pair = to_vector(*max_speed, 2, "max_speed");
    t.max_speed[0] = pair(0);
    t.max_speed[1] = pair(1);
  }
}

// The step's inputs; `keep` holds the arrays they point into.
reljac::FrameInputs inputs(const Program& program, const py::list& Ts, const py::list& Js,
                           const py::list& posture_errors, const py::object& C, const py::object& d,
                           std::vector<Array>& keep) {
  const long nv = program.nv();
  reljac::FrameInputs in;
  keep.reserve(Ts.size() + Js.size() + posture_errors.size() + 2);
  if (!C.is_none()) {
    keep.push_back(Array::ensure(C));
    keep.push_back(Array::ensure(d));
    const Array &Ca = keep[keep.size() - 2], &da = keep.back();
    if (!Ca || !da || Ca.ndim() != 2 || (Ca.shape(0) && Ca.shape(1) != nv) || da.ndim() != 1 || da.shape(0) != Ca.shape(0))
      throw py::value_error("C must be (k, nv) and d (k,)");
    in.C = Ca.data();
    in.d = da.data();
    in.rows = static_cast<int>(Ca.shape(0));
  }
  for (const auto& obj : Ts) {
    keep.push_back(Array::ensure(obj));
    const Array& T = keep.back();
    if (!T || T.ndim() != 2 || T.shape(0) != 4 || T.shape(1) != 4) throw py::value_error("T must be (4, 4)");
    const auto M = Eigen::Map<const Eigen::Matrix<double, 4, 4, Eigen::RowMajor>>(T.data());
    in.R.push_back(M.topLeftCorner<3, 3>());
    in.p.push_back(M.topRightCorner<3, 1>());
  }
  for (const auto& obj : Js) {
    keep.push_back(Array::ensure(obj));
    const Array& J = keep.back();
    if (!J || J.ndim() != 2 || J.shape(0) != 6 || J.shape(1) != nv) throw py::value_error("J must be (6, nv)");
    in.J.push_back(J.data());
  }
  for (const auto& obj : posture_errors) {
    keep.push_back(Array::ensure(obj));
    const Array& e = keep.back();
    if (!e || e.ndim() != 1 || e.shape(0) != nv) throw py::value_error("posture error must be (nv,)");
    in.posture_e.push_back(e.data());
  }
  if (in.J.size() != in.R.size()) throw py::value_error("one T and one J per frame slot");
  return in;
}

py::tuple velocity(Program& program, const Array& q, const py::list& Ts, const py::list& Js,
                   const py::list& posture_errors, const py::object& C, const py::object& d) {
  std::vector<Array> keep;
  const reljac::FrameInputs in = inputs(program, Ts, Js, posture_errors, C, d, keep);
  const Vector q_vec = to_vector(q, program.nq(), "q");
  int failing = -1;
  Vector v;
  {
    py::gil_scoped_release release;
    v = program.velocity(q_vec, in, failing);
  }
  return py::make_tuple(py::array_t<double>(v.size(), v.data()), failing);
}

// (levels, lo, hi, failing task): each level as (A or None, b, identity scale, mask or None, extra damping).
py::tuple step_system(const Program& program, const Array& q, const py::list& Ts, const py::list& Js,
                 const py::list& posture_errors) {
  std::vector<Array> keep;
  const reljac::FrameInputs in = inputs(program, Ts, Js, posture_errors, py::none(), py::none(), keep);
  std::vector<reljac::Level> levels;
  std::vector<reljac::RowMatrix> storage;
  reljac::Constraints cons;
  int failing = -1;
  program.assemble(to_vector(q, program.nq(), "q"), in, levels, storage, cons, failing);
  py::list out;
  for (size_t k = 0; k < levels.size(); ++k) {
    const auto& level = levels[k];
    py::object A = py::none(), mask = py::none();
    if (level.A) A = py::cast(reljac::RowMatrix(storage[k]));
    if (level.mask.size()) mask = py::cast(Vector(level.mask));
    out.append(py::make_tuple(A, py::cast(Vector(level.b)), level.identity_scale, mask, level.extra_damping));
  }
  return py::make_tuple(out, py::cast(cons.lo), py::cast(cons.hi), failing);
}

}  // namespace

void bind_program(py::module_& m) {
  py::class_<Program>(m, "Program")
      .def(py::init<int, int, double, double, double, double, double>(), py::arg("nq"), py::arg("nv"),
           py::arg("dt"), py::arg("threshold"), py::arg("max_damping"), py::arg("error_damping"),
           py::arg("step_threshold"))
      .def("add_frame_task",
           [](Program& p, int kind, int slot_a, int slot_b) {
             TaskSpec t;
             t.kind = static_cast<TaskKind>(kind);
             t.size = t.kind == TaskKind::kRelativeFrame ? 6 : 3;
             t.slot_a = slot_a;
             t.slot_b = slot_b;
             t.weight = Vector::Ones(t.size);
             t.velocity = Vector::Zero(t.size);
             return p.add_task(t);
           })
      .def("add_posture",
           [](Program& p) {
             TaskSpec t;
             t.kind = TaskKind::kPosture;
             t.size = p.nv();
             t.weight = Vector::Ones(t.size);
             t.mask = Vector::Ones(t.size);
             return p.add_task(t);
           })
      .def("set_frame_task",
           [](Program& p, int index, double gain, const Array& weight, const std::optional<Array>& max_speed,
              const Array& T_t, const Array& velocity) {
             TaskSpec& t = p.task(index);
             set_common(t, gain, weight, max_speed);
             if (T_t.ndim() != 2 || T_t.shape(0) != 4 || T_t.shape(1) != 4) throw py::value_error("target must be (4, 4)");
             const auto M = Eigen::Map<const Eigen::Matrix<double, 4, 4, Eigen::RowMajor>>(T_t.data());
             t.R_t = M.topLeftCorner<3, 3>();
             t.p_t = M.topRightCorner<3, 1>();
             t.velocity = to_vector(velocity, t.size, "velocity");
           })
      .def("set_posture",
           [](Program& p, int index, double gain, const Array& weight, const std::optional<Array>& max_speed,
              double identity_scale, const Array& mask) {
             TaskSpec& t = p.task(index);
             set_common(t, gain, weight, max_speed);
             t.identity_scale = identity_scale;
             t.mask = to_vector(mask, p.nv(), "mask");
           })
      .def("set_levels", &Program::set_levels)
      .def("add_velocity_box",
           [](Program& p, const Array& lo, const Array& hi) {
             p.add_limit(reljac::VelocityBox{to_vector(lo, p.nv(), "lo"), to_vector(hi, p.nv(), "hi")});
           })
      .def("add_position_limit",
           [](Program& p, const Eigen::VectorXi& q_index, const Eigen::VectorXi& v_index, const Array& q_min,
              const Array& q_max, const Array& urdf_min, const Array& urdf_max, double gain) {
             const long n = q_index.size();
             p.add_limit(reljac::PositionLimit{q_index, v_index, to_vector(q_min, n, "q_min"),
                                               to_vector(q_max, n, "q_max"), to_vector(urdf_min, n, "urdf_min"),
                                               to_vector(urdf_max, n, "urdf_max"), gain});
           })
      .def("add_reversal_damping",
           [](Program& p, const Array& vmax, const Array& floor, double shrink, double grow) {
             reljac::ReversalDamping r;
             r.vmax = to_vector(vmax, p.nv(), "vmax");
             r.floor = to_vector(floor, p.nv(), "floor");
             r.cap = Vector::Constant(p.nv(), std::numeric_limits<double>::infinity());
             r.last = Vector::Zero(p.nv());
             r.shrink = shrink;
             r.grow = grow;
             p.add_limit(r);
           })
      .def("velocity", &velocity, py::arg("q"), py::arg("Ts"), py::arg("Js"), py::arg("posture_errors"),
           py::arg("C") = py::none(), py::arg("d") = py::none())
      .def("system", &step_system, py::arg("q"), py::arg("Ts"), py::arg("Js"), py::arg("posture_errors"))
      .def("guard",
           [](const Program& p, const Array& q_next, const Array& q) {
             const Vector out = p.guard(to_vector(q_next, p.nq(), "q_next"), to_vector(q, p.nq(), "q"));
             return py::array_t<double>(out.size(), out.data());
           })
      .def("reports",
           [](const Program& p) {
             py::list out;
             for (const auto& r : p.reports())
               out.append(py::make_tuple(r.scale, r.saturated, r.saturated_rows, r.damping, r.smallest, r.residual,
                                         r.met));
             return out;
           })
      .def("reset", &Program::reset);
}

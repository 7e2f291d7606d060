// Python bindings of the strict-priority solver (reljac.ik._core.solve_hierarchy).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "hierarchy.hpp"

namespace py = pybind11;
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

namespace {

Array as_array(const py::handle& obj, const char* what) {
  Array a = Array::ensure(obj);
  if (!a) throw py::value_error(std::string(what) + " must be an array of floats");
  return a;
}

reljac::Vector as_vector(const py::handle& obj, const char* what) {
  const Array a = as_array(obj, what);
  if (a.ndim() != 1) throw py::value_error(std::string(what) + " must be one-dimensional");
  return Eigen::Map<const reljac::Vector>(a.data(), a.shape(0));
}

// (v, reports) for levels given as parallel lists; see reljac/ik/backend.py.
py::tuple solve_hierarchy(const py::list& As, const py::list& bs, const std::vector<double>& identity_scales,
                          const py::list& masks, const std::vector<double>& extra_damping, const py::handle& lo,
                          const py::handle& hi, const py::handle& C, const py::handle& d, double threshold,
                          double max_damping) {
  reljac::Constraints cons;
  cons.lo = as_vector(lo, "lo");
  cons.hi = as_vector(hi, "hi");
  const long nv = cons.lo.size();
  if (cons.hi.size() != nv) throw py::value_error("lo and hi must have the same size");
  const Array C_array = as_array(C, "C");
  if (C_array.ndim() != 2 || (C_array.shape(0) && C_array.shape(1) != nv))
    throw py::value_error("C must be (k, nv)");
  cons.C = reljac::RowMatrixMap(C_array.data(), C_array.shape(0), C_array.shape(0) ? nv : 0);
  if (!C_array.shape(0)) cons.C.resize(0, nv);
  cons.d = as_vector(d, "d");
  if (cons.d.size() != cons.C.rows()) throw py::value_error("d must have one entry per row of C");
  const size_t n = bs.size();
  if (As.size() != n || identity_scales.size() != n || masks.size() != n || extra_damping.size() != n)
    throw py::value_error("the level lists must have the same length");
  std::vector<Array> keep;  // the A arrays stay alive (and contiguous) during the solve
  keep.reserve(n);
  std::vector<reljac::Level> levels(n);
  for (size_t k = 0; k < n; ++k) {
    reljac::Level& level = levels[k];
    level.b = as_vector(bs[k], "b");
    level.extra_damping = extra_damping[k];
    if (As[k].is_none()) {
      if (level.b.size() != nv) throw py::value_error("an identity level needs b of size nv");
      level.identity_scale = identity_scales[k];
      if (!masks[k].is_none()) level.mask = as_vector(masks[k], "mask");
      if (level.mask.size() && level.mask.size() != nv) throw py::value_error("mask must have size nv");
    } else {
      keep.push_back(as_array(As[k], "A"));
      const Array& A = keep.back();
      if (A.ndim() != 2 || A.shape(0) != level.b.size() || A.shape(1) != nv)
        throw py::value_error("A must be (len(b), nv)");
      level.A = A.data();
    }
  }
  reljac::Policy policy{threshold, max_damping};
  std::vector<reljac::LevelReport> reports;
  reljac::Vector v;
  {
    py::gil_scoped_release release;
    v = reljac::solve_hierarchy(levels, cons, policy, reports);
  }
  py::list out;
  for (const auto& r : reports)
    out.append(py::make_tuple(r.scale, r.saturated, r.saturated_rows, r.damping, r.smallest, r.residual, r.met,
                              r.limit_kind, r.limit_index));
  return py::make_tuple(py::array_t<double>(v.size(), v.data()), out);
}

}  // namespace

void bind_hierarchy(py::module_& m) {
  m.def("solve_hierarchy", &solve_hierarchy, py::arg("As"), py::arg("bs"), py::arg("identity_scales"),
        py::arg("masks"), py::arg("extra_damping"), py::arg("lo"), py::arg("hi"), py::arg("C"), py::arg("d"),
        py::arg("threshold"), py::arg("max_damping"));
}

// Python bindings of the strict-priority solver (reljac.ik._core.solve_hierarchy).
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "active_set.hpp"
#include "bindings.hpp"
#include "hierarchy.hpp"
#include "hierarchy_rank.hpp"

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

// Level k's bounds (lowers[k], uppers[k]: None or (rows) arrays, +-inf allowed; one of them None:
// one-sided), checked as reljac.ik.solvers.inequality.level_rows checks them, with its messages.
void set_bounds(reljac::Level& level, size_t k, const py::handle& lower, const py::handle& upper) {
  if (lower.is_none() && upper.is_none()) return;
  const long m = level.b.size();
  const char* names[2] = {"lower", "upper"};
  const py::handle given[2] = {lower, upper};
  reljac::Vector* out[2] = {&level.lower, &level.upper};
  for (int side = 0; side < 2; ++side) {
    const double fill = side == 0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    if (given[side].is_none()) {
      *out[side] = reljac::Vector::Constant(m, fill);
      continue;
    }
    const Array a = Array::ensure(given[side]);
    if (!a || a.ndim() != 1 || a.shape(0) != m || std::any_of(a.data(), a.data() + m, [](double x) { return std::isnan(x); }))
      throw py::value_error("level " + std::to_string(k) + ": " + names[side] + " must be (" + std::to_string(m) +
                            ",) numbers (+-inf allowed), got " + std::string(py::repr(given[side])));
    *out[side] = Eigen::Map<const reljac::Vector>(a.data(), m);
  }
  for (long j = 0, row = 0; j < m; ++j) {
    if (!level.A && level.mask.size() && !(level.mask(j) > 0)) continue;  // an identity level's masked row
    if (level.lower(j) > level.upper(j))
      throw py::value_error("level " + std::to_string(k) + ": row " + std::to_string(row) + " has lower bound " +
                            std::string(py::repr(py::float_(level.lower(j)))) + " above its upper bound " +
                            std::string(py::repr(py::float_(level.upper(j)))));
    ++row;
  }
}

// (v, reports) for levels given as parallel lists; see reljac/ik/solvers/backend.py.
py::tuple solve_hierarchy(const py::list& As, const py::list& bs, const std::vector<double>& identity_scales,
                          const py::list& masks, const std::vector<double>& extra_damping, const py::handle& lo,
                          const py::handle& hi, const py::handle& C, const py::handle& d, double threshold,
                          double max_damping, const py::object& lowers, const py::object& uppers, int change_cap, int repeat,
                          bool search, bool warm) {
  if (repeat < 1) throw py::value_error("repeat must be >= 1");
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
    level.search = search;
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
  if (!lowers.is_none() || !uppers.is_none()) {
    const py::list lower_list = lowers.is_none() ? py::list(n) : py::list(lowers);
    const py::list upper_list = uppers.is_none() ? py::list(n) : py::list(uppers);
    if (lower_list.size() != n || upper_list.size() != n) throw py::value_error("lowers and uppers need one entry per level");
    for (size_t k = 0; k < n; ++k) set_bounds(levels[k], k, lower_list[k], upper_list[k]);
  }
  reljac::Policy policy{threshold, max_damping, change_cap};
  std::vector<reljac::LevelReport> reports;
  reljac::Vector v;
  {
    py::gil_scoped_release release;
    reljac::Workspace workspace;
    if (warm) reljac::lex::lex_space(workspace).warm_start = true;
    for (int i = 0; i < repeat; ++i) v = reljac::solve_hierarchy(levels, cons, policy, reports, workspace);
    reljac::finish_reports(reports, workspace);
  }
  return py::make_tuple(py::array_t<double>(v.size(), v.data()), py::cast(reports));
}

// The rank of a Gram matrix as the compiled solver certifies it without an eigen-decomposition
// (hierarchy_rank.hpp, pivoted_rank): (rank, pivots), rank -1 where nothing is certified.
py::tuple certified_rank(const reljac::Matrix& G) {
  if (G.rows() != G.cols()) throw py::value_error("G must be square");
  reljac::Matrix F;
  reljac::factor::Pivots pivots;
  int rank = -1;
  if (!reljac::factor::pivoted_rank(G, F, pivots, rank)) rank = -1;
  std::vector<int> order(pivots.data(), pivots.data() + (rank > 0 ? rank : 0));
  return py::make_tuple(rank, order);
}

}  // namespace

void bind_hierarchy(py::module_& m) {
  m.def("certified_rank", &certified_rank, py::arg("G"),
        R"doc(The rank of a Gram matrix G (m, m), m <= 12, as the compiled solver certifies it without an
eigen-decomposition (Cholesky with diagonal pivoting, Weyl's and Cauchy's inequalities:
src/core/hierarchy_rank.hpp): (rank, the pivot rows in order), rank -1 where nothing is certified (the
solver then decomposes G). Only G's lower triangle is read, as the solver forms only that one.)doc");

  m.def("solve_hierarchy", &solve_hierarchy, py::arg("As"), py::arg("bs"), py::arg("identity_scales"),
        py::arg("masks"), py::arg("extra_damping"), py::arg("lo"), py::arg("hi"), py::arg("C"), py::arg("d"),
        py::arg("threshold"), py::arg("max_damping"), py::arg("lowers") = py::none(), py::arg("uppers") = py::none(),
        py::arg("change_cap") = -1, py::arg("repeat") = 1, py::arg("search") = false, py::arg("warm") = false,
        R"doc(Joint velocity v (nv,) for prioritized levels inside lo <= v <= hi and C v <= d, and one report per level.

Level k: A v = b with As[k] (m, nv) and bs[k] (m,), or As[k] None: A = identity_scales[k] diag(masks[k])
(masks[k] (nv,) 1 kept / 0 masked, or None), bs[k] (nv,); extra_damping[k] is added to lambda^2.
lowers[k], uppers[k]: None (an equality level) or (m,) bounds, lower <= A v <= upper (+-inf one-sided;
one of the two None: unbounded on that side); a hierarchy with a bounded level is solved in strict
least violation (reljac/ik/solvers/inequality.py, the specification), else by Saturation in the Null Space
(reljac/ik/solvers/hierarchy.py). threshold, max_damping: the singular damping (DampingPolicy).
change_cap: active-set changes allowed per bounded level (-1: the rule of reljac.ik.solvers.active_set.change_cap);
a level that reaches it stops at its best feasible point and reports capped. repeat: solves in a row
with one workspace, the last one returned (for timing and the allocation test; the first sizes the buffers).
search: the levels are a search's (reljac.ik.solvers.hierarchy.Level.search: extra_damping is its Levenberg-Marquardt mu).
warm: each solve after the first starts each bounded level from the sets it ended with in the one before
(the controller's warm start, reljac.ik.solvers.inequality.WarmStart; not for a search's levels).
Each report: a LevelReport (the core's, bound with named fields: those of reljac.ik.solvers.hierarchy.LevelReport
it fills in, margins None on an equality hierarchy).

Raises ValueError: arrays of the wrong shape, NaN bounds, a lower bound above its upper bound.)doc");
}

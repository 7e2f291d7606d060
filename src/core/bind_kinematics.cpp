// Python bindings of the batched relative kinematics and the capability-map reduction on a
// pin.Model (kinematics.hpp); their Python side is reljac/maps/compiled.py and reljac/maps/kernel.py.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "bindings.hpp"
#include "kinematics.hpp"
#include "pinocchio_objects.hpp"

namespace py = pybind11;
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IntArray = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

namespace {

using reljac::kin::Vector3;

// The C++ model `model` (a pin.Model) wraps; ValueError when it is not one. Called with the GIL.
const pinocchio::Model& pin_model(const py::object& model) {
  try {
    return reljac::pinocchio_object<pinocchio::Model>(model.ptr(), "pin.Model");
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

const double* configurations(const pinocchio::Model& model, const Array& Q, py::ssize_t& n) {
  if (Q.ndim() != 2 || Q.shape(1) != model.nq)
    throw py::value_error("Q must have shape (N, nq) with nq = " + std::to_string(model.nq));
  n = Q.shape(0);
  return Q.data();
}

void check_rows(const std::vector<int>& rows) {
  if (rows.empty() || rows.size() > 6) throw py::value_error("rows must name 1 to 6 rows of J_ab");
  for (int r : rows)
    if (r < 0 || r > 5) throw py::value_error("rows must be in 0..5");
}

// The kinematics of frames (a, b) of `model`, in a pin.Data of its own.
std::unique_ptr<reljac::kin::PairKinematics> pair_of(const pinocchio::Model& model, int frame_a, int frame_b) {
  try {
    return std::make_unique<reljac::kin::PairKinematics>(model, frame_a, frame_b);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

// (T_ab (N, 4, 4), J_ab (N, 6, nv)) for configurations Q (N, nq) of a pin.Model.
py::tuple relative_kinematics(const py::object& model_object, int frame_a, int frame_b, const Array& Q) {
  const pinocchio::Model& model = pin_model(model_object);
  py::ssize_t n;
  const double* q = configurations(model, Q, n);
  const auto pair = pair_of(model, frame_a, frame_b);
  py::array_t<double> T({n, py::ssize_t{4}, py::ssize_t{4}});
  py::array_t<double> J({n, py::ssize_t{6}, py::ssize_t{model.nv}});
  double* t = T.mutable_data();
  double* j = J.mutable_data();
  {
    py::gil_scoped_release release;
    reljac::kin::Pose pose;
    const int columns = pair->columns(), nv = model.nv;
    const std::vector<int>& column_of = pair->column_of();
    std::vector<double> part(6 * static_cast<size_t>(columns));
    std::fill(j, j + n * 6 * nv, 0.0);
    for (py::ssize_t s = 0; s < n; ++s) {
      pair->evaluate(q + s * model.nq, pose, part.data());
      double* J_s = j + s * 6 * nv;
      for (int r = 0; r < 6; ++r)
        for (int k = 0; k < columns; ++k) J_s[r * nv + column_of[k]] = part[r * columns + k];
      Eigen::Map<Eigen::Matrix<double, 4, 4, Eigen::RowMajor>> H(t + 16 * s);
      H.setIdentity();
      H.topLeftCorner<3, 3>() = pose.R;
      H.topRightCorner<3, 1>() = pose.p;
    }
  }
  return py::make_tuple(T, J);
}

// Manipulability of rows `rows` of J_ab for each configuration of Q (N, nq): (N,).
py::array_t<double> manipulabilities(const py::object& model_object, int frame_a, int frame_b, const Array& Q,
                                     const std::vector<int>& rows) {
  const pinocchio::Model& model = pin_model(model_object);
  py::ssize_t n;
  const double* q = configurations(model, Q, n);
  check_rows(rows);
  const auto pair = pair_of(model, frame_a, frame_b);
  py::array_t<double> out(n);
  double* w = out.mutable_data();
  {
    py::gil_scoped_release release;
    std::vector<double> J(6 * static_cast<size_t>(pair->columns()));
    reljac::kin::Pose pose;
    for (py::ssize_t s = 0; s < n; ++s) {
      pair->evaluate(q + s * model.nq, pose, J.data());
      w[s] = reljac::kin::manipulability(J.data(), pair->columns(), model.nv, rows);
    }
  }
  return out;
}

// One chunk's reduction of a capability map (reljac/maps/kernel.py), on its own copy of the pin.Model.
class Reduction {
 public:
  Reduction(const py::object& model_object, int frame_a, int frame_b, const Array& origin, double voxel,
            const IntArray& dims, const Array& directions, int axis, const std::vector<int>& rows) {
    const pinocchio::Model& model = pin_model(model_object);
    nq_ = model.nq;
    if (origin.size() != 3 || dims.size() != 3) throw py::value_error("origin and dims must have 3 entries");
    reljac::kin::Grid grid;
    grid.origin = Eigen::Map<const Vector3>(origin.data());
    grid.voxel = voxel;
    for (int k = 0; k < 3; ++k) grid.dims[k] = dims.at(k);
    if (directions.ndim() != 2 || directions.shape(1) != 3) throw py::value_error("directions must be (n, 3)");
    std::vector<double> dirs(directions.data(), directions.data() + directions.size());
    try {
      reduction_ = std::make_unique<reljac::kin::CapabilityReduction>(model, frame_a, frame_b, grid, std::move(dirs),
                                                                       axis, rows);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(e.what());
    }
  }

  void add(const Array& Q, int64_t first_index) {
    if (Q.ndim() != 2 || Q.shape(1) != nq_) throw py::value_error("Q must have shape (N, nq) with nq = " + std::to_string(nq_));
    const py::ssize_t n = Q.shape(0);
    const double* q = Q.data();
    py::gil_scoped_release release;
    reduction_->add(q, n, first_index);
  }

  // (voxel, count, coverage, best, best_index, outside): one entry per voxel reached so far.
  py::tuple result() const;

 private:
  int nq_;
  std::unique_ptr<reljac::kin::CapabilityReduction> reduction_;
};

py::tuple as_tuple(const reljac::kin::ChunkResult& r) {
  return py::make_tuple(py::array_t<int64_t>(r.voxel.size(), r.voxel.data()),
                        py::array_t<int64_t>(r.count.size(), r.count.data()),
                        py::array_t<uint64_t>(r.coverage.size(), r.coverage.data()),
                        py::array_t<double>(r.best.size(), r.best.data()),
                        py::array_t<int64_t>(r.best_index.size(), r.best_index.data()), r.outside);
}

// Partial results (lists of per-voxel arrays, unique voxels within each) merged into one, in
// linear time without the GIL; see reljac/maps/kernel.py's merge_partials.
py::tuple merge_partials(const std::vector<IntArray>& voxels, const std::vector<IntArray>& counts,
                         const std::vector<py::array_t<uint64_t, py::array::c_style | py::array::forcecast>>& coverages,
                         const std::vector<Array>& bests, const std::vector<IntArray>& best_indices) {
  const size_t n = voxels.size();
  if (counts.size() != n || coverages.size() != n || bests.size() != n || best_indices.size() != n)
    throw py::value_error("the partial lists must have the same length");
  for (size_t p = 0; p < n; ++p) {
    const py::ssize_t k = voxels[p].size();
    if (counts[p].size() != k || coverages[p].size() != k || bests[p].size() != k || best_indices[p].size() != k)
      throw py::value_error("a partial's arrays must have the same length");
  }
  reljac::kin::VoxelTable table;
  {
    py::gil_scoped_release release;
    for (size_t p = 0; p < n; ++p) {
      const int64_t* v = voxels[p].data();
      const int64_t* c = counts[p].data();
      const uint64_t* cov = coverages[p].data();
      const double* b = bests[p].data();
      const int64_t* i = best_indices[p].data();
      for (py::ssize_t e = 0; e < voxels[p].size(); ++e) table.add(v[e], c[e], cov[e], b[e], i[e]);
    }
  }
  return as_tuple(table.result());
}

py::tuple Reduction::result() const { return as_tuple(reduction_->result()); }

// Merge a partial result into a map's dense per-voxel arrays, in place (reljac/maps/kernel.py's
// Accumulator.add); the partial's voxels are unique.
void accumulate(py::array_t<int64_t, py::array::c_style> count, py::array_t<uint64_t, py::array::c_style> coverage,
                py::array_t<double, py::array::c_style> best, py::array_t<int64_t, py::array::c_style> best_index,
                const IntArray& voxel, const IntArray& part_count,
                const py::array_t<uint64_t, py::array::c_style | py::array::forcecast>& part_coverage,
                const Array& part_best, const IntArray& part_best_index) {
  const py::ssize_t size = count.size(), k = voxel.size();
  if (coverage.size() != size || best.size() != size || best_index.size() != size)
    throw py::value_error("the map's arrays must have the same size");
  if (part_count.size() != k || part_coverage.size() != k || part_best.size() != k || part_best_index.size() != k)
    throw py::value_error("a partial's arrays must have the same length");
  const int64_t* v = voxel.data();
  for (py::ssize_t e = 0; e < k; ++e)
    if (v[e] < 0 || v[e] >= size) throw py::value_error("a voxel index is outside the map");
  int64_t* c = count.mutable_data();
  uint64_t* cov = coverage.mutable_data();
  double* b = best.mutable_data();
  int64_t* bi = best_index.mutable_data();
  const int64_t* pc = part_count.data();
  const uint64_t* pcov = part_coverage.data();
  const double* pb = part_best.data();
  const int64_t* pbi = part_best_index.data();
  py::gil_scoped_release release;
  for (py::ssize_t e = 0; e < k; ++e) {
    const int64_t i = v[e];
    c[i] += pc[e];
    cov[i] |= pcov[e];
    if (pb[e] > b[i] || (pb[e] == b[i] && pbi[e] < bi[i])) {
      b[i] = pb[e];
      bi[i] = pbi[e];
    }
  }
}

// Q (n, nq) from uniforms U (n, k) by a sampling plan (reljac/maps/sampling.py), without the GIL.
py::array_t<double> configurations_from_uniforms(const IntArray& kinds, const IntArray& q_idx, const IntArray& u_idx,
                                                 const Array& lo, const Array& hi, const Array& neutral,
                                                 const Array& U) {
  const py::ssize_t m = kinds.size();
  if (q_idx.size() != m || u_idx.size() != m || lo.size() != m || hi.size() != m)
    throw py::value_error("the plan arrays must have the same length");
  if (U.ndim() != 2) throw py::value_error("U must be (n, k)");
  const int nq = static_cast<int>(neutral.size()), k = static_cast<int>(U.shape(1));
  std::vector<reljac::kin::SampleColumn> plan(m);
  for (py::ssize_t i = 0; i < m; ++i) {
    plan[i] = {static_cast<int>(kinds.at(i)), static_cast<int>(q_idx.at(i)), static_cast<int>(u_idx.at(i)), lo.at(i),
               hi.at(i)};
    const int q_width = plan[i].kind == 0 ? 1 : plan[i].kind == 1 ? 2 : 4, u_width = plan[i].kind == 2 ? 3 : 1;
    if (plan[i].kind < 0 || plan[i].kind > 2 || plan[i].q < 0 || plan[i].q + q_width > nq || plan[i].u < 0 ||
        plan[i].u + u_width > k)
      throw py::value_error("a sampling plan entry is out of range");
  }
  const py::ssize_t n = U.shape(0);
  py::array_t<double> Q({n, static_cast<py::ssize_t>(nq)});
  double* out = Q.mutable_data();
  const double* u = U.data();
  const double* q0 = neutral.data();
  {
    py::gil_scoped_release release;
    reljac::kin::configurations_from_uniforms(plan, q0, nq, u, k, n, out);
  }
  return Q;
}

// The machine's own scaling for `reljac bench solve`: the wall time [s] of T_ab and J_ab
// (PairKinematics: Pinocchio's computeJointJacobians) at every configuration of Q (N, nq), rows
// split evenly across `workers` threads, each with its own pin.Data made before the clock starts.
double threaded_kinematics_seconds(const py::object& model_object, int frame_a, int frame_b, const Array& Q,
                                   int workers) {
  const pinocchio::Model& model = pin_model(model_object);
  py::ssize_t n;
  const double* q = configurations(model, Q, n);
  if (workers < 1) throw py::value_error("workers must be at least 1");
  std::vector<std::unique_ptr<reljac::kin::PairKinematics>> pairs;
  for (int w = 0; w < workers; ++w) pairs.push_back(pair_of(model, frame_a, frame_b));
  py::gil_scoped_release release;
  const auto start = std::chrono::steady_clock::now();
  auto work = [&](int w) {
    reljac::kin::Pose pose;
    std::vector<double> J(6 * static_cast<size_t>(pairs[w]->columns()));
    for (py::ssize_t s = n * w / workers; s < n * (w + 1) / workers; ++s)
      pairs[w]->evaluate(q + s * model.nq, pose, J.data());
  };
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (std::thread& t : threads) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void bind_kinematics(py::module_& m) {
  m.def("relative_kinematics", &relative_kinematics, py::arg("model"), py::arg("frame_a"), py::arg("frame_b"),
        py::arg("Q"), "(T_ab (N, 4, 4), J_ab (N, 6, nv)) of a pin.Model for configurations Q (N, nq).");
  m.def("manipulabilities", &manipulabilities, py::arg("model"), py::arg("frame_a"), py::arg("frame_b"), py::arg("Q"),
        py::arg("rows"), "Manipulability of rows `rows` of J_ab at each configuration of Q (N, nq): (N,).");
  m.def("threaded_kinematics_seconds", &threaded_kinematics_seconds, py::arg("model"), py::arg("frame_a"),
        py::arg("frame_b"), py::arg("Q"), py::arg("workers"),
        "Wall time [s] of T_ab and J_ab at every row of Q (N, nq), split across `workers` threads "
        "(the machine's own scaling, for `reljac bench solve`).");
  py::class_<Reduction>(m, "CapabilityReduction", "One chunk's reduction of a capability map (reljac/maps/kernel.py)")
      .def(py::init<const py::object&, int, int, const Array&, double, const IntArray&, const Array&, int,
                    const std::vector<int>&>(),
           py::arg("model"), py::arg("frame_a"), py::arg("frame_b"), py::arg("origin"), py::arg("voxel"),
           py::arg("dims"), py::arg("directions"), py::arg("axis"), py::arg("rows"),
           "A reduction over the voxels of a map's grid, on a pin.Model (reljac/maps/kernel.py).")
      .def("add", &Reduction::add, py::arg("Q"), py::arg("first_index"),
           "Reduce the samples Q (n, nq), numbered from first_index.")
      .def("result", &Reduction::result, "The chunk's result: per-voxel arrays (reljac/maps/kernel.py).");
  m.def("accumulate", &accumulate, py::arg("count"), py::arg("coverage"), py::arg("best"), py::arg("best_index"),
        py::arg("voxel"), py::arg("part_count"), py::arg("part_coverage"), py::arg("part_best"),
        py::arg("part_best_index"), "Merge a partial result into a map's dense per-voxel arrays, in place.");
  m.def("merge_partials", &merge_partials, py::arg("voxels"), py::arg("counts"), py::arg("coverages"),
        py::arg("bests"), py::arg("best_indices"), "Partial results (lists of per-voxel arrays) merged into one.");
  m.def("configurations_from_uniforms", &configurations_from_uniforms, py::arg("kinds"), py::arg("q_idx"),
        py::arg("u_idx"), py::arg("lo"), py::arg("hi"), py::arg("neutral"), py::arg("U"),
        "Q (n, nq) from uniforms U (n, k) by a sampling plan (reljac/maps/sampling.py).");
}

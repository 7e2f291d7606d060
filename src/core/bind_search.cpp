// Python bindings of the compiled search (Step.search, search_many, SearchOptions, SearchResult);
// see reljac/ik/search.py. Names and shapes only.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "search.hpp"

namespace py = pybind11;
using reljac::SearchOptions;
using reljac::SearchResult;
using reljac::Step;

void bind_search(py::module_& m) {
  py::class_<SearchOptions>(m, "SearchOptions", "How a search runs (reljac.ik.search.SearchOptions documents each field).")
      .def(py::init<>())
      .def_readwrite("tol", &SearchOptions::tol, "every counted task's error norms at most this [m, rad]")
      .def_readwrite("max_iters", &SearchOptions::max_iters, "Newton iterations of one local search")
      .def_readwrite("restarts", &SearchOptions::restarts, "local searches after the first (< 0: no cap)")
      .def_readwrite("timeout", &SearchOptions::timeout, "wall-clock budget [s] (< 0: none)")
      .def_readwrite("seed", &SearchOptions::seed, "seed of the restarts' random stream (splitmix64)")
      .def_readwrite("mu_initial", &SearchOptions::mu_initial, "Levenberg-Marquardt damping at a search's start")
      .def_readwrite("mu_grow", &SearchOptions::mu_grow, "its factor after a rejected step")
      .def_readwrite("mu_shrink", &SearchOptions::mu_shrink, "its factor after an accepted step")
      .def_readwrite("mu_min", &SearchOptions::mu_min, "its floor")
      .def_readwrite("mu_max", &SearchOptions::mu_max, "above it a local search ends")
      .def_readwrite("stall_iters", &SearchOptions::stall_iters, "iterations in a row rejected or below stall_ratio end it")
      .def_readwrite("stall_ratio", &SearchOptions::stall_ratio, "relative improvement of a step that counts")
      .def_readwrite("floor", &SearchOptions::floor, "level costs below this tie [m^2, rad^2]")
      .def_readwrite("max_step", &SearchOptions::max_step,
                     "a Newton step's largest joint displacement at most this [rad or m] (<= 0: no cap)")
      .def_readwrite("counted", &SearchOptions::counted, "indices of the tasks that decide convergence")
      .def_readwrite("sample_kind", &SearchOptions::sample_kind, "(nq) 0 uniform, 1 the seed's, 2 an angle pair")
      .def_readwrite("lower", &SearchOptions::lower, "(nq) lower bounds of the uniform coordinates")
      .def_readwrite("upper", &SearchOptions::upper, "(nq) upper bounds of the uniform coordinates");
  py::class_<SearchResult>(m, "SearchResult", "What a search found (reljac.ik.search).")
      .def_readonly("q", &SearchResult::q, "(nq) the converged configuration or the best found")
      .def_readonly("converged", &SearchResult::converged)
      .def_property_readonly("reason", [](const SearchResult& r) { return static_cast<int>(r.reason); },
                             "0 converged, 1 timeout, 2 restarts exhausted, 3 no finite rows")
      .def_readonly("iterations", &SearchResult::iterations, "Newton iterations in all")
      .def_readonly("searches", &SearchResult::searches, "local searches (1 + restarts)")
      .def_readonly("level_costs", &SearchResult::level_costs, "|W e|^2 per level at q")
      .def_readonly("seconds", &SearchResult::seconds, "wall-clock time [s]")
      .def_readonly("failing", &SearchResult::failing, "the task whose rows were not finite, or -1");
  auto step = py::reinterpret_borrow<py::class_<Step>>(m.attr("Step"));
  step.def("set_task_target", &Step::set_task_target, py::arg("index"), py::arg("values"),
           "A frame task's target (16 values of T_ab, row-major), a CoM task's (size) or a posture's (nq).")
      .def("search", &Step::search, py::arg("q0"), py::arg("options"), py::call_guard<py::gil_scoped_release>(),
           "A search from q0 (reljac.ik.search); built-in tasks and limits only.");
  py::class_<reljac::SearchBatch>(m, "SearchBatch", "What many searches found, as arrays (row i: problem i).")
      .def_readonly("q", &reljac::SearchBatch::q, "(n, nq) each problem's configuration")
      .def_readonly("converged", &reljac::SearchBatch::converged, "(n) bool")
      .def_readonly("reason", &reljac::SearchBatch::reason, "(n) SearchResult.reason's codes")
      .def_readonly("iterations", &reljac::SearchBatch::iterations, "(n) Newton iterations in all")
      .def_readonly("searches", &reljac::SearchBatch::searches, "(n) local searches (1 + restarts)")
      .def_readonly("level_costs", &reljac::SearchBatch::level_costs, "(n, levels) |W e|^2 per level at q")
      .def_readonly("seconds", &reljac::SearchBatch::seconds, "(n) wall-clock time of each search [s]")
      .def_readonly("failing", &reljac::SearchBatch::failing, "(n) the task whose rows were not finite, or -1");
  m.def(
      "search_many",
      [](const std::vector<Step*>& steps, const std::vector<int>& target_tasks, const std::vector<int>& target_sizes,
         const reljac::RowMatrix& targets, const reljac::RowMatrix& seeds, const SearchOptions& options,
         const py::object& progress, double every) {
        // between two of the calling thread's problems: Ctrl-C (a signal's Python handler), then progress
        const reljac::SearchProgress report = [&progress](long finished) {
          py::gil_scoped_acquire gil;
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
          if (!progress.is_none()) progress(finished);
        };
        std::vector<SearchResult> found;
        {
          py::gil_scoped_release release;
          found = reljac::search_many(steps, target_tasks, target_sizes, targets, seeds, options, report, every);
        }
        return reljac::as_batch(found);
      },
      py::arg("steps"), py::arg("target_tasks"), py::arg("target_sizes"), py::arg("targets"), py::arg("seeds"),
      py::arg("options"), py::arg("progress") = py::none(), py::arg("every") = 0.1,
      "One search per row of targets, on one thread per step (reljac.ik.solve.Solver.solve_many); "
      "progress(finished) is called with the GIL between two of the calling thread's problems, at most "
      "every `every` seconds [s], after the signal handlers (Ctrl-C stops every thread).");
}

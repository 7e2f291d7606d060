// Python bindings of the compiled search (Step.search, search_many, SearchOptions, SearchResult);
// see reljac/ik/search/local_search.py. Names and shapes only.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "search.hpp"

namespace py = pybind11;
using reljac::SearchOptions;
using reljac::SearchResult;
using reljac::Step;

// [s] the longest budget a search keeps the GIL through (Step.search below)
constexpr double kHoldGil = 0.05;

void bind_search(py::module_& m) {
  // The options from their one declaration (RELJAC_SEARCH_OPTIONS, search_options.hpp): the names
  // (SearchOptions.fields), the keyword arguments of the constructor, the attributes and their docs.
  static const std::vector<std::string> names = {
#define RELJAC_OPTION_NAME(type, name, value, doc) #name,
      RELJAC_SEARCH_OPTIONS(RELJAC_OPTION_NAME)
#undef RELJAC_OPTION_NAME
  };
  py::class_<SearchOptions> options(m, "SearchOptions",
                                    "How a search runs: SearchOptions(**options), each option by name (`fields`), "
                                    "the others at their defaults (reljac.ik.search.local_search).");
  options.def(py::init([](const py::KWArgs<double>& given) {  // (typed for the stub: ints are numbers too)
                SearchOptions o;
                std::size_t used = 0;
#define RELJAC_OPTION_KEYWORD(type, name, value, doc) \
  if (given.contains(#name)) {                        \
    o.name = given[#name].cast<type>();               \
    ++used;                                           \
  }
                RELJAC_SEARCH_OPTIONS(RELJAC_OPTION_KEYWORD)
#undef RELJAC_OPTION_KEYWORD
                if (used != given.size()) {
                  std::string valid;
                  for (const std::string& name : names) valid += (valid.empty() ? "" : ", ") + name;
                  throw py::type_error("SearchOptions takes these keyword arguments only: " + valid);
                }
                return o;
              }),
              "Every option by keyword (the others at their defaults).");
#define RELJAC_OPTION_ATTRIBUTE(type, name, value, doc) options.def_readwrite(#name, &SearchOptions::name, doc);
  RELJAC_SEARCH_OPTIONS(RELJAC_OPTION_ATTRIBUTE)
#undef RELJAC_OPTION_ATTRIBUTE
  options.attr("fields") = py::tuple(py::cast(names));
  options.def_readwrite("counted", &SearchOptions::counted, "indices of the tasks that decide convergence")
      .def_readwrite("sample_kind", &SearchOptions::sample_kind, "(nq) 0 uniform, 1 the seed's, 2 an angle pair")
      .def_readwrite("lower", &SearchOptions::lower, "(nq) lower bounds of the uniform coordinates")
      .def_readwrite("upper", &SearchOptions::upper, "(nq) upper bounds of the uniform coordinates");
  py::class_<SearchResult>(m, "SearchResult", "What a search found (reljac.ik.search.local_search).")
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
      .def(
          "search",
          [](Step& step, const reljac::Vector& q0, const SearchOptions& options) {
            // A budget of kHoldGil or less keeps the GIL throughout: taking it back after the search waits
            // for a busy Python thread's switch interval (5 ms), which no budget counts (a 2 ms budget
            // took 5.3 ms beside a busy thread). Ctrl-C is asked between iterations: the signal
            // handlers run (a KeyboardInterrupt ends the search), every 20 ms with the GIL, every
            // 100 ms without (taking it then costs at most a switch interval a time).
            try {
              if (options.timeout >= 0 && options.timeout <= kHoldGil)
                return step.search(q0, options, [] { return PyErr_CheckSignals() != 0; }, 0.02);
              py::gil_scoped_release release;
              return step.search(q0, options, [] {
                py::gil_scoped_acquire gil;
                return PyErr_CheckSignals() != 0;
              }, 0.1);
            } catch (const reljac::SearchInterrupted&) {
              throw py::error_already_set();  // (the error the signal handler set)
            }
          },
          py::arg("q0"), py::arg("options"),
          "A search from q0 (reljac.ik.search.local_search); built-in tasks and limits only. Ctrl-C stops it.");
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
      [](const std::vector<Step*>& steps, const std::vector<int>& target_tasks, const std::vector<int>& target_offsets,
         const std::vector<int>& target_sizes, const reljac::RowMatrix& targets, const reljac::RowMatrix& seeds, const SearchOptions& options,
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
          found = reljac::search_many(steps, target_tasks, target_offsets, target_sizes, targets, seeds, options, report,
                                      every);
        }
        return reljac::as_batch(found);
      },
      py::arg("steps"), py::arg("target_tasks"), py::arg("target_offsets"), py::arg("target_sizes"), py::arg("targets"),
      py::arg("seeds"),
      py::arg("options"), py::arg("progress") = py::none(), py::arg("every") = 0.1,
      "One search per row of targets, on one thread per step (reljac.ik.search.solve.Solver.solve_many): task "
      "target_tasks[j] takes target_sizes[j] values at column target_offsets[j] of the problem's row; "
      "progress(finished) is called with the GIL between two of the calling thread's problems, at most "
      "every `every` seconds [s], after the signal handlers (Ctrl-C stops every thread).");
}

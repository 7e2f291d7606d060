// The options of a search (Step::search, search.cpp) and what it returns. The options are
// declared once, in RELJAC_SEARCH_OPTIONS: the struct's fields and their Python bindings by name
// (bind_search.cpp: attributes, and the constructor's keyword arguments, with these docs) are
// both made from it. reljac/ik/search/options.py's SearchOptions is the Python backend's twin
// (tests/test_search_options.py compares them field by field: names and defaults).
#pragma once

#include <Eigen/Core>
#include <vector>

#include "hierarchy.hpp"

namespace reljac {

// FIELD(type, name, default, doc): one option of a search (specification:
// reljac/ik/search/local_search.py, whose docstring states what each does).
#define RELJAC_SEARCH_OPTIONS(FIELD)                                                                      \
  FIELD(double, tol, 1e-4, "every counted task's error norms at most this [m, rad]")                      \
  FIELD(int, max_iters, 100, "Newton iterations of one local search")                                     \
  FIELD(int, restarts, 20, "local searches after the first (< 0: no cap, the timeout ends it)")          \
  FIELD(double, timeout, -1.0, "wall-clock budget of the search [s] (< 0: none)")                         \
  FIELD(unsigned long long, seed, 0, "seed of the restarts' random stream (splitmix64)")                  \
  FIELD(double, mu_initial, 1e-2, "Levenberg-Marquardt damping of each level at a local search's start")  \
  FIELD(double, mu_grow, 10.0, "its factor after a rejected step")                                         \
  FIELD(double, mu_shrink, 0.5, "its factor after a kept step")                                            \
  FIELD(double, mu_min, 1e-12, "its floor")                                                                \
  FIELD(double, mu_max, 1e4, "every level's damping above it ends a local search")                         \
  FIELD(int, stall_iters, 10, "iterations in a row rejected or improving by less than stall_ratio end it") \
  FIELD(double, stall_ratio, 1e-3, "relative improvement of a kept step that counts as progress")         \
  FIELD(double, weight, 1.0, "the counted tasks' smallest row weight, at most 1 (the floor is (tol weight)^2)") \
  FIELD(double, floor, 1e-4 * 1e-4, "level costs below this tie, a level under it is met ((tol weight)^2) [m^2, rad^2]") \
  FIELD(double, max_step, -1.0, "a Newton step's largest joint displacement at most this [rad or m] (<= 0: no cap)")

#define RELJAC_SEARCH_OPTION_FIELD(type, name, value, doc) type name = value;

// How a search runs (the options above), and the problem's parts a Solver fills in: which tasks
// count and how a restart draws each coordinate.
struct SearchOptions {
  RELJAC_SEARCH_OPTIONS(RELJAC_SEARCH_OPTION_FIELD)
  std::vector<int> counted;     // the tasks whose errors decide convergence
  Eigen::VectorXi sample_kind;  // (nq) 0: uniform in [lower, upper]; 1: the seed's; 2: an angle's (cos, sin) here and next
  Vector lower, upper;          // (nq)
};

#undef RELJAC_SEARCH_OPTION_FIELD

enum class SearchReason { kConverged = 0, kTimeout = 1, kExhausted = 2, kFailed = 3 };

struct SearchResult {
  Vector q;                          // the converged configuration, or the best one found
  bool converged = false;
  SearchReason reason = SearchReason::kExhausted;
  int iterations = 0, searches = 0;  // Newton iterations in all; local searches (1 + restarts)
  Vector level_costs;                // |W e|^2 per level at q
  double seconds = 0;
  int failing = -1;                  // as Step::velocity's, when reason is kFailed
};

}  // namespace reljac

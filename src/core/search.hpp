// The compiled search for a configuration: Step::search (step.hpp) and many searches on threads.
// Specification and oracle: reljac/ik/search.py.
#pragma once

#include <vector>

#include "step.hpp"

namespace reljac {

// One search per row of `targets` on `steps.size()` threads (each thread owns one Step, built
// alike; problem i runs on whichever thread is free, so every Step must describe the same
// problem). Problem i: the targets of tasks `target_tasks` (Step::set_task_target) from its row,
// `target_sizes[j]` values each, in order; the seed row i of `seeds` (or its only row); and
// options.seed + i as the random stream's seed, so that it equals Step::search with that seed.
// The first exception a thread meets is rethrown after every thread has stopped.
std::vector<SearchResult> search_many(const std::vector<Step*>& steps, const std::vector<int>& target_tasks,
                                      const std::vector<int>& target_sizes, const RowMatrix& targets,
                                      const RowMatrix& seeds, const SearchOptions& options);

}  // namespace reljac

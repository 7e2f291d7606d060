// The compiled search for a configuration: Step::search (step.hpp) and many searches on threads.
// Specification and oracle: reljac/ik/search/local_search.py.
#pragma once

#include <functional>
#include <vector>

#include "search_options.hpp"
#include "step.hpp"

namespace reljac {

// What search_many calls on the calling thread between two of its problems, at most every
// `every` seconds: the number of problems finished so far (any thread's). An exception it throws
// stops every thread (each ends the problem it is on) and is rethrown by search_many.
using SearchProgress = std::function<void(long finished)>;

// The results of many searches as arrays, row i problem i's (SearchResult's fields).
struct SearchBatch {
  RowMatrix q;                                      // (n, nq)
  Eigen::Matrix<bool, Eigen::Dynamic, 1> converged; // (n)
  Eigen::VectorXi reason, iterations, searches, failing;  // (n) each
  RowMatrix level_costs;                            // (n, levels)
  Vector seconds;                                   // (n)
};
SearchBatch as_batch(const std::vector<SearchResult>& results);

// One search per row of `targets` on `steps.size()` threads (each thread owns one Step, built
// alike; problem i runs on whichever thread is free, so every Step must describe the same
// problem). Problem i: the target of task `target_tasks[j]` (Step::set_task_target) from its row's
// `target_sizes[j]` values at column `target_offsets[j]`, for each j in order (two tasks may read
// the same columns: one task in two levels, a ball and the task it is about); the seed row i of
// `seeds` (or its only row); and options.seed + i (modulo 2^64) as the random stream's seed, so
// that it equals Step::search with that seed.
// The first exception a thread meets is rethrown after every thread has stopped. `progress`
// (if any) runs on the calling thread, the one that runs steps[0]'s problems, with counts that
// rise, the last of them n once every thread has stopped (however few problems that thread ran).
std::vector<SearchResult> search_many(const std::vector<Step*>& steps, const std::vector<int>& target_tasks,
                                      const std::vector<int>& target_offsets, const std::vector<int>& target_sizes,
                                      const RowMatrix& targets,
                                      const RowMatrix& seeds, const SearchOptions& options,
                                      const SearchProgress& progress = {}, double every = 0.1);

}  // namespace reljac

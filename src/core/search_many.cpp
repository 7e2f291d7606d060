// Many compiled searches on threads (search_many, search.hpp) and the target a search of many
// sets per problem (Step::set_task_target); one search is search.cpp. Specification: the
// threaded path of reljac/ik/solve.py (Solver.solve_many), which equals one solve per problem.
#include <atomic>
#include <exception>
#include <thread>

#include "search.hpp"
#include "step_impl.hpp"

namespace reljac {

void Step::set_task_target(int index, const Vector& values) {
  impl_->tasks.at(index)->set_target(*impl_, values);
}

std::vector<SearchResult> search_many(const std::vector<Step*>& steps, const std::vector<int>& target_tasks,
                                      const std::vector<int>& target_sizes, const RowMatrix& targets,
                                      const RowMatrix& seeds, const SearchOptions& options) {
  const long n = targets.rows();
  if (steps.empty()) throw std::invalid_argument("search_many needs at least one step");
  if (target_tasks.size() != target_sizes.size()) throw std::invalid_argument("one size per target task");
  long width = 0;
  for (int size : target_sizes) width += size;
  if (targets.cols() != width) throw std::invalid_argument("targets must have one column per target value");
  if (seeds.rows() != 1 && seeds.rows() != n) throw std::invalid_argument("seeds must have 1 or len(targets) rows");
  for (Step* step : steps)
    if (seeds.cols() != step->nq()) throw std::invalid_argument("seeds must have nq columns");
  std::vector<SearchResult> results(static_cast<size_t>(n));
  std::atomic<long> next{0};
  std::vector<std::exception_ptr> errors(steps.size());
  auto work = [&](size_t worker) {
    try {
      Step& step = *steps[worker];
      SearchOptions mine = options;
      for (long i; (i = next.fetch_add(1)) < n;) {
        long at = 0;
        for (size_t j = 0; j < target_tasks.size(); ++j) {
          step.set_task_target(target_tasks[j], targets.row(i).segment(at, target_sizes[j]).transpose());
          at += target_sizes[j];
        }
        mine.seed = options.seed + static_cast<unsigned long long>(i);
        results[static_cast<size_t>(i)] = step.search(seeds.row(seeds.rows() == 1 ? 0 : i).transpose(), mine);
      }
    } catch (...) {
      errors[worker] = std::current_exception();
      next.store(n);
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < steps.size(); ++w) threads.emplace_back(work, w);
  work(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

}  // namespace reljac

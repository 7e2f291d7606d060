// Many compiled searches on threads (search_many, search.hpp), their results as arrays (as_batch),
// and the target a search of many sets per problem (Step::set_task_target); one search is
// search.cpp. Specification: the threaded path of reljac/ik/search/solve.py (Solver.solve_many), which
// equals one solve per problem.
#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

#include "search.hpp"
#include "step_impl.hpp"

namespace reljac {

void Step::set_task_target(int index, const Vector& values) {
  impl_->tasks.at(index)->set_target(*impl_, values);
}

std::vector<SearchResult> search_many(const std::vector<Step*>& steps, const std::vector<int>& target_tasks,
                                      const std::vector<int>& target_offsets, const std::vector<int>& target_sizes,
                                      const RowMatrix& targets,
                                      const RowMatrix& seeds, const SearchOptions& options,
                                      const SearchProgress& progress, double every) {
  const long n = targets.rows();
  if (steps.empty()) throw std::invalid_argument("search_many needs at least one step");
  if (target_tasks.size() != target_sizes.size() || target_tasks.size() != target_offsets.size())
    throw std::invalid_argument("one offset and one size per target task");
  for (size_t j = 0; j < target_tasks.size(); ++j)
    if (target_offsets[j] < 0 || target_sizes[j] < 0 || target_offsets[j] + target_sizes[j] > targets.cols())
      throw std::invalid_argument("a target task's columns are outside targets");
  if (seeds.rows() != 1 && seeds.rows() != n) throw std::invalid_argument("seeds must have 1 or len(targets) rows");
  for (Step* step : steps)
    if (seeds.cols() != step->nq()) throw std::invalid_argument("seeds must have nq columns");
  std::vector<SearchResult> results(static_cast<size_t>(n));
  std::atomic<long> next{0}, finished{0};
  std::vector<std::exception_ptr> errors(steps.size());
  long shown = 0;  // the count progress was last called with (the calling thread's alone)
  auto work = [&](size_t worker) {
    try {
      Step& step = *steps[worker];
      SearchOptions mine = options;
      auto reported = std::chrono::steady_clock::now();
      for (long i; (i = next.fetch_add(1)) < n;) {
        for (size_t j = 0; j < target_tasks.size(); ++j)
          step.set_task_target(target_tasks[j], targets.row(i).segment(target_offsets[j], target_sizes[j]).transpose());
        mine.seed = options.seed + static_cast<unsigned long long>(i);
        results[static_cast<size_t>(i)] = step.search(seeds.row(seeds.rows() == 1 ? 0 : i).transpose(), mine);
        const long count = finished.fetch_add(1) + 1;
        if (worker == 0 && progress) {
          const auto now = std::chrono::steady_clock::now();
          if (std::chrono::duration<double>(now - reported).count() >= every) {
            reported = now;
            shown = count;
            progress(count);
          }
        }
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
  if (progress && shown < n) progress(n);  // every problem, told on the calling thread once they are done
  return results;
}

SearchBatch as_batch(const std::vector<SearchResult>& results) {
  const long n = static_cast<long>(results.size());
  const long nq = n ? results[0].q.size() : 0, levels = n ? results[0].level_costs.size() : 0;
  SearchBatch b;
  b.q.resize(n, nq);
  b.level_costs.resize(n, levels);
  b.converged.resize(n);
  b.seconds.resize(n);
  for (Eigen::VectorXi* column : {&b.reason, &b.iterations, &b.searches, &b.failing}) column->resize(n);
  for (long i = 0; i < n; ++i) {
    const SearchResult& r = results[static_cast<size_t>(i)];
    if (r.q.size() != nq || r.level_costs.size() != levels)
      throw std::logic_error("search_many: results of different shapes");  // one Step's problem: never
    b.q.row(i) = r.q.transpose();
    b.level_costs.row(i) = r.level_costs.transpose();
    b.converged(i) = r.converged;
    b.reason(i) = static_cast<int>(r.reason);
    b.iterations(i) = r.iterations;
    b.searches(i) = r.searches;
    b.failing(i) = r.failing;
    b.seconds(i) = r.seconds;
  }
  return b;
}

}  // namespace reljac

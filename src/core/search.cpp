// The compiled search for a configuration (Step::search; search_many: search_many.cpp): its phases,
// restarts and exact pass around local searches (search_local.hpp). Its specification and test
// oracle is reljac/ik/search/python_search.py (PythonSearch; local_search.py the local searches),
// whose docstrings explain the method. Same constants, same order of decisions, the same random
// stream (splitmix64), so both backends find the same q from the same seed.
#include "search.hpp"

#include "search_local.hpp"
#include "search_restarts.hpp"

namespace reljac {

namespace {

using namespace search_order;     // NOLINT: the search's order (search_order.hpp)
using namespace search_restarts;  // NOLINT: where its restarts start (search_restarts.hpp)
using search_local::kExactReserve;
using search_local::kExactShare;
using search_local::LocalSearch;

constexpr int kPolishIters = 20;  // Newton iterations of the strict phase after a flat one, at most

}  // namespace

// The whole search: local searches from the seed and from restarts, each in its phases.
class Searcher : public LocalSearch {
 public:
  Searcher(Step::Impl& s, const SearchOptions& o) : LocalSearch(s, o) {}

  SearchResult run(const Vector& q0) {
    start_ = Clock::now();
    SplitMix64 random{o_.seed};
    best_q_ = q0;
    best_costs_ = Vector::Constant(static_cast<long>(strict_.size()), kInf);
    q_ = q0;
    q_new_.resize(q0.size());
    // the flat phase, then the strict one from where it ended (one phase when they are the same)
    const bool two = flat_.size() != strict_.size();
    reserving_ = two;  // (one phase: one level of counted tasks, no slack, no exact pass)
    while (true) {
      ++out_.searches;
      start_q_ = q_;
      bool collided = false;
      for (int steering = 0; steering < (checked_.steerable() ? 2 : 1); ++steering) {  // free, then steered
        checked_.steer(steering == 1);
        collided_ = false;
        q_ = start_q_;
        const SearchReason status = attempt(two);
        if (status != SearchReason::kExhausted) return end(status);
        collided = collided || collided_;
        if (!collided_) break;
      }
      if (o_.restarts >= 0 && out_.searches > o_.restarts)
        return end(have_best_ ? SearchReason::kExhausted : SearchReason::kFailed);
      if (timed_out()) return end(SearchReason::kTimeout);
      restart_configuration(random, o_, q0, collided ? 0 : out_.searches, q_);
    }
  }

  // python_search.py's attempt: the phases of one local search from q_ (the flat one, then the strict one
  // from where it ended when that flat phase ended lower than every one before it, and not in a
  // collision); kExhausted with q_ where it ended, or what ended the search.
  SearchReason attempt(bool two) {
    for (int phase = two ? 0 : 1; phase < 2; ++phase) {
      if (collided_) break;  // the levels met in a collision: no strict phase from there
      if (two && phase == 1) {  // the strict phase only after a flat one that ended lower than every one before
        counted_part(costs_, flat_counted_, ended_flat_);
        if (have_best_flat_ && !lexicographically_lower(ended_flat_, best_flat_, o_.floor).first) continue;
        best_flat_ = ended_flat_;
        have_best_flat_ = true;
      }
      const int cap = two && phase == 1 ? std::min(o_.max_iters, kPolishIters) : o_.max_iters;
      const SearchReason status = local(phase == 0 ? flat_ : strict_, phase == 0 ? flat_counted_ : strict_counted_,
                                        cap, two && phase == 0);
      if (status != SearchReason::kExhausted) return status;
    }
    return SearchReason::kExhausted;
  }

 private:
  // python_search.py's end: a search of two phases that ends unconverged with a level above its first unmet
  // one met only by kSlack (at the best found) ends on the exact pass from the best found.
  SearchResult end(SearchReason reason) {
    if ((reason == SearchReason::kExhausted || reason == SearchReason::kTimeout) && reserving_ && have_best_ &&
        slack_used(best_costs_, o_.floor, strict_counted_)) {
      reserving_ = false;  // the whole budget from here
      checked_.steer(false);
      if (o_.timeout >= 0 && out_.iterations > 0) {  // the iterations of the time kept for it, whatever the clock
        const double fit = kept_ / (elapsed() / out_.iterations);
        assured_ = out_.iterations + static_cast<int>(std::min(fit, kExactReserve));
      }
      q_ = best_q_;
      if (local(strict_, strict_counted_, o_.max_iters, false, true) == SearchReason::kConverged)
        reason = SearchReason::kConverged;
    }
    return finish(reason);
  }

  SearchResult finish(SearchReason reason) {
    out_.q = best_q_;
    out_.level_costs = best_costs_;
    out_.converged = reason == SearchReason::kConverged;
    out_.reason = reason;
    out_.seconds = elapsed();
    return out_;
  }
};

SearchResult Step::search(const Vector& q0, const SearchOptions& options, const std::function<bool()>& interrupted,
                          double every) {
  Impl& s = *impl_;
  check_size(q0, nq(), "q0");
  if (s.external_tasks || s.external_limits) throw std::invalid_argument("search() needs built-in parts only");
  if (options.sample_kind.size() != nq() || options.lower.size() != nq() || options.upper.size() != nq())
    throw std::invalid_argument("sample_kind, lower and upper must have nq entries");
  for (int index : options.counted)
    if (index < 0 || index >= static_cast<int>(s.tasks.size())) throw std::invalid_argument("no such task");
  s.newton = true;
  reset();
  Searcher searcher(s, options);
  searcher.ask(interrupted, every);
  return searcher.run(q0);
}

}  // namespace reljac

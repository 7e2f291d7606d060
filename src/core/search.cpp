// The compiled search for a configuration (Step::search, search_many); its specification and test
// oracle is reljac/ik/search.py, whose docstring explains the method. Same constants, same order of
// decisions, the same random stream (splitmix64), so both backends find the same q from the same seed.
#include "search.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <thread>

#include "step_impl.hpp"

namespace reljac {

namespace {

constexpr double kTieBand = 1e-12;  // relative difference of two level costs that is a tie
constexpr double kSlack = 1e-2;
constexpr int kPolishIters = 20;  // Newton iterations of the strict phase after a flat one, at most
constexpr double kFeasibleTolerance = 1e-9;  // how far below 0 a row's d may be at a converged q     // met levels may rise to this fraction of the active level's cost
constexpr double kPi = 3.14159265358979323846;

// splitmix64 (Steele, Lea, Flood 2014): the restarts' random stream.
struct SplitMix64 {
  unsigned long long state;
  unsigned long long next() {
    unsigned long long z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

// (better, ratio): `a` below `b` in lexicographic order (costs under `floor` tie), and by how much
// (relative) at the first level that differs.
std::pair<bool, double> lexicographically_lower(const Vector& a, const Vector& b, double floor, int from = 0) {
  for (int k = from; k < a.size(); ++k) {
    const double x = std::max(a(k), floor), y = std::max(b(k), floor);
    if (x < y * (1.0 - kTieBand)) return {true, (y - x) / y};
    if (x > y * (1.0 + kTieBand)) return {false, 0.0};
  }
  return {false, 0.0};
}

// (keep, ratio, culprit) of a step from costs `old` to `fresh` (search.py's improves): the levels
// above the first one above floor (the active one) may rise to max(floor, kSlack old[active]); from
// the active level on, the costs must be lexicographically lower. culprit: the level that got worse.
struct Verdict {
  bool keep = false;
  double ratio = 0.0;
  int culprit = -1;
};

// search.py's active_level: the first level whose cost is above floor and above kSlack times the
// largest cost of a counted level below it.
int active_level(const Vector& costs, double floor, const std::vector<char>& counted) {
  const int n = static_cast<int>(costs.size());
  int active = n;
  double below = 0.0;
  for (int k = n - 1; k >= 0; --k) {
    if (costs(k) > std::max(floor, kSlack * below)) active = k;
    if (counted[k]) below = std::max(below, costs(k));
  }
  return active;
}

Verdict improves(const Vector& fresh, const Vector& old, double floor, const std::vector<char>& counted,
                 int& active) {
  active = active_level(old, floor, counted);
  if (active < old.size()) {
    const double slack = std::max(floor, kSlack * old(active));
    for (int k = 0; k < active; ++k)
      if (fresh(k) > slack) return {false, 0.0, k};
  }
  for (int k = active; k < old.size(); ++k) {
    const double x = std::max(fresh(k), floor), y = std::max(old(k), floor);
    if (x < y * (1.0 - kTieBand)) return {true, (y - x) / y, -1};
    if (x > y * (1.0 + kTieBand) || x != x) return {false, 0.0, k};
  }
  return {false, 0.0, -1};
}

// search.py's raise_damping: after the streak-th rejection in a row, more damping for the levels
// below the culprit (when it was met, or on odd rejections), else for it and those below.
void raise_damping(Vector& mu, int culprit, int active, int streak, double grow) {
  const int n = static_cast<int>(mu.size());
  if (culprit < 0) {
    mu *= grow;
    return;
  }
  const bool blame_below = (culprit < active || streak % 2 == 1) && culprit + 1 < n;
  mu.tail(n - (blame_below ? culprit + 1 : culprit)) *= grow;
}

}  // namespace

// The search's access to the step's parts (the Step's friend in all but name: it uses Impl).
class Searcher {
 public:
  Searcher(Step::Impl& s, const SearchOptions& o) : s_(s), o_(o), strict_(s.levels) {
    // flat_levels of search.py: the counted tasks in one level, then each level's others
    std::vector<int> first;
    std::vector<std::vector<int>> rest;
    for (const auto& level : strict_) {
      std::vector<int> others;
      for (int index : level) (counts(index) ? first : others).push_back(index);
      if (!others.empty()) rest.push_back(others);
    }
    if (!first.empty()) flat_.push_back(first);
    flat_.insert(flat_.end(), rest.begin(), rest.end());
    for (const auto& level : strict_) strict_counted_.push_back(std::any_of(level.begin(), level.end(), counts_));
    for (const auto& level : flat_) flat_counted_.push_back(std::any_of(level.begin(), level.end(), counts_));
  }
  ~Searcher() { s_.levels = strict_; }

  SearchResult run(const Vector& q0) {
    start_ = Clock::now();
    SplitMix64 random{o_.seed};
    best_q_ = q0;
    best_costs_ = Vector::Constant(static_cast<long>(strict_.size()), kInf);
    q_ = q0;
    q_new_.resize(q0.size());
    // the flat phase, then the strict one from where it ended (one phase when they are the same)
    const bool two = flat_.size() != strict_.size();
    while (true) {
      ++out_.searches;
      for (int phase = two ? 0 : 1; phase < 2; ++phase) {
        const SearchReason status = local(phase == 0 ? flat_ : strict_, phase == 0 ? flat_counted_ : strict_counted_,
                                          two && phase == 1 ? std::min(o_.max_iters, kPolishIters) : o_.max_iters);
        if (status != SearchReason::kExhausted) return finish(status);
      }
      if (o_.restarts >= 0 && out_.searches > o_.restarts)
        return finish(have_best_ ? SearchReason::kExhausted : SearchReason::kFailed);
      if (timed_out()) return finish(SearchReason::kTimeout);
      sample(random, q0, q_);
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  SearchResult out_;
  Vector q_, q_new_, best_q_, best_costs_, costs_, new_costs_, level_costs_, new_level_costs_;
  bool have_best_ = false, best_feasible_ = false;

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool timed_out() const { return o_.timeout >= 0 && elapsed() >= o_.timeout; }

  // search.py's PythonSearch.local: a local search from q_ on `levels`; kConverged (q_ kept as
  // best), kTimeout, or kExhausted (q_: where it ended).
  SearchReason local(const std::vector<std::vector<int>>& levels, const std::vector<char>& counted, int max_iters) {
    s_.levels = levels;
    int failing = evaluate(q_, level_costs_, costs_);
    if (failing >= 0 && !have_best_) out_.failing = failing;
    Vector mu = Vector::Constant(static_cast<long>(levels.size()), o_.mu_initial);
    int stale = 0, streak = 0;
    for (int it = 0; failing < 0; ++it) {
      s_.constraints(q_, none_);  // (for the step, and the check that q is feasible)
      const bool ok = feasible();
      if (!have_best_ || (ok && !best_feasible_) ||
          (ok == best_feasible_ && lexicographically_lower(level_costs_, best_costs_, o_.floor).first))
        keep_best(ok);
      if (ok && converged(q_)) {
        keep_best(true);
        return SearchReason::kConverged;
      }
      if (timed_out()) return SearchReason::kTimeout;
      if (it >= max_iters) break;
      if (!newton_step(q_, mu, q_new_)) break;
      ++out_.iterations;
      failing = evaluate(q_new_, new_level_costs_, new_costs_);
      int active = 0;
      const Verdict verdict = failing < 0 ? improves(new_costs_, costs_, o_.floor, counted, active)
                                          : Verdict{false, 0.0, 0};
      if (verdict.keep) {
        q_.swap(q_new_);
        costs_.swap(new_costs_);
        level_costs_.swap(new_level_costs_);
        mu = (mu * o_.mu_shrink).cwiseMax(o_.mu_min);
        streak = 0;
        stale = verdict.ratio < o_.stall_ratio ? stale + 1 : 0;
        if (stale >= o_.stall_iters) break;
      } else {
        raise_damping(mu, verdict.culprit, active, ++streak, o_.mu_grow);
        if (mu.minCoeff() > o_.mu_max || ++stale >= o_.stall_iters) break;
        failing = evaluate(q_, level_costs_, costs_);  // the rows at q again
      }
    }
    return SearchReason::kExhausted;
  }

  void keep_best(bool feasible) {
    best_q_ = q_;
    best_costs_ = level_costs_;
    best_feasible_ = feasible;
    have_best_ = true;
  }

  SearchResult finish(SearchReason reason) {
    out_.q = best_q_;
    out_.level_costs = best_costs_;
    out_.converged = reason == SearchReason::kConverged;
    out_.reason = reason;
    out_.seconds = elapsed();
    return out_;
  }

  Step::Impl& s_;
  const SearchOptions& o_;
  const std::vector<std::vector<int>> strict_;  // the step's levels, restored at the end
  std::vector<std::vector<int>> flat_;
  std::vector<char> strict_counted_, flat_counted_;  // per level: it holds a task that counts
  const std::vector<ExternalRows> none_;
  const std::function<bool(int)> counts_ = [this](int index) { return counts(index); };

  bool counts(int index) const {
    return std::find(o_.counted.begin(), o_.counted.end(), index) != o_.counted.end();
  }

  // Kinematics and the rows of the levels in use at q; costs |W e|^2 per level of the step
  // (level_costs) and per level in use (costs).
  int evaluate(const Vector& q, Vector& level_costs, Vector& costs) {
    int failing = -1;
    s_.kinematics(q, false);
    s_.assemble(q, none_, failing);
    if (failing >= 0) return failing;
    auto sum = [&](const std::vector<std::vector<int>>& levels, Vector& out) {
      out.setZero(static_cast<long>(levels.size()));
      for (size_t k = 0; k < levels.size(); ++k)
        for (int index : levels[k]) out(static_cast<long>(k)) += s_.rows[index].b.squaredNorm();
    };
    sum(strict_, level_costs);
    sum(s_.levels, costs);
    if (!costs.allFinite())  // |W e|^2 overflows (search.py: no local search from q): name the task
      for (size_t i = 0; i < s_.rows.size(); ++i)
        if (!std::isfinite(s_.rows[i].b.squaredNorm())) return static_cast<int>(i);
    return -1;
  }

  // The largest error norm of a counted task (Task.error_norms) is at most tol, for every one.
  bool converged(const Vector& q) const {
    for (int index : o_.counted) {
      double first = 0.0, second = 0.0;  // (position, orientation) of a pose, else (error, -)
      s_.tasks[index]->error_norms(s_, s_.rows[index].e, first, second);
      (void)q;
      if (first > o_.tol || second > o_.tol) return false;
    }
    return true;
  }

  // q_new = integrate(q, v), v the hierarchy's Newton step at q (rows from evaluate(q)) with
  // Levenberg-Marquardt damping mu (one per level); false when v is not finite.
  // search.py's feasible: q satisfies the rows of the constraints at v = 0 (constraints() at q done).
  bool feasible() const {
    const auto d = s_.cons.used_d();
    return d.size() == 0 || d.minCoeff() >= -kFeasibleTolerance;
  }

  bool newton_step(const Vector& q, const Vector& mu, Vector& q_new) {  // constraints() at q done
    for (size_t k = 0; k < s_.level_systems.size(); ++k) s_.level_systems[k].extra_damping = mu(static_cast<long>(k));
    s_.v = solve_hierarchy(s_.level_systems, s_.cons, s_.policy, s_.reports, s_.workspace);
    if (!s_.v.allFinite()) return false;
    s_.advance(q, q_new);
    return q_new.allFinite();
  }

  // A random configuration inside the limits (SearchOptions.sample_kind), else the seed's values.
  void sample(SplitMix64& random, const Vector& seed, Vector& q) const {
    const int nq = static_cast<int>(q.size());
    for (int i = 0; i < nq; ++i) {
      switch (o_.sample_kind(i)) {
        case 0:
          q(i) = o_.lower(i) + random.uniform() * (o_.upper(i) - o_.lower(i));
          break;
        case 2: {
          const double angle = -kPi + 2.0 * kPi * random.uniform();
          q(i) = std::cos(angle);
          q(i + 1) = std::sin(angle);
          ++i;
          break;
        }
        default:
          q(i) = seed(i);
      }
    }
  }
};

SearchResult Step::search(const Vector& q0, const SearchOptions& options) {
  Impl& s = *impl_;
  check_size(q0, nq(), "q0");
  if (s.external_tasks || s.external_limits) throw std::invalid_argument("search() needs built-in parts only");
  if (options.sample_kind.size() != nq() || options.lower.size() != nq() || options.upper.size() != nq())
    throw std::invalid_argument("sample_kind, lower and upper must have nq entries");
  for (int index : options.counted)
    if (index < 0 || index >= static_cast<int>(s.tasks.size())) throw std::invalid_argument("no such task");
  s.newton = true;
  reset();
  return Searcher(s, options).run(q0);
}

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

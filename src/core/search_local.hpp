// One local search of the compiled search (search.cpp's Searcher runs them: its phases, restarts
// and exact pass): Newton steps on the step's levels in search mode, the order they are kept in,
// the entry into bounds, the best configuration found, the budget's clock. Its specification is
// reljac/ik/search/local_search.py (LocalSearch), whose docstring explains the method; same constants,
// same order of decisions. Private to search.cpp.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include "search_collisions.hpp"
#include "search_order.hpp"
#include "step_impl.hpp"

namespace reljac {
namespace search_local {

using namespace search_order;  // NOLINT: the search's order (search_order.hpp)
using search_collisions::CheckedLimits;
using search_collisions::kFeasibleTolerance;

constexpr double kExactReserve = 20;  // iterations' time a timed search of two phases keeps for its exact pass
constexpr double kExactShare = 0.5;   // ... at most this share of its budget
constexpr int kStallWindow = 8;  // a flat phase ends when its counted cost has not fallen by 30 % over this many
constexpr int kStallWindowFrom = 8;       // iterations, from this iteration on
constexpr double kStallWindowRatio = 0.7;
constexpr int kStrictWindow = 3;      // a strict phase ends when its first level not met has not fallen by 30 % over
constexpr int kStrictWindowFrom = 3;  // this many iterations, from this iteration on
constexpr int kEntryBisections = 16;  // halvings of a step cut back to where the bounded tasks it took inside enter

// The search's access to the step's parts (the Step's friend in all but name: it uses Impl), and
// one local search on them; Searcher (search.cpp) derives from it.
class LocalSearch {
 protected:
  LocalSearch(Step::Impl& s, const SearchOptions& o) : checked_(s), s_(s), o_(o), strict_(s.levels) {
    // local_search.py's flat_levels: the counted tasks in one level, then each level's others
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
  ~LocalSearch() {
    s_.levels = strict_;
    for (Level& level : s_.level_systems) level.search = false;  // the controller's steps again
  }

  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  SearchResult out_;
  Vector q_, q_new_, step_, best_q_, best_costs_, costs_, new_costs_, level_costs_, new_level_costs_;
  std::vector<double> history_;
  std::vector<Vector> trail_;  // the costs after each iteration (the strict phase's window)
  std::vector<int> outside_;  // counted tasks with bounds beyond tol at q_ (local_search.py's outside)
  std::vector<Rows> kept_rows_;  // the rows at q_ while a step is tried (keep_rows)
  std::vector<Level> kept_systems_;
  std::vector<RowMatrix> kept_storage_;
  bool have_best_ = false, best_feasible_ = false;
  bool ok_ = false;        // q_ satisfies the steered limits (as last checked)
  CheckedLimits checked_;  // the collision limits: checked where the levels are met, not steered
  bool have_best_flat_ = false;
  Vector best_flat_, ended_flat_, start_q_;  // the lowest flat phase's end (its counted costs); a search's start
  bool collided_ = false;  // the last local search met the levels in a collision
  bool reserving_ = false;  // a timed search keeps time for its exact pass (run: two phases)
  double kept_ = 0.0;  // [s] the time kept for the exact pass when the search last went on (timed_out)
  int assured_ = 0;  // the exact pass runs at least until this many iterations in all, whatever the clock

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 public:
  // Step::search's `interrupted`, asked at most every `every` seconds (check_interrupted).
  void ask(const std::function<bool()>& interrupted, double every) {
    interrupted_ = interrupted;
    every_ = every;
    next_ask_ = every;
  }

 protected:
  std::function<bool()> interrupted_;
  double every_ = 0.1, next_ask_ = 0.1;  // [s]
  // SearchInterrupted where interrupted_ says so (asked when every_ has passed since the last time)
  void check_interrupted() {
    if (!interrupted_) return;
    const double t = elapsed();
    if (t < next_ask_) return;
    next_ask_ = t + every_;
    if (interrupted_()) throw SearchInterrupted();
  }
  // local_search.py's timed_out (budget.py's Budget.spent): what comes next, `next` [s] (negative:
  // one more iteration, at the mean time of one so far), would end past the budget; while
  // reserving_ and the best so far would end on the exact pass (slack_used), less its share: the
  // time of kExactReserve iterations at that mean time, at most kExactShare of the budget. Never
  // before assured_ iterations. Where the search goes on, that share is what it keeps (kept_).
  bool timed_out(double next = -1.0) {
    if (o_.timeout < 0 || out_.iterations < assured_) return false;
    const double t = elapsed();
    const double mean = out_.iterations > 0 ? t / out_.iterations : 0.0;
    double reserve = 0.0;
    if (reserving_ && out_.iterations > 0 && have_best_ && slack_used(best_costs_, o_.floor, strict_counted_))
      reserve = std::min(kExactReserve * mean, kExactShare * o_.timeout);
    if (t + (next < 0 ? mean : next) >= o_.timeout - reserve) return true;
    kept_ = reserve;
    return false;
  }

  // local_search.py's LocalSearch.local: a local search from q_ on `levels`; kConverged (q_ kept as
  // best), kTimeout, or kExhausted (q_: where it ended).
  // window: also end when the counted cost has not fallen below kStallWindowRatio times itself
  // kStallWindow iterations before.
  // The strict phase after a flat one also ends on its own window (window_stalled, kStrictWindow
  // iterations, from the kStrictWindowFrom-th on).
  // exact: steps kept in exact lexicographic order (no kSlack above the active level: the exact pass).
  // costs_ holds the costs where it ended.
  SearchReason local(const std::vector<std::vector<int>>& levels, const std::vector<char>& counted, int max_iters,
                     bool window, bool exact = false) {
    const bool polish = !window && &levels == &strict_ && flat_.size() != strict_.size();
    s_.levels = levels;
    int failing = evaluate(q_, level_costs_, costs_);
    if (failing >= 0 && !have_best_) out_.failing = failing;
    Vector mu = Vector::Constant(static_cast<long>(levels.size()), o_.mu_initial);
    int stale = 0, streak = 0;
    history_.clear();  // the counted cost after each iteration
    history_.reserve(static_cast<size_t>(max_iters) + 2);
    history_.push_back(counted_sum(costs_, counted));
    trail_.clear();
    if (polish) trail_.push_back(costs_);
    bool rejected = false;  // the last step was: q_, its rows (restored) and constraints are as checked
    ok_ = false;
    for (int it = 0; failing < 0; ++it) {
      check_interrupted();
      if (!rejected) {
        try {
          s_.constraints(q_, none_);  // (for the step, and the check that q is feasible)
        } catch (const SupportFailure&) {  // no support region left at q (a restart's legs anywhere)
          if (!have_best_) throw;          // the seed itself: the caller's contacts give no region to hold
          costs_.setConstant(kInf);        // not a candidate: ends this local search
          break;
        }
        ok_ = feasible();
        const bool lazy = checked_.lazy();  // (collision pairs checked, not steered)
        if (!lazy) offer(ok_);  // (lazy: where a local search converges or ends, its pairs checked)
        if (ok_ && converged(q_)) {
          if (checked_.clear(q_, true)) {  // (the pairs not steered now; none: true)
            keep_best(true);
            return SearchReason::kConverged;
          }
          offer(false);  // the levels met in a collision: a restart
          collided_ = true;
          break;
        }
        outside_.clear();  // local_search.py's outside: the counted tasks with bounds beyond tol at q_
        for (int index : o_.counted)
          if (s_.rows[index].bounded && violation(index) > o_.tol) outside_.push_back(index);
      }
      if (timed_out()) {
        offer_end();
        return SearchReason::kTimeout;
      }
      if (it >= max_iters) break;
      if (window && it >= kStallWindowFrom &&
          history_.back() > std::max(o_.floor, kStallWindowRatio * history_[history_.size() - 1 - kStallWindow]))
        break;
      if (polish && it >= kStrictWindowFrom &&
          window_stalled(costs_, trail_[trail_.size() - 1 - kStrictWindow], o_.floor, kStallWindowRatio))
        break;
      if (!newton_step(q_, mu, q_new_)) break;
      ++out_.iterations;
      keep_rows();  // q_'s rows aside: a rejected step restores them instead of evaluating q_ again
      failing = evaluate(q_new_, new_level_costs_, new_costs_);
      if (!outside_.empty() && entered(failing)) failing = enter(q_);  // to where they enter
      int active = 0;
      const Verdict verdict = failing < 0 ? improves(new_costs_, costs_, o_.floor, counted, active, exact ? 0.0 : kSlack)
                                          : Verdict{false, 0.0, 0};
      if (verdict.keep) {
        q_.swap(q_new_);
        costs_.swap(new_costs_);
        level_costs_.swap(new_level_costs_);
        mu = (mu * o_.mu_shrink).cwiseMax(o_.mu_min);
        streak = 0;
        rejected = false;
        stale = verdict.ratio < o_.stall_ratio ? stale + 1 : 0;
        if (stale >= o_.stall_iters) break;
      } else {
        raise_damping(mu, verdict.culprit, active, ++streak, o_.mu_grow);
        keep_rows();  // the rows at q again (the kinematics data stays q_new_'s: nothing reads it before the next
                      // evaluate; the collision tasks' rows are read where the local search ends: offer_end)
        if (mu.minCoeff() > o_.mu_max || ++stale >= o_.stall_iters) break;
        failing = -1;
        rejected = true;
      }
      history_.push_back(counted_sum(costs_, counted));
      if (polish) trail_.push_back(costs_);
    }
    if (!collided_ && failing < 0 && costs_.allFinite()) offer_end();  // (not where q_'s rows or region failed)
    return SearchReason::kExhausted;
  }

  // local_search.py's offer: q_ (its level_costs_; ok: it satisfies the limits) as the best found, if it is.
  void offer(bool ok) {
    if (!have_best_ || (ok && !best_feasible_) ||
        (ok == best_feasible_ && lexicographically_lower(level_costs_, best_costs_, o_.floor).first))
      keep_best(ok);
  }

  // local_search.py's offer_end: a local search's end (q_) offered as the best, its collision pairs
  // checked (the kinematics at q_ computed again: a rejected step left q_new_'s).
  void offer_end() {
    if (checked_.lazy() && level_costs_.allFinite()) offer(ok_ && checked_.clear(q_, false));
  }

  // Swaps the step's rows and level systems with the ones kept aside (their buffers stay allocated;
  // a level's A points into its storage, which moves with it).
  void keep_rows() {
    s_.rows.swap(kept_rows_);
    s_.level_systems.swap(kept_systems_);
    s_.level_storage.swap(kept_storage_);
  }

  static double counted_sum(const Vector& costs, const std::vector<char>& counted) {
    double sum = 0.0;
    for (long k = 0; k < costs.size(); ++k)
      if (counted[static_cast<size_t>(k)]) sum += costs(k);
    return sum;
  }

  // The costs of the counted levels, in order.
  static void counted_part(const Vector& costs, const std::vector<char>& counted, Vector& out) {
    long n = 0;
    for (char c : counted) n += c ? 1 : 0;
    out.resize(n);
    n = 0;
    for (long k = 0; k < costs.size(); ++k)
      if (counted[static_cast<size_t>(k)]) out(n++) = costs(k);
  }

  void keep_best(bool feasible) {
    best_q_ = q_;
    best_costs_ = level_costs_;
    best_feasible_ = feasible;
    have_best_ = true;
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

  // Kinematics and the rows of the levels in use at q; costs |b|^2 per level of the step
  // (level_costs) and per level in use (costs): |W e|^2, or |W (e - n)|^2 (the squared weighted
  // violation) for a task with bounds.
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

  // The largest error norm of task `index` at the last rows (Task.error_norms: of its violation
  // when it has bounds).
  double violation(int index) const {
    double first = 0.0, second = 0.0;  // (position, orientation) of a pose, else (error, -)
    const Rows& rows = s_.rows[index];
    s_.tasks[index]->error_norms(s_, rows.bounded ? rows.gap : rows.e, first, second);
    return std::max(first, second);
  }

  // Every counted task's largest error norm is at most tol.
  bool converged(const Vector& q) const {
    (void)q;
    for (int index : o_.counted)
      if (violation(index) > o_.tol) return false;
    return true;
  }

  // local_search.py's entered: every task of outside_ within tol of its bounds at the last rows (finite).
  bool entered(int failing) const {
    if (failing >= 0) return false;
    for (int index : outside_)
      if (!(violation(index) <= o_.tol)) return false;
    return true;
  }

  // local_search.py's enter: the step from q (step_, taken whole) cut back to where the tasks of
  // outside_ enter their bounds, by kEntryBisections halvings (fewer where a timed search's
  // budget would be spent: enter in local_search.py); q_new_ and its rows and costs are the end
  // of the bracket inside. Returns evaluate's failing.
  int enter(const Vector& q) {
    step_ = s_.v;
    double low = 0.0, high = 1.0;
    const double began = elapsed();
    for (int k = 0; k < kEntryBisections; ++k) {
      if (k > 0 && timed_out(2.0 * (elapsed() - began) / k)) break;  // one more halving and the last evaluation
      const double mid = 0.5 * (low + high);
      s_.v = mid * step_;
      s_.advance(q, q_new_);
      (entered(evaluate(q_new_, new_level_costs_, new_costs_)) ? high : low) = mid;
    }
    s_.v = high * step_;
    s_.advance(q, q_new_);
    return evaluate(q_new_, new_level_costs_, new_costs_);
  }

  // q_new = integrate(q, v), v the hierarchy's Newton step at q (rows from evaluate(q)) with
  // Levenberg-Marquardt damping mu (one per level); false when v is not finite.
  // local_search.py's feasible: q satisfies the rows of the constraints at v = 0 (constraints() at q done).
  bool feasible() const {
    const auto d = s_.cons.used_d();
    return d.size() == 0 || d.minCoeff() >= -kFeasibleTolerance;
  }

  bool newton_step(const Vector& q, const Vector& mu, Vector& q_new) {  // constraints() at q done
    for (size_t k = 0; k < s_.level_systems.size(); ++k) {
      s_.level_systems[k].extra_damping = mu(static_cast<long>(k));
      s_.level_systems[k].search = true;
    }
    s_.v = solve_hierarchy(s_.level_systems, s_.cons, s_.policy, s_.reports, s_.workspace);
    if (!s_.v.allFinite()) return false;
    if (o_.max_step > 0) {  // the largest joint displacement at most max_step (the step's direction kept)
      const double largest = s_.v.cwiseAbs().maxCoeff();
      if (largest > o_.max_step) s_.v *= o_.max_step / largest;
    }
    s_.advance(q, q_new);
    return q_new.allFinite();
  }
};

}  // namespace search_local
}  // namespace reljac

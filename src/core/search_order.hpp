// The order a search keeps its steps in: reljac/ik/search/order.py's twin (level costs compared
// lexicographically, the first level not met, whether a step is kept, which levels a rejected step
// damps more). Private to search.cpp.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "hierarchy.hpp"

namespace reljac {
namespace search_order {

constexpr double kTieBand = 1e-12;  // relative difference of two level costs that is a tie
constexpr double kSlack = 1e-2;     // met levels may rise to this fraction of the active level's cost

// (better, ratio): `a` below `b` in lexicographic order (costs under `floor` tie), and by how much
// (relative) at the first level that differs.
inline std::pair<bool, double> lexicographically_lower(const Vector& a, const Vector& b, double floor, int from = 0) {
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

// search.py's active_level: the first level whose cost is above floor and above `slack` times the
// largest cost of a counted level below it (slack 0: exact lexicographic order).
inline int active_level(const Vector& costs, double floor, const std::vector<char>& counted, double slack = kSlack) {
  const int n = static_cast<int>(costs.size());
  int active = n;
  double below = 0.0;
  for (int k = n - 1; k >= 0; --k) {
    if (costs(k) > std::max(floor, slack * below)) active = k;
    if (counted[k]) below = std::max(below, costs(k));
  }
  return active;
}

// search.py's slack_used: a level above the active one is above floor (met only by kSlack).
inline bool slack_used(const Vector& costs, double floor, const std::vector<char>& counted) {
  return active_level(costs, floor, counted) > active_level(costs, floor, counted, 0.0);
}

inline Verdict improves(const Vector& fresh, const Vector& old, double floor, const std::vector<char>& counted,
                        int& active, double slack = kSlack) {
  active = active_level(old, floor, counted, slack);
  if (active < old.size()) {
    const double rise = std::max(floor, slack * old(active));
    for (int k = 0; k < active; ++k)
      if (fresh(k) > rise) return {false, 0.0, k};
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
inline void raise_damping(Vector& mu, int culprit, int active, int streak, double grow) {
  const int n = static_cast<int>(mu.size());
  if (culprit < 0) {
    mu *= grow;
    return;
  }
  const bool blame_below = (culprit < active || streak % 2 == 1) && culprit + 1 < n;
  mu.tail(n - (blame_below ? culprit + 1 : culprit)) *= grow;
}

// search.py's window_stalled (a strict phase's stall window): the first level above floor is the
// same in `now` and `then` and its cost now is above ratio times its cost then.
inline bool window_stalled(const Vector& now, const Vector& then, double floor, double ratio) {
  const int n = static_cast<int>(now.size());
  int first = 0;
  while (first < n && !(now(first) > floor)) ++first;
  if (first == n || !(then(first) > floor)) return false;
  for (int k = 0; k < first; ++k)
    if (then(k) > floor) return false;
  return now(first) > ratio * then(first);
}

}  // namespace search_order
}  // namespace reljac

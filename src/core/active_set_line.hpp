// Along one step of an inequality level (active_set.cpp): where the level's true objective stops
// falling (its rows' distances to their bounds are piecewise quadratic along the step), and the
// soft set read anew at the point reached. Private to active_set.cpp (inline: its inner loop); the
// Python twins are _line_minimum and _update_soft in reljac/ik/solvers/active_set.py.
#pragma once

#include <algorithm>
#include <cmath>

#include "active_set.hpp"

namespace reljac {
namespace lex {

// The derivative along the step of the level's true objective at alpha (Python's _line_minimum).
inline double derivative(const Rows& rows, const Space& s, double slope, double curvature, double alpha) {
  double sum = 0.0;
  for (int i = 0; i < rows.m; ++i) {
    const double dx = s.rate(i);
    if (rows.equal(i) || dx == 0.0) continue;
    const double y = s.value(i) + alpha * dx;
    const double distance = std::max(y - rows.upper[i], 0.0) - std::max(rows.lower[i] - y, 0.0);
    sum += dx * (distance - (s.soft[i] ? y - s.aim(i) : 0.0));
  }
  return slope + 2.0 * curvature * alpha + 2.0 * sum;
}

// The least alpha in [0, 1] where the level's true objective along the step stops falling
// (Python's _line_minimum): its derivative is linear between the rows' crossings of their bounds.
inline double line_minimum(const Rows& rows, Space& s, double slope, double curvature) {
  int n = 0;
  for (int i = 0; i < rows.m; ++i) {
    const double dx = s.rate(i);
    if (rows.equal(i) || dx == 0.0) continue;
    for (const double bound : {rows.upper[i], rows.lower[i]}) {
      const double a = (bound - s.value(i)) / dx;
      if (a > 0.0 && a < 1.0) s.crossings(n++) = a;
    }
  }
  std::sort(s.crossings.data(), s.crossings.data() + n);
  double start = 0.0, before = derivative(rows, s, slope, curvature, 0.0);
  if (before >= 0.0) return 0.0;
  for (int k = 0; k <= n; ++k) {
    const double point = k < n ? s.crossings(k) : 1.0;
    const double after = derivative(rows, s, slope, curvature, point);
    if (after >= 0.0) return start + (point - start) * (-before / (after - before));
    start = point;
    before = after;
  }
  return 1.0;
}

// The soft set at the new point, s.x = A v (Python's _update_soft); returns how many rows changed.
inline int update_soft(const Rows& rows, Space& s, double tol) {
  int changed = 0;
  for (int i = 0; i < rows.m; ++i) {
    if (rows.equal(i)) continue;
    const double y = s.x(i);
    char want = 1;
    double aim = 0.0;
    if (y > rows.upper[i] + tol) {
      aim = rows.upper[i];
    } else if (y < rows.lower[i] - tol) {
      aim = rows.lower[i];
    } else if (s.soft[i] && std::abs(y - s.aim(i)) <= tol) {
      aim = s.aim(i);
    } else {
      want = 0;
    }
    if (want != s.soft[i] || (want && aim != s.aim(i))) {
      ++changed;
      s.soft[i] = want;
      if (want) s.aim(i) = aim;
    }
  }
  return changed;
}

}  // namespace lex
}  // namespace reljac

// The tried release of a held row whose multiplier's sign is rounding's (active_set.cpp's search;
// Python's _doubtful, _objective and trial in active_set.solve_level): which row, the level's
// objective, the state kept before the release and put back where it gained nothing. Out of the
// search's own file and never inlined into it (cold: the bounded steps keep their cost).
#include <algorithm>
#include <cmath>

#include "active_set.hpp"

namespace reljac {
namespace lex {

// The working row whose release is tried (Python's _doubtful), -1 when none: the least of s.mu
// (mu_size entries) where the release test cannot tell its sign from rounding (below
// kMultiplierTolerance max(1, |P g|), |P g| = `norm`: the test's band about 0), on a level not met at
// s.v (its met test: MET_TOLERANCE on the distances).
int doubtful(const Rows& rows, double norm, Space& s) {
  if (s.mu_size <= 0) return -1;
  int worst = 0;
  for (int a = 1; a < s.mu_size; ++a)
    if (s.mu(a) < s.mu(worst)) worst = a;
  if (!(s.mu(worst) < kMultiplierTolerance * std::max(1.0, norm))) return -1;
  const int m = rows.m;
  rows.times(s.v, s.nv, s.x.head(m));
  double distance2 = 0.0, inside2 = 0.0;
  for (int i = 0; i < m; ++i) {
    const double x = s.x(i), inside = std::min(std::max(x, rows.lower[i]), rows.upper[i]);
    distance2 += (x - inside) * (x - inside);
    inside2 += inside * inside;
  }
  return std::sqrt(distance2) <= kMetTolerance * (1.0 + std::sqrt(inside2)) ? -1 : worst;
}

// The level's objective at s.v (Python's _objective): its rows' squared distances to their
// intervals + lam2 |v - v_prev|^2.
double objective(const Rows& rows, double lam2, Space& s) {
  const int m = rows.m;
  rows.times(s.v, s.nv, s.x.head(m));
  double sum = 0.0;
  for (int i = 0; i < m; ++i) {
    const double d = std::max(s.x(i) - rows.upper[i], 0.0) + std::max(rows.lower[i] - s.x(i), 0.0);
    sum += d * d;
  }
  return sum + lam2 * (s.v - s.v_prev).squaredNorm();
}

// Keeps the search's state before a doubtful release in s.trial_* (Python's trial).
void keep_trial(const Rows& rows, double lam2, Space& s) {
  const int m = rows.m;
  s.trial_objective = objective(rows, lam2, s);
  s.trial_v = s.v;
  s.trial_working = s.working;
  for (int i = 0; i < m; ++i) s.trial_soft[i] = s.soft[i];
  s.trial_aim.head(m) = s.aim.head(m);
  s.trial_mu_size = s.mu_size;
  s.trial_mu.head(s.mu_size) = s.mu.head(s.mu_size);
}

// Undoes the tried release where the level's objective did not drop beyond rounding (or the search
// was capped): the state kept_trial kept (the changes stay counted). True when undone.
bool undo_trial(const Rows& rows, double lam2, bool capped, Space& s) {
  if (!capped && objective(rows, lam2, s) < s.trial_objective * (1.0 - kTrialGain)) return false;
  s.v.swap(s.trial_v);  // (buffers of the same sizes: their data exchanged, nothing allocated)
  s.working.swap(s.trial_working);
  s.soft.swap(s.trial_soft);
  s.aim.swap(s.trial_aim);
  s.mu.swap(s.trial_mu);
  s.mu_size = s.trial_mu_size;
  return true;
}

}  // namespace lex
}  // namespace reljac

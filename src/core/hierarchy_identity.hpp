// A level of identity rows (a posture: A = c diag(mask)) solved in joint space, without forming
// A P: reljac/ik/solvers/identity_level.py's identity_correction (its specification), called by
// the SNS solver (hierarchy.cpp) where the level's A is null. Private to the solver, inline.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include "hierarchy_factor.hpp"

namespace reljac {
namespace factor {

// Buffers of identity_correction on a level whose mask leaves rows out.
struct MaskedRows {
  std::vector<int> joints;  // F: the masked rows (their joints)
  Vector x;                 // V phi(t) V^T (P r)[F]
  Vector projected;         // P delta (an amplified correction's)
  Matrix T, test, K;        // f x f and f, for more than kMaskedOnStack masked rows (sized once)
  Vector fx, fy;
};
constexpr int kMaskedOnStack = 48;  // up to this many masked rows, f x f matrices of fixed capacity (no allocation)
using MaskedGram = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMaskedOnStack, kMaskedOnStack>;

// identity_correction's x = V phi(t) V^T (P r)[F] (into work.x), (P r) in step.delta, on buffers
// T, test, K (f x f) and x, y (f) of a Gram matrix's type: where
// every c^2 (1 - t) passes the cut (a shifted Cholesky factor of c^2 (I - T) exists), that is
// c^2 K^-1 (P r)[F] with K = a I - c^2 T, by K's Cholesky factor; else by the eigen-decomposition
// of T = P[F, F], as a Gram matrix of that type.
template <typename Gram, typename Column>
inline void masked_coefficients(const Matrix& P, double c, double lam2, int f, const Correction& step,
                                MaskedRows& work, Gram& T, Gram& test, Gram& K, Column& x, Column& y) {
  const double c2 = c * c, a = c2 + lam2, cut = kRankTolerance * std::max(1.0, c2);
  T.resize(f, f);
  test.resize(f, f);
  K.resize(f, f);
  x.resize(f);
  y.resize(f);
  for (int i = 0; i < f; ++i) {
    for (int k = 0; k <= i; ++k) {
      const double t = P(work.joints[i], work.joints[k]);
      T(i, k) = T(k, i) = t;
      test(i, k) = (i == k ? c2 - cut : 0.0) - c2 * t;
      K(i, k) = (i == k ? a : 0.0) - c2 * t;
    }
    x(i) = step.delta(work.joints[i]);
  }
  work.x.resize(f);
  if (cholesky_in_place(test) && cholesky_in_place(K)) {  // every c^2 (1 - t) above the cut: phi = c^2 K^-1
    cholesky_solve_in_place(K, x);
    for (int i = 0; i < f; ++i) work.x(i) = c2 * x(i);
    return;
  }
  // (a direction at the cut: the eigen-decomposition; of a dynamic matrix, beyond kMaskedOnStack rows, it allocates)
  const Eigen::SelfAdjointEigenSolver<Gram> eig(T);  // ascending
  const auto& t = eig.eigenvalues();
  y.noalias() = eig.eigenvectors().transpose() * x;
  for (int i = 0; i < f; ++i) y(i) *= c2 * (1.0 - t(i)) > cut ? c2 / (a - c2 * t(i)) : -1.0 / t(i);
  x.noalias() = eig.eigenvectors() * y;
  for (int i = 0; i < f; ++i) work.x(i) = x(i);
}

// identity_level.py's identity_correction: the correction of a level of identity rows, A = c
// diag(mask), in range(P), without forming A P: every row kept, c P r / (c^2 + lambda^2); rows
// masked (F), (c / a) (P r + P[:, F] V phi(t) V^T (P r)[F]) with a = c^2 + lambda^2, t and V the
// eigenvalues and eigenvectors of P[F, F], phi(t) = c^2 / (a - c^2 t) where c^2 (1 - t) passes the
// rank cut kRankTolerance max(1, c^2), -1 / t where it is cut (none where c^2 itself is: every
// direction cut, no correction); projected on range(P) again where
// (c / a) |x| > kAmplified, x = V phi V^T (P r)[F]. Such a level leaves no null space.
inline void identity_correction(const Level& level, const Matrix& P, const Vector& residual, int nv, Correction& step,
                                MaskedRows& work) {
  step.clear();
  step.delta.resize(nv);
  times_vector(P, residual.data(), step.delta.data());  // P r
  const double c = level.identity_scale, lam2 = level.extra_damping;
  step.damping = lam2;
  work.joints.clear();
  for (Eigen::Index j = 0; j < level.mask.size(); ++j)
    if (level.mask(j) == 0.0) work.joints.push_back(static_cast<int>(j));
  if (!(c * c > kRankTolerance * std::max(1.0, c * c))) {  // every eigenvalue c^2 (1 - t) <= c^2 is cut
    step.delta.setZero();
    times(level, step.delta, nv, step.A_delta);
    return;
  }
  if (work.joints.empty()) {
    if (lam2 == 0.0)
      step.delta /= c;
    else
      step.delta *= c / (c * c + lam2);
    times(level, step.delta, nv, step.A_delta);
    return;
  }
  const int f = static_cast<int>(work.joints.size());
  if (f <= kSmallLevel) {  // (fixed capacity: no allocation)
    SmallGram T, test, K;
    SmallColumn x, y;
    masked_coefficients(P, c, lam2, f, step, work, T, test, K, x, y);
  } else if (f <= kMaskedOnStack) {
    MaskedGram T, test, K;
    Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaskedOnStack, 1> x, y;
    masked_coefficients(P, c, lam2, f, step, work, T, test, K, x, y);
  } else {
    masked_coefficients(P, c, lam2, f, step, work, work.T, work.test, work.K, work.fx, work.fy);
  }
  const double a = c * c + lam2;
  for (int k = 0; k < f; ++k) step.delta += work.x(k) * P.col(work.joints[k]);
  step.delta *= c / a;
  if (c / a * work.x.norm() > kAmplified) {
    work.projected.resize(nv);
    times_vector(P, step.delta.data(), work.projected.data());
    step.delta.swap(work.projected);
  }
  times(level, step.delta, nv, step.A_delta);
}

}  // namespace factor
}  // namespace reljac

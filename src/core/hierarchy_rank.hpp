// Certified facts about a level's small Gram matrix G = M M^T without its eigen-decomposition:
// its smallest eigenvalue where it has full rank (inverse iteration, certified by a shifted
// Cholesky factor), and its rank and range where it has not (Cholesky with diagonal pivoting,
// certified by Weyl's and Cauchy's inequalities). Where a certificate fails, the caller decomposes
// G (hierarchy_factor.hpp). Private to the compiled solver (inline: its inner loop).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "hierarchy.hpp"
#include "small_dense.hpp"

namespace reljac {
namespace factor {

constexpr int kSmallLevel = 12;  // levels with at most this many rows factor without allocating
using SmallGram = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kSmallLevel, kSmallLevel>;
using SmallColumn = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kSmallLevel, 1>;
using Pivots = Eigen::Matrix<int, Eigen::Dynamic, 1, 0, kSmallLevel, 1>;

// G's smallest eigenvalue e0 (G: m x m, lower triangle; L: its Cholesky factor) by inverse
// iteration from (1, ..., 1), certified: e0 <= rho (a Rayleigh quotient) and G - (rho - eps) I has a
// Cholesky factor (every eigenvalue above rho - eps), eps = kCertifiedEigenvalue max(1, tr G), so
// e0 is known to within eps, as an eigen-decomposition knows it (to eps x |G|, eps the rounding).
// False (nothing known) where that fails within kInverseIterations (e0 close to the next
// eigenvalue, or a start nearly orthogonal to its eigenvector) or where e0 < kWellConditioned
// max(1, tr G) (a level that close to rank deficiency keeps the eigen-decomposition).
constexpr double kCertifiedEigenvalue = 1e-13;
constexpr double kWellConditioned = 1e-8;
constexpr int kInverseIterations = 24;
constexpr double kIterationSettled = 1e-2;  // rho moved by less than this x eps: stop iterating
template <typename Gram>
inline bool certified_smallest_eigenvalue(const Gram& G, const Gram& L, double& e0) {
  using Column = Eigen::Matrix<double, Gram::RowsAtCompileTime, 1, 0, Gram::MaxRowsAtCompileTime, 1>;
  const Eigen::Index m = G.rows();
  const double scale = std::max(1.0, G.trace()), eps = kCertifiedEigenvalue * scale;
  Column x = Column::Constant(m, 1.0 / std::sqrt(static_cast<double>(m))), y(m);
  double rho = std::numeric_limits<double>::infinity();
  for (int k = 0; k < kInverseIterations; ++k) {
    y = x;
    cholesky_solve_in_place(L, y);  // G^-1 x
    x = y / y.norm();
    const double previous = rho;
    rho = x.dot(G.template selfadjointView<Eigen::Lower>() * x);
    if (std::abs(previous - rho) <= kIterationSettled * eps) break;
  }
  if (!(rho - eps >= kWellConditioned * scale)) return false;  // (NaN too)
  Gram shifted = G;
  shifted.diagonal().array() -= rho - eps;
  if (!cholesky_in_place(shifted)) return false;
  e0 = rho;
  return true;
}

// G's rank k as eigen_rank counts it (eigenvalues above kRankTolerance max(1, largest)), by
// Cholesky with diagonal pivoting: with the pivots applied (row i of the result is row pivots(i)
// of G), G = B B^T + diag(0, S), B = [L11; L21] (m x k, L11 lower triangular) in the first k
// columns of F's lower triangle, stopped where the Schur complement S (in F's last m - k rows and
// columns) has no diagonal entry above kNegligiblePivot max(1, max diag G) / m. Certified:
//  - every eigenvalue of G past the k largest is at most |S|_2 <= |S|_F (Weyl: B B^T has rank k),
//    which must be at most kNegligiblePivot max(1, max diag G), a hundredth of the cut;
//  - the k-th largest is at least the smallest of the pivot rows' Gram matrix G11 = L11 L11^T
//    (Cauchy's interlacing: a principal submatrix), which a Cholesky factor of
//    G11 - kWellConditioned max(1, tr G) I proves far above the cut, and L11 well conditioned.
// False (nothing known) where either fails, or G (m <= kSmallLevel) has a NaN.
constexpr double kNegligiblePivot = 1e-14;
static_assert(kNegligiblePivot <= 1e-2 * kRankTolerance, "the dropped eigenvalues a hundredth of the cut");
template <typename Gram>
inline bool pivoted_rank(const Gram& G, Gram& F, Pivots& pivots, int& k) {
  const Eigen::Index m = G.rows();
  if (m > kSmallLevel) return false;
  F = G.template selfadjointView<Eigen::Lower>();
  pivots.resize(m);
  for (Eigen::Index i = 0; i < m; ++i) pivots(i) = static_cast<int>(i);
  const double top = std::max(1.0, G.diagonal().maxCoeff());
  Eigen::Index j = 0;
  for (; j < m; ++j) {
    Eigen::Index p = j;
    for (Eigen::Index i = j + 1; i < m; ++i)
      if (F(i, i) > F(p, p)) p = i;
    if (!(F(p, p) > kNegligiblePivot * top / static_cast<double>(m))) break;
    if (p != j) {  // (the trailing block is kept whole and symmetric: both swaps permute it)
      F.row(j).swap(F.row(p));
      F.col(j).swap(F.col(p));
      std::swap(pivots(j), pivots(p));
    }
    const double d = std::sqrt(F(j, j));
    F(j, j) = d;
    for (Eigen::Index i = j + 1; i < m; ++i) F(i, j) /= d;
    for (Eigen::Index c = j + 1; c < m; ++c)
      for (Eigen::Index i = c; i < m; ++i) F(c, i) = F(i, c) -= F(i, j) * F(c, j);
  }
  k = static_cast<int>(j);
  if (!(F.bottomRightCorner(m - j, m - j).norm() <= kNegligiblePivot * top)) return false;  // (NaN too)
  SmallGram G11(k, k);  // minus the shift
  const double shift = kWellConditioned * std::max(1.0, G.trace());
  for (int a = 0; a < k; ++a)
    for (int b = 0; b <= a; ++b) G11(a, b) = G(std::max(pivots(a), pivots(b)), std::min(pivots(a), pivots(b)));
  G11.diagonal().array() -= shift;
  return cholesky_in_place(G11);
}

}  // namespace factor
}  // namespace reljac

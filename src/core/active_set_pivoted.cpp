// Rank-deficient Gram matrices of the compiled inequality hierarchy (see active_set_gram.hpp),
// certified without an eigen-decomposition as the SNS solver certifies them (hierarchy_rank.hpp),
// at any size: the rank and the pivot rows, and the damped step on them.
#include <algorithm>
#include <cmath>

#include "active_set_gram.hpp"

namespace reljac {
namespace lex {

// s.G's leading r x r block (gram: both triangles) of rank k < r, certified as the SNS solver
// certifies it (factor::pivoted_rank, hierarchy_rank.hpp, at any size): Cholesky with diagonal
// pivoting into s.F (row i is row s.pivots[i] of G; B = [L11; L21] in its first k columns),
// stopped where no diagonal entry of the Schur complement S is above kNegligiblePivot
// max(1, max diag G) / r; certified where |S|_F <= kNegligiblePivot max(1, max diag G) (the
// eigenvalues past the k largest: a hundredth of the rank rule's cut, Weyl) and G11 - kWellConditioned
// max(1, tr G) I has a Cholesky factor (the k largest far above the cut, Cauchy). False (nothing
// known): full rank, or no certificate.
bool pivoted_rank(int r, Space& s, int& k) {
  // left-looking: column j of the factor from G's pivot column and the j columns before it, the
  // Schur complement's diagonal kept in s.pivot_z (only the rows' order is swapped, in s.F and
  // s.pivots; G is read through s.pivots)
  auto F = s.F.topLeftCorner(r, r);
  auto d = s.pivot_z.head(r);
  for (int i = 0; i < r; ++i) {
    s.pivots[i] = i;
    d(i) = s.G(i, i);
  }
  const double top = std::max(1.0, d.maxCoeff());
  int j = 0;
  for (; j < r; ++j) {
    int p = j;
    for (int i = j + 1; i < r; ++i)
      if (d(i) > d(p)) p = i;
    if (!(d(p) > factor::kNegligiblePivot * top / static_cast<double>(r))) break;
    if (p != j) {
      for (int a = 0; a < j; ++a) std::swap(F(j, a), F(p, a));
      std::swap(s.pivots[j], s.pivots[p]);
      std::swap(d(j), d(p));
    }
    const double root = std::sqrt(d(j));
    F(j, j) = root;
    const int pj = s.pivots[j];
    for (int i = j + 1; i < r; ++i) {
      double x = s.G(s.pivots[i], pj);
      for (int a = 0; a < j; ++a) x -= F(i, a) * F(j, a);
      x /= root;
      F(i, j) = x;
      d(i) -= x * x;
    }
  }
  k = j;
  if (k == r) return false;
  double schur = 0.0;  // |S|_F^2, S = G22 - L21 L21^T
  for (int i = k; i < r; ++i)
    for (int l = k; l <= i; ++l) {
      double x = s.G(s.pivots[i], s.pivots[l]);
      for (int a = 0; a < k; ++a) x -= F(i, a) * F(l, a);
      schur += (i == l ? 1.0 : 2.0) * x * x;
    }
  if (!(std::sqrt(schur) <= factor::kNegligiblePivot * top)) return false;  // (NaN too)
  return pivot_rows_clear_of(k, factor::kWellConditioned * std::max(1.0, s.G.topLeftCorner(r, r).trace()), s);
}

bool pivot_rows_clear_of(int k, double shift, Space& s) {
  auto G11 = s.L.topLeftCorner(k, k);  // (its lower triangle) minus the shift
  for (int a = 0; a < k; ++a)
    for (int b = 0; b <= a; ++b) G11(a, b) = s.G(s.pivots[a], s.pivots[b]);
  G11.diagonal().array() -= shift;
  return factor::cholesky_in_place(G11);
}

// s.delta = M^T y for a Gram matrix of rank k < r certified by pivoted_rank (s.F, s.pivots): the
// eigen path's M^T U_k (E_k + lam2)^-1 U_k^T c as the SNS solver's pivoted_step computes it
// (hierarchy_factor.hpp): with G = B B^T, W = M1^T L11^-T (M1: the pivot rows), y =
// L11^-T (B^T B + lam2 I)^-1 B^T c on the pivot rows, 0 on the others.
void pivoted_step(int r, int k, double lam2, Space& s) {
  const auto F = s.F.topLeftCorner(r, r);
  auto C = s.L.topLeftCorner(k, k);  // workspace
  auto z = s.coefficients.head(k);
  factor::pivoted_coefficients(F, r, k, [&](int i) { return s.c(s.pivots[i]); }, lam2, C, z);
  const int nv = s.nv;
  factor::Axpys sum(s.delta.data(), nv);
  for (int a = 0; a < k; ++a)
    if (z(a) != 0.0) sum.add(s.M.row(s.pivots[a]).data(), z(a));
}

}  // namespace lex
}  // namespace reljac

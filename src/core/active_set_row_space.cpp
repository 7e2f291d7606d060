// The row space a level of the compiled inequality hierarchy leaves below (see active_set.hpp):
// P -= W W^T, W an orthonormal basis of the rows' span, through a Cholesky factor of their Gram
// matrix where it is clear of the rank cut, through a pivoted one on the pivot rows where it is
// certified rank deficient and has no fine direction, else from its eigen-decomposition with the
// fine directions (Python's row_basis); and the orthonormalization they use.
#include <algorithm>
#include <cmath>

#include "active_set_gram.hpp"

namespace reljac {
namespace lex {

// Rows 0..k-1 of Wt (k x nv, row-major) from `start` on made orthonormal to the rows before them
// and to one another: modified Gram-Schmidt twice, in order (Python's _orthonormalized).
void orthonormalize(double* Wt, int k, int nv, int start) {
  for (int a = start; a < k; ++a) {
    double* w = Wt + static_cast<long>(a) * nv;
    for (int pass = 0; pass < 2; ++pass)
      for (int j = 0; j < a; ++j) {
        const double* u = Wt + static_cast<long>(j) * nv;
        factor::axpy(w, u, -dot(u, w, nv), nv);
      }
    const double norm = std::sqrt(dot(w, w, nv));
    for (int b = 0; b < nv; ++b) w[b] /= norm;
  }
}

// Python's fine_directions, after eigen(M) gave `rank` of r (s.eig_values / s.eig_vectors): the
// rows' basis W^T on the kept eigenvalues, orthonormalized, in s.Wt_room's first `rank` rows (the
// largest eigenvalue first), and M2 = M (I - W W^T) in s.fine's first r rows; returns the cut on
// M2 M2^T's eigenvalues (max(kRankTolerance, kFineRank^2 x the largest of G)), or -1: no direction
// dropped beyond the rank M can have (min(r, nv)), or M2 holds none.
double fine_directions(const double* M, int r, int rank, Space& s) {
  const int nv = s.nv;
  if (rank == 0 || rank >= std::min(r, nv)) return -1.0;
  double* Wt = s.Wt_room.data();
  for (int k = 0; k < rank; ++k) {  // row k: u^T M / sqrt(e) for the k-th largest eigenvalue
    const int col = r - 1 - k;
    const double scale = 1.0 / std::sqrt(s.eig_values(col));
    double* w = Wt + static_cast<long>(k) * nv;
    std::fill(w, w + nv, 0.0);
    for (int i = 0; i < r; ++i) {
      const double a = s.eig_vectors(i, col) * scale;
      if (a != 0.0) factor::axpy(w, M + static_cast<long>(i) * nv, a, nv);
    }
  }
  orthonormalize(Wt, rank, nv);
  const double cut = std::max(kRankTolerance, kFineRank * kFineRank * s.eig_values(r - 1));
  double size = 0.0;
  for (int i = 0; i < r; ++i) {
    const double* m = M + static_cast<long>(i) * nv;
    double* out = s.fine.data() + static_cast<long>(i) * nv;
    std::copy(m, m + nv, out);
    for (int k = 0; k < rank; ++k) {
      const double* w = Wt + static_cast<long>(k) * nv;
      factor::axpy(out, w, -dot(m, w, nv), nv);
    }
    size += dot(out, out, nv);
  }
  return size > cut ? cut : -1.0;
}

RowMatrix upper_factor(const double* M, int r, int nv, double* c) {
  Eigen::HouseholderQR<Matrix> qr(RowMatrixMap(M, r, nv));
  if (c) {
    Eigen::Map<Vector> rhs(c, r);
    const Vector qc = qr.householderQ().adjoint() * rhs;
    rhs.head(nv) = qc.head(nv);
  }
  return qr.matrixQR().topRows(nv).triangularView<Eigen::Upper>();
}

namespace {

constexpr double kAlignedBasis = 1e-10;  // the pivot rows' basis at most this far (radians) from the eigen path's

// P -= W W^T where s.G (M M^T, both triangles, finite) is certified rank deficient (pivoted_rank:
// rank k < r, the dropped eigenvalues at most a hundredth of the rank rule's cut, the k kept ones
// far above it) and Python's fine_directions would find none: W^T = L11^-1 M1 on the pivot rows
// M1, orthonormalized (modified Gram-Schmidt twice, as the eigen path's basis where it is spread),
// the same row space as the eigen path's basis up to rounding, without a decomposition. The fine
// directions' test is made here on M2 = M (I - W W^T), with a margin: |M2|_F^2 (the sum of M2 M2^T's
// eigenvalues) below a hundredth of the cut's lower bound max(kRankTolerance, kFineRank^2 max diag G)
// (the largest eigenvalue is at least G's largest diagonal entry), so that no eigenvalue of M2 M2^T,
// in this basis or the eigen path's, is above the cut; and so small beside the kept eigenvalues
// that the two bases span the same space to kAlignedBasis. False (P unchanged, s.G intact): no
// certificate, or M2 too large to say: the eigen path decides.
bool certified_row_space(const double* M, int r, Matrix& P, Space& s) {
  const int nv = s.nv;
  int k = 0;
  if (r > nv || !pivoted_rank(r, s, k) || k == 0) return false;
  factor::WtMap Wt(s.Wt_room.data(), k, nv);
  for (int a = 0; a < k; ++a) {
    const double* row = M + static_cast<long>(s.pivots[a]) * nv;
    std::copy(row, row + nv, Wt.data() + static_cast<long>(a) * nv);
  }
  factor::solve_lower_by_rows(s.F.topLeftCorner(k, k), Wt);
  // orthonormalized again only where G11 has an eigenvalue below kOrthonormalize x its trace (as
  // the full-rank Cholesky path's basis, W^T = L11^-1 M1 is then orthonormal to the rounding of a
  // factor so conditioned; the eigen path does not orthonormalize where its eigenvalues are that
  // close). Tested for at most kSmallLevel pivot rows; more are orthonormalized.
  double trace = 0.0;
  for (int a = 0; a < k; ++a) trace += s.G(s.pivots[a], s.pivots[a]);
  if (k > factor::kSmallLevel || !pivot_rows_clear_of(k, kOrthonormalize * trace, s))
    orthonormalize(Wt.data(), k, nv);
  const double cut = std::max(kRankTolerance, kFineRank * kFineRank * s.G.topLeftCorner(r, r).diagonal().maxCoeff());
  double size = 0.0;  // |M2|_F^2, M2's rows one at a time in s.fine's first row
  double* out = s.fine.data();
  for (int i = 0; i < r; ++i) {
    // a pivot row is in the basis' span by construction (W^T = L11^-1 M1): its M2 is the basis'
    // rounding, about (k u |M_i|)^2 in |M2|_F^2, a hundredth of the test's floor (1e-28 tr G);
    // the other rows' M2 decide
    if (std::find(s.pivots.begin(), s.pivots.begin() + k, i) != s.pivots.begin() + k) continue;
    const double* m = M + static_cast<long>(i) * nv;
    std::copy(m, m + nv, out);
    for (int a = 0; a < k; ++a) {
      const double* w = Wt.data() + static_cast<long>(a) * nv;
      factor::axpy(out, w, -dot(m, w, nv), nv);
    }
    size += dot(out, out, nv);
  }
  // and the pivot rows' span within rounding of the eigen path's (the k largest eigenvalues'): the
  // two are apart by an angle of about sqrt(|M2|_F^2 / lambda_k), lambda_k above the certificate's
  // kWellConditioned max(1, tr G); a dropped part that is not rounding (a singular value of 3.5e-8
  // beside one of 8.2e-4) turned that basis by about their ratio, and the level below moved a joint
  // twice as far as the specification's
  const double kept = factor::kWellConditioned * std::max(1.0, s.G.topLeftCorner(r, r).trace());
  if (!(size <= 0.01 * cut && size <= kAlignedBasis * kAlignedBasis * kept)) return false;
  factor::subtract_gram(P, Wt);
  return true;
}

}  // namespace

void subtract_row_space(const double* M, int r, Matrix& P, Space& s) {
  const int nv = s.nv;
  if (r == 0) return;
  if (r > nv) {  // more rows than joints (many planes beyond their bounds): the same row space from R,
    // instead of an r x r Gram matrix (Python's row_basis)
    const RowMatrix R = upper_factor(M, r, nv);
    subtract_row_space(R.data(), nv, P, s);
    return;
  }
  const bool finite = gram(M, r, nv, s);
  // the level's A P_in (a prefix of its rows): its Gram matrix's test as smallest_singular_value
  // answered it (Space::AP_spread), its Cholesky factor as a step kept it (Space::L_AP)
  const bool of_AP = M == s.AP.data() && r <= s.AP_gram_rows;
  bool clear;
  if (of_AP && s.AP_spread == 1)
    clear = true;
  else if (of_AP && ((s.AP_spread == 0 && r == s.AP_gram_rows) || (s.AP_rank >= 0 && r > s.AP_rank)))
    clear = false;  // (more rows than G_AP's rank: dependent, no factor; the paths below decide)
  else
    clear = finite && clear_of(r, kOrthonormalize * s.G.topLeftCorner(r, r).trace(), s);
  if (clear) {
    // full rank and no eigenvalue below kOrthonormalize x the trace (so none below that x the
    // largest: the eigen path would not orthonormalize again): W^T = L^-1 M, G = L L^T
    const bool kept = of_AP && r <= s.L_AP_rows;
    if (!kept) factor_damped(r, 0.0, s);
    factor::WtMap Wt(s.Wt_room.data(), r, nv);
    Wt = RowMatrixMap(M, r, nv);
    factor::solve_lower_by_rows((kept ? s.L_AP : s.L).topLeftCorner(r, r), Wt);
    factor::subtract_gram(P, Wt);
    return;
  }
  if (finite && certified_row_space(M, r, P, s)) return;
  const int rank = eigen_of_gram(r, s);  // (s.G is M M^T: formed above)
  if (rank == 0) return;
  const double cut = fine_directions(M, r, rank, s);
  if (cut >= 0.0) {  // W (orthonormal) and the fine directions after it (Python's row_basis)
    gram(s.fine.data(), r, nv, s);
    decompose(r, s, true);
    int rows = rank;
    for (int k = 0; k < r; ++k) {  // ascending, as numpy's eigh
      if (!(s.eig_values(k) > cut)) continue;
      double* w = s.Wt_room.data() + static_cast<long>(rows++) * nv;
      std::fill(w, w + nv, 0.0);
      const double scale = 1.0 / std::sqrt(s.eig_values(k));
      for (int i = 0; i < r; ++i) {
        const double a = s.eig_vectors(i, k) * scale;
        if (a != 0.0) factor::axpy(w, s.fine.data() + static_cast<long>(i) * nv, a, nv);
      }
    }
    orthonormalize(s.Wt_room.data(), rows, nv, rank);
    factor::subtract_gram(P, factor::WtMap(s.Wt_room.data(), rows, nv));
    return;
  }
  factor::WtMap Wt(s.Wt_room.data(), rank, nv);
  Wt.setZero();
  for (int k = 0; k < rank; ++k) {  // row k of W^T: u^T M / sqrt(e) for the k-th largest eigenvalue
    const int col = r - 1 - k;
    const double scale = 1.0 / std::sqrt(s.eig_values(col));
    for (int i = 0; i < r; ++i) {
      const double a = s.eig_vectors(i, col) * scale;
      if (a != 0.0) factor::axpy(Wt.data() + static_cast<long>(k) * nv, M + static_cast<long>(i) * nv, a, nv);
    }
  }
  if (s.eig_values(r - rank) < kOrthonormalize * s.eig_values(r - 1))  // (Python's row_basis)
    orthonormalize(Wt.data(), rank, nv);  // in the eigenvalues' order
  factor::subtract_gram(P, Wt);
}

}  // namespace lex
}  // namespace reljac

// The Gram-matrix linear algebra of the compiled inequality hierarchy (see active_set.hpp): the
// eigen-decompositions of M M^T (pinned per level), the damped least-squares step, the row space
// a level leaves below, the smallest singular value, and the least squares of the multipliers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "active_set.hpp"

namespace reljac {
namespace lex {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename Gram>
void decompose(const Matrix& G, int r, Space& s, Gram& work, int options) {
  work = G.topLeftCorner(r, r);
  Eigen::SelfAdjointEigenSolver<Gram> es(work, options);
  s.eig_values.head(r) = es.eigenvalues();
  if (options == Eigen::ComputeEigenvectors) s.eig_vectors.topLeftCorner(r, r) = es.eigenvectors();
}

// s.eig_values (and s.eig_vectors when `vectors`) of s.G's leading r x r block. The eigenvalues
// are the same bits either way (Eigen's tridiagonal QR moves them alike; the vectors only
// accumulate its rotations).
void decompose(int r, Space& s, bool vectors) {
  const int options = vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly;
  if (r <= factor::kSmallLevel) {
    factor::SmallGram work;
    decompose(s.G, r, s, work, options);
  } else if (r <= kMidLevel) {
    s.mid.compute(s.G.topLeftCorner(r, r), options);
    s.eig_values.head(r) = s.mid.eigenvalues();
    if (vectors) s.eig_vectors.topLeftCorner(r, r) = s.mid.eigenvectors();
  } else {
    s.big.compute(s.G.topLeftCorner(r, r), options);
    s.eig_values.head(r) = s.big.eigenvalues();
    if (vectors) s.eig_vectors.topLeftCorner(r, r) = s.big.eigenvectors();
  }
}

// s.G = M M^T (r x r, both triangles) for M (r rows of nv, row-major): each entry in two
// interleaved sums (factor::gram's arithmetic); false when an entry is inf or NaN. s.AP's (kept by
// smallest_singular_value) copied where M is s.AP, or `of_AP`: a copy of it.
bool gram(const double* M, int r, int nv, Space& s, bool of_AP = false) {
  if (r == s.AP_gram_rows && (M == s.AP.data() || of_AP)) {
    s.G.topLeftCorner(r, r) = s.G_AP.topLeftCorner(r, r);  // (finite: checked when kept)
    return true;
  }
  for (int i = 0; i < r; ++i)
    for (int j = 0; j <= i; ++j) s.G(i, j) = s.G(j, i) = dot(M + static_cast<long>(i) * nv, M + static_cast<long>(j) * nv, nv);
  return s.G.topLeftCorner(r, r).allFinite();
}

// True when every eigenvalue of s.G's leading r x r block (gram) is above
// max(floor, kRankTolerance x max(1, its trace)): G - shift I has a Cholesky factor. Then the
// eigen-decomposition's rank rule (eigenvalues above kRankTolerance x max(1, the largest)) keeps
// all r, and the matrix functions of G below need no eigenvectors. A G nearer the cut than
// rounding may fail here where the eigenvalues would pass: the eigen-decomposition decides then.
bool clear_of(int r, double floor, Space& s) {
  const double trace = s.G.topLeftCorner(r, r).trace();
  auto L = s.L.topLeftCorner(r, r);
  L = s.G.topLeftCorner(r, r);
  L.diagonal().array() -= std::max(floor, kRankTolerance * std::max(1.0, trace));
  return factor::cholesky_in_place(L);
}

// s.L's leading r x r block: the Cholesky factor of s.G + lam2 I (G positive definite: clear_of).
void factor_damped(int r, double lam2, Space& s) {
  auto L = s.L.topLeftCorner(r, r);
  L = s.G.topLeftCorner(r, r);
  L.diagonal().array() += lam2;
  factor::cholesky_in_place(L);
}

}  // namespace

void damped_step(int r, double lam2, Space& s, bool of_AP) {
  const int nv = s.nv;
  s.delta.setZero();
  if (r == 0) return;
  auto y = s.coefficients.head(r);
  if (gram(s.M.data(), r, nv, s, of_AP) && clear_of(r, 0.0, s)) {  // full rank: y = (G + lam2 I)^-1 c
    factor_damped(r, lam2, s);
    y = s.c.head(r);
    const auto L = s.L.topLeftCorner(r, r);
    factor::cholesky_solve_in_place(L, y);
  } else {
    const int rank = eigen(s.M.data(), r, nv, s);
    y.setZero();
    for (int k = r - rank; k < r; ++k) {  // the largest `rank` eigenvalues (ascending order)
      const auto u = s.eig_vectors.col(k).head(r);
      y += u * (u.dot(s.c.head(r)) / (s.eig_values(k) + lam2));
    }
  }
  for (int i = 0; i < r; ++i)
    if (y(i) != 0.0) factor::axpy(s.delta.data(), s.M.row(i).data(), y(i), nv);
}

void least_squares(double* B, int n, int w, double* r, double* x) {
  for (int k = 0; k < std::min(w, n); ++k) {
    double* col = B + static_cast<long>(k) * n;
    const double norm = std::sqrt(dot(col + k, col + k, n - k));
    if (norm == 0.0) continue;
    const double alpha = col[k] > 0 ? -norm : norm;
    col[k] -= alpha;
    const double vv = dot(col + k, col + k, n - k);
    for (int j = k + 1; j < w; ++j) {
      double* other = B + static_cast<long>(j) * n;
      factor::axpy(other + k, col + k, -2.0 * dot(col + k, other + k, n - k) / vv, n - k);
    }
    factor::axpy(r + k, col + k, -2.0 * dot(col + k, r + k, n - k) / vv, n - k);
    col[k] = alpha;  // R's diagonal (the reflector is not needed any more)
  }
  double largest = 0.0;
  for (int k = 0; k < std::min(w, n); ++k) largest = std::max(largest, std::abs(B[static_cast<long>(k) * n + k]));
  for (int k = w - 1; k >= 0; --k) {
    const double diagonal = k < n ? B[static_cast<long>(k) * n + k] : 0.0;
    if (std::abs(diagonal) <= 1e-14 * largest || diagonal == 0.0) {
      x[k] = 0.0;
      continue;
    }
    double sum = r[k];
    for (int j = k + 1; j < w; ++j) sum -= B[static_cast<long>(j) * n + k] * x[j];
    x[k] = sum / diagonal;
  }
}

int eigen(const double* M, int r, int nv, Space& s, bool pin, bool vectors) {
  if (pin) s.pinned_rows = -1;
  if (r == 0) return 0;
  if (!gram(M, r, nv, s)) {  // huge rows: no decomposition (Python's eigh raises)
    s.overflow = true;
    s.eig_values.head(r).setZero();
    s.eig_vectors.topLeftCorner(r, r).setIdentity();
    return 0;
  }
  if (!pin && r == s.pinned_rows) {  // the pinned Gram matrix again: its decomposition (the same bits)
    bool same = true;
    for (int j = 0; j < r && same; ++j) same = std::memcmp(&s.G(0, j), &s.pinned_G(0, j), sizeof(double) * r) == 0;
    if (same) {
      if (!s.pinned_has_vectors) {  // pinned without its vectors: decomposed now, and they pinned too
        decompose(r, s, true);
        s.pinned_vectors.topLeftCorner(r, r) = s.eig_vectors.topLeftCorner(r, r);
        s.pinned_has_vectors = true;
      }
      s.eig_values.head(r) = s.pinned_values.head(r);
      s.eig_vectors.topLeftCorner(r, r) = s.pinned_vectors.topLeftCorner(r, r);
      return s.pinned_rank;
    }
  }
  vectors = vectors || !pin;
  decompose(r, s, vectors);
  const double largest = s.eig_values(r - 1);
  int rank = 0;
  for (int i = 0; i < r; ++i) rank += s.eig_values(i) > kRankTolerance * std::max(1.0, largest);
  if (pin) {
    s.pinned_rows = r;
    s.pinned_rank = rank;
    s.pinned_has_vectors = vectors;
    s.pinned_G.topLeftCorner(r, r) = s.G.topLeftCorner(r, r);
    s.pinned_values.head(r) = s.eig_values.head(r);
    if (vectors) s.pinned_vectors.topLeftCorner(r, r) = s.eig_vectors.topLeftCorner(r, r);
  }
  return rank;
}

void subtract_row_space(const double* M, int r, Matrix& P, Space& s) {
  const int nv = s.nv;
  if (r == 0) return;
  if (gram(M, r, nv, s) && clear_of(r, kOrthonormalize * s.G.topLeftCorner(r, r).trace(), s)) {
    // full rank and no eigenvalue below kOrthonormalize x the trace (so none below that x the
    // largest: the eigen path would not orthonormalize again): W^T = L^-1 M, G = L L^T
    factor_damped(r, 0.0, s);
    factor::WtMap Wt(s.Wt_room.data(), r, nv);
    Wt = RowMatrixMap(M, r, nv);
    factor::solve_lower_by_rows(s.L.topLeftCorner(r, r), Wt);
    factor::subtract_gram(P, Wt);
    return;
  }
  const int rank = eigen(M, r, nv, s);
  if (rank == 0) return;
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
  if (s.eig_values(r - rank) < kOrthonormalize * s.eig_values(r - 1)) {  // (Python's row_basis)
    for (int k = 0; k < rank; ++k) {  // modified Gram-Schmidt twice, in the eigenvalues' order
      double* w = Wt.data() + static_cast<long>(k) * nv;
      for (int pass = 0; pass < 2; ++pass)
        for (int j = 0; j < k; ++j) {
          const double* u = Wt.data() + static_cast<long>(j) * nv;
          factor::axpy(w, u, -dot(u, w, nv), nv);
        }
      const double norm = std::sqrt(dot(w, w, nv));
      for (int b = 0; b < nv; ++b) w[b] /= norm;
    }
  }
  factor::subtract_gram(P, Wt);
}

double smallest_singular_value(const double* M, int r, int nv, Space& s, double floor, int& rank, bool vectors) {
  if (r == 0) {
    s.pinned_rows = -1;
    rank = 0;
    return kInf;
  }
  const bool finite = gram(M, r, nv, s);
  if (finite && M == s.AP.data()) {  // kept for the reuses of s.AP's Gram matrix
    s.G_AP.topLeftCorner(r, r) = s.G.topLeftCorner(r, r);
    s.AP_gram_rows = r;
  }
  if (finite && clear_of(r, floor, s)) {  // every sigma above sqrt(floor): known when read
    s.pinned_rows = -1;
    rank = r;
    return -1.0;
  }
  rank = eigen(M, r, nv, s, true, vectors);
  return rank == r ? std::sqrt(s.eig_values(0)) : 0.0;
}

double smallest_of_gram(const Matrix& G, int r, Space& s) {
  s.G.topLeftCorner(r, r) = G.topLeftCorner(r, r);
  decompose(r, s, false);
  return std::sqrt(std::max(s.eig_values(0), 0.0));
}

}  // namespace lex
}  // namespace reljac

// The Gram matrices of the compiled inequality hierarchy (see active_set.hpp, active_set_gram.hpp):
// M M^T formed (or read off a projector for identity rows), the shifted Cholesky test that keeps a
// matrix clear of the rank cut off the eigen-decomposition, the eigen-decompositions (pinned per
// level), the rank, and the smallest singular value (certified without a decomposition where a
// pivoted Cholesky factor proves the level rank deficient).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "active_set_gram.hpp"

namespace reljac {
namespace lex {

namespace {

template <typename Gram>
void decompose(const Matrix& G, int r, Space& s, Gram& work, int options) {
  work = G.topLeftCorner(r, r);
  Eigen::SelfAdjointEigenSolver<Gram> es(work, options);
  s.eig_values.head(r) = es.eigenvalues();
  if (options == Eigen::ComputeEigenvectors) s.eig_vectors.topLeftCorner(r, r) = es.eigenvectors();
}

// out[q] = dot(a, b + q n) for q < 4 (b: four contiguous rows of n), each in dot's two interleaved
// sums in dot's order (the same bits), a read once for the four.
inline void dot4(const double* __restrict a, const double* __restrict b, int n, double* out) {
  const double *b0 = b, *b1 = b + n, *b2 = b + 2 * n, *b3 = b + 3 * n;
  double e0 = 0.0, o0 = 0.0, e1 = 0.0, o1 = 0.0, e2 = 0.0, o2 = 0.0, e3 = 0.0, o3 = 0.0;
  int k = 0;
  for (; k + 1 < n; k += 2) {
    const double x = a[k], y = a[k + 1];
    e0 += x * b0[k];
    o0 += y * b0[k + 1];
    e1 += x * b1[k];
    o1 += y * b1[k + 1];
    e2 += x * b2[k];
    o2 += y * b2[k + 1];
    e3 += x * b3[k];
    o3 += y * b3[k + 1];
  }
  if (k < n) {
    e0 += a[k] * b0[k];
    e1 += a[k] * b1[k];
    e2 += a[k] * b2[k];
    e3 += a[k] * b3[k];
  }
  out[0] = e0 + o0;
  out[1] = e1 + o1;
  out[2] = e2 + o2;
  out[3] = e3 + o3;
}

}  // namespace

// (active_set_gram.hpp) A prefix of s.AP's rows takes the leading block of its Gram matrix: each
// entry is the same dot product of the same two rows, whatever r (dot4: the same bits as dot).
bool gram(const double* M, int r, int nv, Space& s, bool of_AP) {
  if ((M == s.AP.data() && r <= s.AP_gram_rows) || (of_AP && r == s.AP_gram_rows)) {
    s.G.topLeftCorner(r, r) = s.G_AP.topLeftCorner(r, r);  // (finite: checked when kept)
    return true;
  }
  for (int i = 0; i < r; ++i) {
    const double* a = M + static_cast<long>(i) * nv;
    int j = 0;
    for (; j + 3 <= i; j += 4) {  // four entries of row i at once (dot4: the same bits as dot)
      double out[4];
      dot4(a, M + static_cast<long>(j) * nv, nv, out);
      for (int q = 0; q < 4; ++q) s.G(i, j + q) = s.G(j + q, i) = out[q];
    }
    for (; j <= i; ++j) s.G(i, j) = s.G(j, i) = dot(a, M + static_cast<long>(j) * nv, nv);
  }
  return s.G.topLeftCorner(r, r).allFinite();
}

// (active_set_gram.hpp) Then the
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

void factor_damped(int r, double lam2, Space& s) {
  auto L = s.L.topLeftCorner(r, r);
  L = s.G.topLeftCorner(r, r);
  L.diagonal().array() += lam2;
  factor::cholesky_in_place(L);
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

int eigen(const double* M, int r, int nv, Space& s, bool pin, bool vectors) {
  if (pin) s.pinned_rows = -1;
  if (r == 0) return 0;
  gram(M, r, nv, s);
  return eigen_of_gram(r, s, pin, vectors);
}

int eigen_of_gram(int r, Space& s, bool pin, bool vectors) {
  if (pin) s.pinned_rows = -1;
  if (r == 0) return 0;
  if (!s.G.topLeftCorner(r, r).allFinite()) {  // huge rows: no decomposition (Python's eigh raises)
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

int rank_of(const double* M, int r, int nv, Space& s) {
  if (r <= nv) return eigen(M, r, nv, s);
  s.dual_G.setZero();
  for (int i = 0; i < r; ++i) {  // M^T M, its lower triangle: a rank-one update per row
    const double* m = M + static_cast<long>(i) * nv;
    for (int b = 0; b < nv; ++b)
      if (m[b] != 0.0) factor::axpy(s.dual_G.col(b).data() + b, m + b, m[b], nv - b);
  }
  if (!s.dual_G.allFinite()) {  // huge rows (Python's eigh raises)
    s.overflow = true;
    return 0;
  }
  s.dual.compute(s.dual_G, Eigen::EigenvaluesOnly);
  const auto& e = s.dual.eigenvalues();
  int rank = 0;
  for (int i = 0; i < nv; ++i) rank += e(i) > kRankTolerance * std::max(1.0, e(nv - 1));
  return rank;
}

double smallest_singular_value(const double* M, int r, int nv, Space& s, double floor, int& rank, bool vectors,
                               bool spread, bool& deficient) {
  const bool deficient_before = deficient;
  deficient = false;
  if (r == 0) {
    s.pinned_rows = -1;
    rank = 0;
    return kInf;
  }
  const bool finite = gram(M, r, nv, s);
  const bool of_AP = finite && M == s.AP.data();
  if (of_AP) {  // kept for the reuses of s.AP's Gram matrix
    s.G_AP.topLeftCorner(r, r) = s.G.topLeftCorner(r, r);
    s.AP_gram_rows = r;
    s.AP_clear = false;
    s.AP_spread = -1;
    s.L_AP_rows = -1;
  }
  int k = 0;
  bool pivoted = false;  // pivoted_rank tried (and failed)
  if (finite && deficient_before && !vectors) {  // as the last solve found it: certified rank deficient
    if (pivoted_rank(r, s, k)) {  // (no Cholesky factor, shifted or not, then exists: nothing else tried)
      s.pinned_rows = -1;
      rank = k;
      if (of_AP && spread) s.AP_spread = 0;
      deficient = true;
      return 0.0;
    }
    pivoted = true;
  }
  // the row space's test first where it is the stricter (a pass answers both; a failure answers
  // the row space's for the whole of G_AP), else a pass at `floor` answers it too
  const double spread_floor = kOrthonormalize * s.G.topLeftCorner(r, r).trace();
  bool clear = false;
  if (of_AP && spread && spread_floor > floor) {
    clear = clear_of(r, spread_floor, s);
    s.AP_spread = clear;
  }
  if (finite && (clear || clear_of(r, floor, s))) {  // every sigma above sqrt(floor): known when read
    s.pinned_rows = -1;
    rank = r;
    // (clear_of's shift was at least the rank cut's: a step on G_AP needs no test of its own)
    s.AP_clear = of_AP;
    if (of_AP && spread && floor >= spread_floor) s.AP_spread = 1;
    return -1.0;
  }
  if (finite && !vectors && r <= factor::kSmallLevel) {  // full rank and well conditioned: certified as the SNS solver
    factor::SmallGram G = s.G.topLeftCorner(r, r), L = G;  // certifies it (hierarchy_rank.hpp), no decomposition
    double e0 = 0.0;
    if (factor::cholesky_in_place(L) && factor::certified_smallest_eigenvalue(G, L, e0)) {
      s.pinned_rows = -1;
      rank = r;
      return std::sqrt(e0);
    }
  }
  if (finite && !vectors && !pivoted && pivoted_rank(r, s, k)) {  // rank deficient, certified as the eigenvalues
    s.pinned_rows = -1;                                              // would count it: sigma_min 0, no decomposition
    rank = k;                                                        // (nothing pinned)
    deficient = true;
    return 0.0;
  }
  rank = eigen_of_gram(r, s, true, vectors);  // (s.G is M M^T: formed above)
  return rank == r ? std::sqrt(s.eig_values(0)) : 0.0;
}

// (active_set_gram.hpp) s.G = M M^T for model_step's M = A P_W formed as the level's A P_in
// less the face's restrictions: A P_W A^T = A P_in A^T - sum_k d_k d_k^T / pivot_k with d_k = A Pn_k
// (s.face_along) and A P_in A^T the level's kept Gram matrix (s.G_AP): r^2 w products instead of
// r^2 nv. Its entries carry the rounding of G_AP's, relative to the rows' norms before the
// restrictions: false (s.G not to be used: formed from M) where the restrictions take more than
// all but 1 / kDowndateShare of a row's squared norm (a row nearly along a held one: then its
// entries would be differences of nearly equal numbers, off by G_AP's rounding over what is left).
constexpr double kDowndateShare = 16.0;
bool gram_downdated(int r, Space& s) {
  for (int a = 0; a < r; ++a) {
    const int i = s.chosen[a];
    for (int b = 0; b <= a; ++b) {
      double g = s.G_AP(i, s.chosen[b]);
      for (int k = 0; k < s.face_rows; ++k) g -= s.face_along(a, k) * s.face_along(b, k) * s.face_scale(k);
      s.G(a, b) = s.G(b, a) = g;
    }
    if (!(s.G(a, a) * kDowndateShare >= s.G_AP(i, i))) return false;  // (and NaN)
  }
  return true;
}

double smallest_of_gram(const Matrix& G, int r, Space& s) {
  s.G.topLeftCorner(r, r) = G.topLeftCorner(r, r);
  decompose(r, s, false);
  return std::sqrt(std::max(s.eig_values(0), 0.0));
}

}  // namespace lex
}  // namespace reljac

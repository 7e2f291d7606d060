// How the compiled SNS solver factors one level: the candidate correction (Cholesky of the
// Gram matrix; on the pivot rows where its rank deficiency is certified, hierarchy_rank.hpp; else
// its eigen-decomposition), with the buffers it and the row space (hierarchy_row_space.hpp) reuse.
// Private to the compiled solver (inline: its inner loop); the Python twin is _correction in
// reljac/ik/solvers/hierarchy.py.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "hierarchy.hpp"
#include "hierarchy_rank.hpp"
#include "small_dense.hpp"

namespace reljac {
namespace factor {

// f(G) with G an empty Gram matrix of the type a level of `rows` rows is factored in: fixed sizes
// for a pose (6) and a position or orientation (3: unrolled factorizations), fixed capacity up to
// kSmallLevel rows (no allocation), else dynamic.
template <class F>
inline void with_gram_type(int rows, F&& f) {
  if (rows == 6)
    f(Eigen::Matrix<double, 6, 6>());
  else if (rows == 3)
    f(Eigen::Matrix3d());
  else if (rows <= kSmallLevel)
    f(SmallGram());
  else
    f(Matrix());
}

// y = A x for a level.
inline void times(const Level& level, const Vector& x, int nv, Vector& y) {
  if (level.A != nullptr) {  // a dot product per contiguous row of A (fewer instructions than Eigen's product)
    const int m = level.rows();
    y.resize(m);
    for (int i = 0; i < m; ++i) y(i) = dot(level.A + static_cast<Eigen::Index>(i) * nv, x.data(), nv);
    return;
  }
  y = level.identity_scale * x;
  if (level.mask.size()) y.array() *= level.mask.array();
}

// One candidate correction of a level (the buffers are reused from candidate to candidate).
struct Correction {
  Vector delta, A_delta;
  bool has_W = false;     // false: an identity level (it leaves no null space)
  bool full_rank = false;  // W W^T = M^T G^-1 M (Cholesky); else W = M^T U_scaled
  bool factored = false;   // full rank with no damping: U_scaled holds G's Cholesky factor L
  bool undecided = false;  // a search's candidate solved by Cholesky of G + mu I: rank and row space found when chosen (row_space)
  bool pivoted = false;    // rank deficient, certified by pivoted_rank: W^T = L11^-1 (M's rows pivots(0..rank-1))
  Matrix U_scaled;         // U_r Sigma_r^-1 in the first `rank` columns (m x m) when not full rank; L when factored; L11 when pivoted
  Pivots pivots;
  int rank = 0;
  double damping = 0.0;
  double smallest = std::numeric_limits<double>::infinity();

  void clear() {  // no row space, rank, damping or smallest singular value yet (a new candidate)
    has_W = full_rank = factored = undecided = pivoted = false;
    rank = 0;
    damping = 0.0;
    smallest = std::numeric_limits<double>::infinity();
  }
  void swap(Correction& other) {
    delta.swap(other.delta);
    A_delta.swap(other.A_delta);
    U_scaled.swap(other.U_scaled);
    std::swap(has_W, other.has_W);
    std::swap(full_rank, other.full_rank);
    std::swap(factored, other.factored);
    std::swap(undecided, other.undecided);
    std::swap(pivoted, other.pivoted);
    std::swap(pivots, other.pivots);
    std::swap(rank, other.rank);
    std::swap(damping, other.damping);
    std::swap(smallest, other.smallest);
  }
};

// W^T in a buffer with room for every rank: laid out and aligned as a (rank x nv) RowMatrix would be
// (the same arithmetic), without a new allocation when the rank changes. Row-major, as M: the
// kernels below (gram, row_space, subtract_gram) run along contiguous rows.
using WtMap = Eigen::Map<RowMatrix, Eigen::AlignedMax>;

// Buffers sized by one level's rows.
struct LevelSpace {
  RowMatrix M, M_best;  // A P_free (rows x nv, row-major) and the best candidate's
  Matrix G;             // M M^T (report), or its Cholesky factor (row space)
  Matrix G_now;         // M M^T of the candidate being tried, lower triangle (see correction)
  Vector Wt_room;       // W^T (rank x nv, row-major) in its first rank x nv entries: see Wt()
  int Wt_rows = 0;
  Vector residual, Ax, coefficients, Mc;  // coefficients: (m), the first `rank` used
  Vector projected;                        // (nv): P delta, when a correction is projected (see correction)
  Correction step, best;
  const RowMatrix* smallest_of = nullptr;  // M of the chosen candidate, while its report waits for sigma_min
  Eigen::SelfAdjointEigenSolver<Matrix> values;

  // W^T (rows x nv), made room for when larger than any before.
  WtMap Wt(int rows, int nv) {
    if (Wt_room.size() < static_cast<Eigen::Index>(rows) * nv) Wt_room.resize(static_cast<Eigen::Index>(rows) * nv);
    Wt_rows = rows;
    return WtMap(Wt_room.data(), rows, nv);
  }
  WtMap Wt(int nv) { return WtMap(Wt_room.data(), Wt_rows, nv); }  // the last one

  // Every buffer at the size a level of m rows (a dense A) gives it, so that solving one allocates
  // nothing (m <= kSmallLevel; see correction).
  int reserved_rows = -1, reserved_nv = -1;
  void reserve(int m, int nv) {
    reserved_rows = m;
    reserved_nv = nv;
    for (RowMatrix* x : {&M, &M_best}) x->resize(m, nv);
    G.resize(m, m);
    G_now.resize(m, m);
    Wt(m, nv);
    for (Vector* x : {&residual, &Ax, &coefficients, &Mc, &step.A_delta, &best.A_delta}) x->resize(m);
    step.delta.resize(nv);
    best.delta.resize(nv);
    projected.resize(nv);
    step.U_scaled.resize(m, m);
    best.U_scaled.resize(m, m);
    const Matrix identity = Matrix::Identity(m, m);
    values.compute(identity, Eigen::EigenvaluesOnly);
  }
};

// From G's eigen-decomposition (m x m, ascending): the rank (eigenvalues above kRankTolerance x
// max(1, largest)), sigma_min (0 below full rank) and U_scaled = U_r Sigma_r^-1 into `step`.
template <typename Solver>
inline void eigen_rank(const Solver& eig, int m, Correction& step) {
  const auto& e = eig.eigenvalues();
  const double largest = m ? e(m - 1) : 0.0;
  int rank = 0;
  for (int i = 0; i < m; ++i) rank += e(i) > kRankTolerance * std::max(1.0, largest);
  step.rank = rank;
  step.smallest = rank == m && rank > 0 ? std::sqrt(e(m - rank)) : 0.0;
  step.U_scaled.resize(m, m);
  step.U_scaled.leftCols(rank) = eig.eigenvectors().rightCols(rank) * e.tail(rank).array().sqrt().inverse().matrix().asDiagonal();
}

// delta = M^T y, y (m) given in step.A_delta, then A delta into step.A_delta. M = A P is rounded at
// eps |A|, so M^T y leaves range(P) by about eps |A|_F |y| [rad or m] (moving the levels above by
// that): where |A|_F |y| > kAmplified (a level nearly in the span of the levels above, undamped),
// delta is projected on range(P) (reljac/ik/solvers/hierarchy.py, amplified). a_norm: |A|_F.
inline void delta_from(const Level& level, const RowMatrix& M, const Matrix& P, double a_norm, int nv,
                       Correction& step, Vector& projected) {
  step.delta.setZero(nv);  // M^T y: the rows of M (contiguous) added four at a time
  {
    Axpys sum(step.delta.data(), nv);
    for (Eigen::Index i = 0; i < M.rows(); ++i)
      if (step.A_delta(i) != 0.0) sum.add(M.data() + i * nv, step.A_delta(i));
  }
  if (a_norm * step.A_delta.norm() > kAmplified) {
    projected.noalias() = P * step.delta;
    step.delta.swap(projected);
  }
  times(level, step.delta, nv, step.A_delta);
}

// G's rank k < m (G: m x m, lower triangle) certified by pivoted_rank, into `step` with what
// row_space needs of it (L11 in U_scaled, the pivots; sigma_min 0); F: the pivoted factor
// (pivoted_step's B). False, `step` untouched but its pivots: G has full rank, or no certificate.
// Shared by correction() and decide_rank().
template <typename Gram>
inline bool certified_rank_deficiency(const Gram& G, Gram& F, Correction& step) {
  const int m = static_cast<int>(G.rows());
  int k = 0;
  if (m == 0 || !pivoted_rank(G, F, step.pivots, k) || k == m) return false;
  step.pivoted = true;
  step.rank = k;
  step.smallest = 0.0;
  step.U_scaled.resize(m, m);
  step.U_scaled.topLeftCorner(k, k) = F.topLeftCorner(k, k);
  return true;
}

// z (k) = L11^-T (B^T B + lam2 I)^-1 B^T c for a pivoted factor F of `rows` rows and rank k
// (B = F's first k columns, B(i, a) = 0 for i < a; L11 its top k x k block, certified well
// conditioned), c_i = rhs(i) the right-hand side at the i-th pivot; C (k x k) is workspace.
// Shared by pivoted_step here and the bounded solver's (active_set_pivoted.cpp).
template <typename Factor, typename Rhs, typename Workspace, typename Coefficients>
inline void pivoted_coefficients(const Factor& F, int rows, int k, Rhs&& rhs, double lam2, Workspace&& C,
                                 Coefficients&& z) {
  for (int a = 0; a < k; ++a) {
    double bt_c = 0.0;
    for (int i = a; i < rows; ++i) bt_c += F(i, a) * rhs(i);
    z(a) = bt_c;
    for (int b = 0; b <= a; ++b) {
      double sum = 0.0;
      for (int i = a; i < rows; ++i) sum += F(i, a) * F(i, b);
      C(a, b) = sum;
    }
    C(a, a) += lam2;
  }
  cholesky_in_place(C);  // (B has full column rank: L11 is certified well conditioned)
  cholesky_solve_in_place(C, z);
  for (int a = k - 1; a >= 0; --a) {  // L11^-T z
    double x = z(a);
    for (int i = a + 1; i < k; ++i) x -= F(i, a) * z(i);
    z(a) = x / F(a, a);
  }
}

// The correction of a candidate certified_rank_deficiency found of rank k = step.rank: with
// B = [L11; L21] (F; G = B B^T after the pivots, up to the dropped part), M's row space has the
// orthonormal basis W = M1^T L11^-T (M1: the pivot rows of M) and M = B W^T, so the eigen path's
// U_r (E_r + lambda^2)^-1 U_r^T r gives (B's singular value decomposition)
// delta = W (B^T B + lambda^2 I)^-1 B^T r: y = L11^-T (B^T B + lambda^2 I)^-1 B^T r on the pivot
// rows, 0 on the others, into step.A_delta (lambda^2 = `damping`).
template <typename Gram>
inline void pivoted_step(const Gram& F, const RowMatrix& M, const Vector& residual, double damping,
                         Correction& step) {
  const int m = static_cast<int>(M.rows()), k = step.rank;
  step.damping = damping;
  SmallGram C(k, k);
  SmallColumn z(k);
  pivoted_coefficients(F, m, k, [&](int i) { return residual(step.pivots(i)); }, damping, C, z);
  step.A_delta.setZero(m);  // y
  for (int a = 0; a < k; ++a) step.A_delta(step.pivots(a)) = z(a);
}

// Damped least-squares correction delta (in range(P)) of A delta = residual, into `step`.
// The same matrix function as the Python solver's eigen-decomposition of G = M M^T. A level
// whose G - shift I has a Cholesky factor (shift = threshold^2, and at least the rank
// tolerance) has full rank and no singular damping: it is solved through a Cholesky factor of
// G + lambda^2 I. One with sigma_min below the threshold whose G has a Cholesky factor and a
// certified, well-conditioned smallest eigenvalue (certified_smallest_eigenvalue) is too, with
// lambda^2 from that eigenvalue (U (E + lambda^2)^-1 U^T = (G + lambda^2 I)^-1 at full rank);
// only the others (rank deficient, or nearly) need the eigen-decomposition.
// Gram is the (m x m) matrix type: fixed-capacity (no allocation) for small levels.
//
// `G_now`: M M^T in its lower triangle (gram()), formed by the caller after each saturation. Not
// downdated by rank one (G - (M c)(M c)^T / pivot): tried, 3.5 % fewer instructions in the Talos
// whole-body step, but the cancellation moved TIAGo dual's first step at its singular start 1e-8
// away from the Python solver's (1e-10 formed anew).
// `known_singular`: an earlier candidate of this level failed that test with shift = threshold^2;
// saturations only shrink G's eigenvalues (interlacing), so the test would fail again: skip it.
template <typename Gram>
inline void correction(const Level& level, const RowMatrix& M, const Matrix& G_now, const Matrix& P, const Vector& residual,
                       const Policy& policy, int nv, double a_norm, bool& known_singular, Correction& step,
                       Vector& coefficients, Vector& projected) {
  step.clear();
  step.has_W = true;
  const int m = level.rows();
  Gram G = G_now;  // M M^T, its lower triangle (what the factorizations read): see gram()
  if (level.search && m > 0 && policy.singular_damping(0.0) == 0.0 &&
      level.extra_damping >= kSearchCholesky * std::max(1.0, G.trace())) {
    // a search's candidate: M^T (G + mu I)^-1 r, no direction cut (the same matrix function as the
    // eigen path where G's small eigenvalues are exact zeros); the rank waits for row_space
    step.undecided = true;
    step.damping = level.extra_damping;
    G.diagonal().array() += step.damping;
    cholesky_in_place(G);  // (G + mu I, mu > 0: positive definite)
    step.A_delta = residual;  // y
    cholesky_solve_in_place(G, step.A_delta);
    delta_from(level, M, P, a_norm, nv, step, projected);
    return;
  }
  const double shift = std::max(policy.threshold * policy.threshold, kRankTolerance * std::max(1.0, G.trace()));
  const bool fixed_shift = shift == policy.threshold * policy.threshold;
  bool full_rank_test = false;
  if (m > 0 && !(known_singular && fixed_shift)) {
    Gram shifted = G;
    shifted.diagonal().array() -= shift;
    full_rank_test = cholesky_in_place(shifted);  // every sigma^2 > shift
    if (!full_rank_test && fixed_shift) known_singular = true;
  }
  // A full-rank candidate: y = (G + lambda^2 I)^-1 r by a Cholesky factor (U (E + lambda^2)^-1 U^T r
  // without U). G's own factor, which the row space reuses if this candidate is chosen: `own` when
  // known, else the damped one at lambda = 0.
  auto full_rank_step = [&](double smallest, double damping, const Gram* own) {
    step.full_rank = true;
    step.rank = m;
    step.smallest = smallest;
    step.damping = damping;
    Gram damped = G;
    damped.diagonal().array() += damping;
    cholesky_in_place(damped);  // (G positive definite, lambda^2 >= 0)
    step.A_delta = residual;  // y
    cholesky_solve_in_place(damped, step.A_delta);
    if (own != nullptr || damping == 0.0) {
      step.U_scaled = (own != nullptr ? *own : damped).template triangularView<Eigen::Lower>();
      step.factored = true;
    }
    delta_from(level, M, P, a_norm, nv, step, projected);
  };
  if (full_rank_test) {  // sigma_min: not needed to solve, computed for the report of the chosen candidate
    full_rank_step(-1.0, level.extra_damping, nullptr);
    return;
  }
  if (m > 0 && fixed_shift) {  // sigma_min below the threshold: its value sets the damping
    Gram L = G;
    double e0 = 0.0;
    if (cholesky_in_place(L) && certified_smallest_eigenvalue(G, L, e0)) {  // full rank, well conditioned
      const double smallest = std::sqrt(e0);
      full_rank_step(smallest, policy.singular_damping(smallest) + level.extra_damping, &L);
      return;
    }
  }
  Gram F;
  if (certified_rank_deficiency(G, F, step)) {  // rank deficient: on the pivot rows
    pivoted_step(F, M, residual, policy.singular_damping(0.0) + level.extra_damping, step);
    delta_from(level, M, P, a_norm, nv, step, projected);
    return;
  }
  const Eigen::SelfAdjointEigenSolver<Gram> eig(G);  // ascending
  eigen_rank(eig, m, step);
  const int rank = step.rank;
  step.damping = policy.singular_damping(step.smallest) + level.extra_damping;
  const auto U_r = eig.eigenvectors().rightCols(rank);
  const auto e_r = eig.eigenvalues().tail(rank);
  coefficients.resize(m);  // buffers of the largest rank: a smaller one does not reallocate
  auto c_r = coefficients.head(rank);
  c_r = (U_r.transpose() * residual).array() / (e_r.array() + step.damping);
  step.A_delta.noalias() = U_r * c_r;  // y
  delta_from(level, M, P, a_norm, nv, step, projected);
}

}  // namespace factor
}  // namespace reljac

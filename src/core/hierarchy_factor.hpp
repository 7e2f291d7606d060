// How the compiled SNS solver factors one level: the candidate correction (Cholesky of the
// Gram matrix, or its eigen-decomposition when singular), the level's row space and the projector
// update, with the buffers they reuse. Private to hierarchy.cpp (inline: the solver's inner loop);
// the Python twin is _correction in reljac/ik/hierarchy.py.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "hierarchy.hpp"
#include "small_dense.hpp"

namespace reljac {
namespace factor {

constexpr int kSmallLevel = 12;  // levels with at most this many rows factor without allocating
using SmallGram = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kSmallLevel, kSmallLevel>;

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
  Matrix U_scaled;         // U_r Sigma_r^-1 in the first `rank` columns (m x m) when not full rank; L when factored
  int rank = 0;
  double damping = 0.0;
  double smallest = std::numeric_limits<double>::infinity();

  void swap(Correction& other) {
    delta.swap(other.delta);
    A_delta.swap(other.A_delta);
    U_scaled.swap(other.U_scaled);
    std::swap(has_W, other.has_W);
    std::swap(full_rank, other.full_rank);
    std::swap(factored, other.factored);
    std::swap(undecided, other.undecided);
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
// delta is projected on range(P) (reljac/ik/hierarchy.py, amplified). a_norm: |A|_F.
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
  step.has_W = false;
  step.full_rank = false;
  step.factored = false;
  step.undecided = false;
  step.rank = 0;
  step.damping = 0.0;
  step.smallest = std::numeric_limits<double>::infinity();
  if (level.A == nullptr) {  // A = c diag(mask): (c P)^+ = P / c on the kept rows
    step.delta.resize(nv);
    times_vector(P, residual.data(), step.delta.data());  // P residual
    const double c = level.identity_scale, lam2 = level.extra_damping;  // damped: c P / (c^2 + lambda^2)
    step.damping = lam2;
    if (lam2 == 0.0)
      step.delta /= c;
    else
      step.delta *= c / (c * c + lam2);
    times(level, step.delta, nv, step.A_delta);
    return;
  }
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

// The smallest singular value of M (full rank), for a report.
inline double smallest_singular_value(const RowMatrix& M, LevelSpace& w) {
  gram(M, w.G);
  w.values.compute(w.G, Eigen::EigenvaluesOnly);
  return std::sqrt(std::max(w.values.eigenvalues()(0), 0.0));
}

// Wt = L^-1 Wt in place (L lower triangular, rows x rows): forward substitution by rows of Wt.
template <typename Lower>
inline void solve_lower_by_rows(const Lower& L, WtMap& Wt) {
  const Eigen::Index n = Wt.cols();
  for (Eigen::Index i = 0; i < Wt.rows(); ++i) {
    {
      Axpys row(Wt.data() + i * n, n);  // (rows k < i: apart from row i)
      for (Eigen::Index k = 0; k < i; ++k) row.add(Wt.data() + k * n, -L(i, k));
    }
    Wt.row(i) /= L(i, i);
  }
}

// A search's chosen candidate solved by Cholesky of G + mu I (Correction::undecided): its rank and
// smallest singular value as correction() finds them without mu (full rank: G - shift I has a
// Cholesky factor, and G's own factor goes to U_scaled for row_space; else the eigen-decomposition
// of G, U_scaled), so that row_space goes on as for any candidate. G_now: M M^T (lower triangle)
// when it is at hand (the candidate tried last), else nullptr.
template <typename Gram>
inline void decide_rank(Correction& step, const RowMatrix& M, const Matrix* G_now, const Policy& policy,
                        LevelSpace& w) {
  const int m = static_cast<int>(M.rows());
  if (G_now == nullptr) {
    gram(M, w.G);
    G_now = &w.G;
  }
  const Gram G = *G_now;
  const double shift = std::max(policy.threshold * policy.threshold, kRankTolerance * std::max(1.0, G.trace()));
  Gram shifted = G;
  shifted.diagonal().array() -= shift;
  step.undecided = false;
  if (cholesky_in_place(shifted)) {
    step.full_rank = true;
    step.rank = m;
    step.smallest = -1.0;  // computed for the report when it is read
    Gram factor = G;
    cholesky_in_place(factor);
    step.U_scaled = factor.template triangularView<Eigen::Lower>();  // G's factor: row_space's W^T = L^-1 M
    step.factored = true;
    return;
  }
  eigen_rank(Eigen::SelfAdjointEigenSolver<Gram>(G), m, step);
}

// w.Wt() = W^T (rank x nv) with W W^T the projector onto the level's rows inside range(P) (M = A P).
inline void row_space(const Correction& step, const RowMatrix& M, LevelSpace& w) {
  const int nv = static_cast<int>(M.cols());
  if (step.full_rank) {  // W^T = L^-1 M with G = L L^T
    WtMap Wt = w.Wt(static_cast<int>(M.rows()), nv);
    Wt = M;
    if (step.factored) {  // L from the candidate's correction (the same G = M M^T, undamped)
      solve_lower_by_rows(step.U_scaled, Wt);
      return;
    }
    gram(M, w.G);
    cholesky_in_place(w.G);  // (full rank: it has a factor) w.G's lower triangle is L
    solve_lower_by_rows(w.G, Wt);
    return;
  }
  w.Wt(step.rank, nv).noalias() = step.U_scaled.leftCols(step.rank).transpose() * M;
}

// P -= W W^T (W^T = Wt, rank x nv): the lower triangle, column by column, as axpys along Wt's
// contiguous rows, up to four per pass over a column (Axpys; each entry computed once; fewer
// instructions than Eigen's blocked symmetric update at these sizes), mirrored into the upper
// one, so that P stays exactly symmetric.
inline void subtract_gram(Matrix& P, const WtMap& Wt) {
  if (Wt.rows() == 0) return;
  const Eigen::Index n = P.rows();
  for (Eigen::Index b = 0; b < n; ++b) {  // column b takes the rows k in order, as row by row would
    Axpys column(P.data() + b * n + b, n - b);
    for (Eigen::Index k = 0; k < Wt.rows(); ++k) {
      const double* w = Wt.data() + k * n;
      if (w[b] != 0.0) column.add(w + b, -w[b]);
    }
  }
  P.triangularView<Eigen::StrictlyUpper>() = P.transpose();
}

}  // namespace factor
}  // namespace reljac

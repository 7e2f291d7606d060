// What a level's chosen candidate leaves to the levels below: its rank (decided now for a
// search's candidate), its row space W^T (from a Cholesky factor, the pivot rows, or the
// eigenvectors: hierarchy_factor.hpp's Correction) and the projector update P -= W W^T; and the
// smallest singular value a report reads. Inline (the solver's inner loop), for hierarchy.cpp; the
// inequality solver (active_set_row_space.cpp) shares solve_lower_by_rows and subtract_gram. The
// Python twin is the W of _correction in reljac/ik/solvers/hierarchy.py.
#pragma once

#include <algorithm>

#include "hierarchy_factor.hpp"

namespace reljac {
namespace factor {

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
  Gram F;
  if (certified_rank_deficiency(G, F, step)) return;  // its L11 and pivots for row_space
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
  if (step.pivoted) {  // W^T = L11^-1 M1, M1 the pivot rows
    WtMap Wt = w.Wt(step.rank, nv);
    for (int a = 0; a < step.rank; ++a) Wt.row(a) = M.row(step.pivots(a));
    solve_lower_by_rows(step.U_scaled, Wt);
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

// The damped least-squares step of the compiled inequality hierarchy (see active_set.hpp): on the
// Gram matrix's Cholesky factor where it is clear of the rank cut, on a pivoted factor where it is
// certified rank deficient (active_set_pivoted.cpp), else on its eigen-decomposition, refined and
// with the fine directions where undamped (Python's damped_step); and the least squares of the
// working set's multipliers.
#include <algorithm>
#include <cmath>

#include "active_set_gram.hpp"

namespace reljac {
namespace lex {

void damped_step(int r, double lam2, Space& s, bool of_AP, bool deficient, bool cleared) {
  const int nv = s.nv;
  // more rows than joints (many planes beyond their bounds): the same step from R and Q^T c of
  // M = Q R (upper_factor), so the minimizer and the minimum-norm one are R's (Python's
  // damped_step), with no r x r Gram matrix
  const bool reduced = r > nv && s.M.topRows(r).allFinite();  // (R's rows below, not M's)
  if (reduced) {
    s.M.topRows(nv) = upper_factor(s.M.data(), r, nv, s.c.data());
    r = nv;
    of_AP = cleared = false;
  }
  if (r > 0) gram(s.M.data(), r, nv, s, of_AP);
  damped_step_on_gram(r, lam2, s, deficient, cleared);
  if (reduced) s.step_y_known = false;  // (y is R's: not per row of M)
}

void damped_step_on_gram(int r, double lam2, Space& s, bool deficient, bool cleared) {
  const int nv = s.nv;
  s.delta.setZero();
  s.step_y_known = false;
  if (r == 0) return;
  auto y = s.coefficients.head(r);
  const bool finite = cleared || s.G.topLeftCorner(r, r).allFinite();
  if (cleared || (finite && !deficient && clear_of(r, 0.0, s))) {  // full rank: y = (G + lam2 I)^-1 c
    factor_damped(r, lam2, s);
    y = s.c.head(r);
    const auto L = s.L.topLeftCorner(r, r);
    factor::cholesky_solve_in_place(L, y);
    s.step_y_known = true;
    s.step_y.head(r) = y.cwiseAbs();
    if (lam2 != 0.0) {
      for (int i = 0; i < r; ++i)
        if (y(i) != 0.0) factor::axpy(s.delta.data(), s.M.row(i).data(), y(i), nv);
      return;
    }
    for (int pass = 0; pass < 2; ++pass) {  // undamped: refined once (Python's damped_step)
      for (int i = 0; i < r; ++i)
        if (y(i) != 0.0) factor::axpy(s.delta.data(), s.M.row(i).data(), y(i), nv);
      if (pass == 1) {
        s.step_y.head(r) += y.cwiseAbs();
        return;
      }
      y = s.c.head(r);
      y.noalias() -= RowMatrixMap(s.M.data(), r, nv) * s.delta;
      factor::cholesky_solve_in_place(L, y);
    }
  } else {
    int k = 0;
    if (finite && lam2 > 0.0 && pivoted_rank(r, s, k)) {  // rank deficient, certified: no eigenvectors
      pivoted_step(r, k, lam2, s);
      return;
    }
    const int rank = eigen_of_gram(r, s);  // (s.G is M M^T)
    // delta += M^T y, y on the kept eigenvalues (the largest `rank`, ascending order) for x
    auto kept_part = [&](const auto& x) {
      y.setZero();
      for (int k = r - rank; k < r; ++k) {
        const auto u = s.eig_vectors.col(k).head(r);
        y += u * (u.dot(x) / (s.eig_values(k) + lam2));
      }
      for (int i = 0; i < r; ++i)
        if (y(i) != 0.0) factor::axpy(s.delta.data(), s.M.row(i).data(), y(i), nv);
    };
    kept_part(s.c.head(r));
    if (lam2 != 0.0 || rank == 0) return;
    // undamped: refined once, then the fine directions on what is left (Python's damped_step)
    const double cut = fine_directions(s.M.data(), r, rank, s);
    auto residual = s.value.head(r);  // (free here: the caller reads value after the step)
    residual = s.c.head(r);
    residual.noalias() -= RowMatrixMap(s.M.data(), r, nv) * s.delta;
    kept_part(residual);
    if (cut < 0.0) return;
    residual = s.c.head(r);
    residual.noalias() -= RowMatrixMap(s.M.data(), r, nv) * s.delta;
    gram(s.fine.data(), r, nv, s);  // M2 M2^T: its decomposition replaces G's
    decompose(r, s, true);
    y.setZero();
    for (int k = 0; k < r; ++k)
      if (s.eig_values(k) > cut) {
        const auto u = s.eig_vectors.col(k).head(r);
        y += u * (u.dot(residual) / s.eig_values(k));
      }
    Vector& u2 = s.gradient;  // (free here) M2^T y less its part along W (M2's rounding)
    u2.setZero();
    for (int i = 0; i < r; ++i)
      if (y(i) != 0.0) factor::axpy(u2.data(), s.fine.row(i).data(), y(i), nv);
    for (int k = 0; k < rank; ++k) {
      const double* w = s.Wt_room.data() + static_cast<long>(k) * nv;
      factor::axpy(u2.data(), w, -dot(w, u2.data(), nv), nv);
    }
    s.delta += u2;
    return;
  }
  for (int i = 0; i < r; ++i)
    if (y(i) != 0.0) factor::axpy(s.delta.data(), s.M.row(i).data(), y(i), nv);
}

// (active_set_gram.hpp) True where model_step's step s.delta = M^T y (no anchor) is in its
// face to within what projecting it once more would change by rounding (the spec's projection
// then moves it by less than 1e-11 of itself): each row M_i = A_i P_W lies in the face up to A_i's
// rounding, so delta
// lies off it by about nv u sum_i |y_i| |A_i| at most; kept where that sum is at most kFaceGrowth
// |delta| (a row nearly along the directions fixed above, |A_i| >> |M_i| with a large y_i, is
// projected: Python's comment on the projection). Only after a step on the Cholesky path (y known).
constexpr double kFaceGrowth = 1e3;
bool within_face(const Rows& rows, int r, const Space& s) {
  if (!s.step_y_known) return false;
  double growth = 0.0;
  for (int a = 0; a < r; ++a) {
    const double* J_row = s.J.row(a).data();
    const double row = rows.column ? std::abs(rows.scale) : std::sqrt(dot(J_row, J_row, s.nv));
    growth += s.step_y(a) * row;
  }
  return std::isfinite(growth) && growth <= kFaceGrowth * s.delta.norm();
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

}  // namespace lex
}  // namespace reljac

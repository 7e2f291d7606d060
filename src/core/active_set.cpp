// One level of the compiled inequality hierarchy: the twin of reljac/ik/active_set.py (see
// active_set.hpp). No allocation once Space is sized, for levels of at most 12 rows.
#include "active_set.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace reljac {
namespace lex {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// max(1, |x_i| over the finite entries): the size rounding grows with (Python's _tolerance).
double size_of(const double* x, int n, double size) {
  for (int i = 0; i < n; ++i)
    if (std::isfinite(x[i])) size = std::max(size, std::abs(x[i]));
  return size;
}

double dot(const double* a, const double* b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

template <typename Gram>
void decompose(const Matrix& G, int r, Space& s, Gram& work) {
  work = G.topLeftCorner(r, r);
  Eigen::SelfAdjointEigenSolver<Gram> es(work);
  s.eig_values.head(r) = es.eigenvalues();
  s.eig_vectors.topLeftCorner(r, r) = es.eigenvectors();
}

// P becomes the projector onto {x in range(P): n^T x = 0}; false (P unchanged) when n has no
// component left in range(P).
bool restrict(Matrix& P, const double* n, Space& s) {
  const int nv = static_cast<int>(P.rows());
  s.Pn.noalias() = P * Eigen::Map<const Vector>(n, nv);
  const double pivot = dot(n, s.Pn.data(), nv);
  if (pivot < kPivotTolerance * std::max(1.0, dot(n, n, nv))) return false;
  for (int b = 0; b < nv; ++b) {  // P -= Pn (Pn / pivot)^T, column by column
    const double scale = s.Pn(b) / pivot;
    if (scale != 0.0) factor::axpy(P.data() + b * nv, s.Pn.data(), -scale, nv);
  }
  return true;
}

// s.P_W: range(P_in) with the working set's rows held; a row dependent on those before it is dropped.
void face(const Matrix& P_in, Space& s) {
  s.P_W = P_in;
  s.kept.clear();
  for (int j : s.working)
    if (restrict(s.P_W, s.N.row(j).data(), s)) s.kept.push_back(j);
  s.working.swap(s.kept);
}

// s.delta = argmin |M u - c|^2 + lam2 |u|^2 (the minimum-norm one when lam2 = 0), M = s.M (r rows),
// on the eigenvalues of M M^T above the rank rule (Python's damped_step).
void damped_step(int r, double lam2, Space& s) {
  const int nv = s.nv;
  s.delta.setZero();
  if (r == 0) return;
  const int rank = eigen(s.M.data(), r, nv, s);
  auto y = s.coefficients.head(r);
  y.setZero();
  for (int k = r - rank; k < r; ++k) {  // the largest `rank` eigenvalues (ascending order)
    const auto u = s.eig_vectors.col(k).head(r);
    y += u * (u.dot(s.c.head(r)) / (s.eig_values(k) + lam2));
  }
  for (int i = 0; i < r; ++i)
    if (y(i) != 0.0) factor::axpy(s.delta.data(), s.M.row(i).data(), y(i), nv);
}

struct Event {
  double alpha = 1.0;
  enum { kNone, kHard, kEnter, kLeave } what = kNone;
  int which = -1;
  double bound = 0.0;
};

// The first change of the active sets along v + alpha delta, alpha in [0, 1] (Python's _first_event).
Event first_event(const Rows& rows, Space& s) {  // (a row with no freedom in the face s.P_W is not reached)
  Event e;
  const int m = rows.m, k = s.hard;
  double size = size_of(s.value.data(), m, 1.0);
  size = size_of(s.rate.data(), m, size);
  size = size_of(s.hard_value.data(), k, size);
  size = size_of(s.hard_rate.data(), k, size);
  const double tol = kBoundTolerance * size;
  for (int j = 0; j < k; ++j) {
    const double rate = s.hard_rate(j);
    if (!(rate > tol && s.hard_value(j) + rate > s.h(j) + tol)) continue;
    if (std::find(s.working.begin(), s.working.end(), j) != s.working.end()) continue;
    const double* n = s.N.row(j).data();
    s.Pn.noalias() = s.P_W * Eigen::Map<const Vector>(n, s.nv);
    if (dot(n, s.Pn.data(), s.nv) < kPivotTolerance * std::max(1.0, dot(n, n, s.nv))) continue;
    const double a = std::max(0.0, (s.h(j) - s.hard_value(j)) / rate);
    if (a < e.alpha) e = {a, Event::kHard, j, 0.0};
  }
  for (int i = 0; i < m; ++i) {
    if (rows.equal(i)) continue;
    const double low = rows.lower[i], high = rows.upper[i], x = s.value(i), dx = s.rate(i), x1 = x + dx;
    if (s.soft[i]) {  // beyond aim: does the step bring it back inside?
      const double aim = s.aim(i);
      const bool back = aim == high ? x1 < aim - tol : x1 > aim + tol;
      if (back && dx != 0.0) {
        const double a = std::max(0.0, (aim - x) / dx);
        if (a < e.alpha) e = {a, Event::kLeave, i, aim};
      }
      continue;
    }
    if (x1 > high + tol && dx > 0.0) {
      const double a = std::max(0.0, (high - x) / dx);
      if (a < e.alpha) e = {a, Event::kEnter, i, high};
    }
    if (x1 < low - tol && dx < 0.0) {
      const double a = std::max(0.0, (low - x) / dx);
      if (a < e.alpha) e = {a, Event::kEnter, i, low};
    }
  }
  return e;
}

// min |B x - r| by Householder QR, B (n x w) column-major in place (full column rank: the face
// kept independent rows; a vanishing pivot's unknown is 0), r (n) overwritten, x (w).
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

// s.mu: the working set's multipliers per unit normal (P_in (g + N_W^T mu) = 0); |P_in g| returned.
double multipliers(const Matrix& P_in, Space& s) {
  const int nv = s.nv, w = static_cast<int>(s.working.size());
  for (int a = 0; a < w; ++a) {
    auto column = s.normals.col(a);
    column.noalias() = P_in * s.N.row(s.working[a]).transpose();
    s.norms(a) = column.norm();
  }
  s.Pg.noalias() = P_in * s.gradient;
  s.rhs = -s.Pg;
  least_squares(s.normals.data(), nv, w, s.rhs.data(), s.mu.data());
  for (int a = 0; a < w; ++a) s.mu(a) *= s.norms(a);
  s.mu_size = w;
  return s.Pg.norm();
}

}  // namespace

int eigen(const double* M, int r, int nv, Space& s) {
  for (int i = 0; i < r; ++i)
    for (int j = 0; j <= i; ++j) s.G(i, j) = s.G(j, i) = dot(M + static_cast<long>(i) * nv, M + static_cast<long>(j) * nv, nv);
  if (r == 0) return 0;
  if (!s.G.topLeftCorner(r, r).allFinite()) {  // huge rows: no decomposition (Python's eigh raises)
    s.overflow = true;
    s.eig_values.head(r).setZero();
    s.eig_vectors.topLeftCorner(r, r).setIdentity();
    return 0;
  }
  if (r <= factor::kSmallLevel) {
    factor::SmallGram work;
    decompose(s.G, r, s, work);
  } else {
    s.big.compute(s.G.topLeftCorner(r, r));
    s.eig_values.head(r) = s.big.eigenvalues();
    s.eig_vectors.topLeftCorner(r, r) = s.big.eigenvectors();
  }
  const double largest = s.eig_values(r - 1);
  int rank = 0;
  for (int i = 0; i < r; ++i) rank += s.eig_values(i) > kRankTolerance * std::max(1.0, largest);
  return rank;
}

void subtract_row_space(const double* M, int r, Matrix& P, Space& s) {
  const int nv = s.nv;
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
  factor::subtract_gram(P, Wt);
}

double smallest_singular_value(const double* M, int r, int nv, Space& s, int& rank) {
  rank = eigen(M, r, nv, s);
  if (r == 0) return kInf;
  return rank == r ? std::sqrt(s.eig_values(0)) : 0.0;
}

int solve_level(const Rows& rows, const Matrix& P_in, double lam2, int cap, Space& s, bool& capped) {
  const int nv = s.nv, m = rows.m;
  const RowMatrixMap A(rows.A, m, nv);
  const auto N = s.N.topRows(s.hard);
  Vector& v = s.v;
  s.v_prev = v;
  const bool anchored = lam2 > 0.0;
  s.value.head(m).noalias() = A * v;
  double tol = kBoundTolerance * size_of(rows.upper, m, size_of(rows.lower, m, size_of(s.value.data(), m, 1.0)));
  for (int i = 0; i < m; ++i) {
    const double x = s.value(i);
    s.soft[i] = !rows.equal(i) && (x > rows.upper[i] + tol || x < rows.lower[i] - tol);
    if (s.soft[i]) s.aim(i) = x > rows.upper[i] ? rows.upper[i] : rows.lower[i];
  }
  s.hard_value.head(s.hard).noalias() = N * v;
  // the working set the level above ended with (s.working as it left it), then the other rows on
  // their bound, each within its own rounding allowance (a huge bound elsewhere does not widen it)
  const int carried = static_cast<int>(s.working.size());
  for (int j = 0; j < s.hard; ++j)
    if (s.hard_value(j) >= s.h(j) - kBoundTolerance * std::max({1.0, std::abs(s.hard_value(j)), std::abs(s.h(j))}) &&
        std::find(s.working.begin(), s.working.begin() + carried, j) == s.working.begin() + carried)
      s.working.push_back(j);
  int changes = 0;
  capped = false;
  s.mu_size = -1;
  bool face_known = false;  // s.P_W is the face of s.working (see below)
  while (true) {
    // the spec forms the face anew at every iteration; here only after a release: an entering or
    // leaving soft row leaves it as it was, and a hard row held at the end of the working set is
    // one more restriction of it, the same operations in the same order (the same bits)
    if (!face_known) face(P_in, s);
    face_known = true;
    s.chosen.clear();  // the equality rows, then the soft ones, each in order
    for (int i = 0; i < m; ++i)
      if (rows.equal(i)) s.chosen.push_back(i);
    for (int i = 0; i < m; ++i)
      if (s.soft[i]) s.chosen.push_back(i);
    const int r = static_cast<int>(s.chosen.size());
    for (int a = 0; a < r; ++a) {
      const int i = s.chosen[a];
      s.J.row(a) = A.row(i);
      s.t(a) = rows.equal(i) ? rows.lower[i] : s.aim(i);
    }
    auto J = s.J.topRows(r);
    auto M = s.M.topRows(r);
    if (rows.column) {  // identity rows (c e_j^T): J P_W's rows are c times P_W's (the same bits)
      for (int a = 0; a < r; ++a) M.row(a) = rows.scale * s.P_W.row(rows.column[s.chosen[a]]);
    } else {
      M.noalias() = J * s.P_W;
    }
    if (anchored) {  // (products one at a time, into the buffers: no temporaries)
      s.Pg = v - s.v_prev;
      s.offset.noalias() = s.P_W * s.Pg;
    } else {
      s.offset.setZero();
    }
    s.c.head(r) = s.t.head(r);
    s.c.head(r).noalias() -= J * v;
    s.c.head(r).noalias() += M * s.offset;
    damped_step(r, lam2, s);
    s.delta -= s.offset;
    s.value.head(m).noalias() = A * v;
    s.rate.head(m).noalias() = A * s.delta;
    s.hard_value.head(s.hard).noalias() = N * v;
    s.hard_rate.head(s.hard).noalias() = N * s.delta;
    const Event e = first_event(rows, s);
    if (e.what == Event::kNone) {
      v += s.delta;
      s.mu_size = -1;
      if (s.working.empty()) break;
      s.x.head(r).noalias() = J * v;
      s.x.head(r) -= s.t.head(r);
      s.gradient.noalias() = J.transpose() * s.x.head(r);
      s.gradient += lam2 * (v - s.v_prev);
      const double size = multipliers(P_in, s);
      int worst = 0;
      for (int a = 1; a < s.mu_size; ++a)
        if (s.mu(a) < s.mu(worst)) worst = a;
      if (s.mu(worst) >= -kMultiplierTolerance * std::max(1.0, size)) break;
      if (changes >= cap) {
        capped = true;
        break;
      }
      s.working.erase(s.working.begin() + worst);
      face_known = false;
      ++changes;
      continue;
    }
    v += e.alpha * s.delta;
    if (e.what == Event::kHard) {  // its pivot passed the test above: restrict keeps it
      if (restrict(s.P_W, s.N.row(e.which).data(), s)) s.working.push_back(e.which);
    } else if (e.what == Event::kEnter) {
      s.soft[e.which] = 1;
      s.aim(e.which) = e.bound;
    } else {
      s.soft[e.which] = 0;
    }
    if (++changes >= cap) {
      capped = true;
      break;
    }
  }
  return changes;
}

}  // namespace lex
}  // namespace reljac

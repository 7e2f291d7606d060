// The dense kernels of the compiled SNS solver at a level's sizes (a few rows, nv tens of columns):
// axpys, M = A P, the Gram matrix M M^T and its Cholesky factor and solves, as plain loops (fewer
// instructions than Eigen's expressions on dynamic blocks there). Used by hierarchy_factor.hpp.
#pragma once

#include <algorithm>
#include <cmath>

#include "hierarchy.hpp"

namespace reljac {
namespace factor {

// y += alpha x over n contiguous entries (the solver's short vectors: a plain loop the compiler
// vectorizes, without the set-up of an Eigen expression on dynamic blocks).
inline void axpy(double* __restrict y, const double* __restrict x, double alpha, Eigen::Index n) {
  for (Eigen::Index i = 0; i < n; ++i) y[i] += alpha * x[i];
}

// Up to four axpys into one y in one pass: y[i] = (((y[i] + a0 x0[i]) + a1 x1[i]) + ...), the
// same operations in the same order as the axpys one after the other (the same bits), with y
// loaded and stored once and one loop's set-up for all of them (on the solver's short vectors,
// the set-up and y's traffic were most of an axpy's instructions). The x's must not overlap y.
class Axpys {
 public:
  Axpys(double* y, Eigen::Index n) : y_(y), n_(n) {}
  ~Axpys() {
    if (count_) flush();
  }
  Axpys(const Axpys&) = delete;
  Axpys& operator=(const Axpys&) = delete;
  void add(const double* x, double alpha) {  // y += alpha x, after those added before
    x_[count_] = x;
    a_[count_] = alpha;
    if (++count_ == 4) flush();
  }
  __attribute__((always_inline)) void flush() {  // (inline: a call per pass cost more than it saved)
    double* __restrict y = y_;
    const Eigen::Index n = n_;
    const double a0 = a_[0], a1 = a_[1], a2 = a_[2], a3 = a_[3];
    const double *__restrict x0 = x_[0], *__restrict x1 = x_[1], *__restrict x2 = x_[2], *__restrict x3 = x_[3];
    switch (count_) {
      case 4:
        for (Eigen::Index i = 0; i < n; ++i) y[i] = y[i] + a0 * x0[i] + a1 * x1[i] + a2 * x2[i] + a3 * x3[i];
        break;
      case 3:
        for (Eigen::Index i = 0; i < n; ++i) y[i] = y[i] + a0 * x0[i] + a1 * x1[i] + a2 * x2[i];
        break;
      case 2:
        for (Eigen::Index i = 0; i < n; ++i) y[i] = y[i] + a0 * x0[i] + a1 * x1[i];
        break;
      case 1:
        axpy(y, x0, a0, n);
        break;
      default:
        break;
    }
    count_ = 0;
  }

 private:
  double* y_;
  Eigen::Index n_;
  const double* x_[4] = {nullptr, nullptr, nullptr, nullptr};
  double a_[4] = {0.0, 0.0, 0.0, 0.0};
  int count_ = 0;
};

// P = the n x n identity: zeros, then the diagonal (Eigen's setIdentity tests every entry for the
// diagonal: a third of a bounded solve's own set-up time on Talos).
inline void set_identity(Matrix& P, Eigen::Index n) {
  P.setZero(n, n);
  P.diagonal().setOnes();
}

// M = A P for A (rows x n, row-major) and an exactly symmetric P (n x n): row i of M is the sum of
// A_ij P_j over the columns j of P (contiguous), skipping A's zeros (joints a task does not move).
inline void times_symmetric(const double* A, Eigen::Index rows, const Matrix& P, RowMatrix& M) {
  const Eigen::Index n = P.rows();
  M.topRows(rows).setZero();  // (M may have room for more rows: only these are written)
  for (Eigen::Index i = 0; i < rows; ++i) {
    Axpys m(M.data() + i * n, n);
    const double* a = A + i * n;
    for (Eigen::Index j = 0; j < n; ++j)
      if (a[j] != 0.0) m.add(P.data() + j * n, a[j]);
  }
}

// out = P x for P (n x n, column-major) and x (n), x and out apart: the columns of x's nonzeros
// added in order, four at a time (Axpys; about half the instructions of Eigen's dynamic-size
// matrix-vector product at a level's sizes).
inline void times_vector(const Matrix& P, const double* x, double* out) {
  const Eigen::Index n = P.rows();
  std::fill(out, out + n, 0.0);
  Axpys sum(out, n);
  for (Eigen::Index j = 0; j < n; ++j)
    if (x[j] != 0.0) sum.add(P.data() + j * n, x[j]);
}

// sum a_k b_k over n entries, in two interleaved sums (even and odd k, which the compiler keeps in
// one SIMD register): a third of the instructions of Eigen's dot on rows of dynamic length.
inline double dot(const double* a, const double* b, Eigen::Index n) {
  double even = 0.0, odd = 0.0;
  Eigen::Index k = 0;
  for (; k + 1 < n; k += 2) {
    even += a[k] * b[k];
    odd += a[k + 1] * b[k + 1];
  }
  if (k < n) even += a[k] * b[k];
  return even + odd;
}

// G = M M^T in its lower triangle (the upper one is not read: LLT and the eigen-solver read the
// lower): dot products of M's contiguous rows (fewer instructions than Eigen's blocked products
// at these sizes: a level has a few rows, nv tens of columns), each by dot above.
inline void gram(const RowMatrix& M, Matrix& G) {
  const Eigen::Index m = M.rows(), n = M.cols();
  const double* rows = M.data();
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j <= i; ++j) G(i, j) = dot(rows + i * n, rows + j * n, n);
}

// The Cholesky factor L (G = L L^T) of the symmetric matrix whose lower triangle is A's, in place
// into that lower triangle (the strict upper one is neither read nor written): Eigen's LLT's
// unblocked algorithm, column by column, as scalar loops (a third of its instructions at a level's
// sizes, m <= 12). False where a pivot is not positive (x <= 0: where LLT reports NumericalIssue).
// sum_{j < count} A(i, j) A(k, j), in two interleaved sums (two chains of additions, not one).
template <typename Square>
inline double dot_of_rows(const Square& A, Eigen::Index i, Eigen::Index k, Eigen::Index count) {
  double even = 0.0, odd = 0.0;
  Eigen::Index j = 0;
  for (; j + 1 < count; j += 2) {
    even += A(i, j) * A(k, j);
    odd += A(i, j + 1) * A(k, j + 1);
  }
  if (j < count) even += A(i, j) * A(k, j);
  return even + odd;
}

template <typename Square>
inline bool cholesky_in_place(Square& A) {
  const Eigen::Index n = A.rows();
  for (Eigen::Index k = 0; k < n; ++k) {
    double x = A(k, k) - dot_of_rows(A, k, k, k);
    if (x <= 0.0) return false;
    const double d = std::sqrt(x);
    A(k, k) = d;
    const double inverse = 1.0 / d;  // (one division per column, not one per entry)
    for (Eigen::Index i = k + 1; i < n; ++i) A(i, k) = (A(i, k) - dot_of_rows(A, i, k, k)) * inverse;
  }
  return true;
}

// x <- (L L^T)^-1 x, L in the lower triangle of `factor` (cholesky_in_place), n <= kMaxSolve
// (larger: by divisions). The diagonal's reciprocals first (divisions that do not wait on one
// another), the substitutions by products: no division on their chain.
constexpr int kMaxSolve = 64;
template <typename Square, typename Vec>
inline void cholesky_solve_in_place(const Square& factor, Vec& x) {
  const Eigen::Index n = factor.rows();
  double inverse[kMaxSolve];
  const bool small = n <= kMaxSolve;
  for (Eigen::Index i = 0; i < n && small; ++i) inverse[i] = 1.0 / factor(i, i);
  for (Eigen::Index i = 0; i < n; ++i) {  // L y = x
    double y = x(i);
    for (Eigen::Index j = 0; j < i; ++j) y -= factor(i, j) * x(j);
    x(i) = small ? y * inverse[i] : y / factor(i, i);
  }
  for (Eigen::Index i = n - 1; i >= 0; --i) {  // L^T x = y
    double y = x(i);
    for (Eigen::Index j = i + 1; j < n; ++j) y -= factor(j, i) * x(j);
    x(i) = small ? y * inverse[i] : y / factor(i, i);
  }
}

}  // namespace factor
}  // namespace reljac

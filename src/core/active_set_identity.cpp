// Levels of identity rows in the compiled inequality hierarchy: whether a posture leaves a
// direction free (identity_leaves_no_freedom), the least-norm fill below the last level
// (least_norm), and the damped step of such rows (a posture: row a is c e_j^T, j = column[chosen[a]])
// in the compiled inequality hierarchy (see active_set_gram.hpp), in joint space instead of on the
// r x r Gram matrix: the same step as the eigen path (Python's damped_step) wherever that keeps
// every nonzero eigenvalue, computed on the few joints the level's rows leave out.
//
// With M = c S P_W (S: the chosen rows of the identity, P_W the face, an orthogonal projector) and
// D = S^T S, the columns the rows leave out U (|U| = nv - r, E their columns of the identity):
//   M^T M = c^2 P_W D P_W = c^2 (P_W - Y Y^T),   Y = P_W E   (Y^T Y = T = P_W[U, U]),
// so the nonzero eigenvalues of G = M M^T are c^2 (1 - t) for the eigenvalues t of T, and c^2.
// When every c^2 (1 - t) is far above the rank rule's cut, the eigen path keeps them all, and its
// step M^T (G + lam2 I)^-1 c_r is (M^T M + lam2 I)^-1 g on range(P_W), g = M^T c_r = c P_W S^T c_r,
// which the Woodbury identity gives from a |U| x |U| matrix K = (c^2 + lam2) I - c^2 T:
//   delta = (g + c^2 Y K^-1 g_U) / (c^2 + lam2)        (Y^T g = g_U: g is in range(P_W)).
// Talos' posture (32 rows on 38 joints): a 6 x 6 Cholesky factor instead of the 32 x 32 Gram
// matrix's pivoted one and its step.
#include <algorithm>
#include <cmath>

#include "active_set_face.hpp"
#include "active_set_gram.hpp"

namespace reljac {
namespace lex {

namespace {

// The face's entry (a, b) and products P_W x, on s.P_W formed, or on P_in and its restrictions
// kept implicit (Space::face_Pn: P_W = P_in - sum_k Pn_k Pn_k^T / pivot_k).
struct Face {
  const Matrix* P_in;  // null: s.P_W formed
  Space& s;
  double entry(int a, int b) const {
    if (!P_in) return s.P_W(std::max(a, b), std::min(a, b));
    double x = s.P_identity ? (a == b ? 1.0 : 0.0) : (*P_in)(std::max(a, b), std::min(a, b));
    for (int k = 0; k < s.face_rows; ++k) x -= s.face_Pn(a, k) * s.face_Pn(b, k) * s.face_scale(k);
    return x;
  }
  void times(const double* x, double* out) const { times_W(P_in, x, out, s); }
};

}  // namespace

bool identity_damped_step(const Rows& rows, int r, double lam2, Space& s, const Matrix* P_in) {
  const int nv = s.nv, left_out = nv - r;
  // undamped only where the rows hold every joint: then M^T M = c^2 P_W, every nonzero eigenvalue c^2
  if (!(lam2 > 0.0 || (lam2 == 0.0 && left_out == 0)) || r == 0 || left_out < 0 || left_out > kIdentityLeftOut)
    return false;
  const Face face{P_in, s};
  const double c = rows.scale, c2 = c * c;
  // the rank rule cuts below kRankTolerance max(1, largest), largest <= c^2: taken only when every
  // eigenvalue is kIdentityFloor (1e-6) of that or more, far above the cut, and 1 - t far above
  // the rounding of P_W's entries, which T reads (their 1e-16 is then 1e-10 of it at most)
  const double floor = kIdentityFloor * std::max(1.0, c2);
  if (!std::isfinite(c2) || !(c2 > floor)) return false;
  Vector& b = s.rhs;  // S^T c_r (free here: the multipliers fill it after the step)
  b.head(nv).setZero();
  Vector& chosen = s.Pn_again;  // 1 on the rows' joints (free here: restrict's)
  chosen.head(nv).setZero();
  for (int a = 0; a < r; ++a) {
    const int j = rows.column[s.chosen[a]];
    if (chosen(j) != 0.0) return false;  // two rows on one joint: not c S with S a selection
    chosen(j) = 1.0;
    b(j) = c * s.c(a);
  }
  int out[kIdentityLeftOut];
  for (int j = 0, k = 0; j < nv; ++j)
    if (chosen(j) == 0.0) out[k++] = j;
  using Small = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kIdentityLeftOut, kIdentityLeftOut>;
  using SmallVector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kIdentityLeftOut, 1>;
  Small test(left_out, left_out), K(left_out, left_out);
  for (int i = 0; i < left_out; ++i)
    for (int k = 0; k <= i; ++k) {
      const double t = face.entry(out[i], out[k]);
      test(i, k) = (i == k ? c2 - floor : 0.0) - c2 * t;
      K(i, k) = (i == k ? c2 + lam2 : 0.0) - c2 * t;
    }
  // c^2 (I - T) - floor I positive definite: every c^2 (1 - t) above the floor (NaN fails)
  if (!factor::cholesky_in_place(test) || !factor::cholesky_in_place(K)) return false;
  face.times(b.data(), s.delta.data());  // g = c P_W S^T c_r
  SmallVector y(left_out);
  for (int i = 0; i < left_out; ++i) y(i) = s.delta(out[i]);
  factor::cholesky_solve_in_place(K, y);
  b.head(nv).setZero();  // E y
  for (int i = 0; i < left_out; ++i) b(out[i]) = y(i);
  face.times(b.data(), s.Pn.data());  // Y y = P_W E y
  s.delta += c2 * s.Pn;
  s.delta /= c2 + lam2;
  return true;
}

// (active_set_gram.hpp)
void least_norm(const Matrix& P, int cap, Space& s) {
  s.new_level();
  const Rows fill{s.fill_A.data(), s.nv, s.fill_zero.data(), s.fill_zero.data(), 0.0, s.fill_column.data(), 1.0};
  bool capped = false;
  solve_level(fill, P, 0.0, cap, s, capped, false);
}

// (active_set_gram.hpp)
bool identity_leaves_no_freedom(const Rows& rows, const Matrix& P_in, Space& s) {
  const int nv = s.nv, left_out = nv - rows.m;
  if (!rows.column || s.P_identity || left_out < 0 || left_out > kIdentityLeftOut) return false;
  for (int i = 0; i < rows.m; ++i)
    if (!rows.equal(i)) return false;
  Vector& held = s.Pn_again;  // 1 on the rows' joints (free here: restrict's)
  held.head(nv).setZero();
  for (int i = 0; i < rows.m; ++i) held(rows.column[i]) += 1.0;
  for (int j = 0; j < nv; ++j)
    if (held(j) > 1.0) return false;  // two rows on one joint
  int out[kIdentityLeftOut];
  for (int j = 0, k = 0; j < nv; ++j)
    if (held(j) == 0.0) out[k++] = j;
  // every nonzero eigenvalue of the rows' c S P_in Gram matrix, c^2 (1 - t) for t those of T =
  // P_in[U, U] and c^2, above kIdentityFloor max(1, c^2) (far above the rank rule's cut, where the
  // specification's row space keeps them all: a posture of weight 1e-7 fixes nothing there)
  const double c2 = rows.scale * rows.scale, floor = kIdentityFloor * std::max(1.0, c2);
  if (!std::isfinite(c2) || !(c2 > floor)) return false;
  using Small = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kIdentityLeftOut, kIdentityLeftOut>;
  Small test(left_out, left_out);
  for (int i = 0; i < left_out; ++i)
    for (int j = 0; j <= i; ++j)
      test(i, j) = (i == j ? c2 - floor : 0.0) - c2 * P_in(std::max(out[i], out[j]), std::min(out[i], out[j]));
  return factor::cholesky_in_place(test);
}

// (active_set_gram.hpp) model_step's for damped identity rows in the face (s.P_W, or P_in and its restrictions kept
// implicit when `P_in` is given), where identity_damped_step applies (else false, s.delta and s.c
// undefined): c = t - J v + M offset (M offset = c (P_W offset)_j = c offset_j, offset in the
// face), the step, less the offset, in the face.
bool identity_step(const Rows& rows, int r, double lam2, Space& s, const Matrix* P_in) {
  offset_in_face(P_in, s);
  for (int a = 0; a < r; ++a) {
    const int j = rows.column[s.chosen[a]];
    s.c(a) = s.t(a) - rows.scale * s.v(j) + rows.scale * s.offset(j);
  }
  if (!identity_damped_step(rows, r, lam2, s, P_in)) return false;
  if (P_in) return true;  // (a guess: the offset is 0, and the step, two products by P_W, is in the face)
  s.delta -= s.offset;
  times_W(P_in, s.delta.data(), s.Pn.data(), s);  // projected once more onto the face
  s.delta = s.Pn;
  return true;
}

}  // namespace lex
}  // namespace reljac

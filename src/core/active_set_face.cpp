// The face of a working set in the compiled inequality hierarchy (see active_set_face.hpp): the
// restrictions of the projector, formed (s.P_W) or kept implicit (a warm start's guess).
#include <algorithm>

#include "active_set_face.hpp"

namespace reljac {
namespace lex {

// P becomes the projector onto {x in range(P): n^T x = 0} by one Gram-Schmidt step, P -= u u^T
// with u = P n / |P n| (Python's face: the pivot is |P n|^2, and P n is projected twice where it
// is below kReorthogonalize |n|^2); false (P unchanged) when n has no component left in range(P).
// `move`: s.v moves first onto the row's bound along P n (Python's face with v).
bool restrict(Matrix& P, int j, Space& s, bool move) {
  const int nv = static_cast<int>(P.rows());
  const double* n = s.N.row(j).data();
  times_normal(P, j, s, s.Pn, &P == &s.P_W && s.P_W_is_P_in && s.P_identity);
  double pivot = dot(s.Pn.data(), s.Pn.data(), nv);
  const double size = dot(n, n, nv);
  if (pivot < kPivotTolerance * std::max(1.0, size)) return false;
  if (pivot < kReorthogonalize * size) {
    factor::times_vector(P, s.Pn.data(), s.Pn_again.data());
    s.Pn.swap(s.Pn_again);
    pivot = dot(s.Pn.data(), s.Pn.data(), nv);
  }
  if (move) factor::axpy(s.v.data(), s.Pn.data(), (s.h(j) - dot(n, s.v.data(), nv)) / dot(n, s.Pn.data(), nv), nv);
  if (&P == &s.P_W && s.face_rows >= 0) {  // kept for model_step (Space::face_Pn; -1: more than its room)
    if (s.face_rows < nv) {
      s.face_Pn.col(s.face_rows) = s.Pn;
      s.face_scale(s.face_rows++) = 1.0 / pivot;
    } else {
      s.face_rows = -1;
    }
  }
  for (int b = 0; b < nv; ++b) {  // P -= Pn (Pn / pivot)^T, column by column
    const double scale = s.Pn(b) / pivot;
    if (scale != 0.0) factor::axpy(P.data() + b * nv, s.Pn.data(), -scale, nv);
  }
  return true;
}

// out = P_W x (x and out apart) for the face kept as P_in and its restrictions (Space::face_Pn:
// P_W = P_in - sum_k Pn_k Pn_k^T / pivot_k, equal to restrict's product up to rounding), P_W not formed.
void times_face(const Matrix& P_in, const double* x, double* out, Space& s) {
  const int nv = s.nv;
  if (s.P_identity)
    std::copy(x, x + nv, out);
  else
    factor::times_vector(P_in, x, out);
  for (int k = 0; k < s.face_rows; ++k) {
    const double* pn = s.face_Pn.col(k).data();
    factor::axpy(out, pn, -dot(pn, x, nv) * s.face_scale(k), nv);
  }
}

void times_W(const Matrix* P_in, const double* x, double* out, Space& s) {
  if (P_in)
    times_face(*P_in, x, out, s);
  else
    factor::times_vector(s.P_W, x, out);
}

// (active_set_face.hpp) s.offset = P_W (v - v_prev), the damped model's anchor in the face. For a guess (the face kept
// implicit: `P_in` given) it is 0: v moved from v_prev only along the face's restrictions (onto the
// guessed rows' bounds: face_kept_implicit), which P_W takes out; the specification's product is
// that 0's rounding.
void offset_in_face(const Matrix* P_in, Space& s) {
  if (P_in) {
    s.offset.setZero();
    return;
  }
  s.Pg = s.v - s.v_prev;
  times_W(P_in, s.Pg.data(), s.offset.data(), s);
}

// face (below) with P_W kept as P_in and the restrictions (Space::face_Pn), not formed: a warm
// start's guess (guessed), whose model step needs P_W only in products (times_face). The same
// restrictions as restrict's, P_W n by times_face; fewer than nv rows in `working` (face_Pn's room).
void face_kept_implicit(const Matrix& P_in, Space& s, std::vector<int>& working, bool move) {
  const int nv = s.nv;
  s.P_W_is_P_in = true;
  s.face_rows = 0;
  s.kept.clear();
  for (int j : working) {
    const double* n = s.N.row(j).data();
    times_face(P_in, n, s.Pn.data(), s);
    double pivot = dot(s.Pn.data(), s.Pn.data(), nv);
    const double size = dot(n, n, nv);
    if (pivot < kPivotTolerance * std::max(1.0, size)) continue;
    if (pivot < kReorthogonalize * size) {
      times_face(P_in, s.Pn.data(), s.Pn_again.data(), s);
      s.Pn.swap(s.Pn_again);
      pivot = dot(s.Pn.data(), s.Pn.data(), nv);
    }
    if (move) factor::axpy(s.v.data(), s.Pn.data(), (s.h(j) - dot(n, s.v.data(), nv)) / dot(n, s.Pn.data(), nv), nv);
    s.face_Pn.col(s.face_rows) = s.Pn;
    s.face_scale(s.face_rows++) = 1.0 / pivot;
    s.kept.push_back(j);
    s.P_W_is_P_in = false;
  }
  working.swap(s.kept);
}

// s.P_W: range(P_in) with the rows of `working` (s.working or s.guess) held; a row dependent on
// those before it is dropped. `move`: s.v moves onto the kept rows' bounds (Python's face with v).
void face(const Matrix& P_in, Space& s, std::vector<int>& working, bool move) {
  s.P_W = P_in;
  s.P_W_is_P_in = true;
  s.face_rows = 0;
  s.kept.clear();
  for (int j : working)
    if (restrict(s.P_W, j, s, move)) {
      s.kept.push_back(j);
      s.P_W_is_P_in = false;
    }
  working.swap(s.kept);
}

}  // namespace lex
}  // namespace reljac

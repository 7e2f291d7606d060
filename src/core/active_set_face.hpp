// The face of a working set in the compiled inequality hierarchy (see active_set.hpp): range(P_in)
// with hard rows held, each one Gram-Schmidt restriction of the projector (Python's face), formed
// as s.P_W or kept implicit as P_in and the restrictions (a warm start's guess). Private to
// active_set.cpp and active_set_face.cpp.
#pragma once

#include <vector>

#include "active_set.hpp"

namespace reljac {
namespace lex {

// P times hard row j's normal into `out` (a unit row: c times P's column, the same bits;
// `identity`: P is exactly the identity, the normal itself).
template <typename Out>
inline void times_normal(const Matrix& P, int j, Space& s, Out&& out, bool identity) {
  if (identity)
    out = s.N.row(j).transpose();
  else if (s.unit_column[j] >= 0)
    out = s.unit_coef(j) * P.col(s.unit_column[j]);
  else
    factor::times_vector(P, s.N.row(j).data(), out.data());
}

// P becomes the projector onto {x in range(P): n^T x = 0} by one Gram-Schmidt step, P -= u u^T
// with u = P n / |P n|; false (P unchanged) when n has no component left in range(P). `move`: s.v
// moves first onto the row's bound along P n (Python's face with v).
bool restrict(Matrix& P, int j, Space& s, bool move = false);

// out = P_W x (x and out apart) for the face kept as P_in and its restrictions (Space::face_Pn).
void times_face(const Matrix& P_in, const double* x, double* out, Space& s);

// out = P_W x (x and out apart): times_face when the face is kept implicit (`P_in` given), else
// by s.P_W formed.
void times_W(const Matrix* P_in, const double* x, double* out, Space& s);

// s.offset = P_W (v - v_prev), model_step's damped anchor in the face (times_W); 0 for a guess
// (`P_in` given: v moved from v_prev only along the restrictions, which P_W takes out).
void offset_in_face(const Matrix* P_in, Space& s);

// face with P_W kept as P_in and the restrictions, not formed; fewer than nv rows in `working`.
void face_kept_implicit(const Matrix& P_in, Space& s, std::vector<int>& working, bool move);

// s.P_W: range(P_in) with the rows of `working` (s.working or s.guess) held; a row dependent on
// those before it is dropped. `move`: s.v moves onto the kept rows' bounds (Python's face with v).
void face(const Matrix& P_in, Space& s, std::vector<int>& working, bool move = false);

}  // namespace lex
}  // namespace reljac

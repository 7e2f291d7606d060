// The Gram-matrix helpers the compiled inequality hierarchy's algebra shares between its files
// (active_set_gram.cpp: Gram matrices, their tests and decompositions; active_set_pivoted.cpp:
// rank-deficient ones certified without a decomposition; active_set_step.cpp: the damped step and
// the multipliers' least squares; active_set_identity.cpp: a damped level of identity rows stepped
// in joint space; active_set_row_space.cpp: the row space a level leaves below).
// Private to those files; what inequality.cpp and active_set.cpp call is in active_set.hpp.
#pragma once

#include <vector>

#include "active_set.hpp"

namespace reljac {
namespace lex {

// s.G = M M^T (r x r, both triangles) for M (r rows of nv, row-major): each entry in two
// interleaved sums (factor::gram's arithmetic); false when an entry is inf or NaN. s.AP's (kept by
// smallest_singular_value) copied where M is s.AP (its leading r x r block: a prefix of its rows,
// the same bits), or `of_AP`: a copy of all of it.
bool gram(const double* M, int r, int nv, Space& s, bool of_AP = false);

// eigen (active_set.hpp) on s.G, already formed as M M^T (gram): the same
// rank, decomposition and pinning; s.overflow set where G has an inf or NaN entry.
int eigen_of_gram(int r, Space& s, bool pin = false, bool vectors = true);

// damped_step (active_set.hpp) on s.G, already formed as M M^T (the caller checks nothing: an inf
// or NaN entry takes the eigen path, which sets s.overflow, as gram's would). `cleared`: clear_of(r,
// 0.0, s) is known to pass on this s.G (not tested again).
void damped_step_on_gram(int r, double lam2, Space& s, bool deficient = false, bool cleared = false);

// True when every eigenvalue of s.G's leading r x r block is above
// max(floor, kRankTolerance x max(1, its trace)): G - shift I has a Cholesky factor (in s.L).
bool clear_of(int r, double floor, Space& s);

// s.L's leading r x r block: the Cholesky factor of s.G + lam2 I (G positive definite: clear_of).
void factor_damped(int r, double lam2, Space& s);

// s.G = M M^T for model_step's M, A P_in less the face's restrictions (their A Pn_k in
// s.face_along), downdated from the level's kept A P_in A^T (active_set_gram.cpp); false where a row
// loses more than all but 1/16 of its squared norm to the restrictions (then form it from M).
bool gram_downdated(int r, Space& s);

// True where model_step's undamped-anchor step s.delta = M^T y (the Cholesky path: s.step_y) cannot
// leave its face by more than rounding that a projection would correct (active_set_step.cpp).
bool within_face(const Rows& rows, int r, const Space& s);

// s.eig_values (and s.eig_vectors when `vectors`) of s.G's leading r x r block.
void decompose(int r, Space& s, bool vectors);

// Rows 0..k-1 of Wt (k x nv, row-major) from `start` on made orthonormal to the rows before them
// and to one another: modified Gram-Schmidt twice, in order (Python's _orthonormalized).
void orthonormalize(double* Wt, int k, int nv, int start = 0);

// M (r x nv, row-major, r > nv: more rows than joints) reduced to R of M = Q R (nv x nv, row-major),
// which has M's row space and Gram eigenvalues; with `c` (r entries), its first nv become Q^T c's,
// so |M u - c|^2 = |R u - c_nv|^2 + what no u changes (Python's np.linalg.qr in active_set_algebra).
// Allocates: such levels only (active_set_row_space.cpp)
RowMatrix upper_factor(const double* M, int r, int nv, double* c = nullptr);

// Python's fine_directions, after eigen(M) gave `rank` of r: the rows' basis W^T in s.Wt_room's
// first `rank` rows, M2 = M (I - W W^T) in s.fine; the cut on M2 M2^T's eigenvalues, or -1.
double fine_directions(const double* M, int r, int rank, Space& s);

// s.G's leading r x r block of rank k < r, certified without a decomposition (Cholesky with
// diagonal pivoting into s.F / s.pivots; active_set_pivoted.cpp); false: full rank, or no certificate.
bool pivoted_rank(int r, Space& s, int& k);

// True when the pivot rows' Gram matrix G11 (s.G at s.pivots' first k, as pivoted_rank left them)
// less shift I has a Cholesky factor (in s.L): every eigenvalue of G11 above `shift`.
bool pivot_rows_clear_of(int k, double shift, Space& s);

// s.delta = M^T y for a Gram matrix of rank k certified by pivoted_rank (active_set_pivoted.cpp).
void pivoted_step(int r, int k, double lam2, Space& s);

// The damped step (lam2 > 0, or 0 where the rows hold every joint) of r identity rows (rows.column, s.chosen; s.c their r aims less J v),
// in the face (s.P_W, or P_in and its restrictions kept implicit when `P_in` is given), into
// s.delta, on the nv - r joints they leave out (active_set_identity.cpp): the eigen path's step
// where it keeps every nonzero eigenvalue. False, s.delta undefined: more than kIdentityLeftOut
// joints left out, two rows on one joint, or an eigenvalue of M M^T below kIdentityFloor max(1, c^2)
// (then the Gram matrix's path decides). Uses s.rhs, s.Pn and s.Pn_again as scratch.
constexpr int kIdentityLeftOut = 12;
constexpr double kIdentityFloor = 1e-6;  // its eigenvalues' floor, x max(1, c^2)
bool identity_damped_step(const Rows& rows, int r, double lam2, Space& s, const Matrix* P_in = nullptr);

// model_step's step for damped identity rows (active_set_identity.cpp): c = t - J v + M offset,
// identity_damped_step, less the offset, in the face; false where that step does not apply.
bool identity_step(const Rows& rows, int r, double lam2, Space& s, const Matrix* P_in);

// True where a level of identity rows (c e_j^T), every one an equality row, leaves no direction
// of P_in free: none of range(P_in) lies on the joints the rows leave out, U, and every eigenvalue
// of the rows' Gram matrix, c^2 (1 - t) for those t of P_in[U, U] and c^2, is kIdentityFloor max(1,
// c^2) or more (a Cholesky factor; then P_in less the rows' row space is 0). False
// where that is not certain (more than kIdentityLeftOut joints left out, P_in the identity, an
// inequality row): the projector is then formed and its trace tells (inequality.cpp).
bool identity_leaves_no_freedom(const Rows& rows, const Matrix& P_in, Space& s);

// Python's inequality._least_norm: s.v moved to the velocity nearest 0 among those that keep what
// every level reached (s.v + P s inside the hard rows): an undamped level of nv identity rows
// aiming at 0 (Space::fill_A), below the last level, with at most `cap` active-set changes.
void least_norm(const Matrix& P, int cap, Space& s);

}  // namespace lex
}  // namespace reljac

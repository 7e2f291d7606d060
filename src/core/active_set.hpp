// The buffers and the one-level search of the compiled inequality hierarchy: the twin of
// reljac/ik/solvers/active_set.py (its specification: read its docstring first), private to
// inequality.cpp and active_set.cpp. Same constants, same order of decisions: the working set of
// hard rows held on their bound (saturations as projector restrictions, released by their
// multipliers), the soft active set of the level's own inequality rows, damped least squares in
// task space through the Gram matrix (the same matrix functions as the spec's eigen-decomposition:
// by Cholesky factors where the Gram matrix is clear of the rank cut, and where it is certified rank
// deficient or well conditioned as the SNS solver certifies it, hierarchy_rank.hpp, by a pivoted
// Cholesky factor or inverse iteration: active_set_gram.cpp, active_set_pivoted.cpp, active_set_step.cpp,
// active_set_row_space.cpp, their shared helpers in active_set_gram.hpp; a damped level of identity
// rows in joint space, where that is the same step: active_set_identity.cpp).
#pragma once

#include <utility>
#include <vector>

#include "hierarchy.hpp"
#include "hierarchy_row_space.hpp"

namespace reljac {
namespace lex {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMultiplierTolerance = 1e-9;  // a multiplier below -this x max(1, |P g|) releases its row
constexpr double kTrialGain = 1e-7;   // Python's TRIAL_GAIN: the tried release kept when the objective drops by this
constexpr double kReorthogonalize = 0.1;  // a face's row with |P n|^2 below this x |n|^2 is projected twice
constexpr double kOrthonormalize = 1e-4;  // subtract_row_space: a basis from eigenvalues spread wider is orthonormalized again
constexpr double kFineRank = 1e-10;  // singular values below this x the largest never count (Python's FINE_RANK)
constexpr int kMidLevel = 48;  // Gram matrices of at most this many rows decompose without allocating
using MidGram = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMidLevel, kMidLevel>;
constexpr int kCapBase = 10;                   // active-set changes per level: this + 2 (nv + hard rows + rows)
enum Kind { kJoint = 0, kRow = 1, kNoFreedom = 2, kLevelRow = 3 };  // LevelReport::limit_kind

inline int change_cap(int nv, int hard_rows, int rows) { return kCapBase + 2 * (nv + hard_rows + rows); }

struct Tag {  // what a hard row is: a joint's bound (index: velocity index), a row of C, row `index` of `level`
  int kind, index, level;
  int side = 1;  // +1 an upper bound (N_j = +a), -1 a lower one (N_j = -a): with the rest, its name across steps
  bool operator==(const Tag& o) const { return kind == o.kind && index == o.index && level == o.level && side == o.side; }
};

// The sets a level ended with at the last solve (a controller's warm start: Python's WarmStart):
// its row count (-1: none kept), its working set by name, its soft set (+1 aiming at the upper
// bound, -1 at the lower one, 0 not soft).
// A level whose guess failed waits before trying again: one solve more after each failure in a
// row, at most kMaxWait.
struct WarmLevel {
  int rows = -1;
  std::vector<Tag> working;
  std::vector<signed char> soft;
  int misses = 0, wait = 0;
  bool deficient = false;  // its A P_in was certified rank deficient (smallest_singular_value's `deficient`)
  // its rows A themselves certified dependent (an inequality level: its A P_in then not formed,
  // inequality.cpp's rows_dependent): 1 yes, 0 no, -1 not tried; after a failure it waits, as a
  // guess does (dependent_misses failures in a row: as many solves, at most kMaxWait)
  signed char rows_dependent = -1;
  int dependent_misses = 0, dependent_wait = 0;
};
constexpr int kMaxWait = 8;

// What an identity level's explicit rows (Space::identity_A, identity_column) were written for:
// its scale and mask (rows -1: not written, or written for another size).
struct IdentityRows {
  int rows = -1;
  double scale = 0.0;
  Vector mask;
  bool matches(const Level& level) const {
    return rows >= 0 && scale == level.identity_scale && mask.size() == level.mask.size() && mask == level.mask;
  }
  void keep(const Level& level, int m) {
    rows = m;
    scale = level.identity_scale;
    mask = level.mask;
  }
};

// A level's rows made explicit: lower_i <= A_i v <= upper_i, A (m x nv) row-major.
struct Rows {
  const double* A = nullptr;
  int m = 0;
  const double* lower = nullptr;
  const double* upper = nullptr;
  double extra_damping = 0.0;
  const int* column = nullptr;  // identity rows: row i is scale e_{column[i]}^T (null: general rows)
  double scale = 0.0;
  bool equal(int i) const { return lower[i] == upper[i]; }
  // out = A x (m), an identity row read as c x_j (the same value as the dense product)
  template <typename Out>
  void times(const Vector& x, int nv, Out&& out) const {
    if (column) {
      for (int i = 0; i < m; ++i) out(i) = scale * x(column[i]);
      return;
    }
    out.noalias() = RowMatrixMap(A, m, nv) * x;
  }
  // A_i x, an identity row read as c x_j (the same value as the dense product's)
  double times_row(int i, const Vector& x, int nv) const {
    return column ? scale * x(column[i]) : factor::dot(A + static_cast<long>(i) * nv, x.data(), nv);
  }
  // out = J x for J the rows `chosen` (r of them) of A, as they were copied into J (identity
  // rows: read off their columns, J not read)
  template <typename Block, typename Out>
  void times_chosen(const Block& J, const std::vector<int>& chosen, const Vector& x, Out&& out) const {
    if (column) {
      for (int a = 0; a < static_cast<int>(J.rows()); ++a) out(a) = scale * x(column[chosen[a]]);
      return;
    }
    out.noalias() = J * x;
  }
  // out = J^T y (nv) for the same J (identity rows: c y_a added at joint column[chosen[a]], in
  // order; the dense product's value, whose other terms are zeros)
  template <typename Block, typename In>
  void transpose_times_chosen(const Block& J, const std::vector<int>& chosen, const In& y, Vector& out) const {
    if (column) {
      out.setZero();
      for (int a = 0; a < static_cast<int>(J.rows()); ++a) out(column[chosen[a]]) += scale * y(a);
      return;
    }
    out.noalias() = J.transpose() * y;
  }
};

// Every buffer of solve_lexicographic, sized by the structure (nv, the levels' rows, C's room).
struct Space {
  int nv = -1, m_max = -1, room = -1, c_room = -1;
  // hard rows N v <= h (the box, C, the inequality rows levels above left inside their bounds)
  RowMatrix N;
  Vector h;
  std::vector<Tag> tags;
  std::vector<int> unit_column;  // hard row j is unit_coef(j) e_{unit_column[j]}^T when >= 0 (a joint's bound, an identity row)
  Vector unit_coef;
  int hard = 0;
  Vector v, v_prev, delta, offset, gradient, Pn, Pn_again, Pg, rhs, mu, norms;  // Pn_again: restrict's reprojection
  Matrix P, P_W, normals;  // (nv x nv)
  RowMatrix J, M;          // (m_max x nv)
  RowMatrix fine;          // (m_max x nv): M (I - W W^T), the directions the rank rule drops (active_set_row_space.cpp)
  Vector value, rate, aim, t, c, coefficients, eig_values, distance, x;  // (m_max)
  Matrix G, eig_vectors;   // (m_max x m_max)
  Matrix L;                // (m_max x m_max): a Cholesky factor (clear_of, factor_damped)
  // what the products may skip: P (the levels' projector) and P_W (the face) exactly the
  // identity (the first level, a face of no rows in it), and s.AP's Gram matrix kept in G_AP (its rows; -1: none) for the steps and the row space of an
  // equality level, which form it again
  bool P_identity = false, P_W_is_P_in = false;
  int AP_gram_rows = -1;
  bool AP_clear = false;  // G_AP passed clear_of at a floor at least the rank cut's (smallest_singular_value)
  // G_AP against the row space's floor (kOrthonormalize x its trace, subtract_row_space's test), as
  // smallest_singular_value found it for a level whose rows the levels below leave out: 1 clear
  // (and so every leading block of it, at its own trace's floor: their eigenvalues interlace), 0
  // not clear (the whole of it), -1 not known
  int AP_spread = -1;
  int AP_rank = -1;  // G_AP's rank as smallest_singular_value found it (-1: not known): more rows are dependent
  Matrix G_AP;
  // the Cholesky factor of G_AP's leading L_AP_rows x L_AP_rows block, undamped, as a step on it
  // made it (-1: none; the leading r x r block of it is that of G_AP's leading r rows, the same bits)
  Matrix L_AP;
  int L_AP_rows = -1;
  Vector Wt_room;          // (m_max x nv) row-major
  Vector crossings;        // (2 m_max): where the rows cross a bound along a step
  Vector hard_value, hard_rate;  // (room)
  std::vector<char> soft, fixed;
  std::vector<int> chosen, working, kept, violated;
  // the search's state before a doubtful release (Python's trial in solve_level)
  Vector trial_v, trial_mu, trial_aim;
  double trial_objective = 0.0;
  int trial_mu_size = -1;
  std::vector<char> trial_soft;
  std::vector<int> trial_working;
  std::vector<std::vector<int>> identity_column;  // per identity level: the velocity index of each kept row
  double last_damping = 0.0;  // lambda^2 of the last level solved (the recovery's: whether the levels are exact)
  // the last damped_step's |y| (s.delta = M^T y; both passes' where refined) per row, where it took
  // the Cholesky path (step_y_known; else not known): how far M's rounding can take the step off its face
  Vector step_y;  // (m_max)
  bool step_y_known = false;
  bool overflow = false;  // a Gram matrix with inf or NaN entries (the spec's LinAlgError): v is made NaN
  int mu_size = -1;  // -1: no multipliers computed (Python's None); kept stale as the spec keeps them
  // the level's A P_in (m x nv), its Gram matrix and their decomposition, kept by the level's
  // smallest singular value (pinned, below) for the steps and the row space that decompose the same
  // Gram matrix again (a level of equality rows: its first step and what it leaves below)
  RowMatrix AP;
  Matrix pinned_G, pinned_vectors;
  Vector pinned_values;
  int pinned_rows = -1, pinned_rank = 0;  // -1: nothing pinned
  // the levels whose report's smallest singular value was left for when it is read (their A P_in
  // full rank beyond the damping threshold: see smallest_singular_value), and their Gram matrices
  std::vector<std::pair<int, int>> pending;  // (level, rows)
  std::vector<Matrix> pending_G;
  bool pinned_has_vectors = false;  // pinned_vectors known (else decomposed at the first reuse)
  Eigen::SelfAdjointEigenSolver<MidGram> mid;  // levels of kSmallLevel to kMidLevel rows (no allocation)
  Eigen::SelfAdjointEigenSolver<Matrix> big;   // more than kMidLevel rows
  Matrix dual_G;  // (nv x nv): M^T M of a level of more rows than nv (rank_of)
  Eigen::SelfAdjointEigenSolver<Matrix> dual;  // its eigenvalues (sized nv: no allocation)
  // explicit rows of identity levels and of the recovery level
  std::vector<RowMatrix> identity_A;
  std::vector<IdentityRows> identity_built;  // per level: what identity_A and identity_column hold
  std::vector<char> box_finite;  // (2 nv) the box's finite bounds (upper, then lower) its rows were written for
  bool box_written = false;      // N's first rows hold them (false: N resized since, or never)
  std::vector<Vector> identity_lower, identity_upper;
  RowMatrix recovery_A;
  Vector recovery_lower, recovery_upper;
  RowMatrix fill_A;  // (nv x nv) the identity: the rows of the least-norm fill below the last level
  std::vector<int> fill_column;
  Vector fill_zero;  // (nv) their aims
  Vector Cv;  // (C's room): C v for violated_rows
  // the warm start: on for a controller's step (step.cpp), never for a search's levels
  bool warm_start = false;
  std::vector<WarmLevel> warm;  // per level index
  std::vector<int> guess;       // a level's guessed working set in this solve's hard rows
  bool guess_taken = false;     // the last solve_level took its guess
  Matrix F;                // (m_max x m_max): a Cholesky factor with diagonal pivoting (pivoted_rank)
  std::vector<int> pivots; // (m_max): its pivots
  Vector pivot_z;          // (m_max): its Schur complement's diagonal
  // the face as restrict made it: s.P_W = P_in - sum_k Pn_k Pn_k^T / pivot_k over the first
  // face_rows columns of face_Pn (Pn_k) and entries of face_scale (1 / pivot_k); with s.AP (the
  // level's A P_in, AP_rows rows; -1: not formed), model_step's M = A P_W without a product by P_W
  // (face_rows -1: not kept)
  Matrix face_Pn;          // (nv x nv)
  Vector face_scale;       // (nv)
  Matrix face_along;       // (m_max x nv): model_step's A Pn_k (row a of the chosen rows, column k)
  int face_rows = 0, AP_rows = -1;

  void forget_warm() {
    for (WarmLevel& w : warm) {
      w.rows = -1;
      w.misses = w.wait = 0;
      w.deficient = false;
      w.rows_dependent = -1;
      w.dependent_misses = w.dependent_wait = 0;
    }
  }

  // A new level: what the last one knew of its own rows (A P_in, its Gram matrix and factors,
  // its pinned rows) forgotten.
  void new_level() {
    pinned_rows = -1;
    AP_gram_rows = AP_rows = L_AP_rows = -1;
    AP_clear = false;
    AP_spread = AP_rank = -1;
  }

  void size(const std::vector<Level>& levels, const Constraints& cons);
  // True when the box's hard rows (N's first rows, their unit columns and tags) were written by
  // the last solve for bounds finite where cons's are: only their h is written again. Else false,
  // and cons's pattern kept (the caller writes the rows).
  bool box_rows_kept(const Constraints& cons);
  void push_hard(const double* n, double sign, double bound, Tag tag, int column = -1);
  // hard_value = N v and hard_rate = N delta over the hard rows (unit rows read directly: the same bits)
  void hard_products(bool values, bool rates);
};

// The workspace's Space (made on first use; hierarchy.cpp owns it beside the SNS buffers).
Space& lex_space(Workspace& workspace);

// Eigen-decomposition of G = M M^T (M: r x nv row-major, r <= m_max) into s.eig_values
// (ascending) and s.eig_vectors; returns the rank (the equality solver's rule). `pin`: kept as
// s.pinned_* too; a G equal to the pinned one (bit for bit) takes the pinned decomposition.
// `vectors` false (with `pin` only): the eigenvalues alone (s.eig_vectors untouched), the vectors
// left to the first reuse of the pinned Gram matrix.
int eigen(const double* M, int r, int nv, Space& s, bool pin = false, bool vectors = true);

using factor::dot;  // sum a_i b_i over n entries (small_dense.hpp)

// The rank of M (r x nv, row-major) by the rank rule, from the smaller of its Gram matrices (the same
// nonzero eigenvalues): eigen's for r <= nv (pinning nothing), else M^T M's eigenvalues (Python's
// active_set_algebra.rank: a level of many rows spanning few directions costs a decomposition of
// size nv, not r).
int rank_of(const double* M, int r, int nv, Space& s);

// s.delta = argmin |M u - c|^2 + lam2 |u|^2 (the minimum-norm one when lam2 = 0), M = s.M (r rows),
// c = s.c, on the eigenvalues of M M^T above the rank rule (Python's damped_step). `of_AP`: s.M
// is a copy of the level's s.AP (its Gram matrix kept: not formed again). `deficient`: no Cholesky
// factor of G tried (the pivoted or the eigen path decide): M is known rank deficient (more rows
// than the dimension of the levels' null space, or the level's rows dependent) or its Gram matrix
// downdated failed that test (model_step).
// `cleared`: its Gram matrix is known clear of the rank cut (clear_of passed on it: not tested again).
void damped_step(int r, double lam2, Space& s, bool of_AP = false, bool deficient = false, bool cleared = false);

// min |B x - r| by Householder QR, B (n x w) column-major in place (full column rank: the face
// kept independent rows; a vanishing pivot's unknown is 0), r (n) overwritten, x (w).
void least_squares(double* B, int n, int w, double* r, double* x);

// P -= W W^T, W an orthonormal basis of the row space of M (r x nv) (Python's row_basis: made
// orthonormal again where the kept eigenvalues spread wider than kOrthonormalize).
void subtract_row_space(const double* M, int r, Matrix& P, Space& s);

// The smallest singular value of M (r x nv), 0 when rank-deficient, inf when r = 0; and its rank
// (the decomposition pinned: see eigen; `vectors` false: its eigenvalues only, the vectors made at
// their first reuse). -1 (rank r, nothing pinned) when every squared singular value is above
// `floor` (and the rank rule: clear_of), its value left to smallest_of_gram on s.G when read.
// Below `floor`, with `vectors` false: by certified inverse iteration where it certifies full rank,
// well conditioned (factor::certified_smallest_eigenvalue, r <= factor::kSmallLevel), and 0 where a
// pivoted Cholesky factor certifies it rank deficient (pivoted_rank: the rank the eigenvalues would
// count); nothing pinned either way.
// `spread`: the level's rows are left out of the projector below (subtract_row_space): for M =
// s.AP, G is tested against the row space's floor first where it is above `floor` (s.AP_spread).
// `deficient` (in: the level's last solve certified it rank deficient; out: this one did): with
// `vectors` false, the pivoted certificate is tried first (where it holds, the tests before it
// would all fail: the same answer).
double smallest_singular_value(const double* M, int r, int nv, Space& s, double floor, int& rank, bool vectors,
                               bool spread, bool& deficient);

// The smallest singular value sqrt(lambda_min) of a Gram matrix G (r x r, a copy of s.G), the
// same bits as smallest_singular_value's eigen-decomposition would give.
double smallest_of_gram(const Matrix& G, int r, Space& s);

// Fills in the smallest singular values the last solve_lexicographic left at -1 (idempotent).
void finish_reports(std::vector<LevelReport>& reports, Space& s);

// The level's search (active_set.solve_level), started from the working set in s.working (the
// one the level above ended with), then the other rows on their bound: v (in s.v, from v_prev) at the least violation,
// s.working the working set at the end, s.mu its multipliers (s.mu_size); returns the changes,
// `capped` when the cap stopped it.
// `guessed`: first try s.guess with the soft set in s.soft / s.aim (a warm start, Python's
// _guessed): kept when optimal (0 changes, s.working the guess), else the search as above.
int solve_level(const Rows& rows, const Matrix& P_in, double lam2, int cap, Space& s, bool& capped,
                bool guessed = false);

// The tried release of a held row whose multiplier's sign is rounding's (active_set_trial.cpp: each
// function's contract there), never inlined into the search (the bounded steps keep their cost).
[[gnu::noinline, gnu::cold]] int doubtful(const Rows& rows, double norm, Space& s);
double objective(const Rows& rows, double lam2, Space& s);
[[gnu::noinline, gnu::cold]] void keep_trial(const Rows& rows, double lam2, Space& s);
[[gnu::noinline, gnu::cold]] bool undo_trial(const Rows& rows, double lam2, bool capped, Space& s);

}  // namespace lex
}  // namespace reljac

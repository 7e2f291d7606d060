// Strict task hierarchy under velocity constraints: the compiled twin of reljac/ik/solvers/hierarchy.py.
//
// Same algorithm, same constants, same order of decisions as the Python solver, which is its
// specification and its test oracle (read that module's docstring first). Levels (A_k, b_k),
// highest priority first; constraints lo <= v <= hi and C v <= d; Saturation in the Null Space
// with the null space kept as an orthogonal projector P (nv x nv) updated by rank one per
// saturation (a saturated joint's row and column set exactly to zero); each level factored in
// task space through the eigen-decomposition of its Gram matrix G = M M^T, M = A P.
#pragma once

#include <Eigen/Dense>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace reljac {

using Matrix = Eigen::MatrixXd;
using Vector = Eigen::VectorXd;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixMap = Eigen::Map<const RowMatrix>;

constexpr double kRankTolerance = 1e-12;   // eigenvalues of G below this x max(1, largest) are zero
constexpr double kBoundTolerance = 1e-12;  // slack on a bound before it counts as crossed
constexpr double kPivotTolerance = 1e-12;  // P_jj (c^T P c) below this: cannot move in what is left
constexpr double kPivotReproject = 1e-6;  // a pivot c^T P c (P_jj) below this x c^T c (1): P c taken twice
constexpr double kReachedAtOnce = 1e-6;   // a scale at most this: the level's start sits on the constraint
constexpr double kPinTolerance = 1e-9;    // a refused joint is pinned if delta crosses its bound by at most this x size
constexpr int kMaxTiePaths = 6;           // paths explored per level from ties reached at once (two rows, a joint and a row)
constexpr double kTiePathGain = 1e-6;     // a tie path's candidate is taken if it lowers the residual by this fraction
constexpr int kMaxStaleSaturations = 2;    // saturations in a row that did not lower the residual
constexpr double kMetTolerance = 1e-9;     // met when |A v - b| <= this x (1 + |b|)
constexpr double kSearchCholesky = 1e-8;   // a search's mu at least this x max(1, tr G): Cholesky of G + mu I
constexpr double kAmplified = 1e4;          // [rad or m] |A|_F |y| above this: delta = M^T y projected on range(P)

struct Level {
  const double* A = nullptr;  // (rows x nv) row-major, or nullptr: A = identity_scale diag(mask)
  Vector b;                   // (rows)
  double identity_scale = 0;  // used when A == nullptr
  Vector mask;                // (nv) 1 kept / 0 masked, or empty: all kept (identity levels only)
  double extra_damping = 0;   // added to lambda^2
  // A search's level (Step::search: extra_damping is its Levenberg-Marquardt mu): with no singular
  // damping from the policy and mu >= kSearchCholesky x max(1, tr G), a candidate's correction is
  // M^T (G + mu I)^-1 r by Cholesky, no direction cut (reljac/ik/solvers/hierarchy.py, _correction).
  bool search = false;
  // Inequality rows (issue 29): empty on an equality level, else (rows) each, lower_i <= A_i v <=
  // upper_i (+-inf: one-sided; lower_i = upper_i: an equality row; b is not read). A hierarchy
  // with a bounded level is solved by solve_lexicographic (inequality.cpp), to which
  // solve_hierarchy hands it.
  Vector lower, upper;
  bool bounded() const { return lower.size() > 0; }
  int rows() const { return static_cast<int>(b.size()); }
};

struct Constraints {
  Vector lo, hi;  // (nv)
  Matrix C;       // (k x nv), or more rows: the first `count` are the constraints
  Vector d;       // (k), or as C
  int count = -1;  // k when C and d have room for more rows (a caller's reused buffers); -1: all of C's
  int rows() const { return count < 0 ? static_cast<int>(C.rows()) : count; }
  Eigen::Block<const Matrix> used_C() const { return C.topRows(rows()); }
  Eigen::VectorBlock<const Vector> used_d() const { return d.head(rows()); }
};

struct Policy {
  double threshold = 0.02;    // sigma_min below which the singular damping starts
  double max_damping = 0.05;  // lambda_max
  int change_cap = -1;  // active-set changes per bounded level: -1 the rule (active_set.hpp), else this
  double singular_damping(double smallest) const;
};

struct LevelReport {
  double scale = 1.0;
  std::vector<int> saturated;       // velocity indices
  std::vector<int> saturated_rows;  // rows of C
  double damping = 0.0;
  double smallest = std::numeric_limits<double>::infinity();
  double residual = 0.0;
  bool met = true;
  int limit_kind = -1;   // what limited the scale: 0 a joint, 1 a row of C, 2 no freedom left, -1 none
  int limit_index = -1;  // its velocity index or row
  bool exact = true;     // no damping here nor above (the recovery included): reljac/ik/solvers/hierarchy.py's LevelReport
  // Filled in on the levels of a hierarchy with bounds (reljac/ik/solvers/inequality.py says what they
  // mean): the level's inequality rows at or beyond a bound, each row's margin to its interval,
  // active-set changes, whether the cap on them stopped the search, the (level, row) inequality
  // rows of levels above held on their bound, and limit_level (limit_kind 3: row limit_index of
  // level limit_level).
  std::vector<int> active;
  Vector margins;
  int changes = 0;
  bool capped = false;
  std::vector<std::pair<int, int>> held;
  int limit_level = -1;
};

// The buffers of solve_hierarchy (null-space projectors, level matrices, candidates, factors),
// sized by the first system it solves and again when nv, a level's rows or C's room (its rows,
// Constraints::count of them in use) change; not by the rank of a level nor by how many rows of
// C are in use or violated (recovery levels of up to 12 rows are made with the room): a caller
// that solves one system per step and keeps one workspace (and its reports) allocates nothing on
// the heap inside the solve after its first step, for levels of at most 12 rows.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(Workspace&&) noexcept;
  Workspace& operator=(Workspace&&) noexcept;
  struct Buffers;
  Buffers& buffers();

 private:
  std::unique_ptr<Buffers> buffers_;
};

// v (nv) inside the constraints and one report per level. lo <= hi must hold; rows of C that
// clip(0, lo, hi) violates are first met as a level of their own (recovery), then held.
// `reports` is resized to one per level; its vectors keep their capacity. The returned v lives in
// the workspace until its next solve. The smallest singular value of a full-rank level (an
// eigen-decomposition that the solve itself does not need) is left at -1 until
// finish_reports(reports, workspace), called before the reports are read and before the next solve.
const Vector& solve_hierarchy(const std::vector<Level>& levels, const Constraints& cons, const Policy& policy,
                              std::vector<LevelReport>& reports, Workspace& workspace);

// The same for a hierarchy with bounded levels (strict least violation, level by level: see
// inequality.cpp and reljac/ik/solvers/inequality.py); solve_hierarchy calls it when a level is bounded.
// Sized as solve_hierarchy's buffers (levels of at most 12 rows allocate nothing after the first solve).
const Vector& solve_lexicographic(const std::vector<Level>& levels, const Constraints& cons, const Policy& policy,
                                  std::vector<LevelReport>& reports, Workspace& workspace);

// Rows j of C with C_j v > d_j beyond rounding (reljac/ik/solvers/saturation.py's violated_rows), into `out`;
// Cv_room: a buffer, grown to C's rows when smaller (no allocation once it has them).
void violated_rows(const Constraints& cons, const Vector& v, Vector& Cv_room, std::vector<int>& out);

// Fills in the smallest singular values the last solve with `workspace` deferred (idempotent).
void finish_reports(std::vector<LevelReport>& reports, Workspace& workspace);

// The same with a workspace of its own (one-off solves).
Vector solve_hierarchy(const std::vector<Level>& levels, const Constraints& cons, const Policy& policy,
                       std::vector<LevelReport>& reports);

}  // namespace reljac

// The compiled hierarchy with inequality rows at any level: the twin of reljac/ik/solvers/inequality.py
// (its specification and oracle: read its docstring first). Strict least violation, level by
// level; what a level leaves to the levels below (its equality rows and the rows it leaves beyond a
// bound out of the projector, its rows inside or on a bound as hard rows); the recovery of rows of
// C violated at the start; the reports. One level's search is active_set.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "active_set.hpp"
#include "active_set_gram.hpp"

namespace reljac {

using namespace lex;

namespace {

// The rows of level k made explicit (Python's level_rows): an identity level's kept rows as c
// times rows of the identity, an equality level's as lower = upper = b.
Rows rows_of(const Level& level, int k, Space& s) {
  Rows rows;
  rows.extra_damping = level.extra_damping;
  if (level.rows() == 0) return rows;  // no rows (its A may be null: an empty matrix's data), m = 0
  if (level.A) {
    rows.A = level.A;
    rows.m = level.rows();
    rows.lower = level.bounded() ? level.lower.data() : level.b.data();
    rows.upper = level.bounded() ? level.upper.data() : level.b.data();
    return rows;
  }
  RowMatrix& A = s.identity_A[k];
  Vector &lower = s.identity_lower[k], &upper = s.identity_upper[k];
  std::vector<int>& column = s.identity_column[k];
  IdentityRows& built = s.identity_built[k];
  // the rows themselves (A, column) depend on the scale and the mask only: written again when
  // either changed since the last solve (a posture's 32 x 38 rows are the same every step)
  if (!built.matches(level)) {
    int m = 0;
    for (int j = 0; j < s.nv; ++j) {
      if (level.mask.size() && !(level.mask(j) > 0)) continue;
      A.row(m).setZero();
      A(m, j) = level.identity_scale;
      column[m++] = j;
    }
    built.keep(level, m);
  }
  const int m = built.rows;
  for (int a = 0; a < m; ++a) {
    const int j = column[a];
    lower(a) = level.bounded() ? level.lower(j) : level.b(j);
    upper(a) = level.bounded() ? level.upper(j) : level.b(j);
  }
  rows.A = A.data();
  rows.m = m;
  rows.column = column.data();
  rows.scale = level.identity_scale;
  rows.lower = lower.data();
  rows.upper = upper.data();
  return rows;
}

// A report as a default-constructed one, keeping its vectors' capacity.
void clear(LevelReport& r) {
  r.scale = 1.0;
  r.saturated.clear();
  r.saturated_rows.clear();
  r.damping = 0.0;
  r.smallest = kInf;
  r.residual = 0.0;
  r.met = true;
  r.limit_kind = r.limit_index = r.limit_level = -1;
  r.active.clear();  // (margins keep their size: a level's report resizes them to its rows)
  r.changes = 0;
  r.capped = false;
  r.held.clear();
}

template <typename T>
void sort_unique(std::vector<T>& x) {
  std::sort(x.begin(), x.end());
  x.erase(std::unique(x.begin(), x.end()), x.end());
}

// One level (Python's _level): s.v and P (the projector left by the levels above, in) move on to
// what the levels below get; s's hard rows grow by the level's rows inside their bounds. `tag_of`:
// the tag of the level's row i as a hard row. The report is filled when given. After the `last`
// level P and the hard rows are left as they are (nothing below uses them). A level of more rows
// than the dimension P leaves (its trace, rounded) is rank-deficient: smallest singular value 0.
// Level k's guess from the sets kept at the last solve (Python's WarmStart.guess): false (a cold
// start) when none are kept or its row count changed; rows no longer there dropped.
bool warm_guess(const Rows& rows, int k, Space& s) {
  WarmLevel& w = s.warm[k];
  if (w.rows != rows.m) return false;
  if (w.wait > 0) {
    --w.wait;
    return false;
  }
  s.guess.clear();
  for (const Tag& tag : w.working)
    for (int j = 0; j < s.hard; ++j)
      if (s.tags[j] == tag) {
        s.guess.push_back(j);
        break;
      }
  for (int i = 0; i < rows.m; ++i) {
    const double bound = w.soft[i] > 0 ? rows.upper[i] : rows.lower[i];
    s.soft[i] = w.soft[i] != 0 && !rows.equal(i) && std::isfinite(bound);
    if (s.soft[i]) s.aim(i) = bound;
  }
  return true;
}

// Keeps level k's sets at the end of its solve, `guessed`: a guess was tried (Python's WarmStart.keep).
void warm_keep(const Rows& rows, int k, bool guessed, Space& s) {
  WarmLevel& w = s.warm[k];
  if (guessed) {
    w.misses = s.guess_taken ? 0 : w.misses + 1;
    w.wait = std::min(w.misses, kMaxWait);
  }
  w.rows = rows.m;
  w.working.clear();
  for (int j : s.working) w.working.push_back(s.tags[j]);
  for (int i = 0; i < rows.m; ++i) w.soft[i] = !s.soft[i] ? 0 : s.aim(i) == rows.upper[i] ? 1 : -1;
}

// True where level k's rows A are dependent (A A^T certified rank deficient: pivoted_rank), so
// that A P_in is too and its smallest singular value 0, without forming A P_in: a controller's
// level of inequality rows only (its model usually has no row, and it leaves none out below: A
// P_in's other uses), found rank deficient at the last solve (a region's edges, more planes than
// a position's three). After a failure it waits before trying again, one solve more after each
// failure in a row, at most kMaxWait (WarmLevel::rows_dependent): a region whose hull had two edges
// parallel to 1e-7 rad (a Gram matrix's third pivot 1e-14, rounding, above the certificate's cut)
// failed once, and its four edges afterwards were never tried again (A P_in formed at every step:
// a sixth of the level's cost on Talos).
bool rows_dependent(const Rows& rows, int k, Space& s) {
  if (k < 0 || rows.column) return false;
  WarmLevel& w = s.warm[k];
  if (!w.deficient) return false;
  if (w.rows_dependent == 0 && w.dependent_wait > 0) {
    --w.dependent_wait;
    return false;
  }
  for (int i = 0; i < rows.m; ++i)
    if (rows.equal(i)) return false;
  int rank = 0;
  const bool dependent = gram(rows.A, rows.m, s.nv, s) && pivoted_rank(rows.m, s, rank);
  w.rows_dependent = dependent ? 1 : 0;
  w.dependent_misses = dependent ? 0 : std::min(w.dependent_misses + 1, kMaxWait);
  w.dependent_wait = w.dependent_misses;
  return dependent;
}

// `warm`: the level's index in s.warm when warm-started (-1: cold, nothing kept). `level`: the
// level's index (its report's, when given).
template <typename TagOf>
void solve_one(const Rows& rows, const TagOf& tag_of, Matrix& P, const Policy& policy, Space& s, LevelReport* report,
               bool last = false, int warm = -1, int level = -1) {
  const int nv = s.nv, m = rows.m;
  const RowMatrixMap A(rows.A, m, nv);
  int rank_AP = 0;
  double smallest = 0.0;
  const double dimension = P.trace();
  s.new_level();  // (s.AP is this level's once computed below)
  if (static_cast<double>(m) > std::nearbyint(dimension)) {
    rank_AP = -1;  // (computed below only if the report needs it)
  } else if (rows_dependent(rows, warm, s)) {  // sigma_min 0, A P_in not formed (its rank: as above)
    rank_AP = -1;
  } else {
    if (s.P_identity)
      s.AP.topRows(m) = A;
    else
      factor::times_symmetric(rows.A, m, P, s.AP);  // A P (P exactly symmetric: identity or subtract_gram's)
    s.AP_rows = m;
    // its eigenvectors up front only where a reuse is sure (a level of equality rows leaves all of
    // them out of the projector below: the same Gram matrix), else at its first reuse, if any
    bool equal = !last;
    for (int i = 0; i < m && equal; ++i) equal = rows.equal(i);
    bool deficient = warm >= 0 && s.warm[warm].deficient;  // (a controller's step: as the last one found it)
    smallest =
        smallest_singular_value(s.AP.data(), m, nv, s, policy.threshold * policy.threshold, rank_AP, equal, !last, deficient);
    if (warm >= 0) s.warm[warm].deficient = deficient;
    s.AP_rank = rank_AP;
    if (smallest < 0 && report) {  // above the threshold: undamped; its value waits for the report's reader
      Matrix& G = s.pending_G[level];
      if (G.rows() < m) G.resize(s.m_max, s.m_max);
      G.topLeftCorner(m, m) = s.G.topLeftCorner(m, m);
      s.pending.emplace_back(level, m);
    }
  }
  const bool AP_known = rank_AP >= 0;
  const double lam2 = (smallest < 0 ? 0.0 : policy.singular_damping(smallest)) + rows.extra_damping;
  s.last_damping = lam2;
  bool capped = false;
  const bool guess = warm >= 0 && warm_guess(rows, warm, s);
  const int changes = solve_level(rows, P, lam2, policy.change_cap >= 0 ? policy.change_cap : change_cap(nv, s.hard, m), s,
                                  capped, guess);
  if (warm >= 0) warm_keep(rows, warm, guess, s);
  const Vector& v = s.v;
  // distances to the intervals, the scale of the met test
  rows.times(v, nv, s.x.head(m));
  double scale2 = 0.0;
  for (int i = 0; i < m; ++i) {
    const double x = s.x(i);
    s.distance(i) = std::max(x - rows.upper[i], 0.0) + std::max(rows.lower[i] - x, 0.0);
    const double inside = std::min(std::max(x, rows.lower[i]), rows.upper[i]);
    scale2 += inside * inside;
  }
  const double tol = kMetTolerance * (1.0 + std::sqrt(scale2));
  const double residual = s.distance.head(m).norm();
  if (report) {
    LevelReport& r = *report;
    clear(r);
    r.damping = lam2;
    r.smallest = smallest;
    r.residual = residual;
    r.met = residual <= tol;
    r.changes = changes;
    r.capped = capped;
    r.margins.resize(m);
    for (int i = 0; i < m; ++i) {
      r.margins(i) = std::min(s.x(i) - rows.lower[i], rows.upper[i] - s.x(i));
      if (!rows.equal(i) && r.margins(i) <= tol) r.active.push_back(i);
    }
    for (int j : s.working) {
      const Tag& tag = s.tags[j];
      if (tag.kind == kJoint) r.saturated.push_back(tag.index);
      if (tag.kind == kRow) r.saturated_rows.push_back(tag.index);
      if (tag.kind == kLevelRow) r.held.emplace_back(tag.level, tag.index);
    }
    sort_unique(r.saturated);
    sort_unique(r.saturated_rows);
    sort_unique(r.held);
    if (!r.met) {
      const int w = static_cast<int>(s.working.size());
      if (w) {
        int pick = 0;  // the largest multiplier (the first working row without them)
        if (s.mu_size == w)
          for (int a = 1; a < w; ++a)
            if (s.mu(a) > s.mu(pick)) pick = a;
        const Tag& tag = s.tags[s.working[pick]];
        r.limit_kind = tag.kind;
        r.limit_index = tag.index;
        r.limit_level = tag.level;
      } else {
        if (rank_AP < 0) {
          factor::times_symmetric(rows.A, m, P, s.M);
          rank_AP = rank_of(s.M.data(), m, nv, s);
        }
        std::copy(rows.A, rows.A + static_cast<long>(m) * nv, s.M.data());
        if (rank_AP < rank_of(s.M.data(), m, nv, s)) r.limit_kind = kNoFreedom;
      }
    }
  }
  if (last) return;
  // equality rows and rows left beyond a bound keep their values: out of the projector
  int fixed = 0;
  for (int i = 0; i < m; ++i) {
    s.fixed[i] = rows.equal(i) || s.distance(i) > tol;
    if (s.fixed[i]) s.J.row(fixed++) = A.row(i);
  }
  bool prefix = AP_known;  // the fixed rows are the first rows of A: A P as the smallest singular value had it
  for (int i = 0; i < fixed && prefix; ++i) prefix = s.fixed[i];
  if (prefix && fixed) {  // (and its Gram matrix's leading block: gram)
    subtract_row_space(s.AP.data(), fixed, P, s);
    s.P_identity = false;
  } else if (fixed) {
    if (AP_known) {  // their rows of A P (times_symmetric works row by row: the same bits)
      for (int i = 0, a = 0; i < m; ++i)
        if (s.fixed[i]) s.M.row(a++) = s.AP.row(i);
    } else {
      factor::times_symmetric(s.J.data(), fixed, P, s.M);
    }
    subtract_row_space(s.M.data(), fixed, P, s);
    s.P_identity = false;
  }
  for (int i = 0; i < m; ++i) {  // the others, inside or on a bound, are kept by the levels below
    if (s.fixed[i]) continue;
    const int column = rows.column ? rows.column[i] : -1;
    if (std::isfinite(rows.upper[i]))
      s.push_hard(rows.A + static_cast<long>(i) * nv, 1.0, rows.upper[i], tag_of(i), column);
    if (std::isfinite(rows.lower[i]))
      s.push_hard(rows.A + static_cast<long>(i) * nv, -1.0, -rows.lower[i], tag_of(i), column);
  }
}

}  // namespace

namespace lex {

void finish_reports(std::vector<LevelReport>& reports, Space& s) {
  for (const auto& [level, rows] : s.pending)
    if (level < static_cast<int>(reports.size()) && reports[level].smallest < 0)
      reports[level].smallest = smallest_of_gram(s.pending_G[level], rows, s);
  s.pending.clear();
}

}  // namespace lex

const Vector& solve_lexicographic(const std::vector<Level>& levels, const Constraints& cons, const Policy& policy,
                                  std::vector<LevelReport>& reports, Workspace& workspace) {
  Space& s = lex_space(workspace);
  s.size(levels, cons);
  s.overflow = false;
  s.pending.clear();
  const int nv = s.nv, k = cons.rows();
  Vector& v = s.v;
  v = Vector::Zero(nv).cwiseMax(cons.lo).cwiseMin(cons.hi);  // zero if feasible, else the box's nearest point
  Matrix& P = s.P;
  factor::set_identity(P, nv);
  s.P_identity = true;
  violated_rows(cons, v, s.Cv, s.violated);  // rows of C violated at v (beyond rounding)
  // the hard rows: the box's finite bounds (upper ones first), then the rows of C not violated
  s.hard = 0;
  const bool box_written = s.box_rows_kept(cons);  // (the same finite bounds as the last solve: their rows are there)
  for (int j = 0; j < nv; ++j)
    if (std::isfinite(cons.hi(j))) {
      if (!box_written) {
        s.N.row(s.hard).setZero();
        s.N(s.hard, j) = 1.0;
        s.unit_column[s.hard] = j;
        s.unit_coef(s.hard) = 1.0;
        s.tags[s.hard] = {kJoint, j, -1};
      }
      s.h(s.hard++) = cons.hi(j);
    }
  for (int j = 0; j < nv; ++j)
    if (std::isfinite(cons.lo(j))) {
      if (!box_written) {
        s.N.row(s.hard).setZero();
        s.N(s.hard, j) = -1.0;
        s.unit_column[s.hard] = j;
        s.unit_coef(s.hard) = -1.0;
        s.tags[s.hard] = {kJoint, j, -1, -1};
      }
      s.h(s.hard++) = -cons.lo(j);
    }
  for (int j = 0, next = 0; j < k; ++j) {
    if (next < static_cast<int>(s.violated.size()) && s.violated[next] == j) {
      ++next;
      continue;
    }
    s.N.row(s.hard) = cons.C.row(j);
    s.h(s.hard) = cons.d(j);
    s.unit_column[s.hard] = -1;
    s.tags[s.hard++] = {kRow, j, -1};
  }
  bool warm = s.warm_start;  // a controller's step: each level first tries the sets it ended with last time
  for (const Level& level : levels) warm = warm && !level.search;  // (a search's steps are cold)
  s.working.clear();  // the working set a level ends with: the next one starts from it
  if (!s.violated.empty()) {  // recovery: C_j v <= d_j for the rows the start violates, as a level above all
    const int n = static_cast<int>(s.violated.size());
    for (int i = 0; i < n; ++i) {
      s.recovery_A.row(i) = cons.C.row(s.violated[i]);
      s.recovery_upper(i) = cons.d(s.violated[i]);
    }
    Rows recovery{s.recovery_A.data(), n, s.recovery_lower.data(), s.recovery_upper.data(), 0.0};
    solve_one(recovery, [&s](int i) { return Tag{kRow, s.violated[i], -1}; }, P, policy, s, nullptr);
  }
  bool damped = !s.violated.empty() && s.last_damping > 0.0;  // the levels below are not exact
  reports.resize(levels.size());
  bool free_below = true;  // directions no level took may be left: the least-norm fill below
  for (size_t i = 0; i < levels.size(); ++i) {
    LevelReport& report = reports[i];
    report.saturated.reserve(nv);
    report.saturated_rows.reserve(cons.C.rows());
    report.active.reserve(s.m_max);
    report.held.reserve(s.room);
    const Rows rows = rows_of(levels[i], static_cast<int>(i), s);
    if (rows.m == 0) {  // every row masked out: nothing asked
      clear(report);
      report.margins.resize(0);
      report.exact = !damped;
      continue;
    }
    const int level = static_cast<int>(i);
    // (the last level's projector is formed only where directions may be left: not after a posture
    // of every joint, or of all but a few the levels above fix)
    if (i + 1 == levels.size()) free_below = !identity_leaves_no_freedom(rows, P, s);
    solve_one(rows, [level](int row) { return Tag{kLevelRow, row, level}; }, P, policy, s, &report,
              !free_below, warm ? level : -1, level);
    damped = damped || report.damping > 0.0;
    report.exact = !damped;
  }
  if (free_below && std::nearbyint(P.trace()) > 0)
    least_norm(P, policy.change_cap >= 0 ? policy.change_cap : change_cap(nv, s.hard, nv), s);
  // inside the box: rounding, or levels of huge magnitudes (a posture of gain 1e20 or weight 1e10
  // below bounded levels: steps of 1e20 rad/s whose ratio tests cancel left a joint 0.9-172 rad/s
  // beyond its velocity limit), as the equality solver's step
  v = v.cwiseMax(cons.lo).cwiseMin(cons.hi);
  if (s.overflow) v.setConstant(std::numeric_limits<double>::quiet_NaN());  // the levels' rows overflow
  return v;
}

}  // namespace reljac

// The compiled hierarchy with inequality rows at any level: the twin of reljac/ik/inequality.py
// (its specification and oracle: read its docstring first). Strict least violation, level by
// level; what a level leaves to the levels below (its equality rows and the rows it leaves beyond a
// bound out of the projector, its rows inside or on a bound as hard rows); the recovery of rows of
// C violated at the start; the reports. One level's search is active_set.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "active_set.hpp"

namespace reljac {

using namespace lex;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The rows of level k made explicit (Python's level_rows): an identity level's kept rows as c
// times rows of the identity, an equality level's as lower = upper = b.
Rows rows_of(const Level& level, int k, Space& s) {
  Rows rows;
  rows.extra_damping = level.extra_damping;
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
  int m = 0;
  for (int j = 0; j < s.nv; ++j) {
    if (level.mask.size() && !(level.mask(j) > 0)) continue;
    A.row(m).setZero();
    A(m, j) = level.identity_scale;
    column[m] = j;
    lower(m) = level.bounded() ? level.lower(j) : level.b(j);
    upper(m) = level.bounded() ? level.upper(j) : level.b(j);
    ++m;
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

// `warm`: the level's index in s.warm when warm-started (-1: cold, nothing kept).
template <typename TagOf>
void solve_one(const Rows& rows, const TagOf& tag_of, Matrix& P, const Policy& policy, Space& s, LevelReport* report,
               bool last = false, int warm = -1) {
  const int nv = s.nv, m = rows.m;
  const RowMatrixMap A(rows.A, m, nv);
  int rank_AP = 0;
  double smallest = 0.0;
  const double dimension = P.trace();
  s.pinned_rows = -1;
  if (static_cast<double>(m) > std::nearbyint(dimension)) {
    rank_AP = -1;  // (computed below only if the report needs it)
  } else {
    factor::times_symmetric(rows.A, m, P, s.AP);  // A P (P exactly symmetric: identity or subtract_gram's)
    // its eigenvectors up front only where a reuse is sure (a level of equality rows leaves all of
    // them out of the projector below: the same Gram matrix), else at its first reuse, if any
    bool equal = !last;
    for (int i = 0; i < m && equal; ++i) equal = rows.equal(i);
    smallest = smallest_singular_value(s.AP.data(), m, nv, s, rank_AP, equal);
  }
  const bool AP_known = rank_AP >= 0;
  const double lam2 = policy.singular_damping(smallest) + rows.extra_damping;
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
          rank_AP = eigen(s.M.data(), m, nv, s);
        }
        std::copy(rows.A, rows.A + static_cast<long>(m) * nv, s.M.data());
        if (rank_AP < eigen(s.M.data(), m, nv, s)) r.limit_kind = kNoFreedom;
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
  if (fixed == m && AP_known) {  // every row: A P as the smallest singular value had it
    subtract_row_space(s.AP.data(), fixed, P, s);
  } else if (fixed) {
    factor::times_symmetric(s.J.data(), fixed, P, s.M);
    subtract_row_space(s.M.data(), fixed, P, s);
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

void Space::push_hard(const double* n, double sign, double bound, Tag tag, int column) {
  for (int j = 0; j < nv; ++j) N(hard, j) = sign * n[j];
  h(hard) = bound;
  tags[hard] = tag;
  tags[hard].side = sign > 0 ? 1 : -1;
  unit_column[hard] = column;
  if (column >= 0) unit_coef(hard) = N(hard, column);
  ++hard;
}

void Space::hard_products(bool values, bool rates) {
  for (int j = 0; j < hard; ++j) {
    const int column = unit_column[j];
    if (column >= 0) {
      if (values) hard_value(j) = unit_coef(j) * v(column);
      if (rates) hard_rate(j) = unit_coef(j) * delta(column);
    } else {
      if (values) hard_value(j) = N.row(j).dot(v);
      if (rates) hard_rate(j) = N.row(j).dot(delta);
    }
  }
}

void Space::size(const std::vector<Level>& levels, const Constraints& cons) {
  const int n = static_cast<int>(cons.lo.size()), k_room = static_cast<int>(cons.C.rows());
  int rows = k_room, total = 0;
  for (const Level& level : levels) {
    const int m = level.A ? level.rows() : n;
    rows = std::max(rows, m);
    total += m;
  }
  const int hard_room = 2 * n + 2 * k_room + 2 * total;
  if (warm.size() < levels.size()) warm.resize(levels.size());
  for (WarmLevel& w : warm) {  // (sized here: a step allocates nothing)
    if (static_cast<int>(w.working.capacity()) < hard_room) w.working.reserve(hard_room);
    if (static_cast<int>(w.soft.size()) < rows) w.soft.resize(rows, 0);
  }
  if (static_cast<int>(guess.capacity()) < hard_room) guess.reserve(hard_room);
  if (identity_A.size() < levels.size()) {
    identity_A.resize(levels.size());
    identity_column.resize(levels.size());
    identity_lower.resize(levels.size());
    identity_upper.resize(levels.size());
  }
  for (size_t i = 0; i < levels.size(); ++i)
    if (!levels[i].A && identity_A[i].rows() != n) {
      identity_A[i].resize(n, n);
      identity_column[i].resize(n);
      identity_lower[i].resize(n);
      identity_upper[i].resize(n);
    }
  if (n == nv && rows <= m_max && hard_room <= room && k_room == c_room) return;
  nv = n;
  m_max = std::max(rows, m_max);
  room = std::max(hard_room, room);
  c_room = k_room;
  N.resize(room, nv);
  h.resize(room);
  tags.resize(room);
  unit_column.resize(room);
  unit_coef.resize(room);
  hard_value.resize(room);
  hard_rate.resize(room);
  for (Vector* x : {&v, &v_prev, &delta, &offset, &gradient, &Pn, &Pn_again, &Pg, &rhs, &mu, &norms}) x->resize(nv);
  for (Matrix* x : {&P, &P_W, &normals}) x->resize(nv, nv);
  J.resize(m_max, nv);
  M.resize(m_max, nv);
  AP.resize(m_max, nv);
  for (Matrix* x : {&pinned_G, &pinned_vectors}) x->resize(m_max, m_max);
  pinned_values.resize(m_max);
  pinned_rows = -1;
  for (Vector* x : {&value, &rate, &aim, &t, &c, &coefficients, &eig_values, &distance, &x}) x->resize(m_max);
  G.resize(m_max, m_max);
  eig_vectors.resize(m_max, m_max);
  Wt_room.resize(static_cast<Eigen::Index>(m_max) * nv);
  crossings.resize(2 * m_max);
  soft.assign(m_max, 0);
  fixed.assign(m_max, 0);
  for (std::vector<int>* x : {&chosen, &working, &kept, &violated}) x->reserve(std::max(room, m_max));
  recovery_A.resize(c_room, nv);
  recovery_lower = Vector::Constant(c_room, -kInf);
  recovery_upper.resize(c_room);
  Cv.resize(c_room);
}

}  // namespace lex

const Vector& solve_lexicographic(const std::vector<Level>& levels, const Constraints& cons, const Policy& policy,
                                  std::vector<LevelReport>& reports, Workspace& workspace) {
  Space& s = lex_space(workspace);
  s.size(levels, cons);
  s.overflow = false;
  const int nv = s.nv, k = cons.rows();
  Vector& v = s.v;
  v = Vector::Zero(nv).cwiseMax(cons.lo).cwiseMin(cons.hi);  // zero if feasible, else the box's nearest point
  Matrix& P = s.P;
  P.setIdentity();
  violated_rows(cons, v, s.Cv, s.violated);  // rows of C violated at v (beyond rounding)
  // the hard rows: the box's finite bounds (upper ones first), then the rows of C not violated
  s.hard = 0;
  for (int j = 0; j < nv; ++j)
    if (std::isfinite(cons.hi(j))) {
      s.N.row(s.hard).setZero();
      s.N(s.hard, j) = 1.0;
      s.h(s.hard) = cons.hi(j);
      s.unit_column[s.hard] = j;
      s.unit_coef(s.hard) = 1.0;
      s.tags[s.hard++] = {kJoint, j, -1};
    }
  for (int j = 0; j < nv; ++j)
    if (std::isfinite(cons.lo(j))) {
      s.N.row(s.hard).setZero();
      s.N(s.hard, j) = -1.0;
      s.h(s.hard) = -cons.lo(j);
      s.unit_column[s.hard] = j;
      s.unit_coef(s.hard) = -1.0;
      s.tags[s.hard++] = {kJoint, j, -1, -1};
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
  reports.resize(levels.size());
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
      continue;
    }
    const int level = static_cast<int>(i);
    solve_one(rows, [level](int row) { return Tag{kLevelRow, row, level}; }, P, policy, s, &report,
              i + 1 == levels.size(), warm ? level : -1);
  }
  if (s.overflow) v.setConstant(std::numeric_limits<double>::quiet_NaN());  // the levels' rows overflow
  return v;
}

}  // namespace reljac

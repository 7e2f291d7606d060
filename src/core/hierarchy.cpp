// The compiled SNS solver; see hierarchy.hpp and reljac/ik/solvers/hierarchy.py (its specification).
#include "hierarchy.hpp"
#include "hierarchy_buffers.hpp"
#include "hierarchy_row_space.hpp"
#include "active_set.hpp"

#include <algorithm>
#include <cmath>

namespace reljac {

double Policy::singular_damping(double smallest) const {
  if (smallest >= threshold) return 0.0;
  const double r = smallest / threshold;
  return max_damping * max_damping * (1.0 - r * r);
}

using namespace factor;  // the level factoring (hierarchy_factor.hpp)

Workspace::Workspace() = default;
Workspace::~Workspace() = default;
Workspace::Workspace(Workspace&&) noexcept = default;
Workspace& Workspace::operator=(Workspace&&) noexcept = default;
Workspace::Buffers& Workspace::buffers() {
  if (!buffers_) buffers_ = std::make_unique<Buffers>();
  return *buffers_;
}

lex::Space& lex::lex_space(Workspace& workspace) {
  Workspace::Buffers& ws = workspace.buffers();
  if (!ws.lex) ws.lex = std::make_unique<lex::Space>();
  return *ws.lex;
}

namespace {

using Buffers = Workspace::Buffers;
using saturation::crossing_is_rounding;
using saturation::Limiting;
using saturation::max_scale;
using sns::form_M;
using sns::hold_joint;
using sns::hold_row;
using sns::replay;
using sns::unpin;

// |A v - b| of a level.
double norm_of_difference(const Level& level, const Vector& v, int nv, Vector& Av) {
  times(level, v, nv, Av);
  return (Av - level.b).norm();
}

bool is_met(double residual, const Level& level) { return residual <= kMetTolerance * (1.0 + level.b.norm()); }

// A report as a default-constructed one, keeping its vectors' capacity.
void reset(LevelReport& report) {
  report.scale = 1.0;
  report.saturated.clear();
  report.saturated_rows.clear();
  report.damping = 0.0;
  report.smallest = std::numeric_limits<double>::infinity();
  report.residual = 0.0;
  report.met = true;
  report.limit_kind = report.limit_index = -1;
}

// One SNS level; updates v, P, dim and held (rows of C saturated so far) for the levels below.
// The candidate being tried is w.step (its projector ws.P_free and w.M); the best so far is
// w.best, with ws.P_best and w.M_best once the solver has moved on from it. P_free is copied from P
// at the first saturation only (until then the candidate's projector is P itself), or made by replay
// at the start of a tie's path (saturation.py's Saturations: paths after SNS's own, whose candidates
// compete with all before them; one must lower the best residual by kTiePathGain of it).
// `P_is_identity`: nothing has been projected out yet (M = A without a product).
void solve_level(const Level& level, Vector& v, Matrix& P, bool P_is_identity, int& dim, std::vector<char>& held,
                 const Constraints& cons, const Policy& policy, Buffers& ws, LevelSpace& w, LevelReport& report) {
  const int nv = static_cast<int>(v.size());
  Vector& base = ws.base;
  base = v;
  const Matrix* P_now = &P;  // the candidate's projector: P, then ws.P_free once a saturation changes it
  int free = dim;
  if (level.A) {
    form_M(level, P, P_is_identity, w);
    if (w.G_now.rows() != level.rows()) w.G_now.resize(level.rows(), level.rows());
    gram(w.M, w.G_now);
  }
  ws.saturated.clear();
  ws.saturated_rows.clear();
  ws.saturations.clear();
  bool has_best = false;
  double best_remaining = 0.0, best_scale = 0.0;
  int best_dim = 0, best_limit_kind = -1, best_limit_index = -1;
  bool best_is_current = false;  // the best's P and M are still P_free and M
  bool known_singular = false;    // an earlier candidate was found singular (see correction)
  ws.held_free = held;
  unpin(ws);
  int stale = 0;
  const int iterations = nv + cons.rows() + 1;
  if (level.A && w.step.U_scaled.rows() != level.rows()) {  // both candidates' buffers, sized once
    w.step.U_scaled.resize(level.rows(), level.rows());
    w.best.U_scaled.resize(level.rows(), level.rows());
  }
  const double a_norm = level.A ? Eigen::Map<const Vector>(level.A, Eigen::Index(level.rows()) * nv).norm() : 0.0;
  auto keep_best_apart = [&] {  // P_free and M are about to change: the best's copied out of them
    if (!best_is_current) return;
    ws.P_best = *P_now;
    if (level.A) w.M_best = w.M;
    best_is_current = false;
  };
  const double met = kMetTolerance * (1.0 + level.b.norm());  // a residual this small meets the level
  double gain = 1e-9;  // the fraction of the best residual a candidate must lower it by (a tie path's: kTiePathGain)
  for (int path = 0;; ++path) {
    if (path > 0) {  // a tie's path (Saturations): the row or joint held first let go, this row held where it is
      const int row = ws.saturations.next_path();
      if (row < 0 || (has_best && best_remaining <= met)) break;  // (met: nothing to gain but rounding)
      gain = kTiePathGain;
      keep_best_apart();
      replay(level, v, P, P_is_identity, dim, held, cons, ws, w, free);
      P_now = &ws.P_free;
      known_singular = false;  // (fewer saturations: G's eigenvalues may have grown)
      const double target = std::min(cons.C.row(row).dot(base), cons.d(row));
      free -= hold_row(level, cons, ws, w, row, target);
      ws.saturations.add(1, row, target, 0.0);
      if (level.A) gram(w.M, w.G_now);
      stale = 0;
    }
    for (int it = 0; it < iterations; ++it) {
      times(level, base, nv, w.Ax);
      w.residual = level.b - w.Ax;
      if (level.A == nullptr)
        identity_correction(level, *P_now, w.residual, nv, w.step, ws.masked);
      else
        with_gram_type(level.rows(), [&](auto gram_type) {  // the correction with G as a matrix of that type
          correction<decltype(gram_type)>(level, w.M, w.G_now, *P_now, w.residual, policy, nv, a_norm, known_singular,
                                          w.step, w.coefficients, w.projected);
        });
      const Limiting lim = max_scale(base, w.step.delta, cons, ws.held_free, ws.any_pinned ? &ws.pinned : nullptr, ws.Cb, ws.Cd);
      if (lim.scale < 0) {  // freezing the last one pushed another out: keep the best so far
        if (lim.kind == 1) ws.saturations.pushed_out(lim.index);
        break;
      }
      const double s = lim.scale;
      const double remaining = (s * w.step.A_delta - w.residual).norm();
      const bool kept = !has_best || remaining < best_remaining * (1.0 - gain) - 1e-15;
      if (kept) {
        has_best = true;
        best_remaining = remaining;
        best_scale = s;
        best_limit_kind = s < 1.0 ? lim.kind : -1;
        best_limit_index = s < 1.0 ? lim.index : -1;
        ws.best_v = base + s * w.step.delta;
        best_dim = free;
        w.best.swap(w.step);  // the next candidate overwrites what w.step holds
        ws.best_saturated = ws.saturated;
        ws.best_saturated_rows = ws.saturated_rows;
        best_is_current = true;
        stale = 0;
      } else if (s > kReachedAtOnce) {  // s ~ 0: a joint sits on its bound; freezing it is free
        ++stale;
      }
      if (s >= 1.0 || stale >= kMaxStaleSaturations || free == 0) break;
      keep_best_apart();
      if (P_now == &P) {  // the first saturation: P_free from here on
        ws.P_free = P;
        P_now = &ws.P_free;
      }
      const int j = lim.index;
      const Vector& delta = kept ? w.best.delta : w.step.delta;  // this candidate's
      if (lim.kind == 0) {
        const double target = delta(j) > 0 ? cons.hi(j) : cons.lo(j);
        if (!hold_joint(level, ws, w, j, target)) {  // cannot move in what is left
          if (!crossing_is_rounding(base, delta, cons, j)) break;
          ws.pinned[j] = 1;  // its crossing is rounding (as a refused row's), skipped from here on
          ws.any_pinned = true;
          continue;
        }
        ws.saturations.add(0, j, target, s);
      } else {
        ws.saturations.tie(j, s);
        const bool moved = hold_row(level, cons, ws, w, j, cons.d(j));  // refused: in the span saturated (crossed
        ws.saturations.add(1, j, cons.d(j), s);                                // by rounding only): held
        if (!moved) continue;
      }
      if (level.A) gram(w.M, w.G_now);  // formed anew: a rank-one downdate loses accuracy where M loses rank
      --free;
    }
  }
  reset(report);
  if (!has_best) {  // cannot happen while v satisfies the constraints; stay safe anyway
    v = v.cwiseMax(cons.lo).cwiseMin(cons.hi);
    report.scale = 0.0;
    report.residual = norm_of_difference(level, v, nv, w.Ax);
    report.met = false;
    return;
  }
  v = ws.best_v.cwiseMax(cons.lo).cwiseMin(cons.hi);
  for (int j : ws.best_saturated_rows) held[j] = 1;
  const RowMatrix& M_best = best_is_current ? w.M : w.M_best;
  if (w.best.has_W) {
    if (w.best.undecided) {  // a search's candidate solved by Cholesky: its rank now (decide_rank)
      const Matrix* G = best_is_current ? &w.G_now : nullptr;  // M M^T of the candidate tried last
      with_gram_type(level.rows(), [&](auto gram_type) {
        decide_rank<decltype(gram_type)>(w.best, M_best, G, policy, w);
      });
    }
    row_space(w.best, M_best, w);
    if (!best_is_current || P_now != &P) P.swap(best_is_current ? ws.P_free : ws.P_best);  // (P_free: refilled by the next level's first saturation)
    subtract_gram(P, w.Wt(nv));                       // saturated columns of Wt are exactly 0
    dim = best_dim - w.best.rank;
  } else {  // an identity level uses every direction it can
    P.setZero();
    dim = 0;
  }
  report.scale = best_scale;
  report.limit_kind = best_limit_kind;
  report.limit_index = best_limit_index;
  report.saturated = ws.best_saturated;
  report.saturated_rows = ws.best_saturated_rows;
  report.damping = w.best.damping;
  report.smallest = w.best.smallest;  // -1: sigma_min of M_best, computed when the report is read
  w.smallest_of = report.smallest < 0 ? &M_best : nullptr;
  report.residual = norm_of_difference(level, v, nv, w.Ax);
  report.met = is_met(report.residual, level);
}

}  // namespace

void violated_rows(const Constraints& cons, const Vector& v, Vector& Cv_room, std::vector<int>& out) {
  out.clear();
  const int k = cons.rows();
  if (!k) return;
  if (Cv_room.size() < cons.C.rows()) Cv_room.resize(cons.C.rows());  // room for all of C's rows
  auto Cv = Cv_room.head(k);
  Cv.noalias() = cons.used_C() * v;
  const double tol = kBoundTolerance * std::max(1.0, Cv.cwiseAbs().maxCoeff());
  for (int j = 0; j < k; ++j)
    if (Cv(j) - cons.d(j) > tol) out.push_back(j);
}

const Vector& solve_hierarchy(const std::vector<Level>& levels, const Constraints& cons, const Policy& policy,
                              std::vector<LevelReport>& reports, Workspace& workspace) {
  Buffers& ws = workspace.buffers();
  ws.pending.clear();
  if (ws.lex) ws.lex->pending.clear();
  for (const Level& level : levels)  // inequality rows: the lexicographic solver (inequality.cpp)
    if (level.bounded()) return solve_lexicographic(levels, cons, policy, reports, workspace);
  const int nv = static_cast<int>(cons.lo.size());
  const int k = cons.rows();
  const int room = static_cast<int>(cons.C.rows());  // C's rows: k now, as many as it has room for later
  ws.saturated.reserve(nv);  // the most a level can saturate: nothing grows inside the solve
  ws.saturations.reserve(nv + room);
  ws.saturated_rows.reserve(room);
  ws.best_saturated.reserve(nv);
  ws.best_saturated_rows.reserve(room);
  ws.violated.reserve(room);
  ws.held.reserve(room);
  ws.held_free.reserve(room);
  ws.pending.reserve(levels.size());
  ws.pending.clear();
  if (ws.levels.size() < levels.size()) ws.levels.resize(levels.size());
  for (size_t i = 0; i < levels.size(); ++i)  // a level's buffers, sized when its rows change (none for no rows)
    if (levels[i].A && levels[i].rows() > 0 &&
        (ws.levels[i].reserved_rows != levels[i].rows() || ws.levels[i].reserved_nv != nv))
      ws.levels[i].reserve(levels[i].rows(), nv);
  if (ws.P_best.rows() != nv) {  // what the first saturation would size
    for (Matrix* x : {&ws.P_free, &ws.P_best}) x->resize(nv, nv);
    for (Vector* x : {&ws.base, &ws.best_v, &ws.Pc, &ws.scaled, &ws.c}) x->resize(nv);
  }
  if (static_cast<int>(ws.pinned.size()) != nv) ws.pinned.assign(nv, 0);
  Vector& v = ws.v;
  v = Vector::Zero(nv).cwiseMax(cons.lo).cwiseMin(cons.hi);
  Matrix& P = ws.P;
  set_identity(P, nv);
  int dim = nv;
  bool P_is_identity = true;
  ws.held.assign(k, 0);  // rows of C saturated so far: their direction is out of P
  if (ws.recoveries.size() < static_cast<size_t>(room) || ws.C_violated.cols() != nv) {
    // C has room for more rows: buffers for all of them, and those of every recovery level of up to
    // kSmallLevel rows, at once
    ws.C_violated.resize(room, nv);
    for (Vector* x : {&ws.Cb, &ws.Cd, &ws.Cv}) x->resize(room);
    ws.recoveries.resize(room);
    ws.recovery_report.saturated.reserve(nv);
    ws.recovery_report.saturated_rows.reserve(room);
    for (int rows = 1; rows <= std::min(room, kSmallLevel); ++rows) {
      auto& recovery = ws.recoveries[rows - 1];
      if (!recovery) recovery = std::make_unique<Buffers::Recovery>();
      recovery->level.b.resize(rows);
      recovery->space.reserve(rows, nv);
    }
  }
  violated_rows(cons, v, ws.Cv, ws.violated);
  if (!ws.violated.empty()) {  // recovery: C_j v = d_j for the violated rows, as the first level
    const int n = static_cast<int>(ws.violated.size());
    auto& recovery = ws.recoveries[n - 1];  // more than kSmallLevel rows: made when first needed
    if (!recovery) recovery = std::make_unique<Buffers::Recovery>();
    recovery->level.b.resize(n);
    for (int i = 0; i < n; ++i) {
      ws.C_violated.row(i) = cons.C.row(ws.violated[i]);
      recovery->level.b(i) = cons.d(ws.violated[i]);
      ws.held[ws.violated[i]] = 1;
    }
    recovery->level.A = ws.C_violated.data();
    solve_level(recovery->level, v, P, true, dim, ws.held, cons, policy, ws, recovery->space, ws.recovery_report);
    P_is_identity = false;
  }
  bool damped = !ws.violated.empty() && ws.recovery_report.damping > 0.0;  // the levels below are not exact
  reports.resize(levels.size());
  for (size_t i = 0; i < levels.size(); ++i) {
    const Level& level = levels[i];
    LevelReport& report = reports[i];
    report.saturated.reserve(nv);
    report.saturated_rows.reserve(room);
    if (level.rows() == 0) {
      reset(report);
      report.exact = !damped;
      continue;
    }
    if (dim == 0) {
      reset(report);
      report.scale = 0.0;
      report.residual = norm_of_difference(level, v, nv, ws.levels[i].Ax);
      report.met = is_met(report.residual, level);
      if (!report.met) report.limit_kind = 2;
      report.exact = !damped;
      continue;
    }
    solve_level(level, v, P, P_is_identity, dim, ws.held, cons, policy, ws, ws.levels[i], report);
    damped = damped || report.damping > 0.0;
    report.exact = !damped;
    P_is_identity = false;
    if (ws.levels[i].smallest_of) ws.pending.push_back(static_cast<int>(i));
  }
  return v;
}

void finish_reports(std::vector<LevelReport>& reports, Workspace& workspace) {
  Buffers& ws = workspace.buffers();
  for (int i : ws.pending)
    if (i < static_cast<int>(reports.size()) && reports[i].smallest < 0)
      reports[i].smallest = smallest_singular_value(*ws.levels[i].smallest_of, ws.levels[i]);
  ws.pending.clear();
  if (ws.lex) lex::finish_reports(reports, *ws.lex);
}

Vector solve_hierarchy(const std::vector<Level>& levels, const Constraints& cons, const Policy& policy,
                       std::vector<LevelReport>& reports) {
  Workspace workspace;
  Vector v = solve_hierarchy(levels, cons, policy, reports, workspace);
  finish_reports(reports, workspace);
  return v;
}

}  // namespace reljac

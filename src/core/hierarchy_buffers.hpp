// The compiled SNS solver's working buffers (Workspace::Buffers) and a level's state kept in them:
// its rows in the projector left (form_M), a joint or a row of C held there (hold_joint, hold_row),
// and the state after a level's saturations made again from its start, where a tie's path begins
// (replay: saturation.py's). Private to hierarchy.cpp.
#pragma once

#include <memory>
#include <vector>

#include "hierarchy.hpp"
#include "hierarchy_factor.hpp"
#include "hierarchy_identity.hpp"
#include "hierarchy_saturation.hpp"
#include "small_dense.hpp"

namespace reljac {

namespace lex {
struct Space;  // the lexicographic solver's (active_set.hpp)
}

struct Workspace::Buffers {
  saturation::Saturations saturations;  // a level's, in order, and the ties explored after them
  Vector v, base, best_v, Pc, scaled, c, Cb, Cd, Cv;
  Matrix P, P_free, P_best;  // (nv x nv)
  std::vector<char> held, held_free;
  std::vector<char> pinned;  // joints saturate refused on this path: cannot move in what is left (max_scale skips them)
  bool any_pinned = false;
  std::vector<int> saturated, saturated_rows, best_saturated, best_saturated_rows, violated;
  std::vector<int> pending;  // levels whose report still needs sigma_min (see finish_reports)
  RowMatrix C_violated;  // (room x nv): the violated rows first
  struct Recovery {      // a recovery level of n rows and its buffers
    Level level;
    factor::LevelSpace space;
  };
  std::vector<std::unique_ptr<Recovery>> recoveries;  // by the recovery level's rows - 1 (see solve_hierarchy)
  LevelReport recovery_report;
  std::vector<factor::LevelSpace> levels;
  factor::MaskedRows masked;  // an identity level's buffers (identity_correction: used within one call)
  std::unique_ptr<lex::Space> lex;  // solve_lexicographic's (inequality.cpp), made when first needed
};

namespace sns {

using Buffers = Workspace::Buffers;

// w.M = A P for the level's rows A (rows x nv) and the projector P left above (exactly symmetric:
// the identity or subtract_gram's); A itself while P is the identity.
inline void form_M(const Level& level, const Matrix& P, bool P_is_identity, factor::LevelSpace& w) {
  if (P_is_identity)
    w.M = RowMatrixMap(level.A, level.rows(), P.rows());
  else
    factor::times_symmetric(level.A, level.rows(), P, w.M);
}

// Hold row j of C at `target` inside ws.P_free (w.M following): saturate, and the row marked saturated
// and held. False if it cannot move (then held all the same: in the span saturated).
inline bool hold_row(const Level& level, const Constraints& cons, Buffers& ws, factor::LevelSpace& w, int j,
                     double target) {
  ws.c = cons.C.row(j).transpose();
  RowMatrix* M = level.A ? &w.M : nullptr;
  const bool moved = saturation::saturate(ws.Pc, ws.scaled, ws.P_free, M, w.Mc, ws.base, &ws.c, j, target);
  ws.saturated_rows.push_back(j);
  ws.held_free[j] = 1;
  return moved;
}

// No joint pinned (a level's or a path's start).
inline void unpin(Buffers& ws) {
  if (!ws.any_pinned) return;
  std::fill(ws.pinned.begin(), ws.pinned.end(), 0);
  ws.any_pinned = false;
}

// Hold joint j at `target` inside ws.P_free (w.M following); false (not held) if it cannot move.
inline bool hold_joint(const Level& level, Buffers& ws, factor::LevelSpace& w, int j, double target) {
  RowMatrix* M = level.A ? &w.M : nullptr;
  if (!saturation::saturate(ws.Pc, ws.scaled, ws.P_free, M, w.Mc, ws.base, nullptr, j, target)) return false;
  ws.saturated.push_back(j);
  return true;
}

// The level's state after the saturations ws.saturations.done, made again from its start (v, P, dim,
// held): ws.base, ws.P_free, w.M (not its Gram matrix), ws.held_free, the saturated joints and rows,
// `free` (saturation.py's replay). A joint that can no longer move is dropped from the saturations.
[[gnu::noinline, gnu::cold]] inline void replay(const Level& level, const Vector& v, const Matrix& P,
                                                bool P_is_identity, int dim, const std::vector<char>& held,
                                                const Constraints& cons, Buffers& ws, factor::LevelSpace& w,
                                                int& free) {
  ws.base = v;
  ws.P_free = P;
  if (level.A) form_M(level, P, P_is_identity, w);
  ws.held_free = held;
  unpin(ws);
  ws.saturated.clear();
  ws.saturated_rows.clear();
  free = dim;
  std::vector<saturation::Saturation>& done = ws.saturations.done;
  size_t kept = 0;
  for (const saturation::Saturation one : done) {
    const bool moved = one.kind == 0 ? hold_joint(level, ws, w, one.index, one.target)
                                     : hold_row(level, cons, ws, w, one.index, one.target);
    if (one.kind == 1 || moved) done[kept++] = one;
    free -= moved;
  }
  done.resize(kept);
}

}  // namespace sns
}  // namespace reljac

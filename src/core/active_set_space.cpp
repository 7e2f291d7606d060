// The buffers of the compiled inequality hierarchy (lex::Space, active_set.hpp): sized by the
// structure once (a step allocates nothing after its first), the hard rows pushed and their
// products with v and a step.
#include <algorithm>
#include <cmath>
#include <limits>

#include "active_set.hpp"

namespace reljac {
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
    const int m = level.A || level.rows() == 0 ? level.rows() : n;  // (no rows: none, whatever A is)
    rows = std::max(rows, m);
    total += m;
  }
  const int hard_room = 2 * n + 2 * k_room + 2 * total;
  if (warm.size() < levels.size()) warm.resize(levels.size());
  if (pending_G.size() < levels.size()) pending_G.resize(levels.size());
  if (pending.capacity() < levels.size()) pending.reserve(levels.size());
  for (WarmLevel& w : warm) {  // (sized here: a step allocates nothing)
    if (static_cast<int>(w.working.capacity()) < hard_room) w.working.reserve(hard_room);
    if (static_cast<int>(w.soft.size()) < rows) w.soft.resize(rows, 0);
  }
  if (static_cast<int>(guess.capacity()) < hard_room) guess.reserve(hard_room);
  if (identity_A.size() < levels.size()) {
    identity_A.resize(levels.size());
    identity_built.resize(levels.size());
    identity_column.resize(levels.size());
    identity_lower.resize(levels.size());
    identity_upper.resize(levels.size());
  }
  for (size_t i = 0; i < levels.size(); ++i)
    if (!levels[i].A && levels[i].rows() > 0 && identity_A[i].rows() != n) {
      identity_A[i].resize(n, n);
      identity_built[i].rows = -1;
      identity_column[i].resize(n);
      identity_lower[i].resize(n);
      identity_upper[i].resize(n);
    }
  rows = std::max(rows, n);  // (the least-norm fill: nv identity rows)
  if (n == nv && rows <= m_max && hard_room <= room && k_room == c_room) return;
  nv = n;
  m_max = std::max(rows, m_max);
  room = std::max(hard_room, room);
  c_room = k_room;
  N.resize(room, nv);
  box_written = false;
  h.resize(room);
  tags.resize(room);
  unit_column.resize(room);
  unit_coef.resize(room);
  hard_value.resize(room);
  hard_rate.resize(room);
  for (Vector* x : {&v, &v_prev, &delta, &offset, &gradient, &Pn, &Pn_again, &Pg, &rhs, &mu, &norms, &trial_v, &trial_mu}) x->resize(nv);
  for (Matrix* x : {&P, &P_W, &normals, &face_Pn}) x->resize(nv, nv);
  face_scale.resize(nv);
  face_along.resize(m_max, nv);
  J.resize(m_max, nv);
  M.resize(m_max, nv);
  fine.resize(m_max, nv);
  dual_G.resize(nv, nv);
  dual = Eigen::SelfAdjointEigenSolver<Matrix>(nv);
  AP.resize(m_max, nv);
  for (Matrix* x : {&pinned_G, &pinned_vectors}) x->resize(m_max, m_max);
  pinned_values.resize(m_max);
  pinned_rows = -1;
  for (Vector* x : {&value, &rate, &aim, &t, &c, &coefficients, &eig_values, &distance, &x, &trial_aim, &step_y})
    x->resize(m_max);
  G.resize(m_max, m_max);
  L.resize(m_max, m_max);
  F.resize(m_max, m_max);
  pivots.resize(m_max);
  pivot_z.resize(m_max);
  G_AP.resize(m_max, m_max);
  L_AP.resize(m_max, m_max);
  AP_gram_rows = L_AP_rows = -1;
  AP_spread = -1;
  eig_vectors.resize(m_max, m_max);
  Wt_room.resize(static_cast<Eigen::Index>(m_max) * nv);
  crossings.resize(2 * m_max);
  soft.assign(m_max, 0);
  fixed.assign(m_max, 0);
  trial_soft.assign(m_max, 0);
  for (std::vector<int>* x : {&chosen, &working, &kept, &violated, &trial_working}) x->reserve(std::max(room, m_max));
  fill_A = RowMatrix::Identity(nv, nv);
  fill_column.resize(nv);
  for (int j = 0; j < nv; ++j) fill_column[j] = j;
  fill_zero = Vector::Zero(nv);
  recovery_A.resize(c_room, nv);
  recovery_lower = Vector::Constant(c_room, -kInf);
  recovery_upper.resize(c_room);
  Cv.resize(c_room);
}

bool Space::box_rows_kept(const Constraints& cons) {
  const Eigen::Index n = cons.lo.size();
  bool same = box_written && static_cast<Eigen::Index>(box_finite.size()) == 2 * n;
  for (Eigen::Index j = 0; j < n && same; ++j)
    same = box_finite[j] == std::isfinite(cons.hi(j)) && box_finite[n + j] == std::isfinite(cons.lo(j));
  if (same) return true;
  box_finite.resize(2 * n);  // (2 nv: allocated once)
  for (Eigen::Index j = 0; j < n; ++j) {
    box_finite[j] = std::isfinite(cons.hi(j));
    box_finite[n + j] = std::isfinite(cons.lo(j));
  }
  box_written = true;
  return false;
}

}  // namespace lex
}  // namespace reljac

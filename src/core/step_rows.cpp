// Each task's rows and each level's system in the compiled step (Task.rows, Task.bound_rates,
// Controller._level, the specification); the task kinds are task_*.cpp; see step_impl.hpp.
#include <algorithm>
#include <cmath>

#include "step_impl.hpp"

namespace reljac {

// Task._feedback: gain e, each part capped by max_speed (search mode: e).
void Step::Impl::feedback(const CompiledTask& t, const Vector& e, Vector& f) const {
  if (newton) {
    f = e;
    return;
  }
  f = t.parameters.gain * e;
  if (t.parameters.has_max_speed) t.cap(f);
}

// Task.bound_rates: n = clip(e, lower, upper), f = gain (e - n) capped, b = ff - f, and the
// rates lower = b + gain (lower - n), upper = b + gain (upper - n) (+-inf on an open side);
// search mode: gain 1, no cap (bound_rates(search=True)).
void Step::Impl::bound_rates(const CompiledTask& t, const Vector& ff, Rows& out) const {
  const TaskParameters& p = t.parameters;
  const double gain = newton ? 1.0 : p.gain;
  const Vector& e = out.e;
  const long size = e.size();
  out.nearest.resize(size);
  out.gap.resize(size);
  for (long i = 0; i < size; ++i) {
    out.nearest(i) = std::min(std::max(e(i), p.lower(i)), p.upper(i));
    out.gap(i) = e(i) - out.nearest(i);
  }
  feedback(t, out.gap, out.f);
  out.rate = ff - out.f;
  out.rate_lower.resize(size);
  out.rate_upper.resize(size);
  for (long i = 0; i < size; ++i) {
    out.rate_lower(i) = std::isfinite(p.lower(i)) ? out.rate(i) + gain * (p.lower(i) - out.nearest(i)) : -kInf;
    out.rate_upper(i) = std::isfinite(p.upper(i)) ? out.rate(i) + gain * (p.upper(i) - out.nearest(i)) : kInf;
  }
}

// Task.rows: the task's terms, weighted (search mode: no feed-forward, gain 1, no cap: search.py's newton_rows).
void Step::Impl::task_rows(CompiledTask& t, const Vector& q, Rows& out) {
  out.bounded = false;
  if (!t.compute(*this, q, out)) return;
  const int nv = model.nv;
  const Matrix& J = out.J;
  Vector &f = out.f, &ff = out.ff;
  if (newton) ff.setZero();
  out.identity = false;
  if (t.parameters.bounded()) {  // Task.rows of a task with bounds: always weighted
    bound_rates(t, ff, out);
    const Vector& weight = t.parameters.weight;
    const int m = static_cast<int>(t.kept.size());
    out.A.resize(m, nv);
    out.b.resize(m);
    out.feedback.resize(m);
    out.lower.resize(m);
    out.upper.resize(m);
    for (int i = 0; i < m; ++i) {
      const int r = t.kept[i];
      const double w = weight(r);
      out.A.row(i) = w * J.row(r);
      out.b(i) = w * out.rate(r);
      out.feedback(i) = w * f(r);
      out.lower(i) = w * out.rate_lower(r);
      out.upper(i) = w * out.rate_upper(r);
    }
    out.bounded = true;
    return;
  }
  feedback(t, out.e, f);
  if (t.unit_weights) {
    out.A = J;
    out.b = ff - f;
    out.feedback = f;
    return;
  }
  const Vector& weight = t.parameters.weight;
  const int m = static_cast<int>(t.kept.size());
  out.A.resize(m, nv);
  out.b.resize(m);
  out.feedback.resize(m);
  for (int i = 0; i < m; ++i) {
    const int r = t.kept[i];
    out.A.row(i) = weight(r) * J.row(r);
    out.feedback(i) = weight(r) * f(r);
    out.b(i) = weight(r) * ff(r) - out.feedback(i);
  }
}

// Controller._level for every level; failing: a task whose rows are not finite.
void Step::Impl::assemble(const Vector& q, const std::vector<ExternalRows>& external, int& failing) {
  const int nv = model.nv;
  external_task_rows = &external;
  bounded_levels = false;
  rows.resize(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) task_rows(*tasks[i], q, rows[i]);
  level_systems.resize(levels.size());  // kept from step to step: their vectors keep their memory
  level_storage.resize(levels.size());
  for (size_t k = 0; k < levels.size(); ++k) {
    Level& level = level_systems[k];
    level.A = nullptr;
    level.identity_scale = level.extra_damping = 0.0;
    const std::vector<int>& members = levels[k];
    bool bounded = false;  // Controller._level: a task with bounds makes the level's rows inequalities
    for (int index : members) bounded = bounded || rows[index].bounded;
    if (!bounded) level.lower.resize(0), level.upper.resize(0);
    bounded_levels = bounded_levels || bounded;
    if (members.size() == 1 && rows[members[0]].identity) {
      const CompiledTask& t = *tasks[members[0]];
      level.b = rows[members[0]].b;
      level.identity_scale = t.identity_scale;
      level.mask = t.mask;
      if (bounded) level.lower = rows[members[0]].lower, level.upper = rows[members[0]].upper;
    } else {
      level.mask.resize(0);
      int m = 0;
      for (int index : members) {
        const Rows& r = rows[index];
        if (!r.b.allFinite() || (!r.identity && !r.A.allFinite())) {
          failing = index;
          return;
        }
        m += r.identity ? static_cast<int>(tasks[index]->kept.size()) : static_cast<int>(r.b.size());
      }
      RowMatrix& A = level_storage[k];
      A.resize(m, nv);
      level.b.resize(m);
      if (bounded) level.lower.resize(m), level.upper.resize(m);
      int at = 0;
      for (int index : members) {  // TaskRows.dense (and dense_bounds: (b, b) without bounds), stacked
        const Rows& r = rows[index];
        const CompiledTask& t = *tasks[index];
        const Vector& lower = r.bounded ? r.lower : r.b;
        const Vector& upper = r.bounded ? r.upper : r.b;
        if (r.identity) {
          for (int row : t.kept) {
            A.row(at).setZero();
            A(at, row) = t.identity_scale;
            if (bounded) level.lower(at) = lower(row), level.upper(at) = upper(row);
            level.b(at++) = r.b(row);
          }
        } else {
          const long n = r.b.size();
          A.middleRows(at, n) = r.A;
          level.b.segment(at, n) = r.b;
          if (bounded) level.lower.segment(at, n) = lower, level.upper.segment(at, n) = upper;
          at += static_cast<int>(n);
        }
      }
      level.A = A.data();
    }
    if (!newton && error_damping > 0 && level.A != nullptr) {  // (an identity level: undamped; a search: its own)
      double asked = 0.0;
      for (int index : members) {
        const double part = rows[index].feedback.squaredNorm();
        if (!std::isfinite(part)) {  // |gain e|^2 overflows: lambda^2 = inf would stop the level and call it met
          failing = index;
          return;
        }
        asked += part;
      }
      asked *= dt * dt;
      level.extra_damping = error_damping * std::max(asked - step_threshold * step_threshold, 0.0);
    }
  }
}

}  // namespace reljac

// One level of the compiled inequality hierarchy: the twin of reljac/ik/solvers/active_set.py (see
// active_set.hpp; its Gram-matrix algebra: active_set_gram/_pivoted/_step/_row_space.cpp). No
// allocation once Space is sized, for levels of at most kMidLevel (48) rows.
#include "active_set.hpp"
#include "active_set_face.hpp"
#include "active_set_gram.hpp"
#include "active_set_line.hpp"

#include <algorithm>
#include <cmath>

namespace reljac {
namespace lex {

namespace {

// max(1, |x_i| over the finite entries): the size rounding grows with (Python's _tolerance).
double size_of(const double* x, int n, double size) {
  for (int i = 0; i < n; ++i)
    if (std::isfinite(x[i])) size = std::max(size, std::abs(x[i]));
  return size;
}

// The first hard row reached along v + alpha delta, alpha in [0, 1] (Python's _first_hard): its
// alpha and index (which -1: none, alpha 1). A row with no freedom in the face s.P_W is not reached.
struct Hit {
  double alpha = 1.0;
  int which = -1;
};

Hit first_hard(Space& s, double tol) {
  Hit e;
  for (int j = 0; j < s.hard; ++j) {
    const double rate = s.hard_rate(j);
    if (!(rate > tol && s.hard_value(j) + rate > s.h(j) + tol)) continue;
    const double a = std::max(0.0, (s.h(j) - s.hard_value(j)) / rate);
    if (!(a < e.alpha) || std::find(s.working.begin(), s.working.end(), j) != s.working.end()) continue;
    // its freedom |P_W n|^2, as restrict reads it (the same bits: a row reached is kept)
    times_normal(s.P_W, j, s, s.Pn, s.P_W_is_P_in && s.P_identity);
    const double* n = s.N.row(j).data();
    if (dot(s.Pn.data(), s.Pn.data(), s.nv) < kPivotTolerance * std::max(1.0, dot(n, n, s.nv))) continue;
    e = {a, j};
  }
  return e;
}

// s.mu: the working set's multipliers per unit normal (P_in (g + N_W^T mu) = 0); |P_in g| returned.
// Called at the model's minimum in the face (P_W g = 0 up to rounding). The least squares of the
// normals B = P_in N_W^T against -g, not -P_in g: B^T g = B^T P_in g (B's columns are in range(P_in)),
// so the same mu up to rounding without the product by P_in; and |P_in g| = |B's part of g| (P_W g
// is 0: the rest of P_in g), the first w entries of Q^T g (the spec's P_in g: identity P_in only).
double multipliers(const Matrix& P_in, Space& s) {
  const int nv = s.nv, w = static_cast<int>(s.working.size());
  for (int a = 0; a < w; ++a) {
    times_normal(P_in, s.working[a], s, s.normals.col(a), s.P_identity);
    s.norms(a) = s.normals.col(a).norm();
  }
  s.rhs = -s.gradient;
  least_squares(s.normals.data(), nv, w, s.rhs.data(), s.mu.data());
  for (int a = 0; a < w; ++a) s.mu(a) *= s.norms(a);
  s.mu_size = w;
  if (s.P_identity) return s.gradient.norm();
  return s.rhs.head(std::min(w, nv)).norm();
}

// The model's rows s.J (the equality rows, then the soft ones, each in order: s.chosen), their
// aims s.t and the damped least-squares step s.delta from s.v in the face s.P_W, anchored at
// s.v_prev when lam2 > 0 (Python's _model_step); returns the rows' count. `P_in`: the face of
// s.guess is kept implicit (face_kept_implicit: s.P_W not formed), P_in its projector before the
// restrictions (identity rows whose joint-space step does not apply form it: their rows are
// P_W's rows).
int model_step(const Rows& rows, double lam2, Space& s, const Matrix* P_in = nullptr) {
  const int nv = s.nv, m = rows.m;
  const RowMatrixMap A(rows.A, m, nv);
  const Vector& v = s.v;
  s.chosen.clear();  // the equality rows, then the soft ones, each in order
  for (int i = 0; i < m; ++i)
    if (rows.equal(i)) s.chosen.push_back(i);
  for (int i = 0; i < m; ++i)
    if (s.soft[i]) s.chosen.push_back(i);
  const int r = static_cast<int>(s.chosen.size());
  const bool identity = s.P_W_is_P_in && s.P_identity;  // P_W = I: M = J
  // identity rows are read off their columns (Rows::times_chosen, transpose_times_chosen): J is
  // copied only where it is M
  const bool copied = !rows.column || identity;
  for (int a = 0; a < r; ++a) {
    const int i = s.chosen[a];
    if (copied) s.J.row(a) = A.row(i);
    s.t(a) = rows.equal(i) ? rows.lower[i] : s.aim(i);
  }
  auto J = s.J.topRows(r);
  auto M = s.M.topRows(r);
  bool downdated = false;  // s.G is M M^T, downdated from the level's kept Gram matrix (gram_downdated)
  // every row chosen, in order, in the face P_in: M = A P_in, the level's s.AP (the same bits)
  bool of_AP = s.P_W_is_P_in && r == m && s.AP_gram_rows == m;
  for (int a = 0; a < r && of_AP; ++a) of_AP = s.chosen[a] == a;
  if (of_AP) {
    // M is s.AP (not copied: the buffers are exchanged for the step below)
  } else if (identity) {
    M = J;
  } else if (rows.column) {  // identity rows (c e_j^T): damped, the step in joint space, M not formed
    if ((lam2 > 0.0 || r == nv) && identity_step(rows, r, lam2, s, P_in)) return r;
    if (P_in) {  // the Gram matrix's path reads P_W's rows: the guess's face formed
      face(*P_in, s, s.guess);
      P_in = nullptr;
    }
    // J P_W's rows are c times P_W's (the same bits); M M^T is formed from them, not read off
    // P_W's [columns, columns] block: where the face nearly misses the rows' joints that block is
    // P_W's rounding (an eigenvalue of 5e-10 at c = 578 was lost, and the level took no step)
    for (int a = 0; a < r; ++a) M.row(a) = rows.scale * s.P_W.row(rows.column[s.chosen[a]]);
  } else if (s.AP_rows == m && s.face_rows >= 0) {  // A P_W = A P_in - sum_k (A Pn_k) (Pn_k / pivot_k)^T: the face's restrictions on
                                // the level's A P_in (Space::face_Pn), not a product by P_W (equal up to rounding)
    bool untouched = r == m && s.AP_gram_rows == m;  // no row moves along a restriction: M is A P_in
    for (int a = 0; a < r; ++a) {  // the rows' A Pn_k first
      const double* j_row = s.J.row(a).data();
      untouched = untouched && s.chosen[a] == a;
      for (int k = 0; k < s.face_rows; ++k) {
        const double along = dot(j_row, s.face_Pn.col(k).data(), nv);
        s.face_along(a, k) = along;
        untouched = untouched && along == 0.0;
      }
    }
    // every row, in order, none along a held row's direction (a foot's rows and a held arm
    // joint): M is the level's A P_in bit for bit, its Gram matrix the one kept (neither copied
    // nor formed again); else each row of A P_in less its restrictions
    of_AP = untouched;
    for (int a = 0; a < r && !of_AP; ++a) {
      double* row = s.M.row(a).data();
      const double* ap = s.AP.row(s.chosen[a]).data();
      std::copy(ap, ap + nv, row);
      for (int k = 0; k < s.face_rows; ++k) {
        const double along = s.face_along(a, k);
        if (along == 0.0) continue;  // (adds nothing)
        factor::axpy(row, s.face_Pn.col(k).data(), -along * s.face_scale(k), nv);
      }
    }
    downdated = !of_AP && s.AP_gram_rows == m && r <= nv && gram_downdated(r, s);
  } else {  // J P_W^T (P_W symmetric up to rounding; exactly, and M is the level's A P_in bit for bit,
            // when no row is held and every row is chosen), row by row over J's nonzeros
    for (int a = 0; a < r; ++a) {
      double* row = s.M.row(a).data();
      std::fill(row, row + nv, 0.0);
      const double* j_row = s.J.row(a).data();
      {
        factor::Axpys sum(row, nv);
        for (int j = 0; j < nv; ++j)
          if (j_row[j] != 0.0) sum.add((P_in ? *P_in : s.P_W).col(j).data(), j_row[j]);
      }
      for (int k = 0; P_in && k < s.face_rows; ++k) {  // (implicit: J P_in less the restrictions')
        const double* pn = s.face_Pn.col(k).data();
        factor::axpy(row, pn, -dot(j_row, pn, nv) * s.face_scale(k), nv);
      }
    }
  }
  // the damped model's anchor: none undamped, 0 for a guess (offset_in_face)
  const bool anchored = lam2 > 0.0 && !P_in;
  if (anchored && identity)
    s.offset = v - s.v_prev;  // (P_W = I)
  else if (lam2 > 0.0)
    offset_in_face(P_in, s);
  else
    s.offset.setZero();
  rows.times_chosen(J, s.chosen, v, s.c.head(r));  // c = t - J v
  s.c.head(r) = s.t.head(r) - s.c.head(r);
  if (anchored && of_AP)
    s.c.head(r).noalias() += s.AP.topRows(r) * s.offset;
  else if (anchored)
    s.c.head(r).noalias() += M * s.offset;
  const bool deficient = s.AP_rows < 0 && r == m;  // (no A P_in: m above the dimension, or A's rows dependent: solve_one)
  // M = A P_in (of_AP): its rows are s.AP's, which the step reads as s.M (their buffers exchanged
  // and back: nothing copied; the step writes no row of M), and its Gram matrix the one kept, clear
  // of the rank cut where smallest_singular_value found it so (s.AP_clear: not tested again)
  if (downdated && clear_of(r, 0.0, s)) {  // (its Gram matrix is M M^T downdated: gram_downdated)
    damped_step_on_gram(r, lam2, s, deficient, true);
  } else {  // (and where a downdated one is not clear of the rank cut: formed from M, its Cholesky
            // factor not tried again: the pivoted or the eigen path, which decide rank alike)
    if (of_AP) s.M.swap(s.AP);
    damped_step(r, lam2, s, of_AP, deficient || downdated, of_AP && s.AP_clear);
    if (of_AP) s.M.swap(s.AP);
    if (of_AP && lam2 == 0.0 && s.step_y_known) {  // its factor, G_AP's own: kept for the row space
      s.L_AP.topLeftCorner(r, r) = s.L.topLeftCorner(r, r);
      s.L_AP_rows = r;
    }
  }
  s.delta -= s.offset;
  const bool in_face = !anchored && within_face(rows, r, s);  // (its rounding cannot take it off the face)
  if (!identity && !in_face) {  // projected once more onto the face (Python's comment)
    times_W(P_in, s.delta.data(), s.Pn.data(), s);
    s.delta = s.Pn;
  }
  return r;
}


// Hard row j's own rounding allowance on its bound at value x (Python's _allowance).
double allowance(double x, double h) { return kBoundTolerance * std::max({1.0, std::abs(x), std::abs(h)}); }

// The guess s.guess / s.soft (Python's _guessed): s.v (from s.v_prev) on the guessed rows' bounds,
// then the model's minimum there; true when optimal (then s.working is the guess kept, s.mu its
// multipliers), false with s.v back at s.v_prev.
bool guessed(const Rows& rows, const Matrix& P_in, double lam2, Space& s) {
  const int nv = s.nv, m = rows.m;
  // the face kept implicit (P_W not formed: a guess that fails forms the search's), but for undamped
  // identity rows, whose model step reads P_W's rows (damped, the joint-space step reads a few of
  // its entries; where it does not apply, model_step forms it)
  const bool implicit = (!rows.column || lam2 > 0.0) && static_cast<int>(s.guess.size()) < nv;
  if (implicit)
    face_kept_implicit(P_in, s, s.guess, true);
  else
    face(P_in, s, s.guess, true);
  const int r = model_step(rows, lam2, s, implicit ? &P_in : nullptr);
  s.v += s.delta;
  // the move stays in range(P_in) (Python's comment)
  s.Pg = s.v - s.v_prev;
  if (s.P_identity) {
    s.rhs.setZero();
  } else {
    factor::times_vector(P_in, s.Pg.data(), s.rhs.data());
    s.rhs -= s.Pg;
  }
  bool optimal = s.rhs.norm() <= kMetTolerance * std::max(1.0, s.Pg.norm());
  s.hard_products(true, false);
  for (int j = 0; j < s.hard && optimal; ++j)
    optimal = s.hard_value(j) <= s.h(j) + allowance(s.hard_value(j), s.h(j)) ||
              std::find(s.guess.begin(), s.guess.end(), j) != s.guess.end();
  bool bounded = false, any_soft = false;  // (a level of equality rows alone has no soft set to read)
  for (int i = 0; i < m; ++i) {
    bounded = bounded || !rows.equal(i);
    any_soft = any_soft || s.soft[i];
  }
  if (optimal && bounded) {  // the soft set read anew at v is the same (Python's _update_soft on a copy, 0 changes)
    rows.times(s.v, nv, s.x.head(m));
    const double tol = kBoundTolerance * size_of(rows.upper, m, size_of(rows.lower, m, size_of(s.x.data(), m, 1.0)));
    for (int i = 0; i < m && optimal; ++i) {
      if (rows.equal(i)) continue;
      const double y = s.x(i);
      if (y > rows.upper[i] + tol)
        optimal = s.soft[i] && s.aim(i) == rows.upper[i];
      else if (y < rows.lower[i] - tol)
        optimal = s.soft[i] && s.aim(i) == rows.lower[i];
      else
        optimal = !s.soft[i] || std::abs(y - s.aim(i)) <= tol;
    }
    // a soft row pulled onto its bound from inside: the level does not need it there (Python's;
    // the soft rows' values at v_prev only)
    for (int i = 0; i < m && optimal && any_soft; ++i) {
      if (!s.soft[i]) continue;
      const double start = rows.times_row(i, s.v_prev, nv);
      optimal = !(std::abs(s.x(i) - s.aim(i)) <= tol && rows.lower[i] - tol <= start && start <= rows.upper[i] + tol);
    }
  }
  s.mu_size = -1;
  const int w = static_cast<int>(s.guess.size());
  if (optimal && w) {  // every multiplier of the right sign, and a row v was moved onto pushed against
    auto residual = s.x.head(r);
    rows.times_chosen(s.J.topRows(r), s.chosen, s.v, residual);
    residual -= s.t.head(r);
    rows.transpose_times_chosen(s.J.topRows(r), s.chosen, residual, s.gradient);
    s.gradient += lam2 * (s.v - s.v_prev);
    s.working.swap(s.guess);  // (multipliers() reads s.working)
    const double least = kMultiplierTolerance * std::max(1.0, multipliers(P_in, s));
    for (int a = 0; a < w && optimal; ++a) {
      const int j = s.working[a];
      const double start = s.unit_column[j] >= 0 ? s.unit_coef(j) * s.v_prev(s.unit_column[j])
                                                 : s.N.row(j).dot(s.v_prev);
      const bool moved = start < s.h(j) - allowance(start, s.h(j));
      optimal = s.mu(a) >= -least && !(moved && s.mu(a) <= least);
    }
    s.working.swap(s.guess);
  }
  if (!optimal) {
    s.v = s.v_prev;
    s.mu_size = -1;
    return false;
  }
  s.working.swap(s.guess);
  return true;
}

}  // namespace

int solve_level(const Rows& rows, const Matrix& P_in, double lam2, int cap, Space& s, bool& capped, bool guess) {
  const int nv = s.nv, m = rows.m;
  const RowMatrixMap A(rows.A, m, nv);
  Vector& v = s.v;
  s.v_prev = v;
  capped = false;
  s.guess_taken = guess && guessed(rows, P_in, lam2, s);
  if (s.guess_taken) return 0;
  rows.times(v, nv, s.value.head(m));
  double tol = kBoundTolerance * size_of(rows.upper, m, size_of(rows.lower, m, size_of(s.value.data(), m, 1.0)));
  for (int i = 0; i < m; ++i) {
    const double x = s.value(i);
    s.soft[i] = !rows.equal(i) && (x > rows.upper[i] + tol || x < rows.lower[i] - tol);
    if (s.soft[i]) s.aim(i) = x > rows.upper[i] ? rows.upper[i] : rows.lower[i];
  }
  s.hard_products(true, false);
  // the working set the level above ended with (s.working as it left it), then the other rows on
  // their bound, each within its own rounding allowance (a huge bound elsewhere does not widen it)
  const int carried = static_cast<int>(s.working.size());
  for (int j = 0; j < s.hard; ++j)
    if (s.hard_value(j) >= s.h(j) - kBoundTolerance * std::max({1.0, std::abs(s.hard_value(j)), std::abs(s.h(j))}) &&
        std::find(s.working.begin(), s.working.begin() + carried, j) == s.working.begin() + carried)
      s.working.push_back(j);
  int changes = 0;
  capped = false;
  s.mu_size = -1;
  bool face_known = false;  // s.P_W is the face of s.working (see below)
  bool trial = false;       // a doubtful release is being tried: the state before it in s.trial_*
  while (true) {
    // the spec forms the face anew at every iteration; here only after a release: an entering or
    // leaving soft row leaves it as it was, and a hard row held at the end of the working set is
    // one more restriction of it, the same operations in the same order (the same bits)
    if (!face_known) face(P_in, s, s.working);
    face_known = true;
    const int r = model_step(rows, lam2, s);
    auto J = s.J.topRows(r);
    rows.times(v, nv, s.value.head(m));
    rows.times(s.delta, nv, s.rate.head(m));
    s.hard_products(true, true);
    double size = size_of(s.value.data(), m, 1.0);  // the rounding allowance (Python's _tolerance)
    size = size_of(s.rate.data(), m, size);
    size = size_of(s.hard_value.data(), s.hard, size);
    size = size_of(s.hard_rate.data(), s.hard, size);
    const double step_tol = kBoundTolerance * size;
    const Hit hit = first_hard(s, step_tol);
    auto Jd = s.coefficients.head(r);
    auto residual = s.distance.head(r);
    rows.times_chosen(J, s.chosen, s.delta, Jd);
    rows.times_chosen(J, s.chosen, v, residual);
    residual -= s.t.head(r);
    double along = 0.0;
    for (int j = 0; j < nv; ++j) along += s.delta(j) * (v(j) - s.v_prev(j));
    const double slope = 2.0 * (Jd.dot(residual) + lam2 * along);
    const double alpha = line_minimum(rows, s, slope, Jd.dot(Jd) + lam2 * s.delta.squaredNorm());
    if (hit.which >= 0 && hit.alpha <= alpha) {  // a hard row reached first: held from here
      v += hit.alpha * s.delta;
      if (restrict(s.P_W, hit.which, s)) {
        s.working.push_back(hit.which);
        s.P_W_is_P_in = false;
      }
      rows.times(v, nv, s.x.head(m));
      changes += 1 + update_soft(rows, s, step_tol);
    } else {
      v += alpha * s.delta;
      rows.times(v, nv, s.x.head(m));
      const int changed = update_soft(rows, s, step_tol);
      changes += changed;
      if (changed == 0) {  // at the model's minimum (up to rounding): the multipliers decide
        s.mu_size = -1;
        if (s.working.empty()) break;
        rows.times_chosen(J, s.chosen, v, s.x.head(r));
        s.x.head(r) -= s.t.head(r);
        rows.transpose_times_chosen(J, s.chosen, s.x.head(r), s.gradient);
        s.gradient += lam2 * (v - s.v_prev);
        const double norm = multipliers(P_in, s);
        int worst = 0;
        for (int a = 1; a < s.mu_size; ++a)
          if (s.mu(a) < s.mu(worst)) worst = a;
        if (s.mu(worst) >= -kMultiplierTolerance * std::max(1.0, norm)) {
          if (trial) break;
          worst = doubtful(rows, norm, s);
          if (worst < 0) break;
          trial = true;
          keep_trial(rows, lam2, s);
        }
        if (changes >= cap) {
          capped = true;
          break;
        }
        s.working.erase(s.working.begin() + worst);
        face_known = false;
        ++changes;
        continue;
      }
    }
    if (changes >= cap) {
      capped = true;
      break;
    }
  }
  if (trial && undo_trial(rows, lam2, capped, s)) capped = false;
  return changes;
}

}  // namespace lex
}  // namespace reljac

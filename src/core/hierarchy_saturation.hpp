// The constraints' geometry inside the compiled SNS solver: how far a level's correction may go
// before a joint's bound or a row of C stops it (max_scale), the saturation that then holds that
// joint or row on its bound inside range(P) (saturate), and a level's record of them (Saturations). Private to hierarchy.cpp (inline: the
// solver's inner loop); the Python twin is reljac/ik/solvers/saturation.py.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include "hierarchy.hpp"
#include "small_dense.hpp"

namespace reljac {
namespace saturation {

struct Limiting {
  double scale;
  int kind;   // 0 joint, 1 row of C, -1 nothing
  int index;
};

template <typename X, typename Bound>
inline void scan(const X& x, const X& dx, const Vector* low, const Bound& high, const std::vector<char>* held,
          int which, double& s, int& kind, int& limiting, int& worst, int& worst_kind, double& worst_violation) {
  // rounding in x and dx grows with their size: a crossing smaller than that does not count
  const double size = std::max({1.0, x.size() ? x.cwiseAbs().maxCoeff() : 0.0, dx.size() ? dx.cwiseAbs().maxCoeff() : 0.0});
  const double tol = kBoundTolerance * size;
  for (int j = 0; j < x.size(); ++j) {
    if (held && (*held)[j]) continue;  // saturated row: c^T delta is 0 up to rounding
    const double b = x(j), d = dx(j), hj = high(j);
    const double lj = low ? (*low)(j) : -std::numeric_limits<double>::infinity();
    const double violation = b > hj ? b - hj : lj - b;
    if (violation > tol) {
      if (violation - tol > worst_violation) {
        worst = j;
        worst_kind = which;
        worst_violation = violation - tol;
      }
      continue;
    }
    const double end = b + d;
    double ratio;
    if (end > hj + tol) {
      ratio = (hj - b) / d;
    } else if (end < lj - tol) {
      ratio = (lj - b) / d;
    } else {
      continue;
    }
    ratio = std::max(ratio, 0.0);  // a bound met to rounding: a tie at 0 goes to the first (saturation.py)
    if (ratio < s) {
      s = ratio;
      kind = which;
      limiting = j;
    }
  }
}

// Largest s in [0, 1] keeping base + s delta inside the constraints; s = -1 when base violates one.
// Rows marked in `held` (saturated) are skipped.
inline Limiting max_scale(const Vector& base, const Vector& delta, const Constraints& cons, const std::vector<char>& held,
                   Vector& Cb, Vector& Cd) {
  double s = 1.0, worst_violation = 0.0;
  int kind = -1, limiting = -1, worst = -1, worst_kind = -1;
  scan(base, delta, &cons.lo, cons.hi, nullptr, 0, s, kind, limiting, worst, worst_kind, worst_violation);
  if (const int k = cons.rows()) {  // Cb, Cd: room for all of C's rows (no allocation when k changes)
    if (Cb.size() < cons.C.rows()) Cb.resize(cons.C.rows());
    if (Cd.size() < cons.C.rows()) Cd.resize(cons.C.rows());
    auto Cb_k = Cb.head(k), Cd_k = Cd.head(k);
    Cb_k.noalias() = cons.used_C() * base;
    Cd_k.noalias() = cons.used_C() * delta;
    scan(Cb_k, Cd_k, nullptr, cons.used_d(), &held, 1, s, kind, limiting, worst, worst_kind, worst_violation);
  }
  if (worst >= 0) return {-1.0, worst_kind, worst};
  if (kind < 0) return {1.0, -1, -1};
  return {std::max(s, 0.0), kind, limiting};
}

// Fix c^T v = target (joint j when c == nullptr) inside range(P), in place; false if it cannot move.
// M (when given) follows as A P for the new P. Pc, scaled, Mc: buffers (nv, nv, rows of M).
inline bool saturate(Vector& Pc, Vector& scaled, Matrix& P, RowMatrix* M, Vector& Mc, Vector& base, const Vector* c,
                     int j, double target) {
  if (c)
    Pc.noalias() = P * *c;
  else
    Pc = P.col(j);
  double pivot = c ? c->dot(Pc) : Pc(j);
  if (pivot < kPivotReproject * (c ? c->squaredNorm() : 1.0)) {  // a cancellation: P (P c) (saturation.py)
    scaled.noalias() = P * Pc;
    Pc.swap(scaled);
    pivot = Pc.squaredNorm();
  }
  if (pivot < kPivotTolerance) return false;
  const double value = c ? c->dot(base) : base(j);
  base += Pc * ((target - value) / pivot);
  scaled = Pc / pivot;
  const Eigen::Index n = P.rows();
  for (Eigen::Index k = 0; k < n; ++k)  // P -= Pc scaled^T, column by column (axpys: see factor::axpy)
    if (scaled(k) != 0.0) factor::axpy(P.data() + k * n, Pc.data(), -scaled(k), n);
  if (M) {
    if (c)
      Mc.noalias() = *M * *c;
    else
      Mc = M->col(j);
    for (Eigen::Index i = 0; i < M->rows(); ++i)  // M -= Mc scaled^T, row by row (M is row-major)
      if (Mc(i) != 0.0) factor::axpy(M->data() + i * n, scaled.data(), -Mc(i), n);
  }
  if (!c) {  // exactly: a saturated joint never moves again
    base(j) = target;
    P.row(j).setZero();
    P.col(j).setZero();
    if (M) M->col(j).setZero();
  }
  return true;
}

// One saturation of a level, as made (saturation.py's Saturation): a joint (kind 0) or a row of C
// (kind 1) held at `target`, found at `scale`.
struct Saturation {
  int kind;
  int index;
  double target;
  double scale;
};

// A level's saturations in order (`done`), and the exchanges tried at ties of two rows of C reached
// at once: saturation.py's Saturations, whose docstring says why.
class Saturations {
 public:
  std::vector<Saturation> done;

  void clear() {
    done.clear();
    exchanged_.clear();
    trial_ = false;
  }
  void reserve(size_t n) {  // (no allocation inside a solve)
    done.reserve(n);
    before_.reserve(n);
    exchanged_.reserve(2 * n);
  }
  void made(int kind, int index, double target, double scale) { done.push_back({kind, index, target, scale}); }

  // True when `row` (reached at `scale`, at `bound`) is tried instead of the latest row held at
  // once, not exchanged before: that one is then out of `done` (made again by the caller's replay).
  bool exchange(int row, double bound, double scale) {
    return scale <= kReachedAtOnce && exchange_at_once(row, bound, scale);
  }

  // Whether the candidate after an exchange is stopped by the row let go (or its base is outside a
  // constraint): then `done` is back to SNS's own (made again by the caller's replay).
  bool failed_trial(const Limiting& lim) {
    if (!trial_) return false;
    trial_ = false;
    if (lim.scale >= 0 && !(lim.scale < 1.0 && lim.kind == 1 && lim.index == let_go_)) return false;
    done = before_;
    done.push_back(row_);
    return true;
  }

 private:
  // exchange's search, out of the solver loop's code (rare)
  __attribute__((noinline)) bool exchange_at_once(int row, double bound, double scale) {
    for (int a = static_cast<int>(done.size()) - 1; a >= 0; --a) {
      const Saturation& held = done[a];
      if (held.kind != 1 || held.scale > kReachedAtOnce ||
          std::find(exchanged_.begin(), exchanged_.end(), held.index) != exchanged_.end())
        continue;
      trial_ = true;
      before_ = done;
      let_go_ = held.index;
      row_ = {1, row, bound, scale};
      exchanged_.push_back(held.index);
      exchanged_.push_back(row);
      done.erase(done.begin() + a);
      return true;
    }
    return false;
  }

  std::vector<int> exchanged_;      // rows exchanged (once each per level)
  bool trial_ = false;              // an exchange being tried: `done` before it, the row let go,
  std::vector<Saturation> before_;  // and the row tried instead as SNS would have held it (at its
  int let_go_ = -1;                 // bound)
  Saturation row_{};
};

}  // namespace saturation
}  // namespace reljac

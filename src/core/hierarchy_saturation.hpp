// The constraints' geometry inside the compiled SNS solver: how far a level's correction may go
// before a joint's bound or a row of C stops it (max_scale), the saturation that then holds that
// joint or row on its bound inside range(P) (saturate), and a level's record of them and of the ties
// it explores (Saturations). Private to hierarchy.cpp (inline: the solver's inner loop); the Python
// twin is reljac/ik/solvers/saturation.py.
#pragma once

#include <algorithm>
#include <limits>
#include <utility>
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

// max(1, |x|, |dx|) (max norms): rounding in x and dx grows with their size, and a crossing smaller
// than a tolerance of this scale does not count (saturation.py's rounding_scale).
template <typename X>
inline double rounding_scale(const X& x, const X& dx) {
  return std::max({1.0, x.size() ? x.cwiseAbs().maxCoeff() : 0.0, dx.size() ? dx.cwiseAbs().maxCoeff() : 0.0});
}

template <typename X, typename Bound>
inline void scan(const X& x, const X& dx, const Vector* low, const Bound& high, const std::vector<char>* held,
          int which, double& s, int& kind, int& limiting, int& worst, int& worst_kind, double& worst_violation) {
  const double tol = kBoundTolerance * rounding_scale(x, dx);
  for (int j = 0; j < x.size(); ++j) {
    if (held && (*held)[j]) continue;  // saturated row (pinned joint): c^T delta is 0 up to rounding
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
// Rows marked in `held` (saturated) are skipped, and joints marked in `pinned` (when given: joints
// saturate refused, whose delta_j is rounding).
inline Limiting max_scale(const Vector& base, const Vector& delta, const Constraints& cons, const std::vector<char>& held,
                   const std::vector<char>* pinned, Vector& Cb, Vector& Cd) {
  double s = 1.0, worst_violation = 0.0;
  int kind = -1, limiting = -1, worst = -1, worst_kind = -1;
  scan(base, delta, &cons.lo, cons.hi, pinned, 0, s, kind, limiting, worst, worst_kind, worst_violation);
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

// Joint j, which saturate refused, crosses its bound by rounding only (saturation.py's
// crossing_is_rounding): base + delta within kPinTolerance x max(1, |base|, |delta|) of its box.
[[gnu::noinline, gnu::cold]] inline bool crossing_is_rounding(const Vector& base, const Vector& delta,
                                                               const Constraints& cons, int j) {
  const double end = base(j) + delta(j);
  return std::max({end - cons.hi(j), cons.lo(j) - end, 0.0}) <= kPinTolerance * rounding_scale(base, delta);
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

// A level's saturations in order (`done`), and the ties of two rows of C that SNS's own path broke
// by order, explored after it as paths of their own: saturation.py's Saturations, whose docstring
// says why.
class Saturations {
 public:
  std::vector<Saturation> done;

  void clear() {
    done.clear();
    tried_.clear();
    paths_ = next_ = 0;
    pushed_ = pushed_taken_ = false;
  }
  void reserve(size_t n) {  // (no allocation inside a solve)
    done.reserve(n);
    for (Path& path : room_) path.prefix.reserve(n);
    pushed_path_.prefix.reserve(n);
    tried_.reserve(kMaxTiePaths + 1);
  }
  void add(int kind, int index, double target, double scale) { done.push_back({kind, index, target, scale}); }

  // `row` reached at `scale`, about to be held on top of the others: when at once, the latest row or
  // joint held at once (with which it was not tried) is let go in a path kept for later.
  void tie(int row, double scale) {
    if (scale <= kReachedAtOnce && paths_ < kMaxTiePaths) keep_path(row);
  }

  // `row` pushed beyond its bound by the last saturation (a row held at once, its bound a hair past
  // the other's at their vertex: a tie too): that row let go in a path kept for later.
  // The path is explored before the others (one per level).
  void pushed_out(int row) {
    if (done.empty() || pushed_) return;
    const Saturation& last = done.back();
    const std::pair<int, int> pair{last.index, row};
    if (last.kind != 1 || last.scale > kReachedAtOnce || std::find(tried_.begin(), tried_.end(), pair) != tried_.end())
      return;
    tried_.push_back(pair);
    pushed_ = true;
    pushed_path_.prefix.assign(done.begin(), done.end() - 1);
    pushed_path_.row = row;
  }

  // The row to hold in the next path kept (-1: none left); `done` becomes the saturations to make
  // again before it (by the caller's replay).
  int next_path() {
    if (pushed_ && !pushed_taken_) {
      pushed_taken_ = true;
      done.swap(pushed_path_.prefix);
      return pushed_path_.row;
    }
    if (next_ == paths_) return -1;
    Path& path = room_[next_++];
    done.swap(path.prefix);
    return path.row;
  }

 private:
  struct Path {
    std::vector<Saturation> prefix;  // the saturations to make again
    int row = -1;                    // the row then held where it is
  };

  [[gnu::noinline]] void keep_path(int row) {  // (rare: out of the solver loop's code)
    for (int a = static_cast<int>(done.size()) - 1; a >= 0; --a) {
      const Saturation& first = done[a];
      if (first.scale > kReachedAtOnce) continue;
      const std::pair<int, int> pair{first.kind == 1 ? first.index : -1 - first.index, row};  // (a joint j: -1 - j)
      if (std::find(tried_.begin(), tried_.end(), pair) != tried_.end()) continue;
      tried_.push_back(pair);
      Path& path = room_[paths_++];
      path.prefix.assign(done.begin(), done.begin() + a);
      path.prefix.insert(path.prefix.end(), done.begin() + a + 1, done.end());
      path.row = row;
      return;
    }
  }

  std::vector<std::pair<int, int>> tried_;  // (row, or -1 - joint, held first; row reached at once)
  Path room_[kMaxTiePaths];
  int paths_ = 0, next_ = 0;  // paths kept, and the next to explore
  Path pushed_path_;          // a row pushed out's path (pushed_out), and whether it is kept, taken
  bool pushed_ = false, pushed_taken_ = false;
};

}  // namespace saturation
}  // namespace reljac

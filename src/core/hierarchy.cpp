// The compiled SNS solver; see hierarchy.hpp and reljac/ik/hierarchy.py (its specification).
#include "hierarchy.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace reljac {

double Policy::singular_damping(double smallest) const {
  if (smallest >= threshold) return 0.0;
  const double r = smallest / threshold;
  return max_damping * max_damping * (1.0 - r * r);
}

namespace {

constexpr int kSmallLevel = 12;  // levels with at most this many rows factor without allocating
using SmallGram = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kSmallLevel, kSmallLevel>;

// A x for a level.
Vector times(const Level& level, const Vector& x, int nv) {
  if (level.A != nullptr) return RowMatrixMap(level.A, level.rows(), nv) * x;
  Vector y = level.identity_scale * x;
  if (level.mask.size()) y.array() *= level.mask.array();
  return y;
}

struct Step {
  Vector delta, A_delta;
  bool has_W = false;     // false: an identity level (it leaves no null space)
  bool full_rank = false;  // W W^T = M^T G^-1 M (Cholesky); else W = M^T U_scaled
  Matrix U_scaled;         // U_r Sigma_r^-1 (m x rank), when not full rank
  int rank = 0;
  double damping = 0.0;
  double smallest = std::numeric_limits<double>::infinity();
};

// Damped least-squares correction delta (in range(P)) of A delta = residual.
// The same matrix function as the Python solver's eigen-decomposition of G = M M^T. A level
// whose G - shift I has a Cholesky factor (shift = threshold^2, and at least the rank
// tolerance) has full rank and no singular damping: it is solved through a Cholesky factor of
// G + lambda^2 I; only the others need the eigen-decomposition.
// Gram is the (m x m) matrix type: fixed-capacity (no allocation) for small levels.
template <typename Gram>
//
// `known_singular`: an earlier candidate of this level failed that test with shift = threshold^2;
// saturations only shrink G's eigenvalues (interlacing), so the test would fail again: skip it.
Step correction(const Level& level, const Matrix& M, const Matrix& P, const Vector& residual,
                const Policy& policy, int nv, bool& known_singular) {
  Step step;
  if (level.A == nullptr) {  // A = c diag(mask): (c P)^+ = P / c on the kept rows
    step.delta = P * residual / level.identity_scale;
    step.A_delta = times(level, step.delta, nv);
    return step;
  }
  step.has_W = true;
  const int m = level.rows();
  Gram G = M * M.transpose();
  const double shift = std::max(policy.threshold * policy.threshold, kRankTolerance * std::max(1.0, G.trace()));
  const bool fixed_shift = shift == policy.threshold * policy.threshold;
  bool full_rank_test = false;
  if (m > 0 && !(known_singular && fixed_shift)) {
    Gram shifted = G;
    shifted.diagonal().array() -= shift;
    full_rank_test = Eigen::LLT<Gram>(shifted).info() == Eigen::Success;  // every sigma^2 > shift
    if (!full_rank_test && fixed_shift) known_singular = true;
  }
  if (full_rank_test) {
    step.full_rank = true;
    step.rank = m;
    step.smallest = -1.0;  // not needed to solve: computed for the report of the chosen candidate
    step.damping = level.extra_damping;
    G.diagonal().array() += step.damping;
    step.delta = M.transpose() * G.llt().solve(residual);
    step.A_delta = times(level, step.delta, nv);
    return step;
  }
  Eigen::SelfAdjointEigenSolver<Gram> eig(G);  // ascending
  const Vector& e = eig.eigenvalues();
  const double largest = m ? e(m - 1) : 0.0;
  int rank = 0;
  for (int i = 0; i < m; ++i) rank += e(i) > kRankTolerance * std::max(1.0, largest);
  step.rank = rank;
  step.smallest = rank == m && rank > 0 ? std::sqrt(e(m - rank)) : 0.0;
  step.damping = policy.singular_damping(step.smallest) + level.extra_damping;
  const auto U_r = eig.eigenvectors().rightCols(rank);
  const auto e_r = e.tail(rank);
  const Vector coefficients = (U_r.transpose() * residual).array() / (e_r.array() + step.damping);
  step.delta = M.transpose() * (U_r * coefficients);
  step.U_scaled = U_r * e_r.array().sqrt().inverse().matrix().asDiagonal();
  step.A_delta = times(level, step.delta, nv);
  return step;
}

// The smallest singular value of M (full rank), for a report.
double smallest_singular_value(const Matrix& M) {
  Eigen::SelfAdjointEigenSolver<Matrix> values(M * M.transpose(), Eigen::EigenvaluesOnly);
  return std::sqrt(std::max(values.eigenvalues()(0), 0.0));
}

// W^T (rank x nv) with W W^T the projector onto the level's rows inside range(P) (M = A P).
Matrix row_space(const Step& step, const Matrix& M) {
  if (step.full_rank) {  // W^T = L^-1 M with G = L L^T
    const Matrix G = M * M.transpose();
    return G.llt().matrixL().solve(M);
  }
  return step.U_scaled.transpose() * M;
}

struct Limiting {
  double scale;
  int kind;   // 0 joint, 1 row of C, -1 nothing
  int index;
};

void scan(const Vector& x, const Vector& dx, const Vector* low, const Vector& high, const std::vector<char>* held,
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
    if (ratio < s) {
      s = ratio;
      kind = which;
      limiting = j;
    }
  }
}

// Largest s in [0, 1] keeping base + s delta inside the constraints; s = -1 when base violates one.
// Rows marked in `held` (saturated) are skipped.
Limiting max_scale(const Vector& base, const Vector& delta, const Constraints& cons, const std::vector<char>& held) {
  double s = 1.0, worst_violation = 0.0;
  int kind = -1, limiting = -1, worst = -1, worst_kind = -1;
  scan(base, delta, &cons.lo, cons.hi, nullptr, 0, s, kind, limiting, worst, worst_kind, worst_violation);
  if (cons.C.rows()) {
    const Vector Cb = cons.C * base, Cd = cons.C * delta;
    scan(Cb, Cd, nullptr, cons.d, &held, 1, s, kind, limiting, worst, worst_kind, worst_violation);
  }
  if (worst >= 0) return {-1.0, worst_kind, worst};
  if (kind < 0) return {1.0, -1, -1};
  return {std::max(s, 0.0), kind, limiting};
}

// Fix c^T v = target (joint j when c == nullptr) inside range(P), in place; false if it cannot move.
bool saturate(Matrix& P, Matrix* M, Vector& base, const Vector* c, int j, double target) {
  const Vector Pc = c ? Vector(P * *c) : Vector(P.col(j));
  const double pivot = c ? c->dot(Pc) : Pc(j);
  if (pivot < kPivotTolerance) return false;
  const double value = c ? c->dot(base) : base(j);
  base += Pc * ((target - value) / pivot);
  const Vector scaled = Pc / pivot;
  P.noalias() -= Pc * scaled.transpose();
  if (M) {
    const Vector Mc = c ? Vector(*M * *c) : Vector(M->col(j));
    M->noalias() -= Mc * scaled.transpose();
  }
  if (!c) {  // exactly: a saturated joint never moves again
    base(j) = target;
    P.row(j).setZero();
    P.col(j).setZero();
    if (M) M->col(j).setZero();
  }
  return true;
}

struct Candidate {
  double remaining, scale;
  Vector v;
  Matrix P, M;  // copied only once the solver moves on from this candidate
  int dim;
  Step step;
  std::vector<int> saturated, saturated_rows;
};

double norm_of_difference(const Level& level, const Vector& v, int nv) { return (times(level, v, nv) - level.b).norm(); }

bool is_met(double residual, const Level& level) { return residual <= kMetTolerance * (1.0 + level.b.norm()); }

Vector clip(const Vector& v, const Constraints& cons) { return v.cwiseMax(cons.lo).cwiseMin(cons.hi); }

// One SNS level; updates v, P, dim and held (rows of C saturated so far) for the levels below.
LevelReport solve_level(const Level& level, Vector& v, Matrix& P, int& dim, std::vector<char>& held,
                        const Constraints& cons, const Policy& policy) {
  const int nv = static_cast<int>(v.size());
  Vector base = v;
  Matrix P_free = P;
  int free = dim;
  Matrix M;
  if (level.A) M = RowMatrixMap(level.A, level.rows(), nv) * P_free;
  std::vector<int> saturated, saturated_rows;
  std::optional<Candidate> best;
  bool best_is_current = false;  // best's P and M are still P_free and M
  bool known_singular = false;    // an earlier candidate was found singular (see correction)
  std::vector<char> held_free = held;
  int stale = 0;
  const int iterations = nv + static_cast<int>(cons.C.rows()) + 1;
  for (int it = 0; it < iterations; ++it) {
    const Vector residual = level.b - times(level, base, nv);
    Step step = level.rows() <= kSmallLevel
                    ? correction<SmallGram>(level, M, P_free, residual, policy, nv, known_singular)
                    : correction<Matrix>(level, M, P_free, residual, policy, nv, known_singular);
    const Limiting lim = max_scale(base, step.delta, cons, held_free);
    if (lim.scale < 0) break;
    const double s = lim.scale;
    const double remaining = (s * step.A_delta - residual).norm();
    if (!best || remaining < best->remaining * (1.0 - 1e-9) - 1e-15) {
      best = Candidate{remaining, s, base + s * step.delta, Matrix(), Matrix(), free, step, saturated, saturated_rows};
      best_is_current = true;
      stale = 0;
    } else if (s > 1e-6) {
      ++stale;
    }
    if (s >= 1.0 || stale >= kMaxStaleSaturations || free == 0) break;
    if (best_is_current) {  // P_free and M are about to change
      best->P = P_free;
      best->M = M;
      best_is_current = false;
    }
    const int j = lim.index;
    if (lim.kind == 0) {
      const double target = step.delta(j) > 0 ? cons.hi(j) : cons.lo(j);
      if (!saturate(P_free, level.A ? &M : nullptr, base, nullptr, j, target)) break;
      saturated.push_back(j);
    } else {
      const Vector c = cons.C.row(j).transpose();
      if (!saturate(P_free, level.A ? &M : nullptr, base, &c, j, cons.d(j))) break;
      saturated_rows.push_back(j);
      held_free[j] = 1;
    }
    --free;
  }
  LevelReport report;
  if (!best) {  // cannot happen while v satisfies the constraints; stay safe anyway
    v = clip(v, cons);
    report.scale = 0.0;
    report.residual = norm_of_difference(level, v, nv);
    report.met = false;
    return report;
  }
  v = clip(best->v, cons);
  for (int j : best->saturated_rows) held[j] = 1;
  if (best->step.has_W) {
    const Matrix& P_best = best_is_current ? P_free : best->P;
    const Matrix Wt = row_space(best->step, best_is_current ? M : best->M);
    P = P_best - Wt.transpose() * Wt;  // saturated columns of Wt are exactly 0
    dim = best->dim - best->step.rank;
  } else {  // an identity level uses every direction it can
    P.setZero();
    dim = 0;
  }
  report.scale = best->scale;
  report.saturated = best->saturated;
  report.saturated_rows = best->saturated_rows;
  report.damping = best->step.damping;
  report.smallest = best->step.smallest;
  if (report.smallest < 0) report.smallest = smallest_singular_value(best_is_current ? M : best->M);
  report.residual = norm_of_difference(level, v, nv);
  report.met = is_met(report.residual, level);
  return report;
}

// Rows j of C with C_j v > d_j (beyond rounding).
std::vector<int> violated_rows(const Constraints& cons, const Vector& v) {
  std::vector<int> out;
  if (!cons.C.rows()) return out;
  const Vector Cv = cons.C * v;
  const double tol = kBoundTolerance * std::max(1.0, Cv.cwiseAbs().maxCoeff());
  for (int j = 0; j < Cv.size(); ++j)
    if (Cv(j) - cons.d(j) > tol) out.push_back(j);
  return out;
}

}  // namespace

Vector solve_hierarchy(const std::vector<Level>& levels, const Constraints& cons, const Policy& policy,
                       std::vector<LevelReport>& reports) {
  const int nv = static_cast<int>(cons.lo.size());
  Vector v = Vector::Zero(nv).cwiseMax(cons.lo).cwiseMin(cons.hi);
  Matrix P = Matrix::Identity(nv, nv);
  int dim = nv;
  std::vector<char> held(cons.C.rows(), 0);  // rows of C saturated so far: their direction is out of P
  const std::vector<int> violated = violated_rows(cons, v);
  if (!violated.empty()) {  // recovery: C_j v = d_j for the violated rows, as the first level
    RowMatrix C_violated(violated.size(), nv);
    Level recovery;
    recovery.b.resize(violated.size());
    for (size_t i = 0; i < violated.size(); ++i) {
      C_violated.row(i) = cons.C.row(violated[i]);
      recovery.b(i) = cons.d(violated[i]);
      held[violated[i]] = 1;
    }
    recovery.A = C_violated.data();
    solve_level(recovery, v, P, dim, held, cons, policy);
  }
  reports.clear();
  reports.reserve(levels.size());
  for (const Level& level : levels) {
    if (level.rows() == 0) {
      reports.emplace_back();
      continue;
    }
    if (dim == 0) {
      LevelReport report;
      report.scale = 0.0;
      report.residual = norm_of_difference(level, v, nv);
      report.met = is_met(report.residual, level);
      reports.push_back(report);
      continue;
    }
    reports.push_back(solve_level(level, v, P, dim, held, cons, policy));
  }
  return v;
}

}  // namespace reljac

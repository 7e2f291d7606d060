// Batched relative kinematics and capability-map chunks; see kinematics.hpp.
#include "kinematics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace reljac::kin {

namespace {

// P * (rotation by the angle with cosine c and sine s about j's unit axis), as Pinocchio's
// jointPlacement * M(q); aligned axes by column combinations (the zero terms dropped are exact).
void rotate(const Matrix3& P, const Joint& j, double c, double s, Matrix3& R) {
  switch (j.aligned) {
    case 0:
      R.col(0) = P.col(0);
      R.col(1) = c * P.col(1) + s * P.col(2);
      R.col(2) = c * P.col(2) - s * P.col(1);
      return;
    case 1:
      R.col(0) = c * P.col(0) - s * P.col(2);
      R.col(1) = P.col(1);
      R.col(2) = s * P.col(0) + c * P.col(2);
      return;
    case 2:
      R.col(0) = c * P.col(0) + s * P.col(1);
      R.col(1) = c * P.col(1) - s * P.col(0);
      R.col(2) = P.col(2);
      return;
    default:
      break;
  }
  const Vector3& u = j.axis;
  const double t = 1.0 - c;
  Matrix3 M;  // Rodrigues, as Pinocchio's toRotationMatrix(axis, cos, sin)
  M << c + t * u.x() * u.x(), t * u.x() * u.y() - s * u.z(), t * u.x() * u.z() + s * u.y(),
      t * u.x() * u.y() + s * u.z(), c + t * u.y() * u.y(), t * u.y() * u.z() - s * u.x(),
      t * u.x() * u.z() - s * u.y(), t * u.y() * u.z() + s * u.x(), c + t * u.z() * u.z();
  R.noalias() = P * M;
}

Matrix3 quaternion_rotation(const double* xyzw) {  // as Eigen (and Pinocchio): no normalisation
  return Eigen::Quaterniond(xyzw[3], xyzw[0], xyzw[1], xyzw[2]).toRotationMatrix();
}

// Pose of joint j's frame (after its motion) in its parent joint's frame: placement * M(q).
void local_pose(const Joint& j, const double* q, Matrix3& R, Vector3& p) {
  const double* x = q + j.idx_q;
  switch (j.kind) {
    case kRevolute: {
      const double angle = j.scaling * x[0] + j.offset;
      rotate(j.R, j, std::cos(angle), std::sin(angle), R);
      p = j.p;
      return;
    }
    case kRevoluteUnbounded:
      rotate(j.R, j, x[0], x[1], R);
      p = j.p;
      return;
    case kPrismatic:
      R = j.R;
      p = j.p + j.R * (j.axis * (j.scaling * x[0] + j.offset));
      return;
    case kFreeFlyer:
      R.noalias() = j.R * quaternion_rotation(x + 3);
      p = j.p + j.R * Vector3(x[0], x[1], x[2]);
      return;
    case kSpherical:
      R.noalias() = j.R * quaternion_rotation(x);
      p = j.p;
      return;
    case kPlanar: {
      Matrix3 Rm;
      Rm << x[2], -x[3], 0, x[3], x[2], 0, 0, 0, 1;
      R.noalias() = j.R * Rm;
      p = j.p + j.R * Vector3(x[0], x[1], 0.0);
      return;
    }
  }
}

// Add joint j's columns of the velocity of b's origin (L) and angular velocity (W), in c's axes,
// times factor; (R, o): the joint frame in c; r = p_cb - o.
void add_columns(const Joint& j, const Matrix3& R, const Vector3& r, double factor, Eigen::Matrix3Xd& L,
                 Eigen::Matrix3Xd& W) {
  const int i = j.idx_v;
  switch (j.kind) {
    case kRevolute:
    case kRevoluteUnbounded: {
      const Vector3 w = j.aligned >= 0 ? Vector3(R.col(j.aligned)) : Vector3(R * j.axis);
      L.col(i) += factor * w.cross(r);
      W.col(i) += factor * w;
      return;
    }
    case kPrismatic:
      L.col(i) += factor * (j.aligned >= 0 ? Vector3(R.col(j.aligned)) : Vector3(R * j.axis));
      return;
    case kFreeFlyer:
      for (int k = 0; k < 3; ++k) {
        L.col(i + k) += factor * R.col(k);
        L.col(i + 3 + k) += factor * Vector3(R.col(k)).cross(r);
        W.col(i + 3 + k) += factor * R.col(k);
      }
      return;
    case kSpherical:
      for (int k = 0; k < 3; ++k) {
        L.col(i + k) += factor * Vector3(R.col(k)).cross(r);
        W.col(i + k) += factor * R.col(k);
      }
      return;
    case kPlanar:
      L.col(i) += factor * R.col(0);
      L.col(i + 1) += factor * R.col(1);
      L.col(i + 2) += factor * Vector3(R.col(2)).cross(r);
      W.col(i + 2) += factor * R.col(2);
      return;
  }
}

std::vector<int> ancestors(const Model& model, int joint) {  // root first, joint last
  std::vector<int> path;
  for (int j = joint; j > 0; j = model.joints[j].parent) path.push_back(j);
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

int Joint::nv() const {
  switch (kind) {
    case kFreeFlyer: return 6;
    case kSpherical:
    case kPlanar: return 3;
    default: return 1;
  }
}

void Model::check() const {
  if (joints.empty()) throw std::invalid_argument("the model has no universe joint");
  for (size_t j = 1; j < joints.size(); ++j) {
    const Joint& joint = joints[j];
    if (joint.parent < 0 || joint.parent >= static_cast<int>(j))
      throw std::invalid_argument("joint " + std::to_string(j) + " has parent " + std::to_string(joint.parent) +
                                  "; parents must come before their children");
    if (joint.kind < kRevolute || joint.kind > kPlanar)
      throw std::invalid_argument("joint " + std::to_string(j) + " has an unknown kind");
    const int nq = joint.kind == kFreeFlyer ? 7 : joint.kind == kSpherical || joint.kind == kPlanar ? 4
                   : joint.kind == kRevoluteUnbounded ? 2 : 1;
    if (joint.idx_q < 0 || joint.idx_q + nq > this->nq || joint.idx_v < 0 || joint.idx_v + joint.nv() > this->nv)
      throw std::invalid_argument("joint " + std::to_string(j) + " indexes q or v out of range");
  }
  for (size_t f = 0; f < frames.size(); ++f)
    if (frames[f].joint < 0 || frames[f].joint >= static_cast<int>(joints.size()))
      throw std::invalid_argument("frame " + std::to_string(f) + " has no valid parent joint");
}

PairPlan::PairPlan(const Model& model, int frame_a, int frame_b) : model_(model) {
  const int nf = static_cast<int>(model.frames.size());
  if (frame_a < 0 || frame_a >= nf || frame_b < 0 || frame_b >= nf)
    throw std::invalid_argument("frame ids must be in 0.." + std::to_string(nf - 1));
  frame_a_ = model.frames[frame_a];
  frame_b_ = model.frames[frame_b];
  const std::vector<int> up_a = ancestors(model, frame_a_.joint), up_b = ancestors(model, frame_b_.joint);
  size_t common = 0;
  while (common < up_a.size() && common < up_b.size() && up_a[common] == up_b[common]) ++common;
  chain_a_.assign(up_a.begin() + common, up_a.end());
  chain_b_.assign(up_b.begin() + common, up_b.end());
}

namespace {
struct Workspace {  // per thread: no allocation per sample
  std::vector<Matrix3> R;
  std::vector<Vector3> o;
  Eigen::Matrix3Xd L, W;
};
thread_local Workspace workspace;
}  // namespace

void PairPlan::evaluate(const double* q, Pose& T_ab, double* J) const {
  // Joint frames below c, in c's frame: chain a first, then chain b.
  const size_t na = chain_a_.size(), nb = chain_b_.size();
  Workspace& ws = workspace;
  if (ws.R.size() < na + nb) {
    ws.R.resize(na + nb);
    ws.o.resize(na + nb);
  }
  Matrix3* R = ws.R.data();
  Vector3* o = ws.o.data();
  Matrix3 R_local;
  Vector3 p_local;
  auto run = [&](const std::vector<int>& chain, size_t first, const Frame& frame, Pose& T_cf) {
    Matrix3 R_c = Matrix3::Identity();
    Vector3 p_c = Vector3::Zero();
    for (size_t k = 0; k < chain.size(); ++k) {
      local_pose(model_.joints[chain[k]], q, R_local, p_local);
      p_c += R_c * p_local;
      R_c = R_c * R_local;
      R[first + k] = R_c;
      o[first + k] = p_c;
    }
    T_cf.p = p_c + R_c * frame.p;
    T_cf.R.noalias() = R_c * frame.R;
  };
  Pose T_ca, T_cb;
  run(chain_a_, 0, frame_a_, T_ca);
  run(chain_b_, na, frame_b_, T_cb);
  T_ab.R.noalias() = T_ca.R.transpose() * T_cb.R;
  T_ab.p.noalias() = T_ca.R.transpose() * (T_cb.p - T_ca.p);
  if (J == nullptr) return;
  const int nv = model_.nv;
  Eigen::Matrix3Xd& L = ws.L;
  Eigen::Matrix3Xd& W = ws.W;
  L.setZero(3, nv);
  W.setZero(3, nv);
  for (size_t k = 0; k < na + nb; ++k) {
    const Joint& joint = model_.joints[k < na ? chain_a_[k] : chain_b_[k - na]];
    const double sign = k < na ? -1.0 : 1.0;
    add_columns(joint, R[k], T_cb.p - o[k], sign * joint.scaling, L, W);
  }
  JacobianMap out(J, 6, nv);
  out.topRows<3>().noalias() = T_ca.R.transpose() * L;
  out.bottomRows<3>().noalias() = T_ca.R.transpose() * W;
}

void configurations_from_uniforms(const std::vector<SampleColumn>& plan, const double* neutral, int nq, const double* U,
                                  int k, int64_t n, double* Q) {
  constexpr double kPi = 3.141592653589793;
  for (int64_t s = 0; s < n; ++s) {
    double* q = Q + s * nq;
    const double* u = U + s * k;
    std::copy(neutral, neutral + nq, q);
    for (const SampleColumn& c : plan) {
      if (c.kind == 0) {
        q[c.q] = c.lo + (c.hi - c.lo) * u[c.u];
      } else if (c.kind == 1) {
        const double t = (2.0 * u[c.u] - 1.0) * kPi;
        q[c.q] = std::cos(t);
        q[c.q + 1] = std::sin(t);
      } else {
        const double r1 = std::sqrt(1.0 - u[c.u]), r2 = std::sqrt(u[c.u]);
        const double t1 = 2.0 * kPi * u[c.u + 1], t2 = 2.0 * kPi * u[c.u + 2];
        q[c.q] = r1 * std::sin(t1);
        q[c.q + 1] = r1 * std::cos(t1);
        q[c.q + 2] = r2 * std::sin(t2);
        q[c.q + 3] = r2 * std::cos(t2);
      }
    }
  }
}

double manipulability(const double* J, int nv, const std::vector<int>& rows) {
  using Small = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  const int m = static_cast<int>(rows.size());
  if (m > nv) return 0.0;  // more task rows than joints: singular (as reljac.analysis)
  Small G(m, m);
  for (int r = 0; r < m; ++r)
    for (int s = 0; s <= r; ++s) {
      const double* x = J + rows[r] * nv;
      const double* y = J + rows[s] * nv;
      double dot = 0;
      for (int i = 0; i < nv; ++i) dot += x[i] * y[i];
      G(r, s) = G(s, r) = dot;
    }
  double det = 1.0;
  if (m == 1) {
    det = G(0, 0);
  } else if (m == 2) {
    det = G(0, 0) * G(1, 1) - G(0, 1) * G(0, 1);
  } else if (m == 3) {
    det = G(0, 0) * (G(1, 1) * G(2, 2) - G(1, 2) * G(1, 2)) - G(0, 1) * (G(0, 1) * G(2, 2) - G(1, 2) * G(0, 2)) +
          G(0, 2) * (G(0, 1) * G(1, 2) - G(1, 1) * G(0, 2));
  }
  if (m <= 3) return det > 0 ? std::sqrt(det) : 0.0;
  const Eigen::LDLT<Small> ldlt(G);
  for (int i = 0; i < m; ++i) det *= ldlt.vectorD()(i);
  return det > 0 ? std::sqrt(det) : 0.0;
}

CapabilityReduction::CapabilityReduction(const Model& model, int frame_a, int frame_b, const Grid& grid,
                                         std::vector<double> directions, int axis, std::vector<int> rows)
    : plan_(model, frame_a, frame_b), grid_(grid), directions_(std::move(directions)), axis_(axis),
      rows_(std::move(rows)) {
  const size_t ndirs = directions_.size() / 3;
  if (ndirs < 1 || ndirs > 64 || directions_.size() % 3) throw std::invalid_argument("directions must be 1 to 64 rows of 3");
  if (axis < 0 || axis > 2) throw std::invalid_argument("axis must be 0, 1 or 2");
  if (rows_.empty() || rows_.size() > 6) throw std::invalid_argument("rows must name 1 to 6 rows of J_ab");
  for (int r : rows_)
    if (r < 0 || r > 5) throw std::invalid_argument("rows must be in 0..5");
  if (!(grid.voxel > 0)) throw std::invalid_argument("voxel must be positive");
  for (int k = 0; k < 3; ++k)
    if (grid.dims[k] < 1) throw std::invalid_argument("dims must be positive");
}

size_t VoxelTable::slot_of(int64_t voxel) const {
  return static_cast<size_t>((static_cast<uint64_t>(voxel) * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
}

void VoxelTable::rehash(size_t capacity) {
  keys_.assign(capacity, -1);
  entries_.assign(capacity, 0);
  mask_ = capacity - 1;
  shift_ = 64 - static_cast<int>(std::lround(std::log2(static_cast<double>(capacity))));
  for (size_t e = 0; e < out_.voxel.size(); ++e) {
    size_t slot = slot_of(out_.voxel[e]);
    while (keys_[slot] != -1) slot = (slot + 1) & mask_;
    keys_[slot] = out_.voxel[e];
    entries_[slot] = e;
  }
}

void VoxelTable::add(int64_t voxel, int64_t count, uint64_t coverage, double best, int64_t best_index) {
  size_t slot = slot_of(voxel);
  while (keys_[slot] != -1 && keys_[slot] != voxel) slot = (slot + 1) & mask_;
  if (keys_[slot] == -1) {
    keys_[slot] = voxel;
    entries_[slot] = out_.voxel.size();
    out_.voxel.push_back(voxel);
    out_.count.push_back(count);
    out_.coverage.push_back(coverage);
    out_.best.push_back(best);
    out_.best_index.push_back(best_index);
    if (2 * out_.voxel.size() > keys_.size()) rehash(2 * keys_.size());
    return;
  }
  const size_t e = entries_[slot];
  out_.count[e] += count;
  out_.coverage[e] |= coverage;
  if (best > out_.best[e] || (best == out_.best[e] && best_index < out_.best_index[e])) {
    out_.best[e] = best;
    out_.best_index[e] = best_index;
  }
}

void CapabilityReduction::add(const double* Q, int64_t n, int64_t first_index) {
  const Model& model = plan_.model();
  const int nq = model.nq, nv = model.nv, ndirs = static_cast<int>(directions_.size() / 3);
  std::vector<double> J(6 * static_cast<size_t>(nv));
  Pose T_ab;
  for (int64_t s = 0; s < n; ++s) {
    plan_.evaluate(Q + s * nq, T_ab, J.data());
    int64_t cell[3];
    bool inside = true;
    for (int k = 0; k < 3; ++k) {
      const double x = std::floor((T_ab.p(k) - grid_.origin(k)) / grid_.voxel);  // as numpy
      inside = inside && x >= 0 && x < static_cast<double>(grid_.dims[k]);  // false for NaN
      cell[k] = inside ? static_cast<int64_t>(x) : 0;
    }
    if (!inside) {
      ++table_.result().outside;
      continue;
    }
    const Vector3 approach = T_ab.R.col(axis_);
    int best_d = 0;
    double best_dot = -2.0;
    for (int d = 0; d < ndirs; ++d) {
      const double dot = approach.dot(Eigen::Map<const Vector3>(directions_.data() + 3 * d));
      if (dot > best_dot) {
        best_dot = dot;
        best_d = d;
      }
    }
    const int64_t voxel = (cell[0] * grid_.dims[1] + cell[1]) * grid_.dims[2] + cell[2];
    table_.add(voxel, 1, uint64_t{1} << best_d, manipulability(J.data(), nv, rows_), first_index + s);
  }
}

}  // namespace reljac::kin

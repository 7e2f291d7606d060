// Batched relative kinematics and capability-map chunks on Pinocchio; see kinematics.hpp.
#include "kinematics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio/algorithm/model.hpp"
#include "relative.hpp"

namespace reljac::kin {

namespace {

void check_frame(const pinocchio::Model& model, int frame) {
  if (frame < 0 || frame >= model.nframes)
    throw std::invalid_argument("frame ids must be in 0.." + std::to_string(model.nframes - 1));
}

// The joints that move frame b relative to frame a: below their common ancestor, down to each.
std::vector<pinocchio::JointIndex> pair_joints(const pinocchio::Model& model, int frame_a, int frame_b) {
  const auto& up_a = model.supports[model.frames[frame_a].parentJoint];  // root first
  const auto& up_b = model.supports[model.frames[frame_b].parentJoint];
  size_t common = 0;
  while (common < up_a.size() && common < up_b.size() && up_a[common] == up_b[common]) ++common;
  std::vector<pinocchio::JointIndex> joints(up_a.begin() + common, up_a.end());
  joints.insert(joints.end(), up_b.begin() + common, up_b.end());
  return joints;
}

// The id in `model` of the only frame named as `name`, or -1 (none, or several).
int frame_named(const pinocchio::Model& model, const std::string& name) {
  int found = -1;
  for (int f = 0; f < model.nframes; ++f) {
    if (model.frames[f].name != name) continue;
    if (found >= 0) return -1;
    found = f;
  }
  return found;
}

// True when no two joints of `model` have the same name (a reduced copy's are found by name).
bool unique_joint_names(const pinocchio::Model& model) {
  std::vector<std::string> names(model.names.begin(), model.names.end());
  std::sort(names.begin(), names.end());
  return std::adjacent_find(names.begin(), names.end()) == names.end();
}

// The robot's model with every joint that does not move b relative to a locked at neutral.
pinocchio::Model pair_model(const pinocchio::Model& robot, int frame_a, int frame_b) {
  const auto keep = pair_joints(robot, frame_a, frame_b);
  std::vector<pinocchio::JointIndex> locked;
  for (pinocchio::JointIndex j = 1; j < static_cast<pinocchio::JointIndex>(robot.njoints); ++j)
    if (std::find(keep.begin(), keep.end(), j) == keep.end()) locked.push_back(j);
  return pinocchio::buildReducedModel(robot, locked, pinocchio::neutral(robot));
}

}  // namespace

PairKinematics::PairKinematics(const pinocchio::Model& robot, int frame_a, int frame_b)
    : mimic_(!robot.mimicking_joints.empty()) {
  check_frame(robot, frame_a);
  check_frame(robot, frame_b);
  // (a reduced model keeps every frame, renumbered, and retypes a locked joint's: found by name)
  const auto& name_a = robot.frames[frame_a].name;
  const auto& name_b = robot.frames[frame_b].name;
  bool reduce = !mimic_ && unique_joint_names(robot) && frame_named(robot, name_a) == frame_a &&
                frame_named(robot, name_b) == frame_b;
  if (reduce) {
    try {
      model_ = pair_model(robot, frame_a, frame_b);
      frame_a_ = frame_named(model_, name_a);
      frame_b_ = frame_named(model_, name_b);
      reduce = frame_a_ >= 0 && frame_b_ >= 0;
    } catch (const std::exception&) {  // a model Pinocchio does not reduce (e.g. frames whose parent
      reduce = false;                   // frame is not on their parent joint): the robot's, then
    }
  }
  if (!reduce) {
    model_ = robot;
    frame_a_ = frame_a;
    frame_b_ = frame_b;
  }
  data_ = pinocchio::Data(model_);
  for (int j = 1; j < model_.njoints; ++j) {
    const auto& joint = robot.joints[reduce ? robot.getJointId(model_.names[j]) : j];
    const auto& kept = model_.joints[j];
    for (int i = 0; i < kept.nq(); ++i) q_from_.push_back(joint.idx_q() + i);
    for (int i = 0; i < kept.nv(); ++i) column_of_.push_back(joint.idx_v() + i);
  }
  if (static_cast<int>(q_from_.size()) != model_.nq || static_cast<int>(column_of_.size()) != model_.nv)
    throw std::logic_error("the pair's model does not match the robot's");  // (never: the same joints)
  x_.setZero(model_.nq);
  Ja_.setZero(6, model_.nv);
  Jb_.setZero(6, model_.nv);
  one_pass_ = reduce;  // the pair's model holds only the joints between a and b: one pass over it all
  sign_.assign(static_cast<size_t>(model_.nv), 0.0);
  for (int frame : {frame_a_, frame_b_})
    for (pinocchio::JointIndex j : model_.supports[model_.frames[frame].parentJoint])
      if (j > 0)  // (the universe has no column)
        for (int k = 0; k < model_.joints[j].nv(); ++k)
        sign_[static_cast<size_t>(model_.joints[j].idx_v() + k)] += frame == frame_b_ ? 1.0 : -1.0;
}

void PairKinematics::evaluate(const double* q, Pose& T_ab, double* J) {
  for (int i = 0; i < model_.nq; ++i) x_[i] = q[q_from_[i]];
  const int nv = model_.nv;
  if (J == nullptr || nv == 0) {  // (Pinocchio's Jacobians do not take nv = 0)
    pinocchio::forwardKinematics(model_, data_, x_);
    pinocchio::updateFramePlacement(model_, data_, frame_a_);
    pinocchio::updateFramePlacement(model_, data_, frame_b_);
  } else if (one_pass_) {  // every joint's WORLD column once; J_b - J_a's column k is sign_[k] times it
    const Eigen::Map<const Eigen::VectorXd> x(x_.data(), model_.nq);
    pinocchio::computeJointJacobians(model_, data_, x);  // (the library's instance: fewer instructions than one built here)
    pinocchio::updateFramePlacement(model_, data_, frame_a_);
    pinocchio::updateFramePlacement(model_, data_, frame_b_);
  } else {
    if (mimic_) {  // Pinocchio adds a mimic joint's column into its leader's
      Ja_.setZero();
      Jb_.setZero();
    }
    // each call runs the kinematics of its frame's supporting joints only; q as a VectorXd: the
    // library's instance (relative.cpp), within 2 % of one compiled here (0.70 against 0.69 us
    // for two Talos grippers in WORLD, 2026-12-04), whose joint visitors the build then skips
    const Eigen::VectorXd& x = x_;
    pinocchio::computeFrameJacobian(model_, data_, x, frame_a_, pinocchio::WORLD, Ja_);
    pinocchio::updateFramePlacement(model_, data_, frame_a_);
    pinocchio::computeFrameJacobian(model_, data_, x, frame_b_, pinocchio::WORLD, Jb_);
    pinocchio::updateFramePlacement(model_, data_, frame_b_);
  }
  const pinocchio::SE3& T_wa = data_.oMf[frame_a_];
  const pinocchio::SE3& T_wb = data_.oMf[frame_b_];
  T_ab.R.noalias() = T_wa.rotation().transpose() * T_wb.rotation();
  T_ab.p.noalias() = T_wa.rotation().transpose() * (T_wb.translation() - T_wa.translation());
  if (J == nullptr) return;
  const Matrix3& R_wa = T_wa.rotation();
  const Vector3& p_wb = T_wb.translation();
  for (int k = 0; k < nv; ++k) {  // [R_wa^T (D_v - p_wb x D_w); R_wa^T D_w], D = J_b - J_a
    const double sign = sign_[static_cast<size_t>(k)];
    const Vector3 d_v = one_pass_ ? Vector3(sign * data_.J.col(k).head<3>())
                                  : Vector3(Jb_.col(k).head<3>() - Ja_.col(k).head<3>());
    const Vector3 d_w = one_pass_ ? Vector3(sign * data_.J.col(k).tail<3>())
                                  : Vector3(Jb_.col(k).tail<3>() - Ja_.col(k).tail<3>());
    const Vector3 l = relative_linear_velocity(R_wa, p_wb, d_v, d_w);
    const Vector3 w = R_wa.transpose() * d_w;
    for (int r = 0; r < 3; ++r) {
      J[r * nv + k] = l[r];
      J[(r + 3) * nv + k] = w[r];
    }
  }
}

CapabilityReduction::CapabilityReduction(const pinocchio::Model& model, int frame_a, int frame_b, const Grid& grid,
                                         std::vector<double> directions, int axis, std::vector<int> rows)
    : pair_(model, frame_a, frame_b), nq_(model.nq), nv_(model.nv), grid_(grid), directions_(std::move(directions)),
      axis_(axis), rows_(std::move(rows)), J_(6 * static_cast<size_t>(pair_.columns())) {
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

double manipulability(const double* J, int nv, int joints, const std::vector<int>& rows) {
  using Small = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  const int m = static_cast<int>(rows.size());
  if (m > joints) return 0.0;  // more task rows than joints: singular (as reljac.analysis)
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
  const int nq = nq_, columns = pair_.columns(), ndirs = static_cast<int>(directions_.size() / 3);
  Pose T_ab;
  for (int64_t s = 0; s < n; ++s) {
    pair_.evaluate(Q + s * nq, T_ab, J_.data());
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
    table_.add(voxel, 1, uint64_t{1} << best_d, manipulability(J_.data(), columns, nv_, rows_), first_index + s);
  }
}

}  // namespace reljac::kin

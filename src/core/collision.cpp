// Collision rows in C++; see collision.hpp. Each function names the Python code it mirrors.
#include "collision.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pinocchio/algorithm/geometry.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/collision/distance.hpp"

namespace reljac {

namespace {

// distances._fallback_normal: a unit normal where coal gives none.
Eigen::Vector3d fallback_normal(const Eigen::Vector3d& p1, const Eigen::Vector3d& p2, double d,
                                const Eigen::Vector3d& origin1, const Eigen::Vector3d& origin2) {
  Eigen::Vector3d candidates[2];
  int n = 0;
  if (std::abs(d) > 1e-9) candidates[n++] = (p2 - p1) * (d > 0 ? 1.0 : -1.0);
  candidates[n++] = origin2 - origin1;
  for (int i = 0; i < n; ++i) {
    const double length = candidates[i].norm();
    if (std::isfinite(length) && length > 1e-12) return candidates[i] / length;
  }
  return Eigen::Vector3d::UnitZ();
}
}  // namespace

CollisionLimit::CollisionLimit(const PinModel& model, PyObject* geometry, const CollisionAvoidanceDescription& d)
    : model_(model), desc_(d) {
  desc_.geometry = PyRef();  // (the geometry's reference is geometry_object_)
  bind(geometry);
}

CollisionLimit::~CollisionLimit() {
  if (geometry_object_ && Py_IsInitialized()) {
    PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(geometry_object_);
    PyGILState_Release(state);
  }
}

void CollisionLimit::set(PyObject* geometry, const CollisionAvoidanceDescription& d) {
  desc_ = d;
  desc_.geometry = PyRef();
  if (geometry != geometry_object_) bind(geometry);
}

void CollisionLimit::bind(PyObject* geometry) {
  auto& model = pinocchio_object<pinocchio::GeometryModel>(geometry, "pin.GeometryModel");
  Py_INCREF(geometry);
  if (geometry_object_) Py_DECREF(geometry_object_);
  geometry_object_ = geometry;
  geometry_ = &model;
  gdata_ = std::make_unique<pinocchio::GeometryData>(model);
  for (auto& request : gdata_->distanceRequests) request.gjk_tolerance = kGjkTolerance;
  const std::size_t n = model.ngeoms, pairs = model.collisionPairs.size();
  radius_.assign(n, 0.0);
  centre_.assign(n, Eigen::Vector3d::Zero());
  box_centre_.assign(n, Eigen::Vector3d::Zero());
  box_half_.assign(n, Eigen::Vector3d::Zero());
  for (std::size_t g = 0; g < n; ++g) {
    auto& shape = *model.geometryObjects[g].geometry;
    shape.computeLocalAABB();
    radius_[g] = shape.aabb_radius;
    centre_[g] = shape.aabb_center;
    box_centre_[g] = shape.aabb_local.center();
    box_half_[g] = 0.5 * (shape.aabb_local.max_ - shape.aabb_local.min_);
  }
  // the joints' spheres: each holds the bounding spheres of the geometries the joint carries
  joint_centre_.assign(model_.njoints, Eigen::Vector3d::Zero());
  joint_radius_.assign(model_.njoints, -1.0);
  joint_centre_now_.assign(model_.njoints, Eigen::Vector3d::Zero());
  std::vector<std::vector<std::size_t>> carried(model_.njoints);
  for (std::size_t g = 0; g < n; ++g) carried[model.geometryObjects[g].parentJoint].push_back(g);
  for (int j = 0; j < model_.njoints; ++j) {
    if (carried[j].empty()) continue;
    Eigen::Vector3d lo = Eigen::Vector3d::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
    for (std::size_t g : carried[j]) {
      const Eigen::Vector3d c = model.geometryObjects[g].placement.act(centre_[g]);
      lo = lo.cwiseMin((c.array() - radius_[g]).matrix());
      hi = hi.cwiseMax((c.array() + radius_[g]).matrix());
    }
    joint_centre_[j] = 0.5 * (lo + hi);
    double radius = 0.0;
    for (std::size_t g : carried[j])
      radius = std::max(radius, (model.geometryObjects[g].placement.act(centre_[g]) - joint_centre_[j]).norm() +
                                    radius_[g]);
    joint_radius_[j] = radius;
  }
  groups_.clear();
  group_of_pair_.assign(pairs, 0);
  std::vector<int> group_of(static_cast<std::size_t>(model_.njoints) * model_.njoints, -1);
  for (std::size_t k = 0; k < pairs; ++k) {
    int j1 = static_cast<int>(model.geometryObjects[model.collisionPairs[k].first].parentJoint);
    int j2 = static_cast<int>(model.geometryObjects[model.collisionPairs[k].second].parentJoint);
    if (j1 > j2) std::swap(j1, j2);
    int& group = group_of[static_cast<std::size_t>(j1) * model_.njoints + j2];
    if (group < 0) {
      group = static_cast<int>(groups_.size());
      groups_.push_back({j1, j2});
    }
    group_of_pair_[k] = group;
  }
  near_.assign(groups_.size(), 0);
  predicted_.assign(pairs, 0.0);
  margin_.assign(pairs, 0.0);
  predicted_at_.assign(pairs, -2);
  margin_at_.assign(pairs, -2);
  jacobians_.assign(model_.njoints, Matrix());
  jacobian_at_.assign(model_.njoints, -1);
  for (int j = 0; j < model_.njoints; ++j) jacobians_[j].setZero(6, model_.nv);
  pair_.clear();
  pair_.reserve(pairs);
  distance_.resize(pairs);
  d_.resize(pairs);
  point1_.resize(pairs, 3);
  point2_.resize(pairs, 3);
  normal_.resize(pairs, 3);
  jacobian_.resize(pairs, model_.nv);
  C_.resize(pairs, model_.nv);
  centres_.resize(n);
  normals_.resize(pairs);
  jacobian_row_.resize(model_.nv);
}

CollisionRows CollisionLimit::rows() const {
  CollisionRows out;
  out.pair = pair_;
  out.distance = distance_.head(count());
  out.point1 = point1_.topRows(count());
  out.point2 = point2_.topRows(count());
  out.normal = normal_.topRows(count());
  out.jacobian = jacobian_.topRows(count());
  return out;
}

void CollisionLimit::reset() {  // CollisionAvoidance.reset
  std::fill(predicted_at_.begin(), predicted_at_.end(), -2);
  std::fill(margin_at_.begin(), margin_at_.end(), -2);
  pair_.clear();
}

// Kernel._retry: coal's answer with a looser, longer penetration search where the default fails.
const coal::DistanceResult& CollisionLimit::distance(std::size_t k) {
  const coal::DistanceResult& result = pinocchio::computeDistance(*geometry_, *gdata_, k);
  if (-kFailed < result.min_distance && result.min_distance < kFailed) return result;
  coal::DistanceRequest& request = gdata_->distanceRequests[k];
  const coal::DistanceRequest saved = request;
  request.gjk_tolerance = kGjkTolerance;
  request.epa_tolerance = 1e-4;
  request.epa_max_iterations = 1000;
  const coal::DistanceResult& retried = pinocchio::computeDistance(*geometry_, *gdata_, k);
  request = saved;
  if (!(-kFailed < retried.min_distance && retried.min_distance < kFailed)) {
    const auto& pair = geometry_->collisionPairs[k];
    throw std::runtime_error("coal could not compute the distance between geometries '" +
                             geometry_->geometryObjects[pair.first].name + "' and '" +
                             geometry_->geometryObjects[pair.second].name +
                             "'; try convex_meshes=True or simpler shapes");
  }
  return retried;
}

// Whether the two geometries' boxes (their local AABBs placed by oMg) are provably farther apart
// than `within`: the first box grown by `within` along its axes holds every point within `within`
// of its geometry, and it does not meet the second box along one of the 15 separating axes.
bool CollisionLimit::separated(std::size_t g1, std::size_t g2, double within) const {
  // In the first box's axes (Gottschalk's OBB test): C = R1^T R2 holds the second box's axes, T the
  // centres' offset. Along an axis a, the boxes are apart when |T.a| > r1(a) + r2(a), their
  // half-extents projected on a; the test is the same for a scaled by any length, so the nine
  // edge-pair axes A_i x B_j (length sqrt(1 - C_ij^2)) are not normalized, and a (nearly)
  // parallel pair, length below 1e-6, is not an axis. The slack (1e-12 relative, 1e-12 absolute)
  // only ever says "not apart".
  const pinocchio::SE3& M1 = gdata_->oMg[g1];
  const pinocchio::SE3& M2 = gdata_->oMg[g2];
  const Eigen::Matrix3d& R1 = M1.rotation();
  const Eigen::Vector3d h1 = box_half_[g1].array() + within;
  const Eigen::Vector3d& h2 = box_half_[g2];
  const Eigen::Matrix3d C = R1.transpose() * M2.rotation();
  const Eigen::Matrix3d A = C.cwiseAbs();
  const Eigen::Vector3d T = R1.transpose() * (M2.act(box_centre_[g2]) - M1.act(box_centre_[g1]));
  auto apart = [](double projection, double radii) { return std::abs(projection) > radii * (1.0 + 1e-12) + 1e-12; };
  for (int i = 0; i < 3; ++i)  // the first box's faces
    if (apart(T(i), h1(i) + A.row(i).dot(h2))) return true;
  for (int j = 0; j < 3; ++j)  // the second box's faces
    if (apart(T.dot(C.col(j)), A.col(j).dot(h1) + h2(j))) return true;
  for (int i = 0; i < 3; ++i) {  // edge pairs A_i x B_j
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      if (1.0 - C(i, j) * C(i, j) < 1e-12) continue;
      const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      const double projection = T(i2) * C(i1, j) - T(i1) * C(i2, j);
      const double radii = h1(i1) * A(i2, j) + h1(i2) * A(i1, j) + h2(j1) * A(i, j2) + h2(j2) * A(i, j1);
      if (apart(projection, radii)) return true;
    }
  }
  return false;
}

const Matrix& CollisionLimit::joint_jacobian(const PinData& data, int joint) {
  if (jacobian_at_[joint] != step_) {
    Matrix& J = jacobians_[joint];
    J.setZero(6, model_.nv);
    pinocchio::getJointJacobian(model_, data, joint, pinocchio::WORLD, J);
    jacobian_at_[joint] = step_;
  }
  return jacobians_[joint];
}

// CollisionAvoidance.constraint over Kernel.compute(data, within=influence_distance, per_geometry=True).
void CollisionLimit::compute(const PinData& data, double dt) {
  ++step_;
  dt_ = dt;
  pinocchio::updateGeometryPlacements(model_, data, *geometry_, *gdata_);
  const double within = desc_.influence_distance;
  const auto& pairs = geometry_->collisionPairs;
  std::vector<int>& chosen = pair_;
  chosen.clear();
  // broad phase: bounding spheres farther apart than `within` cannot hold a nearer pair
  for (std::size_t j = 0; j < joint_radius_.size(); ++j)  // each joint's sphere once (a joint is in many groups)
    if (joint_radius_[j] >= 0.0) joint_centre_now_[j] = data.oMi[j].act(joint_centre_[j]);
  for (std::size_t i = 0; i < groups_.size(); ++i) {  // joints' spheres apart: none of their pairs is near
    const JointPairGroup& group = groups_[i];
    const double reach = joint_radius_[group.joint1] + joint_radius_[group.joint2] + within;
    const Eigen::Vector3d between = joint_centre_now_[group.joint2] - joint_centre_now_[group.joint1];
    near_[i] = between.squaredNorm() < reach * reach;
  }
  std::vector<Eigen::Vector3d>& centres = centres_;
  for (std::size_t g = 0; g < radius_.size(); ++g) centres[g] = gdata_->oMg[g].act(centre_[g]);
  for (std::size_t k = 0; k < pairs.size(); ++k) {  // in the pairs' order, as Kernel.compute's rows
    if (!near_[group_of_pair_[k]]) continue;
    const std::size_t g1 = pairs[k].first, g2 = pairs[k].second;
    const double reach = radius_[g1] + radius_[g2] + within;  // spheres apart by `within`: no sqrt
    if ((centres[g1] - centres[g2]).squaredNorm() >= reach * reach) continue;
    if (separated(g1, g2, within)) continue;  // boxes: tighter than spheres for long links
    const coal::DistanceResult& result = distance(k);
    const double d = result.min_distance;
    if (!(d < within)) continue;
    const int i = static_cast<int>(chosen.size());
    chosen.push_back(static_cast<int>(k));
    distance_(i) = d;
    point1_.row(i) = result.nearest_points[0].transpose();
    point2_.row(i) = result.nearest_points[1].transpose();
    normals_[i] = result.normal;
  }
  const int m = static_cast<int>(chosen.size());
  jacobian_.topRows(m).setZero();
  for (int i = 0; i < m; ++i) {
    const int k = chosen[i];
    const std::size_t g1 = pairs[k].first, g2 = pairs[k].second;
    const double dist = distance_(i);
    Eigen::Vector3d n = normals_[i];
    const Eigen::Vector3d p1 = point1_.row(i).transpose(), p2 = point2_.row(i).transpose();
    // coal leaves the normal unset between triangle meshes: rebuild it where it is not a unit
    // vector with point2 = point1 + d normal
    const double error = (p2 - p1 - dist * n).squaredNorm() + std::abs(n.squaredNorm() - 1.0);
    if (!(error < 1e-12))
      n = fallback_normal(p1, p2, dist, gdata_->oMg[g1].translation(), gdata_->oMg[g2].translation());
    normal_.row(i) = n.transpose();
    // Kernel._jacobians: J_d = [n; p1 x n]^T (J2 - J1), WORLD joint Jacobians
    const int j1 = static_cast<int>(geometry_->geometryObjects[g1].parentJoint);
    const int j2 = static_cast<int>(geometry_->geometryObjects[g2].parentJoint);
    if (j1 != j2) {
      Eigen::Matrix<double, 6, 1> w;
      w << n, p1.cross(n);
      if (j2) {
        jacobian_row_.noalias() = w.transpose() * joint_jacobian(data, j2);
        jacobian_.row(i) += jacobian_row_;
      }
      if (j1) {
        jacobian_row_.noalias() = w.transpose() * joint_jacobian(data, j1);
        jacobian_.row(i) -= jacobian_row_;
      }
    }
    // the margin learnt from missed predictions
    const double missed = predicted_at_[k] == step_ - 1 ? predicted_[k] - dist : 0.0;
    const double earlier = margin_at_[k] == step_ - 1 ? margin_[k] : 0.0;
    const double margin = std::max({missed, 0.5 * earlier, 0.0});
    margin_[k] = margin;
    margin_at_[k] = step_;
    C_.row(i) = -jacobian_.row(i);
    d_(i) = (desc_.gain * (dist - desc_.min_distance - desc_.margin) - margin) / dt;
  }
}

void CollisionLimit::observe(const Vector& v) {  // CollisionAvoidance.observe
  for (int i = 0; i < count(); ++i) {
    const int k = pair_[i];
    predicted_[k] = distance_(i) + dt_ * jacobian_.row(i).dot(v);
    predicted_at_[k] = step_;
  }
}

}  // namespace reljac

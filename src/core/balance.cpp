// Balance rows of the compiled step; see balance.hpp. Each function names the Python it mirrors.
#include "balance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "pinocchio/algorithm/center-of-mass.hpp"
#include "relative.hpp"

namespace reljac {

namespace {

using Point = Eigen::Vector2d;


double cross(const Point& o, const Point& a, const Point& b) {
  return (a.x() - o.x()) * (b.y() - o.y()) - (a.y() - o.y()) * (b.x() - o.x());
}

// reljac.support.drop_collinear: the closed polygon's vertices where it turns by at most tol dropped,
// one at a time, until none is left (in place, no allocation).
void drop_collinear(std::vector<Point>& hull, double tol) {
  for (bool changed = true; changed && hull.size() >= 3;) {
    changed = false;
    for (size_t i = 0; i < hull.size() && hull.size() >= 3;) {
      const Point& before = hull[i == 0 ? hull.size() - 1 : i - 1];
      if (cross(before, hull[i], hull[(i + 1) % hull.size()]) <= tol) {
        hull.erase(hull.begin() + static_cast<long>(i));
        changed = true;
      } else {
        ++i;
      }
    }
  }
}

// reljac.support.convex_hull: Andrew's monotone chain, counter-clockwise, with the exact turn test,
// then the vertices where the hull turns by at most kCollinearTolerance x extent^2 dropped.
// sorted, lower, upper: scratch buffers.
void convex_hull(const std::vector<Point>& points, std::vector<Point>& p, std::vector<Point>& lower,
                 std::vector<Point>& upper, std::vector<Point>& hull) {
  p.assign(points.begin(), points.end());
  std::sort(p.begin(), p.end(),
            [](const Point& a, const Point& b) { return a.x() < b.x() || (a.x() == b.x() && a.y() < b.y()); });
  double scale = 0.0;
  if (!p.empty()) {
    for (int axis = 0; axis < 2; ++axis) {
      double lo = p[0](axis), hi = p[0](axis);
      for (const Point& x : p) {
        lo = std::min(lo, x(axis));
        hi = std::max(hi, x(axis));
      }
      scale = std::max(scale, hi - lo);
    }
  }
  const double tol = kCollinearTolerance * std::max(scale * scale, std::numeric_limits<double>::min());
  auto chain = [&](auto begin, auto end, std::vector<Point>& out) {
    out.clear();
    for (auto it = begin; it != end; ++it) {
      while (out.size() >= 2 && cross(out[out.size() - 2], out.back(), *it) <= 0.0) out.pop_back();
      out.push_back(*it);
    }
  };
  chain(p.begin(), p.end(), lower);
  chain(p.rbegin(), p.rend(), upper);
  hull.assign(lower.begin(), lower.end() - (lower.empty() ? 0 : 1));
  hull.insert(hull.end(), upper.begin(), upper.end() - (upper.empty() ? 0 : 1));
  drop_collinear(hull, tol);
}

// reljac.support._clip: the convex polygon cut by the half-plane n . x <= h, into out (inside:
// a scratch buffer).
void clip(const std::vector<Point>& vertices, const Point& n, double h, std::vector<Point>& out,
          std::vector<double>& inside) {
  out.clear();
  const size_t count = vertices.size();
  inside.resize(count);
  for (size_t i = 0; i < count; ++i) inside[i] = vertices[i].dot(n) - h;
  for (size_t i = 0; i < count; ++i) {
    const size_t j = (i + 1) % count;
    if (inside[i] <= 0) out.push_back(vertices[i]);
    if ((inside[i] < 0 && 0 < inside[j]) || (inside[j] < 0 && 0 < inside[i])) {
      const double t = inside[i] / (inside[i] - inside[j]);
      out.push_back(vertices[i] + t * (vertices[j] - vertices[i]));
    }
  }
}

double area(const std::vector<Point>& v) {  // SupportPolygon.area
  double sum = 0.0;
  for (size_t i = 0; i < v.size(); ++i) {
    const Point& a = v[i];
    const Point& b = v[(i + 1) % v.size()];
    sum += a.x() * b.y() - b.x() * a.y();
  }
  return 0.5 * sum;
}

}  // namespace

void compute_center_of_mass(const PinModel& model, PinData& data, Eigen::Vector3d& c, Matrix& J_c) {
  const double m = pinocchio::computeTotalMass(model), m0 = model.inertias[0].mass();
  const double total = m + m0;
  if (m > 0) {
    pinocchio::jacobianCenterOfMass(model, data, false);
    c = (m * data.com[0] + m0 * model.inertias[0].lever()) / total;
    J_c = (m / total) * data.Jcom;
  } else {  // nothing that moves has mass (a robot without any is refused when a task is made)
    c = model.inertias[0].lever();
    J_c.setZero(3, model.nv);
  }
}

void center_of_mass_in(const PinData& data, const Eigen::Vector3d& c, const Matrix& J_c, int frame, const Matrix& J_a,
                       Eigen::Vector3d& p, Matrix& J) {
  if (frame == 0) {
    p = c;
    J = J_c;
    return;
  }
  const pinocchio::SE3& T_wa = data.oMf[frame];
  const Eigen::Matrix3d& R_wa = T_wa.rotation();
  p = R_wa.transpose() * (c - T_wa.translation());
  const long nv = J_c.cols();
  J.resize(3, nv);
  for (long k = 0; k < nv; ++k) {  // WORLD J_a: [v of the point at the world origin; w]: D = (J_c - v_a, -w_a)
    const Eigen::Vector3d w = J_a.col(k).tail<3>();
    J.col(k) = relative_linear_velocity(R_wa, c, Eigen::Vector3d(J_c.col(k)) - Eigen::Vector3d(J_a.col(k).head<3>()), -w);
  }
}

void SupportLimit::set(const SupportRegionDescription& d) {
  desc_ = d;
  long points = 0;
  for (const RowMatrix& local : desc_.points) points += local.rows();
  const long room = 2 * points;  // a polygon cut by a half-plane gains one vertex at most per cut
  for (auto* buffer : {&points_, &hull_, &sorted_, &lower_, &upper_, &normals_, &shrunk_, &clipped_})
    buffer->reserve(room);
  offsets_.reserve(room);
  inside_.reserve(room);
  count_ = 0;
  C_.resize(points, 0);  // columns (nv) set by the first compute
  d_.resize(points);
  to_shrunk_.resize(points);
}

void SupportLimit::compute(const PinData& data, const Eigen::Vector3d& p, const Matrix& J, double dt) {
  const pinocchio::SE3& T_wa = data.oMf[desc_.frame];
  const Eigen::Matrix3d R_aw = T_wa.rotation().transpose();
  count_ = 0;
  points_.clear();
  for (long j = 0; j < desc_.contact_frames.size(); ++j) {  // SupportRegion.points
    const pinocchio::SE3& T_wf = data.oMf[desc_.contact_frames(j)];
    const RowMatrix& local = desc_.points[j];
    for (long r = 0; r < local.rows(); ++r) {
      const Eigen::Vector3d world = T_wf.rotation() * Eigen::Vector3d(local.row(r).transpose()) + T_wf.translation();
      points_.push_back((R_aw * (world - T_wa.translation())).head<2>());
    }
  }
  convex_hull(points_, sorted_, lower_, upper_, hull_);  // support_polygon
  if (hull_.size() < 3)
    throw SupportFailure("the " + std::to_string(points_.size()) +
                         " support points span no area (all on one line or one point): a support region needs "
                         "three points not on one line");
  const int n = static_cast<int>(hull_.size());
  normals_.resize(n);
  offsets_.resize(n);
  for (int i = 0; i < n; ++i) {
    const Point e = hull_[(i + 1) % n] - hull_[i];
    normals_[i] = Point(e.y(), -e.x()) / e.norm();
    offsets_[i] = normals_[i].dot(hull_[i]);
  }
  if (desc_.margin > 0) {  // SupportPolygon.shrunk: SupportError when nothing is left
    shrunk_ = hull_;
    for (int i = 0; i < n && shrunk_.size() >= 3; ++i) {
      clip(shrunk_, normals_[i], offsets_[i] - desc_.margin, clipped_, inside_);
      shrunk_.swap(clipped_);
    }
    convex_hull(shrunk_, sorted_, lower_, upper_, clipped_);
    if (clipped_.size() < 3) {
      char message[200];
      std::snprintf(message, sizeof message,
                    "a margin of %g m leaves nothing of the support region (area %.4g m^2): use a smaller margin "
                    "or wider contacts",
                    desc_.margin, area(hull_));
      throw SupportFailure(message);
    }
  }
  const long nv = J.cols();
  if (C_.cols() != nv) C_.resize(C_.rows(), nv);
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, 2, Eigen::RowMajor>> normals(normals_[0].data(), n, 2);
  C_.topRows(n).noalias() = normals * J.topRows<2>();
  const double delta = std::min(kOvershoot, desc_.margin);
  for (int i = 0; i < n; ++i) {  // SupportRegion.constraint: a damper inside, an overshoot held, back beyond
    const double to_shrunk = offsets_[i] - desc_.margin - normals_[i].dot(p.head<2>());
    to_shrunk_(i) = to_shrunk;
    d_(i) = desc_.gain * (to_shrunk >= 0 ? to_shrunk : std::min(to_shrunk + delta, 0.0)) / dt;
  }
  count_ = n;
}

}  // namespace reljac

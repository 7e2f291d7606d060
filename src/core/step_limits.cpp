// The limits of the compiled step: their box and rows (intersect), and the state they keep
// between steps; see step_impl.hpp. Each function names the Python it mirrors.
#include "step_impl.hpp"

namespace reljac {

void Step::Impl::set_support(Limit& limit, const SupportRegionDescription& d) {
  if (static_cast<size_t>(d.contact_frames.size()) != d.points.size() || d.points.empty())
    throw std::invalid_argument("one points array per contact frame");
  for (long j = 0; j < d.contact_frames.size(); ++j) {
    const int f = d.contact_frames(j);
    if (f < 0 || f >= model.nframes) throw std::invalid_argument("frame id out of range");
    if (d.points[j].cols() != 3 || d.points[j].rows() < 1) throw std::invalid_argument("contact points must be (k x 3)");
    if (std::find(placed.begin(), placed.end(), f) == placed.end()) placed.push_back(f);
  }
  use_frame(d.frame);
  needs_com = true;
  if (limit.support)
    limit.support->set(d);
  else
    limit.support = std::make_unique<SupportLimit>(d);
}

// intersect() over the limits' constraints, in order (earlier limits win), and their rows.
void Step::Impl::constraints(const Vector& q, const std::vector<ExternalRows>& external) {
  const int nv = model.nv;
  cons.lo.setConstant(nv, -kInf);
  cons.hi.setConstant(nv, kInf);
  Vector& l = box_lo;
  Vector& h = box_hi;
  l.resize(nv);
  h.resize(nv);
  int total = 0;
  for (size_t i = 0; i < limits.size(); ++i) {
    Limit& limit = limits[i];
    bool has_box = true;
    switch (limit.type) {
      case LimitType::kBox:
        l = limit.lo;
        h = limit.hi;
        break;
      case LimitType::kPosition: {  // JointPositionLimit.joint_bounds
        const PositionLimitDescription& p = limit.position;
        l.setConstant(-kInf);
        h.setConstant(kInf);
        const double g = p.gain;
        for (int k = 0; k < p.q_index.size(); ++k) {
          const double qj = q(p.q_index(k));
          const double to_min = (p.q_min(k) - qj) / dt, to_max = (p.q_max(k) - qj) / dt;
          const bool below = to_min > 0, above = to_max < 0;
          const int j = p.v_index(k);
          l(j) = below ? to_min : (above ? std::min(g * to_min, to_max) : g * to_min);
          h(j) = above ? to_max : (below ? std::max(g * to_max, to_min) : g * to_max);
        }
        break;
      }
      case LimitType::kReversal:
        l = -limit.cap;
        h = limit.cap;
        break;
      case LimitType::kCollision:
        has_box = false;
        limit.collision->compute(data, dt);
        total += limit.collision->count();
        break;
      case LimitType::kSupport: {
        has_box = false;
        const int frame = limit.support->description().frame;
        center_of_mass_in(data, com_world, com_J_world, frame, jacobian(frame), com_p, com_J);
        limit.support->compute(data, com_p, com_J, dt);
        total += limit.support->count();
        break;
      }
      case LimitType::kExternal: {
        const ExternalRows& x = external.at(limit.external);
        has_box = x.lo != nullptr;
        if (has_box) {
          l = Eigen::Map<const Vector>(x.lo, nv);
          h = Eigen::Map<const Vector>(x.hi, nv);
        }
        total += x.rows;
        break;
      }
    }
    if (has_box) {
      clipped_lo = l.cwiseMax(cons.lo).cwiseMin(cons.hi);  // np.clip(c.lo, lo, hi)
      cons.hi = h.cwiseMax(cons.lo).cwiseMin(cons.hi);
      cons.lo = clipped_lo;
    }
  }
  if (cons.C.rows() < total || cons.C.cols() != nv) {  // room for every row the limits can give
    int room = total;
    for (const Limit& limit : limits) {
      if (limit.type == LimitType::kCollision) room += limit.collision->room() - limit.collision->count();
      if (limit.type == LimitType::kSupport) room += limit.support->room() - limit.support->count();
    }
    cons.C.resize(room, nv);
    cons.d.resize(room);
    sources.reserve(room);
  }
  cons.count = total;
  sources.clear();
  int at = 0;
  for (size_t i = 0; i < limits.size(); ++i) {
    const Limit& limit = limits[i];
    int m = 0;
    if (limit.type == LimitType::kCollision) {
      m = limit.collision->count();
      cons.C.middleRows(at, m) = limit.collision->C();
      cons.d.segment(at, m) = limit.collision->d();
    } else if (limit.type == LimitType::kSupport) {
      m = limit.support->count();
      cons.C.middleRows(at, m) = limit.support->C();
      cons.d.segment(at, m) = limit.support->d();
    } else if (limit.type == LimitType::kExternal) {
      const ExternalRows& x = external.at(limit.external);
      m = x.rows;
      if (m) {
        cons.C.middleRows(at, m) = Eigen::Map<const RowMatrix>(x.A, m, nv);
        cons.d.segment(at, m) = Eigen::Map<const Vector>(x.b, m);
      }
    }
    for (int r = 0; r < m; ++r) sources.push_back({static_cast<int>(i), r});
    at += m;
  }
}

void Step::Impl::observe(const Vector& velocity) {  // Limit.observe of ReversalDamping and CollisionAvoidance
  for (Limit& limit : limits) {
    if (limit.type == LimitType::kCollision) {
      limit.collision->observe(velocity);
      continue;
    }
    if (limit.type != LimitType::kReversal) continue;
    const ReversalDescription& r = limit.reversal;
    if (limit.has_last) {
      for (int j = 0; j < model.nv; ++j) {
        const bool reversed = std::abs(velocity(j)) > r.floor(j) && std::abs(limit.last(j)) > r.floor(j) &&
                              velocity(j) * limit.last(j) < 0;
        limit.cap(j) = reversed ? r.shrink * std::abs(velocity(j)) : limit.cap(j) * r.grow;
        if (limit.cap(j) > r.velocity_limits(j)) limit.cap(j) = kInf;
      }
    }
    limit.last = velocity;
    limit.has_last = true;
  }
}

}  // namespace reljac

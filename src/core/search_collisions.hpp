// Collision avoidance in a search (search.cpp): checked where the levels are met, not steered.
// Its specification is reljac/ik/search/collisions.py (why; what a search does after a collision).
// Private to search.cpp.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "step_impl.hpp"
#include "step_limits.hpp"

namespace reljac {
namespace search_collisions {

constexpr double kFeasibleTolerance = 1e-9;  // how far below 0 a row's d may be at a converged q

// The step's collision limits during a search: out of its limits (the steps ignore their pairs)
// unless steering; their pairs checked by clear(), with those of the collision tasks in its levels
// (a CollisionAvoidanceTask: its rows' distances). The step's limits as they were at the end.
class CheckedLimits {
 public:
  explicit CheckedLimits(Step::Impl& s) : s_(s) {
    for (size_t i = 0; i < s_.limits.size(); ++i)
      if (dynamic_cast<CollisionPart*>(s_.limits[i].get()) != nullptr) at_.push_back(i);
    CollisionRows probe;
    for (size_t i = 0; i < s_.tasks.size(); ++i)
      if (s_.tasks[i]->collision_rows(probe)) tasks_.push_back(static_cast<int>(i));
    limits_.resize(at_.size());
    steer(false);
  }
  ~CheckedLimits() { steer(true); }
  CheckedLimits(const CheckedLimits&) = delete;
  CheckedLimits& operator=(const CheckedLimits&) = delete;

  // collisions.py's steerable: collision avoidance given as a limit, whose rows a local search may keep
  bool steerable() const { return !at_.empty(); }
  bool steering() const { return steering_; }
  // collisions.py's lazy: collision pairs checked, not steered, at this moment
  bool lazy() const { return (steerable() || !tasks_.empty()) && !steering_; }

  // The checked limits in the step's limits (steered: their rows kept by the steps), or out of them.
  void steer(bool steering) {
    if (steering == steering_) return;
    steering_ = steering;
    if (steering) {
      for (size_t k = 0; k < limits_.size(); ++k)
        s_.limits.insert(s_.limits.begin() + static_cast<long>(at_[k]), std::move(limits_[k]));
    } else {
      for (size_t k = limits_.size(); k-- > 0;) {
        limits_[k] = std::move(s_.limits[at_[k]]);
        s_.limits.erase(s_.limits.begin() + static_cast<long>(at_[k]));
      }
    }
  }

  // collisions.py's clear: every pair of the checked limits not steered now (the rows' d at v = 0
  // not below -kFeasibleTolerance; `fresh`: the kinematics at q are computed) and of the collision
  // tasks (their rows at q, the step's last: e = d - d_s - margin not below -kFeasibleTolerance)
  // at least its distance apart at q; true when there is none.
  bool clear(const Vector& q, bool fresh) {
    for (int index : tasks_) {
      const Vector& e = s_.rows[static_cast<size_t>(index)].e;
      if (e.size() > 0 && e.minCoeff() < -kFeasibleTolerance) return false;
    }
    if (steering_ || limits_.empty()) return true;
    if (!fresh) s_.kinematics(q, false);
    for (auto& limit : limits_) {
      limit->constrain(s_, q, lo_, hi_);
      const int m = limit->count();
      if (m == 0) continue;
      if (C_.rows() < limit->room() || C_.cols() != s_.model.nv) {
        C_.resize(limit->room(), s_.model.nv);
        d_.resize(limit->room());
      }
      limit->copy_rows(C_, d_, 0);
      if (d_.head(m).minCoeff() < -kFeasibleTolerance) return false;
    }
    return true;
  }

 private:
  Step::Impl& s_;
  std::vector<std::unique_ptr<CompiledLimit>> limits_;  // while not steering; else empty slots
  std::vector<size_t> at_;                              // their places in the step's limits
  std::vector<int> tasks_;                              // the collision tasks' indices in the step's tasks
  bool steering_ = true;                                // they are in the step's limits
  Vector lo_, hi_, d_;
  Matrix C_;
};

}  // namespace search_collisions
}  // namespace reljac

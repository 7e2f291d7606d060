// The limit kinds whose state the step's bindings read (step_limits.cpp): reversal damping's caps
// and the collision rows. Private to the step; see step_impl.hpp.
#pragma once

#include <memory>

#include "collision.hpp"
#include "kind.hpp"
#include "limit_descriptions.hpp"

namespace reljac {

class ReversalLimit : public CompiledLimit {
 public:
  void update(StepContext& s, const LimitDescription& d) override;
  bool constrain(StepContext& s, const Vector& q, Vector& lo, Vector& hi) override;
  void observe(const Vector& v) override;
  void reset() override;
  const Vector& cap() const { return cap_; }

 private:
  ReversalDampingDescription desc_;
  Vector cap_, last_, mean_, speed_;  // mean_, speed_: running means of v and |v|
  bool has_last_ = false;
};

class CollisionPart : public CompiledLimit {
 public:
  void update(StepContext& s, const LimitDescription& d) override;
  bool constrain(StepContext& s, const Vector& q, Vector& lo, Vector& hi) override;
  int count() const override { return limit_->count(); }
  int room() const override { return limit_->room(); }
  void copy_rows(Matrix& C, Vector& d, int at) const override;
  void observe(const Vector& v) override { limit_->observe(v); }
  void reset() override { limit_->reset(); }
  CollisionRows rows() const { return limit_->rows(); }

 private:
  std::unique_ptr<CollisionLimit> limit_;
};

}  // namespace reljac

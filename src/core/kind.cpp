// What every task kind shares (kind.hpp): its parameters, its cap on gain e, its error norms.
#include "kind.hpp"

#include <cmath>

namespace reljac {

void check_size(const Vector& x, long size, const char* what) {
  if (x.size() != size) throw std::invalid_argument(std::string(what) + " has the wrong size");
}

namespace {

// f.segment(start, length) scaled down to norm `cap` when longer (Task._feedback).
void cap_part(Vector& f, int start, int length, double cap) {
  const double norm = f.segment(start, length).norm();
  if (norm > cap) f.segment(start, length) *= cap / norm;
}

}  // namespace

void CompiledTask::set_parameters(const TaskParameters& p, int rows) {  // Task.set_weight
  check_size(p.weight, rows, "weight");
  if (p.bounded() || p.upper.size()) {  // Task.set_bounds' checks
    check_size(p.lower, rows, "lower bound");
    check_size(p.upper, rows, "upper bound");
    for (int i = 0; i < rows; ++i)
      if (std::isnan(p.lower(i)) || std::isnan(p.upper(i)) || p.lower(i) > p.upper(i))
        throw std::invalid_argument("bounds must be numbers (+-inf: open) with lower <= upper");
  }
  size = rows;
  parameters = p;
  kept.clear();
  unit_weights = true;
  for (int i = 0; i < p.weight.size(); ++i) {
    if (p.weight(i) > 0) kept.push_back(i);
    if (p.weight(i) != 1.0) unit_weights = false;
  }
}

void CompiledTask::resize_rows(int rows, double weight, double lower, double upper) {
  size = rows;
  if (parameters.weight.size() != rows) {  // (only when the count changes)
    parameters.weight.resize(rows);
    parameters.lower.resize(rows);
    parameters.upper.resize(rows);
  }
  parameters.with_bounds = true;
  parameters.weight.setConstant(weight);
  parameters.lower.setConstant(lower);
  parameters.upper.setConstant(upper);
  kept.clear();
  if (weight > 0)
    for (int i = 0; i < rows; ++i) kept.push_back(i);
  unit_weights = weight == 1.0;
}

void CompiledTask::cap(Vector& f) const { cap_part(f, 0, static_cast<int>(f.size()), parameters.max_speed[0]); }

void CompiledTask::set_target(const StepContext&, const Vector&) {
  throw std::invalid_argument("this task has no target the core holds");
}

void CompiledTask::error_norms(const StepContext&, const Vector& e, double& first, double& second) const {
  first = second = 0.0;  // squared, then their roots
  for (int i = 0; i < e.size(); ++i)
    if (parameters.weight(i) > 0) first += e(i) * e(i);
  first = std::sqrt(first);
}

// The caps of a pose's linear and angular halves (FrameTask::cap; here for any kind of 6 rows).
void cap_pose(Vector& f, const TaskParameters& p) {
  cap_part(f, 0, 3, p.max_speed[0]);
  cap_part(f, 3, 3, p.max_speed[1]);
}

}  // namespace reljac

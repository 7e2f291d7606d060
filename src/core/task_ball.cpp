// The norm of another task's error (BallTask, reljac/ik/tasks/ball.py, its specification and
// oracle; tests/test_bounded_compiled_step.py): a task kind in one file (kind.hpp, schema.hpp),
// whose description holds its inner task's description (any compiled kind; a posture gives its
// rows densely here).
//
// e = |e_in| over the rows the inner task keeps (weight > 0), 1 row [units of e_in]; J = u^T J_in,
// feed-forward u . ff_in with u = e_in / |e_in| (a zero row at |e_in| <= kTinyNorm). The inner
// task's own gain, weights and bounds are not used; the ball's bounds (0 <= |e| <= radius) are.
#include "schema.hpp"

namespace reljac {

namespace {

constexpr double kTinyNorm = 1e-12;  // reljac.ik.tasks.ball.TINY_NORM

struct BallTaskDescription : TaskDescription {
  std::shared_ptr<const TaskDescription> inner;  // the inner task's description
  TaskParameters parameters;
  std::unique_ptr<CompiledTask> make() const override;
};

const KindSchema ball_schema =
    task_kind<BallTaskDescription>("BallTaskDescription", "The norm of another task's error (BallTask).")
        .field("inner", &BallTaskDescription::inner, "the inner task's description")
        .parameters(&BallTaskDescription::parameters);

class BallTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {
    const auto& d = described_as<BallTaskDescription>(description, "ball task");
    if (!d.inner) throw std::invalid_argument("a ball task needs its inner task's description");
    std::unique_ptr<CompiledTask> inner = d.inner->make();
    if (inner->external() || inner->pending()) throw std::invalid_argument("a ball's inner task must be compiled");
    inner->dense_rows();
    inner->update(s, *d.inner);
    set_parameters(d.parameters, 1);
    inner_ = std::move(inner);
  }

  bool compute(StepContext& s, const Vector& q, Rows& out) override {  // BallTask.compute
    if (!inner_->compute(s, q, inner_rows_)) throw std::logic_error("a ball's inner task gave no Jacobian");
    const Vector& e = inner_rows_.e;
    const std::vector<int>& kept = inner_->kept;
    double squared = 0.0;
    for (int r : kept) squared += e(r) * e(r);
    const double norm = std::sqrt(squared);
    const int nv = s.nv();
    out.e.resize(1);
    out.e(0) = norm;
    out.J.setZero(1, nv);
    out.ff.setZero(1);
    if (norm <= kTinyNorm) return true;
    for (int r : kept) {
      const double u = e(r) / norm;
      out.J.row(0) += u * inner_rows_.J.row(r);
      out.ff(0) += u * inner_rows_.ff(r);
    }
    return true;
  }

  // The inner task's target (the ball's centre): solve_many's problems set it through the ball
  // (Step::set_task_target on the ball's index; issue 42, a minimal change for the search).
  void set_target(const StepContext& s, const Vector& values) override { inner_->set_target(s, values); }

 private:
  std::unique_ptr<CompiledTask> inner_;
  Rows inner_rows_;  // the inner task's terms (its buffers, kept from step to step)
};

std::unique_ptr<CompiledTask> BallTaskDescription::make() const { return std::make_unique<BallTask>(); }

}  // namespace

}  // namespace reljac

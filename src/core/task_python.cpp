// The tasks the core does not compute: a Python task whose rows Python passes in each step
// (ExternalRows), and a task not described yet (its first description comes before the first step).
#include "schema.hpp"

namespace reljac {

namespace {

struct ExternalTaskDescription : TaskDescription {
  int size = 0;
  std::unique_ptr<CompiledTask> make() const override;
};

struct PendingTaskDescription : TaskDescription {
  int size = 0;
  std::unique_ptr<CompiledTask> make() const override;
};

const KindSchema external_schema =
    task_kind<ExternalTaskDescription>("ExternalTaskDescription",
                                       "A task whose rows Python computes each step (passed to Step.velocity).")
        .field("size", &ExternalTaskDescription::size, "rows of its error");
const KindSchema pending_schema =
    task_kind<PendingTaskDescription>("PendingTaskDescription",
                                      "A task described at its first step (no target yet): its rows until then.")
        .field("size", &PendingTaskDescription::size, "rows of its error");

class ExternalTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {
    size = described_as<ExternalTaskDescription>(description, "Python task").size;
    if (index_ < 0) index_ = s.add_external_task();
  }
  bool compute(StepContext& s, const Vector&, Rows& out) override {
    const ExternalRows& x = s.external_task(index_);
    out.identity = false;
    out.A = Eigen::Map<const RowMatrix>(x.A, x.rows, s.nv());
    out.b = Eigen::Map<const Vector>(x.b, x.rows);
    out.feedback = Eigen::Map<const Vector>(x.feedback, x.rows);
    out.bounded = x.lower != nullptr && !s.search_mode();
    if (out.bounded) {
      out.lower = Eigen::Map<const Vector>(x.lower, x.rows);
      out.upper = Eigen::Map<const Vector>(x.upper, x.rows);
    }
    return false;
  }
  bool external() const override { return true; }

 private:
  int index_ = -1;  // among the external tasks
};

class PendingTask : public CompiledTask {
 public:
  void update(StepContext&, const TaskDescription& description) override {
    size = described_as<PendingTaskDescription>(description, "pending task").size;
  }
  bool compute(StepContext&, const Vector&, Rows&) override {
    throw std::logic_error("a task was not described before the step");
  }
  bool pending() const override { return true; }
};

std::unique_ptr<CompiledTask> ExternalTaskDescription::make() const { return std::make_unique<ExternalTask>(); }
std::unique_ptr<CompiledTask> PendingTaskDescription::make() const { return std::make_unique<PendingTask>(); }

}  // namespace

}  // namespace reljac

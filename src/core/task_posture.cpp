// PostureTask: e = difference(target, q), nv rows (reljac/ik/tasks/posture.py, the specification
// and oracle); the identity form A = c diag(mask) when its kept rows have one weight c and no
// joint of more than one velocity.
#include "schema.hpp"

namespace reljac {

namespace {

struct PostureDescription : TaskDescription {
  TaskParameters parameters;
  Vector target;  // (nq)
  std::unique_ptr<CompiledTask> make() const override;
};

const KindSchema posture_schema =
    task_kind<PostureDescription>("PostureDescription", "A joint posture: e = difference(target, q) (PostureTask).")
        .field("target", &PostureDescription::target, "(nq,) target configuration")
        .parameters(&PostureDescription::parameters);

class PostureTask : public CompiledTask {
 public:
  void update(StepContext& s, const TaskDescription& description) override {  // PostureTask.set_weight
    const auto& d = described_as<PostureDescription>(description, "posture task");
    set_parameters(d.parameters, s.nv());
    check_size(d.target, s.nq(), "posture target");
    target_ = d.target;
    mask = (d.parameters.weight.array() > 0).cast<double>();
    identity_scale = 0.0;
    bool uniform = !kept.empty(), curved_kept = false;
    for (int i : kept) {
      uniform = uniform && d.parameters.weight(i) == d.parameters.weight(kept[0]);
      curved_kept = curved_kept || s.curved(i);
    }
    if (uniform && !curved_kept && !dense_) identity_scale = d.parameters.weight(kept[0]);
  }

  void dense_rows() override {  // (a posture inside a BallTask: its Jacobian is needed)
    dense_ = true;
    identity_scale = 0.0;
  }

  bool compute(StepContext& s, const Vector& q, Rows& out) override {
    const int nv = s.nv();
    Vector& e = out.e;
    e.resize(nv);
    s.difference(target_, q, e);
    if (identity_scale != 0.0 && parameters.bounded()) {  // PostureTask.rows, a band
      out.ff.setZero(nv);
      s.bound_rates(*this, out.ff, out);
      out.feedback = mask.cwiseProduct(identity_scale * out.f);
      out.b = mask.cwiseProduct(identity_scale * out.rate);
      out.lower.resize(nv);
      out.upper.resize(nv);
      for (int i = 0; i < nv; ++i) {  // open on masked rows
        out.lower(i) = mask(i) > 0 ? identity_scale * out.rate_lower(i) : -std::numeric_limits<double>::infinity();
        out.upper(i) = mask(i) > 0 ? identity_scale * out.rate_upper(i) : std::numeric_limits<double>::infinity();
      }
      out.bounded = out.identity = true;
      return false;
    }
    if (identity_scale != 0.0) {  // PostureTask.rows, identity form
      s.feedback(*this, e, out.f);
      out.feedback = mask.cwiseProduct(identity_scale * out.f);
      out.b = -out.feedback;
      out.identity = true;
      return false;
    }
    if (s.euclidean()) {
      out.J = Matrix::Identity(nv, nv);
    } else {
      out.J.setZero(nv, nv);
      s.difference_jacobian(target_, q, out.J);
    }
    out.ff = Vector::Zero(nv);
    return true;
  }

  void set_target(const StepContext& s, const Vector& values) override {
    check_size(values, s.nq(), "posture target");
    target_ = values;
  }

 private:
  Vector target_;  // (nq)
  bool dense_ = false;
};

std::unique_ptr<CompiledTask> PostureDescription::make() const { return std::make_unique<PostureTask>(); }

}  // namespace

}  // namespace reljac

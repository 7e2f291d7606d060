// Python bindings of the descriptions the compiled step takes (step.hpp): one class per task and
// limit kind, built from named arguments, its fields readable. Their names and fields are those of
// reljac/ik/description.py's records (tests/test_core_schema.py checks it field by field), so the
// compiled step hands a record over as core.<its class name>(*its fields, in order). Names and shapes only.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include "bind_descriptions.hpp"

namespace py = pybind11;
using reljac::Vector;

namespace {

const char* const kFrameKinds[] = {"pose", "position", "orientation"};

reljac::FrameKind frame_kind(const std::string& kind) {
  for (int k = 0; k < 3; ++k)
    if (kind == kFrameKinds[k]) return static_cast<reljac::FrameKind>(k);
  throw py::value_error("kind must be 'pose', 'position' or 'orientation', got '" + kind + "'");
}

}  // namespace

void bind_descriptions(py::module_& m) {
  using namespace reljac;
  py::class_<TaskDescription>(m, "TaskDescription", "What a task gives the compiled step (one subclass per kind).");
  py::class_<LimitDescription>(m, "LimitDescription", "What a limit gives the compiled step (one subclass per kind).");

  py::class_<FrameTaskDescription, TaskDescription> frame(
      m, "FrameTaskDescription", "The motion of frame b measured in frame a (reljac.ik.description.FrameTaskDescription).");
  frame
      .def(py::init([](const std::string& kind, int frame_a, int frame_b, double gain, const Vector& weight,
                       const std::optional<Vector>& max_speed, const Eigen::Matrix4d& target, const Vector& velocity,
                       const std::optional<Vector>& lower, const std::optional<Vector>& upper) {
             FrameTaskDescription d;
             d.kind = frame_kind(kind);
             d.frame_a = frame_a;
             d.frame_b = frame_b;
             d.parameters = parameters(gain, weight, max_speed, lower, upper);
             d.target = target;
             d.velocity = velocity;
             return d;
           }),
           py::arg("kind"), py::arg("frame_a"), py::arg("frame_b"), py::arg("gain"), py::arg("weight"),
           py::arg("max_speed"), py::arg("target"), py::arg("target_velocity"), py::arg("lower") = py::none(), py::arg("upper") = py::none())
      .def_property_readonly("kind", [](const FrameTaskDescription& d) { return kFrameKinds[static_cast<int>(d.kind)]; },
                             "'pose' (6 rows), 'position' or 'orientation' (3 rows)")
      .def_readonly("frame_a", &FrameTaskDescription::frame_a, "Pinocchio frame id of a")
      .def_readonly("frame_b", &FrameTaskDescription::frame_b, "Pinocchio frame id of b")
      .def_readonly("target", &FrameTaskDescription::target, "(4, 4) homogeneous T_ab target")
      .def_readonly("target_velocity", &FrameTaskDescription::velocity, "(size,) target velocity [m/s, rad/s]");
  parameter_fields(frame);

  py::class_<PostureDescription, TaskDescription> posture(
      m, "PostureDescription", "A joint posture: e = difference(target, q) (reljac.ik.description.PostureDescription).");
  posture
      .def(py::init([](double gain, const Vector& weight, const std::optional<Vector>& max_speed, const Vector& target,
                       const std::optional<Vector>& lower, const std::optional<Vector>& upper) {
             PostureDescription d;
             d.parameters = parameters(gain, weight, max_speed, lower, upper);
             d.target = target;
             return d;
           }),
           py::arg("gain"), py::arg("weight"), py::arg("max_speed"), py::arg("target"), py::arg("lower") = py::none(), py::arg("upper") = py::none())
      .def_readonly("target", &PostureDescription::target, "(nq,) target configuration");
  parameter_fields(posture);

  py::class_<CoMTaskDescription, TaskDescription> com(
      m, "CoMTaskDescription", "The centre of mass measured in frame a (reljac.ik.description.CoMTaskDescription).");
  com.def(py::init([](int frame, const Eigen::VectorXi& axes, double gain, const Vector& weight,
                      const std::optional<Vector>& max_speed, const Vector& target, const Vector& velocity,
                      const std::optional<Vector>& lower, const std::optional<Vector>& upper) {
            CoMTaskDescription d;
            d.frame = frame;
            d.axes = axes;
            d.parameters = parameters(gain, weight, max_speed, lower, upper);
            d.target = target;
            d.velocity = velocity;
            return d;
          }),
          py::arg("frame"), py::arg("axes"), py::arg("gain"), py::arg("weight"), py::arg("max_speed"),
          py::arg("target"), py::arg("target_velocity"), py::arg("lower") = py::none(), py::arg("upper") = py::none())
      .def_readonly("frame", &CoMTaskDescription::frame, "Pinocchio frame id of a (0: the world)")
      .def_readonly("axes", &CoMTaskDescription::axes, "(size,) indices among x, y, z")
      .def_readonly("target", &CoMTaskDescription::target, "(size,) target [m]")
      .def_readonly("target_velocity", &CoMTaskDescription::velocity, "(size,) target velocity [m/s]");
  parameter_fields(com);

  py::class_<ExternalTaskDescription, TaskDescription>(
      m, "ExternalTaskDescription", "A task whose rows Python computes each step (passed to Step.velocity).")
      .def(py::init([](int size) {
             ExternalTaskDescription d;
             d.size = size;
             return d;
           }),
           py::arg("size"))
      .def_readonly("size", &ExternalTaskDescription::size, "rows of its error");
  py::class_<PendingTaskDescription, TaskDescription>(
      m, "PendingTaskDescription", "A task described at its first step (no target yet): its rows until then.")
      .def(py::init([](int size) {
             PendingTaskDescription d;
             d.size = size;
             return d;
           }),
           py::arg("size"))
      .def_readonly("size", &PendingTaskDescription::size, "rows of its error");

  py::class_<VelocityBoxDescription, LimitDescription>(
      m, "VelocityBoxDescription", "A constant box lo <= v <= hi (reljac.ik.description.VelocityBoxDescription).")
      .def(py::init([](const Vector& lo, const Vector& hi) {
             VelocityBoxDescription d;
             d.lo = lo;
             d.hi = hi;
             return d;
           }),
           py::arg("lo"), py::arg("hi"))
      .def_readonly("lo", &VelocityBoxDescription::lo, "(nv,) [rad/s, m/s]")
      .def_readonly("hi", &VelocityBoxDescription::hi, "(nv,) [rad/s, m/s]");

  py::class_<PositionLimitDescription, LimitDescription>(
      m, "PositionLimitDescription", "Position limits as velocity bounds (reljac.ik.description.PositionLimitDescription).")
      .def(py::init([](const Eigen::VectorXi& q_index, const Eigen::VectorXi& v_index, const Vector& q_min,
                       const Vector& q_max, const Vector& urdf_min, const Vector& urdf_max, double limit_gain) {
             PositionLimitDescription d;
             d.q_index = q_index;
             d.v_index = v_index;
             d.q_min = q_min;
             d.q_max = q_max;
             d.urdf_min = urdf_min;
             d.urdf_max = urdf_max;
             d.gain = limit_gain;
             return d;
           }),
           py::arg("q_index"), py::arg("v_index"), py::arg("q_min"), py::arg("q_max"), py::arg("urdf_min"),
           py::arg("urdf_max"), py::arg("limit_gain"))
      .def_readonly("q_index", &PositionLimitDescription::q_index, "(k,) q indices of the limited joints")
      .def_readonly("v_index", &PositionLimitDescription::v_index, "(k,) their v indices")
      .def_readonly("q_min", &PositionLimitDescription::q_min, "(k,) limits kept")
      .def_readonly("q_max", &PositionLimitDescription::q_max, "(k,) limits kept")
      .def_readonly("urdf_min", &PositionLimitDescription::urdf_min, "(k,) the URDF's limits")
      .def_readonly("urdf_max", &PositionLimitDescription::urdf_max, "(k,) the URDF's limits")
      .def_readonly("limit_gain", &PositionLimitDescription::gain, "gamma in (0, 1]");

  py::class_<ReversalDampingDescription, LimitDescription>(
      m, "ReversalDampingDescription", "Rprop's step-size control (reljac.ik.description.ReversalDampingDescription).")
      .def(py::init([](const Vector& velocity_limits, const Vector& floor, double shrink, double grow) {
             ReversalDampingDescription d;
             d.velocity_limits = velocity_limits;
             d.floor = floor;
             d.shrink = shrink;
             d.grow = grow;
             return d;
           }),
           py::arg("velocity_limits"), py::arg("floor"), py::arg("shrink"), py::arg("grow"))
      .def_readonly("velocity_limits", &ReversalDampingDescription::velocity_limits, "(nv,) [rad/s, m/s]")
      .def_readonly("floor", &ReversalDampingDescription::floor, "(nv,) speeds below which a reversal does not count")
      .def_readonly("shrink", &ReversalDampingDescription::shrink, "factor on the last speed after a reversal")
      .def_readonly("grow", &ReversalDampingDescription::grow, "factor by which a cap grows back per step");

  py::class_<CollisionAvoidanceDescription, LimitDescription>(
      m, "CollisionAvoidanceDescription",
      "Velocity dampers on a geometry model's pairs (reljac.ik.description.CollisionAvoidanceDescription).")
      .def(py::init([](const py::object& geometry, double min_distance, double influence_distance, double gain,
                       double margin) {
             CollisionAvoidanceDescription d;
             d.geometry = PyRef(geometry.ptr());
             d.min_distance = min_distance;
             d.influence_distance = influence_distance;
             d.gain = gain;
             d.margin = margin;
             return d;
           }),
           py::arg("geometry"), py::arg("min_distance"), py::arg("influence_distance"), py::arg("gain"),
           py::arg("margin"))
      .def_property_readonly("geometry", [](const CollisionAvoidanceDescription& d) {
        return py::reinterpret_borrow<py::object>(d.geometry.get());
      }, "the pin.GeometryModel whose collisionPairs are kept apart")
      .def_readonly("min_distance", &CollisionAvoidanceDescription::min_distance, "[m]")
      .def_readonly("influence_distance", &CollisionAvoidanceDescription::influence_distance, "[m]")
      .def_readonly("gain", &CollisionAvoidanceDescription::gain, "the dampers' gain")
      .def_readonly("margin", &CollisionAvoidanceDescription::margin, "[m]");

  py::class_<SupportRegionDescription, LimitDescription>(
      m, "SupportRegionDescription",
      "The horizontal centre of mass inside the contacts' hull (reljac.ik.description.SupportRegionDescription).")
      .def(py::init([](int frame, const Eigen::VectorXi& contact_frames, const std::vector<RowMatrix>& contact_points,
                       double margin, double gain) {
             SupportRegionDescription d;
             d.frame = frame;
             d.contact_frames = contact_frames;
             d.points = contact_points;
             d.margin = margin;
             d.gain = gain;
             return d;
           }),
           py::arg("frame"), py::arg("contact_frames"), py::arg("contact_points"), py::arg("margin"), py::arg("gain"))
      .def_readonly("frame", &SupportRegionDescription::frame, "Pinocchio frame id of the region's plane")
      .def_readonly("contact_frames", &SupportRegionDescription::contact_frames, "(k,) frame ids")
      .def_readonly("contact_points", &SupportRegionDescription::points, "k arrays (p_j, 3) in their frames [m]")
      .def_readonly("margin", &SupportRegionDescription::margin, "[m]")
      .def_readonly("gain", &SupportRegionDescription::gain, "the dampers' gain");

  py::class_<ExternalLimitDescription, LimitDescription>(
      m, "ExternalLimitDescription", "A limit whose box or rows Python computes each step (passed to Step.velocity).")
      .def(py::init<>());

  for (const auto& bind : module_parts()) bind(m);  // the kinds defined in files of their own
}

"""
reljac's compiled core on Pinocchio and coal (see reljac/ik/hierarchy.py for the solver it mirrors)
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['AMPLIFIED', 'BOUND_TOLERANCE', 'BallTaskDescription', 'COLLINEAR_TOLERANCE', 'CapabilityReduction', 'CoMTaskDescription', 'CollisionAvoidanceDescription', 'CollisionRows', 'DistanceTaskDescription', 'ExternalLimitDescription', 'ExternalTaskDescription', 'FAILED', 'FrameTaskDescription', 'GJK_TOLERANCE', 'LevelReport', 'LimitDescription', 'MAX_SQUARE', 'MAX_STALE_SATURATIONS', 'MET_TOLERANCE', 'OVERSHOOT', 'PIVOT_TOLERANCE', 'PendingTaskDescription', 'PositionLimitDescription', 'PostureDescription', 'RANK_TOLERANCE', 'ReversalDampingDescription', 'RowSource', 'SearchBatch', 'SearchOptions', 'SearchResult', 'Step', 'StepFailure', 'SupportFailure', 'SupportRegionDescription', 'TaskDescription', 'UNIT_TOLERANCE', 'VelocityBoxDescription', 'accumulate', 'built_with', 'configuration_ok', 'configurations_from_uniforms', 'manipulabilities', 'merge_partials', 'relative_jacobian', 'relative_jacobian_in', 'relative_jacobians_in', 'relative_kinematics', 'relative_placement', 'relative_placement_in', 'search_many', 'solve_hierarchy', 'threaded_kinematics_seconds']
class CapabilityReduction:
    """
    One chunk's reduction of a capability map (reljac/maps/kernel.py)
    """
    def __init__(self, model: typing.Any, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, origin: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], voxel: typing.SupportsFloat | typing.SupportsIndex, dims: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], directions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], axis: typing.SupportsInt | typing.SupportsIndex, rows: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        A reduction over the voxels of a map's grid, on a pin.Model (reljac/maps/kernel.py).
        """
    def add(self, Q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], first_index: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Reduce the samples Q (n, nq), numbered from first_index.
        """
    def result(self) -> tuple:
        """
        The chunk's result: per-voxel arrays (reljac/maps/kernel.py).
        """
class TaskDescription:
    """
    What a task gives the compiled step (one subclass per kind).
    """
class LimitDescription:
    """
    What a limit gives the compiled step (one subclass per kind).
    """
class FrameTaskDescription(TaskDescription):
    """
    The motion of frame b measured in frame a (reljac.ik.description.FrameTaskDescription).
    """
    def __init__(self, kind: str, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, gain: typing.SupportsFloat | typing.SupportsIndex, weight: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], max_speed: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, target: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[4, 4]"], target_velocity: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], lower: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None, upper: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None) -> None:
        ...
    @property
    def frame_a(self) -> int:
        """
        Pinocchio frame id of a
        """
    @property
    def frame_b(self) -> int:
        """
        Pinocchio frame id of b
        """
    @property
    def gain(self) -> float:
        """
        gain [1/s]
        """
    @property
    def kind(self) -> str:
        """
        'pose' (6 rows), 'position' or 'orientation' (3 rows)
        """
    @property
    def lower(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) lower bounds on e (-inf: open), or None: no bounds
        """
    @property
    def max_speed(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (linear, angular) caps on |gain e| [m/s, rad/s], or None
        """
    @property
    def target(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[4, 4]"]:
        """
        (4, 4) homogeneous T_ab target
        """
    @property
    def target_velocity(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (size,) target velocity [m/s, rad/s]
        """
    @property
    def upper(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) upper bounds on e (inf: open), or None: no bounds
        """
    @property
    def weight(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (size,) row weights
        """
class PostureDescription(TaskDescription):
    """
    A joint posture: e = difference(target, q) (reljac.ik.description.PostureDescription).
    """
    def __init__(self, gain: typing.SupportsFloat | typing.SupportsIndex, weight: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], max_speed: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, target: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], lower: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None, upper: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None) -> None:
        ...
    @property
    def gain(self) -> float:
        """
        gain [1/s]
        """
    @property
    def lower(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) lower bounds on e (-inf: open), or None: no bounds
        """
    @property
    def max_speed(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (linear, angular) caps on |gain e| [m/s, rad/s], or None
        """
    @property
    def target(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nq,) target configuration
        """
    @property
    def upper(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) upper bounds on e (inf: open), or None: no bounds
        """
    @property
    def weight(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (size,) row weights
        """
class CoMTaskDescription(TaskDescription):
    """
    The centre of mass measured in frame a (reljac.ik.description.CoMTaskDescription).
    """
    def __init__(self, frame: typing.SupportsInt | typing.SupportsIndex, axes: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], gain: typing.SupportsFloat | typing.SupportsIndex, weight: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], max_speed: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, target: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], target_velocity: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], lower: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None, upper: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None) -> None:
        ...
    @property
    def axes(self) -> typing.Annotated[numpy.typing.NDArray[numpy.int32], "[m, 1]"]:
        """
        (size,) indices among x, y, z
        """
    @property
    def frame(self) -> int:
        """
        Pinocchio frame id of a (0: the world)
        """
    @property
    def gain(self) -> float:
        """
        gain [1/s]
        """
    @property
    def lower(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) lower bounds on e (-inf: open), or None: no bounds
        """
    @property
    def max_speed(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (linear, angular) caps on |gain e| [m/s, rad/s], or None
        """
    @property
    def target(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (size,) target [m]
        """
    @property
    def target_velocity(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (size,) target velocity [m/s]
        """
    @property
    def upper(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) upper bounds on e (inf: open), or None: no bounds
        """
    @property
    def weight(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (size,) row weights
        """
class ExternalTaskDescription(TaskDescription):
    """
    A task whose rows Python computes each step (passed to Step.velocity).
    """
    def __init__(self, size: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def size(self) -> int:
        """
        rows of its error
        """
class PendingTaskDescription(TaskDescription):
    """
    A task described at its first step (no target yet): its rows until then.
    """
    def __init__(self, size: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def size(self) -> int:
        """
        rows of its error
        """
class VelocityBoxDescription(LimitDescription):
    """
    A constant box lo <= v <= hi (reljac.ik.description.VelocityBoxDescription).
    """
    def __init__(self, lo: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], hi: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> None:
        ...
    @property
    def hi(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nv,) [rad/s, m/s]
        """
    @property
    def lo(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nv,) [rad/s, m/s]
        """
class PositionLimitDescription(LimitDescription):
    """
    Position limits as velocity bounds (reljac.ik.description.PositionLimitDescription).
    """
    def __init__(self, q_index: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], v_index: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], q_min: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], q_max: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], urdf_min: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], urdf_max: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], limit_gain: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def limit_gain(self) -> float:
        """
        gamma in (0, 1]
        """
    @property
    def q_index(self) -> typing.Annotated[numpy.typing.NDArray[numpy.int32], "[m, 1]"]:
        """
        (k,) q indices of the limited joints
        """
    @property
    def q_max(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (k,) limits kept
        """
    @property
    def q_min(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (k,) limits kept
        """
    @property
    def urdf_max(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (k,) the URDF's limits
        """
    @property
    def urdf_min(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (k,) the URDF's limits
        """
    @property
    def v_index(self) -> typing.Annotated[numpy.typing.NDArray[numpy.int32], "[m, 1]"]:
        """
        (k,) their v indices
        """
class ReversalDampingDescription(LimitDescription):
    """
    Rprop's step-size control (reljac.ik.description.ReversalDampingDescription).
    """
    def __init__(self, velocity_limits: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], floor: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], shrink: typing.SupportsFloat | typing.SupportsIndex, grow: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def floor(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nv,) speeds below which a reversal does not count
        """
    @property
    def grow(self) -> float:
        """
        factor by which a cap grows back per step
        """
    @property
    def shrink(self) -> float:
        """
        factor on the last speed after a reversal
        """
    @property
    def velocity_limits(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nv,) [rad/s, m/s]
        """
class CollisionAvoidanceDescription(LimitDescription):
    """
    Velocity dampers on a geometry model's pairs (reljac.ik.description.CollisionAvoidanceDescription).
    """
    def __init__(self, geometry: typing.Any, min_distance: typing.SupportsFloat | typing.SupportsIndex, influence_distance: typing.SupportsFloat | typing.SupportsIndex, gain: typing.SupportsFloat | typing.SupportsIndex, margin: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def gain(self) -> float:
        """
        the dampers' gain
        """
    @property
    def geometry(self) -> typing.Any:
        """
        the pin.GeometryModel whose collisionPairs are kept apart
        """
    @property
    def influence_distance(self) -> float:
        """
        [m]
        """
    @property
    def margin(self) -> float:
        """
        [m]
        """
    @property
    def min_distance(self) -> float:
        """
        [m]
        """
class SupportRegionDescription(LimitDescription):
    """
    The horizontal centre of mass inside the contacts' hull (reljac.ik.description.SupportRegionDescription).
    """
    def __init__(self, frame: typing.SupportsInt | typing.SupportsIndex, contact_frames: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], contact_points: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"]], margin: typing.SupportsFloat | typing.SupportsIndex, gain: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def contact_frames(self) -> typing.Annotated[numpy.typing.NDArray[numpy.int32], "[m, 1]"]:
        """
        (k,) frame ids
        """
    @property
    def contact_points(self) -> list[typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"]]:
        """
        k arrays (p_j, 3) in their frames [m]
        """
    @property
    def frame(self) -> int:
        """
        Pinocchio frame id of the region's plane
        """
    @property
    def gain(self) -> float:
        """
        the dampers' gain
        """
    @property
    def margin(self) -> float:
        """
        [m]
        """
class ExternalLimitDescription(LimitDescription):
    """
    A limit whose box or rows Python computes each step (passed to Step.velocity).
    """
    def __init__(self) -> None:
        ...
class BallTaskDescription(TaskDescription):
    """
    The norm of another task's error (reljac.ik.bounds.BallTaskDescription).
    """
    def __init__(self, inner: typing.Any, gain: typing.SupportsFloat | typing.SupportsIndex, weight: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], max_speed: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, lower: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None, upper: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None) -> None:
        ...
    @property
    def gain(self) -> float:
        """
        gain [1/s]
        """
    @property
    def inner(self) -> typing.Any:
        """
        the inner task's description (a core description object)
        """
    @property
    def lower(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) lower bounds on e (-inf: open), or None: no bounds
        """
    @property
    def max_speed(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (linear, angular) caps on |gain e| [m/s, rad/s], or None
        """
    @property
    def upper(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) upper bounds on e (inf: open), or None: no bounds
        """
    @property
    def weight(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (size,) row weights
        """
class DistanceTaskDescription(TaskDescription):
    """
    The distance between two frames' origins (reljac.ik.distance.DistanceTaskDescription).
    """
    def __init__(self, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, gain: typing.SupportsFloat | typing.SupportsIndex, weight: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], max_speed: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, target: typing.SupportsFloat | typing.SupportsIndex, target_velocity: typing.SupportsFloat | typing.SupportsIndex, lower: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None, upper: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None = None) -> None:
        ...
    @property
    def frame_a(self) -> int:
        """
        Pinocchio frame id of a
        """
    @property
    def frame_b(self) -> int:
        """
        Pinocchio frame id of b
        """
    @property
    def gain(self) -> float:
        """
        gain [1/s]
        """
    @property
    def lower(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) lower bounds on e (-inf: open), or None: no bounds
        """
    @property
    def max_speed(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (linear, angular) caps on |gain e| [m/s, rad/s], or None
        """
    @property
    def target(self) -> float:
        """
        target distance [m]
        """
    @property
    def target_velocity(self) -> float:
        """
        its rate [m/s]
        """
    @property
    def upper(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (size,) upper bounds on e (inf: open), or None: no bounds
        """
    @property
    def weight(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (size,) row weights
        """
class StepFailure(Exception):
    pass
class SupportFailure(ValueError):
    pass
class LevelReport:
    """
    What happened to one level (reljac.ik.hierarchy.LevelReport: the same fields).
    """
    @property
    def active(self) -> list[int]:
        """
        the level's inequality rows at or beyond a bound
        """
    @property
    def capped(self) -> bool:
        """
        the cap on active-set changes stopped it
        """
    @property
    def changes(self) -> int:
        """
        active-set changes
        """
    @property
    def damping(self) -> float:
        """
        lambda^2 used
        """
    @property
    def held(self) -> list[tuple[int, int]]:
        """
        (level, row) inequality rows of levels above held on their bound
        """
    @property
    def limit_index(self) -> int:
        """
        its velocity index or row of C (or of a level)
        """
    @property
    def limit_kind(self) -> int:
        """
        what stopped it: 0 a joint's bound, 1 a row of C, 2 no freedom left, -1 nothing
        """
    @property
    def limit_level(self) -> int:
        """
        the level of limit_kind 3's row
        """
    @property
    def margins(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"] | None:
        """
        (m,) each row's margin to its interval (negative: violated), or None (an equality hierarchy)
        """
    @property
    def met(self) -> bool:
        """
        residual <= MET_TOLERANCE (1 + |b|)
        """
    @property
    def residual(self) -> float:
        """
        |A v - b| at the solution
        """
    @property
    def saturated(self) -> list[int]:
        """
        velocity indices of the joints saturated for it
        """
    @property
    def saturated_rows(self) -> list[int]:
        """
        rows of C saturated for it
        """
    @property
    def scale(self) -> float:
        """
        factor s in [0, 1] applied to the level's correction
        """
    @property
    def smallest_singular_value(self) -> float:
        """
        of the level inside the null space it got
        """
class RowSource:
    """
    Where a row of C comes from.
    """
    @property
    def index(self) -> int:
        """
        the row among that limit's rows
        """
    @property
    def limit(self) -> int:
        """
        the limit's index among the step's limits
        """
class CollisionRows:
    """
    The last rows of a collision limit, one per geometry pair in reach.
    """
    @property
    def distance(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (m,) [m]
        """
    @property
    def jacobian(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"]:
        """
        (m, nv) d distance / dv
        """
    @property
    def normal(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"]:
        """
        (m, 3) unit normals from the first to the second
        """
    @property
    def pair(self) -> list[int]:
        """
        (m,) geometry pair indices in collisionPairs
        """
    @property
    def point1(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"]:
        """
        (m, 3) closest points on the first geometry, world [m]
        """
    @property
    def point2(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"]:
        """
        (m, 3) closest points on the second geometry, world [m]
        """
class Step:
    """
    A controller's whole step in one call, on Pinocchio and coal (reljac/ik/compiled.py).
    """
    def __init__(self, model: typing.Any, data: typing.Any) -> None:
        """
        A step on Python's pin.Model and a pin.Data of it (both kept alive).
        """
    @typing.overload
    def add(self, description: TaskDescription) -> int:
        """
        A task of the kind its description names: its index among the tasks.
        """
    @typing.overload
    def add(self, description: LimitDescription) -> int:
        """
        A limit of the kind its description names: its index among the limits.
        """
    def collision_rows(self, limit: typing.SupportsInt | typing.SupportsIndex) -> CollisionRows:
        """
        The last CollisionRows of collision limit `limit`.
        """
    def guard(self, q_next: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        q_next corrected by the position limits' guard, from q.
        """
    def integrate(self, q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        integrate(q, v dt) with the last velocity, guarded by the position limits.
        """
    def kinematics(self, q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        The kinematics pass at q (nq,) into the step's pin.Data (for the Python tasks' rows).
        """
    def reports(self) -> list[LevelReport]:
        """
        A LevelReport per level of the last step.
        """
    def reset(self) -> None:
        """
        Forget the limits' state of earlier steps.
        """
    def reversal_cap(self, limit: typing.SupportsInt | typing.SupportsIndex) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nv,) the speed caps of reversal damping `limit` for the next step (inf: none).
        """
    def row_sources(self) -> list[RowSource]:
        """
        A RowSource per row of C of the last step.
        """
    def run(self, q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], n: typing.SupportsInt | typing.SupportsIndex, tasks: list = [], limits: list = []) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        n whole steps from q in C++, the same Python rows at each (tests/test_step_allocations.py): the last q.
        """
    def search(self, q0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], options: SearchOptions) -> SearchResult:
        """
        A search from q0 (reljac.ik.search); built-in tasks and limits only.
        """
    def set_dt(self, dt: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        The control period [s].
        """
    def set_levels(self, levels: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]]) -> None:
        """
        The priority levels: task indices, highest first.
        """
    def set_policy(self, threshold: typing.SupportsFloat | typing.SupportsIndex, max_damping: typing.SupportsFloat | typing.SupportsIndex, error_damping: typing.SupportsFloat | typing.SupportsIndex, step_threshold: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        The damping policy (reljac.ik.hierarchy.DampingPolicy's fields).
        """
    def set_task_target(self, index: typing.SupportsInt | typing.SupportsIndex, values: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> None:
        """
        A frame task's target (16 values of T_ab, row-major), a CoM task's (size) or a posture's (nq).
        """
    def step(self, q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        q_next (nq,) from a validated q: the whole step of a controller of built-in parts.
        """
    def step_checked(self, model: typing.Any, q: typing.Any) -> typing.Any:
        """
        step(q) when q is a float64 (nq,) array passing validate_q's checks (in C++), else None.
        """
    def system(self, q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[list, typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"], typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"], int]:
        """
        (levels, lo, hi, failing) the step would solve at q, per level (A or None, b, identity scale, mask or None, extra damping, lower or None, upper or None); built-in parts only, for tests.
        """
    @typing.overload
    def update(self, index: typing.SupportsInt | typing.SupportsIndex, description: TaskDescription) -> None:
        """
        A new description of task `index`, of its kind (a pending task takes its first).
        """
    @typing.overload
    def update(self, index: typing.SupportsInt | typing.SupportsIndex, description: LimitDescription) -> None:
        """
        A new description of limit `index`, of its kind.
        """
    def velocity(self, q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], kinematics_done: bool, tasks: list, limits: list) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        v (nv,) at q; tasks: (A, b, feedback), or (A, b, feedback, lower, upper) for a task with bounds, per Python task; limits: (lo or None, hi or None, C, d) per Python limit; kinematics_done: kinematics(q) was called. StepFailure names a task whose rows overflow.
        """
    @property
    def last_q(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        the q of the last step or step_checked (a copy)
        """
    @property
    def last_velocity(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nv,) the velocity of the last step
        """
    @property
    def nq(self) -> int:
        """
        the model's nq
        """
    @property
    def nv(self) -> int:
        """
        the model's nv
        """
class SearchOptions:
    """
    How a search runs (reljac.ik.search.SearchOptions documents each field).
    """
    def __init__(self) -> None:
        ...
    @property
    def counted(self) -> list[int]:
        """
        indices of the tasks that decide convergence
        """
    @counted.setter
    def counted(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def floor(self) -> float:
        """
        level costs below this tie [m^2, rad^2]
        """
    @floor.setter
    def floor(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def lower(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nq) lower bounds of the uniform coordinates
        """
    @lower.setter
    def lower(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> None:
        ...
    @property
    def max_iters(self) -> int:
        """
        Newton iterations of one local search
        """
    @max_iters.setter
    def max_iters(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_step(self) -> float:
        """
        a Newton step's largest joint displacement at most this [rad or m] (<= 0: no cap)
        """
    @max_step.setter
    def max_step(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mu_grow(self) -> float:
        """
        its factor after a rejected step
        """
    @mu_grow.setter
    def mu_grow(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mu_initial(self) -> float:
        """
        Levenberg-Marquardt damping at a search's start
        """
    @mu_initial.setter
    def mu_initial(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mu_max(self) -> float:
        """
        above it a local search ends
        """
    @mu_max.setter
    def mu_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mu_min(self) -> float:
        """
        its floor
        """
    @mu_min.setter
    def mu_min(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mu_shrink(self) -> float:
        """
        its factor after an accepted step
        """
    @mu_shrink.setter
    def mu_shrink(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def restarts(self) -> int:
        """
        local searches after the first (< 0: no cap)
        """
    @restarts.setter
    def restarts(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def sample_kind(self) -> typing.Annotated[numpy.typing.NDArray[numpy.int32], "[m, 1]"]:
        """
        (nq) 0 uniform, 1 the seed's, 2 an angle pair
        """
    @sample_kind.setter
    def sample_kind(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"]) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        seed of the restarts' random stream (splitmix64)
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def stall_iters(self) -> int:
        """
        iterations in a row rejected or below stall_ratio end it
        """
    @stall_iters.setter
    def stall_iters(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def stall_ratio(self) -> float:
        """
        relative improvement of a step that counts
        """
    @stall_ratio.setter
    def stall_ratio(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def timeout(self) -> float:
        """
        wall-clock budget [s] (< 0: none)
        """
    @timeout.setter
    def timeout(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def tol(self) -> float:
        """
        every counted task's error norms at most this [m, rad]
        """
    @tol.setter
    def tol(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def upper(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nq) upper bounds of the uniform coordinates
        """
    @upper.setter
    def upper(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> None:
        ...
class SearchResult:
    """
    What a search found (reljac.ik.search).
    """
    @property
    def converged(self) -> bool:
        ...
    @property
    def failing(self) -> int:
        """
        the task whose rows were not finite, or -1
        """
    @property
    def iterations(self) -> int:
        """
        Newton iterations in all
        """
    @property
    def level_costs(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        |W e|^2 per level at q
        """
    @property
    def q(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (nq) the converged configuration or the best found
        """
    @property
    def reason(self) -> int:
        """
        0 converged, 1 timeout, 2 restarts exhausted, 3 no finite rows
        """
    @property
    def searches(self) -> int:
        """
        local searches (1 + restarts)
        """
    @property
    def seconds(self) -> float:
        """
        wall-clock time [s]
        """
class SearchBatch:
    """
    What many searches found, as arrays (row i: problem i).
    """
    @property
    def converged(self) -> typing.Annotated[numpy.typing.NDArray[numpy.bool], "[m, 1]"]:
        """
        (n) bool
        """
    @property
    def failing(self) -> typing.Annotated[numpy.typing.NDArray[numpy.int32], "[m, 1]"]:
        """
        (n) the task whose rows were not finite, or -1
        """
    @property
    def iterations(self) -> typing.Annotated[numpy.typing.NDArray[numpy.int32], "[m, 1]"]:
        """
        (n) Newton iterations in all
        """
    @property
    def level_costs(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"]:
        """
        (n, levels) |W e|^2 per level at q
        """
    @property
    def q(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"]:
        """
        (n, nq) each problem's configuration
        """
    @property
    def reason(self) -> typing.Annotated[numpy.typing.NDArray[numpy.int32], "[m, 1]"]:
        """
        (n) SearchResult.reason's codes
        """
    @property
    def searches(self) -> typing.Annotated[numpy.typing.NDArray[numpy.int32], "[m, 1]"]:
        """
        (n) local searches (1 + restarts)
        """
    @property
    def seconds(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        """
        (n) wall-clock time of each search [s]
        """
def accumulate(count: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], coverage: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], best: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], best_index: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], voxel: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], part_count: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], part_coverage: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], part_best: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], part_best_index: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> None:
    """
    Merge a partial result into a map's dense per-voxel arrays, in place.
    """
def built_with() -> tuple[str, str]:
    """
    (Pinocchio, coal) versions the core was compiled against
    """
def configuration_ok(model: typing.Any, q: typing.Any) -> bool:
    """
    True when q is a float64 (nq,) array passing ConfigurationSpace.validate_q's checks (else let it say why)
    """
def configurations_from_uniforms(kinds: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], q_idx: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], u_idx: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], lo: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], hi: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], neutral: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], U: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    Q (n, nq) from uniforms U (n, k) by a sampling plan (reljac/maps/sampling.py).
    """
def manipulabilities(model: typing.Any, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, Q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rows: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> numpy.typing.NDArray[numpy.float64]:
    """
    Manipulability of rows `rows` of J_ab at each configuration of Q (N, nq): (N,).
    """
def merge_partials(voxels: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.int64]], counts: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.int64]], coverages: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.uint64]], bests: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.float64]], best_indices: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.int64]]) -> tuple:
    """
    Partial results (lists of per-voxel arrays) merged into one.
    """
def relative_jacobian(model: typing.Any, data: typing.Any, q: typing.Any, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, axes: typing.SupportsInt | typing.SupportsIndex, frame_c: typing.SupportsInt | typing.SupportsIndex, check: bool) -> typing.Any:
    """
    J_ab (6, nv) at q, or None when q is not a valid configuration (with check)
    """
def relative_jacobian_in(model: typing.Any, data: typing.Any, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, axes: typing.SupportsInt | typing.SupportsIndex, frame_c: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    J_ab (6, nv) in the given axes (0 a, 1 b, 2 world, 3 frame_c) from the kinematics in data
    """
def relative_jacobians_in(model: typing.Any, data: typing.Any, frames: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], axes: typing.SupportsInt | typing.SupportsIndex, frame_c: typing.SupportsInt | typing.SupportsIndex, nv: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    J_ab (k, 6, nv) of k pairs [a0, b0, a1, b1, ...] in the same axes, from the kinematics in data
    """
def relative_kinematics(model: typing.Any, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, Q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple:
    """
    (T_ab (N, 4, 4), J_ab (N, 6, nv)) of a pin.Model for configurations Q (N, nq).
    """
def relative_placement(model: typing.Any, data: typing.Any, q: typing.Any, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, check: bool) -> typing.Any:
    """
    T_ab (4, 4) at q, or None when q is not a valid configuration (with check)
    """
def relative_placement_in(model: typing.Any, data: typing.Any, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[4, 4]"]:
    """
    T_ab (4, 4) from the kinematics in data (the frames' placements updated)
    """
def search_many(steps: collections.abc.Sequence[Step], target_tasks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], target_sizes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], targets: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"], seeds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"], options: SearchOptions, progress: typing.Any = None, every: typing.SupportsFloat | typing.SupportsIndex = 0.1) -> SearchBatch:
    """
    One search per row of targets, on one thread per step (reljac.ik.solve.Solver.solve_many); progress(finished) is called with the GIL between two of the calling thread's problems, at most every `every` seconds [s], after the signal handlers (Ctrl-C stops every thread).
    """
def solve_hierarchy(As: list, bs: list, identity_scales: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], masks: list, extra_damping: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], lo: typing.Any, hi: typing.Any, C: typing.Any, d: typing.Any, threshold: typing.SupportsFloat | typing.SupportsIndex, max_damping: typing.SupportsFloat | typing.SupportsIndex, lowers: typing.Any = None, uppers: typing.Any = None, change_cap: typing.SupportsInt | typing.SupportsIndex = -1, repeat: typing.SupportsInt | typing.SupportsIndex = 1, search: bool = False, warm: bool = False) -> tuple:
    """
    Joint velocity v (nv,) for prioritized levels inside lo <= v <= hi and C v <= d, and one report per level.
    
    Level k: A v = b with As[k] (m, nv) and bs[k] (m,), or As[k] None: A = identity_scales[k] diag(masks[k])
    (masks[k] (nv,) 1 kept / 0 masked, or None), bs[k] (nv,); extra_damping[k] is added to lambda^2.
    lowers[k], uppers[k]: None (an equality level) or (m,) bounds, lower <= A v <= upper (+-inf one-sided;
    one of the two None: unbounded on that side); a hierarchy with a bounded level is solved in strict
    least violation (reljac/ik/inequality.py, the specification), else by Saturation in the Null Space
    (reljac/ik/hierarchy.py). threshold, max_damping: the singular damping (DampingPolicy).
    change_cap: active-set changes allowed per bounded level (-1: the rule of reljac.ik.active_set.change_cap);
    a level that reaches it stops at its best feasible point and reports capped. repeat: solves in a row
    with one workspace, the last one returned (for timing and the allocation test; the first sizes the buffers).
    search: the levels are a search's (reljac.ik.hierarchy.Level.search: extra_damping is its Levenberg-Marquardt mu).
    warm: each solve after the first starts each bounded level from the sets it ended with in the one before
    (the controller's warm start, reljac.ik.inequality.WarmStart; not for a search's levels).
    Each report: a LevelReport (the core's, bound with named fields: those of reljac.ik.hierarchy.LevelReport
    it fills in, margins None on an equality hierarchy).
    
    Raises ValueError: arrays of the wrong shape, NaN bounds, a lower bound above its upper bound.
    """
def threaded_kinematics_seconds(model: typing.Any, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, Q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], workers: typing.SupportsInt | typing.SupportsIndex) -> float:
    """
    Wall time [s] of T_ab and J_ab at every row of Q (N, nq), split across `workers` threads (the machine's own scaling, for `reljac bench solve`).
    """
AMPLIFIED: float = 10000.0
BOUND_TOLERANCE: float = 1e-12
COLLINEAR_TOLERANCE: float = 1e-12
FAILED: float = 10000000000.0
GJK_TOLERANCE: float = 1e-10
MAX_SQUARE: float = 1e+200
MAX_STALE_SATURATIONS: int = 2
MET_TOLERANCE: float = 1e-09
OVERSHOOT: float = 0.0001
PIVOT_TOLERANCE: float = 1e-12
RANK_TOLERANCE: float = 1e-12
UNIT_TOLERANCE: float = 1e-06

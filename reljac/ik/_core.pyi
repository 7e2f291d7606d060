"""
reljac's compiled core on Pinocchio and coal (see reljac/ik/solvers/hierarchy.py for the solver it mirrors)
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['AMPLIFIED', 'BOUND_TOLERANCE', 'COLLINEAR_TOLERANCE', 'CapabilityReduction', 'CollisionRows', 'Description', 'FAILED', 'GJK_TOLERANCE', 'LevelReport', 'MAX_SQUARE', 'MAX_STALE_SATURATIONS', 'MAX_TIE_PATHS', 'MET_TOLERANCE', 'OVERSHOOT', 'PIN_TOLERANCE', 'PIVOT_REPROJECT', 'PIVOT_TOLERANCE', 'RANK_TOLERANCE', 'REACHED_AT_ONCE', 'RowSource', 'SearchBatch', 'SearchOptions', 'SearchResult', 'Step', 'StepFailure', 'SupportFailure', 'TIE_PATH_GAIN', 'UNIT_TOLERANCE', 'accumulate', 'built_with', 'certified_rank', 'configuration_ok', 'configurations_from_uniforms', 'describe', 'kinds', 'manipulabilities', 'merge_partials', 'relative_jacobian', 'relative_jacobian_in', 'relative_jacobians_in', 'relative_kinematics', 'relative_placement', 'relative_placement_in', 'search_many', 'solve_hierarchy', 'threaded_kinematics_seconds']
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
class Description:
    """
    What a task or limit gives the compiled step: one kind's fields, by name (describe(); the kinds and their fields: kinds()).
    """
    def __repr__(self) -> str:
        ...
    def field(self, name: str) -> typing.Any:
        """
        The value of field `name` (a copy; a description within: itself).
        """
    def fields(self) -> dict:
        """
        Every field by name (copies), in the schema's order.
        """
    @property
    def is_task(self) -> bool:
        """
        a task's description (else a limit's)
        """
    @property
    def kind(self) -> str:
        """
        the kind's name
        """
class StepFailure(Exception):
    pass
class SupportFailure(ValueError):
    pass
class LevelReport:
    """
    What happened to one level (reljac.ik.solvers.hierarchy.LevelReport: the same fields).
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
    def exact(self) -> bool:
        """
        no damping at this level nor above: its residual is the least the levels above leave it
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
    A controller's whole step in one call, on Pinocchio and coal (reljac/ik/compiled_step.py).
    """
    def __init__(self, model: typing.Any, data: typing.Any) -> None:
        """
        A step on Python's pin.Model and a pin.Data of it (both kept alive).
        """
    def add(self, description: Description) -> int:
        """
        A task or limit of the kind its description names: its index among the tasks (or the limits).
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
        A search from q0 (reljac.ik.search.local_search); built-in tasks and limits only. Ctrl-C stops it.
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
        The damping policy (reljac.ik.solvers.damping.DampingPolicy's fields).
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
    def task_collision_rows(self, task: typing.SupportsInt | typing.SupportsIndex) -> CollisionRows:
        """
        The last CollisionRows of collision avoidance task `task`.
        """
    def task_row_sources(self, task: typing.SupportsInt | typing.SupportsIndex) -> list[int] | None:
        """
        Where each row of task `task`'s last step comes from (a support region's edge, a collision pair's index in collisionPairs), for a kind whose rows change in number; else None.
        """
    def update(self, index: typing.SupportsInt | typing.SupportsIndex, description: Description) -> None:
        """
        A new description of task (or limit) `index`, of its kind (a pending task takes its first).
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
    How a search runs: SearchOptions(**options), each option by name (`fields`), the others at their defaults (reljac.ik.search.local_search).
    """
    fields: typing.ClassVar[tuple] = ('tol', 'max_iters', 'restarts', 'timeout', 'seed', 'mu_initial', 'mu_grow', 'mu_shrink', 'mu_min', 'mu_max', 'stall_iters', 'stall_ratio', 'weight', 'floor', 'max_step')
    def __init__(self, **kwargs: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Every option by keyword (the others at their defaults).
        """
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
        level costs below this tie, a level under it is met ((tol weight)^2) [m^2, rad^2]
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
        Levenberg-Marquardt damping of each level at a local search's start
        """
    @mu_initial.setter
    def mu_initial(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mu_max(self) -> float:
        """
        every level's damping above it ends a local search
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
        its factor after a kept step
        """
    @mu_shrink.setter
    def mu_shrink(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def restarts(self) -> int:
        """
        local searches after the first (< 0: no cap, the timeout ends it)
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
        iterations in a row rejected or improving by less than stall_ratio end it
        """
    @stall_iters.setter
    def stall_iters(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def stall_ratio(self) -> float:
        """
        relative improvement of a kept step that counts as progress
        """
    @stall_ratio.setter
    def stall_ratio(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def timeout(self) -> float:
        """
        wall-clock budget of the search [s] (< 0: none)
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
    @property
    def weight(self) -> float:
        """
        the counted tasks' smallest row weight, at most 1 (the floor is (tol weight)^2)
        """
    @weight.setter
    def weight(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class SearchResult:
    """
    What a search found (reljac.ik.search.local_search).
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
def certified_rank(G: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"]) -> tuple:
    """
    The rank of a Gram matrix G (m, m), m <= 12, as the compiled solver certifies it without an
    eigen-decomposition (Cholesky with diagonal pivoting, Weyl's and Cauchy's inequalities:
    src/core/hierarchy_rank.hpp): (rank, the pivot rows in order), rank -1 where nothing is certified (the
    solver then decomposes G). Only G's lower triangle is read, as the solver forms only that one.
    """
def configuration_ok(model: typing.Any, q: typing.Any) -> bool:
    """
    True when q is a float64 (nq,) array passing ConfigurationSpace.validate_q's checks (else let it say why)
    """
def configurations_from_uniforms(kinds: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], q_idx: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], u_idx: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], lo: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], hi: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], neutral: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], U: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    Q (n, nq) from uniforms U (n, k) by a sampling plan (reljac/maps/sampling.py).
    """
def describe(_kind: str, /, **kwargs) -> Description:
    """
    A Description of kind `kind` (positional) from its fields by keyword (every field its schema requires; a task's: gain, weight, max_speed, lower, upper too). TypeError names a missing or unknown field.
    """
def kinds() -> list:
    """
    Every kind of the core: dicts of name, role ('task' or 'limit'), doc and fields, each field a tuple (name, type, doc, required), in the order its schema lists them.
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
def search_many(steps: collections.abc.Sequence[Step], target_tasks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], target_offsets: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], target_sizes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], targets: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"], seeds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"], options: SearchOptions, progress: typing.Any = None, every: typing.SupportsFloat | typing.SupportsIndex = 0.1) -> SearchBatch:
    """
    One search per row of targets, on one thread per step (reljac.ik.search.solve.Solver.solve_many): task target_tasks[j] takes target_sizes[j] values at column target_offsets[j] of the problem's row; progress(finished) is called with the GIL between two of the calling thread's problems, at most every `every` seconds [s], after the signal handlers (Ctrl-C stops every thread).
    """
def solve_hierarchy(As: list, bs: list, identity_scales: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], masks: list, extra_damping: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], lo: typing.Any, hi: typing.Any, C: typing.Any, d: typing.Any, threshold: typing.SupportsFloat | typing.SupportsIndex, max_damping: typing.SupportsFloat | typing.SupportsIndex, lowers: typing.Any = None, uppers: typing.Any = None, change_cap: typing.SupportsInt | typing.SupportsIndex = -1, repeat: typing.SupportsInt | typing.SupportsIndex = 1, search: bool = False, warm: bool = False) -> tuple:
    """
    Joint velocity v (nv,) for prioritized levels inside lo <= v <= hi and C v <= d, and one report per level.
    
    Level k: A v = b with As[k] (m, nv) and bs[k] (m,), or As[k] None: A = identity_scales[k] diag(masks[k])
    (masks[k] (nv,) 1 kept / 0 masked, or None), bs[k] (nv,); extra_damping[k] is added to lambda^2.
    lowers[k], uppers[k]: None (an equality level) or (m,) bounds, lower <= A v <= upper (+-inf one-sided;
    one of the two None: unbounded on that side); a hierarchy with a bounded level is solved in strict
    least violation (reljac/ik/solvers/inequality.py, the specification), else by Saturation in the Null Space
    (reljac/ik/solvers/hierarchy.py). threshold, max_damping: the singular damping (DampingPolicy).
    change_cap: active-set changes allowed per bounded level (-1: the rule of reljac.ik.solvers.active_set.change_cap);
    a level that reaches it stops at its best feasible point and reports capped. repeat: solves in a row
    with one workspace, the last one returned (for timing and the allocation test; the first sizes the buffers).
    search: the levels are a search's (reljac.ik.solvers.hierarchy.Level.search: extra_damping is its Levenberg-Marquardt mu).
    warm: each solve after the first starts each bounded level from the sets it ended with in the one before
    (the controller's warm start, reljac.ik.solvers.inequality.WarmStart; not for a search's levels).
    Each report: a LevelReport (the core's, bound with named fields: those of reljac.ik.solvers.hierarchy.LevelReport
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
MAX_TIE_PATHS: int = 6
MET_TOLERANCE: float = 1e-09
OVERSHOOT: float = 0.0001
PIN_TOLERANCE: float = 1e-09
PIVOT_REPROJECT: float = 1e-06
PIVOT_TOLERANCE: float = 1e-12
RANK_TOLERANCE: float = 1e-12
REACHED_AT_ONCE: float = 1e-06
TIE_PATH_GAIN: float = 1e-06
UNIT_TOLERANCE: float = 1e-06

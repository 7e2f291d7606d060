"""
reljac's compiled core on Pinocchio and coal (see reljac/ik/hierarchy.py for the solver it mirrors)
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['CapabilityReduction', 'KinematicModel', 'SearchOptions', 'SearchResult', 'Step', 'StepFailure', 'SupportFailure', 'accumulate', 'built_with', 'configuration_ok', 'configurations_from_uniforms', 'merge_partials', 'relative_jacobian', 'relative_jacobian_in', 'relative_jacobians_in', 'relative_placement', 'relative_placement_in', 'search_many', 'solve_hierarchy']
class KinematicModel:
    """
    A joint tree exported from a pin.Model (see reljac/maps/compiled.py)
    """
    def __init__(self, nq: typing.SupportsInt | typing.SupportsIndex, nv: typing.SupportsInt | typing.SupportsIndex, parents: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], kinds: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], axes: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rotations: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], translations: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], idx_q: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], idx_v: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], scaling: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], offset: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], frame_joints: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], frame_rotations: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], frame_translations: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
    def manipulability(self, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, Q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rows: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def relative(self, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, Q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple:
        ...
    @property
    def nq(self) -> int:
        ...
    @property
    def nv(self) -> int:
        ...
class CapabilityReduction:
    """
    One chunk's reduction of a capability map (reljac/maps/kernel.py)
    """
    def __init__(self, model: KinematicModel, frame_a: typing.SupportsInt | typing.SupportsIndex, frame_b: typing.SupportsInt | typing.SupportsIndex, origin: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], voxel: typing.SupportsFloat | typing.SupportsIndex, dims: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], directions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], axis: typing.SupportsInt | typing.SupportsIndex, rows: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    def add(self, Q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], first_index: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def result(self) -> tuple:
        ...
class StepFailure(Exception):
    pass
class SupportFailure(ValueError):
    pass
class Step:
    def __init__(self, model: typing.Any, data: typing.Any) -> None:
        ...
    def add_collision(self, arg0: typing.Any, arg1: typing.SupportsFloat | typing.SupportsIndex, arg2: typing.SupportsFloat | typing.SupportsIndex, arg3: typing.SupportsFloat | typing.SupportsIndex, arg4: typing.SupportsFloat | typing.SupportsIndex) -> int:
        ...
    def add_com_task(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], arg2: typing.SupportsFloat | typing.SupportsIndex, arg3: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg4: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, arg5: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg6: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> int:
        ...
    def add_external_limit(self) -> int:
        ...
    def add_external_task(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def add_frame_task(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.SupportsInt | typing.SupportsIndex, arg2: typing.SupportsInt | typing.SupportsIndex, arg3: typing.SupportsFloat | typing.SupportsIndex, arg4: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg5: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, arg6: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[4, 4]"], arg7: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> int:
        ...
    def add_position_limit(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg3: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg4: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg5: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg6: typing.SupportsFloat | typing.SupportsIndex) -> int:
        ...
    def add_posture(self, arg0: typing.SupportsFloat | typing.SupportsIndex, arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, arg3: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> int:
        ...
    def add_reversal(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg2: typing.SupportsFloat | typing.SupportsIndex, arg3: typing.SupportsFloat | typing.SupportsIndex) -> int:
        ...
    def add_support_region(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], arg2: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"]], arg3: typing.SupportsFloat | typing.SupportsIndex, arg4: typing.SupportsFloat | typing.SupportsIndex) -> int:
        ...
    def add_velocity_box(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> int:
        ...
    def collision_rows(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> tuple[list[int], typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"], typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"], typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"], typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"], typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, n]"]]:
        ...
    def guard(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        ...
    def integrate(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        ...
    def kinematics(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
    def reports(self) -> list:
        ...
    def reset(self) -> None:
        ...
    def reversal_cap(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        ...
    def row_sources(self) -> list:
        ...
    def run(self, q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], n: typing.SupportsInt | typing.SupportsIndex, tasks: list = [], limits: list = []) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        ...
    def search(self, q0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], options: SearchOptions) -> SearchResult:
        """
        A search from q0 (reljac.ik.search); built-in tasks and limits only.
        """
    def set_collision(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.Any, arg2: typing.SupportsFloat | typing.SupportsIndex, arg3: typing.SupportsFloat | typing.SupportsIndex, arg4: typing.SupportsFloat | typing.SupportsIndex, arg5: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def set_com_task(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.SupportsInt | typing.SupportsIndex, arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], arg3: typing.SupportsFloat | typing.SupportsIndex, arg4: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg5: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, arg6: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg7: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> None:
        ...
    def set_dt(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def set_frame_task(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.SupportsInt | typing.SupportsIndex, arg2: typing.SupportsInt | typing.SupportsIndex, arg3: typing.SupportsInt | typing.SupportsIndex, arg4: typing.SupportsFloat | typing.SupportsIndex, arg5: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg6: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, arg7: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[4, 4]"], arg8: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> None:
        ...
    def set_levels(self, arg0: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]]) -> None:
        ...
    def set_policy(self, arg0: typing.SupportsFloat | typing.SupportsIndex, arg1: typing.SupportsFloat | typing.SupportsIndex, arg2: typing.SupportsFloat | typing.SupportsIndex, arg3: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def set_position_limit(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], arg3: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg4: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg5: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg6: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg7: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def set_posture(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.SupportsFloat | typing.SupportsIndex, arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg3: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"] | None, arg4: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> None:
        ...
    def set_reversal(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg3: typing.SupportsFloat | typing.SupportsIndex, arg4: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def set_search_mode(self, on: bool, lm: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Rows with gain 1, no speed cap nor feed-forward, and lm added to every level's damping.
        """
    def set_support_region(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.SupportsInt | typing.SupportsIndex, arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.int32, "[m, 1]"], arg3: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"]], arg4: typing.SupportsFloat | typing.SupportsIndex, arg5: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def set_task_target(self, index: typing.SupportsInt | typing.SupportsIndex, values: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> None:
        """
        A frame task's target (16 values of T_ab, row-major), a CoM task's (size) or a posture's (nq).
        """
    def set_velocity_box(self, arg0: typing.SupportsInt | typing.SupportsIndex, arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"], arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, 1]"]) -> None:
        ...
    def step(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        ...
    def step_checked(self, arg0: typing.Any, arg1: typing.Any) -> typing.Any:
        ...
    def system(self, arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[list, typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"], typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"], int]:
        ...
    def velocity(self, q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], kinematics_done: bool, tasks: list, limits: list) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        ...
    @property
    def last_q(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        ...
    @property
    def last_velocity(self) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[m, 1]"]:
        ...
    @property
    def nq(self) -> int:
        ...
    @property
    def nv(self) -> int:
        ...
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
def accumulate(count: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], coverage: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], best: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], best_index: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], voxel: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], part_count: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], part_coverage: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], part_best: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], part_best_index: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> None:
    ...
def built_with() -> tuple[str, str]:
    """
    (Pinocchio, coal) versions the core was compiled against
    """
def configuration_ok(arg0: typing.Any, arg1: typing.Any) -> bool:
    """
    True when q is a float64 (nq,) array passing ConfigurationSpace.validate_q's checks (else let it say why)
    """
def configurations_from_uniforms(kinds: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], q_idx: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], u_idx: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], lo: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], hi: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], neutral: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], U: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    ...
def merge_partials(voxels: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.int64]], counts: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.int64]], coverages: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.uint64]], bests: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.float64]], best_indices: collections.abc.Sequence[typing.Annotated[numpy.typing.ArrayLike, numpy.int64]]) -> tuple:
    ...
def relative_jacobian(arg0: typing.Any, arg1: typing.Any, arg2: typing.Any, arg3: typing.SupportsInt | typing.SupportsIndex, arg4: typing.SupportsInt | typing.SupportsIndex, arg5: typing.SupportsInt | typing.SupportsIndex, arg6: typing.SupportsInt | typing.SupportsIndex, arg7: bool) -> typing.Any:
    """
    J_ab (6, nv) at q, or None when q is not a valid configuration (with check)
    """
def relative_jacobian_in(arg0: typing.Any, arg1: typing.Any, arg2: typing.SupportsInt | typing.SupportsIndex, arg3: typing.SupportsInt | typing.SupportsIndex, arg4: typing.SupportsInt | typing.SupportsIndex, arg5: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    J_ab (6, nv) in the given axes from the kinematics in data
    """
def relative_jacobians_in(arg0: typing.Any, arg1: typing.Any, arg2: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], arg3: typing.SupportsInt | typing.SupportsIndex, arg4: typing.SupportsInt | typing.SupportsIndex, arg5: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    J_ab (k, 6, nv) of k pairs [a0, b0, a1, b1, ...] in the same axes, from the kinematics in data
    """
def relative_placement(arg0: typing.Any, arg1: typing.Any, arg2: typing.Any, arg3: typing.SupportsInt | typing.SupportsIndex, arg4: typing.SupportsInt | typing.SupportsIndex, arg5: bool) -> typing.Any:
    """
    T_ab (4, 4) at q, or None when q is not a valid configuration (with check)
    """
def relative_placement_in(arg0: typing.Any, arg1: typing.Any, arg2: typing.SupportsInt | typing.SupportsIndex, arg3: typing.SupportsInt | typing.SupportsIndex) -> typing.Annotated[numpy.typing.NDArray[numpy.float64], "[4, 4]"]:
    ...
def search_many(steps: collections.abc.Sequence[Step], target_tasks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], target_sizes: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], targets: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"], seeds: typing.Annotated[numpy.typing.ArrayLike, numpy.float64, "[m, n]"], options: SearchOptions) -> list[SearchResult]:
    """
    One search per row of targets, on one thread per step (reljac.ik.search.solve_many).
    """
def solve_hierarchy(As: list, bs: list, identity_scales: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], masks: list, extra_damping: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], lo: typing.Any, hi: typing.Any, C: typing.Any, d: typing.Any, threshold: typing.SupportsFloat | typing.SupportsIndex, max_damping: typing.SupportsFloat | typing.SupportsIndex, lowers: typing.Any = None, uppers: typing.Any = None, change_cap: typing.SupportsInt | typing.SupportsIndex = -1, repeat: typing.SupportsInt | typing.SupportsIndex = 1) -> tuple:
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
    Each report: (scale, saturated, saturated_rows, damping, smallest_singular_value, residual, met,
    limit_kind, limit_index, active, margins (m,) or None, changes, capped, held [(level, row)], limit_level),
    the fields of reljac.ik.hierarchy.LevelReport.
    
    Raises ValueError: arrays of the wrong shape, NaN bounds, a lower bound above its upper bound.
    """

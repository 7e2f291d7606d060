"""A budget that is a promise (issue 42, part 2): a call searches for about its budget whatever
earlier calls did. The time a Solver keeps for outside its searches is the median of its recent
calls' (one slow call, a thread holding the GIL, cannot take the next calls' budgets), at most a
share of the budget; a search of two phases whose iterations are slow next to its budget keeps at
most half of it for its exact pass; a result reports its search's time and its call's. Nothing
here asserts an upper bound on a time: a busy machine only makes calls slower, so the assertions
are on what the search did (converged, iterations) and on lower bounds of times."""

from __future__ import annotations

import dataclasses
import statistics
import threading
import time

import numpy as np
import pinocchio as pin
import pytest
from helpers import BACKENDS

from reljac.ik import FrameTask, RelativePositionTask, Solver, compiled_available, solve
from reljac.ik.search.budget import EXACT_SHARE, OUTSIDE_START, RESERVE_SHARE, outside_reserve
from reljac.ik.search.python_search import PythonSearch
from reljac.relative import Kinematics

compiled_only = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
BUDGET = {"python": 0.5, "compiled": 0.02}  # [s] each a hundred times what a search here needs


def test_the_reserve_is_the_low_median_of_the_recent_calls_and_at_most_a_share_of_the_budget():
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 10, 49, 50):
        recent = list(rng.exponential(2e-4, n))
        assert outside_reserve(recent, 1.0) == statistics.median_low(recent)
    slow_once = [2e-4] * 49 + [0.030]  # one call 30 ms outside its search (the GIL held meanwhile)
    assert outside_reserve(slow_once, 0.005) == 2e-4
    assert outside_reserve([2e-4, 0.030], 0.005) == 2e-4  # even the second call's
    assert outside_reserve([0.030] * 30 + [2e-4] * 20, 0.005) == RESERVE_SHARE * 0.005  # most calls slow: capped
    assert outside_reserve([0.001, 0.002, 0.003], 1.0) == 0.002  # neither the smallest nor the largest


def test_a_search_of_two_phases_keeps_its_exact_pass_share_only_while_its_best_needs_it():
    """Budget.spent (both backends' rule; the clock set back by hand): the share, EXACT_RESERVE
    iterations' time at most EXACT_SHARE of the budget, is kept while the best configuration uses
    the slack (the exact pass would follow); then the pass has the iterations it was kept for."""
    from reljac.ik.search.budget import EXACT_RESERVE, Budget
    from reljac.ik.search.order import SLACK

    slack = np.array([0.5 * SLACK * 0.3, 0.2, 0.3])  # level 0 met only by the slack
    met = np.array([1e-13, 0.2, 0.3])  # level 0 under the floor: no exact pass to keep time for
    budget = Budget(1.0, 1e-12, [True, True, True], reserving=True)
    budget.start = time.perf_counter() - 0.9  # 0.9 s spent in 100 iterations: 20 of them are 0.18 s
    assert budget.spent(100, slack) and not budget.spent(100, met) and not budget.spent(100, None)
    assert not Budget(1.0, 1e-12, [True] * 3, reserving=False).spent(100, slack)  # one phase: no pass
    budget.start = time.perf_counter() - 0.3  # 4 iterations: 20 of them (1.5 s) more than half the budget
    assert not budget.spent(4, slack)  # (0.3 s and one more iteration, 0.075 s: before 0.5 s)
    budget.start = time.perf_counter() - 0.45
    assert budget.spent(4, slack)  # (0.45 s and one more, 0.1125 s: past 0.5 s)
    budget.start = time.perf_counter() - 0.5  # the pass begins after 100 iterations (5 ms each)
    budget.exact_pass(100)
    assert budget.assured == 100 + EXACT_RESERVE and not budget.reserving
    budget.start = time.perf_counter() - 3.0  # the process stopped for 2.5 s: the pass still has its iterations
    assert not budget.spent(100 + EXACT_RESERVE - 1, slack) and budget.spent(100 + EXACT_RESERVE, slack)


def test_an_exact_pass_no_time_was_kept_for_ends_on_the_budget():
    """The best configuration needed the exact pass only at the last check (a new best that uses
    the slack, found late): no time was kept for the pass, so none is assured to it (seen: 3
    iterations assured all the same, 12 ms past a 30 ms budget on the Python backend)."""
    from reljac.ik.search.budget import EXACT_RESERVE, Budget
    from reljac.ik.search.order import SLACK

    slack = np.array([0.5 * SLACK * 0.3, 0.2, 0.3])
    met = np.array([1e-13, 0.2, 0.3])
    budget = Budget(1.0, 1e-12, [True] * 3, reserving=True)
    budget.start = time.perf_counter() - 0.7  # 100 iterations of 7 ms
    assert not budget.spent(100, met) and budget.kept == 0.0  # the best needs no pass: nothing kept
    budget.start = time.perf_counter() - 0.95
    assert budget.spent(100, slack)  # a best that needs it, at the end
    budget.exact_pass(100)
    assert budget.assured == 100  # the pass runs on the clock: it ends on the budget
    kept = Budget(1.0, 1e-12, [True] * 3, reserving=True)
    kept.start = time.perf_counter() - 0.5  # 100 iterations of 5 ms, the best needing the pass
    assert not kept.spent(100, slack) and kept.kept == pytest.approx(EXACT_RESERVE * 0.005, rel=0.05)
    kept.exact_pass(100)
    assert kept.assured in (100 + EXACT_RESERVE - 1, 100 + EXACT_RESERVE)  # (the clock moved on meanwhile)


def test_a_step_cut_back_to_where_its_bounded_tasks_enter_halves_no_more_than_its_budget_allows(dual_arm):
    """LocalSearch.enter (the core's twin: search_local.hpp's enter), its evaluations 20 ms each
    (sleep never returns early), every fraction of the step inside: untimed, ENTRY_BISECTIONS
    halvings and the last evaluation; within a 0.1 s budget, it halves while one more halving and
    the last evaluation, at the mean time of a halving so far, end inside the budget: at most 3
    (3 x 20 ms + 2 x 20 ms reach 0.1 s), and the step is the inside end after them (seen before
    the rule: 17 evaluations, 0.34 s, past a budget of a few evaluations' time). A busy machine
    only makes them fewer."""
    from reljac.ik.search.budget import Budget
    from reljac.ik.search.local_search import ENTRY_BISECTIONS

    task = FrameTask("left_tool", name="left")
    task.set_target(reachable_pose(dual_arm, 0))
    solver = Solver(dual_arm, [[task]], backend="python")
    local = PythonSearch(solver.controllers[0], [task], solver.options, solver.sample)
    fractions: list[float] = []

    def evaluate(q, structure):
        time.sleep(0.02)
        return None, np.zeros(1), np.zeros(1)

    local.evaluate = evaluate  # type: ignore[method-assign]
    local.entered = lambda kin, costs, outside: True  # type: ignore[method-assign]
    local.advance = lambda q, v: fractions.append(float(v[0])) or q  # type: ignore[method-assign]
    local.v = np.ones(dual_arm.nv)
    local.iterations = 1
    for timeout, most in ((None, ENTRY_BISECTIONS), (0.1, 3)):
        fractions.clear()
        local.budget = Budget(timeout, 1e-12, [True], reserving=False)
        local.enter(solver.middle, [task], [[task]])
        halvings = len(fractions) - 1
        assert 1 <= halvings <= most and (timeout is not None or halvings == ENTRY_BISECTIONS), fractions
        assert fractions[-1] == 0.5 ** halvings  # the inside end of the bracket


def test_a_search_ends_where_one_more_iteration_at_its_mean_time_would_end_past_its_budget():
    """Budget.spent (both backends' rule; the clock set back by hand), one phase: 0.85 s in 10
    iterations leaves room for one more at their mean (0.085 s) in 1 s; 0.95 s does not."""
    from reljac.ik.search.budget import Budget

    budget = Budget(1.0, 1e-12, [True], reserving=False)
    budget.start = time.perf_counter() - 0.85
    assert not budget.spent(10, None)
    budget.start = time.perf_counter() - 0.95
    assert budget.spent(10, None)
    budget.start = time.perf_counter() - 0.95
    assert not budget.spent(0, None)  # no iteration yet: nothing to predict from


class SlowPose(FrameTask):
    """A pose task whose rows take at least SLOW_ROWS seconds to compute (a user's task in Python)."""

    def compute(self, kin):
        time.sleep(SLOW_ROWS)
        return super().compute(kin)


SLOW_ROWS = 0.02  # [s]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_search_of_slow_python_rows_ends_inside_its_budget_not_one_iteration_after(dual_arm, backend):
    """Rows computed in Python for 20 ms (or more: sleep never returns early), a 0.1 s budget, an
    unreachable target: the start's evaluation and k iterations take at least (k + 1) 20 ms, so
    the search may begin a 4th iteration only if 4 x 20 ms + their mean (at least 80/3 ms) ends
    within 0.1 s: it does not, at most 3 (seen before the rule: 4, ending at 0.103-0.106 s). A
    busy machine only makes them fewer."""
    task = SlowPose("left_tool", name="left")
    far = pin.SE3.Identity()
    far.translation = np.array([5.0, 5.0, 5.0])
    task.set_target(far)
    solver = Solver(dual_arm, [[task]], timeout=0.1, backend=backend)
    for _ in range(2):
        r = solver.solve()
        assert r.reason == "timeout" and r.iterations <= 3, (r.iterations, r.seconds)


def reachable_pose(robot, seed: int) -> pin.SE3:
    return Kinematics(robot, robot.random_configuration(np.random.default_rng(seed))).placement("left_tool")


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_call_slow_outside_its_search_does_not_starve_the_next_ones(dual_arm, backend):
    """The first call's result is built late (the process stopped there for three budgets: a
    garbage collection, the machine busy): the next calls still search, and converge (seen: each
    kept the slowest recent call's time back, searched for 1 us and answered 'timeout' with 0
    iterations)."""
    budget = BUDGET[backend]
    task = FrameTask("left_tool", name="left")
    task.set_target(reachable_pose(dual_arm, 0))
    solver = Solver(dual_arm, [[task]], tol=1e-6, timeout=budget, backend=backend)
    build = solver.result

    def late(found, *rest):
        time.sleep(3 * budget)
        return build(found, *rest)

    solver.result = late  # type: ignore[method-assign]
    first = solver.solve(None, seed=0)
    assert first.call_seconds >= 3 * budget > first.seconds
    solver.result = build  # type: ignore[method-assign]
    for i in range(1, 6):
        task.set_target(reachable_pose(dual_arm, i))
        r = solver.solve(None, seed=i)
        assert r.iterations > 0 and r.converged, (i, r.reason, r.iterations, r.seconds)


def held_for(n: int) -> float:
    """Seconds [s] this thread holds the GIL summing range(n) in one C call, without a break."""
    start = time.perf_counter()
    sum(range(n))
    return time.perf_counter() - start


@compiled_only
def test_a_thread_holding_the_gil_through_one_call_does_not_starve_the_next_ones(dual_arm):
    """Another thread takes the GIL while the first search runs (the search releases it: a target
    out of reach, so it runs its whole budget) and keeps it for about four budgets in one C call:
    that call ends late; the next ones search as before."""
    budget = BUDGET["compiled"]
    fastest = min(held_for(1_000_000) for _ in range(3))  # the GIL held in one C call: its speed here
    n = int(1_000_000 * 4 * budget / fastest)  # about four budgets (more where the machine slows)
    task = FrameTask("left_tool", name="left")
    T = reachable_pose(dual_arm, 0)
    out_of_reach = pin.SE3(T.rotation, T.translation + np.array([3.0, 0.0, 0.0]))
    # The premise: the first call waited for the GIL after its search. On a busy machine the
    # holder may not run within the search's budget (seen once in a loaded suite: the call ended
    # after 1.01 budgets), so a fresh Solver tries again; its next calls are the subject.
    for _attempt in range(5):
        task.set_target(out_of_reach)
        solver = Solver(dual_arm, [[task]], tol=1e-6, timeout=budget, backend="compiled")
        holder = threading.Thread(target=lambda: time.sleep(budget / 4) or sum(range(n)))
        holder.start()
        first = solver.solve(None, seed=0)
        holder.join()
        assert first.reason == "timeout", first.reason
        if first.call_seconds > 1.25 * budget:
            break
    assert first.call_seconds > 1.25 * budget, f"no first call was held up in 5 tries: {first.call_seconds:.4f} s"
    for i in range(1, 6):
        task.set_target(reachable_pose(dual_arm, i))
        r = solver.solve(None, seed=i)
        assert r.iterations > 0 and r.converged, (i, r.reason, r.iterations, r.seconds)


def two_phase_problem(robot, seed: int):
    """The left tool's pose above the right tool's position, both from one configuration, and a
    seed near it: a search of two phases (flat, strict) that converges in about 5 iterations."""
    q = robot.random_configuration(np.random.default_rng(seed))
    kin = Kinematics(robot, q)
    left = FrameTask("left_tool", name="left")
    left.set_target(kin.placement("left_tool"))
    right = RelativePositionTask("universe", "right_tool", name="right")
    right.set_target(kin.placement("right_tool").translation)
    return [[left], [right]], q + 0.1


def search(solver: Solver, q0: np.ndarray, timeout: float | None, seed: int):
    """The search alone (its own timeout [s], no Solver's reserve around it): its result record."""
    if not solver.compiled:
        options = dataclasses.replace(solver.options, timeout=timeout, seed=seed)
        return PythonSearch(solver.controllers[0], solver.counted(), options, solver.sample).run(q0)
    options = solver._core_options
    options.timeout, options.seed = (-1.0 if timeout is None else timeout), seed
    options.counted = [0, 1]
    return solver.controllers[0]._step.search(q0, options)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_search_whose_iterations_are_slow_next_to_its_budget_still_has_half_of_it(dual_arm, backend):
    """A budget of 6 iterations' time, two phases: the exact pass's reserve (20 iterations' time)
    would be larger than the budget; it is at most half of it, so the search converges or uses at
    least that half (seen: ended at its first iteration, 'timeout', at 6 % of its budget)."""
    levels, q0 = two_phase_problem(dual_arm, 3)
    solver = Solver(dual_arm, levels, tol=1e-6, backend=backend)
    untimed = [search(solver, q0, None, 0) for _ in range(3)]
    assert untimed[0].converged and untimed[0].iterations >= 3
    per_iteration = min(r.seconds / r.iterations for r in untimed)
    budget = 6 * per_iteration
    timed = search(solver, q0, budget, 0)
    assert timed.converged or timed.seconds >= EXACT_SHARE * budget, (timed.iterations, timed.seconds, budget)
    # no iteration only where the machine took the whole budget before the first (seen at load 12)
    assert timed.iterations >= 1 or timed.seconds >= budget, (timed.seconds, budget)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_result_reports_its_search_time_and_its_calls(dual_arm, backend):
    """solve()'s call_seconds counts the Solver's set-up, as its timeout does; seconds is the
    search's; solve_many's problems have no call of their own: the two are the same."""
    task = FrameTask("left_tool", name="left")
    task.set_target(reachable_pose(dual_arm, 1))
    start = time.perf_counter()
    r = solve(dual_arm, None, [[task]], tol=1e-6, timeout=BUDGET[backend], backend=backend)
    outer = time.perf_counter() - start
    assert 0.0 < r.seconds < r.call_seconds <= outer
    assert "call_seconds=" in repr(r)
    many = Solver(dual_arm, [[task]], tol=1e-6, backend=backend).solve_many(None, [reachable_pose(dual_arm, 2)])
    assert many[0].call_seconds == many[0].seconds > 0.0


def test_a_new_solver_assumes_a_small_time_outside_its_search():
    assert OUTSIDE_START <= RESERVE_SHARE * 0.005  # a 5 ms budget's first call is not shortened by more


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_stops_a_search_and_leaves_its_solver_as_before(dual_arm, backend):
    """An adversarial pass: the compiled search ran without the GIL and asked for no signal, so
    Ctrl-C (here _thread.interrupt_main, as SIGINT) came only once the whole search had ended:
    after its budget, or after every restart (unbounded). It now asks between iterations. A
    search of a billion restarts toward an unreachable target must stop (else this test hangs);
    the same Solver then finds what a new one finds."""
    import _thread

    far = pin.SE3.Identity()
    far.translation = np.array([5.0, 5.0, 5.0])
    task = FrameTask("left_tool", name="left")
    task.set_target(far)
    solver = Solver(dual_arm, [[task]], restarts=10**9, backend=backend)
    timer = threading.Timer(0.05, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        solver.solve(seed=1)
    timer.join()
    task.set_target(reachable_pose(dual_arm, 4))
    fresh = Solver(dual_arm, [[task]], restarts=10**9, backend=backend).solve(seed=2)
    assert fresh.converged and np.array_equal(solver.solve(seed=2).q, fresh.q)

"""The warm start of the bounded hierarchy (reljac.ik.solvers.inequality.WarmStart, the compiled step's
twin): each level first tries the sets it ended with at the previous solve, and keeps them only
where they are optimal. It changes the path of the search, not what it ends at: on random
problems (tests/qp_cascade.py), solved again and perturbed as a controller's next step would be,
a warm-started solve has the level violations of the QP cascade where a cold one has them, and
a cold one's elsewhere (the oracle's tolerance), on both backends, the two within 1e-9 of each other; the steps after a change of
structure (bounds changed, made one-sided, cleared) are a fresh controller's; the Talos whole-body
stack takes the same steps warm and cold, and a search's levels are never warm-started."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from reljac.ik import Controller, PostureTask, RelativePositionTask, compiled_available
from reljac.ik.solvers import active_set
from reljac.ik.solvers.backend import core
from reljac.ik.solvers.hierarchy import DampingPolicy, Level
from reljac.ik.solvers.inequality import WarmStart, solve_lexicographic
from reljac.relative import Kinematics

qp_cascade = pytest.importorskip("qp_cascade", reason="needs daqp (the test extra)")

UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)  # exact least violation
TOLERANCE = 1e-6  # the oracle's (tests/test_inequality_oracle.py): |violation - the other's| / (1 + the other's)
AGREEMENT = 1e-9  # the specification against the compiled solver, per level (tests/test_inequality_compiled.py)


def levels_of(problem) -> list[Level]:
    return [Level(A, np.zeros(A.shape[0]), lower=low, upper=high) for A, low, high in problem.levels]


def violations(problem, v: np.ndarray) -> np.ndarray:
    return np.array([np.linalg.norm(qp_cascade.distances(A, low, high, v)) for A, low, high in problem.levels])


def perturbed(problem, rng: np.random.Generator):
    """The next control step's problem: rows and bounds moved a little (the structure kept)."""
    levels = [(A + 1e-3 * rng.normal(size=A.shape), low + 1e-3 * rng.normal(size=low.shape),
               high + 1e-3 * rng.normal(size=high.shape)) for A, low, high in problem.levels]
    levels = [(A, np.where(low == high, low, np.minimum(low, high)), np.where(low == high, low, np.maximum(low, high)))
              for A, low, high in levels]
    return qp_cascade.Problem(levels, problem.lo, problem.hi, problem.C, problem.d)


def compiled(problem, warm: bool) -> tuple[np.ndarray, list]:
    """The compiled solver; `warm`: solved twice with one workspace, the second warm-started."""
    levels = levels_of(problem)
    return core().solve_hierarchy(
        [lv.A for lv in levels], [lv.b for lv in levels], [0.0] * len(levels), [None] * len(levels),
        [0.0] * len(levels), problem.lo, problem.hi, problem.C, problem.d, UNDAMPED.threshold, UNDAMPED.max_damping,
        lowers=[lv.lower for lv in levels], uppers=[lv.upper for lv in levels], repeat=2 if warm else 1, warm=warm)


def inside(problem, v: np.ndarray) -> bool:
    return bool((v >= problem.lo - 1e-9).all() and (v <= problem.hi + 1e-9).all())


def close(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    return bool(np.all(np.abs(a - b) <= tol * (1.0 + np.abs(b))))


def check(problem, v_warm: np.ndarray, v_cold: np.ndarray, where: str) -> int:
    """The warm solve ends where the cold one does (the violations, level by level, within the
    oracle's tolerance), or at the QP cascade's where the cold one misses it (a few problems: the
    search's path from the other start ends short of the optimum); 1 if so and the cascade was
    solved (0 where daqp fails on a degenerate QP)."""
    oracle_warm, oracle_cold = qp_cascade.differences(problem, v_warm), qp_cascade.differences(problem, v_cold)
    if oracle_cold is not None and max(oracle_cold) <= TOLERANCE:
        assert max(oracle_warm) <= TOLERANCE, f"{where}: off the QP cascade by {oracle_warm}"
    elif oracle_warm is None or max(oracle_warm) > TOLERANCE:
        warm, cold = violations(problem, v_warm), violations(problem, v_cold)
        assert close(warm, cold, TOLERANCE), f"{where}: warm {warm}, cold {cold} (the cascade: {oracle_warm})"
    return int(oracle_warm is not None)


def test_a_warm_start_ends_where_a_cold_one_does_on_random_problems(monkeypatch):
    """The Python specification, 120 problems: warm from the sets of the same problem (then also
    the cascade's violations) and of the problem before a perturbation (the next step's); the
    guesses are tried and most of them taken."""
    tried, taken = [0], [0]
    guessed = active_set._guessed

    def counted(*args):
        result = guessed(*args)
        tried[0] += 1
        taken[0] += result is not None
        return result

    monkeypatch.setattr(active_set, "_guessed", counted)
    rng = np.random.default_rng(29)
    compared = 0
    for n in range(120):  # (300 took 13 s of the suite; the 1,000-problem oracle test covers the cold solver)
        problem = qp_cascade.random_problem(rng)
        for warm_from, now in ((problem, problem), (problem, perturbed(problem, rng))):
            state = WarmStart()
            solve_lexicographic(levels_of(warm_from), warm_from.lo, warm_from.hi, policy=UNDAMPED, C=warm_from.C,
                                d=warm_from.d, warm=state)
            v_cold, _ = solve_lexicographic(levels_of(now), now.lo, now.hi, policy=UNDAMPED, C=now.C, d=now.d)
            v_warm, reports = solve_lexicographic(levels_of(now), now.lo, now.hi, policy=UNDAMPED, C=now.C, d=now.d,
                                                  warm=state)
            if inside(now, v_cold):  # (the search leaves it on one perturbed problem here, warm or cold: main's too)
                assert inside(now, v_warm), f"problem {n}: v leaves the box"
            assert not any(r.capped for r in reports)
            compared += check(now, v_warm, v_cold, f"problem {n}{'' if now is problem else ', perturbed'}")
    assert compared >= 220  # of 240 (daqp fails on a few degenerate cascades)
    assert taken[0] >= 0.5 * tried[0] > 0, f"{taken[0]} of {tried[0]} guesses taken: the warm path is not exercised"


@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_the_compiled_warm_start_agrees_with_the_specification_and_the_cascade():
    """300 problems solved twice with one workspace (the second warm-started) by the compiled
    solver: the cascade's violations (or the cold ones, see check), and the specification's warm
    start within 1e-9."""
    rng = np.random.default_rng(30)
    compared = 0
    for n in range(300):
        problem = qp_cascade.random_problem(rng)
        v_cold, _ = compiled(problem, warm=False)
        v_warm, reports = compiled(problem, warm=True)
        assert not any(r.capped for r in reports)
        compared += check(problem, v_warm, v_cold, f"problem {n}")
        state = WarmStart()
        for _ in range(2):
            v_spec, _ = solve_lexicographic(levels_of(problem), problem.lo, problem.hi, policy=UNDAMPED, C=problem.C,
                                            d=problem.d, warm=state)
        assert close(violations(problem, v_spec), violations(problem, v_warm), AGREEMENT), f"problem {n}"
    assert compared >= 285


def planar_stack(planar, q):
    """A box the tip starts outside of, over a posture with a centring band."""
    box = RelativePositionTask("base_link", "tip", gain=5.0, weight=[1, 1, 0])
    box.set_target(Kinematics(planar, q).relative_placement("base_link", "tip").translation + np.array([-0.25, 0.1, 0]))
    box.set_bounds([-0.05, -0.05, -np.inf], [0.05, 0.05, np.inf])
    posture = PostureTask(planar, gain=1.0)
    posture.set_target(q)
    posture.set_centring_band(0.3)
    return box, posture


def test_the_steps_after_a_change_of_structure_are_a_cold_controllers():
    """Bounds moved, made one-sided, cleared (an equality level) and set again between steps: from
    the same q, each step of the warm-started controller is the cold one's (the Python solver
    without a WarmStart, the same limits' history) within 1e-9, and the compiled step's."""
    from reljac import Robot
    from reljac.ik.solvers import backend as backends

    planar = Robot.bundled("planar_2link")
    q = np.array([0.3, 0.5])
    box, posture = planar_stack(planar, q)
    warm = Controller(planar, [[box], [posture]], dt=0.01, backend="python")
    cold = Controller(planar, [[box], [posture]], dt=0.01, backend="python")
    cold._solve = backends.solver("python")  # (no WarmStart)
    others = [cold] + ([Controller(planar, [[box], [posture]], dt=0.01, backend="compiled")]
                       if compiled_available() else [])
    changes = {5: ([-0.02, -0.08, -np.inf], [0.02, 0.08, np.inf]), 10: ([-np.inf, -0.05, -np.inf], [0.03, np.inf, np.inf]),
               15: None, 20: ([-0.05, -0.05, -np.inf], [0.05, 0.05, np.inf])}
    for k in range(25):
        if k in changes:
            box.set_bounds(*(changes[k] or ()))  # (None: cleared, an equality level)
        q_next = warm.step(q)
        for other in others:
            assert np.abs(other.step(q) - q_next).max() <= AGREEMENT, f"step {k}, {other.backend}"
        q = q_next


def test_a_reset_starts_cold_and_a_search_is_never_warm_started(monkeypatch):
    """Controller.reset forgets the sets (its next step tries no guess); a search's levels
    (Level.search) are solved cold even with a WarmStart given."""
    from reljac import Robot

    planar = Robot.bundled("planar_2link")
    q = np.array([0.3, 0.5])
    controller = Controller(planar, list(map(list, zip(planar_stack(planar, q), strict=True))), dt=0.01,
                            backend="python")
    tried = []
    guessed = active_set._guessed
    monkeypatch.setattr(active_set, "_guessed", lambda *args: tried.append(1) or guessed(*args))
    for _ in range(3):
        q = controller.step(q)
    assert tried, "the controller's steps are warm-started"
    tried.clear()
    controller.reset()
    controller.step(q)
    assert not tried, "the first step after a reset is cold"
    rng = np.random.default_rng(1)
    problem = qp_cascade.random_problem(rng)
    levels = levels_of(problem)
    for level in levels:
        level.search = True
    state = WarmStart()
    for _ in range(2):
        solve_lexicographic(levels, problem.lo, problem.hi, policy=UNDAMPED, C=problem.C, d=problem.d, warm=state)
    assert not tried and not state.levels


@pytest.mark.slow
def test_talos_whole_body_steps_warm_as_cold():
    """The bounded Talos stack of benchmarks/inequality_step_measure.py, 30 steps: the same
    configurations warm and cold (the guesses its levels take are the search's answers: its band
    level is damped, one optimum), within 1e-12 rad; the compiled step's within 1e-9."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from inequality_step_measure import talos_bounded

    from reljac.ik.solvers import backend as backends

    try:
        talos_bounded(True)
    except Exception:  # (example-robot-data's Talos, an optional install)
        pytest.skip("Talos is not installed")

    def run(backend: str, warm: bool) -> np.ndarray:
        robot, levels, q, limits = talos_bounded(True)
        controller = Controller(robot, levels, dt=0.01, constraints=limits, backend=backend)
        if not warm:
            controller._solve = backends.solver("python")  # the cold solver (no WarmStart)
        qs = []
        for _ in range(30):
            q = controller.step(q)
            qs.append(q)
        return np.array(qs)

    warm = run("python", True)
    assert np.abs(warm - run("python", False)).max() <= 1e-12
    if compiled_available():
        assert np.abs(run("compiled", True) - warm).max() <= 1e-9

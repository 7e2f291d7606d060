"""The inequality hierarchy's tightened start rules (issue 29): each hard row's rounding
allowance at a level's start is its own, and a level starts from the working set the level
above ended with. On the bounded Talos stack of ``reljac bench ik`` (recorded solves of the
controller; needs example-robot-data) the two backends then agree to rounding, where they
differed by up to 5.3 in v before (the floating base's bounds of 1.8e308 made every other hard
row count as held at each level's start)."""

from __future__ import annotations

import numpy as np
import pytest

from reljac.ik.solvers.backend import _compiled, compiled_available
from reljac.ik.solvers.hierarchy import DampingPolicy, Level
from reljac.ik.solvers.inequality import level_rows, solve_lexicographic, violation

UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)
HUGE = float(np.finfo(float).max)  # a floating base's velocity bound, as the controller passes it
compiled = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")


def _huge_box_problem():
    level = Level(np.array([[0.0, 1.0, 0.0]]), np.zeros(1), lower=np.array([0.5]), upper=np.array([0.5]))
    lo, hi = np.array([-HUGE, -1.0, -2.0]), np.array([HUGE, 1.0, 2.0])
    return [level], lo, hi


def test_a_huge_bound_does_not_hold_the_other_rows_at_the_start():
    """v1 = 0.5 inside a box of +-1 (+-2 for v2), beside a joint bounded by 1.8e308: nothing is on
    a bound at v = 0, so the level is met in one step, no change of the working set, nothing held
    (with one allowance for all rows, 1e-12 x 1.8e308, every finite bound counted as held)."""
    levels, lo, hi = _huge_box_problem()
    v, (report,) = solve_lexicographic(levels, lo, hi, policy=UNDAMPED)
    np.testing.assert_allclose(v, [0.0, 0.5, 0.0], atol=1e-15)
    assert report.changes == 0 and report.saturated == [] and report.met


@compiled
def test_the_compiled_start_has_the_same_rule():
    levels, lo, hi = _huge_box_problem()
    v, (report,) = _compiled(levels, lo, hi, None, None, UNDAMPED)
    np.testing.assert_allclose(v, [0.0, 0.5, 0.0], atol=1e-15)
    assert report.changes == 0 and report.saturated == [] and report.met


@pytest.fixture(scope="module")
def talos_solves():
    from reljac.apps.bench_inequality import recorded_solves

    made = recorded_solves(12)
    if made is None:
        pytest.skip("Talos is not installed")
    return made


@compiled
def test_the_backends_agree_on_the_bounded_talos_stack(talos_solves):
    """Every recorded solve (4 levels, 2 bounded, damped as the controller damps them): v within
    1e-9, each level's violation within 1e-9 (relative), the same active rows, met and capped, no
    level at the cap; and v keeps the box and C."""
    robot, recorded = talos_solves
    for n, (levels, lo, hi, C, d, policy) in enumerate(recorded):
        v_py, spec = solve_lexicographic(levels, lo, hi, policy=policy, C=C, d=d)
        v_c, mine = _compiled(levels, lo, hi, C, d, policy)
        np.testing.assert_allclose(v_c, v_py, rtol=1e-9, atol=1e-9, err_msg=f"solve {n}")
        assert (v_c >= lo - 1e-9).all() and (v_c <= hi + 1e-9).all() and (C @ v_c <= d + 1e-9).all(), n
        for k, (level, a, b) in enumerate(zip(levels, spec, mine, strict=True)):
            rows = level_rows(level, robot.nv, k)
            x_py, x_c = violation(rows, v_py), violation(rows, v_c)
            assert abs(x_c - x_py) <= 1e-9 * (1.0 + x_py), f"solve {n}, level {k}: {x_c} vs {x_py}"
            assert (b.active, b.met, b.capped) == (a.active, a.met, a.capped), f"solve {n}, level {k}"
            assert not a.capped, f"solve {n}, level {k} reached the cap"


@pytest.mark.parametrize("solver", ["python", pytest.param("compiled", marks=compiled)])
def test_undamped_talos_levels_meet_the_qp_cascade(talos_solves, solver):
    """The recorded Talos solves without damping (the least violation the QP cascade defines): no
    level reaches the cap, every level meets the first-order conditions of its least-violation
    problem (tests/test_inequality_degenerate_faces.py's certificate, independent of the solver
    and of daqp), and level by level in lexicographic order the first violation off the
    oracle's by more than 1e-6 (relative) is below it: on solve 0 the cascade's third level is
    2e-6 above the violation reached here with the feet and the box met (daqp stops within its
    own tolerance), which leaves the posture 8e-4 less. Before the faces took the pivot |P n|^2
    the feet were off by 2.6e-6 on solve 0 (a face on a nearly dependent row was no projector);
    before the step went to the objective's minimum along it, the band level's soft set cycled
    (a row on its bound entering and leaving at zero step) up to the cap, 5e-2 above the oracle."""
    qp_cascade = pytest.importorskip("qp_cascade", reason="needs daqp (the test extra)")
    from test_inequality_degenerate_faces import KKT, kkt_residuals

    robot, recorded = talos_solves
    solve = solve_lexicographic if solver == "python" else None
    for n, (levels, lo, hi, C, d, _policy) in enumerate(recorded):
        bare = [Level(lv.A, lv.b, identity_scale=lv.identity_scale, mask=lv.mask, lower=lv.lower, upper=lv.upper)
                for lv in levels]
        if solve is None:
            v, reports = _compiled(bare, lo, hi, C, d, UNDAMPED)
        else:
            v, reports = solve(bare, lo, hi, policy=UNDAMPED, C=C, d=d)
        assert not any(r.capped for r in reports), f"solve {n}: a level reached the cap"
        rows = [level_rows(lv, robot.nv, k) for k, lv in enumerate(levels)]
        problem = qp_cascade.Problem([(r.A, r.lower, r.upper) for r in rows], lo, hi, C, d)
        for k, (residual, gradient) in enumerate(kkt_residuals(problem, v)):
            assert residual <= KKT * (1.0 + gradient), f"solve {n}, level {k}: not optimal ({residual:.1e})"
        for k, (r, expected) in enumerate(zip(rows, qp_cascade.cascade(problem), strict=True)):
            off = (violation(r, v) - expected) / (1.0 + expected)
            if abs(off) > 1e-6:
                assert off < 0.0, f"solve {n}, level {k}: violation {violation(r, v)} above the oracle's {expected}"
                break

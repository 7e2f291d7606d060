"""The compiled inequality hierarchy (src/core/inequality.cpp, active_set.cpp) against its
specification, reljac.ik.solvers.inequality (Python), and against the QP cascade oracle
(tests/qp_cascade.py) directly: on the oracle's random problems (2-6 levels, equality and
inequality rows mixed, feasible and infeasible, rank-deficient, a joint box, rows of C), every
level's violation agrees level by level, and the reports name the same active rows, held rows,
saturations and the cap (the rows held on a bound where they are not degenerate); identity levels (masked) and the damped policy too; the cap
on active-set changes is reported as the specification reports it."""

from __future__ import annotations

import numpy as np
import pytest

from reljac.exceptions import TaskError
from reljac.ik.solvers.backend import _compiled, compiled_available, core
from reljac.ik.solvers.hierarchy import DampingPolicy, Level
from reljac.ik.solvers.inequality import solve_lexicographic

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
qp_cascade = pytest.importorskip("qp_cascade", reason="needs daqp (the test extra)")

UNDAMPED = DampingPolicy(threshold=0.0, max_damping=0.0, error_damping=0.0)
DAMPED = DampingPolicy(threshold=0.5, max_damping=0.1)
SPEC = 1e-9  # compiled vs Python: |violation difference| / (1 + violation); the same decisions, rounding apart
# (on these well-conditioned random problems: worst measured 6e-14 on 1,200; on ill-conditioned
# levels the two agree to their rounding only, which grows with the condition: ILL_CONDITIONED below)
ORACLE = 1e-6  # compiled vs the QP cascade, as the Python solver's own oracle test


def levels_of(problem, rng=None):
    damping = (lambda: float(rng.uniform(0.0, 0.01))) if rng is not None else (lambda: 0.0)
    return [Level(A, np.zeros(A.shape[0]), lower=low, upper=high, extra_damping=damping())
            for A, low, high in problem.levels]


def compare(problem, levels, policy, where):
    """The compiled and Python solutions of one problem: v, each level's violation, its active
    rows, whether it was met and capped, its damping and smallest singular value agree; so do the rows held on a bound
    (joints, rows of C, rows of levels above) and what limited the level, except where several
    rows are held at one point with multipliers of zero up to rounding, where either choice is
    right: returns how many levels differ there (the caller bounds it). (Reports are at each
    level's own solution; v is the least-norm fill's below the last level: agreement checks it.)"""
    v_py, spec = solve_lexicographic(levels, problem.lo, problem.hi, policy=policy, C=problem.C, d=problem.d)
    v_c, mine = _compiled(levels, problem.lo, problem.hi, problem.C, problem.d, policy)
    assert (v_c >= problem.lo - 1e-9).all() and (v_c <= problem.hi + 1e-9).all(), f"{where}: v leaves the box"
    np.testing.assert_allclose(v_c, v_py, rtol=SPEC, atol=SPEC, err_msg=where)
    differ = 0
    for k, ((A, low, high), a, b) in enumerate(zip(problem.levels, spec, mine, strict=True)):
        x_py = float(np.linalg.norm(qp_cascade.distances(A, low, high, v_py)))
        x_c = float(np.linalg.norm(qp_cascade.distances(A, low, high, v_c)))
        assert abs(x_c - x_py) <= SPEC * (1.0 + x_py), f"{where}, level {k}: {x_c} vs the specification's {x_py}"
        assert b.residual == pytest.approx(a.residual, rel=SPEC, abs=SPEC), f"{where}, level {k}"
        # the levels below (and the least-norm fill) keep what each level reached: its violation
        # at v is the one its report gives at its own solution
        assert abs(x_c - b.residual) <= 1e-7 * (1.0 + b.residual), f"{where}, level {k}: {x_c} at v, reported {b.residual}"
        assert b.active == a.active, f"{where}, level {k}: active rows {b.active} vs the specification's {a.active}"
        assert (b.capped, b.met) == (a.capped, a.met), f"{where}, level {k}"
        np.testing.assert_allclose(b.margins, a.margins, rtol=1e-7, atol=1e-7, err_msg=f"{where}, level {k}")
        assert b.damping == pytest.approx(a.damping, rel=1e-9, abs=1e-15)
        # (the compiled solver leaves it for when the report is read where it is above the threshold;
        # a small one moves with the rounding of the projector: sigma^2 to ~1e-16 of the rows' scale)
        assert b.smallest_singular_value == pytest.approx(a.smallest_singular_value, rel=1e-7, abs=1e-9), where
        differ += (b.held, b.saturated, b.saturated_rows, b.limit_kind, b.limit_index, b.limit_level) != \
            (a.held, a.saturated, a.saturated_rows, a.limit_kind, a.limit_index, a.limit_level)
    return v_c, mine, differ


def agreement(seed: int, problems: int) -> tuple[int, int]:
    """(problems compared with the oracle, the oracle's failures): the compiled solver against the
    specification on every problem, and against the QP cascade where daqp solves it: each level's
    violation, and v itself, the velocity of least norm that keeps them all (the cascade's last QP)."""
    rng = np.random.default_rng(seed)
    compared = failed = differ = levels = 0
    for n in range(problems):
        problem = qp_cascade.random_problem(rng)
        v, reports, d = compare(problem, levels_of(problem), UNDAMPED, f"problem {n} (seed {seed})")
        differ, levels = differ + d, levels + len(reports)
        assert not any(r.capped for r in reports), f"problem {n}: a level reached the cap"
        differences = qp_cascade.differences(problem, v)
        if differences is None:  # daqp fails on a few degenerate QPs: counted, bounded below
            failed += 1
            continue
        compared += 1
        assert max(differences) <= ORACLE, f"problem {n} (seed {seed}): level violations off the oracle's by {differences}"
        v_oracle = qp_cascade.least_norm_velocity(problem)
        assert np.abs(v - v_oracle).max() <= ORACLE * (1.0 + np.abs(v_oracle).max()), \
            f"problem {n} (seed {seed}): v {v} is not the least-norm {v_oracle}"
    assert differ <= 0.02 * levels, f"held rows differ on {differ} of {levels} levels"
    return compared, failed


def test_agrees_with_the_specification_and_the_qp_cascade():
    compared, failed = agreement(seed=7, problems=60)
    assert compared >= 56 and failed <= 4


@pytest.mark.slow
def test_agrees_on_a_thousand_random_problems():
    """The oracle test's problems (seed 2026), each against the specification and the cascade: the
    compiled solver within ORACLE of the cascade and within SPEC of the specification, level by
    level, so the specification is within ORACLE + SPEC of the cascade on every one (the oracle
    test's 1,000 problems, which it leaves to this test when the core is built)."""
    compared, failed = agreement(seed=2026, problems=1030)
    assert compared >= 1000, f"only {compared} problems compared ({failed} oracle failures)"


def test_damped_random_hierarchies_agree_with_the_specification():
    rng = np.random.default_rng(5)
    differ = levels = 0
    for n in range(80):
        problem = qp_cascade.random_problem(rng)
        _v, reports, d = compare(problem, levels_of(problem, rng), DAMPED, f"damped problem {n}")
        differ, levels = differ + d, levels + len(reports)
    assert differ <= 0.03 * levels


def test_identity_levels_with_masks_and_bands_agree():
    """A posture-like level (A = c diag(mask)) with a centring band, under a bounded level and an
    equality level: the identity rows are made explicit as the specification makes them."""
    rng = np.random.default_rng(11)
    for n in range(40):
        nv = int(rng.integers(3, 8))
        mask = (rng.random(nv) < 0.7).astype(float)
        lo, hi = -rng.uniform(0.2, 1.5, nv), rng.uniform(0.2, 1.5, nv)
        band = rng.uniform(0.0, 0.5, nv)
        centre = rng.normal(size=nv)
        levels = [Level(rng.normal(size=(2, nv)), np.zeros(2), lower=np.array([-np.inf, -1.0]), upper=np.array([0.3, 1.0])),
                  Level(rng.normal(size=(1, nv)), rng.normal(size=1)),
                  Level(None, centre * mask, identity_scale=float(rng.uniform(0.5, 2.0)), mask=mask,
                        lower=(centre - band) * mask, upper=(centre + band) * mask)]
        v_py, spec = solve_lexicographic(levels, lo, hi, policy=DAMPED)
        v_c, mine = _compiled(levels, lo, hi, None, None, DAMPED)
        np.testing.assert_allclose(v_c, v_py, atol=1e-9, err_msg=f"problem {n}")
        for a, b in zip(spec, mine, strict=True):
            assert (b.active, b.capped, b.met) == (a.active, a.capped, a.met), n


@pytest.mark.parametrize("tilt", [3e-7, 3e-6, 1e-5, 1e-4])
def test_an_identity_level_on_a_face_nearly_outside_its_joints_agrees(tilt):
    """The face left to a posture on joints 1 and 2 is the direction (1, tilt, 0), nearly all on
    joint 0, which it leaves out: its Gram matrix's one nonzero eigenvalue is about tilt^2. At
    tilt 3e-7 (9e-14) the rank rule cuts it and the level takes no step; above it the damped step
    moves joint 0 by about tilt / lambda^2. The compiled core's joint-space step for identity rows
    (active_set_identity.cpp) must not take the cut direction."""
    levels = [Level(np.array([[0.0, 0.0, 1.0], [tilt, -1.0, 0.0]]), np.zeros(2), lower=np.zeros(2), upper=np.zeros(2)),
              Level(None, np.array([0.0, 1.0, 1.0]), identity_scale=1.0, mask=np.array([0.0, 1.0, 1.0]),
                    lower=np.array([0.0, 1.0, 1.0]), upper=np.array([0.0, 1.0, 1.0]))]
    lo, hi = -np.full(3, 10.0), np.full(3, 10.0)
    policy = DampingPolicy()
    v_py, spec = solve_lexicographic(levels, lo, hi, policy=policy)
    v_c, _ = _compiled(levels, lo, hi, None, None, policy)
    lam2 = spec[1].damping
    expected = 0.0 if tilt < 1e-6 else tilt / (tilt * tilt + lam2)  # (1, tilt, 0) (z^T g) / (sigma^2 + lam2), |z| ~ 1
    assert v_py[0] == pytest.approx(expected, rel=1e-6, abs=1e-15)
    np.testing.assert_allclose(v_c, v_py, rtol=1e-9, atol=1e-15)


def test_an_identity_level_whose_face_barely_touches_its_joints_keeps_that_direction():
    """Found by an adversarial pass (seed 12496 of its generator): the face the equality level
    leaves is (1, 0, -8.06e-9), so the posture's rows (c = 578, joints 1 and 2) see it with one
    eigenvalue of c^2 6.5e-17 = 2.2e-11, above the rank rule's cut. The compiled core read the
    Gram matrix off the face's projector, c^2 P_W[2, 2], which there is P_W's rounding: it lost
    the direction and took no step, where the specification drives joint 0 to its bound (2.70).
    It now forms M M^T from the rows."""
    levels = [Level(np.array([[0.0, 1.0, 0.0], [8.056929415468039e-09, 0.0, 1.0]]), np.zeros(2),
                    lower=np.array([-0.08760734077548821, 0.03427701284125178]),
                    upper=np.array([-0.08760734077548821, 0.03427701284125178]), extra_damping=1e-06),
              Level(None, np.array([0.0, 529.355232687514, -314.08942766275993]), identity_scale=577.7299972300091,
                    mask=np.array([0.0, 1.0, 1.0]), extra_damping=2.8442226573341133e-05),
              Level(np.array([[-1.0348085235114124, -1.1362734704984216, -1.3130865726177972]]),
                    np.array([1.6797236241752493]), lower=np.array([-1.0]), upper=np.array([1.0]))]
    lo = np.array([-0.7380712641376043, -2.5844512075555444, -1.4796168073668867])
    hi = np.array([2.700434446479746, 2.132073637731938, 2.7504955539737024])
    policy = DampingPolicy(threshold=0.0, max_damping=0.05)
    v_py, _ = solve_lexicographic(levels, lo, hi, policy=policy)
    v_c, _ = _compiled(levels, lo, hi, None, None, policy)
    assert v_py[0] == pytest.approx(hi[0], abs=1e-9)
    np.testing.assert_allclose(v_c, v_py, atol=1e-9)


def test_the_cap_on_active_set_changes_is_reported(monkeypatch):
    """Both joints must go onto the box corner (two changes); with a cap of one the compiled level
    stops after one, feasible, and says so, at the point the specification stops at."""
    level = Level(np.eye(2), np.zeros(2), lower=np.array([3.0, 3.0]), upper=np.array([np.inf, np.inf]))
    lo, hi = -np.ones(2), np.ones(2)
    v, raw = core().solve_hierarchy([level.A], [level.b], [0.0], [None], [0.0], lo, hi, np.zeros((0, 2)), np.zeros(0),
                                    0.0, 0.0, lowers=[level.lower], uppers=[level.upper], change_cap=1)
    monkeypatch.setattr("reljac.ik.solvers.inequality.change_cap", lambda nv, hard, rows: 1)
    v_py, (report,) = solve_lexicographic([level], lo, hi, policy=UNDAMPED)
    changes, capped = raw[0].changes, raw[0].capped
    assert capped and changes == 1 and report.capped
    np.testing.assert_allclose(v, v_py, atol=1e-15)
    assert (np.abs(v) <= 1.0 + 1e-15).all()


@pytest.mark.parametrize("lower, upper, match", [
    ([1.0], [0.0], "level 0: row 0 has lower bound 1.0 above its upper bound 0.0"),
    ([np.nan], [1.0], "level 0: lower must be"),
    ([0.0, 1.0], [1.0], "level 0: lower must be"),
])
def test_bad_bounds_are_named_as_the_specification_names_them(lower, upper, match):
    level = Level(np.array([[1.0, 0.0]]), np.zeros(1), lower=np.array(lower), upper=np.array(upper))
    with pytest.raises(TaskError, match=match):
        _compiled([level], -np.ones(2), np.ones(2), None, None, DampingPolicy())


def test_a_one_sided_level_given_by_one_bound_only():
    """upper None on a level whose lower is given: unbounded above, as the specification reads it."""
    level = Level(np.array([[1.0, 1.0]]), np.zeros(1), lower=np.array([0.5]))
    v_py, _ = solve_lexicographic([level], -np.ones(2), np.ones(2), policy=UNDAMPED)
    v_c, (report,) = _compiled([level], -np.ones(2), np.ones(2), None, None, UNDAMPED)
    np.testing.assert_allclose(v_c, [0.25, 0.25], atol=1e-15)  # the nearest point of v0 + v1 >= 0.5 to 0
    np.testing.assert_allclose(v_c, v_py, atol=1e-15)
    assert report.active == [0] and report.met


def test_overflowing_rows_are_refused_as_the_specification_refuses_them():
    level = Level(np.array([[1e200, 1e200]]), np.zeros(1), lower=np.array([1e300]), upper=np.array([np.inf]))
    with pytest.raises(TaskError, match="overflow"):
        _compiled([level], -np.full(2, np.inf), np.full(2, np.inf), None, None, DampingPolicy())


ILL_CONDITIONED = 1e-7  # the same on levels of singular values spread over 1e-4 - 1e-10 (measured 3.5e-9: see the test)


def test_ill_conditioned_hierarchies_agree_to_their_rounding():
    """Where the stated 1e-9 does not hold (issue 43: 2.1e-9 on undamped random hierarchies with
    ill-conditioned levels): levels with more rows than the freedom left, rows x 1e3, singular
    values down to 1e-10 of the largest (qp_cascade.ill_conditioned_problem). Each level's
    violation is met to the rounding of a solve through its Gram matrix, eps sigma_max^2 /
    sigma_min^2 relative on its kept part, and the two solvers round differently (Eigen's and
    LAPACK's eigen-decompositions, Cholesky factors for full rank): the real bound is that
    rounding, not 1e-9. Measured over these 200 problems: 3.5e-9 at worst (3 levels above 1e-9);
    asserted within ILL_CONDITIONED."""
    rng = np.random.default_rng(41)
    worst = 0.0
    for n in range(200):
        problem = qp_cascade.ill_conditioned_problem(rng)
        levels = levels_of(problem)
        v_py, _ = solve_lexicographic(levels, problem.lo, problem.hi, policy=UNDAMPED, C=problem.C, d=problem.d)
        v_c, _ = _compiled(levels, problem.lo, problem.hi, problem.C, problem.d, UNDAMPED)
        for A, low, high in problem.levels:
            x_py = float(np.linalg.norm(qp_cascade.distances(A, low, high, v_py)))
            x_c = float(np.linalg.norm(qp_cascade.distances(A, low, high, v_c)))
            worst = max(worst, abs(x_c - x_py) / (1.0 + x_py))
            assert abs(x_c - x_py) <= ILL_CONDITIONED * (1.0 + x_py), f"problem {n}: {x_c} vs the specification's {x_py}"
    assert worst > SPEC  # (the stated bound for well-conditioned levels would not hold here)

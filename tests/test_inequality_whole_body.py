"""The compiled inequality hierarchy on whole-body shapes against its specification (Python's
reljac.ik.solvers.inequality): nv 38, levels of 12, 6 and 9 rows (one of them bounded) and a
posture level of 32 masked identity rows below them, more rows than the freedom left (rank
deficient, damped), with joints on their bound at the start (held from the first level on).
These take the compiled solver's certified paths (src/core/active_set_pivoted.cpp,
active_set_gram.cpp): a rank-deficient level's damped step on the pivot rows of a Cholesky factor
with diagonal pivoting, at any size, and its smallest singular value certified 0 the same way; a
small level's smallest singular value by certified inverse iteration; A P_W from A P_in and the
face's restrictions; the posture level's Gram matrix read off the face's projector. Each must give the specification's answer up to rounding, cold and warm
(the guess of the previous solve)."""

from __future__ import annotations

import numpy as np
import pytest

from reljac.ik.solvers.backend import compiled_available, core, core_report
from reljac.ik.solvers.hierarchy import DampingPolicy, Level
from reljac.ik.solvers.inequality import WarmStart, solve_lexicographic

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")

NV = 38
DAMPED = DampingPolicy(threshold=0.5, max_damping=0.1)


def whole_body(rng: np.random.Generator, posture_last: bool = True) -> tuple[list[Level], np.ndarray, np.ndarray]:
    """Feet (12), box (6), lead + CoM + one bounded row (9), posture (32 of 38 joints, weighted)."""
    def sparse(m: int, density: float) -> np.ndarray:
        A = rng.normal(size=(m, NV)) * (rng.random((m, NV)) < density)
        A[:, :6] = rng.normal(size=(m, 6))  # the floating base moves every task
        return A

    lead = sparse(9, 0.4)
    levels = [Level(sparse(12, 0.3), rng.normal(size=12)), Level(sparse(6, 0.5), rng.normal(size=6)),
              Level(lead, np.zeros(9), lower=np.r_[rng.normal(size=8), -np.inf],
                    upper=np.r_[np.full(8, np.nan), rng.uniform(-0.2, 0.2)])]
    levels[2].upper[:8] = levels[2].lower[:8]  # equality rows, then one inequality row
    mask = np.r_[np.zeros(6), np.ones(NV - 6)]
    posture = Level(None, rng.normal(size=NV) * mask, identity_scale=float(rng.uniform(0.5, 2.0)), mask=mask)
    levels.append(posture) if posture_last else levels.insert(3, posture)
    if not posture_last:  # one more level below the posture: the rank-deficient level is not the last one
        levels.append(Level(rng.normal(size=(2, NV)), rng.normal(size=2)))
    lo, hi = -rng.uniform(0.5, 2.0, NV), rng.uniform(0.5, 2.0, NV)
    lo[:6], hi[:6] = -1.8e308, 1.8e308  # a floating base's bounds
    on_bound = rng.choice(np.arange(6, NV), size=3, replace=False)
    lo[on_bound[:2]] = 0.0  # v = 0 on these bounds at the start: held from the first level on
    hi[on_bound[2]] = 0.0
    return levels, lo, hi


def compiled(levels: list[Level], lo: np.ndarray, hi: np.ndarray, repeat: int = 1, warm: bool = False):
    """The compiled solver's answer after `repeat` solves in one workspace (`warm`: each from the
    sets the one before ended with)."""
    v, raw = core().solve_hierarchy(
        [level.A for level in levels], [level.b for level in levels],
        [level.identity_scale if level.identity_scale is not None else 0.0 for level in levels],
        [level.mask for level in levels], [level.extra_damping for level in levels],
        lo, hi, np.zeros((0, NV)), np.zeros(0), DAMPED.threshold, DAMPED.max_damping,
        lowers=[level.lower for level in levels], uppers=[level.upper for level in levels], repeat=repeat, warm=warm)
    return v, [core_report(r) for r in raw]


def agree(v_c, mine, v_py, spec, where):
    np.testing.assert_allclose(v_c, v_py, rtol=1e-9, atol=1e-9, err_msg=where)
    for k, (a, b) in enumerate(zip(spec, mine, strict=True)):
        assert b.residual == pytest.approx(a.residual, rel=1e-9, abs=1e-9), f"{where}, level {k}"
        assert (b.active, b.met, b.capped) == (a.active, a.met, a.capped), f"{where}, level {k}"
        assert b.damping == pytest.approx(a.damping, rel=1e-9, abs=1e-15), f"{where}, level {k}"
        assert b.smallest_singular_value == pytest.approx(a.smallest_singular_value, rel=1e-7, abs=1e-9), \
            f"{where}, level {k}"


@pytest.mark.parametrize("posture_last", [True, False])
def test_whole_body_shapes_agree_with_the_specification(posture_last):
    rng = np.random.default_rng(41)
    deficient = 0
    for n in range(25):
        levels, lo, hi = whole_body(rng, posture_last)
        v_py, spec = solve_lexicographic(levels, lo, hi, policy=DAMPED)
        v_c, mine = compiled(levels, lo, hi)
        agree(v_c, mine, v_py, spec, f"problem {n}")
        k = 3
        # the posture level asks for more rows than the freedom left: rank deficient, damped
        deficient += spec[k].smallest_singular_value == 0.0 and spec[k].damping > 0.0
        assert any(r.saturated for r in spec), f"problem {n}: no joint held on its bound"
    assert deficient == 25


def test_warm_started_whole_body_shapes_agree_with_the_specification():
    """Solved again from the sets the first solve ended with (a controller's next step), the guess
    is the answer: the same as the specification's warm start."""
    rng = np.random.default_rng(43)
    for n in range(15):
        levels, lo, hi = whole_body(rng)
        warm = WarmStart()
        solve_lexicographic(levels, lo, hi, policy=DAMPED, warm=warm)
        v_py, spec = solve_lexicographic(levels, lo, hi, policy=DAMPED, warm=warm)
        v_c, mine = compiled(levels, lo, hi, repeat=2, warm=True)
        agree(v_c, mine, v_py, spec, f"warm problem {n}")
        assert [r.changes for r in mine] == [r.changes for r in spec], f"warm problem {n}"


def test_a_bounded_row_dependent_on_its_level_agrees_with_the_specification():
    """The lead level's inequality row a combination of its equality rows (a cone on the lead
    gripper's axis beside the gripper's own orientation rows): the level is rank deficient with an
    inequality row among its rows, its smallest singular value 0 (certified by a pivoted Cholesky
    factor in the compiled solver, an eigen-decomposition in the specification), damped; cold and
    warm, as the specification."""
    rng = np.random.default_rng(47)
    for n in range(15):
        levels, lo, hi = whole_body(rng)
        lead = levels[2]
        weights = rng.normal(size=3)
        lead.A[8] = weights @ lead.A[3:6]
        lead.upper[8] = float(weights @ lead.lower[3:6]) + rng.uniform(-0.1, 0.1)
        v_py, spec = solve_lexicographic(levels, lo, hi, policy=DAMPED)
        v_c, mine = compiled(levels, lo, hi)
        agree(v_c, mine, v_py, spec, f"problem {n}")
        assert spec[2].smallest_singular_value == 0.0 and spec[2].damping > 0.0, f"problem {n}"
        warm = WarmStart()
        solve_lexicographic(levels, lo, hi, policy=DAMPED, warm=warm)
        v_py, spec = solve_lexicographic(levels, lo, hi, policy=DAMPED, warm=warm)
        v_c, mine = compiled(levels, lo, hi, repeat=2, warm=True)
        agree(v_c, mine, v_py, spec, f"warm problem {n}")

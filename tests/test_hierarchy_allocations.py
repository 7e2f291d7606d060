"""No heap allocation inside the compiled hierarchy solve with inequality levels once its workspace
is sized (issue 29, item 4), counted as tests/test_step_allocations.py counts a step (its malloc
counter, preloaded into a subprocess): ``_core.solve_hierarchy(..., repeat=n)`` solves n times in
a row with one workspace, so what ``repeat=1 + N`` allocates beyond ``repeat=1`` (the binding's
own allocations are the same for both) is what N solves allocate, and it must be 0.

The problems: nv 20, levels of up to 12 rows: a bounded level, an equality level, a masked
identity level with a centring band (12 kept joints), one-sided and two-sided rows, a joint box and
rows of C, one of them violated at the start (the recovery level); several seeds, so that the
active sets differ from one problem to the next. And wide ones: nv 40, a band of 30 kept joints,
most of them beyond their band at the start, so that the band level's soft set (the rows its
Gram matrix is made of) has more than 12 rows and changes size within one solve (the
fixed-capacity factorizations go up to 48 rows; larger ones allocate, as the equality solver's do).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

if __name__ != "__main__":  # under pytest (tests/ on its path): the preloaded malloc counter's fixture
    from test_step_allocations import counter  # noqa: F401

pytestmark = pytest.mark.slow
EXTRA = 50


def problem(seed: int) -> dict:
    """One random hierarchy as solve_hierarchy's named arguments."""
    rng = np.random.default_rng(seed)
    nv = 20
    mask = np.r_[np.zeros(8), np.ones(12)]
    centre = rng.normal(size=nv) * mask
    band = rng.uniform(0.0, 0.3, nv) * mask
    A1, A2 = rng.normal(size=(6, nv)), rng.normal(size=(3, nv))
    middle, half = rng.normal(size=6), rng.uniform(0.0, 1.0, 6)
    C = rng.normal(size=(3, nv))
    d = np.array([1.0, 1.0, -0.5])  # the last row is violated at v = 0: recovered first
    C[2] = np.abs(C[2])
    return dict(As=[A1, A2, None], bs=[np.zeros(6), rng.normal(size=3), centre], identity_scales=[0.0, 0.0, 1.5],
                masks=[None, None, mask], extra_damping=[0.0, 0.001, 0.0],
                lo=-rng.uniform(0.2, 1.0, nv), hi=rng.uniform(0.2, 1.0, nv), C=C, d=d,
                threshold=0.02, max_damping=0.05,
                lowers=[np.r_[np.full(3, -np.inf), middle[3:] - half[3:]], None, centre - band],
                uppers=[middle + half, None, centre + band])


def wide_problem(seed: int) -> dict:
    """A hierarchy whose band level decomposes Gram matrices of more than 12 rows, of changing sizes."""
    rng = np.random.default_rng(100 + seed)
    nv = 40
    mask = np.r_[np.zeros(10), np.ones(30)]
    centre = rng.normal(size=nv) * mask
    band = rng.uniform(0.0, 0.3, nv) * mask
    A1 = rng.normal(size=(6, nv))
    middle, half = rng.normal(size=6), rng.uniform(0.0, 1.0, 6)
    return dict(As=[A1, None], bs=[np.zeros(6), centre], identity_scales=[0.0, 1.0], masks=[None, mask],
                extra_damping=[0.0, 0.0], lo=-rng.uniform(0.2, 1.0, nv), hi=rng.uniform(0.2, 1.0, nv),
                C=np.zeros((0, nv)), d=np.zeros(0), threshold=0.02, max_damping=0.05,
                lowers=[middle - half, centre - band], uppers=[middle + half, centre + band])


PROBLEMS = {**{str(seed): partial(problem, seed) for seed in range(6)},
            **{f"wide {seed}": partial(wide_problem, seed) for seed in range(3)}}


def count() -> dict:
    """In the preloaded subprocess: allocations of N extra solves, per seed."""
    from reljac.ik.solvers.backend import core

    libc = ctypes.CDLL(None)
    out = {}
    for name, make in PROBLEMS.items():
        call = make()

        def counted(repeat: int, call=call) -> int:
            libc.reljac_alloc_counting(1)
            before = libc.reljac_alloc_count()
            core().solve_hierarchy(**call, repeat=repeat)
            after = libc.reljac_alloc_count()
            libc.reljac_alloc_counting(0)
            return after - before

        counted(1 + EXTRA)  # warm-up: Python's own caches
        out[name] = counted(1 + EXTRA) - counted(1)
    return out


def test_a_bounded_hierarchy_solve_allocates_nothing_once_sized(counter):
    from reljac.ik import compiled_available

    if not compiled_available():
        pytest.skip("the compiled core is not built")
    env = dict(os.environ, LD_PRELOAD=str(counter))
    done = subprocess.run([sys.executable, str(Path(__file__))], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    extra = json.loads(done.stdout.strip().splitlines()[-1])
    assert extra == dict.fromkeys(PROBLEMS, 0), f"allocations in {EXTRA} solves, per problem: {extra}"


def test_the_problems_have_active_inequality_rows_and_a_recovery():
    """The counted problems exercise what they should: active rows, held rows, a violated row of C."""
    from reljac.ik.solvers.backend import compiled_available, core

    if not compiled_available():
        pytest.skip("the compiled core is not built")
    active = held = 0
    for seed in range(6):
        call = problem(seed)
        assert (call["C"] @ np.clip(0.0, call["lo"], call["hi"]) > call["d"])[2]
        _v, reports = core().solve_hierarchy(**call)
        active += sum(len(r.active) for r in reports)
        held += sum(len(r.held) + len(r.saturated) for r in reports)
    assert active > 0 and held > 0


if __name__ == "__main__":
    print(json.dumps(count()))

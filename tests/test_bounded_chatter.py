"""Chatter at rest with inequality rows active (issue 29's target: <= 2 %), measured as
``reljac bench ik`` does (reljac/apps/bench_ik.py: bounded_chatter): the relative pose kept in
a box while a lower level pulls out of it, one-step gains. Without the controller's reversal
damping and error damping the same runs do chatter, so the measure can fail."""

from __future__ import annotations

import pytest

from reljac import Robot
from reljac.apps.bench_ik import bounded_chatter
from reljac.ik import DampingPolicy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dual_arm():
    return Robot.bundled("dual_arm")


def test_rows_on_their_bounds_at_rest_do_not_chatter(dual_arm):
    r = bounded_chatter(dual_arm, 3, dt=0.01)
    assert r["active_rows"] >= 1  # rows of the box are on a bound at rest: the case measured
    assert r["chatter"] <= 0.02
    # the control case on the Python solver (the specification), where this run chatters (one
    # episode: about 4 s of Python steps); the compiled bounded solver does not on these runs
    # (0.7 %: the two part on this stack, ineq-step's report)
    old = bounded_chatter(dual_arm, 1, dt=0.01, anti_chatter=False, damping=DampingPolicy(error_damping=0.0),
                          backend="python")
    assert old["chatter"] > 0.1

"""Behaviours a mutation pass found unpinned (issue 43): the tests naming a mutant in their
docstring fail on that one-line change (checked when they were written).

* ``frozen()`` (reljac/ik/description.py) copies: the caller's array stays its own, writable.
* ``IKResult.levels_met`` needs every counted task of a level within tol, not any one of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from reljac import Kinematics, Robot
from reljac.ik import PostureTask, RelativePositionTask, solve
from reljac.ik.description import frozen


def test_frozen_copies_and_leaves_the_callers_array_writable():
    """Mutant: ``out = np.asarray(array, dtype=float)`` (the caller's array made read-only in place)."""
    caller = np.arange(6.0).reshape(2, 3)
    out = frozen(caller)
    assert caller.flags.writeable and not out.flags.writeable
    assert not np.shares_memory(out, caller)
    caller[0, 0] = 42.0  # the caller still owns and changes its array; the frozen copy does not follow
    assert out[0, 0] == 0.0
    np.testing.assert_array_equal(out.ravel()[1:], np.arange(1.0, 6.0))


def test_a_described_task_leaves_its_callers_arrays_writable():
    """The same promise through the public API (not a mutant's test: the setters copy first): a
    posture's target and weight given as arrays, described for the compiled step (frozen
    there), stay the caller's."""
    robot = Robot.bundled("planar_2link")
    target, weight = np.array([0.3, -0.2]), np.array([1.0, 0.5])
    posture = PostureTask(robot, weight=weight)
    posture.set_target(target)
    posture.description(robot)
    target[0] = weight[0] = 7.0  # no "assignment destination is read-only"
    assert target.flags.writeable and weight.flags.writeable


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_levels_met_needs_every_task_of_the_level(backend):
    """Mutant: ``any(...)`` for ``all(...)``. A level of two fingers' tips, one reachable, one sent 1 m
    away: the first within tol, the second not (checked here from Kinematics), so the level is not met."""
    hand = Robot.bundled("hand")
    kin = Kinematics(hand, hand.random_configuration(3))
    index = RelativePositionTask("palm", "index_tip", name="index")
    index.set_target(kin.relative_placement("palm", "index_tip").translation)
    middle = RelativePositionTask("palm", "middle_tip", name="middle")
    middle.set_target(kin.relative_placement("palm", "middle_tip").translation + np.array([1.0, 0.0, 0.0]))
    tol = 0.05
    result = solve(hand, hand.neutral(), [[index, middle], [PostureTask(hand, weight=0.1)]], tol=tol, restarts=0,
                   backend=backend)
    at = Kinematics(hand, result.q)
    index_error = np.linalg.norm(at.relative_placement("palm", "index_tip").translation - index.target)
    middle_error = np.linalg.norm(at.relative_placement("palm", "middle_tip").translation - middle.target)
    assert index_error <= tol < middle_error  # the situation: one task of the level met, one not
    assert result.levels_met == [False, None]
    assert result.errors["index"]["position"] == pytest.approx(index_error, abs=1e-12)

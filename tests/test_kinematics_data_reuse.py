"""Kinematics objects made without a ``data=`` reuse the ``pin.Data`` of collected ones (a new
``pin.Data`` costs about ten Kinematics passes): never one that something else still holds,
never one that a live Kinematics or another thread is using, with the same values as a
Kinematics on a data of its own."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import reljac
from reljac import Kinematics

PAIRS = [("left_tool", "right_tool"), ("torso", "left_tool"), ("right_tool", "left_link5")]


@pytest.fixture(scope="module")
def robot():
    return reljac.Robot.bundled("dual_arm")


def own(robot, q, v=None):
    """The same quantities from a Kinematics on a data nothing else has touched."""
    return Kinematics(robot, q, v, data=robot.model.createData())


def values(kin, with_rates=False):
    out = [kin.relative_jacobian(a, b) for a, b in PAIRS]
    out += [kin.relative_placement(a, b).homogeneous for a, b in PAIRS]
    out += [kin.relative_jacobian(a, b, expressed_in="b") for a, b in PAIRS]
    if with_rates:
        out += [kin.relative_jacobian_time_variation(a, b) for a, b in PAIRS]
    return out


def test_successive_objects_give_the_values_of_fresh_data(robot, rng):
    for i in range(30):  # with and without velocities, each object dropped before the next
        q = robot.random_configuration(rng)
        v = rng.standard_normal(robot.nv) if i % 2 else None
        got = values(Kinematics(robot, q, v), v is not None)
        for a, b in zip(got, values(own(robot, q, v), v is not None), strict=True):
            np.testing.assert_array_equal(a, b)
    assert robot._spare_data, "dropped objects gave their data back"


@pytest.mark.slow
def test_data_a_caller_kept_is_never_reused(robot, rng):
    q1 = robot.random_configuration(rng)
    kin = Kinematics(robot, q1)
    kin.relative_jacobian(*PAIRS[0])  # (the compiled core remembers this data: not the caller's reference)
    kept = kin.data
    frame = robot.frame_id("left_tool")
    before = kept.oMf[frame].homogeneous.copy()
    del kin
    gc.collect()
    others = [Kinematics(robot, robot.random_configuration(rng)) for _ in range(8)]
    assert all(k.data is not kept for k in others)
    del others
    for _ in range(8):
        Kinematics(robot, robot.random_configuration(rng))
    np.testing.assert_array_equal(kept.oMf[frame].homogeneous, before)


def test_live_objects_never_share_data(robot, rng):
    for _ in range(3):
        Kinematics(robot, robot.random_configuration(rng))  # fill the spare data
    live = [Kinematics(robot, robot.random_configuration(rng)) for _ in range(10)]
    assert len({id(k.data) for k in live}) == len(live)
    given = robot.model.createData()
    assert Kinematics(robot, robot.random_configuration(rng), data=given).data is given


def test_threads_each_get_their_own_answers(robot):
    qs = [robot.random_configuration(i) for i in range(16)]
    expected = [values(own(robot, q)) for q in qs]
    errors: list[str] = []

    def work(worker: int) -> None:
        for rep in range(60):
            i = (worker + rep) % len(qs)
            got = values(Kinematics(robot, qs[i]))
            if not all(np.array_equal(a, b) for a, b in zip(got, expected[i], strict=True)):
                errors.append(f"thread {worker}, configuration {i}")

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors

"""``reljac bench solve --collision`` (reljac/apps/bench_solve_collision.py): every case and budget
measured for every method, every answer checked by Pinocchio's own distances (no colliding
answer), the throughput of solve_many with collision avoidance; and the flag's usage."""

from __future__ import annotations

import numpy as np
import pytest

import reljac
from reljac.apps.cli import main
from reljac.ik import compiled_available


def test_collision_is_a_protocol_of_solve_only(capsys):
    assert main(["bench", "ik", "--collision"]) == 2
    assert "--collision is a protocol of 'solve', not of 'ik'" in capsys.readouterr().err


def test_the_independent_distance_check_is_pinocchios_on_the_models_pairs():
    """bench_solve_collision.distances against reljac's own CollisionModel.distances (other code:
    the broad phase, coal through reljac's kernel): the same pair distances at random q."""
    from reljac.apps.bench_solve_collision import distances
    from reljac.collision import CollisionModel

    robot = reljac.Robot.bundled("dual_arm")
    model = CollisionModel(robot)
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = robot.random_configuration(rng)
        theirs = model.distances(q, jacobians=False)  # per body pair, each its nearest geometries
        ours = distances(robot, model, q)
        assert len(ours) == len(model.geometry_model.collisionPairs) >= len(theirs)
        assert ours.min() == pytest.approx(theirs.distance.min(), abs=1e-9)


@pytest.mark.slow
@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_bench_solve_collision_measures_every_case_and_every_method():
    from reljac.apps import bench
    from reljac.robots import example_robots

    if "panda" not in example_robots():
        pytest.skip("needs example-robot-data's Panda (the test extra)")
    done = []
    r = bench.results("solve", quick=True, collision=True, progress=done.append)["sections"]["solve_collision"]
    assert sum(done) == bench.units("solve", quick=True, collision=True)
    assert [(c["case"].split()[0], c["budget_s"]) for c in r["cases"]] == [
        ("Panda", 0.005), ("Panda", 0.02), ("dual_arm", 0.01), ("dual_arm", 0.05)]
    for c in r["cases"]:
        for who in ("avoidance", "loop"):
            s = c[who]
            assert s["queries"] == 20 and 0.0 <= s["within_budget"] <= 1.0 and s["colliding"] == 0
            assert s["median_s"] <= s["p95_s"] <= s["p99_s"]
    m = r["solve_many"]
    assert m["problems"] == 50 and m["per_core_per_s"] > 0 and m["converged_clear"] > 0.9
    from reljac.apps.bench_solve_collision import collision_text

    text = collision_text(r)
    assert "reljac solve + CollisionAvoidance" in text and "per core" in text

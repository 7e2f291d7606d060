"""``reljac bench solve --peers``, ikpy's part: its chain follows the URDF from base to tip, its
forward kinematics is Pinocchio's, its answers are judged by reljac's error check, and a chain it
cannot reproduce is said in the table, not skipped."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac.apps import bench_solve, bench_solve_peers
from reljac.relative import Kinematics
from reljac.robots import example_robots

try:
    import ikpy  # noqa: F401
    HAVE_IKPY = True
except ImportError:  # pragma: no cover
    HAVE_IKPY = False
needs_ikpy = pytest.mark.skipif(not HAVE_IKPY, reason="needs ikpy (the peers extra)")


def by_name(name):
    if name not in example_robots():
        pytest.skip(f"needs example-robot-data's {name} (the test extra)")
    return reljac.Robot.load(name)


@pytest.mark.parametrize("name, base, tip", bench_solve.CHAINS)
def test_the_urdf_path_names_pinocchios_chain_joints_in_order(name, base, tip):
    robot = by_name(name)
    elements, types = bench_solve_peers.urdf_path(reljac.robots.resolve(name).urdf, base, tip)
    assert elements[0] == base and elements[-1] == tip and len(elements) == 2 * len(types) + 1
    moving = [j for j, kind in zip(elements[1::2], types, strict=True) if kind != "fixed"]
    model = robot.model
    expected = [model.names[j] for j in range(1, model.njoints)
                if (model.joints[j].idx_q, model.joints[j].nq) in bench_solve_peers.chain_joints(robot, base, tip)]
    assert moving == expected


def test_a_tip_not_below_the_base_is_said_in_one_line():
    robot = by_name("ur5")
    with pytest.raises(KeyError, match="link 'base_link' is not below link 'tool0'"):
        bench_solve_peers.urdf_path(reljac.robots.resolve("ur5").urdf, "tool0", "base_link")
    if HAVE_IKPY:
        r = bench_solve_peers.run_ikpy(robot, "ur5", "tool0", "base_link", [pin.SE3.Identity()], robot.neutral(), 0.005)
        assert r == {"error": "chain not reproduced: link 'base_link' is not below link 'tool0' in ur5_robot.urdf"}


@pytest.mark.slow
@needs_ikpy
@pytest.mark.parametrize("name, base, tip", bench_solve.CHAINS)
def test_ikpys_chain_has_pinocchios_forward_kinematics(name, base, tip, rng):
    robot = by_name(name)
    chain, note = bench_solve_peers.ikpy_chain(robot, name, base, tip)
    assert chain is not None, note
    joints = bench_solve_peers.chain_joints(robot, base, tip)
    for _ in range(5):  # other configurations than the check's own
        q = robot.random_configuration(rng)
        angles = bench_solve_peers.chain_angles(q, joints)
        H = chain.forward_kinematics(chain.active_to_full(angles, np.zeros(len(chain.links))))
        np.testing.assert_allclose(H, Kinematics(robot, q).relative_placement(base, tip).homogeneous, atol=1e-9)


def test_chain_angles_and_back_keep_continuous_joints_on_the_circle(rng):
    robot = by_name("kinova")
    joints = bench_solve_peers.chain_joints(robot, "j2s6s200_link_base", "j2s6s200_end_effector")
    assert any(n == 2 for _, n in joints)  # Kinova's continuous joints: (cos, sin) in q
    q = robot.random_configuration(rng)
    back = bench_solve_peers.with_angles(robot.neutral(), joints, bench_solve_peers.chain_angles(q, joints))
    np.testing.assert_allclose(Kinematics(robot, back).relative_placement("j2s6s200_link_base", "j2s6s200_end_effector")
                               .homogeneous, Kinematics(robot, q).relative_placement(
                                   "j2s6s200_link_base", "j2s6s200_end_effector").homogeneous, atol=1e-12)


@pytest.mark.slow
@needs_ikpy
def test_ikpy_success_is_reljacs_error_check(rng):
    """Seeded at the answer, ikpy stays there: solved; a target 10 m away: not solved."""
    robot = by_name("ur5")
    q = robot.random_configuration(rng)
    T = Kinematics(robot, q).relative_placement("base_link", "tool0")
    far = pin.SE3(T.rotation, T.translation + np.array([10.0, 0.0, 0.0]))
    r = bench_solve_peers.run_ikpy(robot, "ur5", "base_link", "tool0", [T, far], q, 0.005)
    assert r["at_all"] == pytest.approx(0.5) and r["queries"] == 2
    assert "FK = Pinocchio's" in r["note"]


def test_the_table_shows_every_peer_its_configuration_and_an_unreproduced_chain():
    figures = {"within_budget": 0.5, "at_all": 1.0, "mean_s": 1e-3, "median_s": 1e-3, "p95_s": 2e-3, "p99_s": 3e-3}
    r = {"tol": 1e-5, "budget_s": 0.005, "cases": [],
         "solve_many": {"problems": 1, "one_core_per_s": 1.0, "all_cores_per_s": 2.0, "cores": 2, "speedup": 2.0},
         "chains": [{"chain": "ur5 base_link->tool0", "dof": 6, "reljac": figures, "pink": None,
                     "ikpy": {**figures, "note": "6 joints + 1 fixed"}},
                    {"chain": "kinova a->b", "dof": 6, "reljac": figures, "ikpy": {"error": "chain not reproduced: X"}}],
         "peers": {"ikpy": bench_solve_peers.CONFIGURED["ikpy"]}}
    text = bench_solve.solve_text(r)
    assert "chain not reproduced: X" in text and bench_solve_peers.CONFIGURED["ikpy"] in text
    assert "ikpy on ur5 base_link->tool0: 6 joints + 1 fixed" in text
    rows = [line.split() for line in text.splitlines() if line.startswith(("ur5 ", "kinova "))]
    assert [row[3] for row in rows] == ["reljac", "ikpy", "reljac", "ikpy"]  # pink (not installed): no row

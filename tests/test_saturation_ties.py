"""Two constraint rows reached at once (a level starting on their vertex) in the SNS hierarchy
solver: holding the first one SNS meets and then the second pins the level, though sliding along
the second alone may leave the first inside: each such tie is now also explored the other way,
the better result kept (reljac.ik.solvers.saturation.Saturations). Found on
Talos: humanoid_stack's centre of mass, sent beyond a corner of its support region, stopped there
for good, 36.5 mm from the region's nearest point to its target, on both backends.

The oracle: a level v = u (A = I, undamped) under rows C v <= 0 through the origin, started on their
vertex, is the Euclidean projection of u onto the cone {C v <= 0}, found here by enumeration (u itself,
its projection on each row's line, the vertex: the nearest that is inside)."""

from __future__ import annotations

import numpy as np
import pytest

from reljac import Kinematics, Robot, URDFError
from reljac.ik import Controller, compiled_available
from reljac.ik.humanoid import humanoid_stack
from reljac.ik.solvers import hierarchy as H
from reljac.ik.solvers import saturation
from reljac.ik.solvers.backend import _compiled, _python

UNDAMPED = H.DampingPolicy(threshold=0.0, max_damping=0.0)  # (a level with a row held is rank deficient)
def _sns_own_order(monkeypatch) -> None:
    """The Python solver as SNS alone: no tie explored (neither kind of path is kept)."""
    monkeypatch.setattr(saturation.Saturations, "tie", lambda self, row, scale: None)
    monkeypatch.setattr(saturation.Saturations, "pushed_out", lambda self, row: None)


BACKENDS = [_python] + ([_compiled] if compiled_available() else [])


def _projection_on_cone(C: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The nearest point to u of {x: C x <= 0} (2-D, rows through 0: a cone with its vertex at 0, or
    a half-plane): u, its projection on one row's line, or the vertex, the nearest that is inside."""
    candidates = [u] + [u - (c @ u) / (c @ c) * c for c in C] + [np.zeros(2)]
    inside = [x for x in candidates if np.all(C @ x <= 1e-12)]
    return min(inside, key=lambda x: float(np.linalg.norm(x - u)))


@pytest.mark.parametrize("solve", BACKENDS, ids=lambda f: f.__name__.strip("_"))
def test_a_level_on_a_vertex_slides_along_the_edge_that_lets_it(solve):
    rng = np.random.default_rng(7)
    slid = 0
    for _ in range(400):
        C = rng.normal(size=(int(rng.integers(2, 5)), 2))  # 2-4 rows through one vertex
        C /= np.linalg.norm(C, axis=1, keepdims=True)
        u = rng.normal(size=2)
        expected = _projection_on_cone(C, u)
        slid += bool(np.linalg.norm(expected) > 1e-9 and np.any(np.abs(C @ expected) < 1e-12))
        for level in (H.Level(np.eye(2), u), H.Level(None, u, identity_scale=1.0)):  # (rows, or identity rows)
            v, _ = solve([level], np.full(2, -10.0), np.full(2, 10.0), C, np.zeros(C.shape[0]), UNDAMPED)
            np.testing.assert_allclose(v, expected, atol=1e-9, err_msg=f"rows {C.tolist()}, u {u.tolist()}")
    assert slid > 100  # (the case at stake: the projection slides along one row)


def test_a_tie_explored_is_never_worse_than_sns_own_order(monkeypatch):
    """3-D levels on a vertex of 3-5 rows, one joint on its bound too (ties of a row with a joint, of
    three rows): the level's residual is at most SNS's own (the ties not explored), the backends agree."""
    rng = np.random.default_rng(11)
    problems = []
    for _ in range(300):
        C = rng.normal(size=(int(rng.integers(3, 6)), 3))
        C /= np.linalg.norm(C, axis=1, keepdims=True)
        lo, hi = np.full(3, -10.0), np.full(3, 10.0)
        (lo if rng.random() < 0.5 else hi)[rng.integers(0, 3)] = 0.0
        problems.append(([H.Level(np.eye(3), rng.normal(size=3))], lo, hi, C, np.zeros(C.shape[0]), UNDAMPED))
    explored = [_python(*p)[0] for p in problems]
    _sns_own_order(monkeypatch)
    own = [_python(*p)[0] for p in problems]
    better = 0
    for (levels, lo, hi, C, d, _), v, v_own in zip(problems, explored, own, strict=True):
        u = levels[0].b
        assert np.all(C @ v <= d + 1e-12) and np.all(lo <= v) and np.all(v <= hi)
        assert np.linalg.norm(v - u) <= np.linalg.norm(v_own - u) + 1e-12
        better += np.linalg.norm(v - u) < np.linalg.norm(v_own - u) - 1e-6
    assert better > 10
    if compiled_available():
        for p, v in zip(problems, explored, strict=True):
            np.testing.assert_allclose(_compiled(*p)[0], v, atol=1e-12)


def test_the_rows_order_does_not_decide_where_the_level_goes():
    # the first row's slide crosses the second: held in that order, both pinned the level at 0
    C = np.array([[1.0, 0.5], [1.0, 0.0]])
    u = np.array([1.0, -1.0])
    for solve in BACKENDS:
        for rows in (C, C[::-1].copy()):
            v, reports = solve([H.Level(np.eye(2), u)], np.full(2, -10.0), np.full(2, 10.0), rows, np.zeros(2),
                               UNDAMPED)
            np.testing.assert_allclose(v, [0.0, -1.0], atol=1e-12)
            assert reports[0].scale == 1.0


def test_talos_centre_of_mass_sent_beyond_a_corner_reaches_the_nearest_point_of_its_region():
    try:
        robot = Robot.load("talos")
    except URDFError:
        pytest.skip("example-robot-data's Talos is not installed")
    q0 = robot.reference_configuration()
    feet = ("left_sole_link", "right_sole_link")
    stack = humanoid_stack(robot, q0, feet=feet)
    region = stack.support.polygon(Kinematics(robot, q0)).shrunk(stack.support.margin).vertices
    centre = region.mean(axis=0)
    corner = region[3]  # (Talos' front right corner: the one it stopped at)
    target = corner + 0.3 * (corner - centre) / np.linalg.norm(corner - centre)
    edges = [(region[i], region[(i + 1) % len(region)]) for i in range(len(region))]
    nearest = min((a + np.clip((target - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1) * (b - a) for a, b in edges),
                  key=lambda x: float(np.linalg.norm(x - target)))
    assert np.linalg.norm(nearest - corner) > 0.03  # the nearest point is elsewhere: the CoM must slide there
    ends = {}
    for backend in ("python", "compiled") if compiled_available() else ("python",):
        stack = humanoid_stack(robot, q0, feet=feet)
        stack.com.set_target(target)
        controller = Controller(robot, stack.levels, dt=0.01, constraints=stack.constraints, backend=backend)
        q = q0.copy()
        for _ in range(150):
            q = controller.step(q)
        ends[backend] = q
        com = Kinematics(robot, q).center_of_mass()[:2]
        assert np.linalg.norm(com - nearest) < 1e-3, f"{backend}: the CoM stopped at {com}, nearest {nearest}"
    if len(ends) == 2:
        np.testing.assert_allclose(ends["python"], ends["compiled"], atol=1e-9)


def test_a_level_already_met_keeps_sns_own_rows(monkeypatch):
    """Two levels on a vertex of many rows: where SNS's own path meets level 1, no tie path replaces
    it on rounding (it held other rows: level 2 got another projector, and each backend's rounding
    chose its own). Level 2 is never worse than with SNS's own order, and the backends agree."""
    rng = np.random.default_rng(5)
    problems = []
    for _ in range(150):
        nv, k = int(rng.integers(4, 8)), int(rng.integers(5, 30))
        inside = rng.normal(size=nv)  # a direction inside every row: level 1 asks for a point on it
        C = rng.normal(size=(k, nv))
        C *= -np.sign(C @ inside)[:, None] / np.linalg.norm(C, axis=1, keepdims=True)
        A = rng.normal(size=(2, nv))
        levels = [H.Level(A, A @ inside), H.Level(np.eye(nv), rng.normal(size=nv))]
        problems.append((levels, np.full(nv, -10.0), np.full(nv, 10.0), C, np.zeros(k), UNDAMPED))
    explored = [_python(*p) for p in problems]
    _sns_own_order(monkeypatch)
    own = [_python(*p) for p in problems]
    met = 0
    for p, (v, reports), (v_own, reports_own) in zip(problems, explored, own, strict=True):
        if reports_own[0].met:
            met += 1
            np.testing.assert_array_equal(v, v_own)
        else:
            assert reports[0].residual <= reports_own[0].residual + 1e-12
        if compiled_available():
            np.testing.assert_allclose(_compiled(*p)[0], v, atol=1e-9)
    assert met > 20


def _projection_on_two_half_spaces(C: np.ndarray, d: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The nearest point to u of {x: C x <= d} for two rows (the box far away): u, its projection on
    one row's plane, or on both's intersection, the nearest that is inside."""
    candidates = [u] + [u - (c @ u - e) / (c @ c) * c for c, e in zip(C, d, strict=True)]
    candidates.append(u - C.T @ np.linalg.solve(C @ C.T, C @ u - d))
    inside = [x for x in candidates if np.all(C @ x <= d + 1e-12)]
    return min(inside, key=lambda x: float(np.linalg.norm(x - u)))


@pytest.mark.parametrize("solve", BACKENDS, ids=lambda f: f.__name__.strip("_"))
def test_a_row_pushed_out_by_the_tie_s_first_row_is_a_tie_too(solve):
    # the start 4e-12 and 8e-11 inside two rows: holding the first on its bound pushed base a hair
    # past the second (max_scale's -1, not a tie at 0), and the level froze at v ~ 0, |v - u| 21.7
    # against 10.6 (found by an adversarial pass)
    C = np.array([[0.11331919434507173, 0.17054167754576308, 0.6808419369599682, 0.7032272415723523],
                  [0.6961263447612074, -0.07759090676575711, 0.704710981327599, -0.11300529241128887]])
    d = np.array([7.763932955519160e-11, 4.218733157011172e-12])
    u = np.array([-1.9057842781556833, 1.189422680963891, -7.4464553298565574, 20.225940077552327])
    v, _ = solve([H.Level(np.eye(4), u)], np.full(4, -100.0), np.full(4, 100.0), C, d, UNDAMPED)
    np.testing.assert_allclose(v, _projection_on_two_half_spaces(C, d, u), atol=1e-9)



@pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
def test_both_solvers_explore_the_same_paths(monkeypatch):
    """Random levels started on or a hair inside a vertex of rows (d in {0, 1e-12 .. 1e-10}, or 1e-13
    past it: ties at once, rows pushed out, recoveries, the path budget spent), 1-3 levels of rows,
    of the identity or of masked identity rows, joints on their bounds, damped or not: the compiled
    solver's paths are the specification's (their order, budget and rules), to rounding."""
    rng = np.random.default_rng(3)
    paths = 0
    next_path = saturation.Saturations.next_path

    def counting(self):
        nonlocal paths
        row = next_path(self)
        paths += row >= 0
        return row

    monkeypatch.setattr(saturation.Saturations, "next_path", counting)
    for _ in range(1500):
        nv, k = int(rng.integers(2, 7)), int(rng.integers(1, 9))
        C = rng.normal(size=(k, nv))
        C /= np.linalg.norm(C, axis=1, keepdims=True)
        d = rng.choice([0.0, 1e-12, 1e-11, 1e-10, -1e-13], size=k) * rng.random(k)
        lo, hi = np.full(nv, -10.0), np.full(nv, 10.0)
        for _ in range(int(rng.integers(0, 3))):
            (lo if rng.random() < 0.5 else hi)[rng.integers(0, nv)] = 0.0
        levels = []
        for _ in range(int(rng.integers(1, 4))):
            kind = rng.random()
            if kind < 0.3:
                mask = None if rng.random() < 0.5 else (rng.random(nv) < 0.7).astype(float)
                b = 3 * rng.normal(size=nv) * (1.0 if mask is None else mask)
                levels.append(H.Level(None, b, identity_scale=float(rng.uniform(0.5, 2)), mask=mask))
            else:
                m = nv if kind < 0.5 else int(rng.integers(1, nv + 1))
                levels.append(H.Level(np.eye(nv) if kind < 0.5 else rng.normal(size=(m, nv)), 3 * rng.normal(size=m)))
        policy = UNDAMPED if rng.random() < 0.5 else H.DampingPolicy()
        v, _ = _python(levels, lo, hi, C, d, policy)
        np.testing.assert_allclose(_compiled(levels, lo, hi, C, d, policy)[0], v, atol=1e-9 * (1 + np.abs(v).max()))
    assert paths > 100  # (the paths were explored)


def _projection_on_3d_cone(C: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The nearest point to u of {x: C x <= 0} (3-D, rows through 0), by enumeration: u, its
    projection on each row's plane and on each pair's line, or the vertex, the nearest inside."""
    candidates = [u, np.zeros(3)] + [u - (c @ u) / (c @ c) * c for c in C]
    for i in range(len(C)):
        for j in range(i + 1, len(C)):
            line = np.cross(C[i], C[j])
            if np.linalg.norm(line) > 1e-9:
                candidates.append((line @ u) / (line @ line) * line)
    inside = [x for x in candidates if np.all(C @ x <= 1e-12)]
    return min(inside, key=lambda x: float(np.linalg.norm(x - u)))


@pytest.mark.parametrize("solve", BACKENDS, ids=lambda f: f.__name__.strip("_"))
def test_a_vertex_of_four_or_five_rows_needs_more_than_three_paths(solve):
    """MAX_TIE_PATHS was 3: a 3-D cone of 4-5 rows at its vertex has up to 10 pairs of rows reached at
    once. Of the 300 random cones below 19 ended away from the projection with three paths, 5 with six
    (a helper's fuzzer, 1000 cones: 46 with three, 33 of them frozen at the vertex)."""
    C = np.array([[-0.826, 0.453, -0.336], [0.376, 0.352, 0.857], [0.622, 0.779, -0.086],
                  [-0.622, -0.651, -0.435], [-0.897, -0.435, -0.074]])
    u = np.array([0.252, -0.339, -1.924])
    box = np.full(3, -10.0), np.full(3, 10.0)
    v, _ = solve([H.Level(np.eye(3), u)], *box, C, np.zeros(5), UNDAMPED)
    np.testing.assert_allclose(v, _projection_on_3d_cone(C, u), atol=1e-9)  # (0 with three paths)
    rng = np.random.default_rng(3)
    missed = 0
    for _ in range(300):
        C = rng.normal(size=(int(rng.integers(3, 6)), 3))
        C /= np.linalg.norm(C, axis=1, keepdims=True)
        u = rng.normal(size=3)
        v, _ = solve([H.Level(np.eye(3), u)], *box, C, np.zeros(len(C)), UNDAMPED)
        missed += np.linalg.norm(v - _projection_on_3d_cone(C, u)) > 1e-6
    assert missed <= 12, missed


@pytest.mark.parametrize("solve", BACKENDS, ids=lambda f: f.__name__.strip("_"))
def test_a_joint_on_its_bound_and_a_row_reached_at_once_are_a_tie_too(solve):
    """A joint held on its bound at once, then a row reached at once: SNS held both and the level
    froze, where letting the joint go (held again only if crossed) slides along the row. Of the 300
    random 3-D cones with one joint bound at 0 below, 35 ended away from the projection with row
    ties only, 10 with joint ties too (a helper's fuzzer, 600: frozen 46 -> 8)."""
    C = np.array([[-0.588616, -0.456465, -0.667211], [0.682385, -0.077793, -0.726842],
                  [0.21723, 0.44007, -0.871292]])
    u = np.array([-0.980747, -0.173155, -1.289419])
    lo, hi = np.full(3, -10.0), np.full(3, 10.0)
    lo[1] = 0.0  # joint 1 on its lower bound at the start (v = 0)
    v, _ = solve([H.Level(np.eye(3), u)], lo, hi, C, np.zeros(3), UNDAMPED)
    np.testing.assert_allclose(v, _projection_on_3d_cone(np.vstack([C, [0.0, -1.0, 0.0]]), u), atol=1e-9)
    rng = np.random.default_rng(5)
    missed = 0
    for _ in range(300):
        C = rng.normal(size=(int(rng.integers(2, 5)), 3))
        C /= np.linalg.norm(C, axis=1, keepdims=True)
        k, sign = int(rng.integers(0, 3)), 1.0 if rng.random() < 0.5 else -1.0
        lo, hi = np.full(3, -10.0), np.full(3, 10.0)
        (hi if sign > 0 else lo)[k] = 0.0
        u = rng.normal(size=3)
        bound = np.zeros(3)
        bound[k] = sign
        v, _ = solve([H.Level(np.eye(3), u)], lo, hi, C, np.zeros(len(C)), UNDAMPED)
        missed += np.linalg.norm(v - _projection_on_3d_cone(np.vstack([C, bound]), u)) > 1e-6
    assert missed <= 20, missed

"""The compiled core's configuration check, one-shot functions and batched relative Jacobians agree
with their Python paths, the oracle: the same configurations accepted, the same errors (type and
message), the same numbers.

Each test sets :class:`reljac.compiled_core.Core` to the built core, then empties it for the Python
paths (what ``RELJAC_BACKEND=python`` does at first use), so it compares both under either backend.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import reljac
from reljac import compiled_core
from reljac.exceptions import FrameNotFound
from reljac.ik import compiled_available
from reljac.ik.solvers.backend import core
from reljac.relative import Kinematics

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")


def _robot_with_every_unit_block() -> reljac.Robot:
    """free flyer (quaternion) > spherical (quaternion) > planar (cos, sin) > continuous (cos, sin)
    > revolute, with a tool frame: every kind of block that must have unit norm."""
    model = pin.Model()
    parent = 0
    for joint, name in ((pin.JointModelFreeFlyer(), "base"), (pin.JointModelSpherical(), "ball"),
                        (pin.JointModelPlanar(), "slide"), (pin.JointModelRUBZ(), "wheel"),
                        (pin.JointModelRX(), "wrist")):
        placement = pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.2, 0.1 * parent), np.array([0.1, 0.2 * parent, 0.05]))
        parent = model.addJoint(parent, joint, placement, name)
        model.appendBodyToJoint(parent, pin.Inertia.FromSphere(1.0, 0.1), pin.SE3.Identity())
        model.addFrame(pin.Frame(name + "_link", parent, pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.1])),
                                 pin.FrameType.OP_FRAME))
    finite = np.isfinite(model.lowerPositionLimit)
    model.lowerPositionLimit[:] = np.where(finite, -2.0, model.lowerPositionLimit)
    model.upperPositionLimit[:] = np.where(finite, 2.0, model.upperPositionLimit)
    return reljac.Robot(model)


ROBOT = _robot_with_every_unit_block()
BLOCKS = [block for _, block in ROBOT.unit_blocks]


@pytest.fixture(autouse=True)
def compiled_paths(monkeypatch):
    """The Pinocchio layer on the compiled core within each test, whatever RELJAC_BACKEND says (a
    test then switches to the Python paths with python_paths)."""
    monkeypatch.setattr(compiled_core.Core, "module", core())
    monkeypatch.setattr(compiled_core.Core, "loaded", True)


def python_paths(monkeypatch) -> None:
    """From here on in the test, the Pinocchio layer on its Python paths."""
    monkeypatch.setattr(compiled_core.Core, "module", None)


def _outcome(fn):
    """('ok', value) or ('error', type, message)."""
    try:
        return ("ok", fn())
    except Exception as error:  # the outcome is what is compared
        return ("error", type(error), str(error))


def _inputs() -> dict[str, object]:
    """Configurations, valid and not, in every form a caller may pass."""
    rng = np.random.default_rng(3)
    q = ROBOT.random_configuration(rng)
    out: dict[str, object] = {"valid": q, "list": list(q), "float32": q.astype(np.float32),
                              "big-endian": q.astype(">f8"), "2-D": q[None, :], "short": q[:-1],
                              "text": "q", "None": None, "complex": q.astype(complex)}
    wide = np.repeat(q, 2)
    out["strided view"] = wide[::2]
    out["subclass"] = q.view(type("Sub", (np.ndarray,), {}))
    for k, block in enumerate(BLOCKS):
        for factor, tag in ((1 + 2e-6, "off"), (1 + 5e-7, "near"), (0.0, "zero")):
            x = q.copy()
            x[block] *= factor
            out[f"block {k} {tag}"] = x
    for value in (np.nan, np.inf, -np.inf, 2e100):
        x = q.copy()
        x[-1] = value
        out[f"last entry {value}"] = x
    x = q.copy()
    x[0] = x[1] = 0.9e100  # every entry within 1e100 but a sum of squares beyond 1e200: the slow check's
    out["huge but allowed"] = x
    return out


INPUTS = _inputs()


def _same(compiled, python):
    assert compiled[0] == python[0], (compiled, python)
    if compiled[0] == "error":
        assert compiled[1:] == python[1:]
    else:
        np.testing.assert_allclose(np.asarray(compiled[1]), np.asarray(python[1]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(INPUTS))
def test_validate_q_and_one_shot_functions_agree_with_the_python_paths(name, monkeypatch):
    q = INPUTS[name]
    before = np.array(q, copy=True) if isinstance(q, np.ndarray) else None
    calls = {
        "validate_q": lambda: ROBOT.validate_q(q),
        "relative_jacobian": lambda: reljac.relative_jacobian(ROBOT, q, "ball_link", "wrist_link"),
        "relative_jacobian in c": lambda: reljac.relative_jacobian(ROBOT, q, "wrist_link", "slide_link",
                                                                   expressed_in="ball_link"),
        "relative_placement": lambda: reljac.relative_placement(ROBOT, q, "base_link", "wrist_link").homogeneous,
    }
    compiled = {key: _outcome(fn) for key, fn in calls.items()}
    python_paths(monkeypatch)
    python = {key: _outcome(fn) for key, fn in calls.items()}
    for key in calls:
        _same(compiled[key], python[key])
    if before is not None:  # the caller's array is left as it was
        np.testing.assert_array_equal(q, before)


def test_the_compiled_check_accepts_exactly_what_the_python_check_accepts():
    compiled = core()
    for name, q in INPUTS.items():
        accepted = compiled.configuration_ok(ROBOT.model, q)
        is_plain = type(q) is np.ndarray and q.dtype == np.float64 and q.ndim == 1 and q.flags.c_contiguous
        python_accepts = _outcome(lambda q=q: reljac.joint_space.check_unit_blocks(
            ROBOT, reljac.joint_space.as_vector(ROBOT, q, ROBOT.nq, "q", tangent=False), "q"))[0] == "ok"
        if accepted:
            assert python_accepts, name  # never accepts what Python refuses
        elif name != "huge but allowed":  # (left to Python: entries within 1e100, squares beyond 1e200)
            assert not (is_plain and python_accepts), name
    # the tolerance on each kind of block: 1e-6 on the norm
    q = INPUTS["valid"]
    for block in BLOCKS:
        for factor, expected in ((1 + 0.9e-6, True), (1 + 1.1e-6, False), (1 - 0.9e-6, True), (1 - 1.1e-6, False)):
            x = q.copy()
            x[block] *= factor
            assert compiled.configuration_ok(ROBOT.model, x) is expected, (block, factor)


def test_returned_jacobians_are_the_callers_own():
    q = INPUTS["valid"]
    J1 = reljac.relative_jacobian(ROBOT, q, "ball_link", "wrist_link")
    kept = J1.copy()
    J2 = reljac.relative_jacobian(ROBOT, ROBOT.random_configuration(9), "ball_link", "wrist_link")
    np.testing.assert_array_equal(J1, kept)
    assert not np.shares_memory(J1, J2)


PAIRS = [("ball_link", "wrist_link"), ("wrist_link", "base_link"), (0, "slide_link"), ("wheel_link", "wheel_link")]


@pytest.mark.parametrize("expressed_in", ["a", "b", "world", "ball_link", 0])
def test_batched_relative_jacobians_are_the_single_ones(expressed_in, monkeypatch):
    q = INPUTS["valid"]
    kin = Kinematics(ROBOT, q)
    batch = kin.relative_jacobians(PAIRS, expressed_in=expressed_in)
    assert batch.shape == (len(PAIRS), 6, ROBOT.nv)
    for k, (a, b) in enumerate(PAIRS):
        np.testing.assert_array_equal(batch[k], kin.relative_jacobian(a, b, expressed_in=expressed_in))
    python_paths(monkeypatch)
    python = Kinematics(ROBOT, q).relative_jacobians(PAIRS, expressed_in=expressed_in)
    np.testing.assert_allclose(batch, python, rtol=0, atol=1e-12)


def test_batched_relative_jacobians_of_no_pair_and_bad_pairs():
    kin = Kinematics(ROBOT, INPUTS["valid"])
    assert kin.relative_jacobians([]).shape == (0, 6, ROBOT.nv)
    for bad in (["ab"], [("ball_link",)], [("ball_link", "wrist_link", "base_link")], [3]):
        with pytest.raises(FrameNotFound, match="pairs must hold"):
            kin.relative_jacobians(bad)
    with pytest.raises(FrameNotFound, match="nowhere"):
        kin.relative_jacobians([("ball_link", "nowhere")])
    for bad in (None, 5, "ab"):  # not a list of pairs at all (a raw TypeError before)
        with pytest.raises(FrameNotFound, match="pairs must be a list of"):
            kin.relative_jacobians(bad)


@pytest.mark.parametrize("name", ["hand", "tree30"])
def test_batched_relative_jacobians_on_mimic_joints_and_a_branching_tree(name, monkeypatch):
    """The hand's mimic joints fill their leaders' columns (the batch then combines every column);
    tree30's frames sit on branches that share only part of their supports."""
    robot = reljac.Robot.bundled(name)
    frames = [f for f in robot.link_names if f != robot.link_names[0]]
    rng = np.random.default_rng(11)
    pairs = [tuple(rng.choice(frames, 2, replace=False)) for _ in range(6)] + [(frames[0], frames[0])]
    q = robot.random_configuration(rng)
    kin = Kinematics(robot, q)
    batch = kin.relative_jacobians(pairs)
    for k, (a, b) in enumerate(pairs):
        np.testing.assert_array_equal(batch[k], kin.relative_jacobian(a, b))
    python_paths(monkeypatch)
    np.testing.assert_allclose(batch, Kinematics(robot, q).relative_jacobians(pairs), rtol=0, atol=1e-12)

"""CoMTask and SupportRegion inside the compiled step, against their oracle, the Python classes.

At the same configurations both backends must build the same rows and give the same velocity,
reports and constraint names; setters reach the core; failures read the same. (Whole runs are not
compared past the first steps: a floating-base humanoid pulled against its balance makes
saturation decisions that 1e-12 differences can flip.)
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import feet_and_reaching_hand

from reljac import Kinematics, Robot, SupportContact, SupportError
from reljac.ik import CoMTask, Controller, PostureTask, SupportRegion, compiled_available

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")
SOLES = ("left_sole_link", "right_sole_link")


def stack(robot, *, com_frame="universe", axes="xy", margin=0.02):
    q0 = robot.reference_configuration()
    feet, hand, _ = feet_and_reaching_hand(robot, q0, [0.8, 0.1, -0.3])
    com = CoMTask(robot, com_frame, axes=axes, gain=2.0, weight=np.linspace(1.0, 2.0, len(axes)), max_speed=0.05)
    com.set_target_from_configuration(q0)
    posture = PostureTask(robot, weight=np.r_[np.zeros(6), np.ones(robot.nv - 6)])
    region = SupportRegion(robot, [SupportContact.rectangle(f, 0.2, 0.11) for f in SOLES], margin=margin)
    levels = [feet, [hand], [com], [posture]]
    return {b: Controller(robot, levels, dt=0.01, constraints=[region], backend=b) for b in ("compiled", "python")}, \
        (feet, hand, com, region)


def configurations(robot, rng, n, scale=0.1):
    q0 = robot.reference_configuration()
    return [pin.integrate(robot.model, q0, scale * rng.standard_normal(robot.nv)) for _ in range(n)]


@pytest.mark.parametrize(("frame", "axes"), [("universe", "xy"), ("left_sole_link", "zx"), ("torso_2_link", "xyz")])
def test_com_task_rows_are_the_python_ones(talos, rng, frame, axes):
    controllers, (_, _, com, _) = stack(talos, com_frame=frame, axes=axes)
    step = controllers["compiled"]._step
    assert not step.has_python_parts  # the CoM task and the support region run in C++
    for q in configurations(talos, rng, 5):
        levels, _, _ = step.system(q)
        A, b = levels[2][0], levels[2][1]  # the CoM level
        rows = com.rows(Kinematics(talos, q))
        np.testing.assert_allclose(A, rows.A, rtol=0, atol=1e-12)
        np.testing.assert_allclose(b, rows.b, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_same_velocity_reports_and_names_at_the_same_configurations(talos, rng):
    controllers, _ = stack(talos)
    compiled, python = controllers["compiled"], controllers["python"]
    named = 0
    q = talos.reference_configuration()
    for k in range(60):  # along the run, then at random configurations (some outside the region)
        q_at = q
        if k >= 40:
            q_at = configurations(talos, rng, 1, 0.02)[0]
            compiled.reset()
            python.reset()
        v_c, v_p = compiled.velocity(q_at), python.velocity(q_at)
        np.testing.assert_allclose(v_c, v_p, rtol=0, atol=1e-9 * (1 + np.abs(v_p).max()), err_msg=f"configuration {k}")
        for rc, rp in zip(compiled.last_reports, python.last_reports, strict=True):
            assert rc.saturated_constraints == rp.saturated_constraints
            assert rc.scale == pytest.approx(rp.scale, abs=1e-7)
            named += sum(n.startswith("support region (edge") for n in rc.saturated_constraints)
        q = pin.integrate(talos.model, q, v_p * 0.01)
    assert named  # the support rows were in play


@pytest.mark.slow
def test_setters_reach_the_core(talos, rng):
    controllers, (_, _, com, region) = stack(talos)
    qs = configurations(talos, rng, 4, 0.02)
    changes = [
        lambda: setattr(region, "margin", 0.035),
        lambda: setattr(region, "contacts", region.contacts[:1]),
        lambda: setattr(region, "gain", 0.9),
        lambda: com.set_target([0.01, 0.02], velocity=[0.1, -0.05]),
        lambda: setattr(com, "frame", "left_sole_link"),
        lambda: setattr(com, "max_speed", None),
    ]
    compiled, python = controllers["compiled"], controllers["python"]
    before = []
    for q in qs:
        python.reset()
        before.append(python.velocity(q))
    for change in changes:
        change()
        after = []
        for q in qs:
            compiled.reset()
            python.reset()
            after.append(python.velocity(q))
            np.testing.assert_allclose(compiled.velocity(q), after[-1], rtol=0,
                                       atol=1e-9 * (1 + np.abs(after[-1]).max()))
        assert max(np.abs(a - b).max() for a, b in zip(after, before, strict=True)) > 1e-6  # the change mattered
        before = after


def test_failures_read_the_same(talos):
    q = talos.reference_configuration()
    messages = {}
    for backend in ("compiled", "python"):
        line = SupportRegion(talos, [SupportContact("left_sole_link", [[0.1, 0, 0], [-0.1, 0, 0], [0, 0, 0]])])
        narrow = SupportRegion(talos, [SupportContact.rectangle("left_sole_link", 0.2, 0.11)], margin=0.06)
        for region in (line, narrow):
            controller = Controller(talos, [[PostureTask(talos)]], dt=0.01, constraints=[region], backend=backend)
            with pytest.raises(SupportError) as error:
                controller.step(q)
            messages.setdefault(region is line, set()).add(str(error.value))
    assert all(len(m) == 1 for m in messages.values()), messages
    assert "span no area" in messages[True].pop() and "leaves nothing" in messages[False].pop()


@pytest.mark.parametrize("frame", ["universe", "left_tool"])
def test_com_rows_count_the_bodies_fixed_to_the_world(rng, frame):
    robot = Robot.load("dual_arm")  # a fixed base: its 35 kg torso is Pinocchio's joint-0 inertia
    assert robot.model.inertias[0].mass > 30
    com = CoMTask(robot, frame, gain=3.0)
    com.set_target([0.1, 0.0, 0.5])
    controller = Controller(robot, [[com]], dt=0.01, backend="compiled")
    for _ in range(3):
        q = robot.random_configuration(rng)
        levels, _, _ = controller._step.system(q)
        rows = com.rows(Kinematics(robot, q))
        np.testing.assert_allclose(levels[0][0], rows.A, rtol=0, atol=1e-12)
        np.testing.assert_allclose(levels[0][1], rows.b, rtol=0, atol=1e-12)

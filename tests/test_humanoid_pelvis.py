"""humanoid_stack(..., pelvis=...): the pelvis height held while the hands reach, on Talos.

The height is read with Pinocchio alone (pin.framesForwardKinematics), never through the task.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from balance_helpers import FEET, L, reaching_run
from helpers import BACKENDS

import reljac
from reljac import Kinematics
from reljac.ik import humanoid_stack
from reljac.ik.tasks.frames import RelativePositionTask

PELVIS = "base_link"
REACH = (0.4, 0.0, -0.3)  # [m] the left gripper forward and down: Talos squats unless its pelvis is held


def height(robot, q, frame=PELVIS) -> float:
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return float(data.oMf[robot.model.getFrameId(frame)].translation[2])


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_pelvis_height_is_held_while_the_hands_reach(talos, backend):
    free, _ = reaching_run(talos, talos, backend, REACH, 80)
    held, stack = reaching_run(talos, talos, backend, REACH, 80, pelvis=PELVIS)
    z0 = height(talos, held[0])
    free_z = np.array([height(talos, q) for q in free])
    held_z = np.array([height(talos, q) for q in held])
    assert np.abs(free_z - z0).max() > 0.05  # without the task Talos squats to reach down
    assert np.abs(held_z - z0).max() < 1e-4  # with it the pelvis stays at its height
    hand0, hand = (Kinematics(talos, q).placement(L).translation for q in (held[0], held[-1]))
    assert hand[0] - hand0[0] > 0.15 and hand0[2] - hand[2] > 0.05  # and the hands still reach
    assert stack.pelvis is not None and stack.levels.index([stack.pelvis]) == stack.levels.index([stack.hands]) + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_given_pelvis_height_is_reached_at_the_task_gain(talos, backend):
    """Standing still, the pelvis 3 cm lower: the error shrinks by (1 - gain dt) per step."""
    q0 = talos.reference_configuration()
    target = height(talos, q0) - 0.03
    stack = humanoid_stack(talos, q0, feet=FEET, sole=(0.2, 0.1), pelvis=PELVIS, pelvis_height=target,
                           pelvis_gain=10.0)
    controller = stack.controller(0.01, backend=backend)
    q, errors = q0, [height(talos, q0) - target]
    for _ in range(40):
        q = controller.step(q)
        errors.append(height(talos, q) - target)
    errors = np.array(errors)
    np.testing.assert_allclose(errors[1:] / errors[:-1], 1.0 - 10.0 * 0.01, atol=2e-3)
    assert abs(errors[-1]) < 0.03 * 0.9 ** 40 + 1e-5


def test_the_pelvis_task_is_a_height_only_position_task(talos):
    q = talos.random_configuration(5)
    stack = humanoid_stack(talos, q, feet=FEET, sole=(0.2, 0.1), pelvis=PELVIS, com_priority="low")
    task = stack.pelvis
    assert isinstance(task, RelativePositionTask) and task.gain == 10.0
    np.testing.assert_array_equal(task.weight, [0.0, 0.0, 1.0])
    assert task.target[2] == pytest.approx(height(talos, q), abs=1e-12)
    assert stack.levels == [list(stack.feet), [task], [stack.com], [stack.posture]]
    assert humanoid_stack(talos, feet=FEET, sole=(0.2, 0.1)).pelvis is None
    assert task.description(talos) is not None  # runs inside the compiled step


@pytest.mark.parametrize("kwargs, error, words", [
    ({"pelvis": "pelvis_link"}, reljac.FrameNotFound, "pelvis_link"),
    ({"pelvis": ["base_link", "torso_1_link"]}, reljac.TaskError, "pelvis must be one frame"),
    ({"pelvis": PELVIS, "pelvis_height": float("nan")}, reljac.TaskError, "pelvis_height"),
    ({"pelvis": PELVIS, "pelvis_height": "1"}, reljac.TaskError, "pelvis_height"),
    ({"pelvis": PELVIS, "pelvis_gain": -1.0}, reljac.TaskError, "gain"),
])
def test_bad_pelvis_options_are_refused_in_one_line(talos, kwargs, error, words):
    with pytest.raises(error, match=words) as caught:
        humanoid_stack(talos, feet=FEET, sole=(0.2, 0.1), **kwargs)
    assert isinstance(caught.value, ValueError) and "\n" not in str(caught.value)


def test_a_pelvis_height_without_a_pelvis_is_refused(talos):
    """It was ignored: no pelvis task, no error."""
    from reljac.exceptions import TaskError

    with pytest.raises(TaskError, match="pelvis_height is the height of the pelvis frame: give pelvis= too"):
        humanoid_stack(talos, feet=FEET, sole=(0.2, 0.1), pelvis_height=0.5)

"""The robots page's dual-arm example on Baxter starts where the controller works (issue 43:
Baxter's reference posture is singular, and a level started there is reported "out of reach or
singular" on its first steps).

The page's Python block runs as written; its first steps are then checked from its start and,
for the claim the page makes, from the reference posture.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from reljac import Kinematics, robots
from reljac.ik import Controller

PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "robots.md"
SINGULAR = "out of reach or singular"

pytestmark = pytest.mark.skipif(robots.example_robot_data_dir() is None, reason="needs example-robot-data")


def snippet() -> str:
    section = PAGE.read_text(encoding="utf-8").split("## Where to start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    return blocks[0]


def first_steps(namespace: dict, q0: np.ndarray, steps: int = 20) -> list[list[str]]:
    """The levels' limited_by of the first `steps` steps of the page's stack from q0."""
    levels = [[namespace["carry"]], [namespace["lead"]], [namespace["posture"]]]
    controller = Controller(namespace["baxter"], levels, dt=0.01)
    q, seen = q0, []
    for _ in range(steps):
        q = controller.step(q)
        seen.append([report.limited_by for report in controller.last_reports])
    return seen


@pytest.fixture(scope="module")
def page_run() -> dict:
    namespace: dict = {}
    exec(compile(snippet(), str(PAGE), "exec"), namespace)
    return namespace


def test_the_page_example_starts_where_no_level_is_singular_and_reaches_its_target(page_run):
    for step, limits in enumerate(first_steps(page_run, page_run["ready"])):
        assert not any(SINGULAR in why for why in limits), (step, limits)
    baxter, q, lead = page_run["baxter"], page_run["q"], page_run["lead"]
    reached = Kinematics(baxter, q).placement("left_gripper")
    assert np.linalg.norm(reached.translation - lead.target.translation) < 1e-3  # after the 100 steps


def test_the_reference_posture_is_singular_as_the_page_says(page_run):
    baxter = page_run["baxter"]
    seen = first_steps(page_run, baxter.reference_configuration(), steps=2)
    assert any(SINGULAR in why for limits in seen for why in limits), seen
